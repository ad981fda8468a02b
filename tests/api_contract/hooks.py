"""Schemathesis hooks (SCHEMATHESIS_HOOKS=tests.api_contract.hooks): the suite's leak check
as a schemathesis check, run on every answer schemathesis receives, with its own checks.

The forbidden strings and files come from the JSON file named by API_CONTRACT_FORBIDDEN
(runner.py writes it for each role): {"strings": [...], "files": {name: base64 bytes},
"upload": {form fields, "file": base64 zip} or null}. A zip answer is opened and each
member checked as well (a deflated file shows no bytes of its own).

Random bytes never make a valid prediction zip: half the uploads schemathesis generates
for POST /api/v1/submissions/ carry the world's valid zip instead (``upload``), so that
201, scoring and the new entry's answers are explored too. No Django here: this module
runs inside the schemathesis process.
"""

from __future__ import annotations

import base64
import functools
import json
import os

import schemathesis
from hypothesis import strategies as st

from tests.api_contract.leaks import FORBIDDEN_ENV, leaks

UPLOAD_OPERATION = ("POST", "/api/v1/submissions/")


@functools.cache
def _settings() -> dict:
    path = os.environ.get(FORBIDDEN_ENV)
    if not path:
        return {"strings": [], "files": {}, "upload": None}
    with open(path, encoding="utf-8") as source:
        return json.load(source)


def forbidden() -> tuple[tuple[str, ...], tuple[tuple[str, bytes], ...]]:
    data = _settings()
    files = tuple((name, base64.b64decode(value)) for name, value in data["files"].items())
    return tuple(data["strings"]), files


def valid_upload() -> dict | None:
    upload = _settings().get("upload")
    if not upload:
        return None
    return {**upload, "file": base64.b64decode(upload["file"])}


def _positive(case) -> bool:
    meta = getattr(case, "_meta", None)  # schemathesis keeps how a case was generated here
    mode = getattr(getattr(meta, "generation", None), "mode", None)
    return str(getattr(mode, "value", mode)) == "positive"


def _with_upload(case, upload: dict):
    case.body = {**case.body, **upload}  # a new body: schemathesis revalidates the case
    return case


@schemathesis.hook
def flatmap_case(context, case):
    """POST /api/v1/submissions/: half the schema-valid forms carry the valid upload (a
    negative case stays as generated: invalid data must stay invalid)."""
    operation = context.operation or case.operation
    upload = valid_upload()
    if (
        upload is None
        or operation is None
        or (operation.method.upper(), operation.path) != UPLOAD_OPERATION
        or not isinstance(case.body, dict)
        or not _positive(case)
    ):
        return st.just(case)
    return st.booleans().map(lambda use: _with_upload(case, upload) if use else case)


@schemathesis.check
def no_hidden_data(ctx, response, case):
    """No hidden test score, secret of another challenge or private file in any answer."""
    strings, files = forbidden()
    found = leaks(response.content or b"", dict(response.headers), strings=strings, files=files)
    if found:
        raise AssertionError("hidden data in the answer: " + "; ".join(found))
