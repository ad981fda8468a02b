"""scoring.blocks: a file as blocks of whole lines, streamed in bounded memory; a line
longer than a reader allows streams by as a counted LongLine, and the rows past those a
reader wanted are counted by a Tail, not read."""

import io

import pytest

from scoring import read_inputs, read_targets, textfile
from scoring.blocks import LongLine, Tail, iter_blocks
from scoring.errors import Problems

from .util import lines_of, problems_of, small_blocks


@pytest.mark.parametrize("block_size", [4, 16, 32])
def test_a_line_over_max_line_streams_by_as_a_counted_long_line(block_size):
    """A line that outgrows the blocks is never joined whole (a line that fits in one
    block is measured by the tokenizer, which holds that block anyway)."""
    long = b" 1.5  2\t3 " * 10  # 100 bytes, 30 tokens
    blocks = list(iter_blocks(b"1 2\n" + long + b"\n4\n", block_size=block_size, max_line=50))
    (counted,) = [b for b in blocks if isinstance(b, LongLine)]
    assert (counted.length, counted.tokens) == (100, 30)
    assert b"".join(b for b in blocks if not isinstance(b, LongLine)) == b"1 2\n4\n"
    # Without max_line the same line is an ordinary (if long) block.
    assert b"".join(iter_blocks(b"1 2\n" + long + b"\n4\n", block_size=block_size)) == (
        b"1 2\n" + long + b"\n4\n"
    )


def test_a_long_line_says_why_it_is_refused():
    counted = LongLine()
    for piece in (b"1 2 3", b"4 5", b" 6"):  # "34" is one token split across two pieces
        counted.add(piece)
    assert (counted.length, counted.tokens) == (10, 5)
    assert counted.message(4, 8) == "expected at most 4 numbers on a line, found 5"
    assert counted.message(None, 8) == (
        "a line of 10 bytes; a line is at most 8 bytes (numbers separated by spaces or tabs)"
    )


def test_the_tail_counts_rows_and_lines_without_reading_them():
    tail = Tail(first_line=10)
    tail.add(b"0.5\n\n \t\n0.25\n")
    assert (tail.rows, tail.lines, tail.last_row_line) == (2, 4, 13)
    long = LongLine()
    long.add(b"1 " * 100)
    tail.add(long)
    tail.add(b"\n\n")
    assert (tail.rows, tail.lines, tail.last_row_line) == (3, 7, 14)


def test_iter_blocks_yields_whole_lines():
    data = b"1 2 3\n45678901234567890\n6\n7"
    blocks = list(textfile.iter_blocks(data, block_size=4))
    assert all(b.endswith(b"\n") for b in blocks)
    assert b"".join(blocks) == data + b"\n"
    assert b"45678901234567890\n" in b"".join(blocks)
    assert not any(b.count(b"\n") != len(b.splitlines()) for b in blocks)


@pytest.mark.parametrize("block_size", [1, 7, 64, 1 << 20])
def test_line_numbers_run_on_across_blocks(block_size):
    rows = [f"{k / 100!r}" for k in range(60)]
    rows[13] = "oops"
    rows[47] = "1,5"
    with small_blocks(block_size):
        err = problems_of(read_targets, lines_of(rows), path="t.txt")
        assert err.lines == [
            "t.txt:14: expected a number, found 'oops'",
            "t.txt:48: expected numbers separated by spaces or tabs, found '1,5'",
        ]
        rows[13], rows[47] = "0", "0"
        values = read_targets(lines_of(rows), path="t.txt")
    assert values.tolist() == [float(r) for r in rows]


def test_sources_bytes_paths_and_files(tmp_path):
    data = b"1\n-1\n0.25\n"
    path = tmp_path / "t.txt"
    path.write_bytes(data)
    f = io.BytesIO(data)
    f.read(3)  # a file already read from is read from the start
    for source in (data, bytearray(data), memoryview(data), str(path), path, f):
        assert read_targets(source, path="t").tolist() == [1.0, -1.0, 0.25]
    with path.open("rb") as handle:
        assert read_targets(handle, path="t").tolist() == [1.0, -1.0, 0.25]
        assert not handle.closed  # the caller's file stays open
    with pytest.raises(TypeError):
        read_targets(12345, path="t")


def test_missing_final_newline_and_crlf():
    assert read_targets(b"1\r\n2\r\n3", path="t").tolist() == [1.0, 2.0, 3.0]
    assert read_inputs(b"1 2\r\n3 4", path="x").tolist() == [[1.0, 2.0], [3.0, 4.0]]


def test_a_long_line_is_a_block_of_its_own():
    data = b"1 2\n" + b"3" * 100 + b"\n4\n5\n"
    blocks = list(textfile.iter_blocks(data, block_size=16))
    assert b"".join(blocks) == data
    assert b"3" * 100 + b"\n" in blocks


def _as_read(blocks):
    """The lines read, as runs of whole lines between the long lines (where one block ends
    and the next starts is the reader's affair: the lines and their numbers are not)."""
    out: list = []
    for b in blocks:
        if isinstance(b, LongLine):
            out.append(("long", b.length, b.tokens))
        else:
            assert bytes(b).endswith(b"\n")
            if out and isinstance(out[-1], bytes):
                out[-1] += bytes(b)
            else:
                out.append(bytes(b))
    return out


MAPPED_FILES = {
    "short lines": b"1 2\n3 4\n" * 500,
    "no final LF": b"0.5 0.25\n" * 300 + b"0.75 0.125",
    "CR LF": b"1.5\r\n2.5\r\n" * 400,
    "a line longer than a block": b"1 2\n" + b"7 " * 3000 + b"\n" + b"3 4\n" * 200,
    "a line longer than max_line": b"1\n" + b"9 " * 20_000 + b"\n2\n",
    "a long last line without LF": b"1\n2\n" + b"5 " * 5000,
    "blank lines": b"\n\n1\n\n2\n" * 300 + b"\n\n",
    "one byte": b"1",
    "only a LF": b"\n",
}


@pytest.mark.parametrize("name", MAPPED_FILES)
@pytest.mark.parametrize("block_size", [64, 1000, 4096])
def test_a_mapped_file_gives_the_blocks_a_read_one_gives(tmp_path, name, block_size):
    path = tmp_path / "f.txt"
    path.write_bytes(MAPPED_FILES[name])
    read = _as_read(iter_blocks(path, block_size, max_line=20_000))
    mapped = list(iter_blocks(path, block_size, max_line=20_000, views=True))
    assert _as_read(mapped) == read
    if name == "short lines":
        assert all(isinstance(b, memoryview) for b in mapped)  # (no copy)


def test_an_empty_file_maps_to_no_block(tmp_path):
    path = tmp_path / "empty.txt"
    path.write_bytes(b"")
    assert list(iter_blocks(path, views=True)) == list(iter_blocks(path)) == []


def test_a_large_mapped_file_reads_with_every_line_number_and_problem(tmp_path):
    lines = [b"0.25 0.75\n"] * 400_000
    lines[123_456] = b"0.25 x\n"
    path = tmp_path / "big.txt"
    path.write_bytes(b"".join(lines))
    problems = Problems(str(path))
    tables = list(textfile.tables(str(path), problems))
    assert [p.line for p in problems.shown()] == [123_457]
    assert sum(t.n_lines for t in tables) == 400_000
    assert sum(t.values.size for t in tables) == 2 * 400_000 - 2  # (the bad line: none)
