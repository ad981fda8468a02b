"""scoring.lines: the lines the block readers cannot read at C speed, one at a time, each
with the message that says what was found where a number was expected."""

import numpy as np
import pytest

from scoring import lines, read_targets, textfile
from scoring.errors import Problems
from scoring.lines import parse_line

from .util import lines_of, problems_of, table_numbers


def tokenized(buf: bytes):
    problems = Problems("f")
    return textfile.tokenize(buf, 1, problems), problems


def general(buf: bytes):
    b = np.frombuffer(buf, dtype=np.uint8)
    return textfile._general(buf, b, np.flatnonzero(b == 10), 1)


def test_one_line_read_with_its_message_and_the_summary_it_shares():
    assert parse_line(b" 1\t-2.5e-3  4 \r") == ([1.0, -0.0025, 4.0], None, None)
    assert parse_line(b" \t ") == ([], None, None)
    assert parse_line(b"0,5") == (
        [],
        "expected numbers separated by spaces or tabs, found '0,5'",
        lines.DECIMAL_COMMAS,
    )
    assert parse_line(b"1,2,3")[2] == lines.COMMAS
    assert parse_line(b"1;2")[2] == lines.SEMICOLONS
    assert parse_line(b"id 0.5")[1:] == ("expected a number, found 'id'", lines.TEXT)
    assert parse_line(b"0.5 inf")[1:] == ("expected a finite number, found 'inf'", lines.NOT_FINITE)
    assert parse_line(b"0.5\x01")[2] == lines.CONTROL
    assert parse_line(b"0.5\r1")[2] == lines.CARRIAGE_RETURN
    assert parse_line("½".encode())[2] == lines.NOT_ASCII


def test_a_line_of_too_many_numbers_is_refused_before_any_is_read():
    assert parse_line(b"1 2 3", max_numbers=3) == ([1.0, 2.0, 3.0], None, None)
    assert parse_line(b"1 2 3 x", max_numbers=3) == (
        [],
        "expected at most 3 numbers on a line, found 4",
        lines.TOO_LONG,
    )
    # "x" is never looked at: the count alone refuses the line.
    assert parse_line(b"x  \t 1 2 3", max_numbers=3)[1] == (
        "expected at most 3 numbers on a line, found 4"
    )
    # Blanks alone do not make numbers.
    assert parse_line(b"1  \t  2", max_numbers=2) == ([1.0, 2.0], None, None)


@pytest.mark.parametrize(
    "token, message",
    [
        ("nan", "expected a finite number, found 'nan'"),
        ("NaN", "expected a finite number, found 'NaN'"),
        ("-nan", "expected a finite number, found '-nan'"),
        ("inf", "expected a finite number, found 'inf'"),
        ("-Inf", "expected a finite number, found '-Inf'"),
        ("+INF", "expected a finite number, found '+INF'"),
        ("infinity", "expected a finite number, found 'infinity'"),
        ("-Infinity", "expected a finite number, found '-Infinity'"),
        ("1e999", "expected a finite number, found '1e999'"),
        ("-1e309", "expected a finite number, found '-1e309'"),
        ("abc", "expected a number, found 'abc'"),
        ("0x10", "expected a number, found '0x10'"),
        ("1d5", "expected a number, found '1d5'"),
        ("--1", "expected a number, found '--1'"),
        ("1e", "expected a number, found '1e'"),
        (".", "expected a number, found '.'"),
        ("1-2", "expected a number, found '1-2'"),
        ("1,5", "expected numbers separated by spaces or tabs, found '1,5'"),
        ("0.5,", "expected numbers separated by spaces or tabs, found '0.5,'"),
        ("1;2", "expected numbers separated by spaces or tabs, found '1;2'"),
    ],
)
def test_rejected_tokens_name_what_was_found(token, message):
    buf = lines_of(["0.5 0.5", f"0.5 {token}", "0.5 0.5"])
    assert general(buf) is None
    table, problems = tokenized(buf)
    assert [str(p) for p in problems.shown()] == [f"f:2: {message}"]
    assert table.bad.tolist() == [False, True, False]
    assert table_numbers(table) == [[0.5, 0.5], None, [0.5, 0.5]]


