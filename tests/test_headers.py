"""Content-Security-Policy on every page, no inline script or style, and private answers.

Every main page is rendered (for an anonymous visitor, a participant and staff, the admin
included) and checked for the policy and for any inline script or style it would block.
Answers that depend on who asks are "Cache-Control: private, no-store" and vary on
Cookie and Authorization; public answers and static files stay cacheable.
"""

import re
from datetime import UTC, datetime

import pytest
import time_machine
from django.test import Client
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from challenge_site.challenges.models import Challenge
from tests.factories import make_dataset, make_user
from tests.submissions.helpers import predictions

VALIDATION = datetime(2030, 1, 20, 12, 0, tzinfo=UTC)
AFTER = datetime(2030, 3, 1, 12, 0, tzinfo=UTC)

POLICY = {
    "default-src": "'self'",
    "script-src": "'self'",
    "style-src": "'self'",
    "img-src": "'self' data:",
    "object-src": "'none'",
    "base-uri": "'self'",
    "frame-ancestors": "'none'",
    "form-action": "'self'",
}

# What the policy would block: a <script> without src, a <style> element, a style
# attribute, an on…= event handler attribute, a javascript: URL.
INLINE = [
    # (A data block, JSON or JSON-LD, is never run: script-src does not apply to it.)
    re.compile(
        r"<script(?![^>]*\ssrc=)(?![^>]*\stype=\"application/(?:ld\+)?json\")[^>]*>",
        re.IGNORECASE,
    ),
    re.compile(r"<style[\s>]", re.IGNORECASE),
    re.compile(r"<[^>]*\sstyle\s*=", re.IGNORECASE),
    re.compile(r"<[^>]*\son[a-z]+\s*=", re.IGNORECASE),
    re.compile(r"javascript:", re.IGNORECASE),
]


def policy_of(response) -> dict[str, str]:
    header = response["Content-Security-Policy"]
    directives = [part.strip() for part in header.split(";") if part.strip()]
    return dict(directive.split(" ", 1) for directive in directives)


def inline_code(html: str) -> list[str]:
    return [match.group(0) for pattern in INLINE for match in pattern.finditer(html)]


def cache_control(response) -> set[str]:
    return {part.strip() for part in response.get("Cache-Control", "").split(",") if part.strip()}


def vary(response) -> set[str]:
    return {part.strip().lower() for part in response.get("Vary", "").split(",") if part.strip()}


def assert_private(response):
    assert {"private", "no-store"} <= cache_control(response), response.get("Cache-Control")
    assert "public" not in cache_control(response)
    assert {"cookie", "authorization"} <= vary(response)


def assert_page(response):
    """A page with the site's policy and nothing inline for it to block."""
    assert response.status_code == 200, response
    assert policy_of(response) == POLICY
    assert inline_code(response.content.decode()) == []


@pytest.fixture
def site(challenge, submit_zip):
    """A challenge after its deadline with published results, a dataset, a participant's
    scored validation submission, and staff."""
    dataset = make_dataset(challenge, "gaze", task="regression")
    ada = make_user("ada", display_name="Ada L.")
    staff = make_user("org", is_staff=True)
    staff.is_superuser = True
    staff.save()
    submission = submit_zip(ada, challenge, predictions("gaze", ("val",)), now=VALIDATION)
    assert submission.status == "scored", (submission.status, submission.errors)
    Challenge.objects.filter(pk=challenge.pk).update(results_published=True)
    return {
        "challenge": challenge,
        "dataset": dataset,
        "submission": submission,
        "ada": ada,
        "staff": staff,
    }


@pytest.fixture(autouse=True)
def after_the_deadline():
    with time_machine.travel(AFTER, tick=False):
        yield


