"""Moderation: hidden and disqualified entries leave every list of entries (leaderboards,
best per participant, results, CSV, API, plots); a disqualified entry's page says why, to
everyone; a hidden one's page is its owner's and the organisers'; restore brings them
back; each action is recorded with who, when and why."""

import csv
import io
from datetime import timedelta

import pytest
import time_machine
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import IntegrityError, transaction
from django.test import Client

from challenge_site.leaderboard import plots
from challenge_site.submissions import moderation
from challenge_site.submissions.models import (
    Moderation,
    ModerationAction,
    ModerationEvent,
    Submission,
)
from tests.factories import AFTER, VALIDATION, make_challenge, make_dataset, make_user
from tests.leaderboard.helpers import add_entry, at, page_ids, reg
from tests.pages import page_text

from .helpers import predictions

BOARD = "/challenges/demo/datasets/gaze/leaderboard"
API = "/api/v1/challenges/demo/datasets/gaze/leaderboard/"
RESULTS = "/challenges/demo/results/"


@pytest.fixture(autouse=True)
def clock():
    """Pages are requested after the deadline, as on tests/leaderboard's pages."""
    with time_machine.travel(AFTER, tick=False):
        yield


@pytest.fixture
def ada(db):
    return make_user("ada", display_name="Ada L.")


@pytest.fixture
def grace(db):
    return make_user("grace")


@pytest.fixture
def board(challenge, gaze, ada, grace):
    """A baseline and three entries on both splits, best first: ada's two, then grace's."""
    return {
        "baseline": add_entry(
            gaze, baseline=True, created=at(-5), val=reg(2.0, 1.0), test=reg(2.0, 1.0)
        ),
        "first": add_entry(
            gaze, user=ada, created=at(0), val=reg(0.1, 0.5), test=reg(0.1, 0.5), method="GP"
        ),
        "second": add_entry(
            gaze, user=ada, created=at(1), val=reg(0.2, 0.5), test=reg(0.2, 0.5), method="GP 2"
        ),
        "third": add_entry(
            gaze, user=grace, created=at(2), val=reg(0.3, 0.5), test=reg(0.3, 0.5), method="Trees"
        ),
    }


def _ids(*entries):
    return [entry.pk for entry in entries]


def _csv_ids(response) -> list[int]:
    text = b"".join(response.streaming_content).decode()
    return [int(row["submission"]) for row in csv.DictReader(io.StringIO(text))]


def _listed(client=None, *, split="val") -> dict[str, list[int]]:
    """The entries every list shows, in order: page, best per participant, CSV, API."""
    client = client or Client()
    query = f"?split={split}"
    return {
        "page": page_ids(client.get(f"{BOARD}/{query}")),
        "best": page_ids(client.get(f"{BOARD}/{query}&view=best")),
        "csv": _csv_ids(client.get(f"{BOARD}.csv{query}")),
        "api": [row["submission"] for row in client.get(f"{API}{query}").json()["results"]],
    }


def _one(submission) -> object:
    return Submission.objects.filter(pk=submission.pk)


def test_hide_disqualify_and_restore_take_entries_off_every_list_and_back(board, organiser):
    b, first, second, third = board["baseline"], board["first"], board["second"], board["third"]
    everything = _ids(first, second, third, b)
    assert _listed() == {
        "page": everything,
        "best": _ids(first, third, b),
        "csv": everything,
        "api": everything,
    }

    moderation.hide(
        submissions=_one(first), reason="Used the test targets.", user=organiser, now=AFTER
    )
    # ada's best entry is hidden: her second one represents her in "best per participant"
    assert _listed() == {
        "page": _ids(second, third, b),
        "best": _ids(second, third, b),
        "csv": _ids(second, third, b),
        "api": _ids(second, third, b),
    }
    ranks = [row["rank"] for row in Client().get(f"{API}?split=val").json()["results"]]
    assert ranks == [1, 2, 3]  # ranked without the hidden entry

    moderation.disqualify(
        submissions=_one(third), reason="Two accounts.", user=organiser, now=AFTER
    )
    assert _listed()["page"] == _ids(second, b)
    assert _listed()["best"] == _ids(second, b)

    moderation.restore(
        submissions=Submission.objects.filter(pk__in=[first.pk, third.pk]),
        user=organiser,
        now=AFTER,
    )
    assert _listed()["page"] == everything
    assert _listed()["best"] == _ids(first, third, b)


