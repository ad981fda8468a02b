"""Leaderboard render time with 100 and with 100,000 submissions stored.

Seeds a throwaway database and requests pages through Django's test Client with the
production settings (DJANGO_DEBUG=0: cached templates, no query log), so each timing
is a whole request on the server: URL routing, middleware, the queries and the
template (no network). Prints median and 95th percentile per page, the number of
queries, and the ratio of the large leaderboard to the small one.

- SQLite (default): a fresh file in a temporary folder, deleted afterwards. No
  ANALYZE, as on a site nobody tunes.
- PostgreSQL: ``--database-url postgres://USER@HOST:PORT/ANY`` connects to that server,
  creates a database named ``bench_leaderboard`` (dropped first if left over), runs
  ANALYZE after seeding (autovacuum would), and drops it at the end, also after a
  failure (PostgreSQL 13 or later: DROP DATABASE … WITH (FORCE)).

One challenge with results published, one classification dataset (five losses, the
widest pivot) and its baseline. N submissions by max(10, N/100) participants: 95 %
scored, with validation and test scores for every loss (values rounded to 3 decimals,
so there are ties; 2 % of the files point-only, 1 % with an infinite nlp), and 5 %
invalid (no scores; never listed). The small leaderboard is seeded first and measured,
then grown to the large one in the same database.

Usage: python bench/leaderboard.py [--database-url URL] [--small 100] [--large 100000]
       [--requests 200]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
BENCH_DB = "bench_leaderboard"
LOSSES = ("nlp", "01l", "lift", "brier", "ece")
BOARD = "/challenges/bench/datasets/catalysis/leaderboard/"
# label: (URL, entries the page needs to exist)
PAGES = {
    "page 1, default sort (nlp)": (BOARD, 1),
    "page 1, sort=01l (point-only files included)": (BOARD + "?sort=01l", 1),
    "page 1, sort=lift": (BOARD + "?sort=lift", 1),
    "page 20 (rows 951-1000), nlp": (BOARD + "?page=20", 1000),
    "best per participant, nlp": (BOARD + "?view=best", 1),
    "API page 1, sort=nlp": ("/api/v1" + BOARD + "?sort=nlp", 1),
    "plot (drawing cached)": (BOARD + "plot.svg", 1),
}
TARGET_PAGE = "page 1, default sort (nlp)"


@contextmanager
def throwaway_database(url: str | None):
    """Sets DATABASE_URL to a fresh database for the duration; removes it afterwards."""
    if not url or url.startswith("sqlite"):
        with tempfile.TemporaryDirectory(prefix="bench-leaderboard-") as folder:
            os.environ["DATABASE_URL"] = f"sqlite:///{folder}/bench.sqlite3"
            yield "sqlite"
        return
    import psycopg2

    parts = urlsplit(url)
    server = urlunsplit(parts._replace(path="/postgres"))

    def admin(statement: str) -> None:
        """One statement on the server's maintenance database, in a fresh connection
        (the one before may be gone, e.g. after a server restart)."""
        connection = psycopg2.connect(server)
        connection.autocommit = True
        try:
            with connection.cursor() as cursor:
                cursor.execute(statement)
        finally:
            connection.close()

    admin(f"DROP DATABASE IF EXISTS {BENCH_DB} WITH (FORCE)")
    admin(f"CREATE DATABASE {BENCH_DB}")
    os.environ["DATABASE_URL"] = urlunsplit(parts._replace(path=f"/{BENCH_DB}"))
    try:
        yield "postgresql"
    finally:
        from django.db import connections

        connections.close_all()
        admin(f"DROP DATABASE IF EXISTS {BENCH_DB} WITH (FORCE)")


def setup_django(folder: str) -> None:
    """Production settings (DJANGO_DEBUG=0: cached templates, no query log, hashed static
    files), served as plain HTTP to the test client."""
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "challenge_site.settings")
    os.environ.update(
        {
            "DJANGO_DEBUG": "0",
            "SECRET_KEY": "bench-only-not-a-secret",
            "ALLOWED_HOSTS": "testserver",
            "SECURE_SSL_REDIRECT": "0",
            "SESSION_COOKIE_SECURE": "0",
            "CSRF_COOKIE_SECURE": "0",
            "VAR_DIR": folder,
            "STATIC_ROOT": f"{folder}/static",
            # The bench measures pages, not the rate limits: its client is one address.
            "API_THROTTLE_ANON": "off",
            "API_THROTTLE_USER": "off",
        }
    )
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    call_command("collectstatic", interactive=False, verbosity=0)


def create_dataset():
    from challenge_site.challenges.models import Challenge
    from datasets.models import Dataset

    challenge = Challenge.objects.create(
        slug="bench",
        title="Bench",
        start=datetime(2020, 1, 1, tzinfo=UTC),
        test_start=datetime(2020, 6, 1, tzinfo=UTC),
        deadline=datetime(2020, 6, 30, tzinfo=UTC),
        results_published=True,
        opened_at=datetime(2020, 1, 1, tzinfo=UTC),  # not a draft
    )
    return Dataset.objects.create(
        challenge=challenge, name="catalysis", task="classification", log_base=10.0
    )


def insert_scores(rows: list[tuple]) -> None:
    """Score rows (submission, dataset, split, loss, value), many per statement (not
    the Ladder's current entry: the Ladder is not in force here)."""
    from django.db import connection

    from challenge_site.submissions.models import Score

    rows = [(*row, False) for row in rows]
    columns = (
        f"{Score._meta.db_table} (submission_id, dataset_id, split, loss, value, ladder_current)"
    )
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            from psycopg2.extras import execute_values

            execute_values(cursor.cursor, f"INSERT INTO {columns} VALUES %s", rows, page_size=5000)
        else:
            cursor.executemany(f"INSERT INTO {columns} VALUES (%s, %s, %s, %s, %s, %s)", rows)


def seed(dataset, *, first: int, last: int, rng: random.Random) -> None:
    """Submissions number ``first`` to ``last`` - 1 (and the baseline with the first batch)."""
    from django.contrib.auth.models import User
    from django.db import connection, transaction

    from challenge_site.submissions.models import Submission

    participants = max(10, last // 100)
    have = User.objects.count()
    User.objects.bulk_create(User(username=f"p{i}") for i in range(have, participants))
    users = list(User.objects.order_by("pk").values_list("pk", flat=True))
    start = dataset.challenge.start
    with transaction.atomic():
        if first == 0:
            baseline = Submission.objects.create(
                dataset=dataset,
                method="Baseline",
                is_baseline=True,
                created=start,
                queued_at=start,
                finished_at=start,
                phase="validation",
                status="scored",
                splits=["val", "test"],
            )
            rows = [
                (baseline.pk, dataset.pk, s, loss, 0.5) for s in ("val", "test") for loss in LOSSES
            ]
            insert_scores(rows)
        for chunk in range(first, last, 5000):
            batch = []
            for i in range(chunk, min(last, chunk + 5000)):
                created = start + timedelta(minutes=i)
                status = "scored" if rng.random() > 0.05 else "invalid"
                batch.append(
                    Submission(
                        user_id=rng.choice(users),
                        dataset=dataset,
                        method=f"Method {i}",
                        authors="A. Author",
                        created=created,
                        queued_at=created,
                        finished_at=created,
                        phase="validation",
                        mark="<",
                        status=status,
                        splits=["val", "test"],
                    )
                )
            rows = []
            for submission in Submission.objects.bulk_create(batch):
                if submission.status != "scored":
                    continue
                point_only = rng.random() < 0.02
                for split in ("val", "test"):
                    for loss in LOSSES:
                        value = round(rng.random(), 3)
                        if point_only and loss != "01l":
                            value = None
                        elif loss == "nlp" and rng.random() < 0.01:
                            value = float("inf")
                        rows.append((submission.pk, dataset.pk, split, loss, value))
            insert_scores(rows)
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")


def measure(requests: int, *, entries: int) -> dict[str, tuple[float, float, int] | None]:
    """{page: (median ms, p95 ms, queries)} over ``requests`` requests after a warm-up;
    None for a page the leaderboard does not have (page 20 of 100 entries)."""
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    client = Client()
    results = {}
    for label, (url, needs) in PAGES.items():
        if entries < needs:
            results[label] = None
            continue
        for _ in range(5):
            assert client.get(url).status_code == 200, url
        with CaptureQueriesContext(connection) as queries:
            client.get(url)
        count = len(queries)  # read now: the next request clears the connection's log
        times = []
        for _ in range(requests):
            started = time.perf_counter()
            response = client.get(url)
            times.append(time.perf_counter() - started)
            assert response.status_code == 200
        times.sort()
        p95 = times[min(len(times) - 1, round(0.95 * len(times)) - 1)]
        results[label] = (statistics.median(times) * 1000, p95 * 1000, count)
    return results


def report(small: int, large: int, before: dict, after: dict, vendor: str) -> None:
    print(f"\n{vendor}: median / p95 in ms (queries), {small:,} vs {large:,} submissions\n")
    width = max(len(label) for label in PAGES)
    print(f"{'page':<{width}}  {small:>9,}            {large:>9,}            ratio")
    for label in PAGES:
        m2, p2, q2 = after[label]
        if before[label] is None:
            print(f"{label:<{width}}  {'(no such page)':>21}  {m2:6.1f} / {p2:6.1f} ({q2})")
            continue
        m1, p1, q1 = before[label]
        print(
            f"{label:<{width}}  {m1:6.1f} / {p1:6.1f} ({q1})  {m2:6.1f} / {p2:6.1f} ({q2})"
            f"  {m2 / m1:5.2f}"
        )
    median = after[TARGET_PAGE][0]
    verdict = "meets" if median < 50 else "MISSES"
    print(
        f"\n{TARGET_PAGE}: {median:.1f} ms median with {large:,} submissions "
        f"({verdict} the 50 ms target); ratio to {small:,}: {median / before[TARGET_PAGE][0]:.2f}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", default=None, help="postgres://… (default: SQLite)")
    parser.add_argument("--small", type=int, default=100)
    parser.add_argument("--large", type=int, default=100_000)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--seed", type=int, default=2004)
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    with (
        tempfile.TemporaryDirectory(prefix="bench-leaderboard-var-") as folder,
        throwaway_database(args.database_url) as vendor,
    ):
        setup_django(folder)
        dataset = create_dataset()
        seed(dataset, first=0, last=args.small, rng=rng)
        before = measure(args.requests, entries=args.small)
        started = time.perf_counter()
        seed(dataset, first=args.small, last=args.large, rng=rng)
        print(f"seeded {args.large:,} submissions in {time.perf_counter() - started:.0f} s")
        after = measure(args.requests, entries=args.large)
        report(args.small, args.large, before, after, vendor)
    return 0


if __name__ == "__main__":
    sys.exit(main())
