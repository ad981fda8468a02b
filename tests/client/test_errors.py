"""puc_client.errors: the exit codes scripts rely on, and the one exception every command
raises."""

import re
from email.message import Message
from pathlib import Path

import pytest
import yaml
from puc_client import errors
from puc_client.errors import ClientError
from puc_client.transport import http_error

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "participants.md"
SCHEMA = ROOT / "docs" / "openapi.yaml"
CLIENT = ROOT / "client" / "puc_client"


def _called_paths() -> list[str]:
    """The API paths the client's sources name, as patterns: an f-string's {…} is any text."""
    patterns = set()
    for source in CLIENT.glob("*.py"):
        for literal in re.findall(r'f?"(/api/[^"]*)"', source.read_text()):
            parts = re.split(r"\{[^}]*\}", literal)
            patterns.add(".+".join(re.escape(part) for part in parts))
    return sorted(patterns)


def _client_operations(schema: dict):
    """(path, method, operation) of every documented operation that the client calls."""
    called = [re.compile(pattern) for pattern in _called_paths()]
    for path, item in schema["paths"].items():
        concrete = re.sub(r"\{[^}]+\}", "x", path)
        if any(pattern.fullmatch(concrete) for pattern in called):
            for method, operation in item.items():
                yield path, method, operation


def test_the_exit_codes_are_the_ones_the_guide_documents():
    section = GUIDE.read_text().split("Every failure is one line on stderr")[1]
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


def test_every_error_the_schema_documents_for_the_clients_calls_is_in_the_table():
    schema = yaml.safe_load(SCHEMA.read_text())
    operations = list(_client_operations(schema))
    paths = {path for path, _, _ in operations}
    # The walk finds what the client calls (who am I, list, download, submit, teams…).
    assert {
        "/api/me/",
        "/api/v1/challenges/",
        "/api/v1/challenges/{slug}/datasets/{name}.zip",
        "/api/v1/submissions/",
        "/api/v1/submissions/{id}/withdraw/",
        "/api/v1/challenges/{slug}/team/",
        "/api/v1/challenges/{slug}/datasets/{name}/leaderboard/",
    } <= paths
    documented = {
        int(status)
        for _, _, operation in operations
        for status in operation["responses"]
        if int(status) >= 400
    }
    assert documented == set(errors.HTTP_ERRORS)


def test_the_table_holds_no_status_the_schema_does_not_document():
    schema = yaml.safe_load(SCHEMA.read_text())
    anywhere = {
        int(status)
        for item in schema["paths"].values()
        for operation in item.values()
        for status in operation["responses"]
    }
    assert set(errors.HTTP_ERRORS) <= anywhere


def _headers(**values) -> Message:
    message = Message()
    for key, value in values.items():
        message[key] = value
    return message


@pytest.mark.parametrize("status", sorted(errors.HTTP_ERRORS))
def test_each_row_is_the_exit_code_the_client_gives(status):
    error = http_error(status, {}, _headers(), url="http://s/x", has_token=True)
    row = errors.HTTP_ERRORS[status]
    assert (error.code, error.status) == (row.code, status)
    assert error.message.startswith(row.message.format(url="http://s/x", status=status))


@pytest.mark.parametrize(
    ("status", "code"),
    [(405, errors.PROBLEMS), (500, errors.UNAVAILABLE), (503, errors.UNAVAILABLE)],
)
def test_statuses_outside_the_table(status, code):
    assert http_error(status, "", _headers(), url="u", has_token=True).code == code
    assert errors.http_error_row(status).code == code
