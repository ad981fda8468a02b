"""scoring.textfile: every number-parsing path agrees with Python's float(), token by token."""

import io

import numpy as np
import pytest

from scoring import read_inputs, read_targets, textfile
from scoring.errors import Problems

from .util import (
    lines_of,
    matlab,
    problems_of,
    reference_numbers,
    same_floats,
    small_blocks,
    table_numbers,
)


def _u8(buf: bytes) -> np.ndarray:
    return np.frombuffer(buf, dtype=np.uint8)


def fixed_width(buf: bytes):
    return textfile._fixed_width(buf, _u8(buf), 1)


def general(buf: bytes):
    b = _u8(buf)
    return textfile._general(buf, b, np.flatnonzero(b == 10), 1)


def careful(buf: bytes):
    problems = Problems("f")
    return textfile._careful(buf, 1, problems), problems


def tokenized(buf: bytes):
    problems = Problems("f")
    return textfile.tokenize(buf, 1, problems), problems


def _random_values(rng, n, low_exp=-99, high_exp=99):
    mantissa = rng.uniform(1, 10, n) * rng.choice([-1, 1], n)
    return mantissa * 10.0 ** rng.integers(low_exp, high_exp + 1, n)


# --- the MATLAB fixed-width path -------------------------------------------------------------


def test_matlab_layout_is_recognised():
    assert textfile._field_layout(b"   6.7125064e-01  -1.0000000e+00") == textfile._MATLAB
    assert textfile._field_layout(b"  -6.7125064e-01") == textfile._MATLAB  # sign in byte 2
    assert textfile._field_layout(b"6.7e-01") is None  # no leading blank
    assert textfile._field_layout(b"   6.7e-01") == (10, 7, 1, 2)
    assert textfile._field_layout(b"  1.234567890123456e+00") is None  # 15 fraction digits


@pytest.mark.parametrize("crlf", [False, True])
def test_matlab_path_equals_float_on_every_token(crlf):
    rng = np.random.default_rng(1)
    values = _random_values(rng, 3000)
    values[:10] = [0.0, -0.0, 1.0, -1.0, 0.5, 1e-99, -9.9999999e99, 123.456, 1e22, 1e-22]
    rows = values.reshape(-1, 3)
    buf = lines_of([matlab(r) for r in rows], crlf=crlf)
    table = fixed_width(buf)
    assert table is not None, "MATLAB fields must take the fixed-width path"
    tokens = buf.decode().split()
    want = np.array([float(t) for t in tokens])
    assert np.array_equal(table.values, want)
    assert np.array_equal(np.signbit(table.values), np.signbit(want))  # -0.0 stays -0.0
    assert table.counts.tolist() == [3] * rows.shape[0]
    # The two other paths read the same bytes to the same bits.
    assert np.array_equal(general(buf).values, want)
    assert np.array_equal(careful(buf)[0].values, want)


def test_matlab_exponents_beyond_the_exact_powers_of_ten():
    # |exponent - 7| > 22 leaves Clinger's fast path; those fields must still be exact.
    tokens = [f"{v:16.7e}" for v in (1.2345678e-30, -9.8765432e45, 3.3333333e-99, 7.7777777e99)]
    buf = ("".join(tokens) + "\n").encode()
    table = fixed_width(buf)
    assert table is not None
    assert table.values.tolist() == [float(t) for t in tokens]


def test_matlab_flags_and_mixed_rows_read_exactly():
    # save -ascii writes the row flag like every other value.
    buf = lines_of([matlab([1, 0.25, 4]), matlab([0, 0.25, -1]), matlab([2, 3, 5])])
    table, problems = tokenized(buf)
    assert not problems
    assert table.values.tolist() == [1.0, 0.25, 4.0, 0.0, 0.25, -1.0, 2.0, 3.0, 5.0]


@pytest.mark.parametrize(
    "bad_field",
    [
        "   6.71250x4e-01",  # a letter among the digits (same width)
        "   6.7125064e*01",  # exponent sign
        "   6,7125064e-01",  # comma for the decimal point
        "   6.7125064f-01",  # not an exponent marker
        "  --.7125064e-01",  # two signs
        "   6.7125064e-0:",  # ':' is the byte after '9'
        "   6.712506/e-01",  # '/' is the byte before '0'
        "  16.7125064e-01",  # a digit where the sign goes (still a number!)
    ],
)
def test_matlab_path_rejects_anything_unusual_and_the_careful_path_decides(bad_field):
    good = matlab([0.5, -0.25])
    buf = lines_of([good, good[:16] + bad_field, good])
    assert len({len(line) for line in buf.split(b"\n")[:-1]}) == 1
    assert fixed_width(buf) is None
    table, problems = tokenized(buf)
    assert same_floats(table_numbers(table), reference_numbers(buf))
    shown = [str(p) for p in problems.shown()]
    if reference_numbers(buf)[1] is None:
        assert len(shown) == 1 and shown[0].startswith("f:2: expected ")
    else:
        assert not shown


# --- the generic fixed-width (columns) path -------------------------------------------------


@pytest.mark.parametrize("fmt", ["{:12.4e}", "{:20.12E}", "{:10.2e}", "{:9.1e}", "{:24.14e}"])
def test_columns_path_equals_float(fmt):
    rng = np.random.default_rng(2)
    values = _random_values(rng, 2000, -40, 40)
    rows = values.reshape(-1, 4)
    buf = lines_of(["".join(fmt.format(v) for v in r) for r in rows])
    assert textfile._field_layout(buf[: buf.find(b"\n")]) not in (None, textfile._MATLAB)
    table = fixed_width(buf)
    want = [float(t) for t in buf.decode().split()]
    assert table is not None, "right-aligned fields with a blank before each take this path"
    assert table.values.tolist() == want
    assert tokenized(buf)[0].values.tolist() == want


def test_columns_path_never_joins_adjacent_fields_into_numbers():
    # "%8.1e" writes a negative number with no blank before it: "1.0e+00-2.5e+00" is one
    # token that float() cannot read, not two numbers (spec §1: numbers are separated by
    # blanks). Regression test: the columns path read such lines as two numbers.
    buf = b" 1.0e+00 2.5e+00 1.0e+00\n 1.0e+00-2.5e+00 1.0e+00\n"
    assert fixed_width(buf) is None
    table, problems = tokenized(buf)
    assert [str(p) for p in problems.shown()] == ["f:2: expected a number, found '1.0e+00-2.5e+00'"]
    assert table_numbers(table) == [[1.0, 2.5, 1.0], None]
    err = problems_of(read_inputs, buf, path="x.txt")
    assert err.lines == ["x.txt:2: expected a number, found '1.0e+00-2.5e+00'"]


def test_fixed_width_lines_with_mixed_line_endings():
    # Same length, but one line ends in CR LF and the other in blank LF.
    buf = b"   1.0000000e+00\r\n   2.0000000e+00 \n"
    assert len(buf.split(b"\n")[0]) == len(buf.split(b"\n")[1])
    table, problems = tokenized(buf)
    assert not problems
    assert table_numbers(table) == [[1.0], [2.0]]


def test_fixed_width_lines_of_unequal_length_fall_back():
    buf = lines_of([matlab([1.5, 2.5]), matlab([3.5])])
    assert fixed_width(buf) is None
    assert table_numbers(tokenized(buf)[0]) == [[1.5, 2.5], [3.5]]


# --- the general path and the careful path -----------------------------------------------


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


# --- blocks ----------------------------------------------------------------------------------


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
