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
