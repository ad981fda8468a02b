"""console.admin: each challenge's console page (ChallengeAdmin): its list and actions,
a new challenge with its datasets inline, and their files uploaded from it."""

from datetime import UTC, datetime

import pytest
import time_machine
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from challenge_site.challenges.models import Challenge
from datasets.models import Dataset
from datasets.opening import missing_for_opening
from tests.console.helpers import challenge_form, client_of
from tests.factories import dataset_files, make_challenge, make_user

AFTER_DEADLINE = datetime(2030, 3, 1, tzinfo=UTC)
SETUP = datetime(2029, 12, 1, tzinfo=UTC)  # before make_challenge's dates


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


def test_organiser_creates_a_challenge_with_a_dataset_inline(admin_client):
    response = admin_client.post(reverse("admin:challenges_challenge_add"), challenge_form())
    assert response.status_code == 302, response.content.decode()
    dataset = Dataset.objects.get()
    assert (dataset.challenge.slug, dataset.name, dataset.task) == ("new", "gaze", "regression")


def test_inline_refuses_a_loss_of_the_other_task_and_dates_out_of_order(admin_client):
    response = admin_client.post(
        reverse("admin:challenges_challenge_add"),
        challenge_form(**{"datasets-0-ranking_loss": "nlp", "deadline_0": "2030-01-01"}),
    )
    page = response.content.decode()
    assert response.status_code == 200
    assert "expected one of nlpd" in page
    assert "Dates must satisfy start ≤ test start &lt; deadline." in page
    assert not Challenge.objects.exists()


@time_machine.travel(SETUP, tick=False)
def test_dataset_files_are_uploaded_from_the_challenge_page(db):
    """A new challenge, its dataset and the dataset's six files in one form; the files
    are checked as on the dataset's page (a bad one stops the whole form)."""
    founder = make_user("founder", is_superuser=True)
    client = client_of(founder)
    files = dataset_files("gaze", task="regression")

    def uploads(named):
        return [SimpleUploadedFile(name, data, "text/plain") for name, data in named.items()]

    bad = {**files, "gaze_val_targets.txt": b"1\nabc\n"}
    response = client.post(
        reverse("admin:challenges_challenge_add"),
        challenge_form(**{"datasets-0-upload": uploads(bad)}),
    )
    assert response.status_code == 200
    assert "gaze_val_targets.txt:2" in response.content.decode()
    assert not Challenge.objects.exists()

    response = client.post(
        reverse("admin:challenges_challenge_add"),
        challenge_form(**{"datasets-0-upload": uploads(files)}),
        follow=True,
    )
    assert "Stored gaze_" in response.content.decode()
    dataset = Dataset.objects.get(challenge__slug="new")
    assert dataset.files.count() == 6 and dataset.n_test == 5
    assert missing_for_opening(dataset.challenge, now=SETUP) == []
