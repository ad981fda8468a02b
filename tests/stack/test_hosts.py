"""The web process and two Celery workers on separate hosts, sharing only PostgreSQL,
Redis and S3 (SeaweedFS): uploads land in S3, both worker hosts score, and a worker host
killed mid-run loses nothing.

The hosts are network namespaces joined by veth links (tests/stack/hosts.py); where they
cannot be made, the same test runs with separate processes and folders on the loopback,
says so in a warning and records ``hosts=processes`` in the test report.

This stack has a database, Redis database and S3 server of its own; the test reads the
database with plain SQL (the ORM of this process belongs to the suite's main stack).
A heartbeat every 2 s (the harness's) and a sweep every second: the run of the killed
host is queued again about 6 s after its last beat (test_takeover.py measures it with the
production intervals).
"""

import contextlib
import os
import subprocess
import sys
import warnings
from functools import cache

import pytest

from .client import Client
from .conftest import REPO
from .data import (
    DatasetSpec,
    in_validation,
    make_zip,
    prediction_lines,
    sample_lines,
    write_challenge,
)
from .harness import pg_connect, wait_until
from .hosts import PREFIX, drop_stale_namespaces, namespace_names, namespaces_unavailable
from .hoststack import HostsStack
from .s3 import SeaweedS3

PASSWORD = "a-long-Passphrase-42"
DATASETS = {"big": DatasetSpec("regression", (200, 20_000, 100), dim=1, seed=3)}
FINAL = ("scored", "invalid", "failed")


class SeparateHostsFallback(UserWarning):
    """Network namespaces could not be made: hosts are separate processes on the loopback."""


@pytest.fixture(scope="module")
def s3(tmp_path_factory):
    server = SeaweedS3(tmp_path_factory.mktemp("seaweed")).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def hosts(s3):
    stack = HostsStack(
        workers=2,
        s3=s3,
        scoring_timeout=20,
        sweep_interval=1,
        extra_env={"API_THROTTLE_UPLOAD": "off", "API_THROTTLE_USER": "off"},
        keep_logs_in=REPO / "test-output" / "stack-logs" / "hosts",
    )
    try:
        stack.start()
        yield stack
    finally:
        stack.stop()


def sql(stack, query: str, *params) -> list[tuple]:
    with contextlib.closing(pg_connect(stack.db_name)) as connection, connection.cursor() as cur:
        cur.execute(query, params)
        return cur.fetchall()


def submissions(stack, ids) -> dict[int, tuple]:
    """{id: (status, attempts, task_id)}"""
    rows = sql(
        stack,
        "SELECT id, status, attempts, task_id FROM submissions_submission WHERE id = ANY(%s)",
        list(ids),
    )
    return {pk: rest for pk, *rest in rows}


def wait_final(stack, ids, *, timeout: float) -> dict[int, tuple]:
    def done():
        stack.check_alive()
        found = submissions(stack, ids)
        return found if all(found.get(pk, ("",))[0] in FINAL for pk in ids) else None

    return wait_until(done, timeout=timeout, interval=0.2, what=f"submissions {sorted(ids)}")


@cache
def quick_zip() -> bytes:
    return make_zip({"big_val_predict.txt": prediction_lines("regression", 20_000, seed=4)})


@cache
def slow_zip() -> bytes:
    """20,000 rows of 300 samples (42 MB, zipped about 19 MB): a valid file that takes a
    worker a few seconds to fetch from S3 and score, long enough to be caught mid-run."""
    return make_zip({"big_val_predict.txt": sample_lines(20_000, 300)}, level=1)


def setup_challenge(stack) -> str:
    """Import the challenge on the web host (datasets go to S3); a participant's token."""
    folder = stack.host_root("web") / "import" / "hosts"
    write_challenge(in_validation("hosts", "Separate hosts", DATASETS), folder)
    stack.manage("import_challenge", str(folder))
    baselines = [pk for (pk,) in sql(stack, "SELECT id FROM submissions_submission")]
    assert set(v[0] for v in wait_final(stack, baselines, timeout=120).values()) == {"scored"}
    return stack.manage(
        "shell",
        "-c",
        "from django.contrib.auth.models import User\n"
        "from rest_framework.authtoken.models import Token\n"
        "from challenge_site.accounts.models import Profile\n"
        f"user = User.objects.create_user('ada', 'ada@example.org', '{PASSWORD}')\n"
        "Profile.objects.create(user=user, display_name='Ada')\n"
        "print(Token.objects.create(user=user).key)",
    ).split()[-1]  # after the shell's note on what it imported


def logged(stack, tasks: set[str]) -> dict[str, set[str]]:
    """Which worker host logged each task as succeeded (the line follows the database
    write: waited for)."""
    return wait_until(
        lambda: (
            (found := stack.scored_by(tasks)) and set().union(*found.values()) == tasks and found
        ),
        timeout=15,
        what=f"workers to log tasks {tasks} as succeeded",
    )


def upload(api, data: bytes) -> int:
    response = api.api_submit("hosts", data, dataset="big", method="hosts")
    assert response.status == 201, response
    return response.json()["id"]


