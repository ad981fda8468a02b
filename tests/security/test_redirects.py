import pytest
import time_machine
from django.urls import reverse

from tests.factories import VALIDATION, make_challenge, make_user

from .world import client_for

EVIL = [
    "//evil.example/",
    "/\\evil.example/",
    "\\\\evil.example",
    "https:evil.example",
    "http://evil.example",
    "javascript:alert(1)",
    " //evil.example",
    "/%2F%2Fevil.example",
    "///evil.example",
    "http:\\\\evil.example",
    "\t//evil.example",
    "https://testserver@evil.example/",
]


@pytest.mark.django_db
@pytest.mark.parametrize("target", EVIL)
def test_next_parameters_stay_on_site(target):
    with time_machine.travel(VALIDATION, tick=False):
        challenge = make_challenge(require_rules_acceptance=True)
        organiser = make_user("org", organiser_of=challenge)
        c = client_for(make_user("ann"))
        r = c.post(
            reverse("challenge_join", args=[challenge.slug]) + f"?next={target}",
            {"accept_rules": "on", "next": target},
        )
        assert r.status_code == 302
        assert r.url.startswith("/") and not r.url.startswith(("//", "/\\")), r.url
        o = client_for(organiser)
        r = o.post(reverse("challenge_preview", args=[challenge.slug]), {"on": "1", "next": target})
        assert r.url.startswith("/") and not r.url.startswith(("//", "/\\")), r.url
