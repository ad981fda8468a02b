from django.contrib.auth.models import User
from django.urls import reverse

from challenge_site.accounts.models import Profile


def test_user_admin_shows_and_edits_profiles(client, db):
    client.force_login(User.objects.create_superuser("admin", "admin@example.org", "pw"))
    user = User.objects.create_user("ada", "ada@example.org", "pw")
    Profile.objects.create(user=user, display_name="Ada L.", affiliation="Analytical Engines")
    changelist = client.get(reverse("admin:auth_user_changelist"), {"q": "Analytical"})
    page = changelist.content.decode()
    assert "Ada L." in page and "admin@example.org" not in page
    change = client.get(reverse("admin:auth_user_change", args=[user.pk]))
    assert 'name="profile-0-affiliation"' in change.content.decode()
