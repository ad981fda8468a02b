"""console.admin_console: the challenge's console form (co-organisers added by their
exact user names) and the links to everything that runs the challenge."""

from datetime import UTC, datetime

import pytest
from django.contrib.admin.models import LogEntry
from django.urls import reverse

from challenge_site.console.admin_console import console_links
from datasets.models import Dataset
from tests.challenges.test_publication import scored_entry
from tests.console.helpers import challenge_form, client_of, two_challenges
from tests.factories import make_challenge, make_user
from tests.pages import page_text


@pytest.fixture
def two(db):
    return two_challenges()


def test_the_console_links_to_everything_that_runs_the_challenge(db):
    challenge = make_challenge()
    mine = f"?challenge={challenge.pk}"
    assert console_links(challenge, "admin") == [
        (f"/admin/submissions/submission/{mine}", "Submissions"),
        (f"/admin/challenges/participant/{mine}", "Participants"),
        (f"/admin/announcements/announcement/{mine}", "Announcements"),
        (f"/admin/announcements/announcement/add/{mine}", "Post news"),
        ("/challenges/demo/statistics/", "Statistics"),
        ("/challenges/demo/export/submissions.zip", "All submissions (zip)"),
        ("/challenges/demo/export/scores.csv", "All scores (CSV)"),
        ("/challenges/demo/", "Its pages on the site"),
    ]
    page = client_of(make_user("org", organiser_of=challenge)).get(
        reverse("admin:challenges_challenge_change", args=[challenge.pk])
    )
    assert f'href="/admin/submissions/submission/{mine}"' in page.content.decode()


def test_co_organisers_are_added_by_their_exact_user_names(two):
    """The organisers field lists only the challenge's own organisers (and the user): no
    account of the site is named; others are added by exact user name, and get the
    staff status that opens the console."""
    mine = two["mine"]
    colleague = make_user("colleague")
    client = client_of(two["me"])
    url = reverse("admin:challenges_challenge_change", args=[mine.pk])
    page = client.get(url).content.decode()
    assert ">colleague<" not in page and ">them<" not in page
    form = challenge_form(slug="mine", title="Mine", **{"datasets-TOTAL_FORMS": "0"})
    form["organisers"] = [two["me"].pk]
    response = client.post(url, {**form, "add_organisers": "colleague nobody"})
    assert "No active account named nobody." in response.content.decode()
    # Staff status is given only once the organiser has seen whom it goes to.
    unconfirmed = client.post(url, {**form, "add_organisers": "colleague"})
    assert unconfirmed.status_code == 200
    text = unconfirmed.content.decode()
    assert "These accounts get staff status and see this challenge&#x27;s hidden scores" in text
    assert "colleague (" in text and "joined " in text
    colleague.refresh_from_db()
    assert not colleague.is_staff and colleague not in mine.organisers.all()
    response = client.post(
        url, {**form, "add_organisers": "colleague", "confirm_new_organisers": "on"}
    )
    assert response.status_code == 302, response.content.decode()
    colleague.refresh_from_db()
    assert colleague.is_staff and set(mine.organisers.all()) == {two["me"], colleague}
    assert client_of(colleague).get(url).status_code == 200


def test_an_automatic_publication_is_set_after_seeing_what_becomes_public(two):
    """Item 15 of issue 30: the time is saved only once the organiser has been told what
    it publishes (counted as "Publish results…" counts it), and only after the deadline."""
    mine = two["mine"]
    scored_entry(Dataset.objects.get(challenge=mine), make_user("ada"))
    client = client_of(two["me"])
    url = reverse("admin:challenges_challenge_change", args=[mine.pk])
    form = challenge_form(slug="mine", title="Mine", **{"datasets-TOTAL_FORMS": "0"})
    form["organisers"] = [two["me"].pk]
    at = {"publish_results_at_0": "2030-02-10", "publish_results_at_1": "12:00:00"}
    unconfirmed = client.post(url, {**form, **at})
    assert unconfirmed.status_code == 200
    assert "On 10 Feb 2030 12:00 UTC the results become public for everyone" in page_text(
        unconfirmed
    )
    assert "So far: gaze: 1 test-split entry with 3 scores;" in page_text(unconfirmed)
    mine.refresh_from_db()
    assert mine.publish_results_at is None
    early = {"publish_results_at_0": "2030-02-08", "publish_results_at_1": "12:00:00"}
    refused = client.post(url, {**form, **early, "confirm_publication_time": "on"})
    assert "The automatic publication must come after the deadline." in page_text(refused)
    response = client.post(url, {**form, **at, "confirm_publication_time": "on"})
    assert response.status_code == 302, page_text(response)
    message = LogEntry.objects.latest("action_time").get_change_message()
    assert "Publish results at: (empty) → 10 Feb 2030 12:00 UTC" in message
    assert "Confirm the automatic publication" not in message
    mine.refresh_from_db()
    assert mine.publish_results_at == datetime(2030, 2, 10, 12, tzinfo=UTC)
    page = page_text(client.get(url))
    assert "Automatic publication on 10 Feb 2030 12:00 UTC." in page
    # Saved again unchanged, nothing more is asked.
    again = {"publish_results_at_0": "2030-02-10", "publish_results_at_1": "12:00:00"}
    assert client.post(url, {**form, **again}).status_code == 302