def test_the_owner_and_the_organisers_do_not_see_moderated_entries_listed_either(
    board, organiser, ada
):
    moderation.hide(
        submissions=_one(board["first"]), reason="Duplicate.", user=organiser, now=AFTER
    )
    for user in (ada, organiser):
        client = Client()
        client.force_login(user)
        assert board["first"].pk not in _listed(client)["page"]


def test_results_and_the_test_split_leave_out_moderated_entries(board, challenge, organiser):
    challenge.results_published = True
    challenge.save()
    moderation.disqualify(
        submissions=_one(board["first"]), reason="Late.", user=organiser, now=AFTER
    )
    moderation.hide(submissions=_one(board["third"]), reason="Spam.", user=organiser, now=AFTER)
    assert _listed(split="test")["page"] == _ids(board["second"], board["baseline"])
    page = Client().get(RESULTS).content.decode()
    assert f"/submissions/{board['second'].pk}/" in page
    assert f"/submissions/{board['first'].pk}/" not in page and "Late." not in page
    assert f"/submissions/{board['third'].pk}/" not in page and "Trees" not in page


def test_the_plot_leaves_out_moderated_entries_and_changes_its_version(board, gaze, organiser):
    before = plots.points(gaze, split="val", ranking="nlpd", point="nmse")
    version = plots.version(gaze)
    assert len(before.entries) == 3 and before.baseline is not None
    moderation.hide(
        submissions=_one(board["first"]), reason="Duplicate.", user=organiser, now=AFTER
    )
    moderation.disqualify(
        submissions=_one(board["third"]), reason="Cheating.", user=organiser, now=AFTER
    )
    after = plots.points(gaze, split="val", ranking="nlpd", point="nmse")
    assert after.entries == [(0.5, 0.2)] and after.baseline == before.baseline
    assert plots.version(gaze) != version
    svg = Client().get(f"{BOARD}/plot.svg?split=val").content.decode()
    assert "entries (1)" in svg


def test_a_disqualified_entry_is_public_and_says_why(board, organiser, grace):
    first = board["first"]
    moderation.disqualify(
        submissions=_one(first),
        reason="Trained on the validation targets.",
        user=organiser,
        now=AFTER,
    )
    for client in (Client(), _logged_in(grace)):
        response = client.get(f"/submissions/{first.pk}/")
        assert response.status_code == 200
        assert "Disqualified: Trained on the validation targets." in page_text(response)
    # restored: the notice goes
    moderation.restore(submissions=_one(first), user=organiser, now=AFTER)
    assert "Disqualified" not in page_text(Client().get(f"/submissions/{first.pk}/"))


def test_a_hidden_entry_is_its_owners_and_the_organisers_alone(board, organiser, staff, ada, grace):
    first = board["first"]
    moderation.hide(submissions=_one(first), reason="Duplicate of #2.", user=organiser, now=AFTER)
    url = f"/submissions/{first.pk}/"
    assert Client().get(url).status_code == 404
    assert _logged_in(grace).get(url).status_code == 404
    another = make_user("another", organiser_of=make_challenge(slug="other", title="Other"))
    assert _logged_in(another).get(url).status_code == 404
    for user in (ada, organiser, staff):
        response = _logged_in(user).get(url)
        assert response.status_code == 200
        assert "Hidden from the leaderboards by the organisers: Duplicate of #2." in page_text(
            response
        )


def test_events_record_who_when_and_why(board, organiser):
    first = board["first"]
    later = AFTER + timedelta(hours=2)
    moderation.hide(submissions=_one(first), reason="  Duplicate.  ", user=organiser, now=AFTER)
    moderation.disqualify(submissions=_one(first), reason="Cheating.", user=organiser, now=later)
    moderation.restore(
        submissions=_one(first), reason="", user=organiser, now=later + timedelta(hours=1)
    )
    events = list(first.moderation_events.order_by("at"))
    assert [(e.action, e.previous, e.reason, e.at, e.user, e.username) for e in events] == [
        (ModerationAction.HIDE, Moderation.NONE, "Duplicate.", AFTER, organiser, "organiser"),
        (
            ModerationAction.DISQUALIFY,
            Moderation.HIDDEN,
            "Cheating.",
            later,
            organiser,
            "organiser",
        ),
        (
            ModerationAction.RESTORE,
            Moderation.DISQUALIFIED,
            "",
            later + timedelta(hours=1),
            organiser,
            "organiser",
        ),
    ]
    first.refresh_from_db()
    assert (first.moderation, first.moderation_reason) == (Moderation.NONE, "")
    assert first.moderated_at == later + timedelta(hours=1)
    # the name stays when the user goes
    organiser.delete()
    assert [(e.user, e.username) for e in first.moderation_events.all()] == [
        (None, "organiser")
    ] * 3