def public_pages(site) -> dict[str, str]:
    slug, name, pk = site["challenge"].slug, site["dataset"].name, site["submission"].pk
    return {
        "home": reverse("home"),
        "challenge": reverse("challenge_detail", args=[slug]),
        "dataset": reverse("dataset_detail", args=[slug, name]),
        "formats": reverse("file_formats"),
        "leaderboards": reverse("leaderboards"),
        "leaderboard": reverse("leaderboard", args=[slug, name]),
        "leaderboard, test split": reverse("leaderboard", args=[slug, name]) + "?split=test",
        "results": reverse("challenge_results", args=[slug]),
        "submission": reverse("submission_detail", args=[pk]),
        "login": reverse("login"),
        "signup": reverse("signup"),
        "password reset": reverse("password_reset"),
        "password reset sent": reverse("password_reset_done"),
        "admin log-in": reverse("admin:login"),
    }


def participant_pages(site) -> dict[str, str]:
    slug, pk = site["challenge"].slug, site["submission"].pk
    return {
        "submit": reverse("submit", args=[slug]),
        "submission (owner)": reverse("submission_detail", args=[pk]),
        "my submissions": reverse("my_submissions"),
        "profile": reverse("profile"),
        "password change": reverse("password_change"),
        "home (logged in)": reverse("home"),
        "leaderboard (logged in)": reverse("leaderboard", args=[slug, site["dataset"].name]),
    }


def admin_pages(site) -> dict[str, str]:
    challenge, dataset, submission = site["challenge"], site["dataset"], site["submission"]
    return {
        "admin index": reverse("admin:index"),
        "challenges": reverse("admin:challenges_challenge_changelist"),
        "challenge": reverse("admin:challenges_challenge_change", args=[challenge.pk]),
        "new challenge (prepopulated slug)": reverse("admin:challenges_challenge_add"),
        "datasets": reverse("admin:datasets_dataset_changelist"),
        "dataset (own template)": reverse("admin:datasets_dataset_change", args=[dataset.pk]),
        "new dataset": reverse("admin:datasets_dataset_add"),
        "submissions": reverse("admin:submissions_submission_changelist"),
        "submission": reverse("admin:submissions_submission_change", args=[submission.pk]),
        "users": reverse("admin:auth_user_changelist"),
        "user": reverse("admin:auth_user_change", args=[site["ada"].pk]),
        "new user": reverse("admin:auth_user_add"),
        "log-in attempts (axes)": reverse("admin:axes_accessattempt_changelist"),
        "tokens": reverse("admin:authtoken_tokenproxy_changelist"),
    }


def test_public_pages_have_the_policy_and_nothing_inline(client, site):
    for label, url in public_pages(site).items():
        response = client.get(url)
        assert response.status_code == 200, label
        assert policy_of(response) == POLICY, label
        assert inline_code(response.content.decode()) == [], label


# Pages with a form set the CSRF cookie: that answer is for one client only.
WITH_FORMS = {"login", "signup", "password reset", "admin log-in"}


def test_anonymous_answers_vary_but_may_be_kept(client, site):
    for label, url in public_pages(site).items():
        response = Client().get(url)  # no cookie from an earlier answer
        assert {"cookie", "authorization"} <= vary(response), label
        if label in WITH_FORMS:
            assert "csrftoken" in response.cookies, label
            assert_private(response)
        else:
            assert not response.cookies, label
            assert "no-store" not in cache_control(response), label


def test_participant_pages_have_the_policy_and_are_private(client, site):
    client.force_login(site["ada"])
    for label, url in {**public_pages(site), **participant_pages(site)}.items():
        response = client.get(url)
        if label == "signup":
            assert response.status_code == 302, label  # to the profile: signed up already
            assert_private(response)
            continue
        assert response.status_code == 200, label
        assert policy_of(response) == POLICY, label
        assert inline_code(response.content.decode()) == [], label
        assert_private(response)


def test_admin_pages_have_the_policy_and_nothing_inline(client, site):
    client.force_login(site["staff"])
    for label, url in admin_pages(site).items():
        response = client.get(url)
        assert response.status_code == 200, label
        assert policy_of(response) == POLICY, label
        assert inline_code(response.content.decode()) == [], (label, url)
        assert_private(response)


def test_the_profile_page_with_the_token_is_private(client, site):
    token = Token.objects.create(user=site["ada"])
    client.force_login(site["ada"])
    response = client.get(reverse("profile"))
    assert token.key in response.content.decode()
    assert_private(response)


