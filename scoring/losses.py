"""The loss registry: everything the site needs to show, sort and explain a loss.

The site builds its leaderboard columns from :data:`LOSSES` (keyed ``(task, name)``:
read it through :func:`losses_for`, :func:`get_loss` and :func:`find_loss`); a loss added here
(with :func:`register`) is computed for every new submission and, after a
rescore, for every earlier one, with no change to the site. Each task's module
(scoring.tasks) registers its own losses.
"""

from __future__ import annotations

import functools
import math
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor, wait
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .multiclass_rows import ClassRows
from .options import ScoringOptions
from .parse import RegressionRows
from .taskspec import TaskSpec, get_task


@dataclass
class Context:
    """What a loss is computed from: targets, options and the parsed predictions, in the
    field of the task's kind (its TaskSpec.context fills it)."""

    task: str
    targets: np.ndarray
    options: ScoringOptions
    train_targets: np.ndarray | None = None
    p: np.ndarray | None = None  # binary classification: p(y = +1) per example
    rows: RegressionRows | None = None  # regression: per-example statistics
    multiclass: ClassRows | None = None  # multiclass: probabilities per example
    # A part of a file (a slice, the test's public or private part) is non-probabilistic
    # when the whole file is (spec §3, §7: decided on the whole file, never per part): the
    # whole file's decision, or None to decide on these examples.
    point: bool | None = None
    _memo: dict[str, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    @property
    def spec(self) -> TaskSpec:
        return get_task(self.task)

    @property
    def is_point(self) -> bool:
        return self.spec.is_point(self) if self.point is None else self.point

    def memo(self, key: str, compute: Callable[[], Any]) -> Any:
        """``compute()``, once per context: sums that several of a task's losses share.
        Safe from several threads (:func:`compute_scores` computes some ahead): the first
        caller computes, the others wait for its value."""
        entry = self._memo.get(key)
        if entry is None:
            entry = self._memo.setdefault(key, _Once(compute))  # (atomic: one entry wins)
        return entry.value()


class _Once:
    """A memo entry: computed by the first thread that asks (again by the next one if that
    raised, as before), waited for by the others."""

    def __init__(self, compute: Callable[[], Any]):
        self._compute = compute
        self._lock = threading.Lock()
        self._done = False
        self._value: Any = None

    def value(self) -> Any:
        if not self._done:
            with self._lock:
                if not self._done:
                    self._value = self._compute()
                    self._done = True
                    self._compute = None
        return self._value


Terms = Callable[[Context], np.ndarray | None]


@dataclass(frozen=True, kw_only=True)
class Loss:
    """A loss: lower is better. Everything the site needs to show, sort and explain it.

    name, title, task: how it is named and which files it scores.
    probabilistic: n/a for a non-probabilistic file (spec §3); False for 01l and nmse.
    compute: the value from a :class:`Context`: a float (maybe inf) or None (n/a).
    terms: the per-example terms (float64, one per example) behind the value, or None
        when there are none (n/a); ``terms_key`` names them in :func:`compute_terms`
        (default ``name``). When ``terms_key == name`` the value is the mean of the terms;
        nmse's terms are the squared errors ``se``, whose mean over var(t) is nmse.
    legacy_number: the 2006 challenge's evaluate.py loss_type (1-4), if any.
    log_scale: an average of −log p (nlp, nlpd): a difference of two values is
        information, in the dataset's log base.
    default_ranking: ranks a dataset of its task that names no ranking loss.
    reference, description: where it comes from and what it measures, for the site.
    applies: whether the loss exists under a dataset's options (``wis`` only with quantile
        levels, spec §8); None: always. A loss that does not apply is neither computed,
        nor stored, nor shown (:func:`losses_for` with options).
    ahead: its (memoised) terms join the task's work ahead on a large file
        (:meth:`TaskSpec.ahead`), computed on the second thread while the losses before
        it run: a plug-in's terms, its own pass over the n rows.
    """

    name: str
    title: str
    task: str
    probabilistic: bool
    compute: Callable[[Context], float | None] = field(repr=False)
    terms: Terms | None = field(default=None, repr=False)
    terms_key: str = ""
    legacy_number: int | None = None
    log_scale: bool = False
    default_ranking: bool = False
    reference: str = ""
    description: str = ""
    applies: Callable[[ScoringOptions], bool] | None = field(default=None, repr=False)
    ahead: bool = False

    def applies_under(self, options: ScoringOptions | None) -> bool:
        """Whether the loss applies under ``options`` (None: any options, so every loss)."""
        return options is None or self.applies is None or bool(self.applies(options))

    def __post_init__(self):
        object.__setattr__(self, "task", get_task(self.task).name)
        if self.terms is not None and not self.terms_key:
            object.__setattr__(self, "terms_key", self.name)


# Keyed (task, name): two tasks may each have a loss of the same name (binary and
# multiclass both have nlp, brier, 01l and ece), and they are different losses.
LOSSES: dict[tuple[str, str], Loss] = {}


def register(**fields) -> Loss:
    """Add a loss, given by the keyword arguments of :class:`Loss`; returns it.

    A name is unique within its task; a legacy number (the 2006 challenge's, meaning one
    loss of one task) is unique over every task.
    """
    loss = Loss(**fields)
    if (loss.task, loss.name) in LOSSES:
        raise ValueError(f"the {loss.task} task already has a loss named {loss.name!r}")
    same_task = losses_for(loss.task)
    if loss.legacy_number is not None and by_legacy_number(loss.legacy_number) is not None:
        raise ValueError(f"legacy number {loss.legacy_number} is already registered")
    if loss.default_ranking and any(other.default_ranking for other in same_task):
        raise ValueError(f"the {loss.task} task already has a default ranking loss")
    if loss.terms is not None and any(
        other.terms is not None and other.terms_key == loss.terms_key for other in same_task
    ):
        raise ValueError(f"terms named {loss.terms_key!r} are already registered")
    LOSSES[(loss.task, loss.name)] = loss
    return loss


def find_loss(task: str, name: str) -> Loss | None:
    """The ``task``'s loss named ``name``, or None when it has none (ValueError for an
    unknown task)."""
    return LOSSES.get((get_task(task).name, name))


def get_loss(task: str, name: str) -> Loss:
    """The ``task``'s loss named ``name``; ValueError naming the task's losses if none."""
    loss = find_loss(task, name)
    if loss is None:
        spec = get_task(task)
        names = ", ".join(other.name for other in losses_for(spec.name)) or "none"
        raise ValueError(f"the {spec.name} task has no loss {name!r}; its losses are {names}")
    return loss


def loss_names() -> list[str]:
    """Every distinct loss name of every task, in the order of registration."""
    return list(dict.fromkeys(name for _, name in LOSSES))


def losses_for(task: str, options: ScoringOptions | None = None) -> list[Loss]:
    """The task's losses in display order: those that apply under ``options`` (a dataset's
    scoring options: ``wis`` only with quantile levels), or every one when it is None."""
    name = get_task(task).name
    return [loss for loss in LOSSES.values() if loss.task == name and loss.applies_under(options)]


def by_legacy_number(number: int) -> Loss | None:
    """The loss the 2006 challenge's evaluate.py numbered ``number`` (1-4), if any."""
    return next((loss for loss in LOSSES.values() if loss.legacy_number == number), None)


def default_ranking_loss(task: str) -> Loss:
    """The loss that ranks a dataset of ``task`` naming none (nlp, nlpd): the one registered
    with ``default_ranking=True``, else the task's first."""
    losses = losses_for(task)
    return next((loss for loss in losses if loss.default_ranking), losses[0])


# The paper both built-in tasks' losses come from (their modules register them).
PAPER = "Quiñonero-Candela et al., Evaluating Predictive Uncertainty Challenge (2006)"


def compute_scores(ctx: Context) -> dict[str, float | None]:
    """Every loss of the task that applies under the context's options; probabilistic ones
    are n/a for a non-probabilistic file."""
    point = ctx.is_point
    scores: dict[str, float | None] = {}
    losses = losses_for(ctx.task, ctx.options)
    work = [] if point else ctx.spec.ahead(ctx)
    if work:  # (a file the task works ahead on: the terms that may join it too)
        work += [functools.partial(loss.terms, ctx) for loss in losses if loss.ahead]
    with _ahead(work):
        for loss in losses:
            value = None if point and loss.probabilistic else loss.compute(ctx)
            scores[loss.name] = None if value is None else float(value)
    return scores


@contextmanager
def _ahead(work: list[Callable[[], object]]) -> Iterator[None]:
    """Runs ``work`` (memoised steps of the task's losses, TaskSpec.ahead) on a second
    thread while the block computes the losses in order; a loss that needs one of them
    waits for it (Context.memo), or computes it itself if it has not started. Their errors
    are left to the loss that needs them (raised there, as before); one that no loss asks
    for is dropped."""
    if not work:
        yield
        return
    try:
        pool = ThreadPoolExecutor(1)
        futures = [pool.submit(step) for step in work]
    except RuntimeError:  # ("can't start new thread", near a process's limits)
        yield
        return
    try:
        yield
    finally:
        wait(futures)
        pool.shutdown()


def compute_terms(ctx: Context) -> dict[str, np.ndarray | None]:
    """The per-example terms of every loss of the task that has them and applies under the
    context's options, by ``terms_key``.

    Each is a float64 array of one term per example, or None where the loss is n/a by
    the rules of :func:`compute_scores` (a non-probabilistic file) or has no terms (nlpd
    of a file with sample rows).
    """
    point = ctx.is_point
    out: dict[str, np.ndarray | None] = {}
    for loss in losses_for(ctx.task, ctx.options):
        if loss.terms is None:
            continue
        terms = None if point and loss.probabilistic else loss.terms(ctx)
        out[loss.terms_key] = None if terms is None else np.asarray(terms, dtype=np.float64)
    return out


def format_value(value: float | None) -> str:
    """As the command line prints it: repr precision, ``inf``, ``n/a``; a zero ``0.0``,
    never ``-0.0`` (spec §4: a loss computed as −0.0, e.g. −(0/n), is zero)."""
    if value is None:
        return "n/a"
    if value == 0:
        return "0.0"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return repr(float(value))
