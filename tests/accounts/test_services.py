"""accounts.services: the staff status a new co-organiser gets."""

from django.contrib.auth.models import User

from challenge_site.accounts.services import admit_to_console
from tests.factories import make_user


def test_admit_to_console_gives_staff_status_and_nothing_else(db, django_assert_num_queries):
    colleague = make_user("colleague")
    admit_to_console(user=colleague)
    stored = User.objects.get(pk=colleague.pk)
    assert (stored.is_staff, stored.is_superuser) == (True, False)
    assert not stored.user_permissions.exists()
    with django_assert_num_queries(0):  # already staff: nothing to write
        admit_to_console(user=stored)
