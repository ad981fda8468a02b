"""Tasks: each kind of prediction problem as one object (scoring.taskspec.TaskSpec).

- the interface and the registry live in ``scoring.taskspec`` (below the readers and the
  losses, which look tasks up) and are named here too;
- ``binary``: binary classification, p(y = +1 | x) per line (spec §1, §3);
- ``regression``: scalar regression, Gaussian, quantile and sample rows (spec §1-§3);
- ``multiclass``: L class probabilities per line, or an ensemble's M·L (spec §7);
- ``demo``, ``binary_demo``, ``regression_demo``: the demo leaderboard's methods;
- ``text``: the plain-text paragraphs of a dataset's README.

The built-in tasks register themselves, and then their losses, when the scoring package
is imported (scoring/__init__.py imports ``binary``, ``regression`` and then
``multiclass``: the order of every list of tasks and losses). This package's own import pulls in the registry
alone, so that the readers and the loss registry, which the tasks import, can use it.
"""

from ..taskspec import TASKS, Inference, TaskSpec, all_settings, get_task, inferable, register_task

__all__ = [
    "TASKS",
    "Inference",
    "TaskSpec",
    "all_settings",
    "get_task",
    "inferable",
    "register_task",
]
