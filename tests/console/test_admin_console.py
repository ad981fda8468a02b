"""console.admin_console: the challenge's console form (co-organisers added by their
exact user names) and the links to everything that runs the challenge."""

import pytest
from django.urls import reverse

from challenge_site.console.admin_console import console_links
from tests.console.helpers import challenge_form, client_of, two_challenges
from tests.factories import make_challenge, make_user


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
    response = client.post(url, {**form, "add_organisers": "colleague"})
    assert response.status_code == 302, response.content.decode()
    colleague.refresh_from_db()
    assert colleague.is_staff and set(mine.organisers.all()) == {two["me"], colleague}
    assert client_of(colleague).get(url).status_code == 200
