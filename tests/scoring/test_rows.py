"""scoring.rows: a file as example rows. Spec §1's value bound (every number within
±1e100, a Gaussian variance within [0, 1e200]), blank lines only after the last example,
and the number of rows.

A number beyond the bound is a line error, found before any target is used,
whichever of the tokenizer's paths read its block.
"""

import numpy as np
import pytest

from scoring import (
    ScoringError,
    evaluate,
    read_classification,
    read_inputs,
    read_regression,
    read_targets,
)
from scoring.errors import Problem

from .util import lines_of, matlab, problems_of, small_blocks


def regression(rows, n=None, path="p.txt"):
    data = lines_of(rows)
    n = len(rows) if n is None else n
    return problems_of(read_regression, data, path=path, targets=np.zeros(n))


def classification(text, n, path="pred.txt"):
    rows = lines_of(text) if isinstance(text, list) else text
    return problems_of(read_classification, rows, path=path, n_expected=n)


def only_problem(err: ScoringError) -> Problem:
    assert err.total == len(err.problems) == 1, err.lines
    return err.problems[0]


def assert_problem(err, path, line, *expected, found):
    """One problem, on PATH:LINE, mentioning what was expected and what was found."""
    problem = only_problem(err)
    text = str(problem)
    assert text.startswith(f"{path}:{line}: "), text
    for words in [*expected, found]:
        assert words in problem.message, (words, text)
    return text


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


def test_empty_file():
    for data in (b"", b"\n", b"\n\n  \n\t\r\n"):
        err = problems_of(read_classification, data, path="pred.txt", n_expected=3)
        assert_problem(err, "pred.txt", 1, "expected one example per line", found="empty")
        err = problems_of(read_targets, data, path="t.txt")
        assert_problem(err, "t.txt", 1, "expected one example per line", found="empty")
        err = problems_of(read_regression, data, path="r.txt", targets=np.zeros(2))
        assert_problem(err, "r.txt", 1, "expected one example per line", found="empty")


def test_blank_line_before_the_last_example():
    err = classification(b"0.5\n0.5\n\n0.5\n", n=3)
    assert_problem(err, "pred.txt", 3, "every line must hold an example", found="blank line")
    err = classification(b"0.5\n \t \n0.5\n", n=2)  # a line of blanks is blank too
    assert_problem(err, "pred.txt", 2, "every line must hold an example", found="blank line")
    err = classification(b"\n0.5\n", n=1)
    assert_problem(err, "pred.txt", 1, "every line must hold an example", found="blank line")


def test_several_blank_lines_each_reported_and_blank_lines_at_the_end_fine():
    err = classification(b"0.5\n\n\n0.5\n\n\n", n=2)
    assert [str(p) for p in err.problems] == [
        f"pred.txt:{k}: blank line before the last example; every line must hold an example "
        "(a blank line would shift the rows after it)"
        for k in (2, 3)
    ]
    p = read_classification(b"0.5\n0.25\n\n  \n\r\n\t\n", path="pred.txt", n_expected=2)
    assert p.tolist() == [0.5, 0.25]


def test_too_few_rows():
    err = classification(["0.5", "0.5"], n=3)
    text = assert_problem(err, "pred.txt", 3, "expected 3 rows", found="found 2")
    assert text == "pred.txt:3: expected 3 rows, one per target, found 2"
    err = regression(["1 0 1"], n=2, path="pred.txt")
    assert str(only_problem(err)) == "pred.txt:2: expected 2 rows, one per target, found 1"


def test_too_few_rows_reported_after_the_last_example_not_the_trailing_blanks():
    with pytest.raises(ScoringError) as err:
        read_classification(b"0.5\n0.5\n\n\n", path="pred.txt", n_expected=3)
    assert str(only_problem(err.value)) == "pred.txt:3: expected 3 rows, one per target, found 2"


def test_too_many_rows_reported_at_the_first_extra_row():
    err = classification(["0.5"] * 5, n=3)
    assert str(only_problem(err)) == "pred.txt:4: expected 3 rows, one per target, found 5"
    err = regression(["1 0 1"] * 4, n=2, path="pred.txt")
    assert str(only_problem(err)) == "pred.txt:3: expected 2 rows, one per target, found 4"


def test_row_counts_across_blocks():
    with small_blocks(16):
        err = classification(["0.25"] * 40, n=30)
        assert str(only_problem(err)) == "pred.txt:31: expected 30 rows, one per target, found 40"
        err = classification(["0.25"] * 20, n=30)
        assert str(only_problem(err)) == "pred.txt:21: expected 30 rows, one per target, found 20"
