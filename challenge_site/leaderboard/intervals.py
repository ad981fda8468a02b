"""The bootstrap intervals of one dataset split (scoring.md §5), computed and stored.

For every loss with per-example terms (not lift, ece, rmsce, sce, ace) and every entry the
leaderboard lists under it (baseline included): the 95 % interval of its score, the
intervals of its difference to the leader and to the baseline, whether it is
indistinguishable from the leader, and, among each participant's best entries, its rank
interval. They are written on the entries' Score rows, so pages read them with the
scores. interval_runs.py says when this runs.

Each entry's losses on the B resamples are kept in one private file per split, keyed by
the entry's terms file: a run resamples only the entries it has not seen (a new or
rescored entry), which keeps a split of thousands of entries within seconds. Next to
them the file keeps the tail index of each entry's terms (scoring.tails): an interval
whose terms look heavy-tailed, where the percentile bootstrap may be too narrow, is
marked (Score.heavy_tail, leader_heavy_tail, baseline_heavy_tail).

A split labelled with slices (scoring.md §8) gets the same numbers for every slice, on
the Score rows ``LOSS@SLICE``: each slice is resampled on its own (its examples only,
from its own fixed seed, nmse over the variance of the slice's resampled targets), and
its leader, baseline and rank intervals are those of the slice's boards.
"""

import hashlib
import logging
import math
from dataclasses import dataclass, replace

import numpy as np
from django.contrib.auth.models import AnonymousUser
from django.db import transaction

import scoring
from challenge_site.challenges import policy
from challenge_site.submissions import terms as stored_terms
from challenge_site.submissions.evaluation import scored_targets
from challenge_site.submissions.models import Score, SplitResult
from datasets.models import Dataset, Split
from scoring import bootstrap, tails

from . import queries, slices
from .kept_resamples import delete as delete_resampled
from .kept_resamples import load as _load_resampled
from .kept_resamples import save as _save_resampled
from .models import IntervalRun
from .queries import Board

logger = logging.getLogger(__name__)

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


def seed_for(dataset: Dataset, split: str, slice_name: str = "") -> int:
    """The fixed seed of a (dataset, split)'s resamples, or of one of its slices'."""
    where = f"{split}@{slice_name}" if slice_name else split
    digest = hashlib.sha256(f"intervals:{dataset.pk}:{where}".encode()).digest()
    return int.from_bytes(digest[:8], "little")


@dataclass(frozen=True)
class Part:
    """The examples a board ranks: the whole split (``mask`` None) or one slice."""

    name: str  # "" for the whole split
    mask: np.ndarray | None
    seed: int

    def key(self, loss: scoring.Loss) -> str:
        return slices.key(loss.name, self.name)


def parts_of(dataset: Dataset, split: str) -> tuple[list[Part], str]:
    """The whole split and each of its slices (in order of first appearance), and the
    slices file's fingerprint ("" without one): resamples kept for another labelling
    are not reused."""
    whole = Part("", None, seed_for(dataset, split))
    labels = slices.membership(dataset, split)
    if labels is None:
        return [whole], ""
    parts = [whole] + [
        Part(name, labels == name, seed_for(dataset, split, name))
        for name in slices.names(dataset, split)
    ]
    return parts, slices.fingerprint(labels)


class _Targets:
    """The split's targets (and the nmse variance), read only if an entry needs them."""

    def __init__(self, dataset: Dataset, split: str):
        self.dataset, self.split = dataset, split
        self._read = None

    def nmse_arguments(self, mask: np.ndarray | None = None) -> dict:
        """The training variance, or the targets of the split (``mask``: of a slice,
        whose nmse is normalised by the variance of its own resampled targets)."""
        if self._read is None:
            targets = scored_targets(self.dataset, self.split)
            if self.dataset.nmse_normaliser == scoring.NmseNormaliser.TRAINING:
                train = targets[Split.TRAIN]
                self._read = {"variance": float(np.var(train - train[0]))}
            else:
                self._read = {"targets": targets[self.split]}
        if mask is None or "targets" not in self._read:
            return self._read
        return {"targets": self._read["targets"][mask]}


