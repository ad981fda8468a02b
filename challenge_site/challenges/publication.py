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
from .models import Challenge, format_utc, publication_refusal
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


def described(item: Exposure, *, at: datetime) -> str:
    """One paragraph of what publishing at ``at`` makes public, counted now: asked before
    an automatic publication is set (the console's form), as the manual action's page
    lists it before publishing."""
    parts = []
    for dataset in item.datasets:
        entries, scores = dataset.test_entries, dataset.test_scores
        files = ", ".join(dataset.released_files)
        parts.append(
            f"{dataset.name}: {entries} test-split {'entry' if entries == 1 else 'entries'} "
            f"with {scores} score{'' if scores == 1 else 's'}"
            + (f", test target files downloadable: {files}" if files else "")
        )
    listed = "; ".join(parts) or "no dataset yet"
    return (
        f"On {format_utc(at)} the results become public for everyone: the test-split "
        f"scores of every scored entry (leaderboards, results, submission pages, plots, "
        f"exports, the API) and the test target files released with them. So far: "
        f"{listed}; entries made until the deadline add to them."
    )
