"""What publishing a challenge's results makes public, shown before it happens (the
admin's confirmation page) and kept with the record of it (ChallengeEvent.detail).

Which scores and files publication reveals is the policy's to say (challenges.policy's
release rule, submissions.policy's page-public entries); the apps that hold them count
them (signals.exposure_counted), comparing the challenge as it is with it published.
"""

import copy
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from . import signals
from .models import Challenge, publication_refusal
from .policy import HIDDEN_UNTIL_PUBLICATION, released_parts


@dataclass(frozen=True)
class DatasetExposure:
    """One dataset: its test-split entries and scores, and the files publication releases."""

    name: str
    test_entries: int = 0
    test_scores: int = 0
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
    download once published (at a moment after the deadline). The apps that hold them
    count them (signals.exposure_counted): the datasets app the files, the submissions
    app the entries and scores."""
    after = max(now, challenge.deadline) + timedelta(seconds=1)
    published, unpublished = copy.copy(challenge), copy.copy(challenge)
    published.results_published, unpublished.results_published = True, False
    parts = released_parts(published, now=after) - released_parts(unpublished, now=after)
    counted: dict[int, dict] = {}
    answers = signals.exposure_counted.send(
        sender=Challenge, challenge=challenge, parts=parts, split=HIDDEN_UNTIL_PUBLICATION
    )
    for _, answer in answers:
        for dataset_id, fields in (answer or {}).items():
            counted.setdefault(dataset_id, {}).update(fields)
    datasets = [
        DatasetExposure(name=dataset.name, **counted.get(dataset.pk, {}))
        for dataset in challenge.datasets.all()
    ]
    return Exposure(challenge, datasets, publication_refusal(challenge, now=now))