def assert_scored_once(stack, api, ids) -> None:
    """Each scored, with one SplitResult and one set of Score rows, shown by the API."""
    results = dict(
        sql(
            stack,
            "SELECT submission_id, count(*) FROM submissions_splitresult "
            "WHERE submission_id = ANY(%s) GROUP BY submission_id",
            list(ids),
        )
    )
    assert results == dict.fromkeys(ids, 1)
    scores = sql(
        stack,
        "SELECT submission_id, split, loss, count(*) FROM submissions_score "
        "WHERE submission_id = ANY(%s) GROUP BY submission_id, split, loss",
        list(ids),
    )
    assert scores and all(count == 1 for *_, count in scores)
    assert {pk for pk, *_ in scores} == set(ids)
    values = sql(
        stack,
        "SELECT submission_id, loss, value FROM submissions_score "
        "WHERE split = 'val' AND submission_id = ANY(%s)",
        list(ids),
    )
    for pk in ids:
        body = api.get(f"/api/v1/submissions/{pk}/").json()
        assert body["status"] == "scored"
        assert body["scores"]["val"] == {loss: value for sub, loss, value in values if sub == pk}
        assert any(value is not None for value in body["scores"]["val"].values())


def test_web_and_two_workers_on_separate_hosts_lose_nothing(hosts, s3, record_property):
    record_property("hosts", hosts.isolation)
    if hosts.unavailable:
        warnings.warn(
            SeparateHostsFallback(
                f"no network namespaces ({hosts.unavailable}): the web process and the "
                "workers ran as separate processes with separate folders on the loopback"
            ),
            stacklevel=1,
        )
    else:
        # The test run reaches gunicorn over the web host's link, not the loopback; a
        # host's own loopback has no PostgreSQL (only the forwarder leads to it).
        assert not hosts.base_url.startswith("http://127.")
        probe = "import socket; socket.create_connection(('127.0.0.1', 5432), 2)"
        worker = hosts.hosts["worker1"]
        refused = subprocess.run(
            worker.command([sys.executable, "-c", probe]), capture_output=True, timeout=30
        )
        assert refused.returncode != 0 and b"ConnectionRefusedError" in refused.stderr
    api = Client(hosts.base_url, token=setup_challenge(hosts), timeout=120)

    # Uploads through the web host land in S3 and are scored by both worker hosts.
    first = [upload(api, quick_zip()) for _ in range(8)]
    found = wait_final(hosts, first, timeout=120)
    assert {status for status, _, _ in found.values()} == {"scored"}
    files = sql(hosts, "SELECT file FROM submissions_submission WHERE id = ANY(%s)", first)
    assert {name for (name,) in files} <= set(s3.objects("site-private"))
    by_host = logged(hosts, {task for _, _, task in found.values()})
    assert all(by_host.values()), f"a worker host took no task: {by_host}"
    assert_scored_once(hosts, api, first)

    # A worker host dies while scoring: the other one scores its run, once.
    slow = upload(api, slow_zip())
    rest = [upload(api, quick_zip()) for _ in range(4)]
    running = wait_until(
        lambda: (s := submissions(hosts, [slow])[slow])[0] == "running" and s[2],
        timeout=90,
        interval=0.02,
        what=f"submission {slow} to start running",
    )
    victim = next(
        name
        for name in hosts.worker_hostnames
        if f"submissions.score[{running}] received" in hosts.log_tail(name, size=10**7)
    )
    hosts.kill_host(victim)
    assert submissions(hosts, [slow])[slow][0] == "running"  # killed mid-run
    found = wait_final(hosts, [slow, *rest], timeout=120)
    assert {status for status, _, _ in found.values()} == {"scored"}
    assert found[slow][1] == 2  # the interrupted run and the survivor's
    survivor = next(name for name in hosts.worker_hostnames if name != victim)
    assert logged(hosts, {found[slow][2]})[survivor] == {found[slow][2]}
    assert_scored_once(hosts, api, [*first, slow, *rest])

    # Nothing on any host's disk: uploads, datasets and plots all went to S3.
    assert hosts.local_files() == dict.fromkeys(hosts.host_names, [])


def test_namespaces_of_killed_runs_are_deleted():
    """A run killed before its clean-up leaves chstack-<pid>-… namespaces: the next run's
    drop_stale_namespaces deletes those whose pid is gone, and no one else's."""
    if reason := namespaces_unavailable():
        pytest.skip(f"no network namespaces here: {reason}")
    gone = subprocess.Popen(["true"])
    gone.wait(timeout=30)
    stale, alive = f"{PREFIX}{gone.pid}-0000aa-web", f"{PREFIX}{os.getpid()}-0000aa-web"
    try:
        for name in (stale, alive):
            subprocess.run(["ip", "netns", "add", name], check=True, timeout=30)
        assert stale in drop_stale_namespaces()
        assert alive in namespace_names() and stale not in namespace_names()
    finally:
        for name in (stale, alive):
            subprocess.run(["ip", "netns", "delete", name], capture_output=True, timeout=30)
