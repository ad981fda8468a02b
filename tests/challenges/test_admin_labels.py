"""challenges.admin_labels: every input of the organisers' admin forms has an accessible
name (the axe check of the admin pages themselves: tests/stack/test_browser_axe.py)."""

import re

import pytest
from django.urls import reverse

from tests.factories import make_challenge, make_dataset, make_user


@pytest.fixture
def page(client, db):
    challenge = make_challenge()
    make_dataset(challenge, "gaze")
    make_dataset(challenge, "iris", task="classification")
    client.force_login(make_user("org", is_staff=True, organiser_of=challenge))
    return client.get(reverse("admin:challenges_challenge_change", args=[challenge.pk]))


def test_date_and_time_boxes_are_named_each(page):
    html = page.content.decode()
    for field, label in (
        ("start", "Start"),
        ("test_start", "Test start"),
        ("deadline", "Deadline"),
    ):
        assert re.search(rf'aria-label="{label}: date"[^>]*id="id_{field}_0"', html), field
        assert re.search(rf'aria-label="{label}: time"[^>]*id="id_{field}_1"', html), field


def test_every_input_of_a_dataset_row_is_named_and_no_header_is_empty(page):
    html = page.content.decode()
    for row in (0, 1):
        named = {"task": "Task", "position": "Position", "name": "Name", "log_base": "Log base"}
        for name, label in named.items():
            tag = re.search(rf'<(?:input|select)[^>]*id="id_datasets-{row}-{name}"[^>]*>', html)
            assert tag and f'aria-label="{label}"' in tag.group(0), (row, name)
    assert '<th class="original"></th>' not in html and "<th></th>" not in html
    assert 'id="id_organisers_input"' not in html  # no filter_horizontal widget


def test_the_search_box_of_a_list_is_named(client, db):
    client.force_login(make_user("org", is_staff=True, organiser_of=make_challenge()))
    html = client.get(reverse("admin:submissions_submission_changelist")).content.decode()
    assert re.search(r'id="searchbar" aria-label="Search"', html)
