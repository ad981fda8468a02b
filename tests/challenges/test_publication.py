"""Publication guard (issue 10, finding 9): results are published only after the deadline,
from every path; publishing shows first what becomes public; publications, withdrawals
and replaced target files are recorded; a replacement after publication is announced."""

from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.test import Client
from django.urls import reverse

from challenge_site.challenges.models import Challenge, ChallengeEvent, EventKind
from challenge_site.challenges.services import (
    check_publication,
    publish_results,
    withdraw_results,
)
from challenge_site.submissions.models import Score, Status, Submission
from tests.console.helpers import challenge_form
from tests.factories import (
    DEADLINE,
    TEST_START,
    dataset_admin_form,
    make_challenge,
    make_dataset,
    make_user,
)
from tests.pages import page_text

SECOND = timedelta(seconds=1)
TEST_PHASE = datetime(2030, 2, 3, 12, 0, tzinfo=UTC)
AFTER = datetime(2030, 3, 1, 12, 0, tzinfo=UTC)
TOO_EARLY = "Results can be published after the deadline, 08 Feb 2030 23:59:59 UTC."
CHANGELIST = "/admin/challenges/challenge/"


@pytest.fixture
def admin_user(db):
    return User.objects.create_superuser("admin", "admin@example.org", "pw")


@pytest.fixture
def admin_client(admin_user, settings):
    settings.SESSION_COOKIE_AGE = 50 * 365 * 24 * 3600  # still logged in when tests travel
    client = Client()
    client.force_login(admin_user)
    return client


def scored_entry(dataset, user, *, test=True) -> Submission:
    """A scored test-phase entry with val (and test) scores, as the pipeline stores them."""
    submission = Submission.objects.create(
        user=user,
        dataset=dataset,
        method="Method",
        created=TEST_PHASE,
        queued_at=TEST_PHASE,
        phase="test",
        status=Status.SCORED,
        splits=["val", "test"] if test else ["val"],
    )
    splits = ("val", "test") if test else ("val",)
    Score.objects.bulk_create(
        Score(submission=submission, dataset=dataset, split=split, loss=loss, value=0.5)
        for split in splits
        for loss in ("nlpd", "nmse", "crps")
    )
    return submission


# --- The rule: services.check_publication, at an explicit now -----------------------


@pytest.mark.parametrize("now", [TEST_START, TEST_PHASE, DEADLINE])
def test_check_publication_refuses_published_results_up_to_the_deadline(challenge, now):
    challenge.results_published = True
    with pytest.raises(ValidationError) as error:
        check_publication(challenge=challenge, now=now)
    assert error.value.message_dict == {"results_published": [TOO_EARLY]}
    check_publication(challenge=challenge, now=DEADLINE + SECOND)
    challenge.results_published = False
    check_publication(challenge=challenge, now=now)  # nothing public, nothing to refuse


def test_the_deadline_of_published_results_cannot_move_into_the_future(challenge, admin_user):
    publish_results(challenge=challenge, user=admin_user, now=AFTER)
    challenge.deadline = AFTER + timedelta(days=1)
    with pytest.raises(ValidationError) as error:
        check_publication(challenge=challenge, now=AFTER)
    assert error.value.message_dict == {
        "deadline": [
            "The results are published, so the deadline must have passed: withdraw them "
            "before moving it to 02 Mar 2030 12:00 UTC."
        ]
    }
    check_publication(challenge=challenge, now=AFTER + timedelta(days=2))


def test_save_only_saves(challenge):
    """Neither the clock nor a record: publishing goes through the services, which are
    given ``now`` and record who did it."""
    with time_machine.travel(TEST_PHASE, tick=False):
        challenge.results_published = True
        challenge.save()
    assert Challenge.objects.get().results_published is True
    assert not ChallengeEvent.objects.exists()


def test_the_change_form_keeps_the_deadline_of_published_results_past(
    admin_client, admin_user, challenge
):
    data = challenge_form(deadline_0="2030-04-01", **{"datasets-TOTAL_FORMS": "0"})
    url = reverse("admin:challenges_challenge_change", args=[challenge.pk])
    with time_machine.travel(AFTER, tick=False):
        publish_results(challenge=challenge, user=admin_user, now=AFTER)
        response = admin_client.post(url, {**data, "slug": "demo"})
    assert response.status_code == 200
    assert "withdraw them before moving it to 01 Apr 2030 23:59:59 UTC." in page_text(response)
    challenge.refresh_from_db()
    assert challenge.deadline == DEADLINE


