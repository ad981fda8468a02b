"""No free oracle on the hidden test targets, on the real stack.

Two test-phase uploads that differ only in one value, placed just above and then just
below the first hidden test target, must look exactly alike to their participant over
HTTP: the API's answer, the submission page, and what is left of the daily limit.
(In-process, tests/submissions/test_hostile_corpus.py checks the same with the clock
frozen; here real workers score them on PostgreSQL.)
"""

import difflib
import re

import numpy as np
import pytest

import scoring
from tests.submissions.hostile import ORACLE_PROBES, oracle_zips

from .client import Client
from .conftest import PASSWORD, import_challenge, make_user, wait_final
from .data import DatasetSpec, in_test_phase

SECRET = DatasetSpec("regression", (50, 20, 30), dim=2, seed=11)


@pytest.fixture(scope="module")
def hidden(stack):
    files = import_challenge(
        stack, in_test_phase("oracle", "Oracle test", {"secret": SECRET}, test_daily_limit=20)
    )
    targets = scoring.read_targets(files["secret"]["secret_test_targets.txt"], path="t")
    return {"first_target": float(targets[0]), "rows": int(np.size(targets))}


def _observed(api, page_client, pk: int) -> dict:
    answer = api.get(f"/api/v1/submissions/{pk}/").json()
    for key in ("id", "url", "api_url", "created"):
        answer.pop(key, None)
    page = page_client.get(f"/submissions/{pk}/").text
    main = re.search(r"<main.*</main>", page, re.DOTALL)
    page = re.sub(r"/submissions/\d+/", "/submissions/ID/", main.group(0))
    page = re.sub(r"#\d+", "#ID", page)
    page = re.sub(r"<time[^>]*>[^<]*</time>", "TIME", page)  # when it was sent
    page = re.sub(r'name="csrfmiddlewaretoken" value="[^"]*"', "CSRF", page)
    return {"api": answer, "page": page}


def _used_today(page_client) -> int:
    """The "Today" count of the submit page's limits table, for the dataset "secret"."""
    page = page_client.get("/challenges/oracle/submit/").text
    row = re.search(r'<th scope="row">secret</th>\s*<td class="num">(\d+)</td>', page)
    return int(row.group(1))


@pytest.mark.parametrize("probe", ORACLE_PROBES, ids=[probe.id for probe in ORACLE_PROBES])
def test_uploads_either_side_of_a_hidden_target_look_alike(probe, stack, hidden):
    user, token = make_user(f"oracle-{probe.id}")
    api = Client(stack.base_url, token=token)
    page_client = Client(stack.base_url)
    page_client.login(user.username, PASSWORD)
    above, below = oracle_zips("secret", hidden["rows"], hidden["first_target"], probe)
    used = [_used_today(page_client)]
    seen = []
    for data in (above, below):
        response = api.api_submit("oracle", data, dataset="secret", method=probe.id)
        assert response.status == 201, response
        pk = response.json()["id"]
        wait_final(stack, [pk])
        seen.append(_observed(api, page_client, pk))
        used.append(_used_today(page_client))
    first, second = seen
    assert first["api"] == second["api"]
    assert first["page"] == second["page"], "\n".join(
        difflib.unified_diff(first["page"].splitlines(), second["page"].splitlines(), lineterm="")
    )
    # Both counted against the limit alike (or neither did).
    assert used[1] - used[0] == used[2] - used[1]
    assert "test" not in first["api"]["scores"]
