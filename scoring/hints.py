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

from .errors import SUMMARY_MIN, Problems
from .lines import TOO_LONG
from .options import MAX_MEMBERS, MAX_QUANTILES, MAX_SAMPLES

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


# --- Multiclass predictions (multiclass_parse.py, spec §7) -----------------------------
# Summaries; the class count L is written in where "{L}" stands (class_summary).
CLASS_COUNT = (
    "hold neither {L} numbers nor a multiple of {L}: each line holds the {L} class "
    "probabilities (an ensemble row: its members' {L} probabilities, one member after the other)"
)
CLASS_COUNT_SINGLE = "do not hold {L} numbers: each line holds the {L} class probabilities"
ENSEMBLES_FORBIDDEN = (
    "are ensemble rows ({L} probabilities per member), which this dataset does not accept: "
    "write the members' mean, {L} probabilities per line"
)
CLASS_PROBABILITY = "hold values outside [0, 1]: each number is a class probability between 0 and 1"
CLASS_SUM = (
    "have probabilities that do not sum to 1 within 0.01: each line's (each member's) "
    "probabilities must sum to 1"
)
CLASS_LABEL = (
    "hold values other than a class label 0 to {last}: a multiclass target is the index of "
    "the true class, from 0"
)
CLASS_TOO_LONG = (
    "are too long: a line holds the {L} class probabilities of one example, or an ensemble's "
    "M·{L} with at most {members} members"
)
# Hints ("{lines}" as above).
SOFTMAX = (
    "values outside [0, 1] on {lines}: if these are logits or unnormalised scores, apply a "
    "softmax to each row (p_k = exp(z_k) / Σ_j exp(z_j)), so that each is a probability "
    "and each line sums to 1"
)
PERCENT_ROWS = (
    "values above 1 on {lines}, and every value lies between 0 and 100 with the lines summing "
    "to 100: if these are percentages, divide them by 100 (each class probability lies "
    "between 0 and 1)"
)
CLASS_LABELS = (
    "every line holds one number, a whole number from {low} to {high}: these look like "
    "class labels{based}, not probabilities; give one line of {L} class probabilities per "
    "example (for a label k alone: 1 for class k, 0 for the others)"
)
WRONG_CLASSES = (
    "this dataset has {L} classes; your lines have {K} numbers (all {{lines}}){why}: write "
    "one probability per class, {L} numbers on each line, classes 0 to {last} in order"
)


def class_summary(template: str, classes: int | None, **more) -> str:
    """A multiclass summary with the dataset's class count written in."""
    return template.format(L=classes if classes else "L", last=(classes or 0) - 1, **more)


class ClassSpan:
    """What a multiclass prediction file shows as a whole, block by block: the counts of
    numbers on its readable lines, its probabilities' range and how many members sum to
    about 100, and whether its one-number lines are all whole numbers (class labels)."""

    def __init__(self) -> None:
        self.count_low = self.count_high = None
        self.lines = 0  # readable non-blank lines
        self.low, self.high = np.inf, -np.inf
        self.members = self.hundred = 0
        self.single_low, self.single_high = np.inf, -np.inf
        self.whole = True

    def add_counts(self, counts: np.ndarray, low: int | None = None, high: int | None = None):
        self.lines += int(counts.size)
        if counts.size:
            low = int(counts.min()) if low is None else low
            high = int(counts.max()) if high is None else high
            self.count_low = low if self.count_low is None else min(self.count_low, low)
            self.count_high = high if self.count_high is None else max(self.count_high, high)

    def add_values(self, low: float, high: float, sums: np.ndarray | None = None) -> None:
        """The range of some rows' probabilities; ``sums``: their members' sums, if any
        value was above 1 (probabilities in [0, 1] are no percentages)."""
        self.low, self.high = min(self.low, low), max(self.high, high)
        if sums is not None:
            self.members += int(sums.size)
            self.hundred += int(np.count_nonzero(np.abs(sums - 100) <= 1))

    def add_singles(self, values: np.ndarray) -> None:
        """The numbers of one-number lines (class labels, if all are whole numbers)."""
        if values.size:
            self.single_low = min(self.single_low, float(values.min()))
            self.single_high = max(self.single_high, float(values.max()))
            self.whole = self.whole and bool((values == np.floor(values)).all())

    @property
    def percent(self) -> bool:
        """Every value between 0 and 100, some above 1, and most members summing to 100 ± 1."""
        return self.low >= 0 and 1 < self.high <= 100 and 2 * self.hundred >= max(self.members, 1)

    def labels(self, classes: int | None) -> str | None:
        """ "" or " numbered from 1" when every line holds one whole number that fits
        0 … L−1 or 1 … L (any non-negative one when L is unknown), else None."""
        if not (self.count_high == 1 and self.whole and self.single_low >= 0):
            return None
        if classes is None or self.single_high <= classes - 1:
            return ""
        if self.single_low >= 1 and self.single_high <= classes:
            return " numbered from 1"
        return None


def hint_multiclass(problems: Problems, span: ClassSpan, classes: int | None, count: str) -> None:
    """Whole-file hints for multiclass predictions: percentages or logits (values out of
    [0, 1] on most lines, three at least), class labels, the wrong number of classes
    (``count``: the summary of the lines of a wrong count), and many overlong lines."""
    found = problems.summary_counts
    if found.get(TOO_LONG, 0) >= SUMMARY_MIN:  # (the tokenizer's words are regression's)
        too_long = class_summary(CLASS_TOO_LONG, classes, members=MAX_MEMBERS)
        problems.hint(TOO_LONG, "{lines} " + too_long)
    outside = found.get(CLASS_PROBABILITY, 0)
    if outside and span.percent:
        problems.hint(CLASS_PROBABILITY, PERCENT_ROWS)
    elif outside >= 3 and 2 * outside >= span.lines:  # (not a stray value: most lines)
        problems.hint(CLASS_PROBABILITY, SOFTMAX)
    based = span.labels(classes)
    if based is not None and found.get(count):
        low, high = int(span.single_low), int(span.single_high)
        problems.hint(count, CLASS_LABELS.format(low=low, high=high, based=based, L=classes or "L"))
    elif classes and span.count_low == span.count_high and found.get(count):
        k = span.count_low
        why = (
            "; is there an index or label column?"
            if k == classes + 1
            else "; is a class left out?"
            if k == classes - 1
            else ""
        )
        problems.hint(count, WRONG_CLASSES.format(L=classes, K=k, last=classes - 1, why=why))
