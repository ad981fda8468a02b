"""Validation and scoring of probabilistic predictions (../shared/spec/scoring.md).

Python and numpy, with a small C extension (``scoring/_native.c``, built by
``python -m scoring._build``) for the hot paths: the file parser, the classification
sums and erf. Every compiled path has a numpy fallback giving the same values and
messages (scoring._accel is the one switch). No Django: the site's workers, the
admin's rescoring and participants' own machines (``python -m scoring evaluate``)
share this code.

Each task (binary classification, regression, multiclass classification) is one object in scoring.tasks; the
built-in tasks and their losses are registered here, on import, in this order.
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
    find_loss,
    get_loss,
    loss_names,
    losses_for,
    register,
)
from .options import NmseNormaliser, ScoringOptions, Task
from .parse import RegressionRows, read_classification, read_inputs, read_regression, read_targets
from .plots import pit_summary, reliability
from .slices import read_slices
from .tasks import TASKS, TaskSpec, get_task, register_task
from .tasks import binary as _binary  # noqa: F401 - registers the task and its losses
from .tasks import regression as _regression  # noqa: F401 - (after binary: the order of lists)

# isort: split
from .tasks import multiclass as _multiclass  # noqa: F401 - (after regression)

# isort: split
# Losses from other packages (spec §9), after every built-in one: the entry-point group
# scoring.losses, loaded here once so that the command line and every site process see them.
from . import plugins as _plugins
from .plugins import PluginError, register_loss

_plugins.load_installed()

__all__ = [
    "LOSSES",
    "Context",
    "Evaluation",
    "Loss",
    "NmseNormaliser",
    "PluginError",
    "Problem",
    "RegressionRows",
    "ScoringError",
    "ScoringOptions",
    "Stats",
    "TASKS",
    "Task",
    "TaskSpec",
    "baseline",
    "by_legacy_number",
    "compute_scores",
    "compute_terms",
    "default_ranking_loss",
    "evaluate",
    "find_loss",
    "gaussian_stats",
    "get_loss",
    "get_task",
    "loss_names",
    "losses_for",
    "pit_summary",
    "quantile_stats",
    "read_classification",
    "read_inputs",
    "read_regression",
    "read_slices",
    "read_targets",
    "register",
    "register_loss",
    "register_task",
    "reliability",
    "sample_stats",
]
