"""What publishing a challenge's results makes public, shown before it happens (the
admin's confirmation page) and kept with the record of it (ChallengeEvent.detail).

Which scores and files publication reveals is challenge_site.policy's to say; this
module only counts them, comparing the challenge as it is with it published.
"""

import copy
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db.models import Count
from django.utils import timezone

from challenge_site import policy
from challenge_site.submissions.models import Score
from datasets.models import DatasetFile

from .models import Audit, Challenge, ChallengeEvent, EventKind, publication_refusal


@dataclass(frozen=True)
class DatasetExposure:
    """One dataset: its test-split entries and scores, and the files publication releases."""

    name: str
    test_entries: int
    test_scores: int
    released_files: list[str] = field(default_factory=list)

    def as_json(self) -> dict:
        return {
            "name": self.name,
            "test_entries": self.test_entries,
            "test_scores": self.test_scores,
            "test_targets": self.released_files,
        }


@dataclass(frozen=True)
class Exposure:
    """What becomes public when ``challenge``'s results are published (or hidden again
    when they are withdrawn); ``refusal`` says why they may not be published yet."""

    challenge: Challenge
    datasets: list[DatasetExposure]
    refusal: str | None

    @property
    def test_entries(self) -> int:
        return sum(d.test_entries for d in self.datasets)

    @property
    def test_scores(self) -> int:
        return sum(d.test_scores for d in self.datasets)

    @property
    def released_files(self) -> list[str]:
        return [name for d in self.datasets for name in d.released_files]

    def as_json(self) -> dict:
        return {"datasets": [d.as_json() for d in self.datasets]}


def exposure(challenge: Challenge, *, now: datetime) -> Exposure:
    """Per dataset: the test entries and their scores that publication shows (on the
    leaderboards, and on disqualified entries' own pages), and the files participants may
    download once published (at a moment after the deadline)."""
    hidden = policy.HIDDEN_UNTIL_PUBLICATION
    counts = {
        row["dataset"]: row
        for row in policy.page_public_scores(
            Score.objects.filter(dataset__challenge=challenge, split=hidden)
        )
        .values("dataset")
        .annotate(entries=Count("submission", distinct=True), scores=Count("id"))
    }
    after = max(now, challenge.deadline) + timedelta(seconds=1)
    published, unpublished = copy.copy(challenge), copy.copy(challenge)
    published.results_published, unpublished.results_published = True, False
    parts = policy.released_parts(published, now=after) - policy.released_parts(
        unpublished, now=after
    )
    files: dict[int, list[str]] = {}
    for datafile in (
        DatasetFile.objects.filter(dataset__challenge=challenge)
        .select_related("dataset")
        .order_by("dataset__position", "dataset__name", "split", "kind")
    ):
        if (datafile.split, datafile.kind) in parts:
            files.setdefault(datafile.dataset_id, []).append(datafile.filename)
    datasets = [
        DatasetExposure(
            name=dataset.name,
            test_entries=counts.get(dataset.pk, {}).get("entries", 0),
            test_scores=counts.get(dataset.pk, {}).get("scores", 0),
            released_files=files.get(dataset.pk, []),
        )
        for dataset in challenge.datasets.all()
    ]
    return Exposure(challenge, datasets, publication_refusal(challenge, now=now))


def record_event(challenge: Challenge, *, kind: EventKind, audit: Audit, detail: dict):
    """A ChallengeEvent: who (a user, or none for commands and code), how, when."""
    user = audit.user if getattr(audit.user, "pk", None) else None
    return ChallengeEvent.objects.create(
        challenge=challenge,
        kind=kind,
        at=audit.at or timezone.now(),
        user=user,
        username=user.get_username() if user is not None else "",
        via=audit.via,
        detail=detail,
    )


def record_publication(challenge: Challenge, *, audit: Audit) -> ChallengeEvent:
    """The ChallengeEvent of a change of ``challenge.results_published`` (Challenge.save)."""
    at = audit.at or timezone.now()
    return record_event(
        challenge,
        kind=EventKind.PUBLISHED if challenge.results_published else EventKind.WITHDRAWN,
        audit=Audit(user=audit.user, via=audit.via, at=at),
        detail=exposure(challenge, now=at).as_json(),
    )
