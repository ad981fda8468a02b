"""The tab bar of a challenge's pages: overview, data, evaluation, rules, leaderboards,
results, news, each its own URL.

A tab whose URL name does not resolve (a page not built yet) is left out, so a new
section appears by itself once its URL exists. Which tabs a user gets is the policy's
call: the leaderboards tab only where ``policy.datasets_open`` lets them in.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from django.urls import NoReverseMatch, reverse

from . import policy
from .models import Challenge

# (key, label, URL name) in the order the bar shows them.
SECTIONS = [
    ("overview", "Overview", "challenge_detail"),
    ("data", "Data", "challenge_data"),
    ("evaluation", "Evaluation", "challenge_evaluation"),
    ("rules", "Rules", "challenge_rules"),
    ("leaderboards", "Leaderboards", "leaderboard"),
    ("results", "Results", "challenge_results"),
    ("news", "News", "challenge_news"),
]
KEYS = frozenset(key for key, _, _ in SECTIONS)


@dataclass(frozen=True)
class Tab:
    key: str
    label: str
    url: str
    current: bool


def tabs_for(
    challenge: Challenge,
    *,
    active: str,
    user,
    now: datetime,
    datasets: Iterable | None = None,
) -> list[Tab]:
    """The tabs of ``challenge`` for ``user`` at ``now``, ``active`` marked current.

    The leaderboards tab opens the first dataset's validation board; it is left out
    while the datasets are closed to ``user`` or the challenge has none. ``datasets``
    (the challenge's, in order) spares a query when the caller has them already.
    """
    if active not in KEYS:
        raise ValueError(f"unknown tab {active!r}; expected one of {sorted(KEYS)}")
    tabs = []
    for key, label, url_name in SECTIONS:
        if key == "leaderboards":
            url = _leaderboards_url(challenge, user=user, now=now, datasets=datasets)
        else:
            url = _reverse(url_name, challenge.slug)
        if url is not None:
            tabs.append(Tab(key, label, url, current=key == active))
    return tabs


def _reverse(url_name: str, *args) -> str | None:
    try:
        return reverse(url_name, args=args)
    except NoReverseMatch:
        return None


def _leaderboards_url(challenge, *, user, now, datasets) -> str | None:
    if not policy.datasets_open(challenge, user=user, now=now):
        return None
    first = challenge.datasets.first() if datasets is None else next(iter(datasets), None)
    if first is None:
        return None
    url = _reverse("leaderboard", challenge.slug, first.name)
    return None if url is None else f"{url}?split=val"
