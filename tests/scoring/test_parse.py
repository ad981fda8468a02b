"""scoring.parse: validating readers. Every error of spec §1, each as ``PATH:LINE: message``.

Each message must say what was expected and what was found.
"""

import numpy as np
import pytest

from scoring import (
    ScoringError,
    ScoringOptions,
    evaluate,
    read_classification,
    read_inputs,
    read_regression,
    read_targets,
)
from scoring.errors import MAX_REPORTED, Problem
from scoring.parse import GAUSSIAN, QUANTILES, SAMPLE

from .util import arr, lines_of, matlab, problems_of, quantile_row


def only_problem(err: ScoringError) -> Problem:
    assert err.total == len(err.problems) == 1, err.lines
    return err.problems[0]


def assert_problem(err, path, line, *expected, found):
    """One problem, on PATH:LINE, mentioning what was expected and what was found."""
    problem = only_problem(err)
    text = str(problem)
    assert text.startswith(f"{path}:{line}: "), text
    assert (problem.path, problem.line) == (path, line)
    for words in expected:
        assert words in problem.message, (words, text)
    assert found in problem.message, (found, text)
    return text


def classification(text, n=None, path="pred.txt"):
    rows = lines_of(text) if isinstance(text, list) else text
    n = n if n is not None else len(rows.splitlines())
    return problems_of(read_classification, rows, path=path, n_expected=n)


def regression(rows, n=None, path="pred.txt", **options):
    data = lines_of(rows) if isinstance(rows, list) else rows
    n = n if n is not None else len(data.splitlines())
    targets = np.zeros(n)
    return problems_of(
        read_regression, data, path=path, targets=targets, options=ScoringOptions(**options)
    )


def good_quantiles(n=3):
    return quantile_row([(k + 1) / (n + 1) for k in range(n)], [float(k) for k in range(n)])


# --- numbers --------------------------------------------------------------------------------


def test_commas():
    err = classification(["0.5", "0.1,0.2", "0.5"])
    assert_problem(err, "pred.txt", 2, "separated by spaces or tabs", found="'0.1,0.2'")
    err = regression(["1 0 1", "1, 0, 1"])
    assert_problem(err, "pred.txt", 2, "separated by spaces or tabs", found="'1,'")


def test_text():
    err = classification(["0.5", "0.5", "high"])
    assert_problem(err, "pred.txt", 3, "expected a number", found="'high'")


@pytest.mark.parametrize(
    "token",
    ["nan", "NaN", "-nan", "inf", "-Inf", "+inf", "infinity", "-INFINITY", "1e999", "-1e400"],
)
def test_nan_and_infinity_in_any_spelling(token):
    err = classification(["0.5", token])
    assert_problem(err, "pred.txt", 2, "expected a finite number", found=repr(token))
    err = regression(["1 0 1", f"1 {token} 1"])
    assert_problem(err, "pred.txt", 2, "expected a finite number", found=repr(token))
    err = problems_of(read_targets, lines_of(["1", token]), path="targets.txt")
    assert_problem(err, "targets.txt", 2, "expected a finite number", found=repr(token))


def test_non_utf8_bytes():
    err = classification(b"0.5\n0.25\xff\n0.5\n")
    assert_problem(err, "pred.txt", 2, "expected plain ASCII", found="byte 0xff at column 5")
    err = classification(b"0.5\n\x80\n")
    assert_problem(err, "pred.txt", 2, "expected plain ASCII", found="byte 0x80 at column 1")


# --- classification -------------------------------------------------------------------------


def test_probability_outside_zero_one():
    err = classification(["0.5", "1.5", "0.5"])
    assert_problem(err, "pred.txt", 2, "expected a probability between 0 and 1", found="found 1.5")
    err = classification(["-0.25", "0.5"])
    assert_problem(err, "pred.txt", 1, "probability between 0 and 1", found="found -0.25")
    err = classification(["0.5", "1.0000001"])
    assert_problem(err, "pred.txt", 2, "probability between 0 and 1", found="1.0000001")


def test_classification_lines_hold_one_number():
    err = classification(["0.5", "0.5 0.5"])
    assert_problem(err, "pred.txt", 2, "expected 1 number", found="found 2")


