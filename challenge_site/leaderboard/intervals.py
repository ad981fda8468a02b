"""The bootstrap intervals of one dataset split (scoring.md §5), computed and stored.

For every loss with per-example terms (not lift, ece, rmsce, sce, ace) and every entry the
leaderboard lists under it (baseline included): the 95 % interval of its score, the
intervals of its difference to the leader and to the baseline, whether it is
indistinguishable from the leader, and, among each participant's best entries, its rank
interval. They are written on the entries' Score rows, so pages read them with the
scores. interval_runs.py says when this runs.

Each entry's losses on the B resamples are kept in one private file per split, keyed by
the entry's terms file: a run resamples only the entries it has not seen (a new or
rescored entry), which keeps a split of thousands of entries within seconds.
"""

import hashlib
import io
import logging
import math
import secrets
from dataclasses import dataclass

import numpy as np
from django.core.files.base import File
from django.db import transaction

import scoring
from challenge_site.submissions import terms as stored_terms
from challenge_site.submissions.evaluation import scored_targets
from challenge_site.submissions.models import Score, SplitResult
from challenge_site.submissions.storage import private_storage
from datasets.models import Dataset, Split
from scoring import bootstrap

from . import queries
from .models import IntervalRun
from .queries import Board

logger = logging.getLogger(__name__)

FOLDER = "intervals"
# Entries resampled together: at most this many float64 terms in memory at once.
CHUNK_VALUES = 8_000_000
FIELDS = queries.INTERVAL_FIELDS  # the Score columns a run writes
EMPTY = dict.fromkeys(FIELDS)


@dataclass(frozen=True)
class Summary:
    entries: int  # entries with at least one interval
    resampled: str  # the file of resampled losses now in use
    updated: int  # Score rows written


def interval_losses(task: str) -> list[scoring.Loss]:
    """The task's losses that get intervals: those with per-example terms."""
    return [loss for loss in scoring.losses_for(task) if loss.terms is not None]


def seed_for(dataset: Dataset, split: str) -> int:
    """The fixed seed of a (dataset, split)'s resamples."""
    digest = hashlib.sha256(f"intervals:{dataset.pk}:{split}".encode()).digest()
    return int.from_bytes(digest[:8], "little")


# --- The resampled losses, kept between runs ----------------------------------------


@dataclass
class Resampled:
    """Each entry's losses on the resamples, by its terms file name."""

    n: int
    seed: int
    rows: dict[str, dict[str, np.ndarray | None]]  # terms name → loss → (B,) or None


def _load_resampled(name: str, *, n: int, seed: int) -> Resampled:
    empty = Resampled(n, seed, {})
    if not name:
        return empty
    try:
        with private_storage().open(name, "rb") as handle:
            data = handle.read()
        with np.load(io.BytesIO(data), allow_pickle=False) as archive:
            if int(archive["n"]) != n or int(archive["seed"]) != seed:
                return empty
            names = [str(item) for item in archive["names"]]
            matrices = {
                key.removeprefix("loss_"): archive[key]
                for key in archive.files
                if key.startswith("loss_")
            }
    except (OSError, ValueError, KeyError):
        logger.warning("resampled losses %s unreadable; resampling every entry", name)
        return empty
    rows = {}
    for i, terms_name in enumerate(names):
        rows[terms_name] = {
            loss: None if np.isnan(matrix[i]).all() else matrix[i]
            for loss, matrix in matrices.items()
        }
    return Resampled(n, seed, rows)


def _save_resampled(dataset: Dataset, split: str, resampled: Resampled, losses) -> str:
    names = sorted(resampled.rows)
    arrays = {
        "names": np.array(names, dtype=str),
        "n": np.array(resampled.n),
        "seed": np.array(resampled.seed, dtype=np.uint64),
    }
    for loss in losses:
        matrix = np.full((len(names), bootstrap.RESAMPLES), np.nan)
        for i, name in enumerate(names):
            row = resampled.rows[name].get(loss.name)
            if row is not None:
                matrix[i] = row
        arrays[f"loss_{loss.name}"] = matrix
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    buffer.seek(0)
    name = f"{FOLDER}/{dataset.pk}-{split}-{secrets.token_hex(8)}.npz"
    return private_storage().save(name, File(buffer))


