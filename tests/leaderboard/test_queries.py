"""Every sort is answered by score_leaderboard_idx (the index the Score model names for it)."""

import pytest
from django.db import connection, transaction

import scoring
from challenge_site.leaderboard.queries import Board, ranking
from challenge_site.submissions.models import Score

from .helpers import add_entry, at, cls, reg

INDEX = "score_leaderboard_idx"


def plan(queryset) -> str:
    sql, params = queryset.query.sql_with_params()
    with transaction.atomic(), connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            # A handful of test rows would make a sequential scan cheapest; what is
            # checked is that the index can answer the WHERE and (but for ties) the ORDER BY.
            cursor.execute("SET LOCAL enable_seqscan = off")
            cursor.execute("SET LOCAL enable_bitmapscan = off")
            cursor.execute("SET LOCAL enable_sort = off")
            cursor.execute("EXPLAIN " + sql, params)
        else:
            cursor.execute("EXPLAIN QUERY PLAN " + sql, params)
        return "\n".join(" ".join(str(part) for part in row) for row in cursor.fetchall())


def test_the_model_names_the_index():
    assert INDEX in {index.name for index in Score._meta.indexes}
    index = next(index for index in Score._meta.indexes if index.name == INDEX)
    assert index.fields == ["dataset", "split", "loss", "value", "submission"]


@pytest.mark.parametrize("task", ["classification", "regression"])
def test_each_sort_reads_the_leaderboard_index_in_order(catalysis, gaze, ada, task):
    dataset = catalysis if task == "classification" else gaze
    scores = cls(0.3, 0.2) if task == "classification" else reg(0.3, 0.2)
    for i in range(5):
        add_entry(dataset, user=ada, created=at(i), val=scores, test=scores)
    for loss in scoring.losses_for(task):
        for split in ("val", "test"):
            text = plan(ranking(Board(dataset, split, loss), paged=True)[:51])
            assert INDEX in text, (loss.name, text)
            if connection.vendor == "sqlite":
                # Only ties (equal values) are sorted on the fly, never the whole list.
                assert "USE TEMP B-TREE FOR ORDER BY" not in text, text
            else:
                assert "Presorted Key: submissions_score.value" in text, text


def test_a_position_counts_only_listed_entries_before_it(catalysis, ada):
    """queries.position (the results page's baseline rank) counts on the Score rows and
    takes out the unlisted entries apart: the same rank as counting the listed entries
    before it, with hidden, disqualified, withdrawn, rescoring, n/a and tied entries."""
    from django.utils import timezone

    from challenge_site.leaderboard.queries import pivot, position, ranked_ids
    from challenge_site.submissions.models import Moderation, Status, Submission
    from tests.factories import make_user

    baseline = add_entry(catalysis, created=at(-5), val=cls(0.4, 0.5), baseline=True)
    people = [make_user(f"p{i}") for i in range(9)]
    values = [0.1, 0.2, 0.3, 0.4, 0.4, 0.5, 0.35, 0.2, None]
    entries = [
        add_entry(catalysis, user=user, created=at(i), val=cls(value, 0.5))
        for i, (user, value) in enumerate(zip(people, values, strict=True))
    ]
    Submission.objects.filter(pk=entries[0].pk).update(
        moderation=Moderation.HIDDEN, moderation_reason="x"
    )
    Submission.objects.filter(pk=entries[1].pk).update(withdrawn_at=timezone.now())
    Submission.objects.filter(pk=entries[6].pk).update(status=Status.RUNNING)
    board = Board(catalysis, "val", scoring.get_loss("classification", "nlp"), best=False)
    [entry] = pivot(board, [baseline.pk])
    ids = ranked_ids(board)
    # Listed before the baseline (0.4, the earliest at 0.4): 0.2 (p7) and 0.3 (p2).
    assert position(board, entry, value=0.4) == ids.index(baseline.pk) + 1 == 3
    [late_tie] = pivot(board, [entries[4].pk])
    assert position(board, late_tie, value=0.4) == ids.index(entries[4].pk) + 1 == 5
