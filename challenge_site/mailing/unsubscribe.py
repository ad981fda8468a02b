"""What every unsubscribe link shares: a signed token (no expiry, no login needed:
whoever holds the e-mail may unsubscribe), refused as InvalidToken when it was not made
here, and the address its page shows. Each app signs its own value with its own salt,
so a token of one app is worth nothing in another."""

from django.core import signing


class InvalidToken(Exception):
    """An unsubscribe token that was not made here (tampered with or cut short)."""


def sign(value, *, salt: str) -> str:
    return signing.dumps(value, salt=salt)


def unsign(token: str, *, salt: str):
    """The value ``sign`` signed with ``salt``; InvalidToken if the signature does
    not match. The caller checks the value's shape."""
    try:
        return signing.loads(token, salt=salt)
    except (signing.BadSignature, ValueError, UnicodeError) as error:
        raise InvalidToken(str(error)) from None


def masked(email: str) -> str:
    """a…@example.org: enough to recognise one's address, not to read it off a
    forwarded link."""
    local, at, domain = email.partition("@")
    if not at:
        return "your address"
    return f"{local[:1]}…@{domain}"