def test_repeating_an_action_records_nothing_a_new_reason_does(board, organiser):
    first = board["first"]
    moderation.hide(submissions=_one(first), reason="Duplicate.", user=organiser, now=AFTER)
    outcome = moderation.hide(
        submissions=_one(first), reason="Duplicate.", user=organiser, now=AFTER
    )
    assert (outcome.changed, [s.pk for s in outcome.unchanged]) == ([], [first.pk])
    outcome = moderation.hide(
        submissions=_one(first), reason="Duplicate of #2.", user=organiser, now=AFTER
    )
    assert [s.pk for s in outcome.changed] == [first.pk]
    assert list(first.moderation_events.values_list("reason", flat=True)) == [
        "Duplicate of #2.",
        "Duplicate.",
    ]
    assert (
        moderation.restore(submissions=_one(board["second"]), user=organiser, now=AFTER).changed
        == []
    )


@pytest.mark.parametrize("action", [ModerationAction.HIDE, ModerationAction.DISQUALIFY])
@pytest.mark.parametrize("reason", ["", "   \n "])
def test_hiding_and_disqualifying_need_a_reason(board, organiser, action, reason):
    with pytest.raises(ValidationError, match="A reason is required"):
        moderation.moderate(
            submissions=_one(board["first"]),
            action=action,
            reason=reason,
            user=organiser,
            now=AFTER,
        )
    board["first"].refresh_from_db()
    assert board["first"].moderation == Moderation.NONE
    assert not ModerationEvent.objects.exists()


def test_too_long_a_reason_is_refused(board, organiser):
    with pytest.raises(ValidationError, match="at most 1000"):
        moderation.hide(
            submissions=_one(board["first"]), reason="x" * 1001, user=organiser, now=AFTER
        )


def test_the_database_refuses_a_moderated_entry_without_reason_and_a_moderated_baseline(board):
    for submission, fields in (
        (board["first"], {"moderation": Moderation.HIDDEN, "moderation_reason": ""}),
        (board["baseline"], {"moderation": Moderation.HIDDEN, "moderation_reason": "No."}),
    ):
        with pytest.raises(IntegrityError), transaction.atomic():
            Submission.objects.filter(pk=submission.pk).update(**fields)
    with pytest.raises(IntegrityError), transaction.atomic():
        ModerationEvent.objects.create(
            submission=board["first"],
            action=ModerationAction.HIDE,
            reason="",
            previous="none",
            at=AFTER,
        )


def test_baselines_are_never_moderated(board, organiser):
    outcome = moderation.disqualify(
        submissions=Submission.objects.filter(pk__in=_ids(board["baseline"], board["first"])),
        reason="Bad.",
        user=organiser,
        now=AFTER,
    )
    assert [s.pk for s in outcome.baselines] == [board["baseline"].pk]
    assert [s.pk for s in outcome.changed] == [board["first"].pk]
    board["baseline"].refresh_from_db()
    assert board["baseline"].moderation == Moderation.NONE
    assert board["baseline"].pk in _listed()["page"]


def test_only_organisers_of_the_entrys_challenge_moderate(board, organiser, ada):
    other = make_challenge(slug="other", title="Other")
    stranger = make_user("stranger", organiser_of=other)
    mixed = Submission.objects.filter(pk__in=_ids(board["first"], board["second"]))
    for user in (stranger, ada):
        with pytest.raises(PermissionDenied):
            moderation.hide(submissions=mixed, reason="Mine now.", user=user, now=AFTER)
        with pytest.raises(PermissionDenied):
            moderation.rescore(submissions=mixed, user=user, now=AFTER)
    assert not Submission.objects.exclude(moderation=Moderation.NONE).exists()
    assert not ModerationEvent.objects.exists()
    # an organiser of both challenges may, in one call
    make_dataset(other, "gaze")
    other.organisers.add(organiser)
    assert (
        len(moderation.hide(submissions=mixed, reason="Dup.", user=organiser, now=AFTER).changed)
        == 2
    )