def delete_resampled(name: str) -> None:
    if name:
        private_storage().delete(name)


class _Targets:
    """The split's targets (and the nmse variance), read only if an entry needs them."""

    def __init__(self, dataset: Dataset, split: str):
        self.dataset, self.split = dataset, split
        self._read = None

    def nmse_arguments(self) -> dict:
        if self._read is None:
            targets = scored_targets(self.dataset, self.split)
            if self.dataset.nmse_normaliser == scoring.NmseNormaliser.TRAINING:
                train = targets[Split.TRAIN]
                self._read = {"variance": float(np.var(train - train[0]))}
            else:
                self._read = {"targets": targets[self.split]}
        return self._read


def _resample_new(names: list[str], losses, *, n: int, seed: int, targets: _Targets) -> dict:
    """Resampled losses of the entries ``names`` (terms files), a chunk at a time."""
    out: dict[str, dict[str, np.ndarray | None]] = {}
    per_entry = n * max(len(losses), 1)
    chunk = max(1, CHUNK_VALUES // per_entry)
    for start in range(0, len(names), chunk):
        part = names[start : start + chunk]
        loaded = {name: stored_terms.load(name) for name in part}
        means, squared = {}, {}
        for loss in losses:
            have = [name for name in part if loss.terms_key in loaded[name]]
            if not have:
                continue
            matrix = np.stack([loaded[name][loss.terms_key] for name in have], axis=1)
            if matrix.shape[0] != n:
                raise ValueError(f"terms of {have[0]} hold {matrix.shape[0]} examples, not {n}")
            (means if loss.terms_key == loss.name else squared)[loss.name] = (have, matrix)
        extra = targets.nmse_arguments() if squared else {}
        values = bootstrap.resample(
            {loss: matrix for loss, (_, matrix) in means.items()},
            squared_errors={loss: matrix for loss, (_, matrix) in squared.items()},
            seed=seed,
            **extra,
        )
        for name in part:
            out[name] = dict.fromkeys((loss.name for loss in losses), None)
        for loss, (have, _) in [*means.items(), *squared.items()]:
            for i, name in enumerate(have):
                out[name][loss] = values[loss][i]
    return out


# --- One loss's numbers ----------------------------------------------------------------


def _pair(interval) -> tuple[float | None, float | None]:
    lower, upper = (float(value) for value in interval)
    if math.isnan(lower) or math.isnan(upper):
        return None, None
    return lower, upper


def _loss_fields(
    loss: scoring.Loss,
    *,
    ranked: list[int],
    best: list[int],
    baseline_id: int | None,
    vectors: dict[int, np.ndarray],
) -> dict[int, dict]:
    """Submission id → the interval fields of its Score row under ``loss``."""
    listed = [pk for pk in ranked if pk in vectors]
    if not listed:
        return {}
    matrix = np.stack([vectors[pk] for pk in listed])
    own = bootstrap.intervals(matrix)
    fields = {pk: dict(EMPTY) for pk in listed}
    for i, pk in enumerate(listed):
        fields[pk]["lower"], fields[pk]["upper"] = _pair(own[i])
    # The leader is rank 1 of the board: the first ranked entry, if it has resamples.
    if ranked[0] in vectors:
        lead = bootstrap.intervals(bootstrap.differences(matrix, vectors[ranked[0]]))
        tied = bootstrap.contains_zero(lead)
        for i, pk in enumerate(listed):
            fields[pk]["leader_lower"], fields[pk]["leader_upper"] = _pair(lead[i])
            if fields[pk]["leader_lower"] is not None:
                fields[pk]["tied_with_leader"] = bool(tied[i])
    if baseline_id in vectors:
        against = bootstrap.intervals(bootstrap.differences(matrix, vectors[baseline_id]))
        for i, pk in enumerate(listed):
            fields[pk]["baseline_lower"], fields[pk]["baseline_upper"] = _pair(against[i])
    ranked_best = [pk for pk in best if pk in vectors and pk != baseline_id]
    if ranked_best:
        ranks = bootstrap.rank_intervals(np.stack([vectors[pk] for pk in ranked_best]))
        for (lower, upper), pk in zip(ranks, ranked_best, strict=True):
            fields[pk]["rank_lower"], fields[pk]["rank_upper"] = int(lower), int(upper)
    return fields


# --- A run -----------------------------------------------------------------------------


def compute_and_store(*, dataset_id: int, split: str) -> Summary:
    """Compute every interval of the split and write the Score rows that changed."""
    dataset = Dataset.objects.select_related("challenge").get(pk=dataset_id)
    losses = interval_losses(dataset.task)
    state = IntervalRun.objects.filter(dataset=dataset, split=split).first()
    previous_file = state.resampled if state else ""
    boards = {}
    for loss in losses:
        ranked = list(queries.ranking(Board(dataset, split, loss), paged=False))
        best = list(queries.ranking(Board(dataset, split, loss, best=True), paged=False))
        boards[loss.name] = (ranked, best)
    ids = {pk for ranked, _ in boards.values() for pk in ranked}
    results = dict(
        SplitResult.objects.filter(submission_id__in=ids, split=split)
        .exclude(terms="")
        .values_list("submission_id", "terms")
    )
    rows = dict(
        SplitResult.objects.filter(submission_id__in=ids, split=split).values_list(
            "submission_id", "rows"
        )
    )
    n = max(rows.values(), default=0)
    seed = seed_for(dataset, split)
    resampled = _load_resampled(previous_file, n=n, seed=seed)
    if n and results:
        names = set(results.values())
        new = sorted(names - set(resampled.rows))
        if new:
            targets = _Targets(dataset, split)
            resampled.rows.update(_resample_new(new, losses, n=n, seed=seed, targets=targets))
        gone = set(resampled.rows) - names
        for name in gone:
            del resampled.rows[name]
        changed = bool(new or gone)
    else:
        changed = bool(resampled.rows)
        resampled.rows.clear()
    baseline_id = next(
        iter(
            Score.objects.filter(
                dataset=dataset, split=split, submission__is_baseline=True
            ).values_list("submission_id", flat=True)
        ),
        None,
    )

    wanted: dict[tuple[int, str], dict] = {}
    for loss in losses:
        ranked, best = boards[loss.name]
        vectors = {
            pk: row
            for pk in ranked
            if pk in results and (row := resampled.rows[results[pk]].get(loss.name)) is not None
        }
        for pk, fields in _loss_fields(
            loss, ranked=ranked, best=best, baseline_id=baseline_id, vectors=vectors
        ).items():
            wanted[(pk, loss.name)] = fields
    resampled_name = previous_file
    if changed or not previous_file:
        resampled_name = (
            _save_resampled(dataset, split, resampled, losses) if resampled.rows else ""
        )
    try:
        updated = _write(dataset, split, losses, wanted=wanted, used=results)
    except BaseException:
        if resampled_name != previous_file:
            delete_resampled(resampled_name)
        raise
    entries = len({pk for pk, _ in wanted})
    return Summary(entries=entries, resampled=resampled_name, updated=updated)


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    return a == b


def _write(dataset, split, losses, *, wanted: dict, used: dict[int, str]) -> int:
    """Write the changed Score rows, leaving alone the entries rescored meanwhile (their
    new rows are empty, and their run asks for intervals again)."""
    with transaction.atomic():
        current = dict(
            SplitResult.objects.filter(submission__dataset=dataset, split=split)
            .exclude(terms="")
            .values_list("submission_id", "terms")
        )
        scores = Score.objects.filter(
            dataset=dataset, split=split, loss__in=[loss.name for loss in losses]
        ).values_list("pk", "submission_id", "loss", *FIELDS)
        changed = []
        for pk, submission_id, loss, *values in scores:
            fields = wanted.get((submission_id, loss), EMPTY)
            if fields is not EMPTY and current.get(submission_id) != used.get(submission_id):
                continue
            if all(_same(old, fields[name]) for old, name in zip(values, FIELDS, strict=True)):
                continue
            changed.append(Score(pk=pk, **fields))
        Score.objects.bulk_update(changed, FIELDS, batch_size=500)
    return len(changed)
