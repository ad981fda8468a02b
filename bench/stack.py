"""Scoring throughput, a deadline rush, and the board's plot and exports on the real stack.

Starts the throwaway stack of the stack tests (tests/stack/harness.py: gunicorn with 2
processes, Celery beat, this machine's PostgreSQL and Redis, a fresh database) with
Celery workers of one scoring process each, consuming the ``scoring`` queue only, and
one background worker for the other queues (intervals, plots, exports, e-mail: the
operators' guide's production layout, so that the figures are the scoring workers' own), imports
a challenge whose regression dataset has 20,000 validation rows, and uploads
20,000-row regression prediction files (Gaussian rows ``1 m v``) through the API, as
participants do:

- sequential: one upload at a time, each waited for (an idle stack's latency);
- throughput, for each worker count of ``--workers``: the workers stop consuming,
  ``--burst`` uploads are queued, the workers start consuming again, and the figure is
  uploads / (last one scored - consuming started): scoring alone, uploads excluded;
  beside it, a worker's time per entry over the floor, ``scoring.evaluate`` of the same
  file and targets in this process just after (a ratio the machine's speed, which
  drifts here by up to 2x, cancels from);
- deadline: ``--deadline`` uploads over ``--window`` seconds from 50 participants, the
  arrival rate growing linearly to twice the mean at the end (the last hour of a
  challenge, compressed), with ``--deadline-workers`` workers; upload-to-scored latency
  p50/p95/max, and a check that nothing is lost: every upload accepted and scored
  exactly once (one run, one set of results).

With ``--s3`` the files live in a SeaweedFS S3 server (tests/stack/s3.py) and the web
process and each worker run as separate hosts (network namespaces, tests/stack/hosts.py;
separate processes and folders when namespaces cannot be made: the output says which).
Without it, the workers are separate processes on this machine sharing one folder.

After the challenge is imported and two uploads scored, the database is analyzed
(planner statistics, as autovacuum gives any database that has run a minute);
``--no-analyze`` leaves it without them.

Upload-to-scored runs from just before the client sends the upload to the moment the
worker stored the scores (``Submission.finished_at``; same machine, same clock).

The background worker runs at CPU priority ``--background-nice`` (10 by default), as
the operators' guide starts it on a host shared with scoring processes.

``--rush-pair`` (bench/stack_rush.py) runs the deadline rush twice with the same arrival
plan, each on a challenge of its own (an empty board, the same dataset): the background
worker running (computing the intervals the scored entries ask for, during the rush),
then stopped for the rush (the intervals queued, computed once it is started again
after the rush, and checked to complete); for each, p50/p95/max, lost/doubled and the
interval runs the background worker did during the rush. ``--off-first`` runs the
stopped one first.

The board (bench/stack_board.py), for each size of ``--board-sizes``: a board of that
many entries seeded into the stack's database (bench/leaderboard_seed.py), one entry
scored the way the site lists one, then through gunicorn and the background worker: the
first view of the board page and of its plot after the change, the seconds until the
plot serves the new drawing, and for the whole-board CSV and JSON the seconds from the
first request (202) to the complete file (200), downloaded and checked against its
X-Row-Count and X-Content-SHA256.

``--only scoring`` runs the scoring runs alone (sequential, throughput, rush), ``--only
rush`` the rush (or the pair) alone, ``--only board`` the board alone; by default all.

Usage: python bench/stack.py [--s3] [--workers 1,2,4] [--burst 60] [--deadline 500]
       [--window 60] [--deadline-workers 2] [--sequential 10] [--rows 20000]
       [--rush-pair [--off-first]] [--background-nice 10] [--only scoring|rush|board] [--board-sizes 100,100000,1000000]
       [--no-analyze] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import socket
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from tests.stack.client import Client  # noqa: E402
from tests.stack.harness import Stack, wait_until  # noqa: E402

PARTICIPANTS = 50
UPLOAD_THREADS = 16
# The scoring workers' queue, and the background worker's (settings.CELERY_TASK_ROUTES).
SCORING_QUEUE = "scoring"
BACKGROUND_QUEUES = "intervals,boards,mail,celery"
BACKGROUND = "background"


def percentile(values, q) -> float:
    return float(np.percentile(np.asarray(values, dtype=float), q))


def background_priority(text: str) -> int | str:
    """``--background-nice``: a nice value 0-19, or ``idle`` (SCHED_IDLE)."""
    if text == "idle":
        return text
    value = int(text)
    if not 0 <= value <= 19:
        raise argparse.ArgumentTypeError("a nice value from 0 to 19, or idle")
    return value


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog="python bench/stack.py", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--s3", action="store_true", help="S3 storage, workers on own hosts")
    parser.add_argument("--workers", default="1,2,4", help="worker counts to measure")
    parser.add_argument("--burst", type=int, default=60, help="uploads per throughput run")
    parser.add_argument("--deadline", type=int, default=500, help="uploads of the rush")
    parser.add_argument("--window", type=float, default=60.0, help="seconds of the rush")
    parser.add_argument("--deadline-workers", type=int, default=2, help="workers in the rush")
    parser.add_argument("--sequential", type=int, default=10, help="uploads one at a time")
    parser.add_argument("--rows", type=int, default=20_000, help="rows of the prediction file")
    parser.add_argument(
        "--rush-pair",
        action="store_true",
        help="the rush twice: background worker running, then stopped for the rush",
    )
    parser.add_argument(
        "--off-first", action="store_true", help="--rush-pair: the stopped run first"
    )
    parser.add_argument(
        "--background-nice",
        type=background_priority,
        default=10,
        metavar="0-19|idle",
        help="CPU priority (nice) of the background worker (default 10), or idle: SCHED_IDLE",
    )
    parser.add_argument(
        "--only",
        choices=("scoring", "rush", "board"),
        help="scoring: sequential, throughput, rush; rush: the rush(es) alone; "
        "board: the plot and exports alone (default: all of them)",
    )
    parser.add_argument(
        "--board-sizes", default="100,100000,1000000", help="board sizes (entries), growing"
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON too")
    parser.add_argument(
        "--no-analyze",
        action="store_true",
        help="leave the fresh database without planner statistics (no ANALYZE after the "
        "challenge is imported: a new deployment's first minute)",
    )
    args = parser.parse_args(argv)
    args.workers = sorted({int(n) for n in args.workers.split(",")})
    if min(args.workers) < 1 or args.deadline_workers < 1:
        parser.error("worker counts start at 1")
    args.board_sizes = [int(n) for n in args.board_sizes.split(",")]
    if args.board_sizes != sorted(set(args.board_sizes)) or args.board_sizes[0] < 1:
        parser.error("board sizes grow: each larger than the one before")
    args.scoring = args.only in (None, "scoring", "rush")
    args.board = args.only in (None, "board")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    most = max(*args.workers, args.deadline_workers)
    # Bursts of uploads measure throughput, not the API's rate limits; the sweep stays
    # out of the way (nothing is lost here unless something is wrong).
    options = {
        "worker_concurrency": 1,
        "scoring_timeout": 300,
        "sweep_interval": 60,
        "extra_env": {"API_THROTTLE_UPLOAD": "off", "API_THROTTLE_USER": "off"},
    }
    s3 = None
    if args.s3:
        from tests.stack.hoststack import HostsStack
        from tests.stack.s3 import SeaweedS3

        s3 = SeaweedS3(Path(tempfile.mkdtemp(prefix="bench-s3-"))).start()
        # One host more than the scoring workers: the background worker's.
        stack = HostsStack(workers=most + 1, s3=s3, queues=SCORING_QUEUE, **options)
        names = dict(stack.worker_hostnames)
        background = {name: names.pop(name) for name in list(names)[-1:]}
    else:
        stack = Stack(queues=SCORING_QUEUE, **options)
        names = {"worker": stack.worker_name}
        for index in range(2, most + 1):
            names[f"worker{index}"] = f"worker{index}-{secrets.token_hex(3)}@{socket.gethostname()}"
        background = {BACKGROUND: f"{BACKGROUND}-{secrets.token_hex(3)}@{socket.gethostname()}"}
    stack.setup_django()
    try:
        stack.start()
        ((name, hostname),) = background.items()
        stack.stop_process(name)  # (a HostsStack starts it with the scoring queue)
        stack.background_name = hostname
        stack.background_process = name
        from stack_rush import start_background  # bench/stack_rush.py

        start_background(stack, queues=BACKGROUND_QUEUES, nice=args.background_nice)
        figures = run(stack, names, args) if args.scoring else {}
        if args.board:
            from stack_board import run_board  # bench/stack_board.py

            use_workers(stack, names, 1)
            figures["board"] = run_board(stack, args.board_sizes)
    finally:
        stack.stop()
        if s3 is not None:
            s3.stop()
    report(figures)
    if args.json:
        print(json.dumps(figures, indent=2, default=str))
    return 0 if all_good(figures) else 1


def all_good(figures: dict) -> bool:
    """Nothing lost or doubled in any rush, the postponed intervals computed, every
    export whole."""
    for key in ("deadline", "deadline_stopped"):
        rush = figures.get(key)
        if rush and (rush["lost"] or rush["doubled"] or rush.get("intervals_done") is False):
            return False
    for size in figures.get("board", {}).values():
        for export in size["exports"].values():
            if not (export.get("rows_ok") and export.get("sha256_ok")):
                return False
    return True


def use_workers(stack, names: dict[str, str], count: int) -> None:
    """Exactly the first ``count`` workers of ``names`` running, and answering."""
    order = list(names)
    for name in order[count:]:
        stack.stop_process(name)
    for name in order[:count]:
        if name not in stack.processes:
            stack.start_worker(name, names[name])
    # Every worker answering, the background one too; then the scoring ones alone are
    # the stack's workers (paused and resumed by the throughput runs).
    stack.worker_names = [names[name] for name in order[:count]] + [stack.background_name]
    stack.wait_worker_ready()
    stack.worker_names = stack.worker_names[:-1]


def describe(stack, names) -> str:
    isolation = getattr(stack, "isolation", None)
    if isolation == "namespaces":
        return "each worker on a host of its own (network namespace), files in S3"
    if isolation == "processes":
        return (
            f"separate worker processes and folders on the loopback, files in S3 "
            f"(no namespaces: {stack.unavailable})"
        )
    return "separate worker processes on this machine, one shared folder"


def evaluate_seconds(prediction: bytes, targets: bytes, repeat: int = 7) -> float:
    """The floor of a scoring run: ``scoring.evaluate`` of the upload's prediction file
    and the split's targets in this process (parse, checks, every loss), the median of
    ``repeat`` runs after one to warm up."""
    import scoring

    times = []
    for _ in range(repeat + 1):
        started = time.perf_counter()
        scoring.evaluate(prediction, targets, task="regression")
        times.append(time.perf_counter() - started)
    return float(np.median(times[1:]))


def analyze() -> None:
    """Planner statistics for the throwaway database, made seconds ago: a deployment's
    database has them (autovacuum analyzes a table within a minute or so of its first
    50 changed rows), and without them PostgreSQL plans joins of tables it takes for
    empty (a join scanned once per row of the other: some ms per query after a few
    hundred entries). ``--no-analyze`` measures that first minute instead."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")


