"""A draft is "404 for everyone but its organisers", yet the slug's uniqueness check on an
organiser's own challenge form tells any organiser (or staff allowed to add challenges)
whether a draft of that slug exists."""

import pytest
import time_machine
from django.urls import reverse

from tests.factories import AFTER

from .world import build, client_for


def _form(slug):
    return {
        "slug": slug,
        "title": "Mine",
        "description": "",
        "rules": "",
        "start_0": "2030-01-10",
        "start_1": "00:00:00",
        "test_start_0": "2030-02-01",
        "test_start_1": "00:00:00",
        "deadline_0": "not-a-date",
        "deadline_1": "23:59:59",  # invalid: nothing is saved
        "test_inputs_release": "test_start",
        "test_targets_release": "never",
        "val_daily_limit": "",
        "test_daily_limit": "5",
        "test_total_limit": "",
        "datasets-TOTAL_FORMS": "0",
        "datasets-INITIAL_FORMS": "0",
        "datasets-MIN_NUM_FORMS": "0",
        "datasets-MAX_NUM_FORMS": "1000",
    }


@pytest.mark.xfail(
    strict=True,
    reason="accepted for now: slugs are unique site-wide, so a form that takes a slug "
    "says when one is taken, a draft's included (its slug only, not its title or data); "
    "hiding it would need drafts' slugs kept apart until they open",
)
@pytest.mark.django_db
def test_slug_check_does_not_reveal_a_draft_of_another_challenge():
    with time_machine.travel(AFTER, tick=False):
        w = build(draft_b=True)
        c = client_for(w["me"])
        url = reverse("admin:challenges_challenge_change", args=[w["mine"].pk])
        draft = c.post(url, _form("theirs")).content.decode()
        missing = c.post(url, _form("no-such-challenge")).content.decode()
        assert ("already exists" in draft) == ("already exists" in missing)
