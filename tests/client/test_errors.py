"""puc_client.errors: the exit codes scripts rely on, and the one exception every command
raises."""

import re
from pathlib import Path

from puc_client import errors
from puc_client.errors import ClientError

README = Path(__file__).resolve().parents[2] / "README.md"


def test_the_exit_codes_are_the_ones_the_readme_documents():
    section = README.read_text().split("Every failure is one line on stderr")[1]
    documented = [int(code) for code in re.findall(r"^\| (\d+) \|", section, re.MULTILINE)]
    assert documented == sorted(errors.EXIT_CODES)
    assert (errors.OK, errors.PROBLEMS, errors.USAGE, errors.AUTH) == (0, 1, 2, 3)
    assert (errors.REFUSED, errors.LIMIT, errors.UNAVAILABLE, errors.TIMEOUT) == (4, 5, 6, 7)
    assert errors.INTERRUPTED == 130
    assert all(meaning for meaning in errors.EXIT_CODES.values())


def test_a_client_error_carries_its_message_code_and_details():
    lines = ["a.txt:1: bad"]
    error = ClientError("not submitted", errors.PROBLEMS, lines, retry_after=30.0, status=400)
    lines.append("changed afterwards")
    assert (str(error), error.message, error.code) == ("not submitted", "not submitted", 1)
    assert (error.details, error.retry_after, error.status) == (["a.txt:1: bad"], 30.0, 400)
    bare = ClientError("not logged in", errors.AUTH)
    assert (bare.details, bare.retry_after, bare.status) == ([], None, None)