def test_valid_probabilities_including_the_ends():
    p = read_classification(
        lines_of(["0", "1", "0.5", "1.0000000e+00", "-0"]), path="p", n_expected=5
    )
    assert p.tolist() == [0.0, 1.0, 0.5, 1.0, 0.0]


def test_class_targets_not_plus_or_minus_one():
    err = problems_of(
        read_targets, lines_of(["1", "-1", "0", "1"]), path="t.txt", task="classification"
    )
    assert_problem(err, "t.txt", 3, "expected a class label of +1 or -1", found="found 0")
    err = problems_of(read_targets, lines_of(["2"]), path="t.txt", task="classification")
    assert_problem(err, "t.txt", 1, "+1 or -1", found="found 2")
    err = problems_of(
        evaluate,
        lines_of(["0.5", "0.5"]),
        lines_of(["1", "0.5"]),
        task="classification",
        targets_path="t.txt",
    )
    assert_problem(err, "t.txt", 2, "+1 or -1", found="found 0.5")
    # Any number syntax is fine for the labels.
    t = read_targets(lines_of(["+1", "-1.0000000e+00", "1.0"]), path="t", task="classification")
    assert t.tolist() == [1.0, -1.0, 1.0]


# --- regression rows ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "flag, shown", [("3", "3"), ("1.5", "1.5"), ("-1", "-1"), ("2.0000001", "2.0000001")]
)
def test_bad_flags(flag, shown):
    err = regression(["1 0 1", f"{flag} 0 1"])
    assert_problem(
        err, "pred.txt", 2, "expected a row type flag of 0", "1 (Gaussian)", found=f"found {shown}"
    )


def test_flags_in_any_number_syntax():
    rows = read_regression(
        lines_of(
            ["1.0000000e+00 0 1", "+1 0 1", "2e0 1 2", "0.0 0.25 -1 0.75 1", "-0 0.25 -1 0.75 1"]
        ),
        path="p",
        targets=np.zeros(5),
    )
    assert rows.kind.tolist() == [GAUSSIAN, GAUSSIAN, SAMPLE, QUANTILES, QUANTILES]


@pytest.mark.parametrize(
    "row, found", [("1 0", "found 2"), ("1", "found 1"), ("1 0 1 2", "found 4")]
)
def test_gaussian_with_the_wrong_count(row, found):
    err = regression(["1 0 1", row])
    assert_problem(err, "pred.txt", 2, "'1 m v' has 3 numbers", found=found)


def test_gaussian_with_a_negative_variance():
    err = regression(["1 0 -0.5"])
    assert_problem(err, "pred.txt", 1, "expected a variance of at least 0", found="found -0.5")
    rows = read_regression(lines_of(["1 0 0", "1 0 -0"]), path="p", targets=np.zeros(2))
    assert rows.variance.tolist() == [0.0, 0.0]


@pytest.mark.parametrize(
    "row, found", [("0 0.5 1 0.75", "found 3 numbers"), ("0 0.5", "found 1 numbers")]
)
def test_quantile_rows_with_an_odd_count(row, found):
    err = regression([good_quantiles(), row])
    assert_problem(err, "pred.txt", 2, "pairs of numbers after the flag", found=found)


def test_quantile_rows_with_fewer_than_two_pairs():
    err = regression(["0 0.5 1"])
    assert_problem(err, "pred.txt", 1, "2 to 200 pairs", found="found 1")
    err = regression(["0"])
    assert_problem(err, "pred.txt", 1, "2 to 200 pairs", found="found 0")


def test_quantile_rows_with_more_than_200_pairs():
    err = regression([good_quantiles(201)])
    assert_problem(err, "pred.txt", 1, "2 to 200 pairs", found="found 201")
    rows = read_regression(
        lines_of([good_quantiles(200), good_quantiles(2)]), path="p", targets=arr(0.5, 0.5)
    )
    assert rows.kind.tolist() == [QUANTILES, QUANTILES]


@pytest.mark.parametrize(
    "row, found",
    [
        ("0 0 1 0.5 2", "found 0 (pair 1)"),
        ("0 -0.1 1 0.5 2", "found -0.1 (pair 1)"),
        ("0 0.5 1 1 2", "found 1 (pair 2)"),
        ("0 0.2 1 0.5 2 1.5 3", "found 1.5 (pair 3)"),
    ],
)
def test_quantile_levels_outside_zero_one(row, found):
    err = regression([good_quantiles(), row])
    assert_problem(err, "pred.txt", 2, "levels must lie strictly between 0 and 1", found=found)


