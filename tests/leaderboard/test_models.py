"""leaderboard.models: the bookkeeping of each split's interval runs, and the kept
best-per-participant rows, one per participant, split, loss and board."""

import pytest
from django.db import IntegrityError, transaction

from challenge_site.leaderboard.models import BestEntry, IntervalRun

from .helpers import add_entry, at, cls


def test_a_split_has_one_run_row_pending_while_requests_outnumber_runs(catalysis):
    run = IntervalRun.objects.create(dataset=catalysis, split="val", requested=3, computed=2)
    assert run.pending and str(run) == f"intervals of {catalysis.pk}/val"
    run.computed = 3
    assert not run.pending
    with pytest.raises(IntegrityError), transaction.atomic():
        IntervalRun.objects.create(dataset=catalysis, split="val")
    with pytest.raises(IntegrityError), transaction.atomic():
        IntervalRun.objects.create(dataset=catalysis, split="nope")


def test_one_best_entry_per_participant_and_board(catalysis, ada):
    entry = add_entry(catalysis, user=ada, created=at(0), val=cls(0.25, 0.5))
    kept = BestEntry.objects.get(dataset=catalysis, split="val", loss="nlp", final=False)
    assert (kept.participant, kept.submission, kept.value) == (f"u{ada.pk}", entry, 0.25)
    assert str(kept) == f"best val nlp of u{ada.pk}"
    assert str(BestEntry(split="val", loss="nlp", participant="")) == "best val nlp of baseline"
    with pytest.raises(IntegrityError), transaction.atomic():
        BestEntry.objects.create(
            dataset=catalysis,
            split="val",
            loss="nlp",
            participant=f"u{ada.pk}",
            submission=entry,
            created=entry.created,
        )