def run(stack, names: dict[str, str], args) -> dict:
    from celery import Celery
    from django.contrib.auth.models import User
    from rest_framework.authtoken.models import Token

    from challenge_site.submissions.models import FINAL, Score, SplitResult, Submission
    from tests.stack.data import DatasetSpec, in_validation, make_zip, write_challenge
    from tests.submissions.helpers import gaussian_lines

    spec = DatasetSpec("regression", (500, args.rows, 100), dim=1, seed=3)
    host_root = getattr(stack, "host_root", None)

    def new_challenge(slug: str) -> None:
        """A challenge ``slug`` with the dataset "big", its baseline scored."""
        folder = (host_root("web") if host_root else stack.root) / "import" / slug
        files = write_challenge(in_validation(slug, slug.capitalize(), {"big": spec}), folder)
        targets.append(files["big"]["big_val_targets.txt"])
        stack.manage("import_challenge", str(folder))
        baselines = Submission.objects.filter(dataset__challenge__slug=slug, is_baseline=True)
        wait(list(baselines.values_list("pk", flat=True)), 300)

    targets: list[bytes] = []
    tokens = []
    for index in range(PARTICIPANTS):
        user = User.objects.create_user(f"p{index}", f"p{index}@example.org", "a-long-Pass-42x")
        tokens.append(Token.objects.create(user=user).key)
    prediction = gaussian_lines(args.rows, seed=5)
    archive = make_zip({"big_val_predict.txt": prediction})

    def upload(index: int = 0, slug: str = "bench") -> tuple[int, float, float]:
        """(id, sent, seconds the request took)"""
        client = Client(stack.base_url, token=tokens[index % PARTICIPANTS], timeout=120)
        sent = time.time()
        response = client.api_submit(slug, archive, dataset="big", method="bench")
        if response.status != 201:
            raise RuntimeError(f"upload refused: {response}")
        return response.json()["id"], sent, time.time() - sent

    def wait(ids, timeout) -> dict[int, float]:
        def done():
            stack.check_alive()
            rows = list(Submission.objects.filter(pk__in=ids).values_list("status", flat=True))
            return len(rows) == len(ids) and all(status in FINAL for status in rows)

        wait_until(done, timeout=timeout, interval=0.05, what=f"{len(ids)} submissions")
        rows = Submission.objects.filter(pk__in=ids)
        return {pk: when.timestamp() for pk, when in rows.values_list("pk", "finished_at")}

    use_workers(stack, names, 1)
    new_challenge("bench")
    warm = [upload()[0] for _ in range(2)]  # the worker's first task imports scoring
    wait(warm, 120)
    if not args.no_analyze:
        analyze()
    sequential, throughput = [], []
    for _ in range(args.sequential if args.only != "rush" else 0):
        pk, sent, _ = upload()
        sequential.append(wait([pk], 120)[pk] - sent)

    control = Celery(broker=stack.broker_url)
    try:
        for count in args.workers if args.only != "rush" else []:
            use_workers(stack, names, count)
            control.control.cancel_consumer(
                SCORING_QUEUE, destination=stack.worker_names, reply=True
            )
            with ThreadPoolExecutor(4) as pool:
                ids = [pk for pk, _, _ in pool.map(upload, range(args.burst))]
            waiting = Submission.objects.filter(pk__in=ids, status="queued").count()
            started = time.time()
            control.control.add_consumer(SCORING_QUEUE, destination=stack.worker_names, reply=True)
            finished = wait(ids, 600)
            elapsed = max(finished.values()) - started
            floor = evaluate_seconds(prediction, targets[0])
            throughput.append(
                {
                    "workers": count,
                    "uploads": args.burst,
                    "queued_when_started": waiting,
                    "elapsed_s": elapsed,
                    "scored_per_s": args.burst / elapsed,
                    "evaluate_s": floor,
                    # A worker's time per entry over scoring.evaluate's on the same file,
                    # measured just after: a figure that the machine's speed cancels from.
                    "per_entry_over_evaluate": count * elapsed / args.burst / floor,
                }
            )
    finally:
        control.close()

    from stack_rush import (  # bench/stack_rush.py
        BackgroundLog,
        intervals_caught_up,
        rush_without_background,
    )

    rushes = iter(("rush1", "rush2"))

    def measured_rush() -> dict:
        """One rush (deadline_rush's arrival plan) on a challenge of its own, its board
        empty; waited for until all is scored."""
        slug = next(rushes)
        new_challenge(slug)
        log = BackgroundLog(stack)
        load = os.getloadavg()
        rush = deadline_rush(lambda index: upload(index, slug), args)
        ids = list(rush["sent"])
        finished = wait(ids, 900)
        finished_at = time.time()
        intervals = log.runs()
        latency = [finished[pk] - rush["sent"][pk] for pk in ids]
        scored = Submission.objects.filter(pk__in=ids, status="scored").count()
        results = SplitResult.objects.filter(submission_id__in=ids)
        scores = Score.objects.filter(submission_id__in=ids)
        # Scored twice: a second run (attempts), a second set of results or of loss rows.
        doubled = (
            Submission.objects.filter(pk__in=ids, attempts__gt=1).count()
            + results.count()
            - results.values("submission_id").distinct().count()
            + scores.count()
            - scores.values("submission_id", "split", "loss").distinct().count()
        )
        return {
            "uploads": args.deadline,
            "window_s": args.window,
            "workers": args.deadline_workers,
            "accepted": len(ids),
            "scored": scored,
            "lost": args.deadline - scored,
            "doubled": doubled,
            "last_upload_s": rush["last_sent"],
            "drained_s": max(finished.values()) - rush["start"],
            "upload_request_p95_s": percentile(rush["request"], 95),
            "latency_p50_s": percentile(latency, 50),
            "latency_p95_s": percentile(latency, 95),
            "latency_max_s": max(latency),
            "interval_runs": intervals,
            "load": [load, os.getloadavg()],
            "errors": rush["errors"][:5],
            "finished_at": finished_at,
        }

    use_workers(stack, names, args.deadline_workers)
    figures = {
        "rows": args.rows,
        "zip_bytes": len(archive),
        "workers": describe(stack, names),
        "background_nice": args.background_nice,
        "gunicorn_workers": stack.web_workers,
        "sequential": {
            "uploads": len(sequential),
            "latency_p50_s": percentile(sequential or [0.0], 50),
            "latency_p95_s": percentile(sequential or [0.0], 95),
        },
        "throughput": throughput,
    }
    # Each rush on an empty board of its own; --off-first swaps the order all the same
    # (the database and the machine's caches are warmer for the second).
    if args.rush_pair and args.off_first:
        figures["deadline_stopped"] = rush_without_background(
            stack, measured_rush, queues=BACKGROUND_QUEUES, nice=args.background_nice
        )
    figures["deadline"] = measured_rush()
    figures["deadline"].update(intervals_caught_up(stack, figures["deadline"]))
    if args.rush_pair and not args.off_first:
        figures["deadline_stopped"] = rush_without_background(
            stack, measured_rush, queues=BACKGROUND_QUEUES, nice=args.background_nice
        )
    return figures