def _resample_part(
    loaded: dict, losses, *, part: Part, n: int, targets: _Targets
) -> tuple[dict, dict]:
    """{terms name: {loss key: (B,)}} of the loaded entries on one part's resamples, and
    {terms name: {loss key: α̂}}: the tail index of each entry's terms on the part
    (scoring.tails; nmse's of its squared errors, or of the squared deviations of the
    targets when its denominator, their resampled variance, is the heavier)."""
    means, squared, bounded = {}, {}, set()
    for loss in losses:
        if loss.name in tails.BOUNDED:
            bounded.add(part.key(loss))
        have = [name for name in loaded if loss.terms_key in loaded[name]]
        if not have:
            continue
        matrix = np.stack([loaded[name][loss.terms_key] for name in have], axis=1)
        if matrix.shape[0] != n:
            raise ValueError(f"terms of {have[0]} hold {matrix.shape[0]} examples, not {n}")
        if part.mask is not None:
            matrix = matrix[part.mask]
        (means if loss.terms_key == loss.name else squared)[part.key(loss)] = (have, matrix)
    if not (means or squared):
        return {}, {}
    extra = targets.nmse_arguments(part.mask) if squared else {}
    values = bootstrap.resample(
        {key: matrix for key, (_, matrix) in means.items()},
        squared_errors={key: matrix for key, (_, matrix) in squared.items()},
        seed=part.seed,
        **extra,
    )
    out: dict[str, dict[str, np.ndarray]] = {}
    indices: dict[str, dict[str, float]] = {}
    # nmse over the resampled var(t): its denominator, the mean of (t − t̄)², has a tail
    # of its own (Student-t targets with light-tailed errors), which marks every entry.
    denominator = math.inf
    if squared and "targets" in extra:
        t = np.asarray(extra["targets"], dtype=np.float64)
        denominator = float(tails.tail_index((t - t.mean()) ** 2))
    for key, (have, matrix) in [*means.items(), *squared.items()]:
        alpha = np.full(len(have), math.inf) if key in bounded else tails.tail_index(matrix)
        if key in squared:
            alpha = np.minimum(alpha, denominator)
        for i, name in enumerate(have):
            out.setdefault(name, {})[key] = values[key][i]
            indices.setdefault(name, {})[key] = float(alpha[i])
    return out, indices


