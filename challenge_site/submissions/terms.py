"""Per-example terms of a scored split, kept beside the upload in the private storage.

One ``.npz`` per submission and split holds a float64 array per terms key of the task
(scoring.compute_terms: nlp, 01l, brier; nlpd, se, crps), n values each, +inf kept.
Stored uncompressed: deflate gained 4 % on a regression file's terms (the digits of
floats hardly compress) and took ~13 ms of a ~100 ms scoring run at 20,000 rows (and
reading them back 3×); files written compressed before are read the same way. The
bootstrap intervals (challenge_site.leaderboard.intervals) are recomputed from them,
never from the upload. Each scoring run writes new files under fresh names and the
previous run's files are deleted once the new scores are committed, so a reader never
sees a file change under it.
"""

import io
import secrets

import numpy as np

from .kept_files import KeptFiles
from .models import Status, Submission
from .storage import private_storage, read_bytes, save_fresh

FOLDER = "terms"
# The terms files this process wrote or read last, whole, by name (kept_files.py), as the
# bootstrap intervals read them (leaderboard.intervals). A name is never written twice
# (fresh names, see above), so a kept copy cannot go stale; delete() drops it.
KEPT = KeptFiles(32 * 1024 * 1024)
# Probing compares each entry with its participant's recent entries, and the Ladder with
# its current best, on one array of a file each (probing_stats.record, ladder.loss_terms).
# Those arrays are kept apart, by file name: in a rush of many participants, the whole
# files written since (three arrays and several splits per entry) would push a
# participant's previous entries out of KEPT before their next one, and reading them back
# from the storage was a tenth of a worker's time per entry. 64 MiB: 400 arrays of
# 20,000 examples (an entry's compared split and Ladder split: one or two).
COMPARED = KeptFiles(64 * 1024 * 1024)


def _name(submission: Submission, split: str) -> str:
    dataset = submission.dataset
    return (
        f"{FOLDER}/{dataset.challenge.slug}/{dataset.name}/"
        f"{submission.pk}-{split}-{secrets.token_hex(8)}.npz"
    )


def save(*, submission: Submission, split: str, terms: dict[str, np.ndarray | None]) -> str:
    """Store the split's terms (those that are not n/a); returns the stored name."""
    buffer = io.BytesIO()
    arrays = {
        key: np.asarray(value, dtype=np.float64)
        for key, value in terms.items()
        if value is not None
    }
    np.savez(buffer, **arrays)
    name = save_fresh(_name(submission, split), buffer.getvalue())
    KEPT.put(name, arrays)
    return name


def load(name: str) -> dict[str, np.ndarray]:
    """The stored terms by key (no pickles are ever read); the caller's own copies."""
    return KEPT.get(name, lambda: _read(name))


def load_array(name: str, key: str) -> np.ndarray | None:
    """The stored terms ``key`` of the file ``name`` (None when it has none), kept in
    COMPARED; the caller's own copy."""
    kept = COMPARED.peek(name)
    if kept is not None and key in kept:
        return kept[key]
    whole = KEPT.peek(name)
    values = (whole if whole is not None else _read(name)).get(key)
    if values is not None:
        remember_array(name, key, values, beside=kept)
    return values


def remember_array(
    name: str, key: str, values: np.ndarray, *, beside: dict[str, np.ndarray] | None = None
) -> None:
    """Keep ``values``, the ``key`` array of the stored file ``name``, for
    :func:`load_array` (a later entry compared with this one), beside the file's arrays
    kept already (``beside``, else looked up): a Ladder ranked by another loss than
    probing's reads another array of the same file, and neither pushes the other out."""
    if beside is None:
        beside = COMPARED.peek(name)
    COMPARED.put(name, {**(beside or {}), key: values})


def _read(name: str) -> dict[str, np.ndarray]:
    data = read_bytes(name)  # one GET on S3 (storage.reading)
    with np.load(io.BytesIO(data), allow_pickle=False) as archive:
        return {key: archive[key] for key in archive.files}


def delete(names) -> None:
    for name in names:
        if name:
            KEPT.forget(name)
            COMPARED.forget(name)
            private_storage().delete(name)


def save_outcome(
    *, submission_id: int, outcome, submission: Submission | None = None
) -> dict[str, str]:
    """Split → stored name of its terms, for every split of a scored outcome (nothing
    is left behind if one fails). ``submission``: the run's, with its dataset and
    challenge (only their names are read), saving a query when the caller has it."""
    if outcome.status != Status.SCORED:
        return {}
    if submission is None or submission.pk != submission_id:
        submission = Submission.objects.select_related("dataset__challenge").get(pk=submission_id)
    stored: dict[str, str] = {}
    try:
        for result in outcome.splits:
            stored[str(result.split)] = save(
                submission=submission, split=result.split, terms=result.terms
            )
    except BaseException:
        delete(stored.values())
        raise
    return stored
