"""Losses from other packages (spec §9): the entry-point group ``scoring.losses``.

An installed distribution names, in that group, callables taking no argument; each calls
:func:`register_loss` once per loss. They are loaded once, when the scoring package is
imported (scoring/__init__.py, after the built-in losses), so that the command line, the
web processes and the workers all see the same registry; a plug-in that fails to load or
whose loss clashes with another stops that import, naming its distribution and entry
point (:class:`PluginError`): a site must not start with a loss missing from some of its
processes.

A plug-in loss is an ordinary :class:`scoring.losses.Loss` whose terms come from the
plug-in's ``terms(view)`` and whose value is their mean: it is scored, stored, ranked,
given intervals and printed like a built-in one. The plug-in sees a read-only
:class:`View` of the predictions, never the parsed file itself, and its terms are checked
(n float64 values, +inf allowed, never NaN): a wrong answer is our error naming the
plug-in, never a participant's.
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from importlib import metadata

import numpy as np

from .losses import LOSSES, Context, Loss, register
from .taskspec import TASKS, get_task

GROUP = "scoring.losses"
NAME = re.compile(r"[a-z][a-z0-9_]{0,31}")


class PluginError(Exception):
    """A plug-in failed to load or clashed; the message names its distribution and entry
    point."""


@dataclass(frozen=True)
class Origin:
    """Where a plug-in loss comes from: a distribution's entry point (or, registered
    outside any entry point, e.g. by a script, ``distribution`` and ``entry_point``
    empty)."""

    distribution: str
    entry_point: str

    def __str__(self) -> str:
        if not self.entry_point:
            return "a register_loss call outside any plug-in"
        return f"plug-in {self.entry_point!r} of distribution {self.distribution!r}"


# Every plug-in loss, keyed (task, name) like scoring.losses.LOSSES.
PLUGINS: dict[tuple[str, str], Origin] = {}
_NOWHERE = Origin("", "")
_loading: Origin = _NOWHERE  # the entry point being loaded (its register_loss calls)


def _read_only(array: np.ndarray) -> np.ndarray:
    view = np.asarray(array).view()
    view.flags.writeable = False  # the view only: the context's own array is untouched
    return view


class View:
    """What a plug-in's ``terms(view)`` reads (spec §9), read-only.

    ``targets``: ±1, class indices or real targets, as float64 (n,). Binary
    classification: ``p``, p(y = +1) (n,). Multiclass: ``probs`` (n × L, each row
    normalised and the members of an ensemble averaged, spec §7). Regression: ``mean``
    (§3's m_i), ``cdf(x)`` (F_i(x_i) for n values x) and ``quantile(alpha)`` (each row at
    level alpha as §8 reads it). A field of another task raises AttributeError.
    """

    def __init__(self, ctx: Context):
        self._ctx = ctx

    @property
    def n(self) -> int:
        return int(self._ctx.targets.size)

    @property
    def targets(self) -> np.ndarray:
        return _read_only(np.asarray(self._ctx.targets, dtype=np.float64))

    @property
    def p(self) -> np.ndarray:
        return _read_only(self._need("p", self._ctx.p))

    @property
    def probs(self) -> np.ndarray:
        rows = self._ctx.multiclass
        return _read_only(self._need("probs", None if rows is None else rows.probs))

    @property
    def mean(self) -> np.ndarray:
        rows = self._regression("mean")
        return _read_only(rows.stats.mean)

    def cdf(self, x) -> np.ndarray:
        """F_i(x_i), i = 1 … n (spec §2 for quantile rows; a sample's empirical CDF)."""
        rows = self._regression("cdf")
        x = np.asarray(x, dtype=np.float64)
        if x.shape != (self.n,):
            raise ValueError(f"cdf takes {self.n} values, one per example; got shape {x.shape}")
        return _read_only(np.asarray(rows.cdf(x), dtype=np.float64))

    def quantile(self, alpha: float) -> np.ndarray:
        """Each row's quantile at level ``alpha`` in (0, 1), as spec §8 reads every row."""
        rows = self._regression("quantile")
        alpha = float(alpha)
        if not 0.0 < alpha < 1.0:
            raise ValueError(f"a quantile level is in (0, 1), found {alpha!r}")
        return _read_only(np.asarray(rows.quantiles([alpha]), dtype=np.float64)[:, 0])

    def _need(self, field: str, value):
        if value is None:
            raise AttributeError(f"a {self._ctx.task} file has no {field!r}")
        return value

    def _regression(self, field: str):
        return self._need(field, self._ctx.rows)


def checked_terms(terms, n: int, *, name: str, origin: Origin) -> np.ndarray:
    """``terms`` as n float64 values, +inf allowed; ValueError naming the plug-in when
    they are not (a wrong shape, NaN, −inf): a fault of the plug-in, not of the file."""
    where = f"loss {name!r} ({origin})"
    try:
        values = np.asarray(terms, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{where}: terms(view) did not return numbers: {error}") from None
    if values.shape != (n,):
        raise ValueError(f"{where}: terms(view) returned shape {values.shape}, expected ({n},)")
    bad = np.isnan(values) | (values == -np.inf)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{where}: terms(view) returned {values[i]} for example {i + 1}")
    return values


def mean_of(terms: np.ndarray) -> float:
    """The mean of the terms, correctly rounded sum first (math.fsum: terms of both signs,
    e.g. log densities, may cancel), +inf if any term is."""
    n = terms.size
    if n and terms.min() >= 0:  # (no cancellation: numpy's pairwise sum, ~log2(n) ulps)
        with np.errstate(over="ignore"):
            total = float(np.sum(terms))
        return total / n if math.isfinite(total) or np.isinf(terms).any() else _sum_of_shares(terms)
    values = terms.tolist()  # (fsum of a list: several times quicker than of an array)
    try:
        return math.fsum(values) / n
    except OverflowError:  # finite terms whose sum exceeds the largest double
        return _sum_of_shares(terms)


def _sum_of_shares(terms: np.ndarray) -> float:
    return math.fsum((terms / terms.size).tolist())


def register_loss(
    name: str,
    *,
    task: str,
    title: str,
    reference: str,
    terms: Callable[[View], object],
    probabilistic: bool = True,
) -> Loss:
    """Register a plug-in loss (spec §9): the mean of ``terms(view)``, lower is better.

    Parameters
    ----------
    name : str
        ``[a-z][a-z0-9_]{0,31}``, used by no built-in loss of any task and no other
        plug-in's loss.
    task : str
        A registered task's name: "classification", "multiclass" or "regression".
    title, reference : str
        Shown on the evaluation tab.
    terms : callable
        ``terms(view)`` → n per-example terms (float64, +inf allowed, never NaN) from a
        read-only :class:`View`.
    probabilistic : bool
        n/a for a non-probabilistic file (spec §3) when True.

    Returns the registered :class:`scoring.losses.Loss`; ValueError when an argument is
    wrong or the name is taken (a :class:`PluginError` naming the entry point when
    raised while plug-ins load).
    """
    origin = _loading
    if not isinstance(name, str) or not NAME.fullmatch(name):
        raise ValueError(f"a loss name matches [a-z][a-z0-9_]{{0,31}}, found {name!r}")
    if not isinstance(task, str) or task not in TASKS:
        raise ValueError(f"task must be one of {', '.join(TASKS)}, found {task!r}")
    for label, text in (("title", title), ("reference", reference)):
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"loss {name!r}: {label} must be a non-empty string")
    if not callable(terms):
        raise ValueError(f"loss {name!r}: terms must be callable, found {terms!r}")
    _check_clash(name, get_task(task).name, origin)

    def plugin_terms(ctx: Context) -> np.ndarray:
        def compute():
            return checked_terms(terms(View(ctx)), ctx.targets.size, name=name, origin=origin)

        return ctx.memo(f"plugin:{name}", compute)

    loss = register(
        name=name,
        title=title,
        task=task,
        probabilistic=bool(probabilistic),
        compute=lambda ctx: mean_of(plugin_terms(ctx)),
        terms=plugin_terms,
        ahead=True,  # (memoised: on a large file, computed beside the built-in losses)
        reference=reference,
        description=f"The mean of per-example terms from {origin}.",
    )
    PLUGINS[(loss.task, loss.name)] = origin
    return loss


def _check_clash(name: str, task: str, origin: Origin) -> None:
    for (other_task, other_name), loss in LOSSES.items():
        if other_name != name:
            continue
        other = PLUGINS.get((other_task, other_name))
        if other is None:
            raise ValueError(f"loss {name!r} clashes with the built-in {loss.task} loss {name!r}")
        if other != origin or other_task == task:
            raise ValueError(f"loss {name!r} clashes with the {other_task} loss of {other}")


def is_plugin(loss: Loss) -> bool:
    return (loss.task, loss.name) in PLUGINS


def origin_of(loss: Loss) -> Origin | None:
    """Where a plug-in loss comes from; None for a built-in one."""
    return PLUGINS.get((loss.task, loss.name))


def load(entry_points: Iterable[metadata.EntryPoint]) -> list[Loss]:
    """Load each entry point (sorted by distribution and name, so that every process
    registers in one order) and call it; returns the losses registered.

    PluginError naming the distribution and entry point when one fails to import, raises
    or registers a clashing loss; that plug-in's losses are then removed again.
    """
    global _loading
    added: list[Loss] = []
    for entry in sorted(entry_points, key=lambda e: (_distribution(e), e.name)):
        origin = Origin(_distribution(entry), entry.name)
        before = set(LOSSES)
        _loading = origin
        try:
            entry.load()()
        except Exception as error:
            for key in set(LOSSES) - before:
                del LOSSES[key]
                PLUGINS.pop(key, None)
            raise PluginError(
                f"{origin} ({entry.value}) failed to load: {type(error).__name__}: {error}"
            ) from error
        finally:
            _loading = _NOWHERE
        added += [LOSSES[key] for key in LOSSES if key not in before]
    return added


def installed() -> list[metadata.EntryPoint]:
    """The entry points of the installed distributions in the group ``scoring.losses``."""
    return list(metadata.entry_points(group=GROUP))


def load_installed() -> list[Loss]:
    """:func:`load` on :func:`installed`, at the scoring package's import. A failure is
    uncaught there and ends the process (the site's start, the command line): it is then
    printed as its message alone, not a traceback through the import machinery."""
    try:
        return load(installed())
    except PluginError:
        previous = sys.excepthook

        def hook(kind, value, traceback):
            if isinstance(value, PluginError):
                print(f"scoring: {value}", file=sys.stderr)
            else:
                previous(kind, value, traceback)

        sys.excepthook = hook
        raise


def _distribution(entry: metadata.EntryPoint) -> str:
    dist = getattr(entry, "dist", None)
    return dist.name if dist is not None else "?"