# --- The services -------------------------------------------------------------------


def test_publish_results_refuses_before_the_deadline_and_records_after(challenge, admin_user):
    gaze = make_dataset(challenge, "gaze")
    scored_entry(gaze, make_user("ada"))
    with pytest.raises(ValidationError) as error:
        publish_results(challenge=challenge, user=admin_user, now=DEADLINE)
    assert error.value.messages == [TOO_EARLY]
    challenge.refresh_from_db()
    assert challenge.results_published is False

    with time_machine.travel(AFTER, tick=False):
        assert publish_results(challenge=challenge, user=admin_user, now=AFTER) is True
        assert publish_results(challenge=challenge, user=admin_user, now=AFTER) is False
    challenge.refresh_from_db()
    assert challenge.results_published is True
    event = ChallengeEvent.objects.get()
    assert (event.kind, event.user, event.username, event.at) == (
        EventKind.PUBLISHED,
        admin_user,
        "admin",
        AFTER,
    )
    assert event.detail == {
        "datasets": [{"name": "gaze", "test_entries": 1, "test_scores": 3, "test_targets": []}]
    }

    with time_machine.travel(AFTER + SECOND, tick=False):
        assert withdraw_results(challenge=challenge, user=admin_user, now=AFTER) is True
    assert ChallengeEvent.objects.latest("id").kind == EventKind.WITHDRAWN
    challenge.refresh_from_db()
    assert challenge.results_published is False


# --- The admin ----------------------------------------------------------------------


def _action(client, action, *challenges, **extra):
    data = {"action": action, "_selected_action": [c.pk for c in challenges], **extra}
    return client.post(CHANGELIST, data, follow=True)


def test_the_action_refuses_before_the_deadline_saying_when(admin_client, challenge):
    with time_machine.travel(TEST_PHASE, tick=False):
        response = _action(admin_client, "publish_results", challenge, post="yes")
    text = page_text(response)
    assert f"Cannot publish the results of “Demo challenge” yet: {TOO_EARLY}" in text
    assert response.redirect_chain == [(CHANGELIST, 302)]
    challenge.refresh_from_db()
    assert challenge.results_published is False
    assert not ChallengeEvent.objects.exists()


def test_the_action_lists_what_becomes_public_then_publishes(admin_client, admin_user, challenge):
    challenge.test_targets_release = "after_publication"
    challenge.save()
    gaze = make_dataset(challenge, "gaze")
    make_dataset(challenge, "catalysis", task="classification", seed=3)
    ada, grace = make_user("ada"), make_user("grace")
    scored_entry(gaze, ada), scored_entry(gaze, grace), scored_entry(gaze, ada, test=False)
    failed = scored_entry(gaze, grace)
    Submission.objects.filter(pk=failed.pk).update(status=Status.FAILED)
    early = make_challenge(slug="early", title="Early", deadline=AFTER + timedelta(days=3))

    with time_machine.travel(AFTER, tick=False):
        response = _action(admin_client, "publish_results", challenge, early)
    assert response.status_code == 200 and response.redirect_chain == []
    text = page_text(response)
    assert "Publish results? Check what becomes public" in text
    assert "Cannot publish the results of “Early” yet: Results can be published after the " in text
    assert "Datasets: catalysis, gaze." in text
    assert "Becoming public: 2 test-split entries with 6 scores." in text
    assert (
        "gaze: 2 test-split entries (6 scores); test target files downloadable: "
        "gaze_test_targets.txt." in text
    )
    assert (
        "catalysis: 0 test-split entries (0 scores); test target files downloadable: "
        "catalysis_test_targets.txt." in text
    )
    assert f'name="_selected_action" value="{early.pk}"' not in response.content.decode()
    assert not Challenge.objects.filter(results_published=True).exists()  # not yet

    with time_machine.travel(AFTER, tick=False):
        response = _action(admin_client, "publish_results", challenge, post="yes")
    assert "Results published for 1 challenge(s)." in page_text(response)
    challenge.refresh_from_db()
    assert challenge.results_published is True
    event = ChallengeEvent.objects.get()
    assert (event.kind, event.user, event.via, event.at) == (
        EventKind.PUBLISHED,
        admin_user,
        "admin",
        AFTER,
    )
    assert event.detail["datasets"][1] == {
        "name": "gaze",
        "test_entries": 2,
        "test_scores": 6,
        "test_targets": ["gaze_test_targets.txt"],
    }


