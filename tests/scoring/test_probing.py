"""scoring.probing: how many examples' predictions differ from the most common one, the
sign of a probe (a constant file but for a few rows) shown to organisers."""

from scoring import evaluate
from scoring.probing import rows_off_mode

from .util import arr, lines_of


def test_classification_compares_the_probabilities():
    targets = arr(1, -1, 1, 1, -1, 1)
    constant = evaluate(lines_of(["0.5"] * 6), targets, task="classification")
    probe = evaluate(lines_of(["0.5", "0.9", "0.5", "0.5", "0.1", "0.5"]), targets)
    honest = evaluate(lines_of(["0.8", "0.3", "0.7", "0.6", "0.2", "0.9"]), targets)
    assert [rows_off_mode(e) for e in (constant, probe, honest)] == [0, 2, 5]


def test_regression_compares_means_variances_and_row_types():
    targets = arr(0.0, 0.0, 0.0, 0.0, 0.0)
    same_mean = ["1 0 1", "1 0 1", "1 0 2", "1 0 1", "0 0.25 -1 0.75 1"]
    assert rows_off_mode(evaluate(lines_of(same_mean), targets, task="regression")) == 2
    # Quantile and sample rows have no variance: equal means and row types count as one.
    no_variance = ["0 0.25 -1 0.75 1"] * 3 + ["0 0.25 -2 0.75 2", "2 -1 1"]
    assert rows_off_mode(evaluate(lines_of(no_variance), targets, task="regression")) == 1
