"""bench/stack.py's deadline rush with and without the interval work beside it (issue 29,
Must 3), and the printed table of the scoring runs.

``--rush-pair``: the rush of bench/stack.py (same arrival plan, same participants, same
file) runs twice on the same stack, each on a challenge of its own imported just before
it (the same dataset), so that both meet an empty board: the second is not slowed by
interval runs over the first one's entries. First as always, the background worker
(queues ``intervals,boards,mail,celery``) running and computing the intervals the scored
entries ask for during the rush; then, once those are all computed, with the background
worker stopped for the rush (its tasks wait in Redis), started again once every upload
is scored, and waited for until every split's intervals are computed (none asked for,
queued or running). For each: upload-to-scored p50/p95/max, lost/doubled, and the
interval runs the background worker did from the rush's start to its last upload scored
(counted from its log: Celery's INFO line per task).

The background worker runs at ``--background-nice`` (10 unless told; ``idle``: Linux's
SCHED_IDLE, as ``chrt --idle 0`` starts it), as the operators' guide starts it on a host it
shares with scoring processes: its runs take the CPU time scoring leaves.
"""

from __future__ import annotations

import os
import time

from tests.stack.harness import wait_until

INTERVAL_TASK = b"Task leaderboard.intervals["


class BackgroundLog:
    """The background worker's runs of the interval task from now on, read from its log
    (Celery's INFO line per task: "Task leaderboard.intervals[…] succeeded in …s: True";
    False: another run of the split was under way, nothing computed)."""

    def __init__(self, stack):
        self.path = stack.root / "logs" / f"{stack.background_process}.log"
        self.offset = self.path.stat().st_size if self.path.exists() else 0

    def runs(self) -> dict:
        with open(self.path, "rb") as log:
            log.seek(self.offset)
            lines = [line for line in log.read().splitlines() if INTERVAL_TASK in line]
        done = [line for line in lines if b"succeeded" in line]
        return {
            "computed": sum(line.rstrip().endswith(b": True") for line in done),
            "tasks": len(done),
            "failed": sum(b"raised" in line for line in lines),
        }


def start_background(stack, *, queues: str, nice: int | str) -> None:
    """The background worker (``stack.background_process``), consuming ``queues``, its
    process group at CPU priority ``nice`` (the processes it forks later inherit it), or
    with ``nice="idle"`` under Linux's SCHED_IDLE (``chrt --idle 0``): it runs only on a
    processor nothing else wants."""
    process = stack.start_worker(stack.background_process, stack.background_name, queues=queues)
    if nice == "idle":
        idle_group(process.pid)
    elif nice:
        os.setpriority(os.PRIO_PGRP, process.pid, nice)


def idle_group(leader: int) -> None:
    """SCHED_IDLE for every thread of the process group ``leader`` leads: at once for the
    leader (Celery's pool children, forked after its start-up, inherit it), then again
    for each thread of the group once the pool has started (should a child have been
    forked first)."""
    os.sched_setscheduler(leader, os.SCHED_IDLE, os.sched_param(0))
    time.sleep(3)
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if os.getpgid(int(entry)) != leader:
                continue
            for thread in os.listdir(f"/proc/{entry}/task"):
                os.sched_setscheduler(int(thread), os.SCHED_IDLE, os.sched_param(0))
        except (ProcessLookupError, FileNotFoundError, PermissionError):
            continue


def intervals_pending() -> list[tuple]:
    """The splits whose intervals are asked for and not computed, or being computed."""
    from django.db.models import F, Q

    from challenge_site.leaderboard.models import IntervalRun

    rows = IntervalRun.objects.filter(
        Q(requested__gt=F("computed")) | Q(queued=True) | Q(running_since__isnull=False)
    )
    return list(rows.values_list("dataset_id", "split", "requested", "computed"))


def rush_without_background(stack, measured_rush, *, queues: str, nice: int) -> dict:
    """The same rush with the background worker (consuming ``queues``) stopped, its
    queues filling meanwhile; then the worker started again, and waited for until the
    intervals the rush asked for are computed."""
    # The first rush's intervals finished first: none of its work spills into this one.
    wait_until(lambda: not intervals_pending(), timeout=1800, interval=0.5, what="intervals")
    stack.stop_process(stack.background_process)
    try:
        rush = measured_rush()
    finally:
        pending = intervals_pending()
        log = BackgroundLog(stack)
        started = time.time()
        start_background(stack, queues=queues, nice=nice)
    try:
        wait_until(lambda: not intervals_pending(), timeout=1800, interval=0.5, what="intervals")
        rush["intervals_done"] = True
    except TimeoutError:
        rush["intervals_done"] = False
    rush["intervals_pending_after_rush"] = len(pending)
    rush["intervals_after_s"] = time.time() - started
    rush["interval_runs_after"] = log.runs()
    return rush