def test_quantile_levels_must_increase_strictly_spec_example():
    rows = [good_quantiles()] * 11 + ["0 0.3 1 0.7 2 0.7 3"] + [good_quantiles()] * 2
    err = regression(rows, path="gaze_val_predict.txt")
    assert str(only_problem(err)) == (
        "gaze_val_predict.txt:12: quantile levels must increase strictly (0.7 after 0.7)"
    )
    err = regression(["0 0.3 1 0.6 2 0.5 3"])
    assert (
        str(only_problem(err))
        == "pred.txt:1: quantile levels must increase strictly (0.5 after 0.6)"
    )


@pytest.mark.parametrize(
    "row, found", [("0 0.3 1 0.5 2 0.7 2", "(2 after 2)"), ("0 0.3 1 0.5 -2", "(-2 after 1)")]
)
def test_quantile_values_must_increase_strictly(row, found):
    err = regression([row])
    assert_problem(err, "pred.txt", 1, "quantile values must increase strictly", found=found)


def test_only_the_first_violation_of_a_kind_is_reported_per_row():
    err = regression(["0 0.5 1 0.4 2 0.3 3"])
    assert (
        str(only_problem(err))
        == "pred.txt:1: quantile levels must increase strictly (0.4 after 0.5)"
    )


def test_sample_rows_with_a_bad_size():
    err = regression(["2 1 2 3", "2"])
    assert_problem(err, "pred.txt", 2, "'2 s1 ... sK' has 1 to 1000 values", found="found 0")
    # 1001 values: longer than any legal line, rejected before its numbers are read.
    err = regression(["2 1 2 3", " ".join(["2"] + ["1.5"] * 1001)])
    assert_problem(err, "pred.txt", 2, "expected at most 1001 numbers on a line", found="1002")


def test_sample_rows_of_one_and_a_thousand_values_are_fine():
    rows = read_regression(
        lines_of(["2 0.5", " ".join(["2"] + ["1.5"] * 1000)]), path="p", targets=arr(0.0, 1.5)
    )
    assert rows.kind.tolist() == [SAMPLE, SAMPLE] and rows.has_samples
    assert rows.stats.crps.tolist() == [0.5, 0.0]


def test_sample_rows_forbidden_by_option():
    err = regression(["1 0 1", "2 1 2 3", good_quantiles()], allow_samples=False)
    assert_problem(
        err, "pred.txt", 2, "not allowed for this dataset", "'1 m v'", found="sample rows"
    )


def test_problems_are_collected_over_the_whole_file_in_line_order():
    rows = ["1 0 1", "1 0 -1", "oops", "3 0 1", "0 0.5 1", "1 0 1", "2", "0 0.3 1 0.3 2"]
    err = regression(rows, n=9)
    assert [p.line for p in err.problems] == [2, 3, 4, 5, 7, 8, 9]
    assert err.total == 7
    assert err.lines[-1] == "pred.txt:9: expected 9 rows, one per target, found 8"


def test_the_hundred_line_cap():
    rows = ["0.5"] * 10 + ["2"] * 250 + ["0.5"] * 10
    err = classification(rows)
    assert err.total == 250
    assert len(err.problems) == MAX_REPORTED == 100
    assert [p.line for p in err.problems] == list(range(11, 111))
    # One summary leads (here the hint of percentages), then 100 lines and the rest counted.
    assert len(err.lines) == 102
    assert err.lines[0].startswith("pred.txt: values above 1 on 250 lines")
    assert err.lines[-1] == "... and 150 more problems"
    assert str(err) == "\n".join(err.lines)
    assert err.lines[1] == "pred.txt:11: expected a probability between 0 and 1, found 2"


def test_the_cap_counts_one_more_problem_in_the_singular():
    err = classification(["abc"] * 101)
    assert err.total == 101
    assert err.lines[-1] == "... and 1 more problem"
    err = classification(["abc"] * 100)
    assert len(err.lines) == 101 and not err.lines[-1].startswith("...")
    assert err.lines[0].startswith("pred.txt: 100 lines hold text that is not a number")


