"""challenges' ``organiser_banner`` tag: on a challenge's pages, for its organisers only,
whether it is a draft, whose view this is and the switch between the two."""

from django.contrib.auth.models import AnonymousUser
from django.template import Context, Template

from challenge_site.challenges.templatetags.organiser_banner import organiser_banner
from tests.factories import make_challenge, make_user


def request_of(rf, user, path="/challenges/demo/?split=val"):
    request = rf.get(path)
    request.user = user
    return request


def test_the_organisers_see_it_with_the_way_back_to_this_page(rf, db):
    challenge = make_challenge()
    organiser = make_user("org", organiser_of=challenge)
    shown = organiser_banner({"request": request_of(rf, organiser), "csrf_token": "t"}, challenge)
    assert shown == {
        "shown": True,
        "challenge": challenge,
        "previewing": False,
        "next": "/challenges/demo/?split=val",
        "csrf_token": "t",
    }
    organiser.participant_preview = frozenset({challenge.pk})
    assert organiser_banner({"request": request_of(rf, organiser)}, challenge)["previewing"]


def test_nobody_else_sees_it(rf, db):
    challenge = make_challenge()
    other = make_challenge(slug="other")
    elsewhere = make_user("elsewhere", organiser_of=other)
    for user in (make_user("ann"), elsewhere, AnonymousUser()):
        context = organiser_banner({"request": request_of(rf, user)}, challenge)
        assert (context["shown"], context["previewing"]) == (False, False)
    assert organiser_banner({}, challenge)["shown"] is False  # no request: no banner
    assert organiser_banner({"request": request_of(rf, elsewhere)}, None)["shown"] is False


def test_the_banner_a_draft_shows_its_organisers(rf, db):
    draft = make_challenge(slug="draft", title="Draft challenge", opened_at=None)
    template = Template("{% load organiser_banner %}{% organiser_banner challenge %}")
    organiser = make_user("org", organiser_of=draft)
    html = template.render(
        Context({"request": request_of(rf, organiser, "/x/"), "challenge": draft})
    )
    assert "<strong>Draft.</strong> Only the organisers of Draft challenge see its pages" in html
    assert '<input type="hidden" name="next" value="/x/">' in html
    assert "View as a participant" in html
    outsider = Context({"request": request_of(rf, make_user("ann")), "challenge": draft})
    assert template.render(outsider).strip() == ""