def test_api_answers_are_private_with_a_token_and_vary_without(site):
    token = Token.objects.create(user=site["ada"])
    api = APIClient()
    slug, name, pk = site["challenge"].slug, site["dataset"].name, site["submission"].pk
    urls = [
        reverse("api_me"),
        reverse("api_submission", args=[pk]),
        reverse("api_leaderboard", args=[slug, name]),
    ]
    api.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    for url in urls:
        response = api.get(url)
        assert response.status_code == 200, url
        assert_private(response)
    anonymous = APIClient()
    for url in urls[1:]:
        response = anonymous.get(url)
        assert response.status_code == 200, url
        assert {"cookie", "authorization"} <= vary(response)
        assert "no-store" not in cache_control(response)
    # Staff previews of hidden scores and a refused token alike are private.
    staff = APIClient()
    staff.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=site['staff']).key}")
    assert_private(staff.get(urls[1]))
    wrong = APIClient()
    wrong.credentials(HTTP_AUTHORIZATION="Token not-a-token")
    response = wrong.get(urls[0])
    assert response.status_code == 401
    assert_private(response)


def test_the_log_in_answer_is_private(client, site):
    response = client.post(
        reverse("login"), {"username": "ada", "password": "a-long-Passphrase-42"}
    )
    assert response.status_code == 302
    assert_private(response)


def test_the_log_out_answer_is_private(client, site):
    client.force_login(site["ada"])
    response = client.post(reverse("logout"))
    assert response.status_code == 302
    assert_private(response)


def test_svg_plots_allow_their_own_inline_styles_only(client, site):
    pk, slug, name = site["submission"].pk, site["challenge"].slug, site["dataset"].name
    for url in (
        reverse("submission_plot", args=[pk, "val"]),
        reverse("leaderboard_plot", args=[slug, name]),
    ):
        response = client.get(url)
        if response.status_code == 404:  # no second loss to plot against
            continue
        assert response.status_code == 200, url
        assert response["Content-Type"] == "image/svg+xml"
        assert "<style" in response.content.decode() or "style=" in response.content.decode()
        assert policy_of(response) == {**POLICY, "style-src": "'self' 'unsafe-inline'"}
        assert "script-src" in policy_of(response)
    client.force_login(site["ada"])
    response = client.get(reverse("submission_plot", args=[pk, "val"]))
    assert response.status_code == 200
    assert_private(response)


def test_error_and_throttle_pages_have_the_policy(client, site, settings):
    response = client.get("/no-such-page/")
    assert response.status_code == 404
    assert policy_of(response) == POLICY
    assert inline_code(response.content.decode()) == []
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "signup": "1/hour"}
    client.post(reverse("signup"), {"username": "x"})
    response = client.post(reverse("signup"), {"username": "x"})
    assert response.status_code == 429
    assert policy_of(response) == POLICY
    assert inline_code(response.content.decode()) == []


def test_static_files_stay_public(client, site):
    client.force_login(site["ada"])
    response = client.get("/static/css/site.css")
    if response.status_code == 404:
        pytest.skip("static files are not served in this configuration")
    assert response.status_code == 200
    assert "no-store" not in cache_control(response)
    assert "Content-Security-Policy" not in response


@pytest.mark.parametrize(
    "html",
    [
        "<script>alert(1)</script>",
        '<script type="module">go()</script>',
        "<style>p { color: red }</style>",
        '<p style="color: red">',
        '<button onclick="go()">',
        '<body onload = "go()">',
        '<a href="javascript:go()">',
    ],
)
def test_the_inline_check_finds_what_the_policy_blocks(html):
    assert inline_code(html)


def test_the_inline_check_leaves_what_the_policy_allows():
    html = (
        '<script src="/static/js/upload.js" defer></script>'
        '<script id="constants" src="/static/admin/js/change_form.js" data-model-name="x">'
        '<link rel="stylesheet" href="/static/css/site.css"><p class="note">on=off</p>'
    )
    assert inline_code(html) == []