def deadline_rush(upload, args) -> dict:
    """Upload i at window * sqrt((i + 0.5) / n) s: the arrival rate grows linearly, to twice
    the mean at the end. Bounded: every request has a timeout, the pool a fixed size."""
    arrivals = [args.window * np.sqrt((i + 0.5) / args.deadline) for i in range(args.deadline)]
    sent, request, errors = {}, [], []
    lock = threading.Lock()
    start = time.time()

    def one(index: int) -> None:
        try:
            pk, when, took = upload(index)
        except Exception as error:  # counted as lost
            with lock:
                errors.append(repr(error)[:300])
            return
        with lock:
            sent[pk] = when
            request.append(took)

    with ThreadPoolExecutor(UPLOAD_THREADS) as pool:
        for index, arrival in enumerate(arrivals):
            delay = start + arrival - time.time()
            if delay > 0:
                time.sleep(delay)
            pool.submit(one, index)
    return {
        "start": start,
        "sent": sent,
        "request": request or [0.0],
        "errors": errors,
        "last_sent": max(sent.values(), default=start) - start,
    }


def report(figures: dict) -> None:
    if "deadline" in figures:
        from stack_rush import report_scoring  # bench/stack_rush.py

        report_scoring(figures)
    if "board" in figures:
        from stack_board import report_board  # bench/stack_board.py

        report_board(figures["board"])


if __name__ == "__main__":
    sys.exit(main())
