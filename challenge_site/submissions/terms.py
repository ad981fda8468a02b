"""Per-example terms of a scored split, kept beside the upload in the private storage.

One compressed ``.npz`` per submission and split holds a float64 array per terms key of
the task (scoring.compute_terms: nlp, 01l, brier; nlpd, se, crps), n values each, +inf
kept. The bootstrap intervals (challenge_site.leaderboard.intervals) are recomputed from
them, never from the upload. Each scoring run writes new files under fresh names and the
previous run's files are deleted once the new scores are committed, so a reader never
sees a file change under it.
"""

import io
import secrets

import numpy as np
from django.core.files.base import File

from .models import Status, Submission
from .storage import private_storage

FOLDER = "terms"


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
    np.savez_compressed(buffer, **arrays)
    buffer.seek(0)
    return private_storage().save(_name(submission, split), File(buffer))


def load(name: str) -> dict[str, np.ndarray]:
    """The stored terms by key (no pickles are ever read)."""
    with private_storage().open(name, "rb") as handle:
        data = handle.read()
    with np.load(io.BytesIO(data), allow_pickle=False) as archive:
        return {key: archive[key] for key in archive.files}


def delete(names) -> None:
    for name in names:
        if name:
            private_storage().delete(name)


def save_outcome(*, submission_id: int, outcome) -> dict[str, str]:
    """Split → stored name of its terms, for every split of a scored outcome (nothing
    is left behind if one fails)."""
    if outcome.status != Status.SCORED:
        return {}
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
