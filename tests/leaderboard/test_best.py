"""The kept best-per-participant table (leaderboard.best) equals the window query over
every listed entry after any sequence of scoring, rescoring, withdrawal, moderation and
team joins: the real services, in random (seeded) order."""

import random

import pytest
import time_machine

from challenge_site.leaderboard import best
from challenge_site.leaderboard import services as boards
from challenge_site.leaderboard.models import BestEntry
from challenge_site.submissions import moderation, services, withdrawal
from challenge_site.submissions.models import ModerationAction, Status, Submission
from challenge_site.teams import services as teams
from challenge_site.teams.models import Membership
from tests.factories import VALIDATION, make_challenge, make_dataset, make_user
from tests.submissions.helpers import predictions

from .helpers import INF, add_entry, at, point_only_reg, reg, sliced

VALUES = (0.1, 0.2, 0.2, 0.5, INF, None)


def _fields(row: BestEntry) -> tuple:
    return (
        row.split,
        row.loss,
        row.final,
        row.participant,
        row.submission_id,
        row.value,
        row.created,
    )


def kept(dataset) -> list[tuple]:
    return sorted(_fields(row) for row in BestEntry.objects.filter(dataset=dataset))


def from_scratch(dataset) -> list[tuple]:
    return sorted(_fields(row) for row in best.recompute(dataset))


def _split_scores(rng: random.Random) -> dict:
    if rng.random() < 0.15:
        return point_only_reg(rng.choice((0.3, 0.4)))
    return reg(rng.choice(VALUES), rng.choice(VALUES[:4]), crps=rng.choice(VALUES))


def _scores(rng: random.Random) -> dict:
    """The split's scores and its two slices' (scoring.md §8: boards of their own, whose
    best entries the table keeps too; a point-only file is point-only on every slice)."""
    whole = _split_scores(rng)
    parts = [whole]
    for name in ("in", "shifted"):
        scores = _split_scores(rng)
        if whole["nlpd"] is None and whole["crps"] is None:
            scores = point_only_reg(scores["nmse"])
        parts.append(sliced(scores, name))
    return {key: value for part in parts for key, value in part.items()}


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_kept_table_equals_recomputation_after_random_changes(seed, db, submit_zip):
    rng = random.Random(seed)
    with time_machine.travel(VALIDATION, tick=False):
        challenge = make_challenge()
        gaze = make_dataset(challenge, "gaze", task="regression")
        organiser = make_user("org", organiser_of=challenge)
        users = [make_user(f"p{i}") for i in range(5)]
        add_entry(gaze, baseline=True, created=at(-5), val=reg(1.0, 1.0), test=reg(1.0, 1.0))
        entries: list[Submission] = []
        steps, done = [], []
        for step in range(40):
            action = rng.choice(
                ["add", "add", "add", "zip", "moderate", "withdraw", "join", "rescore"]
            )
            steps.append(action)
            if action == "add" or not entries:
                user = rng.choice(users)
                team = Membership.objects.filter(user=user).values_list("team", flat=True).first()
                entry = add_entry(
                    gaze,
                    user=user,
                    created=at(rng.randrange(3)),  # equal times: ids decide
                    val=_scores(rng),
                    test=_scores(rng) if rng.random() < 0.5 else None,
                )
                if team is not None:  # made after joining: the team's, as submit makes it
                    Submission.objects.filter(pk=entry.pk).update(team=team)
                    services_refresh(gaze, entry)
                entries.append(entry)
            elif action == "zip":
                user = rng.choice(users)
                files = predictions("gaze", seed=rng.randrange(4))
                entries.append(submit_zip(user, challenge, files, now=VALIDATION))
            elif action == "moderate":
                moderation.moderate(
                    submissions=Submission.objects.filter(pk=rng.choice(entries).pk),
                    action=rng.choice(
                        [
                            ModerationAction.HIDE,
                            ModerationAction.DISQUALIFY,
                            ModerationAction.RESTORE,
                        ]
                    ),
                    reason="Because.",
                    user=organiser,
                    now=VALIDATION,
                )
            elif action == "withdraw":
                entry = Submission.objects.get(pk=rng.choice(entries).pk)
                if withdrawal.refusal(entry, now=VALIDATION) is None:
                    withdrawal.withdraw(submission=entry, now=VALIDATION)
            elif action == "join":
                joiner, other = rng.sample(users, 2)
                team = Membership.objects.filter(user=other).values_list("team", flat=True).first()
                try:
                    if team is None:
                        team = teams.create(
                            challenge=challenge, user=other, name=f"T{step}", now=VALIDATION
                        )
                    else:
                        team = teams.Team.objects.get(pk=team)
                    teams.join(team=team, user=joiner, now=VALIDATION)
                    done.append("join")
                except teams.TeamError:
                    pass
            elif action == "rescore":
                scored = [e for e in entries if e.file]
                if scored:
                    entry = rng.choice(scored)
                    # Claimed: off the boards until the new scores are in.
                    services._claim(submission_id=entry.pk, force=True, task_id="t", now=None)
                    assert kept(gaze) == from_scratch(gaze), (seed, step, steps)
                    services.score_submission(submission_id=entry.pk, task_id="t")
                    done.append("rescore")
            assert kept(gaze) == from_scratch(gaze), (seed, step, steps)
    # Each kind of change happened (joins and rescores can be refused or find nothing).
    assert {"moderate", "withdraw", "zip"} <= set(steps) and {"join", "rescore"} <= set(done)
    assert BestEntry.objects.filter(dataset=gaze, participant__startswith="t").exists()
    # The slices' boards are kept as well as the splits'.
    assert {"nlpd@in", "crps@shifted"} <= {row[1] for row in kept(gaze)}


