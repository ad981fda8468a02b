"""challenges.admin_scope: the admin as each organiser's console. An organiser of one
challenge runs it from the admin and sees nothing of another: not in a list, not by URL,
not in a filter or a choice."""

from datetime import UTC, datetime

import pytest
from django.urls import reverse

from challenge_site.challenges.models import Challenge, ChallengeEvent, EventKind
from datasets.models import Dataset
from tests.console.helpers import client_of, two_challenges
from tests.factories import dataset_admin_form, dataset_files, make_user

SETUP = datetime(2029, 12, 1, tzinfo=UTC)  # before make_challenge's dates


@pytest.fixture
def two(db):
    return two_challenges()


def test_an_organiser_sees_only_their_challenge_in_every_admin_list(two):
    client = client_of(two["me"])
    pages = {
        "admin:challenges_challenge_changelist": ("Mine", "Theirs"),
        "admin:datasets_dataset_changelist": ("gaze", "secret"),
    }
    for name, (shown, hidden) in pages.items():
        page = client.get(reverse(name)).content.decode()
        assert shown in page and hidden not in page, name
    # the challenge filter of the dataset list names only their challenge
    page = client.get(reverse("admin:datasets_dataset_changelist")).content.decode()
    assert "?challenge=" in page and "Theirs" not in page
    # events of the other challenge are not listed either
    open_challenge_event = ChallengeEvent.objects.create(
        challenge=two["theirs"], kind=EventKind.OPENED, at=SETUP, detail={"datasets": []}
    )
    page = client.get(reverse("admin:challenges_challengeevent_changelist")).content.decode()
    assert "Theirs" not in page
    assert open_challenge_event.pk


def test_another_challenge_is_not_reachable_by_url(two):
    client = client_of(two["me"])
    theirs = two["theirs"]
    dataset = theirs.datasets.get()
    urls = [
        reverse("admin:challenges_challenge_change", args=[theirs.pk]),
        reverse("admin:challenges_challenge_open", args=[theirs.pk]),
        reverse("admin:challenges_challenge_publish", args=[theirs.pk]),
        reverse("admin:datasets_dataset_change", args=[dataset.pk]),
    ]
    # (deleting is for superusers: 403 for this challenge and for one's own alike)
    assert (
        client.get(reverse("admin:challenges_challenge_delete", args=[theirs.pk])).status_code
        == 403
    )
    for url in urls:
        response = client.get(url)
        # the admin's "does not exist" redirect to its index, as for a missing id
        assert response.status_code == 302 and response.url == reverse("admin:index"), url
    # nor through an action on the list
    response = client.post(
        reverse("admin:challenges_challenge_changelist"),
        {"action": "open_challenges", "post": "yes", "_selected_action": [theirs.pk]},
    )
    theirs.refresh_from_db()
    assert theirs.is_draft
    # nor by moving a dataset of theirs into a challenge of mine, or one of mine into theirs
    form = dataset_admin_form(two["theirs"], dataset_files("gaze2", task="regression"))
    response = client.post(reverse("admin:datasets_dataset_add"), {**form, "name": "gaze2"})
    assert response.status_code == 200 and "Select a valid choice" in response.content.decode()
    assert not Dataset.objects.filter(name="gaze2").exists()


def test_an_organiser_changes_their_challenge_but_cannot_delete_it(two):
    client = client_of(two["me"])
    mine = two["mine"]
    page = client.get(reverse("admin:challenges_challenge_change", args=[mine.pk]))
    assert page.status_code == 200
    assert client.get(reverse("admin:challenges_challenge_delete", args=[mine.pk])).status_code in (
        302,
        403,
    )
    assert Challenge.objects.filter(pk=mine.pk).exists()


def test_staff_without_a_challenge_see_no_console(two):
    client = client_of(make_user("staff", is_staff=True))
    index = client.get(reverse("admin:index")).content.decode()
    assert "Challenges" not in index and "Datasets" not in index
    response = client.get(reverse("admin:challenges_challenge_change", args=[two["mine"].pk]))
    assert response.status_code in (302, 403)
