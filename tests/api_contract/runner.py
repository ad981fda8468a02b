"""One schemathesis run (its CLI, ``st run``, in a child process) against a live server as
one role, and what it found: operations, test cases and checks counted from its own
reports (the JSON run report and the NDJSON event stream), failures by check.

Shared by tests/api_contract/test_schemathesis.py (live_server, SQLite or PostgreSQL) and
tests/stack/test_schemathesis.py (gunicorn, PostgreSQL, Redis, a Celery worker).
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from .leaks import FORBIDDEN_ENV
from .world import World, forbidden

REPO = Path(__file__).resolve().parents[2]
SCHEMA_PATH = "/api/v1/schema/"
# The checks every answer must pass (issue 31): any failure of these fails the test.
REQUIRED_CHECKS = (
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_schema_conformance",
    "response_headers_conformance",
    "no_hidden_data",
)
# Bounds: examples per operation and phase; every phase runs to its end (examples,
# coverage, fuzzing, stateful: about 30 s a role here), the same cases on every run of a
# seed. SCHEMATHESIS_MAX_TIME (seconds) makes a run a hunt instead: fuzzing and stateful
# testing repeat until the time is spent. A run that outlives RUN_TIMEOUT is killed.
MAX_EXAMPLES = 10
MAX_TIME = int(os.environ.get("SCHEMATHESIS_MAX_TIME", "0"))
RUN_TIMEOUT = 300
SEED = 31  # the number: the same cases on every run


@dataclass
class Outcome:
    role: str
    exit_code: int
    operations: int  # selected (every /api/v1/ operation of the schema)
    tested: int
    examples: int  # test cases generated and sent
    checks: int  # check results over every answer
    by_check: dict[str, dict[str, int]] = field(default_factory=dict)  # name -> status -> n
    # Every failed check: {"check", "operation", "message", "example"} (the NDJSON events).
    failures: list[dict] = field(default_factory=list)
    errors: list[dict] = field(default_factory=list)
    statuses: dict[str, int] = field(default_factory=dict)  # HTTP status -> answers
    output: str = ""

    def failing(self, names=REQUIRED_CHECKS) -> list[str]:
        """The failures of the checks in ``names``, one line each (for an assertion)."""
        return sorted(
            {
                f"{f['check']}: {f['operation']} ({f['example']}): {f['message']}"
                for f in self.failures
                if f["check"] in names
            }
        )


def counts_file(database: str) -> Path:
    folder = Path(os.environ.get("SCHEMATHESIS_COUNTS_DIR", "/tmp"))
    return folder / f"schemathesis_counts_{database}.json"


def record(database: str, outcome: Outcome) -> dict:
    """Merge one role's counts into the database's counts file; the totals, refreshed."""
    path = counts_file(database)
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        data = {}
    roles = data.get("roles", {})
    roles[outcome.role] = {
        "operations": outcome.operations,
        "tested": outcome.tested,
        "examples": outcome.examples,
        "checks": outcome.checks,
        "by_check": outcome.by_check,
        "statuses": outcome.statuses,
    }
    data = {
        "database": database,
        "roles": roles,
        "operations": max(role["operations"] for role in roles.values()),
        "examples": sum(role["examples"] for role in roles.values()),
        "checks": sum(role["checks"] for role in roles.values()),
    }
    path.write_text(json.dumps(data, indent=2) + "\n")
    return data


def _upload(world: World) -> dict:
    """A valid upload to the running challenge's test phase (hooks.flatmap_body)."""
    return {
        "challenge": world.slugs["running"],
        "dataset": "gaze",
        "method": "Schemathesis's valid upload",
        "file": base64.b64encode(world.valid_zip).decode(),
    }


def config_toml(world: World) -> str:
    """Dictionaries of the world's real slugs, names and ids, drawn for the parameters of
    those names most of the time (schemathesis's own values otherwise): without them
    nearly every path would be a 404."""
    slugs = [*world.slugs.values(), "no-such-challenge"]
    ids = [*world.submissions, 999999]
    lines = [
        # No crash cache: nothing written to the checkout, and no replay of another run's
        # cases (each run starts from the same seed, against its own world).
        "[cache]",
        "enabled = false",
        "[dictionaries.slugs]",
        f"values = {json.dumps(slugs)}",
        "[dictionaries.datasets]",
        'values = ["gaze", "nosuch"]',
        "[dictionaries.ids]",
        f"values = {json.dumps(ids)}",
        "[dictionaries.usernames]",
        f"values = {json.dumps(world.usernames)}",
        "[dictionaries.actions]",
        'values = ["create", "join", "invite", "accept", "decline", "new_link", "leave"]',
        "[parameters]",
    ]
    bindings = {
        "path.slug": "slugs",
        "path.name": "datasets",
        "path.id": "ids",
        "path.pk": "ids",
        "query.challenge": "slugs",
        "query.dataset": "datasets",
        "body.challenge": "slugs",
        "body.dataset": "datasets",
        "body.username": "usernames",
        "body.action": "actions",
    }
    lines += [
        f'"{key}" = {{ dictionary = "{name}", probability = 0.7 }}'
        for key, name in bindings.items()
    ]
    return "\n".join(lines) + "\n"


