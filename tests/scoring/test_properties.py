"""Hypothesis properties: the validator never crashes, names every bad line, reads floats exactly."""

import math
import os

import numpy as np
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from scoring import ScoringError, ScoringOptions, evaluate, read_inputs, read_targets, textfile
from scoring.errors import MAX_REPORTED, Problems

from .util import file_numbers, reference_numbers, same_floats, small_blocks, table_numbers

# SCORING_HYPOTHESIS_EXAMPLES=5000 for a long hunt; the default keeps the suite fast.
EXAMPLES = int(os.environ.get("SCORING_HYPOTHESIS_EXAMPLES", "150"))
FAST = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])

TOKENS = [
    "0", "1", "2", "-1", "+1", "0.5", "0.2", "0.9", "1e-300", "1e300", "-3", "200", "1.5", "-0",
    "1.0000000e+00", "   6.7125064e-01", "1_0", "nan", "-Inf", "infinity", "1e999", "x", ",", "1,2",
    "\t", " ", "\r", "\n", "\r\n", "\xff", "\x00", "\x0c", "é", "\ufeff",
]  # fmt: skip
token_soup = st.lists(st.sampled_from(TOKENS), max_size=80).map(
    lambda t: " ".join(t).encode("utf-8")
)
any_bytes = st.one_of(st.binary(max_size=400), token_soup)


# --- never anything but ScoringError --------------------------------------------------------


@FAST
@given(
    data=any_bytes,
    n=st.integers(1, 6),
    task=st.sampled_from([None, "classification", "regression"]),
    allow_samples=st.booleans(),
    gap=st.sampled_from([0.0, 0.1, 1.0]),
)
@example(data=b"", n=1, task=None, allow_samples=True, gap=0.0)
@example(data=b"\n\n", n=2, task="regression", allow_samples=False, gap=0.1)
def test_evaluate_raises_only_scoring_errors(data, n, task, allow_samples, gap):
    targets = np.array([1.0, -1.0] * 3)[:n]
    if task == "regression":
        targets = np.linspace(-1, 1, n)
    options = ScoringOptions(allow_samples=allow_samples, min_quantile_gap=gap)
    try:
        result = evaluate(data, targets, task=task, options=options, predictions_path="p.txt")
    except ScoringError as err:
        assert err.problems and err.total >= len(err.problems)
        assert all(str(p).startswith("p.txt:") for p in err.problems)
        assert len(err.problems) <= MAX_REPORTED
    else:
        assert result.n == n
        for value in result.scores.values():
            assert value is None or isinstance(value, float)
        result.plot_data()


@FAST
@given(data=any_bytes)
def test_readers_raise_only_scoring_errors(data):
    for read in (
        lambda: read_targets(data, path="t"),
        lambda: read_targets(data, path="t", task="classification"),
        lambda: read_inputs(data, path="x"),
    ):
        try:
            values = read()
        except ScoringError as err:
            assert err.problems
        else:
            assert np.isfinite(values).all()


# --- every bad line named, and only those --------------------------------------------------


GOOD_CLS = st.floats(0, 1).flatmap(
    lambda p: st.sampled_from([repr(p), f"{p:16.7e}", f"{p:g}", f"  {p}\t"])
)
BAD_CLS = st.sampled_from(
    ["1.5", "-0.1", "0.5 0.5", "abc", "1,0", "inf", "nan", "\xff", "\x00", "2"]
)

GOOD_REG = st.sampled_from(
    [
        "1 0 1",
        "1 -2.5 0",
        "1.0000000e+00   5.0000000e-01   2.0000000e+00",
        "0 0.2 -2 0.3 -1 0.8 1 0.9 3",
        "0 0.5 1 0.6 2",
        "2 1 2 3",
        "2 -4",
        "\t1 0 1 \r",
    ]
)
BAD_REG = st.sampled_from(
    [
        "1 0",  # wrong count
        "1 0 -1",  # negative variance
        "3 0 1",  # bad flag
        "0 0.5 1 0.7",  # odd count
        "0 0.5 1",  # one pair
        "0 0 1 0.5 2",  # level 0
        "0 0.5 1 0.5 2",  # levels not increasing
        "0 0.2 1 0.5 1",  # values not increasing
        "2",  # empty sample
        "abc",
        "1,0,1",
        "nan 0 1",
        "1 0 inf",
        "1 0 1\xff",
    ]
)


