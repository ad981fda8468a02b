"""The task interface and its registry.

A task (binary classification, scalar regression, …) is one :class:`TaskSpec` object,
registered under its name with :func:`register_task` as a loss is registered with
:func:`scoring.losses.register`. Everything that differs between tasks is asked of it:
how a target line and a prediction line are read and checked, when the task is inferred,
the parsed predictions a loss is computed from, the baseline, the plot data, what the
README of a dataset's zip says of the files, the settings a dataset of the task may use
and the demo leaderboard's methods. The task's losses are registered by its module
(``task=`` its name). No other module compares a task's name
(tests/scoring/test_task_names.py).

This module imports nothing of the package but the options, so that the readers and the
loss registry below the tasks can look a task up (:func:`get_task`) while the task
modules import them.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from .options import ScoringOptions

if TYPE_CHECKING:
    from .errors import Problems
    from .losses import Context
    from .rows import RowReader
    from .tasks.demo import Demo


@dataclass(frozen=True)
class Inference:
    """When :func:`scoring.evaluate` takes a file for this task, no task being given.

    ``targets``: every target fits (None: any targets do); ``max_numbers``: every
    prediction line holds at most this many numbers (None: any line does). A task with
    neither is the fallback, taken when no other inferable task fits (one task at most).
    """

    targets: Callable[[np.ndarray], bool] | None = None
    max_numbers: int | None = None

    @property
    def fallback(self) -> bool:
        return self.targets is None and self.max_numbers is None


class TaskSpec(ABC):
    """One task: what a dataset of it stores, what its files hold, how they are scored.

    Class attributes: ``name`` (as stored in the database and challenge.toml, given to
    ``--task``), ``label`` (as shown), ``settings`` (the fields of ScoringOptions, and of
    a dataset, that only this task uses), ``inference`` (None: never inferred, always
    given), ``readme_targets`` (what a target line holds, for a dataset's README) and
    ``demo`` (the demo leaderboard's methods, or None).
    """

    name: str
    label: str
    settings: tuple[str, ...] = ()
    inference: Inference | None = None
    readme_targets: str = "a real number."
    demo: Demo | None = None
    # What a certain example is (:meth:`certain`) and what it risks, as the site words
    # them: "claims certainty on 3 of 2,000 examples (WHAT): RISK".
    certain_what: str = "a predictive distribution that rules an outcome out"
    certain_risk: str = (
        "a single such example whose ruled-out outcome happens makes the log loss infinite"
    )

    # --- Files (spec §1) ----------------------------------------------------------------

    def target_error(self, targets: np.ndarray, options: ScoringOptions) -> str | None:
        """Why targets already read as numbers are not this task's (None: they are)."""
        return None

    def check_target_lines(
        self,
        lines: np.ndarray,
        ok: np.ndarray,
        values: np.ndarray,
        problems: Problems,
        options: ScoringOptions,
    ) -> None:
        """Report the target lines whose number (``values[ok]``) this task refuses; the
        default refuses none (any number is a target)."""
        return None

    def resolve_options(self, source, options: ScoringOptions, *, path: str) -> ScoringOptions:
        """The options with what the prediction file itself decides filled in, before any
        file is read (the multiclass L from the first line when it is not given); the
        default changes nothing. Never raises for a bad file: its reader reports it."""
        return options

    def read_fast(self, source, n: int, options: ScoringOptions) -> Any | None:
        """A valid prediction file of ``n`` rows read in one pass, or None when it needs
        :meth:`read` (and its messages). None unless the task has such a path."""
        return None

    @abstractmethod
    def read(
        self, source, *, path: str, targets: np.ndarray, options: ScoringOptions, reader: RowReader
    ) -> Any:
        """The validated predictions, as :meth:`context` takes them, or ScoringError with
        every problem. ``reader`` is the file's reader (it may hold the blocks that task
        inference read)."""

    @abstractmethod
    def check(
        self,
        source,
        *,
        path: str,
        options: ScoringOptions | None,
        n_expected: int | None,
        reader: RowReader,
    ) -> None:
        """Validate a prediction file without targets (the upload check): every check of
        :meth:`read` that needs no target, the row count if ``n_expected`` is given;
        raises ScoringError. Problems go to ``reader.problems``."""

    # --- Scoring ---------------------------------------------------------------------

    @abstractmethod
    def context(
        self,
        targets: np.ndarray,
        options: ScoringOptions,
        train_targets: np.ndarray | None,
        prediction: Any,
    ) -> Context:
        """What this task's losses are computed from."""

    @abstractmethod
    def baseline(
        self, train_targets: np.ndarray, targets: np.ndarray, options: ScoringOptions
    ) -> Context:
        """The input-independent baseline of spec §3 for ``targets``."""

    def reported(self, ctx: Context) -> dict[str, float]:
        """Values reported beside the losses but not ranked, by name (the multiclass
        ensembles' tu, du and mi); the default reports none."""
        return {}

    def ahead(self, ctx: Context) -> list[Callable[[], object]]:
        """Memoised steps of this task's losses (each a call of ``ctx.memo``) worth
        starting on a second thread while the losses are computed in order
        (scoring.losses.compute_scores): a large file's independent work, such as the
        retention's sort beside the calibration kernels. The default starts none."""
        return []

    def retention_inputs(self, ctx: Context) -> tuple | None:
        """What spec §8's retention orders (scoring.selective): ``(errors, keys,
        ascending)``, the n errors e_i ≥ 0, the keys ordering the examples from the most to
        the least certain (n values, or n × m compared column by column) and whether that
        order is by keys ascending; optionally a fourth item, the power of two whose square
        is the errors' unit (scoring.selective.squared). None: the task has no retention
        (no rauc, no aurc)."""
        return None

    @abstractmethod
    def is_point(self, ctx: Context) -> bool:
        """A non-probabilistic file (spec §3): only its point losses are reported."""

    @abstractmethod
    def certain(self, ctx: Context) -> int:
        """How many examples the predictions claim certainty on (:mod:`scoring.certainty`):
        their predictive distribution gives some outcome probability 0 (a binary p of 0 or
        1, a class of probability 0, a zero variance). From the predictions alone."""

    @abstractmethod
    def subset(self, ctx: Context, mask: np.ndarray) -> Context:
        """The context of the examples where ``mask`` is True alone."""

    @abstractmethod
    def plot_data(self, ctx: Context) -> dict:
        """What the site draws and explains for one file, JSON-ready but for non-finite
        floats. Its keys say what it is: the site draws by them."""

    @abstractmethod
    def probe_values(self, ctx: Context) -> np.ndarray:
        """One row per example of what its prediction is, for finding a file that is
        constant but for a few rows (scoring.probing); NaN compares equal to NaN."""

    # --- Texts ------------------------------------------------------------------------

    @abstractmethod
    def format_help(self, options: ScoringOptions) -> list[str]:
        """The prediction format as plain-text paragraphs (scoring.tasks.text), for the
        README of a dataset's zip, given the dataset's options."""


TASKS: dict[str, TaskSpec] = {}


def register_task(spec: TaskSpec) -> TaskSpec:
    """Add a task; returns it. Its losses are registered after it, with its name."""
    name = str(spec.name)
    if name in TASKS:
        raise ValueError(f"a task named {name!r} is already registered")
    if spec.inference is not None and spec.inference.fallback:
        taken = [other.name for other in TASKS.values() if _is_fallback(other)]
        if taken:
            raise ValueError(f"{taken[0]} is already the task inferred when no other fits")
    TASKS[name] = spec
    return spec


def get_task(name: str | TaskSpec) -> TaskSpec:
    """The task of that name; ValueError naming the tasks if there is none."""
    if isinstance(name, TaskSpec):
        return name
    spec = TASKS.get(str(name)) if isinstance(name, str) else None
    if spec is None:
        raise ValueError(f"{name!r} is not a task; the tasks are {', '.join(TASKS)}")
    return spec


def inferable() -> list[TaskSpec]:
    """The tasks :func:`scoring.evaluate` may infer, in the order it tries them: those
    with conditions in the order of registration, then the fallback."""
    tasks = [spec for spec in TASKS.values() if spec.inference is not None]
    return sorted(tasks, key=_is_fallback)


def all_settings() -> tuple[str, ...]:
    """Every task's own settings, each once, in the order of registration."""
    return tuple(dict.fromkeys(name for spec in TASKS.values() for name in spec.settings))


def _is_fallback(spec: TaskSpec) -> bool:
    return spec.inference is not None and spec.inference.fallback
