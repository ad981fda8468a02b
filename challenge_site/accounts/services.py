"""Participants: accounts, profiles and API tokens; the staff status of organisers."""

from django.contrib.auth.models import User
from django.db import transaction
from rest_framework.authtoken.models import Token

from .models import Profile


def profile_for(user: User) -> Profile:
    """The user's profile, created empty for accounts made outside sign-up (admin, shell)."""
    profile, _ = Profile.objects.get_or_create(user=user)
    return profile


@transaction.atomic
def regenerate_token(user: User) -> Token:
    """A new API token; the old one, if any, stops working at once."""
    Token.objects.filter(user=user).delete()
    return Token.objects.create(user=user)


def existing_token(user: User) -> Token | None:
    return Token.objects.filter(user=user).first()


def admit_to_console(*, user: User) -> None:
    """Give ``user`` the staff status that opens the admin (a new co-organiser): what
    they may see there comes from the challenges they organise, not from the status."""
    if not user.is_staff:
        user.is_staff = True
        user.save(update_fields=["is_staff"])
