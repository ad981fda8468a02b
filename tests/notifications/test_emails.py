"""What the two opt-in e-mails share: who asked, the unsubscribe token, absolute links
and the message with its footer and List-Unsubscribe headers."""

import pytest
from django.contrib.auth import get_user_model
from django.core.mail import get_connection

from challenge_site.announcements import services as announcements
from challenge_site.mailing.unsubscribe import InvalidToken
from challenge_site.notifications import emails
from challenge_site.notifications.emails import Kind
from tests.factories import make_user

from .helpers import SITE_URL, opt_in

FOOTER = "notifications/_footer.txt"


def usernames(users):
    return sorted(user.username for user in users)


def test_opted_in_are_those_who_asked_for_the_kind_and_can_receive_it(ada, bob):
    opt_in(make_user("cy"), scoring=True)
    inactive = opt_in(make_user("inactive"), scoring=True, results=True)
    inactive.is_active = False
    inactive.save()
    no_address = opt_in(make_user("noaddress"), scoring=True, results=True)
    no_address.email = ""
    no_address.save()

    everyone = get_user_model().objects.all()
    assert usernames(emails.opted_in(everyone, kind=Kind.SCORING)) == ["ada", "cy"]
    assert usernames(emails.opted_in(everyone, kind=Kind.RESULTS)) == ["ada"]
    assert usernames(emails.opted_in(everyone.exclude(pk=ada.pk), kind=Kind.RESULTS)) == []


def test_each_kind_is_turned_on_and_off_on_its_own(bob):
    assert not emails.is_subscribed(bob, kind=Kind.SCORING)  # off by default, no profile yet
    emails.set_subscribed(user=bob, kind=Kind.SCORING, on=True)
    assert emails.is_subscribed(bob, kind=Kind.SCORING)
    assert not emails.is_subscribed(bob, kind=Kind.RESULTS)
    bob.profile.refresh_from_db()
    assert bob.profile.email_on_scoring_finished and not bob.profile.email_on_results_published
    emails.set_subscribed(user=bob, kind=Kind.SCORING, on=False)
    assert not emails.is_subscribed(bob, kind=Kind.SCORING)


def test_a_token_gives_back_its_user_and_kind(ada, bob):
    token = emails.unsubscribe_token(ada, kind=Kind.RESULTS)
    user_id, kind = emails.read_token(token)
    assert (user_id, kind) == (ada.pk, Kind.RESULTS) and type(kind) is Kind
    bobs = emails.unsubscribe_token(bob, kind=Kind.SCORING)
    assert emails.read_token(bobs) == (bob.pk, Kind.SCORING)
    assert token != emails.unsubscribe_token(ada, kind=Kind.SCORING)


def test_an_announcements_token_is_worth_nothing_here(ada):
    with pytest.raises(InvalidToken):
        emails.read_token(announcements.unsubscribe_token(ada))


@pytest.mark.parametrize("site_url", [SITE_URL, SITE_URL + "/"])
def test_links_start_with_the_site_url(settings, ada, site_url):
    settings.SITE_URL = site_url
    assert emails.absolute("/accounts/profile/") == f"{SITE_URL}/accounts/profile/"
    token = emails.unsubscribe_token(ada, kind=Kind.SCORING)
    assert emails.unsubscribe_url(ada, kind=Kind.SCORING) == (
        f"{SITE_URL}/notifications/unsubscribe/{token}/"
    )


def test_one_line_for_a_header():
    assert emails.one_line("gaze:\n your  “GP”\tis scored\n") == "gaze: your “GP” is scored"


def test_the_message_says_why_it_came_and_how_to_stop_it(ada):
    connection = get_connection()
    message = emails.build(
        user=ada,
        kind=Kind.SCORING,
        subject="gaze: your submission\n“GP” is scored",
        template=FOOTER,
        context={},
        connection=connection,
    )
    unsubscribe = emails.unsubscribe_url(ada, kind=Kind.SCORING)
    assert message.to == ["ada@example.org"] and message.from_email == "challenges@localhost"
    assert message.subject == "gaze: your submission “GP” is scored"
    assert message.body == (
        "--\n"
        "You receive this because you asked Predictive Uncertainty Challenges for an e-mail "
        "when a submission of yours has finished scoring "
        f"(your profile: {SITE_URL}/accounts/profile/#notifications).\n"
        f"To receive no more of these e-mails: {unsubscribe}\n"
    )
    assert message.extra_headers == {
        "List-Unsubscribe": f"<{unsubscribe}>",
        "List-Unsubscribe-Post": "List-Unsubscribe=One-Click",
    }
    assert message.connection is connection


def test_the_callers_context_fills_the_template(ada):
    message = emails.build(
        user=ada,
        kind=Kind.RESULTS,
        subject="Demo challenge: the results are published",
        template="notifications/results_email.txt",
        context={
            "challenge": {"title": "Demo challenge"},
            "results_url": f"{SITE_URL}/challenges/demo/results/",
            "leaderboards": [],
            "submissions_url": f"{SITE_URL}/submissions/",
            "targets_released": True,
        },
    )
    assert message.body.startswith(
        "The organisers of “Demo challenge” have published its results: the test scores of "
        "every entry and the final rankings are now public, and the test targets can be "
        f"downloaded.\n\nResults: {SITE_URL}/challenges/demo/results/\n"
        f"Your submissions: {SITE_URL}/submissions/\n\n--\n"
    )
    assert "for an e-mail when a challenge you submitted to publishes its results" in message.body
    assert message.body.endswith(f"{emails.unsubscribe_url(ada, kind=Kind.RESULTS)}\n")