def test_targets_that_are_never_released_are_said_to_stay_private(admin_client, challenge):
    make_dataset(challenge, "gaze")
    with time_machine.travel(AFTER, tick=False):
        text = page_text(_action(admin_client, "publish_results", challenge))
    assert "gaze: 0 test-split entries (0 scores); no target file released." in text
    assert "Test targets: never released (the challenge's setting)." in text


def test_withdrawal_confirms_too(admin_client, admin_user, challenge):
    with time_machine.travel(AFTER, tick=False):
        publish_results(challenge=challenge, user=admin_user, now=AFTER)
        response = _action(admin_client, "unpublish_results", challenge)
        assert "Withdraw results? Check what becomes hidden" in page_text(response)
        challenge.refresh_from_db()
        assert challenge.results_published is True
        response = _action(admin_client, "unpublish_results", challenge, post="yes")
    assert "Results withdrawn for 1 challenge(s)." in page_text(response)
    challenge.refresh_from_db()
    assert challenge.results_published is False
    assert [e.kind for e in ChallengeEvent.objects.order_by("id")] == ["published", "withdrawn"]


def test_the_change_form_has_no_checkbox_but_a_confirmed_button(admin_client, challenge):
    change = reverse("admin:challenges_challenge_change", args=[challenge.pk])
    publish = reverse("admin:challenges_challenge_publish", args=[challenge.pk])
    with time_machine.travel(TEST_PHASE, tick=False):
        page = admin_client.get(change)
        assert 'name="results_published"' not in page.content.decode()
        assert f"Not published. {TOO_EARLY}" in page_text(page)
        assert f'href="{publish}"' in page.content.decode()
        response = admin_client.post(publish, {"post": "yes"}, follow=True)
    assert response.redirect_chain == [(change, 302)]
    assert f"Cannot publish the results of “Demo challenge” yet: {TOO_EARLY}" in page_text(response)
    challenge.refresh_from_db()
    assert challenge.results_published is False

    with time_machine.travel(AFTER, tick=False):
        page = admin_client.get(publish)
        assert 'value="Yes, publish the results"' in page.content.decode()
        response = admin_client.post(publish, {"post": "yes"}, follow=True)
        assert "Results published for 1 challenge(s)." in page_text(response)
        page = admin_client.get(change)
    assert "Published. “Withdraw results…” above hides the test scores again." in page_text(page)
    assert "Results published" in page_text(page)  # the history inline


def test_a_forged_checkbox_in_the_change_form_is_ignored(admin_client, challenge):
    data = challenge_form(
        slug="demo",
        title="Demo challenge",
        results_published="on",
        **{"datasets-TOTAL_FORMS": "0"},
    )
    data.update(
        {
            "events-TOTAL_FORMS": "0",
            "events-INITIAL_FORMS": "0",
            "events-MIN_NUM_FORMS": "0",
            "events-MAX_NUM_FORMS": "0",
        }
    )
    url = reverse("admin:challenges_challenge_change", args=[challenge.pk])
    with time_machine.travel(TEST_PHASE, tick=False):
        response = admin_client.post(url, data)
    assert response.status_code == 302, page_text(response)
    challenge.refresh_from_db()
    assert challenge.results_published is False


def test_events_are_read_only_for_staff(admin_client, admin_user, challenge):
    with time_machine.travel(AFTER, tick=False):
        publish_results(challenge=challenge, user=admin_user, now=AFTER)
    event = ChallengeEvent.objects.get()
    listing = admin_client.get(reverse("admin:challenges_challengeevent_changelist"))
    assert "Results published" in page_text(listing)
    assert admin_client.get(reverse("admin:challenges_challengeevent_add")).status_code == 403
    detail = admin_client.get(reverse("admin:challenges_challengeevent_change", args=[event.pk]))
    assert detail.status_code == 200 and 'name="kind"' not in detail.content.decode()
    delete = reverse("admin:challenges_challengeevent_delete", args=[event.pk])
    assert admin_client.post(delete, {"post": "yes"}).status_code == 403
    anonymous = Client().get(reverse("admin:challenges_challengeevent_changelist"))
    assert anonymous.status_code == 302


# --- Replaced target files: recorded; after publication, announced -----------------


