"""The hostile corpus (tests/submissions/hostile.py) over HTTP to gunicorn, API and form.

None gives a 500; refused ones are answered 400 with their message and leave nothing
behind; accepted ones are scored as invalid by the worker with their message; no file
appears outside the media and private storage folders (upload spool files included).
"""

import tempfile
from functools import cache
from pathlib import Path

import pytest

from tests.submissions.hostile import CASES, TRAVERSAL_MARKER, Target, case_ids

from .client import Client
from .conftest import wait_final
from .harness import REPO

# "sines": 100 validation rows; "coins" is another dataset of the same challenge.
TARGET = Target(dataset="sines", val_rows=100, other_dataset="coins")


@cache
def corpus_bytes(case_id: str) -> bytes:
    return next(case for case in CASES if case.id == case_id).build(TARGET)


def dataset_field(case) -> str:
    return case.dataset_field(TARGET) if case.dataset_field else TARGET.dataset


@pytest.fixture(scope="module")
def form_client(stack, participant):
    client = Client(stack.base_url)
    client.login(participant["username"], "a-long-Passphrase-42")
    return client


# Zips the site accepted (then scored as invalid) during this module; none stays stored.
ACCEPTED: set[int] = set()


@pytest.fixture(scope="module")
def files_before(stack, challenge):
    """The stack's files, and the length of gunicorn's log, before the corpus is sent."""
    return stack.files(), len(stack.log_tail("web", size=10**9))


def submission_id(response) -> int:
    return int(response.headers["Location"].rstrip("/").split("/")[-1])


@pytest.mark.parametrize("case", CASES, ids=case_ids())
def test_corpus_through_the_api(case, stack, challenge, api, files_before):
    response = api.api_submit(
        "stack", corpus_bytes(case.id), dataset=dataset_field(case), method=case.id
    )
    expected = case.expected(TARGET)
    if case.outcome == "refused":
        assert response.status == 400, response
        assert any(expected in message for message in response.json()[case.field]), response
        return
    assert response.status == 201, response
    pk = response.json()["id"]
    ACCEPTED.add(pk)
    assert wait_final(stack, [pk]) == {pk: "invalid"}
    report = api.get(f"/api/v1/submissions/{pk}/").json()
    assert report["status"] == "invalid" and report["scores"] == {}
    assert any(expected in line for line in report["errors"]), report["errors"][:5]


@pytest.mark.parametrize("case", CASES, ids=case_ids())
def test_corpus_through_the_form(case, stack, challenge, form_client, files_before):
    response = form_client.form_submit(
        "stack", corpus_bytes(case.id), dataset=dataset_field(case), method=case.id
    )
    expected = (case.form_expected or case.expected)(TARGET)
    if case.outcome == "refused":
        assert response.status == 400, response
        assert expected in response.page_text
        return
    assert response.status == 302, response
    pk = submission_id(response)
    ACCEPTED.add(pk)
    assert wait_final(stack, [pk]) == {pk: "invalid"}
    assert expected in form_client.get(f"/submissions/{pk}/").page_text


def test_nothing_was_written_outside_storage(stack, files_before):
    """Runs after the corpus (same module, in file order)."""
    files, log_start = files_before
    new = stack.files() - files
    outside = sorted(
        path
        for path in new
        if not path.startswith(
            (
                "private/submissions/stack/sines/",
                # The scored uploads' per-example terms and the split's resampled losses.
                "private/terms/stack/sines/",
                "private/intervals/",
                "logs/",
            )
        )
        and path != "celerybeat-schedule"
    )
    assert outside == []
    zips = [path for path in new if path.startswith("private/submissions/")]
    # Refused uploads leave nothing behind, and the accepted ones, all found invalid, keep
    # only their reports: their zips are deleted once found invalid.
    assert ACCEPTED and zips == []
    # Upload spool files were removed (TMPDIR is the stack's tmp/; the worker keeps an
    # empty folder of its own there).
    assert not [path for path in (stack.root / "tmp").rglob("*") if path.is_file()]
    # Where a naive extraction of "../../escaped-from-the-zip/…" or "/tmp/…" would land.
    assert not list(stack.root.rglob(f"*{TRAVERSAL_MARKER}*"))
    for folder in (Path(tempfile.gettempdir()), Path("/tmp"), REPO, REPO.parent, Path("/")):
        assert not list(folder.glob(f"*{TRAVERSAL_MARKER}*"))
    assert "Internal Server Error" not in stack.log_tail("web", size=10**9)[log_start:]
