"""accounts.models: a participant's profile, named in public by its display name."""

from challenge_site.accounts.models import Profile
from tests.factories import make_user


def test_a_profile_is_named_by_its_display_name_else_its_user_name(db):
    ada = Profile.objects.create(user=make_user("ada"), display_name="Ada L.")
    grace = Profile.objects.create(user=make_user("grace"))
    assert (str(ada), str(grace)) == ("Ada L.", "grace")


def test_no_e_mail_is_wanted_until_asked_for(db):
    profile = Profile.objects.create(user=make_user("ada"))
    profile.refresh_from_db()
    assert not profile.email_on_scoring_finished
    assert not profile.email_on_results_published
