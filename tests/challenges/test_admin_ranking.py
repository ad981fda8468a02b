"""challenges.admin_ranking: the ranking and feedback options on the challenge's console
page: the public part of the test set, the final entries and the Ladder; their checks,
and what a saved change sets off."""

from contextlib import contextmanager

import pytest
import time_machine
from django.contrib.auth.models import User
from django.urls import reverse

from challenge_site.challenges.admin_ranking import ladder_refusal
from challenge_site.submissions.models import Score, Submission
from challenge_site.submissions.services import refresh_baseline
from datasets.models import Dataset
from tests.console.helpers import challenge_form
from tests.factories import (
    TEST_PHASE,
    VALIDATION,
    dataset_admin_form,
    make_challenge,
    make_dataset,
    make_user,
)


@pytest.fixture
def admin_client(client, db):
    client.force_login(User.objects.create_superuser("admin", "admin@example.org", "pw"))
    return client


def test_the_ladder_refuses_losses_without_per_example_terms():
    assert ladder_refusal(name="iris", task="classification", ranking_loss="lift") == (
        "The Ladder needs per-example loss terms, and dataset “iris” ranks by lift, which "
        "has none: choose another ranking loss for it, or exact scores."
    )
    assert ladder_refusal(name="iris", task="classification", ranking_loss="brier") is None
    assert ladder_refusal(name="gaze", task="regression", ranking_loss="") is None  # nlpd
    assert ladder_refusal(name="gaze", task="regression", ranking_loss="nope") is None


def _edit_form(challenge, datasets, **overrides):
    """The change page's form of ``challenge`` with its ``datasets`` as inline rows."""
    data = challenge_form(
        slug=challenge.slug,
        title=challenge.title,
        test_public_fraction=str(challenge.test_public_fraction),
        final_entries=str(challenge.final_entries),
        feedback=challenge.feedback,
        **{"datasets-TOTAL_FORMS": str(len(datasets))},
        **{"datasets-INITIAL_FORMS": str(len(datasets))},
    )
    data = {k: v for k, v in data.items() if not k.startswith("datasets-0-")}
    for index, dataset in enumerate(datasets):
        data.update(
            {
                f"datasets-{index}-id": dataset.pk,
                f"datasets-{index}-challenge": challenge.pk,
                f"datasets-{index}-name": dataset.name,
                f"datasets-{index}-task": dataset.task,
                f"datasets-{index}-position": str(index),
                f"datasets-{index}-log_base": "e",
                f"datasets-{index}-ranking_loss": dataset.ranking_loss,
            }
        )
    data.update(overrides)
    return data


@contextmanager
def _at(client, when):
    """The clock at ``when``, the admin logged in again (the session would have expired)."""
    with time_machine.travel(when, tick=False):
        client.force_login(User.objects.get(username="admin"))
        yield


def _change_url(challenge) -> str:
    return reverse("admin:challenges_challenge_change", args=[challenge.pk])


def test_the_options_are_shown_with_their_help_texts(admin_client):
    challenge = make_challenge()
    page = admin_client.get(_change_url(challenge)).content.decode()
    assert "Ranking and feedback" in page
    for name in ("test_public_fraction", "final_entries", "feedback"):
        assert f'name="{name}"' in page
    assert "Share of the test examples scored at once" in page
    assert "Test entries per participant and dataset that count for the final" in page
    assert "rounded to that precision, so that probing the leaderboard gains nothing" in page


