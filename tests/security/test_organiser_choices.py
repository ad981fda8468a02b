"""The "Organisers" and "Organiser groups" choices of an organiser's own challenge page
list every account and every group of the site: the user names of another challenge's
organisers and participants (a draft's included), and groups named after other
challenges. README: an organiser sees nothing hidden of another challenge, "not in a
list, a filter, a choice"."""

import pytest
import time_machine
from django.contrib.auth.models import Group
from django.urls import reverse

from tests.factories import AFTER, make_user

from .world import SECRET_TITLE, build, client_for


@pytest.mark.django_db
def test_organiser_choices_do_not_list_other_challenges_people_or_groups():
    with time_machine.travel(AFTER, tick=False):
        w = build(draft_b=True)
        jury = Group.objects.create(name=f"{SECRET_TITLE} jury")
        w["theirs"].organiser_groups.add(jury)
        lurker = make_user("draft-b-beta-tester")  # an account that never appeared in public
        page = (
            client_for(w["me"])
            .get(reverse("admin:challenges_challenge_change", args=[w["mine"].pk]))
            .content.decode()
        )
        assert "draft-b-beta-tester" not in page and lurker.pk
        assert ">them<" not in page  # the draft's organiser
        assert ">victim<" not in page  # who took part only in the draft
        assert f"{SECRET_TITLE} jury" not in page
