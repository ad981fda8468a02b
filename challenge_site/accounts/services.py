"""Participants: accounts, profiles and API tokens."""

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