def test_the_public_part_is_fixed_once_the_test_phase_has_begun(admin_client):
    challenge = make_challenge()
    gaze = make_dataset(challenge, "gaze")
    with _at(admin_client, TEST_PHASE):
        response = admin_client.post(
            _change_url(challenge), _edit_form(challenge, [gaze], test_public_fraction="0.3")
        )
        page = response.content.decode()
        assert response.status_code == 200
        assert "The public part is fixed once test entries are scored" in page
        assert "the test phase began on 01 Feb 2030 00:00 UTC" in page
        challenge.refresh_from_db()
        assert challenge.test_public_fraction == 0.0
        # the same share, with other changes, is saved
        response = admin_client.post(
            _change_url(challenge), _edit_form(challenge, [gaze], title="Renamed")
        )
        assert response.status_code == 302 and "login" not in response.url
    challenge.refresh_from_db()
    assert (challenge.title, challenge.test_public_fraction) == ("Renamed", 0.0)


def test_a_new_public_part_before_the_test_phase_rescores_the_baselines(
    admin_client, django_capture_on_commit_callbacks
):
    challenge = make_challenge()
    gaze = make_dataset(challenge, "gaze")
    with django_capture_on_commit_callbacks(execute=True):
        baseline = refresh_baseline(dataset=gaze, now=VALIDATION)
    assert not Score.objects.filter(submission=baseline, split="public").exists()
    with _at(admin_client, VALIDATION), django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(
            _change_url(challenge),
            _edit_form(challenge, [gaze], test_public_fraction="0.4"),
            follow=True,
        )
    assert "1 entry (baselines included) queued to be scored again" in response.content.decode()
    challenge.refresh_from_db()
    assert challenge.test_public_fraction == 0.4
    splits = set(Score.objects.filter(submission=baseline).values_list("split", flat=True))
    assert {"test", "public", "private"} <= splits


def test_the_ladder_needs_ranking_losses_with_per_example_terms(admin_client):
    challenge = make_challenge()
    iris = make_dataset(challenge, "iris", task="classification", ranking_loss="lift")
    gaze = make_dataset(challenge, "gaze")
    response = admin_client.post(
        _change_url(challenge), _edit_form(challenge, [iris, gaze], feedback="ladder")
    )
    page = response.content.decode()
    assert response.status_code == 200
    assert "dataset “iris” ranks by lift, which has none" in page
    assert "“gaze”" not in page
    challenge.refresh_from_db()
    assert challenge.feedback == "exact"

    Dataset.objects.filter(pk=iris.pk).update(ranking_loss="brier")
    iris.refresh_from_db()
    response = admin_client.post(
        _change_url(challenge), _edit_form(challenge, [iris, gaze], feedback="ladder")
    )
    assert response.status_code == 302 and "login" not in response.url
    challenge.refresh_from_db()
    assert challenge.feedback == "ladder"
    # now a dataset's loss without terms is refused, in the inline and on its own page
    response = admin_client.post(
        _change_url(challenge),
        _edit_form(challenge, [iris, gaze], **{"datasets-0-ranking_loss": "ece"}),
    )
    assert "dataset “iris” ranks by ece, which has none" in response.content.decode()
    response = admin_client.post(
        reverse("admin:datasets_dataset_change", args=[iris.pk]),
        dataset_admin_form(challenge, {}, name="iris", task="classification", ranking_loss="ece"),
    )
    assert "dataset “iris” ranks by ece, which has none" in response.content.decode()
    iris.refresh_from_db()
    assert iris.ranking_loss == "brier"


def _test_entries(challenge, submit_zip):
    """gaze with a public part and three scored test entries of one participant."""
    from tests.submissions.helpers import predictions

    gaze = make_dataset(challenge, "gaze")
    user = make_user("ada")
    entries = [
        submit_zip(user, challenge, predictions("gaze", ("val", "test"), seed=seed), now=TEST_PHASE)
        for seed in (1, 2, 3)
    ]
    assert all(e.status == "scored" for e in entries), [e.failure for e in entries]
    return gaze, entries


def test_changing_the_final_entries_recomputes_those_that_count(admin_client, submit_zip):
    challenge = make_challenge(test_public_fraction=0.4)
    gaze, entries = _test_entries(challenge, submit_zip)
    counted = Submission.objects.filter(pk__in=[e.pk for e in entries], in_final_ranking=True)
    assert counted.count() == 2
    with _at(admin_client, TEST_PHASE):
        response = admin_client.post(
            _change_url(challenge), _edit_form(challenge, [gaze], final_entries="3")
        )
    assert response.status_code == 302 and "login" not in response.url
    assert counted.count() == 3


