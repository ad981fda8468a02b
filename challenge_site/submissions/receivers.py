"""The submissions app's answers to changes and questions below it (challenges.signals,
datasets.signals), connected in SubmissionsConfig.ready()."""

from django.db.models import Count

from . import board_ladder, finals, ladder
from .models import FINAL, Score, Submission
from .policy import page_public_q
from .services import rescore, rescore_lacking


def options_changed(
    *, challenge, public_part_changed: bool, final_entries_changed: bool, **_
) -> int:
    """A new public part rescores the challenge's entries (baselines included); a new
    number of final entries, or a new public part, recomputes those that count. Returns
    how many entries were queued to be scored again."""
    count = 0
    if public_part_changed:
        count = rescore(
            submissions=Submission.objects.filter(dataset__challenge=challenge, status__in=FINAL)
        )
    if public_part_changed or final_entries_changed:
        for dataset in challenge.datasets.all():
            finals.refresh_dataset(dataset=dataset)
    # Late joiners may have been let in or out of the boards' Ladders (a board that did
    # not change costs one query for its steps; its terms are not read).
    for dataset in challenge.datasets.all():
        board_ladder.refresh_dataset(dataset=dataset)
    return count


def ranking_loss_changed(*, dataset, **_) -> None:
    """The Ladder's shown scores and the entries that count for the final ranking."""
    ladder.refresh_dataset(dataset=dataset)
    board_ladder.refresh_dataset(dataset=dataset)
    finals.refresh_dataset(dataset=dataset)


def losses_changed(*, dataset, **_) -> int:
    """A dataset shows other losses (Dataset.losses): the entries scored before one of
    them was registered are scored again. Returns how many were queued."""
    return rescore_lacking(dataset=dataset)


def exposure_counted(*, challenge, split, **_) -> dict[int, dict]:
    """The entries and scores of ``split`` that publication shows, per dataset."""
    rows = (
        Score.objects.filter(dataset__challenge=challenge, split=split)
        .exclude(loss__contains="@")  # a slice's scores (LOSS@SLICE): never counted aloud
        .filter(page_public_q("submission__"))
        .values("dataset")
        .annotate(entries=Count("submission", distinct=True), scores=Count("id"))
    )
    return {
        row["dataset"]: {"test_entries": row["entries"], "test_scores": row["scores"]}
        for row in rows
    }
