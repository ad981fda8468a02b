"""datasets.deletion: a dataset is deleted only through a confirmation that counts what
goes with it; the challenge page's inline rows have no "Delete?" box."""

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from datasets.deletion import counts, lost
from datasets.models import Dataset
from tests.factories import make_dataset, make_user
from tests.leaderboard.helpers import add_entry, reg


@pytest.fixture
def admin_client(client, db):
    client.force_login(User.objects.create_superuser("admin", "admin@example.org", "pw"))
    return client


def test_the_counts_name_every_row_that_goes_with_the_dataset(challenge):
    gaze = make_dataset(challenge, "gaze")
    for index in range(3):
        add_entry(gaze, user=make_user(f"u{index}"), val=reg(0.5 + index, 0.4))
    found = counts([gaze])
    assert found["datasets"] == 1
    assert found["submissions"] == 3
    assert found["dataset files"] == gaze.files.count() > 0
    assert lost([gaze])[0] == "Dataset: demo/gaze"
    assert "3 submissions" in lost([gaze])[1]


def test_deleting_asks_first_with_the_counts_and_the_inline_has_no_delete_box(
    admin_client, challenge
):
    gaze = make_dataset(challenge, "gaze")
    add_entry(gaze, user=make_user("ann"), val=reg(0.5, 0.4))
    challenge_page = admin_client.get(
        reverse("admin:challenges_challenge_change", args=[challenge.pk])
    )
    assert 'name="datasets-0-DELETE"' not in challenge_page.content.decode()
    url = reverse("admin:datasets_dataset_delete", args=[gaze.pk])
    confirmation = admin_client.get(url).content.decode()
    assert "Dataset: demo/gaze" in confirmation and "1 submissions" in confirmation
    assert Dataset.objects.filter(pk=gaze.pk).exists()  # nothing deleted by looking
    assert admin_client.post(url, {"post": "yes"}).status_code == 302
    assert not Dataset.objects.filter(pk=gaze.pk).exists()
