from datetime import UTC, datetime

import pytest
import time_machine
from django.contrib.auth.models import User
from django.urls import reverse

from challenge_site.challenges.models import Challenge
from datasets.models import Dataset
from tests.factories import make_challenge

AFTER_DEADLINE = datetime(2030, 3, 1, tzinfo=UTC)


@pytest.fixture
def admin_client(client, db):
    client.force_login(User.objects.create_superuser("admin", "admin@example.org", "pw"))
    return client


def test_publish_and_unpublish_actions(admin_client):
    """After the deadline, once confirmed (see test_publication for the guard and the page)."""
    first, second = make_challenge(slug="a"), make_challenge(slug="b")
    url = reverse("admin:challenges_challenge_changelist")
    selected = {"_selected_action": [first.pk, second.pk]}
    with time_machine.travel(AFTER_DEADLINE, tick=False):
        admin_client.force_login(User.objects.get(username="admin"))
        response = admin_client.post(url, {"action": "publish_results", **selected})
        assert "Yes, publish the results" in response.content.decode()
        response = admin_client.post(
            url, {"action": "publish_results", "post": "yes", **selected}, follow=True
        )
        assert "Results published for 2 challenge(s)." in response.content.decode()
        assert list(Challenge.objects.values_list("results_published", flat=True)) == [True, True]
        admin_client.post(
            url, {"action": "unpublish_results", "post": "yes", "_selected_action": [first.pk]}
        )
    first.refresh_from_db(), second.refresh_from_db()
    assert (first.results_published, second.results_published) == (False, True)


def test_changelist_shows_phase(admin_client):
    make_challenge()
    response = admin_client.get(reverse("admin:challenges_challenge_changelist"))
    assert response.status_code == 200
    assert "Upcoming" in response.content.decode()


def _challenge_form(**overrides):
    data = {
        "slug": "new",
        "title": "New challenge",
        "description": "",
        "start_0": "2030-01-10",
        "start_1": "00:00:00",
        "test_start_0": "2030-02-01",
        "test_start_1": "00:00:00",
        "deadline_0": "2030-02-08",
        "deadline_1": "23:59:59",
        "test_inputs_release": "test_start",
        "test_targets_release": "never",
        "val_daily_limit": "",
        "test_daily_limit": "5",
        "test_total_limit": "",
        "datasets-TOTAL_FORMS": "1",
        "datasets-INITIAL_FORMS": "0",
        "datasets-MIN_NUM_FORMS": "0",
        "datasets-MAX_NUM_FORMS": "1000",
        "datasets-0-name": "gaze",
        "datasets-0-task": "regression",
        "datasets-0-position": "0",
        "datasets-0-log_base": "2.718281828459045",
        "datasets-0-min_quantile_gap": "0",
        "datasets-0-nmse_normaliser": "evaluated",
        "datasets-0-ranking_loss": "",
        "datasets-0-allow_samples": "on",
    }
    data.update(overrides)
    return data


def test_organiser_creates_a_challenge_with_a_dataset_inline(admin_client):
    response = admin_client.post(reverse("admin:challenges_challenge_add"), _challenge_form())
    assert response.status_code == 302, response.content.decode()
    dataset = Dataset.objects.get()
    assert (dataset.challenge.slug, dataset.name, dataset.task) == ("new", "gaze", "regression")


def test_inline_refuses_a_loss_of_the_other_task_and_dates_out_of_order(admin_client):
    response = admin_client.post(
        reverse("admin:challenges_challenge_add"),
        _challenge_form(**{"datasets-0-ranking_loss": "nlp", "deadline_0": "2030-01-01"}),
    )
    page = response.content.decode()
    assert response.status_code == 200
    assert "expected one of nlpd" in page
    assert "Dates must satisfy start ≤ test start &lt; deadline." in page
    assert not Challenge.objects.exists()
