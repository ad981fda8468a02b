"""HTTP answers mapped to messages and exit codes: unit cases, then the real site."""

from email.message import Message

import pytest
from puc_client import errors
from puc_client.transport import http_error, retry_after_text


def headers(**values) -> Message:
    message = Message()
    for key, value in values.items():
        message[key.replace("_", "-")] = value
    return message


def test_401_says_to_log_in():
    refused = http_error(401, {"detail": "Invalid token."}, headers(), url="u", has_token=True)
    assert (refused.code, refused.message) == (
        errors.AUTH,
        "the token was refused: run `puc login`",
    )
    missing = http_error(401, {}, headers(), url="u", has_token=False)
    assert missing.message == "not logged in: run `puc login`"


def test_429_gives_the_sites_message_and_when_to_retry():
    error = http_error(
        429,
        {"detail": "You have used today's 1 validation submission."},
        headers(Retry_After="3725"),
        url="u",
        has_token=True,
    )
    assert error.code == errors.LIMIT and error.retry_after == 3725
    assert error.message.startswith(
        "You have used today's 1 validation submission; retry in 1 h 2 min (at "
    )


def test_400_lists_the_reasons():
    body = {"file": ["a.txt: unexpected file", "b.txt: unexpected file"], "method": ["required"]}
    error = http_error(400, body, headers(), url="u", has_token=True)
    assert (error.code, error.message) == (errors.PROBLEMS, "the site refused the request:")
    assert error.details == ["a.txt: unexpected file", "b.txt: unexpected file", "method: required"]
    one = http_error(400, {"detail": "Nope."}, headers(), url="u", has_token=True)
    assert one.message == "the site refused the request: Nope." and one.details == []


def test_403_names_the_join_page_and_5xx_is_unavailable():
    body = {"detail": "Accept the rules first.", "missing": ["x"], "join_url": "http://s/join/"}
    refused = http_error(403, body, headers(), url="u", has_token=True)
    assert (refused.code, refused.message) == (
        errors.REFUSED,
        "Accept the rules first. (join at http://s/join/)",
    )
    down = http_error(502, "", headers(), url="http://s/x", has_token=True)
    assert (down.code, down.message) == (
        errors.UNAVAILABLE,
        "the site answered HTTP 502 (http://s/x); try again later",
    )


@pytest.mark.parametrize(
    ("value", "expected"),
    [("45", "retry in 45 s"), ("600", "retry in 10 min"), ("61", "retry in 1 min 1 s")],
)
def test_retry_after_in_words(value, expected):
    assert retry_after_text(value, now=0).startswith(expected + " (at 1970-01-01 ")
    assert retry_after_text("Thu, 01 Jan 1970 00:02:00 GMT", now=0).startswith("retry in 2 min")


# --- The real site ------------------------------------------------------------------


def test_a_wrong_token_is_refused(puc, site, environ):
    environ["PUC_TOKEN"] = "0" * 40
    result = puc("whoami")
    assert (result.code, result.err) == (
        errors.AUTH,
        "puc: the token was refused: run `puc login`\n",
    )


def test_an_unknown_challenge_is_not_found(puc, site):
    result = puc("datasets", "nope")
    assert result.code == errors.REFUSED
    assert result.err == "puc: no challenge 'nope': `puc challenges` lists them\n"
