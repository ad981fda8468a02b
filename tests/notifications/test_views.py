"""The one-click unsubscribe link of every notification e-mail."""

import pytest
import time_machine
from django.core import signing
from django.test import Client

from challenge_site.notifications import emails
from tests.factories import VALIDATION, make_user
from tests.pages import page_text
from tests.submissions.helpers import predictions

from .helpers import opt_in, unsubscribe_path


def flags(user):
    user.profile.refresh_from_db()
    return user.profile.email_on_scoring_finished, user.profile.email_on_results_published


def test_the_link_in_the_email_turns_its_kind_off_and_no_more_arrive(
    gaze, ada, submit_zip, mailoutbox
):
    with time_machine.travel(VALIDATION, tick=False):
        submit_zip(ada, gaze.challenge, predictions("gaze"), now=VALIDATION)
        path = unsubscribe_path(mailoutbox[0])
        client = Client(enforce_csrf_checks=True)  # no login: the token names the user
        page = client.get(path)
        assert page.status_code == 200
        assert (
            "Stop the e-mails to a…@example.org sent when a submission of yours has finished "
            "scoring?" in page_text(page)
        )
        assert flags(ada) == (True, True)  # a GET (a mail scanner) changes nothing
        response = client.post(path, {"action": "unsubscribe"})
        assert response.status_code == 302 and response["Location"] == path
        assert flags(ada) == (False, True)  # the other kind stays as it was
        assert "You are unsubscribed" in page_text(client.get(path))
        submit_zip(ada, gaze.challenge, predictions("gaze", seed=2), now=VALIDATION)
    assert len(mailoutbox) == 1


def test_one_click_post_of_mail_programs_rfc_8058(ada):
    path = emails.unsubscribe_url(ada, kind=emails.Kind.RESULTS).split("example.org", 1)[1]
    client = Client(enforce_csrf_checks=True)
    response = client.post(path, {"List-Unsubscribe": "One-Click"})
    assert response.status_code == 200 and response.content == b"Unsubscribed.\n"
    assert flags(ada) == (True, False)


def test_subscribe_again(ada):
    path = emails.unsubscribe_url(ada, kind=emails.Kind.SCORING).split("example.org", 1)[1]
    client = Client()
    client.post(path, {"action": "unsubscribe"})
    client.post(path, {"action": "unsubscribe"})  # twice is once
    assert flags(ada) == (False, True)
    client.post(path, {"action": "resubscribe"})
    assert flags(ada) == (True, True)


def tokens(user) -> list[str]:
    good = emails.unsubscribe_token(user, kind=emails.Kind.SCORING)
    return [
        good[:-1] + ("A" if good[-1] != "A" else "B"),  # signature changed
        good[:-6],  # cut short
        signing.dumps([user.pk, "scoring"]),  # signed, not for this
        signing.dumps([user.pk, "everything"], salt=emails.UNSUBSCRIBE_SALT),  # no such kind
        signing.dumps(user.pk, salt=emails.UNSUBSCRIBE_SALT),  # not a pair
        signing.dumps([True, "scoring"], salt=emails.UNSUBSCRIBE_SALT),
        "not-a-token",
    ]


@pytest.mark.parametrize("method", ["get", "post"])
def test_a_bad_token_is_a_clear_400_and_changes_nothing(ada, method):
    client = Client()
    for token in tokens(ada):
        response = getattr(client, method)(f"/notifications/unsubscribe/{token}/")
        assert response.status_code == 400, token
        assert "This unsubscribe link is not valid" in page_text(response)
    assert flags(ada) == (True, True)


def test_a_deleted_account_is_a_404(db):
    gone = opt_in(make_user("gone"), scoring=True)
    path = emails.unsubscribe_url(gone, kind=emails.Kind.SCORING).split("example.org", 1)[1]
    gone.delete()
    response = Client().get(path)
    assert response.status_code == 404 and "no longer exists" in page_text(response)
