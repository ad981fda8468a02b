"""scoring.fixedwidth: fixed-width fields in scientific notation (MATLAB's ``save -ascii``
and any right-aligned ``d.ddde+XX`` layout) read column by column, to the bits float()
gives; anything unusual is left to the tokenizer's other paths, which decide."""

import numpy as np
import pytest

from scoring import fixedwidth, read_inputs, textfile
from scoring.errors import Problems

from .util import lines_of, matlab, problems_of, reference_numbers, same_floats, table_numbers


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


def test_matlab_layout_is_recognised():
    assert fixedwidth._field_layout(b"   6.7125064e-01  -1.0000000e+00") == fixedwidth._MATLAB
    assert fixedwidth._field_layout(b"  -6.7125064e-01") == fixedwidth._MATLAB  # sign in byte 2
    assert fixedwidth._field_layout(b"6.7e-01") is None  # no leading blank
    assert fixedwidth._field_layout(b"   6.7e-01") == (10, 7, 1, 2)
    assert fixedwidth._field_layout(b"  1.234567890123456e+00") is None  # 15 fraction digits


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


@pytest.mark.parametrize("fmt", ["{:12.4e}", "{:20.12E}", "{:10.2e}", "{:9.1e}", "{:24.14e}"])
def test_columns_path_equals_float(fmt):
    rng = np.random.default_rng(2)
    values = _random_values(rng, 2000, -40, 40)
    rows = values.reshape(-1, 4)
    buf = lines_of(["".join(fmt.format(v) for v in r) for r in rows])
    assert fixedwidth._field_layout(buf[: buf.find(b"\n")]) not in (None, fixedwidth._MATLAB)
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