def run(
    *,
    base_url: str,
    role: str,
    world: World,
    folder: Path,
    max_examples: int = MAX_EXAMPLES,
    max_time: int = MAX_TIME,
    schema: str | None = None,
    others: tuple[World, ...] = (),
) -> Outcome:
    """``st run`` as ``role`` (the world's token for it), reports in ``folder``; every
    secret of the ``others`` (worlds of the same database for other roles) is forbidden
    too, their organiser's included."""
    folder.mkdir(parents=True, exist_ok=True)
    strings, files = forbidden(world, role)
    for other in others:
        more_strings, more_files = forbidden(other, "anonymous")
        strings, files = [*strings, *more_strings], {**files, **more_files}
    secrets = folder / "forbidden.json"
    secrets.write_text(
        json.dumps(
            {
                "strings": strings,
                "files": {name: base64.b64encode(data).decode() for name, data in files.items()},
                "upload": _upload(world) if role == "participant" else None,
            }
        )
    )
    config = folder / "schemathesis.toml"
    config.write_text(config_toml(world))
    report, events = folder / "report.json", folder / "events.ndjson"
    command = [
        sys.executable,
        "-m",
        "schemathesis.cli",
        "--config-file",
        str(config),
        "run",
        schema or base_url + SCHEMA_PATH,
        "--url",
        base_url,
        "--checks",
        "all",
        "--max-examples",
        str(max_examples),
        "--seed",
        str(SEED),
        # No example database (.hypothesis/ in the checkout): no replay of other runs.
        "--generation-database",
        "none",
        "--workers",
        "1",
        "--request-timeout",
        "30",
        "--report",
        "json,ndjson,junit",
        "--report-json-path",
        str(report),
        "--report-ndjson-path",
        str(events),
        "--report-junit-path",
        str(folder / "junit.xml"),
        "--no-color",
    ]
    if max_time:
        # Fuzzing and stateful testing repeat until the budget is spent.
        command += ["--max-time", str(max_time)]
    if role != "anonymous":
        command += ["--header", f"Authorization: Token {world.tokens[role]}"]
    env = {
        **os.environ,
        "SCHEMATHESIS_HOOKS": "tests.api_contract.hooks",
        FORBIDDEN_ENV: str(secrets),
        "PYTHONPATH": str(REPO),
    }
    done = subprocess.run(
        command,
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=max_time + RUN_TIMEOUT,
    )
    output = done.stdout + done.stderr
    if not report.exists():
        raise AssertionError(f"schemathesis wrote no report (exit {done.returncode}):\n{output}")
    return read_outcome(role, done.returncode, report, events, output)


def read_outcome(role: str, exit_code: int, report: Path, events: Path, output: str) -> Outcome:
    document = json.loads(report.read_text())
    by_check: dict[str, dict[str, int]] = {}
    statuses: dict[str, int] = {}
    checks = 0
    failures: list[dict] = []
    for line in events.read_text().splitlines():
        recorder = json.loads(line).get("ScenarioFinished", {}).get("recorder", {})
        for case_id, results in recorder.get("checks", {}).items():
            for check in results:
                checks += 1
                counts = by_check.setdefault(check["name"], {})
                counts[check["status"]] = counts.get(check["status"], 0) + 1
                if check["status"] != "success" and not _revalidated(check):
                    failures.append(_failure(check, recorder, case_id))
        for interaction in recorder.get("interactions", {}).values():
            if response := interaction.get("response"):
                code = str(response["status_code"])
                statuses[code] = statuses.get(code, 0) + 1
    operations = document["operations"] or {}
    return Outcome(
        role=role,
        exit_code=exit_code,
        operations=operations.get("selected", 0),
        tested=operations.get("tested", 0),
        examples=document["test_cases"]["generated"],
        checks=checks,
        by_check=by_check,
        failures=failures,
        errors=document["errors"],
        statuses=statuses,
        output=output,
    )


def _failure(check: dict, recorder: dict, case_id: str) -> dict:
    failure = (check.get("failure_info") or {}).get("failure") or {}
    case = recorder.get("cases", {}).get(case_id, {}).get("value", {})
    example = " ".join(
        f"{key}={json.dumps(case[key], ensure_ascii=True)[:200]}"
        for key in ("path_parameters", "query", "body")
        if case.get(key)
    )
    response = (recorder.get("interactions", {}).get(case_id) or {}).get("response") or {}
    return {
        "check": check["name"],
        "operation": failure.get("operation") or f"{case.get('method')} {case.get('path')}",
        "message": (failure.get("message") or failure.get("title") or "").replace("\n", " / "),
        "example": f"{example} -> {response.get('status_code')}".strip(),
    }


def _revalidated(check: dict) -> bool:
    """A negative case that hooks.flatmap_case made valid (the valid upload): schemathesis
    says so itself ("Invalid component: positive test case"); its acceptance is right."""
    message = ((check.get("failure_info") or {}).get("failure") or {}).get("message") or ""
    return check["name"] == "negative_data_rejection" and message.endswith(
        "Invalid component: positive test case"
    )