def services_refresh(dataset, entry) -> None:
    from challenge_site.submissions import standings
    from challenge_site.submissions.entrants import Entrant

    entry.refresh_from_db()
    standings.listing_changed(dataset=dataset, entrant=Entrant.of(entry))
    standings.listing_changed(dataset=dataset, entrant=Entrant(team_id=None, user_id=entry.user_id))


def test_best_view_reads_the_kept_table_and_respects_listing(catalysis, ada, grace):
    """A hidden best entry gives way to its participant's next listed one; the table
    holds only listed entries, and a claimed rescore leaves the board meanwhile."""
    from .helpers import cls

    first = add_entry(catalysis, user=ada, created=at(0), val=cls(0.1, 0.2))
    second = add_entry(catalysis, user=ada, created=at(1), val=cls(0.3, 0.2))
    add_entry(catalysis, user=grace, created=at(2), val=cls(0.2, 0.2))
    row = BestEntry.objects.get(
        dataset=catalysis, split="val", loss="nlp", participant=f"u{ada.pk}"
    )
    assert row.submission_id == first.pk and row.value == 0.1
    Submission.objects.filter(pk=first.pk).update(status=Status.INVALID)
    # Out of date on purpose: the board still lists only listed entries (policy).
    import scoring
    from challenge_site.leaderboard.queries import Board, ranked_ids

    board = Board(catalysis, "val", scoring.get_loss(catalysis.task, "nlp"), best=True)
    shown = [row.entry.pk for row in boards.leaderboard_page(board=board).rows]
    assert first.pk not in shown
    services_refresh(catalysis, Submission.objects.get(pk=first.pk))
    assert second.pk in ranked_ids(board)
    assert kept(catalysis) == from_scratch(catalysis)


@pytest.mark.django_db(transaction=True)
def test_upgrade_migration_fills_the_table_of_a_site_with_scores(catalysis, ada, grace):
    """A site upgraded with scores already stored (or `make run` on an old database):
    the migration that comes after the table's creation fills it."""
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    from .helpers import cls

    add_entry(catalysis, user=ada, created=at(0), val=cls(0.1, 0.2), test=cls(0.2, 0.1))
    add_entry(catalysis, user=grace, created=at(1), val=cls(0.3, 0.2))
    expected = kept(catalysis)
    assert expected
    executor = MigrationExecutor(connection)
    try:
        executor.migrate([("leaderboard", "0003_bestentry")])  # the backfill undone: a no-op
        BestEntry.objects.all().delete()  # the state right after 0003 on an old site
        executor.loader.build_graph()
        executor.migrate([("leaderboard", "0004_backfill_best_entries")])
        assert kept(catalysis) == expected == from_scratch(catalysis)
    finally:
        # Every later migration again (their tables went with the way back to 0003), so
        # that the tests after this one find the whole schema.
        executor.loader.build_graph()
        executor.migrate(executor.loader.graph.leaf_nodes())
