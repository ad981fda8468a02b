"""Scoring throughput and upload-to-scored latency on the real stack.

Starts the throwaway stack of the stack tests (tests/stack/harness.py: gunicorn with
2 workers, one Celery worker with --concurrency pool processes, Celery beat, this
machine's PostgreSQL and Redis, a fresh database), imports a challenge whose regression
dataset has 20,000 validation rows, and uploads a 20,000-row regression prediction file
(Gaussian rows ``1 m v``) through the API, as participants do:

- sequential: one upload at a time, each waited for (an idle stack's latency);
- burst: many uploads sent at once from threads (throughput under load, and latency
  with a queue).

Upload-to-scored latency runs from just before the client sends the upload to the
moment the worker stored the scores (``Submission.finished_at``; same machine, same
clock). Throughput is submissions scored per second over the burst (first upload sent
to last one scored), divided by the worker's pool processes.

Usage: python bench/stack.py [--rows 20000] [--sequential 10] [--burst 40]
       [--concurrency 2] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.stack.client import Client  # noqa: E402
from tests.stack.harness import Stack, wait_until  # noqa: E402


def percentile(values, q) -> float:
    return float(np.percentile(np.asarray(values, dtype=float), q))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python bench/stack.py", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--rows", type=int, default=20_000, help="rows of the prediction file")
    parser.add_argument("--sequential", type=int, default=10, help="uploads one at a time")
    parser.add_argument("--burst", type=int, default=40, help="uploads sent at once")
    parser.add_argument("--concurrency", type=int, default=2, help="Celery pool processes")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON too")
    args = parser.parse_args(argv)

    # Bursts of uploads from one token measure throughput, not the API's rate limits.
    stack = Stack(
        worker_concurrency=args.concurrency,
        scoring_timeout=120,
        sweep_interval=60,
        extra_env={"API_THROTTLE_UPLOAD": "off", "API_THROTTLE_USER": "off"},
    )
    stack.setup_django()
    try:
        stack.start()
        figures = run(stack, args)
    finally:
        stack.stop()
    report(figures, args)
    if args.json:
        print(json.dumps(figures, indent=2))
    return 0


def run(stack: Stack, args) -> dict:
    from django.contrib.auth.models import User
    from rest_framework.authtoken.models import Token

    from challenge_site.submissions.models import FINAL, Submission
    from tests.stack.data import DatasetSpec, in_validation, make_zip, write_challenge
    from tests.submissions.helpers import gaussian_lines

    spec = DatasetSpec("regression", (500, args.rows, 100), dim=1, seed=3)
    folder = stack.root / "import" / "bench"
    write_challenge(in_validation("bench", "Bench", {"big": spec}), folder)
    stack.manage("import_challenge", str(folder))
    user = User.objects.create_user("bench", "bench@example.org", "a-long-Passphrase-42")
    client_token = Token.objects.create(user=user).key
    prediction = gaussian_lines(args.rows, seed=5)
    archive = make_zip({"big_val_predict.txt": prediction})

    def upload() -> tuple[int, float]:
        client = Client(stack.base_url, token=client_token, timeout=300)
        sent = time.time()
        response = client.api_submit("bench", archive, dataset="big", method="bench")
        if response.status != 201:
            raise RuntimeError(f"upload refused: {response}")
        return response.json()["id"], sent

    def wait(ids, timeout):
        def done():
            stack.check_alive()
            rows = list(Submission.objects.filter(pk__in=ids).values_list("status", flat=True))
            return len(rows) == len(ids) and all(status in FINAL for status in rows)

        wait_until(done, timeout=timeout, interval=0.02, what=f"{len(ids)} submissions")
        finished = dict(Submission.objects.filter(pk__in=ids).values_list("pk", "finished_at"))
        failed = Submission.objects.filter(pk__in=ids).exclude(status="scored").count()
        if failed:
            raise RuntimeError(f"{failed} submissions were not scored")
        return {pk: when.timestamp() for pk, when in finished.items()}

    # Warm-up: the worker's first task imports scoring and matplotlib.
    warm = [upload()[0] for _ in range(2)]
    wait(warm, 120)

    sequential = []
    for _ in range(args.sequential):
        pk, sent = upload()
        sequential.append(wait([pk], 120)[pk] - sent)

    sent_at: dict[int, float] = {}
    errors: list[BaseException] = []
    barrier = threading.Barrier(args.burst)

    def burst_one():
        try:
            barrier.wait(timeout=60)
            pk, sent = upload()
            sent_at[pk] = sent
        except BaseException as error:  # reported below
            errors.append(error)

    threads = [threading.Thread(target=burst_one, daemon=True) for _ in range(args.burst)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=600)
    if errors or len(sent_at) != args.burst:
        raise RuntimeError(f"burst uploads failed: {errors[:3]}")
    finished = wait(list(sent_at), 600)
    burst_latency = [finished[pk] - sent_at[pk] for pk in sent_at]
    elapsed = max(finished.values()) - min(sent_at.values())
    rate = args.burst / elapsed
    return {
        "rows": args.rows,
        "file_bytes": len(prediction),
        "zip_bytes": len(archive),
        "worker_processes": args.concurrency,
        "gunicorn_workers": stack.web_workers,
        "sequential": {
            "uploads": args.sequential,
            "latency_p50_s": percentile(sequential, 50),
            "latency_p95_s": percentile(sequential, 95),
        },
        "burst": {
            "uploads": args.burst,
            "elapsed_s": elapsed,
            "scored_per_s": rate,
            "scored_per_s_per_worker_process": rate / args.concurrency,
            "latency_p50_s": percentile(burst_latency, 50),
            "latency_p95_s": percentile(burst_latency, 95),
        },
    }


def report(figures: dict, args) -> None:
    seq, burst = figures["sequential"], figures["burst"]
    print(
        f"stack: gunicorn ({figures['gunicorn_workers']} workers), one Celery worker with "
        f"{figures['worker_processes']} pool processes, PostgreSQL and Redis on this machine"
    )
    print(
        f"file: {figures['rows']:,}-row regression predictions (Gaussian rows '1 m v'), "
        f"{figures['file_bytes'] / 1e3:.0f} kB, zipped {figures['zip_bytes'] / 1e3:.0f} kB"
    )
    print(
        f"sequential ({seq['uploads']} uploads, one at a time): upload-to-scored "
        f"p50 {seq['latency_p50_s']:.3f} s, p95 {seq['latency_p95_s']:.3f} s"
    )
    print(
        f"burst ({burst['uploads']} uploads at once): all scored in {burst['elapsed_s']:.2f} s = "
        f"{burst['scored_per_s']:.2f} submissions/s = "
        f"{burst['scored_per_s_per_worker_process']:.2f} per second per worker process; "
        f"upload-to-scored p50 {burst['latency_p50_s']:.2f} s, p95 {burst['latency_p95_s']:.2f} s"
    )


if __name__ == "__main__":
    sys.exit(main())
