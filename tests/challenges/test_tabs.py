"""The tab bar of a challenge's pages: which tabs, in which order, with which URLs."""

import pytest
from django.contrib.auth.models import AnonymousUser
from django.http import HttpResponse
from django.urls import include, path, reverse

from challenge_site.challenges import tabs
from challenge_site.challenges.tabs import tabs_for
from tests.factories import BEFORE_START, VALIDATION, make_challenge, make_dataset, make_user


def _news(request, slug):
    return HttpResponse(f"news of {slug}")


# For test_news_tab_appears_once_its_url_exists: the site plus a News page.
urlpatterns = [
    path("challenges/<slug:slug>/news/", _news, name="challenge_news"),
    path("", include("challenge_site.urls")),
]

ANONYMOUS = AnonymousUser()


def _summary(tab_list) -> list[tuple[str, str, bool]]:
    return [(tab.label, tab.url, tab.current) for tab in tab_list]


def test_tabs_in_order_with_their_urls_and_the_active_one_current(challenge):
    make_dataset(challenge, "gaze")
    make_dataset(challenge, "catalysis", task="classification", position=5)
    result = tabs_for(challenge, active="data", user=ANONYMOUS, now=VALIDATION)
    expected = [
        ("Overview", "/challenges/demo/", False),
        ("Data", "/challenges/demo/data/", True),
        ("Evaluation", "/challenges/demo/evaluation/", False),
        ("Rules", "/challenges/demo/rules/", False),
        # The first dataset (by position) opens the leaderboards.
        ("Leaderboards", "/challenges/demo/datasets/gaze/leaderboard/?split=val", False),
        ("Results", "/challenges/demo/results/", False),
    ]
    if _news_url(challenge):  # the News page, once it exists, comes last
        expected.append(("News", _news_url(challenge), False))
    assert _summary(result) == expected
    assert [tab.key for tab in result][:6] == [
        "overview",
        "data",
        "evaluation",
        "rules",
        "leaderboards",
        "results",
    ]


def _news_url(challenge) -> str | None:
    return tabs._reverse("challenge_news", challenge.slug)


def test_leaderboards_tab_waits_for_the_datasets_to_open(challenge):
    make_dataset(challenge, "gaze")
    before = tabs_for(challenge, active="overview", user=ANONYMOUS, now=BEFORE_START)
    assert "leaderboards" not in [tab.key for tab in before]
    participant = make_user("participant")
    before = tabs_for(challenge, active="overview", user=participant, now=BEFORE_START)
    assert "leaderboards" not in [tab.key for tab in before]
    # Organisers see the datasets (and so the boards) before the opening.
    organiser = make_user("organiser", organiser_of=challenge)
    early = tabs_for(challenge, active="overview", user=organiser, now=BEFORE_START)
    assert "leaderboards" in [tab.key for tab in early]
    after = tabs_for(challenge, active="overview", user=ANONYMOUS, now=VALIDATION)
    assert "leaderboards" in [tab.key for tab in after]


def test_no_leaderboards_tab_without_datasets(challenge):
    result = tabs_for(challenge, active="overview", user=ANONYMOUS, now=VALIDATION)
    assert "leaderboards" not in [tab.key for tab in result]
    assert [tab.key for tab in result][:5] == ["overview", "data", "evaluation", "rules", "results"]


def test_given_datasets_spare_the_query(challenge, django_assert_num_queries):
    gaze = make_dataset(challenge, "gaze")
    with django_assert_num_queries(0):
        result = tabs_for(
            challenge, active="results", user=ANONYMOUS, now=VALIDATION, datasets=[gaze]
        )
    assert [tab.label for tab in result if tab.current] == ["Results"]
    with django_assert_num_queries(1):
        tabs_for(challenge, active="results", user=ANONYMOUS, now=VALIDATION)


def test_a_tab_whose_url_does_not_resolve_is_left_out(challenge, monkeypatch):
    sections = [*tabs.SECTIONS, ("later", "Later", "no_such_url_name")]
    monkeypatch.setattr(tabs, "SECTIONS", sections)
    monkeypatch.setattr(tabs, "KEYS", frozenset(key for key, _, _ in sections))
    result = tabs_for(challenge, active="later", user=ANONYMOUS, now=VALIDATION)
    assert "later" not in [tab.key for tab in result]
    assert not any(tab.current for tab in result)


@pytest.mark.urls(__name__)
def test_news_tab_appears_once_its_url_exists(challenge, client):
    result = tabs_for(challenge, active="news", user=ANONYMOUS, now=VALIDATION)
    assert _summary(result)[-1] == ("News", reverse("challenge_news", args=["demo"]), True)
    # And on the pages, without any change to them.
    page = client.get(reverse("challenge_rules", args=["demo"])).content.decode()
    assert f'<a href="{reverse("challenge_news", args=["demo"])}">News</a>' in page


def test_an_unknown_tab_is_an_error(challenge):
    with pytest.raises(ValueError, match="unknown tab 'nope'"):
        tabs_for(challenge, active="nope", user=ANONYMOUS, now=VALIDATION)


def test_draft_challenge_tabs_for_its_organiser(db):
    draft = make_challenge(opened_at=None)
    make_dataset(draft, "gaze")
    organiser = make_user("organiser", organiser_of=draft)
    result = tabs_for(draft, active="overview", user=organiser, now=VALIDATION)
    assert "leaderboards" in [tab.key for tab in result]
    # Nobody else reaches a draft's pages; were they asked, no board would be offered.
    stranger = tabs_for(draft, active="overview", user=make_user("x"), now=VALIDATION)
    assert "leaderboards" not in [tab.key for tab in stranger]