def test_rescore_is_recorded_and_keeps_the_moderation(
    gaze, organiser, ada, submit_zip, django_capture_on_commit_callbacks
):
    with time_machine.travel(VALIDATION, tick=False):
        entry = submit_zip(ada, gaze.challenge, predictions("gaze"), now=VALIDATION)
    assert entry.status == "scored"
    moderation.disqualify(submissions=_one(entry), reason="Cheating.", user=organiser, now=AFTER)
    finished = entry.finished_at
    with django_capture_on_commit_callbacks(execute=True):
        count = moderation.rescore(submissions=_one(entry), user=organiser, now=AFTER)
    assert count == 1
    entry.refresh_from_db()
    assert entry.finished_at > finished and entry.status == "scored"
    assert (entry.moderation, entry.moderation_reason) == (Moderation.DISQUALIFIED, "Cheating.")
    event = entry.moderation_events.first()
    assert (event.action, event.previous, event.user, event.at) == (
        ModerationAction.RESCORE,
        Moderation.DISQUALIFIED,
        organiser,
        AFTER,
    )
    assert entry.pk not in _listed()["page"]


def test_a_real_scored_entry_leaves_and_rejoins_the_leaderboard(gaze, organiser, ada, submit_zip):
    with time_machine.travel(VALIDATION, tick=False):
        entry = submit_zip(ada, gaze.challenge, predictions("gaze"), now=VALIDATION)
    assert _listed()["page"] == [entry.pk]
    moderation.hide(submissions=_one(entry), reason="Duplicate.", user=organiser, now=AFTER)
    assert _listed() == {"page": [], "best": [], "csv": [], "api": []}
    moderation.restore(
        submissions=_one(entry), reason="Not a duplicate.", user=organiser, now=AFTER
    )
    assert _listed()["page"] == [entry.pk]


def _logged_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


# --- The plots follow moderation ------------------------------------------------------


def test_the_plot_version_changes_with_every_moderation(board, gaze, organiser):
    moderation.hide(submissions=_one(board["first"]), reason="Dup.", user=organiser, now=AFTER)
    first_hidden = plots.version(gaze)
    moderation.restore(submissions=_one(board["first"]), user=organiser, now=AFTER)
    moderation.hide(submissions=_one(board["second"]), reason="Dup.", user=organiser, now=AFTER)
    assert plots.version(gaze) != first_hidden


def test_the_plot_does_not_count_moderated_entries_as_left_out(gaze, ada, organiser):
    entry = add_entry(gaze, user=ada, created=at(0), val=reg(float("inf"), 0.5))
    moderation.hide(submissions=_one(entry), reason="Broken file.", user=organiser, now=AFTER)
    assert (
        plots.left_out_count(gaze, split="val", ranking="nlpd", point="nmse", baseline_id=None) == 0
    )


def test_publication_counts_the_test_scores_of_disqualified_entries_not_hidden_ones(
    gaze, ada, organiser
):
    """Publishing shows a disqualified entry's test scores on its own page, not a hidden
    one's: the confirmation page counts exactly those."""
    from challenge_site.challenges.publication import exposure

    kept = add_entry(gaze, user=ada, created=at(0), val=reg(1, 1), test=reg(1, 1))
    out = add_entry(gaze, user=ada, created=at(1), val=reg(1, 1), test=reg(1, 1))
    hidden = add_entry(gaze, user=ada, created=at(2), val=reg(1, 1), test=reg(1, 1))
    moderation.disqualify(submissions=_one(out), reason="Leak.", user=organiser, now=AFTER)
    moderation.hide(submissions=_one(hidden), reason="Dup.", user=organiser, now=AFTER)
    per_dataset = exposure(gaze.challenge, now=AFTER).datasets[0]
    scores_per_entry = kept.scores.filter(split="test").count()
    assert per_dataset.test_entries == 2
    assert per_dataset.test_scores == 2 * scores_per_entry