def _upload(client, dataset, files):
    data = dataset_admin_form(dataset.challenge, files, name=dataset.name, task=dataset.task)
    url = reverse("admin:datasets_dataset_change", args=[dataset.pk])
    return client.post(url, data, follow=True)


NEW_TEST_TARGETS = b"0.1\n0.2\n0.3\n0.4\n0.5\n"


def test_a_replaced_target_file_is_recorded_with_both_hashes(admin_client, admin_user, challenge):
    gaze = make_dataset(challenge, "gaze")
    old = gaze.files.get(split="test", kind="targets").sha256
    with time_machine.travel(TEST_PHASE, tick=False):
        _upload(admin_client, gaze, {"gaze_test_targets.txt": NEW_TEST_TARGETS})
        _upload(admin_client, gaze, {"gaze_test_inputs.txt": b"1 2 3\n" * 5})  # not recorded
    new = gaze.files.get(split="test", kind="targets").sha256
    event = ChallengeEvent.objects.get()
    assert (event.kind, event.user, event.via, event.at) == (
        EventKind.TARGETS_REPLACED,
        admin_user,
        "dataset admin",
        TEST_PHASE,
    )
    assert event.detail == {
        "dataset": "gaze",
        "file": "gaze_test_targets.txt",
        "split": "test",
        "old_sha256": old,
        "new_sha256": new,
        "results_revised": False,
    }
    challenge.refresh_from_db()
    assert challenge.results_revised_at is None
    page = admin_client.get(reverse("admin:challenges_challenge_change", args=[challenge.pk]))
    assert f"gaze_test_targets.txt (test split): sha256 {old[:12]}… → {new[:12]}…" in page_text(
        page
    )


def test_replacing_targets_after_publication_revises_the_results(
    admin_client, admin_user, challenge
):
    gaze = make_dataset(challenge, "gaze")
    with time_machine.travel(AFTER, tick=False):
        publish_results(challenge=challenge, user=admin_user, now=AFTER)
        assert "revised" not in page_text(Client().get("/challenges/demo/results/"))
    revised = datetime(2030, 3, 12, 9, 30, tzinfo=UTC)
    with time_machine.travel(revised, tick=False):
        response = _upload(admin_client, gaze, {"gaze_test_targets.txt": NEW_TEST_TARGETS})
        assert "the challenge's pages say the results were revised today" in page_text(response)
        results = page_text(Client().get("/challenges/demo/results/"))
        detail = page_text(Client().get("/challenges/demo/"))
    challenge.refresh_from_db()
    assert challenge.results_revised_at == revised
    assert "Results revised on 12 Mar 2030" in results
    assert "Results revised on 12 Mar 2030" in detail
    event = ChallengeEvent.objects.latest("id")
    assert (event.kind, event.detail["results_revised"]) == (EventKind.TARGETS_REPLACED, True)


def test_a_deleted_target_file_is_recorded(admin_client, admin_user, challenge):
    gaze = make_dataset(challenge, "gaze")
    files = list(gaze.files.order_by("id"))
    val_targets = next(f for f in files if (f.split, f.kind) == ("val", "targets"))
    data = {
        "challenge": challenge.pk,
        "name": "gaze",
        "task": "regression",
        "position": "0",
        "log_base": "2.718281828459045",
        "allow_samples": "on",
        "min_quantile_gap": "0",
        "nmse_normaliser": "evaluated",
        "files-TOTAL_FORMS": str(len(files)),
        "files-INITIAL_FORMS": str(len(files)),
        "files-MIN_NUM_FORMS": "0",
        "files-MAX_NUM_FORMS": "0",
        **{f"files-{i}-id": f.pk for i, f in enumerate(files)},
        **{f"files-{i}-dataset": gaze.pk for i in range(len(files))},
        f"files-{files.index(val_targets)}-DELETE": "on",
    }
    with time_machine.travel(TEST_PHASE, tick=False):
        response = admin_client.post(reverse("admin:datasets_dataset_change", args=[gaze.pk]), data)
    assert response.status_code == 302, page_text(response)
    event = ChallengeEvent.objects.get()
    assert (event.kind, event.user, event.detail["file"], event.detail["new_sha256"]) == (
        EventKind.TARGETS_DELETED,
        admin_user,
        "gaze_val_targets.txt",
        "",
    )
    assert event.detail["old_sha256"] == val_targets.sha256