@pytest.mark.parametrize(
    "buf, column",
    [
        (b"0.5\r0.25\n", 4),  # CR between numbers: no separator
        (b"0.5\r0.25\r0.125\r", 4),  # old Mac line endings: one line, not three
        (b"\r0.5\n", 1),  # LF CR is no line ending
        (b"1 2\r3 4\r\n", 4),
    ],
)
def test_a_carriage_return_only_ends_a_line(buf, column):
    table, problems = tokenized(buf if buf.endswith(b"\n") else buf + b"\n")
    assert [str(p) for p in problems.shown()] == [
        f"f:1: unexpected carriage return (CR) at column {column}; expected numbers "
        "separated by spaces or tabs, each line ending in LF or CR LF"
    ]
    assert table_numbers(table)[0] is None
    err = problems_of(read_targets, buf, path="t.txt")
    assert err.lines[0].startswith("t.txt:1: unexpected carriage return (CR)")


@pytest.mark.parametrize(
    ("buf", "column"), [(b"0.5\r \n", 4), (b"0.5\r\r\n", 4), (b"1 \r\t\r\n", 3)]
)
def test_a_carriage_return_not_right_before_the_line_feed_is_an_error(buf, column):
    """Spec §1: a CR is allowed only directly before the LF that ends a line."""
    _, problems = tokenized(buf)
    assert [str(p) for p in problems.shown()] == [
        f"f:1: unexpected carriage return (CR) at column {column}; expected numbers "
        "separated by spaces or tabs, each line ending in LF or CR LF"
    ]


@pytest.mark.parametrize("buf", [b"0.5\r\n0.25\r\n", b"0.5 \r\n0.25 \t\r\n", b"0.5 \t\r\n0.25"])
def test_carriage_returns_ending_lines_are_fine(buf):
    table, problems = tokenized(buf if buf.endswith(b"\n") else buf + b"\n")
    assert not problems
    assert table_numbers(table) == [[0.5], [0.25]]
    assert read_targets(buf, path="t").tolist() == [0.5, 0.25]


def test_long_tokens_are_shortened_in_messages():
    token = "x" * 100
    _, problems = tokenized(lines_of(token))
    assert [p.message for p in problems.shown()] == [f"expected a number, found '{'x' * 37}...'"]


@pytest.mark.parametrize(
    "raw, message",
    [
        (
            b"0.5\x0b0.5",
            "unexpected control character 0x0b at column 4; expected numbers separated by spaces or tabs",
        ),
        (
            b"0.5\x00",
            "unexpected control character 0x00 at column 4; expected numbers separated by spaces or tabs",
        ),
        (b"0.5\xff", "unexpected byte 0xff at column 4; expected plain ASCII numbers"),
        ("0.5é".encode(), "unexpected character 'é' at column 4; expected plain ASCII numbers"),
        ("０.5".encode(), "unexpected character '０' at column 1; expected plain ASCII numbers"),
        (
            b"\xef\xbb\xbf0.5",
            "the file starts with a UTF-8 byte order mark; save it as plain ASCII",
        ),
        ("0.5".encode("utf-16"), "the file is UTF-16 text; save it as plain ASCII"),
    ],
)
def test_unreadable_bytes(raw, message):
    _, problems = tokenized(raw + b"\n")
    assert [str(p) for p in problems.shown()] == [f"f:1: {message}"]


def test_byte_order_marks_only_count_on_the_first_line():
    _, problems = tokenized(b"0.5\n\xef\xbb\xbf0.5\n")
    assert [str(p) for p in problems.shown()] == [
        "f:2: unexpected character '\\ufeff' at column 1; expected plain ASCII numbers"
    ]


def test_a_header_line_is_named_as_such_with_the_numpy_fix(tmp_path):
    message = "header and comment lines are not allowed (np.savetxt: leave header empty)"
    assert parse_line(b"# p") == ([], f"expected a number, found '#': {message}", lines.TEXT)
    assert parse_line(b"#prediction")[1].endswith(message)
    assert parse_line(b"% made by octave")[1].endswith(message)
    assert parse_line(b"prediction")[1] == "expected a number, found 'prediction'"
    # np.savetxt's own header, end to end through the file reader and its report.
    path = tmp_path / "t.txt"
    np.savetxt(path, np.array([0.0, 1.0]), header="targets")
    with pytest.raises(Exception) as raised:
        read_targets(path.read_bytes(), path="t.txt")
    assert f"t.txt:1: expected a number, found '#': {message}" in str(raised.value)
