"""Errors that say the fix once: summaries of many lines that share a problem, and hints
drawn from a whole file (probabilities in percent, ±1 labels, quantile levels in percent).

A summary leads the report as ``PATH: N lines …`` (a file-level line, spec §1's
``PATH: message``), before the capped ``PATH:LINE: message`` lines, which do not change.
"""

import numpy as np
import pytest

from scoring import ScoringOptions, read_classification, read_regression
from scoring.errors import GIVE_UP, MAX_REPORTED, MAX_SUMMARIES, SUMMARY_MIN
from scoring.parse import check_regression

from .util import lines_of, problems_of, small_blocks


def classification(rows, n=None):
    data = lines_of(rows) if isinstance(rows, list) else rows
    n = len(data.splitlines()) if n is None else n
    return problems_of(read_classification, data, path="p.txt", n_expected=n)


def regression(rows, n=None, **options):
    data = lines_of(rows) if isinstance(rows, list) else rows
    n = len(data.splitlines()) if n is None else n
    return problems_of(
        read_regression, data, path="r.txt", targets=np.zeros(n), options=ScoringOptions(**options)
    )


def test_three_hundred_lines_with_commas_lead_with_one_summary():
    err = classification([f"0.{i % 9 + 1},0.5" for i in range(300)])
    assert err.lines[0] == "p.txt: 300 lines use commas: separate numbers with spaces or tabs"
    assert err.lines[1] == "p.txt:1: expected numbers separated by spaces or tabs, found '0.1,0.5'"
    # The cap of spec §1 still holds for the lines themselves: 100, then the count.
    assert len(err.lines) == 1 + MAX_REPORTED + 1
    assert err.lines[-1] == "... and 200 more problems"
    assert [s.line for s in err.summaries] == [0] and len(err.problems) == MAX_REPORTED
    assert err.total == 300


def test_a_few_bad_lines_get_no_summary():
    rows = ["0.5"] * 20
    for i in range(SUMMARY_MIN - 1):
        rows[i] = "0,5"
    err = classification(rows)
    assert err.summaries == []
    assert err.lines[0] == "p.txt:1: expected numbers separated by spaces or tabs, found '0,5'"


@pytest.mark.parametrize(
    ("line", "summary"),
    [
        ("0,25", "use decimal commas: write numbers with a decimal point (0.5, not 0,5)"),
        ("1,0.5,1", "use commas: separate numbers with spaces or tabs"),
        ("1;0.5;1", "use semicolons: separate numbers with spaces or tabs"),
        ("pred", "hold text that is not a number: a file holds numbers only"),
        ("nan", "hold nan or inf: every number must be finite"),
        ("0.5\x0c", "hold control characters"),
        ("0.5\r 1", "hold a carriage return (CR) inside the line"),
        ("0.5 é", "hold characters that are not plain ASCII"),
        ("0.5 0.5", "hold more than one number: expected one number per line"),
        ("1e200", "hold values outside ±1e100"),
    ],
)
def test_each_kind_of_unreadable_line_has_its_summary(line, summary):
    err = classification(f"{line}\n".encode() * 12)
    assert err.lines[0].startswith(f"p.txt: 12 lines {summary}"), err.lines[0]
    assert len(err.summaries) == 1


@pytest.mark.parametrize(
    ("line", "summary"),
    [
        ("3 0.5 1", "do not start with a row type flag: start each line with 1 (Gaussian"),
        ("1 0.5", "are Gaussian rows without exactly 3 numbers: write '1 m v'"),
        ("1 0.5 -1", "have a negative variance"),
        ("0 0.1 1 0.9", "are quantile rows without pairs after the flag"),
        ("0 0.5 1", "are quantile rows of fewer than 2 or more than 200 pairs"),
        ("0 0.9 1 0.1 2", "have quantile levels that do not increase"),
        ("0 0.1 2 0.9 1", "have quantile values that do not increase: q1 < ... < qN"),
        ("0 0.1 1 1 2", "have quantile levels outside (0, 1)"),
        ("2", "are sample rows of no value or more than 1000"),
    ],
)
def test_each_kind_of_bad_regression_row_has_its_summary(line, summary):
    err = regression([line] * 15)
    assert err.lines[0].startswith(f"r.txt: 15 lines {summary}"), err.lines[0]


def test_forbidden_samples_and_quantile_gaps_have_summaries():
    err = regression(["2 0.5 1"] * 10, allow_samples=False)
    assert err.lines[0].startswith("r.txt: 10 lines are sample rows, which this dataset does not")
    err = regression(["0 0.1 1 0.9 1.1"] * 10, min_quantile_gap=0.5)
    assert err.lines[0].startswith("r.txt: 10 lines have quantile values too close together")


def test_blank_lines_are_summarised_however_they_are_counted():
    """Blank lines reach the collector as ranges and as arrays, across blocks."""
    rows = ["0.5"] + [""] * 3000 + ["0.5"]
    with small_blocks(64):
        err = classification(rows, n=2)
    assert err.lines[0] == (
        "p.txt: 3000 lines are blank before the last example: remove them (a blank line "
        "shifts every row after it)"
    )
    assert err.total == 3000