def _resample_new(
    names: list[str], losses, *, n: int, parts, targets: _Targets
) -> tuple[dict, dict]:
    """Resampled losses of the entries ``names`` (terms files) on every part, a chunk of
    entries at a time (each terms file read once), and their terms' tail indices."""
    out: dict[str, dict[str, np.ndarray | None]] = {}
    indices: dict[str, dict[str, float]] = {}
    per_entry = n * max(len(losses), 1)
    chunk = max(1, CHUNK_VALUES // per_entry)
    keys = [part.key(loss) for part in parts for loss in losses]
    for start in range(0, len(names), chunk):
        loaded = {name: stored_terms.load(name) for name in names[start : start + chunk]}
        for name in loaded:
            out[name] = dict.fromkeys(keys, None)
            indices[name] = dict.fromkeys(keys, math.nan)
        for part in parts:
            if part.mask is not None and not part.mask.any():
                continue
            values, alphas = _resample_part(loaded, losses, part=part, n=n, targets=targets)
            for name in values:
                out[name].update(values[name])
                indices[name].update(alphas[name])
    return out, indices


# --- One loss's numbers ----------------------------------------------------------------


def _pair(interval) -> tuple[float | None, float | None]:
    lower, upper = (float(value) for value in interval)
    if math.isnan(lower) or math.isnan(upper):
        return None, None
    return lower, upper


def _loss_fields(
    *,
    ranked: list[int],
    best: list[int],
    baseline_id: int | None,
    vectors: dict[int, np.ndarray],
    alphas: dict[int, float] | None = None,
) -> dict[int, dict]:
    """Submission id → the interval fields of its Score row under one board's loss.

    ``alphas``: each entry's tail index α̂ (scoring.tails). An interval whose terms look
    heavy-tailed is marked (heavy_tail: the entry's own terms; leader_heavy_tail,
    baseline_heavy_tail: the entry's or the other one's, as a difference is no heavier
    than the heavier of its two; never against itself)."""
    listed = [pk for pk in ranked if pk in vectors]
    if not listed:
        return {}
    alphas = alphas or {}
    heavy = {pk: bool(tails.heavy(alphas.get(pk, math.nan))) for pk in listed}
    matrix = np.stack([vectors[pk] for pk in listed])
    own = bootstrap.intervals(matrix)
    fields = {pk: dict(EMPTY) for pk in listed}
    for i, pk in enumerate(listed):
        fields[pk]["lower"], fields[pk]["upper"] = _pair(own[i])
        if fields[pk]["lower"] is not None:
            fields[pk]["heavy_tail"] = heavy[pk]
    # The leader is rank 1 of the board: the first ranked entry, if it has resamples.
    if (leader := ranked[0]) in vectors:
        lead = bootstrap.intervals(bootstrap.differences(matrix, vectors[leader]))
        tied = bootstrap.contains_zero(lead)
        for i, pk in enumerate(listed):
            fields[pk]["leader_lower"], fields[pk]["leader_upper"] = _pair(lead[i])
            if fields[pk]["leader_lower"] is not None:
                fields[pk]["tied_with_leader"] = bool(tied[i])
                # (against itself the difference is 0 on every resample: no tail)
                fields[pk]["leader_heavy_tail"] = pk != leader and (heavy[pk] or heavy[leader])
    if baseline_id in vectors:
        against = bootstrap.intervals(bootstrap.differences(matrix, vectors[baseline_id]))
        for i, pk in enumerate(listed):
            fields[pk]["baseline_lower"], fields[pk]["baseline_upper"] = _pair(against[i])
            if fields[pk]["baseline_lower"] is not None:
                fields[pk]["baseline_heavy_tail"] = pk != baseline_id and (
                    heavy[pk] or heavy[baseline_id]
                )
    ranked_best = [pk for pk in best if pk in vectors and pk != baseline_id]
    if ranked_best:
        ranks = bootstrap.rank_intervals(np.stack([vectors[pk] for pk in ranked_best]))
        for (lower, upper), pk in zip(ranks, ranked_best, strict=True):
            fields[pk]["rank_lower"], fields[pk]["rank_upper"] = int(lower), int(upper)
    return fields


# --- A run -----------------------------------------------------------------------------


def compute_and_store(*, dataset_id: int, split: str) -> Summary:
    """Compute every interval of the split and of its slices and write the Score rows
    that changed."""
    dataset = Dataset.objects.select_related("challenge").get(pk=dataset_id)
    losses = interval_losses(dataset.task)
    parts, labelling = parts_of(dataset, split)
    state = IntervalRun.objects.filter(dataset=dataset, split=split).first()
    previous_file = state.resampled if state else ""
    boards = {}  # loss key → (ranked ids, best ids)
    # The intervals are shown on the public board: over the entries it lists (late
    # joiners' left out of the test's public part while their feedback is withheld; the
    # run is requested again when that changes, receivers.options_changed/published).
    withheld = policy.late_feedback_withheld(dataset.challenge, split, user=AnonymousUser())
    for part in parts:
        for loss in losses:
            board = Board(dataset, split, loss, slice=part.name, late_withheld=withheld)
            ranked = list(queries.ranking(board, paged=False))
            best = list(queries.ranking(replace(board, best=True), paged=False))
            boards[part.key(loss)] = (ranked, best)
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
    for part in parts:
        if part.mask is not None and n and part.mask.size != n:
            raise ValueError(
                f"{dataset}: the {split} slices label {part.mask.size} examples, not {n}"
            )
    seed = seed_for(dataset, split)
    resampled = _load_resampled(previous_file, n=n, seed=seed, labelling=labelling)
    if n and results:
        names = set(results.values())
        new = sorted(names - set(resampled.rows))
        if new:
            targets = _Targets(dataset, split)
            rows, indices = _resample_new(new, losses, n=n, parts=parts, targets=targets)
            resampled.rows.update(rows)
            resampled.tails.update(indices)
        gone = set(resampled.rows) - names
        for name in gone:
            resampled.drop(name)
        changed = bool(new or gone)
    else:
        changed = bool(resampled.rows)
        resampled.clear()
    baseline_id = next(
        iter(
            Score.objects.filter(
                dataset=dataset, split=split, submission__is_baseline=True
            ).values_list("submission_id", flat=True)
        ),
        None,
    )

    wanted: dict[tuple[int, str], dict] = {}
    for key, (ranked, best) in boards.items():
        vectors = {
            pk: row
            for pk in ranked
            if pk in results and (row := resampled.rows[results[pk]].get(key)) is not None
        }
        alphas = {pk: resampled.tails.get(results[pk], {}).get(key, math.nan) for pk in vectors}
        for pk, fields in _loss_fields(
            ranked=ranked, best=best, baseline_id=baseline_id, vectors=vectors, alphas=alphas
        ).items():
            wanted[(pk, key)] = fields
    resampled_name = previous_file
    if changed or not previous_file:
        resampled_name = (
            _save_resampled(dataset, split, resampled, list(boards)) if resampled.rows else ""
        )
    try:
        updated = _write(dataset, split, list(boards), wanted=wanted, used=results)
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


def _write(dataset, split, keys: list[str], *, wanted: dict, used: dict[int, str]) -> int:
    """Write the changed Score rows, leaving alone the entries rescored meanwhile (their
    new rows are empty, and their run asks for intervals again)."""
    with transaction.atomic():
        current = dict(
            SplitResult.objects.filter(submission__dataset=dataset, split=split)
            .exclude(terms="")
            .values_list("submission_id", "terms")
        )
        scores = Score.objects.filter(dataset=dataset, split=split, loss__in=keys).values_list(
            "pk", "submission_id", "loss", *FIELDS
        )
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
