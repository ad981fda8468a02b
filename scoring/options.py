"""Dataset options that change how files are validated and scored."""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from enum import StrEnum


class Task(StrEnum):
    """The names of the built-in tasks, as stored and given (the database, challenge.toml,
    ``--task``). What a task is and does is its object in scoring.tasks (get_task)."""

    CLASSIFICATION = "classification"
    REGRESSION = "regression"
    MULTICLASS = "multiclass"


class NmseNormaliser(StrEnum):
    EVALUATED = "evaluated"  # variance of the split's own targets (the 2004 challenge)
    TRAINING = "training"  # variance of the training targets (the 2006 challenge)


MAX_QUANTILES = 200
MAX_SAMPLES = 1000
# The longest legal prediction line, a sample row: its flag and MAX_SAMPLES values.
MAX_LINE_NUMBERS = 1 + MAX_SAMPLES
# Multiclass (spec §7): L classes per dataset, and M members in an ensemble row.
MAX_CLASSES = 1000
MAX_MEMBERS = 100
# Spec §8: a regression dataset's quantile levels 0 < α_1 < … < α_K < 1, K ≤ 99.
MAX_LEVELS = 99


@dataclass(frozen=True)
class ScoringOptions:
    """Per-dataset options (spec §1 and §3).

    log_base: base of the logarithm in ``nlp`` and ``nlpd`` (default e, nats).
    allow_samples: whether ``2 s1 … sK`` sample rows are accepted.
    min_quantile_gap: w ≥ 0; when positive, every q(k+1) − q(k) ≥ w.
    nmse_normaliser: ``evaluated`` (default) or ``training`` targets' variance.
    classes: L, the multiclass task's class count (2 ≤ L ≤ 1000); None: the count of
        numbers on the first prediction line (spec §7, ``--classes``).
    allow_ensembles: whether multiclass rows of M·L numbers (M members) are accepted.
    quantile_levels: regression: 0 < α_1 < … < α_K < 1 (1 ≤ K ≤ 99) at which every row is
        read for ``wis`` and the central intervals' coverage (spec §8); None: neither.
    """

    log_base: float = math.e
    allow_samples: bool = True
    min_quantile_gap: float = 0.0
    nmse_normaliser: NmseNormaliser = NmseNormaliser.EVALUATED
    classes: int | None = None
    allow_ensembles: bool = True
    quantile_levels: tuple[float, ...] | None = None

    def __post_init__(self):
        if not (math.isfinite(self.log_base) and self.log_base > 0 and self.log_base != 1):
            raise ValueError(
                f"log_base must be a positive number other than 1, got {self.log_base}"
            )
        if not (math.isfinite(self.min_quantile_gap) and self.min_quantile_gap >= 0):
            raise ValueError(f"min_quantile_gap must be >= 0, got {self.min_quantile_gap}")
        object.__setattr__(self, "nmse_normaliser", NmseNormaliser(self.nmse_normaliser))
        if self.classes is not None:
            object.__setattr__(self, "classes", _class_count(self.classes))
        object.__setattr__(self, "allow_ensembles", bool(self.allow_ensembles))
        if self.quantile_levels is not None:
            object.__setattr__(self, "quantile_levels", quantile_levels(self.quantile_levels))


def _class_count(value) -> int:
    """L as an int: a whole number from 2 to MAX_CLASSES (a float 10.0 is 10; True is not)."""
    whole = (
        not isinstance(value, bool)
        and isinstance(value, numbers.Real)
        and math.isfinite(float(value))
        and float(value).is_integer()
    )
    if not whole or not 2 <= value <= MAX_CLASSES:
        raise ValueError(f"classes must be a whole number from 2 to {MAX_CLASSES}, got {value!r}")
    return int(value)


def quantile_levels(values) -> tuple[float, ...]:
    """Spec §8's levels as a tuple of floats: 1 to MAX_LEVELS numbers strictly increasing
    inside (0, 1); ValueError saying which rule a value breaks. (A string is refused: give
    numbers, or parse ``A1,A2,…`` first.)"""
    if isinstance(values, str | bytes) or not hasattr(values, "__iter__"):
        raise ValueError(f"quantile levels must be a list of numbers, got {values!r}")
    levels = []
    for value in values:
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise ValueError(f"quantile levels must be numbers, got {value!r}")
        level = float(value)
        if not 0 < level < 1:  # NaN fails too
            raise ValueError(f"quantile levels must lie strictly between 0 and 1, got {value!r}")
        if levels and level <= levels[-1]:
            raise ValueError(
                f"quantile levels must increase strictly ({value!r} after {levels[-1]!r})"
            )
        levels.append(level)
    if not 1 <= len(levels) <= MAX_LEVELS:
        raise ValueError(f"expected 1 to {MAX_LEVELS} quantile levels, got {len(levels)}")
    return tuple(levels)