def test_summaries_come_most_frequent_first_and_are_capped():
    rows = (
        ["x"] * 30
        + ["0,5"] * 20
        + ["0.5;1"] * 40
        + ["1,2,3"] * 11
        + ["nan"] * 12
        + ["0.5 \x01"] * 13
        + ["0.5 0.5"] * 50
    )
    err = classification(rows)
    counts = [line.split(": ", 1)[1].split(" lines ")[0] for line in err.lines[:MAX_SUMMARIES]]
    assert counts == ["50", "40", "30", "20", "13"]  # the 12 nan and 11 commas left out
    assert err.lines[MAX_SUMMARIES].startswith("p.txt:1: ")


def test_a_file_given_up_on_says_at_least():
    err = classification(["x"] * (GIVE_UP + 500))
    assert not err.exact
    assert err.lines[0].startswith(f"p.txt: at least {GIVE_UP} lines hold text that is not a")


def test_probabilities_in_percent_get_a_hint():
    rows = [str(v) for v in (72.5, 12, 0.5, 99, 50, 33.3, 1.5, 80)]
    err = classification(rows)
    assert err.lines[0] == (
        "p.txt: values above 1 on 7 lines, and every value lies between 0 and 100: if these "
        "are percentages, divide them by 100 (p(y = +1 | x) is a probability between 0 and 1)"
    )
    assert err.lines[1] == "p.txt:1: expected a probability between 0 and 1, found 72.5"


@pytest.mark.parametrize(
    "rows",
    [
        ["0.5", "1.5", "0.2", "0.9"],  # a stray value above 1: a slip, not a scale
        ["0.5", "2", "3", "0.1", "0.2", "0.3", "0.4", "0.6"],  # most values are probabilities
        ["50", "150", "20", "30"],  # beyond 100: not percentages
        ["50", "-5", "20", "30"],  # negative: not percentages
    ],
)
def test_no_percent_hint_when_the_values_are_not_percentages(rows):
    err = classification(rows)
    assert not any("percentages" in line for line in err.lines)


def test_labels_where_probabilities_are_expected_get_a_hint():
    rows = ["1", "-1", "-1", "1", "+1", "-1"]
    err = classification(rows)
    assert err.lines[0] == (
        "p.txt: -1 on 3 lines, and every value is +1 or -1: these are class labels, not "
        "probabilities; give p(y = +1 | x), a probability between 0 and 1 (with labels "
        "alone, 1 for +1 and 0 for -1)"
    )
    assert err.lines[1:] == [
        f"p.txt:{line}: expected a probability between 0 and 1, found -1" for line in (2, 3, 6)
    ]


def test_the_hints_read_every_block_of_the_file():
    """A file of labels whose first blocks hold only +1 (valid probabilities) and whose
    -1 come late is still labels; one 0.5 anywhere makes it not."""
    rows = ["1"] * 2000 + ["-1"] * 30
    with small_blocks(256):
        assert "class labels" in classification(rows).lines[0]
        assert not any("labels" in line for line in classification(["0.5", *rows]).lines)


def test_quantile_levels_in_percent_get_a_hint():
    err = regression(["0 10 -1 50 0 90 1"] * 3)
    assert err.lines[0] == (
        "r.txt: quantile levels outside (0, 1) on 3 lines, and every level lies between 0 "
        "and 100: if these are percentages, divide the levels by 100 (a level is a probability)"
    )
    assert (
        err.lines[1]
        == "r.txt:1: quantile levels must lie strictly between 0 and 1, found 90 (pair 3)"
    )


def test_the_check_without_targets_gives_the_same_report_as_scoring():
    rows = ["0 10 -1 50 0 90 1"] * 12 + ["1 0 -1"] * 3 + ["x"]
    data = lines_of(rows)
    with pytest.raises(Exception) as checked:
        check_regression(data, path="r.txt", n_expected=len(rows) + 2)
    assert checked.value.lines == regression(rows, n=len(rows) + 2).lines


MESSY = [
    "0.5",
    "0,5",
    "0.25;0.75",
    "abc",
    "nan",
    "1e999",
    "0.5\r ",
    "",
    "0.5 0.5",
    "-1",
    "150",
    "0.5\x00",
    "9" * 2000,
]


@pytest.mark.parametrize("seed", range(6))
def test_summaries_are_the_same_with_and_without_the_c_parser(no_native, seed):
    """Every summary and hint comes with the message that the numpy paths write: the C
    parser only ever reads valid blocks, so both ways give the same report."""
    rng = np.random.default_rng(seed)
    rows = [MESSY[i] for i in rng.integers(0, len(MESSY), 3000)]
    rows += ["0.5"] * 2000 + ["1", "-1"] * (seed * 20)
    data = lines_of(rows)
    with small_blocks(4096):
        fast = classification(data, n=len(rows) + seed).lines
        with no_native():
            slow = classification(data, n=len(rows) + seed).lines
    assert fast == slow
    assert fast[0].startswith("p.txt: ") and " lines " in fast[0]
