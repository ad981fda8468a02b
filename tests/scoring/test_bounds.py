"""Spec §1's value bound: every number within ±1e100, a Gaussian variance within [0, 1e200].

A number beyond the bound is a line error, found before any target is used,
whichever of the tokenizer's paths read its block.
"""

import numpy as np
import pytest

from scoring import evaluate, read_classification, read_inputs, read_regression, read_targets

from .util import lines_of, matlab, problems_of, small_blocks


def regression(rows, n=None):
    data = lines_of(rows)
    n = len(rows) if n is None else n
    return problems_of(read_regression, data, path="p.txt", targets=np.zeros(n))


def messages(err):
    return [str(p) for p in err.problems]


@pytest.mark.parametrize(
    "row, message",
    [
        ("1 1e308 1", "value 1e+308 is outside ±1e100"),
        ("1 -1.5e100 1", "value -1.5e+100 is outside ±1e100"),
        ("1 0 1e250", "variance 1e+250 is outside [0, 1e200]"),
        ("1 0 -1e250", "variance -1e+250 is outside [0, 1e200]"),
        ("1 0 -1", "expected a variance of at least 0, found -1"),
        ("1e101 0 1", "value 1e+101 is outside ±1e100"),
        # Issue 10's rows: they failed scoring whatever the target.
        ("0 0.1 -1e308 0.9 1e308", "value -1e+308 is outside ±1e100"),
        ("2 -1.7e308 1.7e308", "value -1.7e+308 is outside ±1e100"),
        ("2 1 2 3 4 1e200", "value 1e+200 is outside ±1e100"),
        ("1 0 1e150 7", "value 1e+150 is outside ±1e100"),  # no Gaussian row: no variance
    ],
)
def test_out_of_range_numbers_are_line_errors(row, message):
    err = regression(["1 0 1", row, "1 0 1"])
    assert messages(err) == [f"p.txt:2: {message}"]


def test_the_largest_legal_numbers_are_fine():
    rows = ["1 1e100 1e200", "1 -1e100 0", "0 1e-300 -1e100 0.5 1e100", "2 1e100 -1e100"]
    result = read_regression(lines_of(rows), path="p", targets=np.array([1e100, -1e100, 0, 0]))
    assert result.kind.tolist() == [1, 1, 0, 2]


def test_one_message_per_line_at_its_first_number_out_of_range():
    err = regression(["2 1e101 1e300 -1e400", "1 1e300 1e300", "0 0.1 5 0.2 1e101 0.3 1e102"])
    assert messages(err) == [
        "p.txt:1: expected a finite number, found '-1e400'",
        "p.txt:2: value 1e+300 is outside ±1e100",
        "p.txt:3: value 1e+101 is outside ±1e100",
    ]


def test_classification_predictions():
    err = problems_of(
        read_classification, lines_of(["0.5", "1e101", "2"]), path="c.txt", n_expected=3
    )
    assert messages(err) == [
        "c.txt:2: value 1e+101 is outside ±1e100",
        "c.txt:3: expected a probability between 0 and 1, found 2",
    ]


def test_target_and_input_files():
    err = problems_of(read_targets, lines_of(["1", "-2e100", "3"]), path="t.txt")
    assert messages(err) == ["t.txt:2: value -2e+100 is outside ±1e100"]
    err = problems_of(read_inputs, lines_of(["1 2", "3 1e101"]), path="x.txt")
    assert messages(err) == ["x.txt:2: value 1e+101 is outside ±1e100"]
    assert read_targets(lines_of(["1e100", "-1e100"]), path="t").tolist() == [1e100, -1e100]


def test_every_path_of_the_tokenizer_applies_the_bound():
    plain = ["1 0 1"] * 30 + ["1 0 1e300"]
    fixed = [matlab([1, 0, 1])] * 30 + [matlab([1, 0, 1e300])]
    sorted_out = [*plain, "oops"]  # a bad line: the block is sorted out line by line
    for rows in (plain, fixed, sorted_out):
        for size in (1 << 20, 64):
            with small_blocks(size):
                err = regression(rows)
            assert messages(err)[0] == "p.txt:31: variance 1e+300 is outside [0, 1e200]"


def test_the_bound_does_not_depend_on_the_targets():
    # Checked before any target is used: the same problems whatever the targets.
    data = lines_of(["1 0 1", "0 0.1 -1e101 0.9 1", "2 5e100", "1 0 1e201"])
    reports = set()
    for targets in ([0.0] * 4, [1e100, -1e100, 1e100, -1e100], [3.0, -2e99, 5e-324, 1.0]):
        err = problems_of(evaluate, data, np.array(targets), task="regression")
        reports.add(tuple(err.lines))
    assert len(reports) == 1 and len(next(iter(reports))) == 3
