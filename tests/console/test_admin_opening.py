"""console.admin_opening: "Open challenge…": a draft leaves its draft only through this
page, which first lists what is missing and asks (what is missing: datasets.opening,
tests/datasets/test_opening.py)."""

from datetime import UTC, datetime

import time_machine
from django.contrib.auth.models import Permission
from django.test import Client
from django.urls import reverse

from challenge_site.challenges.models import Challenge, EventKind
from tests.console.helpers import challenge_form, client_of
from tests.factories import dataset_admin_form, dataset_files, make_user

SETUP = datetime(2029, 12, 1, tzinfo=UTC)  # before make_challenge's dates


@time_machine.travel(SETUP, tick=False)
def test_from_a_new_draft_to_an_open_challenge(db):
    """A member of staff allowed to add challenges starts one: a draft they organise,
    404 for everyone else, previewed on the site; "Open challenge…" lists what is
    missing, then opens it, recorded with their name."""
    founder = make_user("founder", is_staff=True)
    founder.user_permissions.add(Permission.objects.get(codename="add_challenge"))
    client = client_of(founder)
    form = challenge_form(**{"datasets-TOTAL_FORMS": "0"})
    response = client.post(reverse("admin:challenges_challenge_add"), form)
    assert response.status_code == 302, response.content.decode()
    challenge = Challenge.objects.get(slug="new")
    assert challenge.is_draft
    assert list(challenge.organisers.all()) == [founder]

    detail = reverse("challenge_detail", args=["new"])
    assert Client().get(detail).status_code == 404
    assert client_of(make_user("someone")).get(detail).status_code == 404
    assert client.get(detail).status_code == 200  # the organiser previews it
    assert "new" not in Client().get(reverse("home")).content.decode().split("Challenges")[-1]

    # opening lists what is missing, and opens nothing
    open_url = reverse("admin:challenges_challenge_open", args=[challenge.pk])
    page = client.get(open_url).content.decode()
    assert "No dataset: add at least one, with its six files." in page
    assert "Yes, open it" not in page
    client.post(open_url, {"post": "yes"})
    challenge.refresh_from_db()
    assert challenge.is_draft

    # a dataset with its files, uploaded in the admin by the organiser
    files = dataset_files("gaze", task="regression")
    partial = dict(list(files.items())[:4])
    response = client.post(
        reverse("admin:datasets_dataset_add"), dataset_admin_form(challenge, partial)
    )
    assert response.status_code == 302, response.content.decode()
    page = client.get(open_url).content.decode()
    assert "Dataset gaze: no file for test inputs, test targets." in page
    dataset = challenge.datasets.get()
    response = client.post(
        reverse("admin:datasets_dataset_change", args=[dataset.pk]),
        dataset_admin_form(challenge, dict(list(files.items())[4:])),
    )
    assert response.status_code == 302, response.content.decode()
    page = client.get(open_url).content.decode()
    assert "Ready." in page and "Yes, open it" in page
    client.post(open_url, {"post": "yes"})
    challenge.refresh_from_db()
    assert challenge.opened_at == SETUP
    event = challenge.events.get(kind=EventKind.OPENED)
    assert (event.user, event.via, event.summary) == (founder, "admin", "Opened with gaze")
    assert Client().get(detail).status_code == 200