def _file(draw, good, bad):
    """Lines, the set of bad line numbers, and the number of examples."""
    if draw(st.booleans()):
        kinds = draw(st.lists(st.sampled_from(["good", "bad", "blank"]), min_size=1, max_size=60))
    else:  # mostly bad lines, often more than the 100 shown
        mix = st.sampled_from(["good", "bad", "bad", "bad", "bad", "blank"])
        kinds = draw(st.lists(mix, min_size=100, max_size=200))
    lines, bad_lines, last_example = [], set(), 0
    for k, kind in enumerate(kinds, 1):
        if kind == "blank":
            lines.append(draw(st.sampled_from(["", " ", "\t", "\r"])))
            continue
        last_example = k
        lines.append(draw(good if kind == "good" else bad))
        if kind == "bad":
            bad_lines.add(k)
    # Blank lines before the last example are errors; those after it are fine.
    bad_lines |= {k for k, kind in enumerate(kinds, 1) if kind == "blank" and k < last_example}
    n = sum(kind != "blank" for kind in kinds)
    return lines, bad_lines, n


@st.composite
def classification_files(draw):
    return _file(draw, GOOD_CLS, BAD_CLS)


@st.composite
def regression_files(draw):
    return _file(draw, GOOD_REG, BAD_REG)


def _check_named(lines, bad, n, task, targets, block_size):
    data = ("\n".join(lines) + "\n").encode("utf-8")
    with small_blocks(block_size):
        try:
            evaluate(data, targets, task=task, predictions_path="f.txt")
        except ScoringError as err:
            if n == 0:
                assert err.lines == ["f.txt:1: the file is empty; expected one example per line"]
                return
            shown = [p.line for p in err.problems]
            assert shown == sorted(bad)[:MAX_REPORTED]
            assert err.total == len(bad)
            assert all(str(p).startswith(f"f.txt:{p.line}: ") for p in err.problems)
            if len(bad) > MAX_REPORTED:
                hidden = len(bad) - MAX_REPORTED
                assert err.lines[-1] == f"... and {hidden} more problem{'s' if hidden > 1 else ''}"
            return
    assert not bad and n > 0, "bad lines went unreported"


@FAST
@given(file=classification_files(), block_size=st.sampled_from([1 << 20, 64, 5]))
def test_every_bad_classification_line_is_named(file, block_size):
    lines, bad, n = file
    targets = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    _check_named(lines, bad, n, "classification", targets, block_size)


@FAST
@given(file=regression_files(), block_size=st.sampled_from([1 << 20, 64, 5]))
def test_every_bad_regression_line_is_named(file, block_size):
    lines, bad, n = file
    _check_named(lines, bad, n, "regression", np.linspace(-2, 2, n), block_size)


@FAST
@given(file=regression_files(), extra=st.integers(-3, 3).filter(lambda d: d != 0))
def test_a_wrong_row_count_is_one_more_problem(file, extra):
    lines, bad, n = file
    if n + extra < 1:
        return
    data = ("\n".join(lines) + "\n").encode("utf-8")
    try:
        evaluate(data, np.linspace(-2, 2, n + extra), task="regression", predictions_path="f.txt")
    except ScoringError as err:
        if n == 0:
            return
        assert err.total == len(bad) + 1
        counts = [p for p in err.problems if "rows, one per target" in p.message]
        if len(bad) < MAX_REPORTED:
            (count,) = counts
            assert count.message == f"expected {n + extra} rows, one per target, found {n}"
    else:
        raise AssertionError("a wrong row count went unreported")


# --- the parser reads floats exactly as float() does ---------------------------------------


FORMATS = ["{:16.7e}", "{:.18e}", "{:g}", "{!r}", "{:.17g}", "{:+.3e}", "{:E}", "{:12.4e}"]
# Below the largest double, so that rounding in "%.3e" cannot print a number beyond it.
finite = st.floats(-1e308, 1e308)
matlab_range = st.floats(1e-99, 9.9e99) | st.floats(-9.9e99, -1e-99) | st.just(0.0) | st.just(-0.0)


