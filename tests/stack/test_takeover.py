"""A worker host SIGKILLed mid-run: how long until another worker takes its run over.

The production layout of the operators' guide (docs/operators.md): two scoring hosts
(`celery … worker -Q scoring`) and the background worker (`-Q intervals,boards,mail,celery`)
beside gunicorn on the web host, with the production intervals: a heartbeat every 10 s, stale after 30 s, a sweep every 15 s
and the full 600 s scoring timeout, so only the heartbeat can explain a quick take-over.
The figure is printed (pytest -s) and recorded in the test report (``takeover_seconds``).
"""

import time

import pytest

from .client import Client
from .conftest import REPO
from .harness import wait_until
from .hoststack import HostsStack
from .s3 import SeaweedS3
from .test_hosts import (
    assert_scored_once,
    logged,
    quick_zip,
    setup_challenge,
    slow_zip,
    sql,
    submissions,
    upload,
    wait_final,
)

HEARTBEAT, STALE, SWEEP, TIMEOUT = 10, 30, 15, 600
# The slowest take-over: the last beat up to HEARTBEAT before the kill, stale STALE after
# it, then at most one sweep interval and the survivor's claim; with room for a busy machine.
LIMIT = 60
BACKGROUND = "intervals,boards,mail,celery"


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
        scoring_timeout=TIMEOUT,
        sweep_interval=SWEEP,
        heartbeat_interval=HEARTBEAT,
        queues="scoring",
        extra_env={"API_THROTTLE_UPLOAD": "off", "API_THROTTLE_USER": "off"},
        keep_logs_in=REPO / "test-output" / "stack-logs" / "takeover",
    )
    try:
        stack.start()
        # The background worker runs on the web host, as in the operators' guide's layout.
        background = f"background-{stack.tag}@web"
        stack.start_worker("background", background, queues=BACKGROUND)
        wait_until(
            lambda: stack.worker_answers([background]),
            timeout=90,
            interval=0.5,
            what="the background worker to answer a ping",
        )
        yield stack
    finally:
        stack.stop()


def claimed_again(stack, pk: int) -> bool:
    stack.check_alive()
    return submissions(stack, [pk])[pk][1] >= 2


def test_a_killed_worker_hosts_run_is_taken_over_within_a_minute(hosts, record_property):
    api = Client(hosts.base_url, token=setup_challenge(hosts), timeout=120)
    slow = upload(api, slow_zip())
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
    killed = time.monotonic()
    assert tuple(submissions(hosts, [slow])[slow][:2]) == ("running", 1)  # killed mid-run
    (beat,) = sql(
        hosts,
        "SELECT extract(epoch FROM now() - heartbeat_at) FROM submissions_submission WHERE id = %s",
        slow,
    )[0]
    rest = [upload(api, quick_zip()) for _ in range(2)]  # the survivor keeps scoring too
    wait_until(
        lambda: claimed_again(hosts, slow),
        timeout=LIMIT + 60,
        interval=0.2,
        what=f"another worker to take submission {slow} over",
    )
    takeover = time.monotonic() - killed
    found = wait_final(hosts, [slow, *rest], timeout=120)
    scored = time.monotonic() - killed
    print(
        f"\ntake-over {takeover:.1f} s after SIGKILL (last beat {float(beat):.1f} s before "
        f"the kill; heartbeat {HEARTBEAT} s, stale {STALE} s, sweep {SWEEP} s, timeout "
        f"{TIMEOUT} s); scored {scored:.1f} s after"
    )
    record_property("takeover_seconds", round(takeover, 1))
    record_property("scored_seconds", round(scored, 1))
    assert takeover < LIMIT
    assert takeover >= STALE - float(beat) - 1  # the heartbeat's doing, not a redelivery

    assert {status for status, _, _ in found.values()} == {"scored"}
    assert found[slow][1] == 2  # the killed run and the survivor's, once
    survivor = next(name for name in hosts.worker_hostnames if name != victim)
    assert logged(hosts, {found[slow][2]})[survivor] == {found[slow][2]}
    assert_scored_once(hosts, api, [slow, *rest])

    # Queues: the scoring hosts ran no background task; the web host's worker ran them.
    background = hosts.log_tail("background", size=10**7)
    assert "leaderboard.intervals[" in background and "submissions.score[" not in background
    assert "leaderboard.intervals[" not in hosts.log_tail(survivor, size=10**7)
