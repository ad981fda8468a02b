"""The signed token every unsubscribe link carries, and the address its page shows."""

import pytest
from django.core import signing

from challenge_site.mailing.unsubscribe import InvalidToken, masked, sign, unsign

SALT = "tests.mailing.unsubscribe"


@pytest.mark.parametrize("value", [7, [7, "results"]])
def test_a_token_gives_back_what_was_signed(value):
    token = sign(value, salt=SALT)
    assert unsign(token, salt=SALT) == value
    assert token == signing.dumps(value, salt=SALT)  # the links already sent stay valid


def tampered(token: str) -> list[str]:
    return [
        token[:-1] + ("A" if token[-1] != "A" else "B"),  # signature changed
        token[:-5],  # cut short
        sign(7, salt="another app's salt"),
        signing.dumps(7),  # signed, but not for unsubscribing
        "not-a-token",
        "é:ü",
    ]


def test_a_token_not_made_here_is_invalid():
    for token in tampered(sign(7, salt=SALT)):
        with pytest.raises(InvalidToken):
            unsign(token, salt=SALT)


@pytest.mark.parametrize(
    ("email", "shown"),
    [
        ("ada@example.org", "a…@example.org"),
        ("@example.org", "…@example.org"),
        ("no-at-sign", "your address"),
        ("", "your address"),
    ],
)
def test_the_page_shows_enough_of_the_address_to_recognise_it(email, shown):
    assert masked(email) == shown