@pytest.mark.parametrize("page", ["challenge", "dataset"])
def test_a_changed_ranking_loss_recomputes_the_ladder(admin_client, submit_zip, page):
    challenge = make_challenge(test_public_fraction=0.4)
    gaze, entries = _test_entries(challenge, submit_zip)

    def shown(loss):
        return Score.objects.filter(
            submission__in=entries, split="val", loss=loss, ladder_value__isnull=False
        ).count()

    assert (shown("nlpd"), shown("crps")) == (3, 0)
    with _at(admin_client, TEST_PHASE):
        if page == "challenge":
            url = _change_url(challenge)
            data = _edit_form(challenge, [gaze], **{"datasets-0-ranking_loss": "crps"})
        else:
            url = reverse("admin:datasets_dataset_change", args=[gaze.pk])
            data = dataset_admin_form(challenge, {}, ranking_loss="crps")
        response = admin_client.post(url, data)
    assert response.status_code == 302 and "login" not in response.url
    assert (shown("nlpd"), shown("crps")) == (0, 3)


def test_a_public_part_brings_the_ladder_unless_exact_is_chosen_and_then_warns(admin_client):
    challenge = make_challenge()
    gaze = make_dataset(challenge, "gaze")
    with _at(admin_client, VALIDATION):
        response = admin_client.post(
            _change_url(challenge),
            _edit_form(challenge, [gaze], test_public_fraction="0.4"),
            follow=True,
        )
        assert "With a public part the feedback is now the Ladder" in response.content.decode()
        challenge.refresh_from_db()
        assert challenge.feedback == "ladder"
        # Exact scores chosen on purpose are kept, with the warning each time.
        response = admin_client.post(
            _change_url(challenge), _edit_form(challenge, [gaze], feedback="exact"), follow=True
        )
        page = response.content.decode()
        assert "Exact feedback with a public part lets participants read which test" in page
    challenge.refresh_from_db()
    assert (challenge.feedback, challenge.test_public_fraction) == ("exact", 0.4)


def test_the_boards_ladder_and_late_joiners_are_options_with_their_warnings(admin_client):
    challenge = make_challenge(test_public_fraction=0.4, feedback="ladder")
    gaze = make_dataset(challenge, "gaze")
    with _at(admin_client, VALIDATION):
        # Each participant's Ladder, late joiners with feedback: both warnings.
        form = _edit_form(challenge, [gaze], late_joiners_feedback="on")
        page = admin_client.post(_change_url(challenge), form, follow=True).content.decode()
        assert "Each participant&#x27;s Ladder shows every account its own first" in page
        assert "Accounts that join during the test phase get public feedback" in page
        # The board's Ladder, late joiners without feedback (the box unticked): none.
        form = _edit_form(challenge, [gaze], feedback="board_ladder")
        page = admin_client.post(_change_url(challenge), form, follow=True).content.decode()
        assert "Each participant&#x27;s Ladder shows" not in page
        assert "Accounts that join during the test phase get public feedback" not in page
    challenge.refresh_from_db()
    assert (challenge.feedback, challenge.late_joiners_feedback) == ("board_ladder", False)


def test_the_boards_ladder_needs_ranking_losses_with_per_example_terms(admin_client):
    challenge = make_challenge()
    iris = make_dataset(challenge, "iris", task="classification", ranking_loss="lift")
    response = admin_client.post(
        _change_url(challenge), _edit_form(challenge, [iris], feedback="board_ladder")
    )
    assert "dataset “iris” ranks by lift, which has none" in response.content.decode()
    challenge.refresh_from_db()
    assert challenge.feedback == "exact"