@FAST
@given(
    values=st.lists(finite, min_size=1, max_size=40),
    fmt=st.sampled_from(FORMATS),
    width=st.integers(1, 5),
    sep=st.sampled_from([" ", "\t", "  ", " \t "]),
    eol=st.sampled_from(["\n", "\r\n", " \n", "\t\r\n"]),
    lead=st.sampled_from(["", " ", "\t"]),
)
def test_parsed_values_equal_python_float(values, fmt, width, sep, eol, lead):
    rows = [
        values[i : i + width] for i in range(0, len(values) - len(values) % width or width, width)
    ]
    rows = [r for r in rows if len(r) == width]
    if not rows:
        return
    text = "".join(lead + sep.join(fmt.format(v) for v in r) + eol for r in rows)
    # The tokenizer reads the whole range of doubles; the files' ±1e100 bound is the
    # readers' check (tests/scoring/test_bounds.py).
    want = [[float(tok) for tok in line.split()] for line in text.splitlines()]
    assert same_floats(file_numbers(text.encode()), want)
    if all(abs(v) <= 1e100 for v in values):
        got = read_inputs(text.encode(), path="x")
        assert got.shape == (len(rows), width)
        assert same_floats(got.tolist(), want)


@FAST
@given(
    values=st.lists(matlab_range, min_size=1, max_size=60),
    width=st.integers(1, 6),
    crlf=st.booleans(),
)
def test_matlab_fixed_width_files_equal_python_float(values, width, crlf):
    # Every line the same length: the SWAR path reads these.
    n = len(values) // width
    if n == 0:
        return
    eol = "\r\n" if crlf else "\n"
    text = "".join(
        "".join(f"{v:16.7e}" for v in values[i * width : (i + 1) * width]) + eol for i in range(n)
    )
    buf = text.encode()
    assert textfile._fixed_width(buf, np.frombuffer(buf, np.uint8), 1) is not None
    got = read_inputs(buf, path="x")
    want = [[float(tok) for tok in line.split()] for line in text.splitlines()]
    assert same_floats(got.tolist(), want)


FIXED = ["{:16.7e}", "{:12.4e}", "{:9.1e}", "{:8.1e}", "{:20.12E}"]


@st.composite
def fixed_width_blocks(draw):
    """Equal-length lines of fixed-width fields, sometimes with one byte changed."""
    fmt = draw(st.sampled_from(FIXED))
    width = draw(st.integers(1, 4))
    n = draw(st.integers(1, 5))
    values = draw(st.lists(st.floats(-1e3, 1e3), min_size=width * n, max_size=width * n))
    lines = ["".join(fmt.format(v) for v in values[i * width : (i + 1) * width]) for i in range(n)]
    if draw(st.booleans()):
        i = draw(st.integers(0, n - 1))
        j = draw(st.integers(0, len(lines[i]) - 1))
        lines[i] = lines[i][:j] + draw(st.sampled_from(list("0-+ e.E9xa,:/"))) + lines[i][j + 1 :]
    eol = draw(st.sampled_from(["\n", "\r\n"]))
    return "".join(line + eol for line in lines).encode()


@FAST
@given(buf=st.one_of(fixed_width_blocks(), token_soup))
def test_tokenizer_matches_the_reference_reader(buf):
    # Every path (fixed width, general, careful) must read what float() reads, line by line,
    # and report exactly the lines it cannot read.
    if not buf.endswith(b"\n"):
        buf += b"\n"
    problems = Problems("f")
    table = textfile.tokenize(buf, 1, problems)
    want = reference_numbers(buf)
    assert same_floats(table_numbers(table), want)
    assert {p.line for p in problems.shown(10**6)} == {
        k for k, v in enumerate(want, 1) if v is None
    }
    assert problems.total == sum(v is None for v in want)


def test_reference_reader_sanity():
    assert reference_numbers(b"1 2\n\nx\n 3e0\t\r\n") == [[1.0, 2.0], [], None, [3.0]]
    assert math.isnan(float("nan")) and reference_numbers(b"nan\n") == [None]
