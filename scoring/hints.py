"""Saying the fix once: the summaries of the readers' line messages, and hints drawn
from a whole file's values.

A summary is a plural verb phrase and its fix ("use commas: separate numbers with spaces
or tabs"): :class:`scoring.errors.Problems` counts the lines that share one and leads the
report with "PATH: 300 lines use commas: …" once there are many. A hint replaces a
summary when the file as a whole says more than any of its lines: probabilities written
as percentages (every value between 0 and 100, some above 1) or as class labels (every
value +1 or -1). Hints look at the prediction file alone, never at a target.
"""

from __future__ import annotations

import numpy as np

from .errors import Problems
from .options import MAX_QUANTILES, MAX_SAMPLES

# Classification and target files (parse.py).
ONE_NUMBER = "hold more than one number: expected one number per line"
PROBABILITY = "hold values outside [0, 1]: each line is a probability p(y = +1 | x) between 0 and 1"
LABEL = "hold values other than +1 and -1: a classification target is a class label"
INPUT_WIDTH = "hold a different count of numbers than the first line: every line needs as many"

# Regression predictions (parse.py).
FLAG = (
    "do not start with a row type flag: start each line with 1 (Gaussian '1 m v'), "
    "0 (quantiles '0 a1 q1 ... aN qN') or 2 (sample '2 s1 ... sK')"
)
GAUSSIAN_COUNT = "are Gaussian rows without exactly 3 numbers: write '1 m v'"
NEGATIVE_VARIANCE = "have a negative variance: the third number of '1 m v' is a variance, v >= 0"
SAMPLE_COUNT = f"are sample rows of no value or more than {MAX_SAMPLES}: write '2 s1 ... sK'"
SAMPLES_FORBIDDEN = (
    "are sample rows, which this dataset does not allow: use Gaussian ('1 m v') or "
    "quantile ('0 a1 q1 ... aN qN') rows"
)
QUANTILE_PAIRS = "are quantile rows without pairs after the flag: write '0 a1 q1 ... aN qN'"
QUANTILE_COUNT = f"are quantile rows of fewer than 2 or more than {MAX_QUANTILES} pairs (a q)"
LEVELS = "have quantile levels outside (0, 1): a level a is the probability p(y < q)"
LEVEL_ORDER = "have quantile levels that do not increase: list the pairs by increasing level"
VALUE_ORDER = "have quantile values that do not increase: q1 < ... < qN"
GAP = "have quantile values too close together: the dataset asks for a minimum gap"

# Hints: "{lines}" becomes "300 lines" (or "1 line", "at least 10000 lines").
PERCENT = (
    "values above 1 on {lines}, and every value lies between 0 and 100: if these are "
    "percentages, divide them by 100 (p(y = +1 | x) is a probability between 0 and 1)"
)
LABELS = (
    "-1 on {lines}, and every value is +1 or -1: these are class labels, not probabilities; "
    "give p(y = +1 | x), a probability between 0 and 1 (with labels alone, 1 for +1 and "
    "0 for -1)"
)
PERCENT_LEVELS = (
    "quantile levels outside (0, 1) on {lines}, and every level lies between 0 and 100: "
    "if these are percentages, divide the levels by 100 (a level is a probability)"
)


class ValueSpan:
    """The smallest and largest of a file's values, seen block by block, how many lie
    above 1, and whether every one is +1 or -1."""

    def __init__(self) -> None:
        self.low = np.inf
        self.high = -np.inf
        self.count = 0
        self.above_one = 0
        self.labels = True

    def add(self, values: np.ndarray) -> None:
        if not values.size:
            return
        self.count += int(values.size)
        self.low = min(self.low, float(values.min()))
        self.high = max(self.high, float(values.max()))
        if self.high > 1:
            self.above_one += int(np.count_nonzero(values > 1))
        if self.labels:
            self.labels = bool((np.abs(values) == 1).all())

    @property
    def percent(self) -> bool:
        """Every value between 0 and 100, and half of them (three at least) above 1:
        percentages, most likely (a stray 1.5 among probabilities is a slip, not a scale)."""
        return (
            self.low >= 0
            and self.high <= 100
            and self.above_one >= 3
            and 2 * self.above_one >= self.count
        )


def hint_probabilities(problems: Problems, span: ValueSpan) -> None:
    """When probabilities were out of [0, 1]: percentages, or ±1 labels?"""
    if not problems.summary_counts.get(PROBABILITY):
        return
    if span.labels and span.low == -1:
        problems.hint(PROBABILITY, LABELS)
    elif span.percent:
        problems.hint(PROBABILITY, PERCENT)


def hint_levels(problems: Problems, span: ValueSpan) -> None:
    """When quantile levels were out of (0, 1): percentages (every level in (0, 100))?"""
    if problems.summary_counts.get(LEVELS) and span.percent and span.low > 0 and span.high < 100:
        problems.hint(LEVELS, PERCENT_LEVELS)
