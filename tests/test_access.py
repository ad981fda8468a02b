"""challenge_site.access: what a URL names, fetched through a policy builder; a hidden
object gets the same 404 as a missing one."""

import pytest
from django.contrib.auth.models import AnonymousUser
from django.http import Http404

from challenge_site.access import get_visible_or_404
from challenge_site.challenges.policy import visible_challenges
from tests.factories import AFTER, make_challenge, make_user


def test_the_builder_says_what_may_be_fetched(challenge):
    draft = make_challenge(slug="draft", title="Draft", opened_at=None)
    drafter = make_user("drafter", organiser_of=draft)
    anonymous = AnonymousUser()
    found = get_visible_or_404(visible_challenges, user=anonymous, now=AFTER, slug="demo")
    assert found == challenge
    assert get_visible_or_404(visible_challenges, user=drafter, now=AFTER, slug="draft") == draft
    for slug in ("draft", "missing"):  # hidden and missing: one answer
        with pytest.raises(Http404):
            get_visible_or_404(visible_challenges, user=anonymous, now=AFTER, slug=slug)