def intervals_caught_up(stack, rush: dict) -> dict:
    """With the background worker running through the rush: its interval runs held back
    while uploads streamed in (interval_runs.AFTER_RUN, QUIET), the seconds from the
    rush's last entry scored until every split's intervals are computed (the beat's sweep
    sends the held-back runs once requests stop)."""
    log = BackgroundLog(stack)
    try:
        wait_until(lambda: not intervals_pending(), timeout=1800, interval=0.5, what="intervals")
        done = True
    except TimeoutError:
        done = False
    return {
        "intervals_done": done,
        "intervals_after_s": time.time() - rush["finished_at"],
        "interval_runs_after": log.runs(),
    }


def report_scoring(figures: dict) -> None:
    seq, rush = figures["sequential"], figures["deadline"]
    print(
        f"stack: gunicorn ({figures['gunicorn_workers']} processes), Celery workers of one "
        f"scoring process each on the scoring queue: {figures['workers']}; one background "
        f"worker for the other queues (nice {figures.get('background_nice', 0)}); "
        "PostgreSQL and Redis on this machine"
    )
    print(
        f"file: {figures['rows']:,}-row regression predictions (Gaussian rows '1 m v'), "
        f"zipped {figures['zip_bytes'] / 1e3:.0f} kB"
    )
    if seq["uploads"]:
        print(
            f"sequential ({seq['uploads']} uploads, one at a time): upload-to-scored "
            f"p50 {seq['latency_p50_s']:.3f} s, p95 {seq['latency_p95_s']:.3f} s"
        )
    if figures["throughput"]:
        print("\nthroughput (uploads queued first, then the workers consume them):")
        print(
            f"{'workers':>8} {'uploads':>8} {'seconds':>8} {'scored/s':>9} {'per worker':>11}"
            f" {'evaluate ms':>12} {'entry/evaluate':>15}"
        )
    for row in figures["throughput"]:
        print(
            f"{row['workers']:>8} {row['uploads']:>8} {row['elapsed_s']:>8.2f} "
            f"{row['scored_per_s']:>9.2f} {row['scored_per_s'] / row['workers']:>11.2f}"
            f" {row['evaluate_s'] * 1e3:>12.1f} {row['per_entry_over_evaluate']:>15.2f}"
        )
    print(
        f"\ndeadline rush: {rush['uploads']} uploads over {rush['window_s']:.0f} s (arrival "
        f"rate growing linearly to {2 * rush['uploads'] / rush['window_s']:.1f}/s), "
        f"{rush['workers']} workers"
    )
    rushes = {"background on": rush}
    if "deadline_stopped" in figures:
        rushes["background off"] = figures["deadline_stopped"]
    print(f"{'':>14}" + "".join(f"{label:>16}" for label in rushes))

    def line(label: str, cell) -> None:
        print(f"{label:>14}" + "".join(f"{cell(r):>16}" for r in rushes.values()))

    line("accepted", lambda r: r["accepted"])
    line("last upload", lambda r: f"{r['last_upload_s']:.1f}s")
    line("all scored", lambda r: f"{r['drained_s']:.1f}s")
    line("upload p95", lambda r: f"{r['upload_request_p95_s']:.3f}s")
    for key in ("p50", "p95", "max"):
        line(f"scored {key}", lambda r, key=key: f"{r[f'latency_{key}_s']:.3f}s")
    line("lost", lambda r: r["lost"])
    line("doubled", lambda r: r["doubled"])
    line("interval runs", lambda r: "{computed} ({tasks})".format(**r["interval_runs"]))
    line("load 1m", lambda r: f"{r['load'][0][0]:.2f}-{r['load'][1][0]:.2f}")
    print(
        "(upload p95: the request alone; scored: upload to scored; interval runs: computed "
        "by the background worker while the rush was uploaded and scored (tasks received))"
    )
    if "intervals_after_s" in rush:
        print(
            f"background on: every split's intervals computed {rush['intervals_after_s']:.1f} s "
            f"after the last upload was scored ({rush['interval_runs_after']['computed']} runs "
            f"after the rush); all complete: {rush['intervals_done']}"
        )
    if "deadline_stopped" in figures:
        off = figures["deadline_stopped"]
        print(
            f"background off: {off['intervals_pending_after_rush']} splits' intervals left "
            f"for after the rush; the worker started again computed them in "
            f"{off['intervals_after_s']:.1f} s ({off['interval_runs_after']['computed']} runs); "
            f"all complete: {off['intervals_done']}"
        )
    if all(r["lost"] == 0 and r["doubled"] == 0 for r in rushes.values()):
        print("nothing lost: every upload accepted and scored exactly once")
    for r in rushes.values():
        if r["errors"]:
            print("errors:", *r["errors"], sep="\n  ")
