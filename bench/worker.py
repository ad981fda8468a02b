"""One scoring worker process's own time per entry, in this process, with a profile.

Makes a throwaway PostgreSQL database (and, with ``--s3``, a SeaweedFS S3 server,
tests/stack/s3.py), imports nothing through the web: a challenge whose regression
dataset has ``--rows`` validation rows, 50 participants, and ``--entries`` queued
uploads of a ``--rows``-row prediction file (Gaussian rows ``1 m v``, as
bench/stack.py). Then runs the scoring task's body on each, as a worker does
(``submissions.score`` applied here), with Redis as the broker so that what a run sends
(intervals, plots, e-mail) is sent, not run. Prints entries per second (wall and this
process's CPU time) and, with ``--profile``, pyinstrument's profile of the runs
(pip install pyinstrument; a dev tool, not a requirement). Also counted per entry, as
figures that do not depend on how busy the machine is: SQL queries, and requests to
S3 by operation (this thread's and those saving terms files and reading zips ahead).

Usage: python bench/worker.py [--s3] [--entries 30] [--rows 20000] [--profile]
       [--html profile.html] [--redis-db 4]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import secrets
import subprocess
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

PG = "postgres://postgres@127.0.0.1:5432"


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog="python bench/worker.py", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--s3", action="store_true", help="files in a SeaweedFS S3 server")
    parser.add_argument("--entries", type=int, default=30, help="entries scored and timed")
    parser.add_argument("--rows", type=int, default=20_000, help="rows of the prediction file")
    parser.add_argument("--profile", action="store_true", help="print pyinstrument's profile")
    parser.add_argument("--html", help="also write the profile as HTML here")
    parser.add_argument("--redis-db", type=int, default=4, help="Redis database (emptied)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    database = f"bench_worker_{os.getpid()}_{secrets.token_hex(3)}"
    root = Path(tempfile.mkdtemp(prefix="bench-worker-"))
    broker = f"redis://127.0.0.1:6379/{args.redis_db}"
    os.environ.update(
        {
            "DJANGO_SETTINGS_MODULE": "challenge_site.settings",
            "DJANGO_DEBUG": "0",
            "ALLOWED_HOSTS": "localhost",
            "SECURE_SSL_REDIRECT": "0",
            "SECRET_KEY": secrets.token_urlsafe(50),
            "DATABASE_URL": f"{PG}/{database}",
            "CELERY_BROKER_URL": broker,
            "CACHE_URL": broker,
            "VAR_DIR": str(root / "var"),
            "MEDIA_ROOT": str(root / "media"),
            "PRIVATE_ROOT": str(root / "private"),
            "LOG_LEVEL": "WARNING",
        }
    )
    s3 = None
    if args.s3:
        from tests.stack.s3 import SeaweedS3

        s3 = SeaweedS3(root / "s3").start()
        os.environ.update(s3.storage_env())
    subprocess.run(["createdb", "-h", "127.0.0.1", "-U", "postgres", database], check=True)
    try:
        return run(args)
    finally:
        from django.db import connections

        connections.close_all()
        subprocess.run(["dropdb", "-h", "127.0.0.1", "-U", "postgres", database], check=False)
        import redis

        redis.Redis.from_url(broker).flushdb()
        if s3 is not None:
            s3.stop()


def run(args) -> int:
    import django

    django.setup()
    from unittest import mock

    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.core.management import call_command
    from django.db import connection
    from django.test.utils import CaptureQueriesContext
    from django.utils import timezone

    from challenge_site.submissions import services, tasks
    from challenge_site.submissions.models import Submission
    from tests.factories import make_challenge, make_dataset, make_user, make_zip
    from tests.submissions.helpers import gaussian_lines

    call_command("migrate", verbosity=0)
    now = timezone.now()  # real dates: S3 refuses a signature from another time
    challenge = make_challenge(
        slug="bench",
        start=now - timedelta(days=2),
        test_start=now + timedelta(days=10),
        deadline=now + timedelta(days=20),
        opened_at=now - timedelta(days=3),
    )
    with mock.patch.object(services, "enqueue"):  # queued, not scored, until timed
        make_dataset(challenge, "big", sizes=(500, args.rows, 100), dim=1, seed=3)
        for baseline in Submission.objects.filter(is_baseline=True):
            services.score_submission(submission_id=baseline.pk)
        archive = make_zip({"big_val_predict.txt": gaussian_lines(args.rows, seed=5)})
        users = [make_user(f"p{index}") for index in range(50)]
        ids = [
            services.submit(
                user=users[index % len(users)],
                challenge=challenge,
                dataset_name="big",
                method="bench",
                description="",
                authors="",
                upload=SimpleUploadedFile("p.zip", archive),
                now=timezone.now(),
            ).pk
            for index in range(args.entries + 2)
        ]
    from django.test import override_settings

    with override_settings(SUBMISSION_BATCH_SIZE=2):  # warm: imports, connections (the
        tasks.score_submission.apply(args=(ids[0],))  # terms-saving thread's), kept targets
    if Submission.objects.filter(pk__in=ids[:2]).exclude(status="scored").exists():
        print("the warming batch did not score both entries", file=sys.stderr)
        return 1
    requests = count_s3_requests()
    profiler = None
    if args.profile or args.html:
        from pyinstrument import Profiler

        profiler = Profiler(interval=0.001, use_timing_thread=True)
    with profiler or contextlib.nullcontext(), CaptureQueriesContext(connection) as queries:
        wall, cpu = time.perf_counter(), time.process_time()
        for pk in ids[2:]:
            tasks.score_submission.apply(args=(pk,))
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    statuses = set(Submission.objects.filter(pk__in=ids).values_list("status", flat=True))
    storage = "S3 (SeaweedFS)" if args.s3 else "local folders"
    print(f"{args.entries} entries of {args.rows:,} rows, files in {storage}: {statuses}")
    print(
        f"{args.entries / wall:.2f} entries/s ({1000 * wall / args.entries:.1f} ms each; "
        f"this process's CPU {1000 * cpu / args.entries:.1f} ms each)"
    )
    statements = [q["sql"] for q in queries.captured_queries]
    data = [
        sql for sql in statements if not sql.startswith(("BEGIN", "COMMIT", "SAVEPOINT", "RELEASE"))
    ]
    print(
        f"per entry: {len(data) / args.entries:.1f} SQL queries (+ "
        f"{(len(statements) - len(data)) / args.entries:.1f} transaction statements)"
        + (
            "; S3 requests: "
            + ", ".join(f"{n / args.entries:.1f} {op}" for op, n in sorted(requests.items()))
            if args.s3
            else ""
        )
    )
    if profiler is not None:
        if args.profile:
            print(profiler.output_text(unicode=False, color=False))
        if args.html:
            profiler.write_html(args.html)
    return 0 if statuses == {"scored"} else 1


def count_s3_requests() -> dict[str, int]:
    """Requests to S3 from now on (the clients of both storages, in this thread and the
    threads saving terms files and reading zips ahead), by operation."""
    from django.core.files.storage import storages

    counts: dict[str, int] = {}

    def counted(model, **kwargs):
        counts[model.name] = counts.get(model.name, 0) + 1

    from challenge_site.submissions import batches

    def register():
        for alias in ("default", "private"):
            client = getattr(storages[alias], "connection", None)
            if client is not None:
                client.meta.client.meta.events.register("before-call.s3", counted)

    register()
    for thread in (batches._SAVING, batches._FETCHING):  # the threads that save terms
        thread.submit(register).result()  # files and read zips ahead
    return counts


if __name__ == "__main__":
    sys.exit(main())
