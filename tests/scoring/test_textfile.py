"""scoring.textfile: every number-parsing path agrees with Python's float(), token by token.

The fixed-width paths are tested in test_fixedwidth.py, the messages of unreadable lines
in test_lines.py and the blocks the tokenizer is fed in test_blocks.py."""

import numpy as np

from scoring import textfile
from scoring.errors import Problems

from .util import (
    lines_of,
    same_floats,
    table_numbers,
)


def _u8(buf: bytes) -> np.ndarray:
    return np.frombuffer(buf, dtype=np.uint8)


def general(buf: bytes):
    b = _u8(buf)
    return textfile._general(buf, b, np.flatnonzero(b == 10), 1)


def careful(buf: bytes):
    problems = Problems("f")
    return textfile._careful(buf, 1, problems), problems


def tokenized(buf: bytes):
    problems = Problems("f")
    return textfile.tokenize(buf, 1, problems), problems


ACCEPTED = [
    "3",
    "-1",
    "+1",
    "0.5",
    "6.7125064e-01",
    "1.0000000e+00",
    ".5",
    "5.",
    "1E5",
    "-0",
    "1e-400",  # float() reads it as 0.0
    "1_000",  # float() reads it too
    "0.1000000000000000055511151231257827021181583404541015625",
    "1.00000000000000011102230246251565404236316680908203125",  # a tie: rounds to even
    "2.2250738585072011e-308",
    "4.9406564584124654e-324",
    "1.7976931348623157e308",
    "123456789012345678901234567890",
]


def test_general_path_equals_float_on_awkward_spellings():
    plain = [t for t in ACCEPTED if "_" not in t]
    buf = lines_of(plain)
    table = general(buf)
    assert table is not None
    assert table.values.tolist() == [float(t) for t in plain]
    assert table.counts.tolist() == [1] * len(plain)


def test_tokenize_reads_every_accepted_spelling():
    buf = lines_of(ACCEPTED)
    table, problems = tokenized(buf)
    assert not problems
    assert table.values.tolist() == [float(t) for t in ACCEPTED]


def test_general_path_with_tabs_crlf_and_blanks():
    buf = b"  1\t2   3 \r\n\t-4.5e-3\t\r\n\n 6 \n"
    table = general(buf)
    assert table is not None
    assert table_numbers(table) == [[1.0, 2.0, 3.0], [-0.0045], [], [6.0]]
    assert same_floats(table_numbers(careful(buf)[0]), table_numbers(table))


def _big_file(rows: int, line: bytes) -> bytes:
    return line * rows  # (several of blocks.BLOCK_SIZE: later blocks are parsed ahead)


def test_blocks_parsed_ahead_keep_every_value_and_line_number():
    # Each line needs Python's dtoa in the C parser (more than 19 digits): on the thread
    # that parses ahead, without the GIL, the parser takes it back for that one token.
    long = b"0.1000000000000000055511151231257827021181583404541015625"
    line = long + b" 2.5e-3 1\n"
    data = _big_file(40_000, line)
    problems = Problems("f")
    tables = list(textfile.tables(data, problems))
    assert len(tables) > 2 and not problems
    firsts = [t.first_line for t in tables]
    assert firsts[0] == 1
    assert firsts[1:] == list(np.cumsum([t.n_lines for t in tables])[:-1] + 1)
    values = np.concatenate([t.values for t in tables])
    assert values.size == 3 * 40_000
    assert (values[0::3] == float(long.decode())).all()
    assert (values[1::3] == 2.5e-3).all() and (values[2::3] == 1.0).all()


def test_a_block_refused_ahead_is_read_by_the_careful_paths_with_its_line_numbers():
    rows = 300_000
    lines = [b"0.25 0.75\n"] * rows
    lines[250_000] = b"0.25 zero\n"  # (in a later block: the C parser refuses it there)
    problems = Problems("f")
    tables = list(textfile.tables(b"".join(lines), problems))
    assert len(tables) > 2
    assert [p.line for p in problems.shown()] == [250_001]
    assert sum(t.n_lines for t in tables) == rows


def test_a_file_of_too_many_rows_counts_its_tail_whatever_was_parsed_ahead():
    data = _big_file(200_000, b"0.5 0.5\n")
    problems = Problems("f")
    out = list(textfile.tables(data, problems, rows_wanted=10))
    tail = out[-1]
    assert isinstance(tail, textfile.Tail)
    read = sum(t.n_lines for t in out[:-1])
    assert read + tail.rows == 200_000 and tail.last_row_line == 200_000
