"""challenges.admin: the history of each challenge (ChallengeEvent) in the admin, read
only: written by the code that makes a change, read by the challenge's organisers."""

from datetime import UTC, datetime

import pytest
from django.urls import reverse

from challenge_site.challenges.models import ChallengeEvent, EventKind
from tests.console.helpers import client_of
from tests.factories import make_challenge, make_user

AT = datetime(2030, 1, 9, 12, 0, tzinfo=UTC)


@pytest.fixture
def opened(db):
    challenge = make_challenge()
    organiser = make_user("org", organiser_of=challenge)
    event = ChallengeEvent.objects.create(
        challenge=challenge,
        kind=EventKind.OPENED,
        at=AT,
        user=organiser,
        username="org",
        via="admin",
        detail={"datasets": ["gaze", "coins"]},
    )
    return challenge, organiser, event


def test_the_organisers_read_who_did_what_when(opened):
    challenge, organiser, event = opened
    page = client_of(organiser).get(reverse("admin:challenges_challengeevent_changelist"))
    text = page.content.decode()
    assert page.status_code == 200
    assert "Opened with gaze, coins" in text and ">org<" in text and ">admin<" in text


def test_nobody_adds_changes_or_deletes_an_event(opened):
    challenge, organiser, event = opened
    root = make_user("root", is_superuser=True)
    for user in (organiser, root):
        client = client_of(user)
        assert client.get(reverse("admin:challenges_challengeevent_add")).status_code == 403
        change = reverse("admin:challenges_challengeevent_change", args=[event.pk])
        page = client.get(change)
        assert page.status_code == 200 and 'name="summary"' not in page.content.decode()
        assert client.post(change, {"summary": "rewritten"}).status_code == 403
        delete = reverse("admin:challenges_challengeevent_delete", args=[event.pk])
        assert client.post(delete, {"post": "yes"}).status_code == 403
    event.refresh_from_db()
    assert event.summary == "Opened with gaze, coins"
