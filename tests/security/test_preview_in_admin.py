"""Not a leak, a functional bug found on the way: the site's "View as a participant"
switch (a session key meant for the site's pages) also takes the organiser's rights away
in the admin console for that challenge: its page, its submissions and the moderation
actions answer 403 until they switch back on the site."""

import pytest
import time_machine
from django.urls import reverse

from tests.factories import VALIDATION, make_dataset, make_user
from tests.leaderboard.helpers import add_entry, reg

from .world import client_for


@pytest.mark.django_db
def test_previewing_on_the_site_keeps_the_admin_console(challenge, organiser):
    entry = add_entry(make_dataset(challenge, "gaze"), user=make_user("ann"), val=reg(0.5, 0.4))
    with time_machine.travel(VALIDATION, tick=False):
        client = client_for(organiser)
        client.post(reverse("challenge_preview", args=[challenge.slug]), {"on": "1"})
        assert (
            client.get(
                reverse("admin:challenges_challenge_change", args=[challenge.pk])
            ).status_code
            == 200
        )
        assert (
            client.get(reverse("admin:submissions_submission_change", args=[entry.pk])).status_code
            == 200
        )
