"""submissions.access: the entry its participant acts on, else the same 404 as a missing one."""

import pytest
from django.contrib.auth.models import AnonymousUser
from django.http import Http404

from challenge_site.submissions.access import get_owned_or_404
from tests.factories import make_dataset, make_user
from tests.leaderboard.helpers import add_entry, reg


def test_only_the_owner_gets_the_entry(challenge, organiser):
    ada = make_user("ada")
    entry = add_entry(make_dataset(challenge, "gaze"), user=ada, val=reg(0.5, 0.4))
    assert get_owned_or_404(user=ada, pk=entry.pk) == entry
    for user, pk in (
        (make_user("bob"), entry.pk),
        (organiser, entry.pk),  # organisers moderate in the admin; they do not act for ada
        (AnonymousUser(), entry.pk),
        (ada, entry.pk + 1000),
    ):
        with pytest.raises(Http404):
            get_owned_or_404(user=user, pk=pk)