def test_the_cap_mixes_batches_and_single_problems_in_line_order():
    # Unreadable lines (found one by one) and range errors (found as arrays) interleave.
    rows = []
    for k in range(150):
        rows.append("x" if k % 3 == 0 else ("7" if k % 3 == 1 else "0.5"))
    err = classification(rows)
    bad = [k + 1 for k in range(150) if k % 3 != 2]
    assert err.total == len(bad)
    assert [p.line for p in err.problems] == bad[:100]


# --- formats --------------------------------------------------------------------------------


def test_matlab_save_ascii_files():
    t = arr(0.3, -1.2, 2.0)
    plain = lines_of(["1 0.25 4", "0 0.1 -1 0.5 0 0.9 1", "2 3 5"])
    saved = lines_of(
        [matlab([1, 0.25, 4]), matlab([0, 0.1, -1, 0.5, 0, 0.9, 1]), matlab([2, 3, 5])]
    )
    assert b"   1.0000000e+00" in saved
    a = read_regression(plain, path="p", targets=t)
    b = read_regression(saved, path="p", targets=t)
    assert a.kind.tolist() == b.kind.tolist() == [GAUSSIAN, QUANTILES, SAMPLE]
    for name in ("logpdf", "mean", "crps", "pit"):
        np.testing.assert_array_equal(getattr(a.stats, name), getattr(b.stats, name))
    p = read_classification(lines_of([matlab([0.67125064]), matlab([1.0])]), path="p", n_expected=2)
    assert p.tolist() == [0.67125064, 1.0]
    t2 = read_targets(lines_of([matlab([1]), matlab([-1])]), path="t", task="classification")
    assert t2.tolist() == [1.0, -1.0]


def test_crlf_tabs_and_trailing_blanks():
    plain = read_regression(
        lines_of(["1 0.5 2", "0 0.25 -1 0.75 1"]), path="p", targets=arr(0.0, 0.0)
    )
    messy = read_regression(
        b"\t1\t0.5 \t 2  \r\n  0   0.25\t-1 0.75\t1\t \r\n\r\n  \r\n",
        path="p",
        targets=arr(0.0, 0.0),
    )
    assert messy.kind.tolist() == plain.kind.tolist()
    np.testing.assert_array_equal(messy.stats.crps, plain.stats.crps)
    assert read_targets(b"1 \r\n\t-1\t\r\n", path="t").tolist() == [1.0, -1.0]


def test_read_inputs():
    x = read_inputs(lines_of(["1 2 3", "4 5 6"]), path="x.txt")
    assert x.shape == (2, 3) and x.tolist() == [[1, 2, 3], [4, 5, 6]]
    err = problems_of(read_inputs, lines_of(["1 2 3", "4 5 6", "7 8"]), path="x.txt")
    assert_problem(err, "x.txt", 3, "expected 3 numbers (as on line 1)", found="found 2")
    err = problems_of(read_inputs, lines_of(["1 2 3", "4 5", "7 8 9 10"]), path="x.txt")
    assert [p.line for p in err.problems] == [2, 3]
    err = problems_of(read_inputs, b"", path="x.txt")
    assert err.lines == ["x.txt:1: the file is empty; expected one example per line"]


def test_read_targets_lines_hold_one_number():
    err = problems_of(read_targets, lines_of(["1.5", "2 3"]), path="t.txt")
    assert_problem(err, "t.txt", 2, "expected 1 number (the target)", found="found 2")


def test_read_regression_statistics_and_flags():
    rows = read_regression(
        lines_of(["1 1 4", "1 2 0", "0 0.2 -2 0.3 -1 0.8 1 0.9 3", "2 1 3"]),
        path="p",
        targets=arr(1.0, 3.5, 0.0, 2.0),
    )
    assert rows.kind.tolist() == [GAUSSIAN, GAUSSIAN, QUANTILES, SAMPLE]
    assert rows.variance[:2].tolist() == [4.0, 0.0] and np.isnan(rows.variance[2:]).all()
    assert rows.stats.mean.tolist() == pytest.approx([1.0, 2.0, -0.25, 2.0], abs=1e-15)
    assert rows.stats.crps[1:].tolist() == pytest.approx([1.5, 1.37 / 3, 0.5], rel=1e-14)
    assert rows.has_samples and not rows.is_point
    point = read_regression(lines_of(["1 1 0", "1 2 0"]), path="p", targets=arr(0.0, 1.0))
    assert point.is_point and not point.has_samples
