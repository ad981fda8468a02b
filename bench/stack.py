"""Scoring throughput with 1, 2 and 4 workers, and a deadline rush, on the real stack.

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
- deadline: ``--deadline`` uploads over ``--window`` seconds from 50 participants, the
  arrival rate growing linearly to twice the mean at the end (the last hour of a
  challenge, compressed), with ``--deadline-workers`` workers; upload-to-scored latency
  p50/p95/max, and a check that nothing is lost: every upload accepted and scored
  exactly once (one run, one set of results).

With ``--s3`` the files live in a SeaweedFS S3 server (tests/stack/s3.py) and the web
process and each worker run as separate hosts (network namespaces, tests/stack/hosts.py;
separate processes and folders when namespaces cannot be made: the output says which).
Without it, the workers are separate processes on this machine sharing one folder.

Upload-to-scored runs from just before the client sends the upload to the moment the
worker stored the scores (``Submission.finished_at``; same machine, same clock).

Usage: python bench/stack.py [--s3] [--workers 1,2,4] [--burst 60] [--deadline 500]
       [--window 60] [--deadline-workers 2] [--sequential 10] [--rows 20000] [--json]
"""

from __future__ import annotations

import argparse
import json
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
    parser.add_argument("--json", action="store_true", help="print the figures as JSON too")
    args = parser.parse_args(argv)
    args.workers = sorted({int(n) for n in args.workers.split(",")})
    if min(args.workers) < 1 or args.deadline_workers < 1:
        parser.error("worker counts start at 1")
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
        stack.start_worker(name, hostname, queues=BACKGROUND_QUEUES)
        stack.background_name = hostname
        figures = run(stack, names, args)
    finally:
        stack.stop()
        if s3 is not None:
            s3.stop()
    report(figures)
    if args.json:
        print(json.dumps(figures, indent=2))
    rush = figures["deadline"]
    return 0 if rush["lost"] == 0 and rush["doubled"] == 0 else 1


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


def run(stack, names: dict[str, str], args) -> dict:
    from celery import Celery
    from django.contrib.auth.models import User
    from rest_framework.authtoken.models import Token

    from challenge_site.submissions.models import FINAL, Score, SplitResult, Submission
    from tests.stack.data import DatasetSpec, in_validation, make_zip, write_challenge
    from tests.submissions.helpers import gaussian_lines

    spec = DatasetSpec("regression", (500, args.rows, 100), dim=1, seed=3)
    host_root = getattr(stack, "host_root", None)
    folder = (host_root("web") if host_root else stack.root) / "import" / "bench"
    write_challenge(in_validation("bench", "Bench", {"big": spec}), folder)
    stack.manage("import_challenge", str(folder))
    tokens = []
    for index in range(PARTICIPANTS):
        user = User.objects.create_user(f"p{index}", f"p{index}@example.org", "a-long-Pass-42x")
        tokens.append(Token.objects.create(user=user).key)
    prediction = gaussian_lines(args.rows, seed=5)
    archive = make_zip({"big_val_predict.txt": prediction})

    def upload(index: int = 0) -> tuple[int, float, float]:
        """(id, sent, seconds the request took)"""
        client = Client(stack.base_url, token=tokens[index % PARTICIPANTS], timeout=120)
        sent = time.time()
        response = client.api_submit("bench", archive, dataset="big", method="bench")
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
    wait([pk for pk in Submission.objects.values_list("pk", flat=True)], 120)  # baselines
    warm = [upload()[0] for _ in range(2)]  # the worker's first task imports scoring
    wait(warm, 120)
    sequential = []
    for _ in range(args.sequential):
        pk, sent, _ = upload()
        sequential.append(wait([pk], 120)[pk] - sent)

    control = Celery(broker=stack.broker_url)
    throughput = []
    try:
        for count in args.workers:
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
            throughput.append(
                {
                    "workers": count,
                    "uploads": args.burst,
                    "queued_when_started": waiting,
                    "elapsed_s": elapsed,
                    "scored_per_s": args.burst / elapsed,
                }
            )
    finally:
        control.close()

    use_workers(stack, names, args.deadline_workers)
    rush = deadline_rush(upload, args)
    finished = wait(list(rush["sent"]), 900)
    ids = list(rush["sent"])
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
        "rows": args.rows,
        "zip_bytes": len(archive),
        "workers": describe(stack, names),
        "gunicorn_workers": stack.web_workers,
        "sequential": {
            "uploads": args.sequential,
            "latency_p50_s": percentile(sequential, 50),
            "latency_p95_s": percentile(sequential, 95),
        },
        "throughput": throughput,
        "deadline": {
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
            "errors": rush["errors"][:5],
        },
    }


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
    seq, rush = figures["sequential"], figures["deadline"]
    print(
        f"stack: gunicorn ({figures['gunicorn_workers']} processes), Celery workers of one "
        f"scoring process each on the scoring queue: {figures['workers']}; one background "
        "worker for the other queues; PostgreSQL and Redis on this machine"
    )
    print(
        f"file: {figures['rows']:,}-row regression predictions (Gaussian rows '1 m v'), "
        f"zipped {figures['zip_bytes'] / 1e3:.0f} kB"
    )
    print(
        f"sequential ({seq['uploads']} uploads, one at a time): upload-to-scored "
        f"p50 {seq['latency_p50_s']:.3f} s, p95 {seq['latency_p95_s']:.3f} s"
    )
    print("\nthroughput (uploads queued first, then the workers consume them):")
    print(f"{'workers':>8} {'uploads':>8} {'seconds':>8} {'scored/s':>9} {'per worker':>11}")
    for row in figures["throughput"]:
        print(
            f"{row['workers']:>8} {row['uploads']:>8} {row['elapsed_s']:>8.2f} "
            f"{row['scored_per_s']:>9.2f} {row['scored_per_s'] / row['workers']:>11.2f}"
        )
    print(
        f"\ndeadline rush: {rush['uploads']} uploads over {rush['window_s']:.0f} s (arrival "
        f"rate growing linearly to {2 * rush['uploads'] / rush['window_s']:.1f}/s), "
        f"{rush['workers']} workers"
    )
    print(f"{'accepted':>10} {rush['accepted']:>10}")
    print(f"{'last upload':>10} {rush['last_upload_s']:>9.1f}s")
    print(f"{'all scored':>10} {rush['drained_s']:>9.1f}s")
    print(f"{'upload p95':>10} {rush['upload_request_p95_s']:>9.3f}s  (the request alone)")
    for key in ("p50", "p95", "max"):
        print(f"{'scored ' + key:>10} {rush[f'latency_{key}_s']:>9.3f}s  (upload to scored)")
    print(f"{'lost':>10} {rush['lost']:>10}")
    print(f"{'doubled':>10} {rush['doubled']:>10}")
    if rush["lost"] == 0 and rush["doubled"] == 0:
        print("nothing lost: every upload accepted and scored exactly once")
    if rush["errors"]:
        print("errors:", *rush["errors"], sep="\n  ")


if __name__ == "__main__":
    sys.exit(main())
