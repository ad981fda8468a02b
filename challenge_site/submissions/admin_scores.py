"""The ranking loss per split in the submissions console: one sortable column per scored
split, read from the Score rows by subqueries of the list's own query (so the number of
queries does not grow with the rows listed).

The console lists the submissions of the challenges the user organises (all for
superusers), and organisers see their challenges' hidden scores: they run them. So every
stored score is shown here, the test scores before publication included.
"""

from django.contrib import admin
from django.db.models import Case, CharField, F, OuterRef, Subquery, Value, When
from django.db.models.functions import Coalesce, NullIf

import scoring
from datasets.models import ScoredSplit, Task

from .models import Score

# The columns, in the order a challenge runs through them; training scores are not ranked.
SPLITS = (ScoredSplit.VAL, ScoredSplit.PUBLIC, ScoredSplit.PRIVATE, ScoredSplit.TEST)


def _ranking_loss():
    """The dataset's ranking loss as SQL: its own choice, else its task's default
    (Dataset.effective_ranking_loss)."""
    defaults = [
        When(dataset__task=task, then=Value(scoring.default_ranking_loss(task).name))
        for task in Task.values
    ]
    return Coalesce(
        NullIf(F("dataset__ranking_loss"), Value("")),
        Case(*defaults, default=Value(""), output_field=CharField()),
        output_field=CharField(),
    )


def column(split: str) -> str:
    return f"ranking_{split}"


def with_ranking_scores(submissions):
    """``submissions`` with ``ranking_loss_name`` and one ``ranking_<split>`` value per
    split of SPLITS (None: no score, or n/a)."""
    submissions = submissions.annotate(ranking_loss_name=_ranking_loss())
    return submissions.annotate(
        **{
            column(split): Subquery(
                Score.objects.filter(
                    submission=OuterRef("pk"), split=split, loss=OuterRef("ranking_loss_name")
                ).values("value")[:1]
            )
            for split in SPLITS
        }
    )


def shown(value: float | None) -> str:
    """Short enough for a column; the entry's page lists every score in full."""
    return "–" if value is None else f"{value:.4g}"


def _display(split: ScoredSplit):
    @admin.display(description=split.label, ordering=F(column(split)).asc(nulls_last=True))
    def display(self, submission):
        return shown(getattr(submission, column(split), None))

    display.__name__ = column(split)
    return display


class RankingScoresAdminMixin:
    """For SubmissionAdmin: the columns ``ranking_loss`` (the loss's name, the dataset's
    choice) and ``ranking_val``, ``ranking_public``, ``ranking_private``, ``ranking_test``
    (its value on each), filled by the list's query."""

    RANKING_COLUMNS = ("ranking_loss", *(column(split) for split in SPLITS))

    def get_queryset(self, request):
        rows = super().get_queryset(request)
        # Only the list shows the columns: the entry's page has its scores inline.
        if getattr(request, "lists_submissions", False):
            rows = with_ranking_scores(rows)
        return rows

    def changelist_view(self, request, extra_context=None):
        request.lists_submissions = True
        return super().changelist_view(request, extra_context)

    @admin.display(description="Ranked by", ordering="ranking_loss_name")
    def ranking_loss(self, submission):
        return getattr(submission, "ranking_loss_name", "") or "–"


for _split in SPLITS:
    setattr(RankingScoresAdminMixin, column(_split), _display(_split))
