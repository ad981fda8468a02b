"""Validation and scoring of probabilistic predictions (../shared/spec/scoring.md).

Pure Python and numpy: the site's workers, the admin's rescoring and
participants' own machines (``python -m scoring evaluate``) share this code.
"""

from .distributions import Stats, gaussian_stats, quantile_stats, sample_stats
from .errors import Problem, ScoringError
from .evaluate import Evaluation, baseline, evaluate
from .losses import (
    LOSSES,
    Context,
    Loss,
    by_legacy_number,
    compute_scores,
    compute_terms,
    default_ranking_loss,
    losses_for,
    register,
)
from .options import NmseNormaliser, ScoringOptions, Task
from .parse import RegressionRows, read_classification, read_inputs, read_regression, read_targets
from .plots import pit_summary, reliability

__all__ = [
    "LOSSES",
    "Context",
    "Evaluation",
    "Loss",
    "NmseNormaliser",
    "Problem",
    "RegressionRows",
    "ScoringError",
    "ScoringOptions",
    "Stats",
    "Task",
    "baseline",
    "by_legacy_number",
    "compute_scores",
    "compute_terms",
    "default_ranking_loss",
    "evaluate",
    "gaussian_stats",
    "losses_for",
    "pit_summary",
    "quantile_stats",
    "read_classification",
    "read_inputs",
    "read_regression",
    "read_targets",
    "register",
    "reliability",
    "sample_stats",
]
