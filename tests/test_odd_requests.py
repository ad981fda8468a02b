"""No URL of the site answers 500 to odd bytes in its path, query, headers or cookies.

Run on SQLite by `make test` and on PostgreSQL by .ci/run's second leg: PostgreSQL
refuses strings with NUL bytes, so a NUL that reaches a query is a 500 there only.
"""

import re

import time_machine
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from tests.factories import AFTER, make_dataset, make_user
from tests.leaderboard.helpers import add_entry, reg

ODD = ["%00", "test%00", "%ff%c0%af", "..%2f..%2f", "x" * 3000, "%e2%80%ae-1"]
PARAMS = ["split", "sort", "view", "page", "q", "dataset", "status", "next"]


def _patterns(resolver=None, prefix=""):
    """(route, name) of every URL pattern, routes joined through includes."""
    resolver = resolver or get_resolver()
    for entry in resolver.url_patterns:
        route = prefix + str(entry.pattern)
        if isinstance(entry, URLResolver):
            yield from _patterns(entry, route)
        elif isinstance(entry, URLPattern):
            yield route, entry.name


def _clients():
    anonymous = Client()
    participant = Client()
    participant.force_login(make_user("participant"))
    staff = Client()
    staff.force_login(make_user("organiser", is_staff=True))
    return {"anonymous": anonymous, "participant": participant, "staff": staff}


def _site_routes(challenge, dataset, submission):
    """Every named route of the site (not the admin's) with real arguments."""
    values = {"slug": challenge.slug, "name": dataset.name, "pk": submission.pk, "split": "val"}
    routes = []
    for route, name in _patterns():
        if route.startswith("admin/") or name is None:
            continue
        kwargs = {key: values.get(key, "abc") for key in re.findall(r"<(?:\w+:)?(\w+)>", route)}
        routes.append((route, reverse(name, kwargs=kwargs), kwargs))
    return routes


def _odd_variants(url: str, kwargs: dict) -> list[str]:
    """The URL with each argument replaced by (or followed by) odd bytes, and with every
    parameter the site reads set to odd bytes at once."""
    variants = []
    for value in kwargs.values():
        for odd in ODD:
            variants.append(url.replace(f"/{value}", f"/{odd}", 1))
            variants.append(url.replace(f"/{value}", f"/{value}{odd}", 1))
    for odd in ODD:
        variants.append(url + "?" + "&".join(f"{param}={odd}" for param in PARAMS))
    variants.append(f"{url}?%00=1")
    return variants


@time_machine.travel(AFTER, tick=False)
def test_no_odd_byte_gives_a_500_on_any_page(challenge):
    challenge.results_published = True
    challenge.save()
    dataset = make_dataset(challenge, "gaze")
    clients = _clients()
    owner = make_user("owner")
    submission = add_entry(dataset, user=owner, val=reg(0.5, 0.4), test=reg(0.6, 0.5))
    routes = _site_routes(challenge, dataset, submission)
    assert len(routes) >= 15  # every page, export, plot and API of the site
    checked = 0
    for _route, url, kwargs in routes:
        for odd_url in _odd_variants(url, kwargs):
            for who, client in clients.items():
                response = client.get(odd_url)
                assert response.status_code < 500, (who, odd_url, response.status_code)
                checked += 1
    assert checked > 500
