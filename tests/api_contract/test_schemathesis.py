"""Schemathesis against a live server (pytest-django's live_server) on the embedded default
(SQLite, tasks in-process) or on PostgreSQL when DATABASE_URL says so (CI runs both): as an
anonymous visitor, a participant and an organiser (token auth), every /api/v1/ operation of
the served schema, with bounded examples and time. No answer 5xx, every answer as the
schema documents it, and no hidden test score or private file in any (hooks.py).

Each role gets a fresh world (tests/api_contract/world.py): the database is flushed after
each test, so that the uploads, withdrawals and team changes of one role's run never
change what the next one sees. The counts (operations, examples, checks) are printed and
written to /tmp/schemathesis_counts_<database>.json (or $SCHEMATHESIS_COUNTS_DIR).
"""

import pytest
from django.db import connection
from django.utils import timezone

from challenge_site.submissions.models import Submission
from tests.api_contract import runner, world
from tests.api_contract.leaks import leaks

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def contract_world(live_server, settings):
    # Every request of a run counts against the API's rate limits: raised for the run
    # (RATE_LIMITS is read on every request); 429 stays a documented answer all the same.
    settings.RATE_LIMITS = {
        **settings.RATE_LIMITS,
        "api_user": "100000/minute",
        "api_anon": "100000/minute",
        "api_upload": "100000/minute",
    }
    built = world.build(now=timezone.now())
    # Scored already (tasks run in-process here): the valid uploads scored, one invalid.
    statuses = Submission.objects.filter(pk__in=built.pending).values_list("status", flat=True)
    assert sorted(statuses) == ["invalid", "scored", "scored"]
    world.add_hidden_scores(built)
    return built


@pytest.mark.parametrize("role", world.ROLES)
def test_every_answer_conforms_and_leaks_nothing(role, contract_world, live_server, tmp_path):
    outcome = runner.run(
        base_url=live_server.url, role=role, world=contract_world, folder=tmp_path / role
    )
    database = connection.vendor
    totals = runner.record(database, outcome)
    print(
        f"\nschemathesis on {database} as {role}: {outcome.operations} operations, "
        f"{outcome.examples} examples, {outcome.checks} checks; statuses {outcome.statuses}; "
        f"totals so far {totals['examples']} examples, {totals['checks']} checks"
    )
    print(outcome.output[-8000:])  # schemathesis's own summary, shown when the test fails
    advisory = outcome.failing(names=set(outcome.by_check) - set(runner.REQUIRED_CHECKS))
    print("other checks' findings (reported, not failing):", *advisory, sep="\n  ")
    assert outcome.errors == []
    assert outcome.failing() == [], "\n".join(outcome.failing())
    assert outcome.operations >= 10 and outcome.tested == outcome.operations, outcome.output
    assert outcome.examples >= outcome.operations and outcome.checks > outcome.examples
    assert outcome.by_check.get("no_hidden_data", {}).get("success", 0) > 0
    # The run reached past the 404s: real answers, successes among them for signed-in roles.
    assert any(code.startswith("2") for code in outcome.statuses), outcome.statuses
    if role == "participant":  # uploads accepted (hooks.flatmap_case), not only refused
        assert "201" in outcome.statuses, outcome.statuses


def test_the_leak_check_finds_a_hidden_score_and_a_private_file_in_a_zip():
    """leaks.leaks (what hooks.no_hidden_data runs on every answer) finds what it is for, and only that."""
    import io
    import zipfile

    target = b"0.125\n-1.5\n2.25\n"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("gaze_test_targets.txt", target)
    strings, files = ["0.91827364"], [("gaze_test_targets.txt", target)]
    assert leaks(buffer.getvalue(), {}, strings=strings, files=files) == [
        "the private file gaze_test_targets.txt in the zip member gaze_test_targets.txt"
    ]
    assert leaks(b'{"test": 0.918273645}', {}, strings=strings, files=files) == [
        "'0.91827364' in the body"
    ]
    assert leaks(b'{"test": 0.9182}', {"X": ["0.5"]}, strings=strings, files=files) == []


def test_float_markers_keep_eight_significant_digits():
    assert world.float_markers([0.918273645, -0.0012345678912, 1.5, None, float("inf")]) == [
        "0.91827364",
        "0.0012345678",
    ]


def test_the_guarded_scores_are_real_the_organiser_sees_them_ada_does_not(
    contract_world, live_server
):
    """The markers the leak check looks for are in the answers of the one role that may
    see them (so their absence elsewhere means something), and not in ada's."""
    import urllib.request

    def body(role: str, pk: int) -> str:
        request = urllib.request.Request(
            f"{live_server.url}/api/v1/submissions/{pk}/",
            headers={"Authorization": f"Token {contract_world.tokens[role]}"},
        )
        with urllib.request.urlopen(request, timeout=30) as answer:
            assert answer.status == 200
            return answer.read().decode()

    own = contract_world.pending[0]  # ada's scored upload, test split 40 % public
    seen = [m for m in contract_world.organiser_only if m in body("organiser", own)]
    assert seen, "the organiser sees no hidden test score of ada's upload"
    assert [m for m in contract_world.organiser_only if m in body("participant", own)] == []
