"""Leaderboard render time with 100 and with 100,000 (or 1,000,000) submissions stored.

Seeds a throwaway database and requests pages through Django's test Client with the
production settings (DJANGO_DEBUG=0: cached templates, no query log), so each timing
is a whole request on the server: URL routing, middleware, the queries and the
template (no network). Prints median and 95th percentile per page, the number of
queries, and the ratio of the large leaderboard to the small one.

- SQLite (default): a fresh file in a temporary folder, deleted afterwards. No
  ANALYZE, as on a site nobody tunes.
- PostgreSQL: ``--database-url postgres://USER@HOST:PORT/NAME`` uses the database NAME,
  created if it does not exist (and then dropped at the end, also after a failure;
  PostgreSQL 13 or later: DROP DATABASE … WITH (FORCE)), or used and kept if it exists
  and is empty; with no NAME (or ``postgres``, the maintenance database) a new
  ``bench_leaderboard_PID_RANDOM``, dropped at the end. A run drops no database it did
  not create (see :func:`throwaway_database`). ANALYZE after seeding (autovacuum would).

One challenge with results published, one classification dataset (five losses, the
widest pivot) and its baseline. N submissions by max(10, N/100) participants: 95 %
scored, with validation and test scores for every loss (values rounded to 3 decimals,
so there are ties; 2 % of the files point-only, 1 % with an infinite nlp), and 5 %
invalid (no scores; never listed). The small leaderboard is seeded first and measured,
then grown to the large one in the same database. On PostgreSQL the large one is seeded
in SQL (INSERT … SELECT over generate_series, with setseed: minutes for a million), then
VACUUM ANALYZE, then the best-per-participant table is built (manage.py
rebuild_best_entries, timed); the seeding time is printed.

Besides the fixed pages, it measures a deep keyset page (the cursor of the row in the
middle of the board, and of the best-per-participant board), the CSV export's first
rows (streamed: the time until its first 50 rows are out) and, once, the time
to the CSV's full body (every row, in constant memory).

Usage: python bench/leaderboard.py [--database-url URL] [--small 100] [--large 100000]
       [--requests 200] [--full-csv]
"""

from __future__ import annotations

import argparse
import os
import random
import secrets
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
    "CSV export, first rows streamed": (BOARD.rstrip("/") + ".csv?sort=nlp", 1),
}
# Filled in once the board is seeded: the cursor of the row in the middle.
DEEP = ("deep keyset page (middle row), nlp", "deep keyset page, best per participant")
STREAMED = {"CSV export, first rows streamed"}
TARGET_PAGE = "page 1, default sort (nlp)"


@contextmanager
def throwaway_database(url: str | None, *, prefix: str = BENCH_DB):
    """Sets DATABASE_URL to the bench's database for the duration; yields the vendor.

    - No URL (or ``sqlite…``): a fresh SQLite file in a temporary folder, deleted after.
    - ``postgres://USER@HOST:PORT/`` or ``…/postgres`` (the server's maintenance
      database, as the README's examples give): a new database of a name no other run
      uses (``PREFIX_PID_RANDOM``), dropped at the end, also after a failure.
    - ``postgres://USER@HOST:PORT/NAME``: that database. If it does not exist it is
      created, and dropped at the end; if it exists it must be empty (no tables: the
      bench seeds from nothing) and is used and kept as it is left. A run never drops
      a database it did not create, so two runs on one server never meet.
    """
    if not url or url.startswith("sqlite"):
        with tempfile.TemporaryDirectory(prefix="bench-leaderboard-") as folder:
            os.environ["DATABASE_URL"] = f"sqlite:///{folder}/bench.sqlite3"
            yield "sqlite"
        return
    import psycopg2
    from psycopg2 import errors, sql

    parts = urlsplit(url)
    named = parts.path.strip("/")
    if named in ("", "postgres"):
        named = f"{prefix}_{os.getpid()}_{secrets.token_hex(4)}"

    def admin(statement) -> None:
        """One statement on the server's maintenance database, in a fresh connection
        (the one before may be gone, e.g. after a server restart)."""
        connection = psycopg2.connect(urlunsplit(parts._replace(path="/postgres")))
        connection.autocommit = True
        try:
            with connection.cursor() as cursor:
                cursor.execute(statement)
        finally:
            connection.close()

    name = sql.Identifier(named)
    try:
        admin(sql.SQL("CREATE DATABASE {}").format(name))
        created = True
    except errors.DuplicateDatabase:
        created = False
    target = urlunsplit(parts._replace(path=f"/{named}"))
    if not created:
        connection = psycopg2.connect(target)
        try:
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT count(*) FROM pg_tables "
                    "WHERE schemaname NOT IN ('pg_catalog', 'information_schema')"
                )
                tables = cursor.fetchone()[0]
        finally:
            connection.close()
        if tables:
            raise SystemExit(
                f"database {named} exists and holds {tables} tables: name an empty or a "
                "new database, or none (…:5432/) for a throwaway one"
            )
    os.environ["DATABASE_URL"] = target
    try:
        yield "postgresql"
    finally:
        from django.conf import settings

        if settings.configured:  # (not if the run failed before Django was set up)
            from django.db import connections

            connections.close_all()
        if created:  # only ours; FORCE: a connection of this process left open
            admin(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(name))


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


def seed_sql(dataset, *, first: int, last: int, seed: int) -> None:
    """PostgreSQL: submissions ``first`` to ``last`` - 1 as in ``seed`` (same shares of
    invalid, point-only and infinite entries), written by the server itself from a
    template row of the small board: INSERT … SELECT over generate_series."""
    from django.contrib.auth.models import User
    from django.db import connection, transaction

    from challenge_site.submissions.models import Score, Submission

    participants = max(10, last // 100)
    have = User.objects.count()
    User.objects.bulk_create(
        (User(username=f"p{i}") for i in range(have, participants)), batch_size=5000
    )
    users = list(User.objects.order_by("pk").values_list("pk", flat=True))
    template = Submission.objects.filter(dataset=dataset, is_baseline=False).order_by("pk")[0]
    table = Submission._meta.db_table
    start = dataset.challenge.start
    overrides = {
        "user_id": "(%(users)s::int[])[1 + floor(random() * %(n)s)::int]",
        "method": "'Method ' || g.i",
        "created": "%(start)s::timestamptz + g.i * interval '1 minute'",
        "queued_at": "%(start)s::timestamptz + g.i * interval '1 minute'",
        "finished_at": "%(start)s::timestamptz + g.i * interval '1 minute'",
        "status": "CASE WHEN random() > 0.05 THEN 'scored' ELSE 'invalid' END",
    }
    columns = [f.column for f in Submission._meta.concrete_fields if f.column != "id"]
    values = ", ".join(overrides.get(c, f"t.{c}") for c in columns)
    params = {"users": users, "n": len(users), "start": start, "first": first, "last": last - 1}
    scores = Score._meta.db_table
    losses = ", ".join(f"('{loss}')" for loss in LOSSES)
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT setseed(%s)", [(seed % 1000) / 1000])
        before = Submission.objects.aggregate(top=models_max("pk"))["top"]
        cursor.execute(
            f"INSERT INTO {table} ({', '.join(columns)}) SELECT {values} "
            f"FROM {table} t, generate_series(%(first)s, %(last)s) AS g(i) "
            f"WHERE t.id = {template.pk}",
            params,
        )
        cursor.execute(
            f"""
            WITH s AS MATERIALIZED (
                SELECT id, dataset_id, random() < 0.02 AS point_only FROM {table}
                WHERE id > %(before)s AND status = 'scored'
            )
            INSERT INTO {scores} (submission_id, dataset_id, split, loss, value, ladder_current)
            SELECT s.id, s.dataset_id, sp.split, l.loss,
                CASE WHEN s.point_only AND l.loss <> '01l' THEN NULL
                     WHEN l.loss = 'nlp' AND random() < 0.01 THEN 'Infinity'::float8
                     ELSE round(random()::numeric, 3)::float8 END,
                false
            FROM s CROSS JOIN (VALUES ('val'), ('test')) AS sp(split)
                CROSS JOIN (VALUES {losses}) AS l(loss)
            """,
            {"before": before},
        )


def models_max(field: str):
    from django.db.models import Max

    return Max(field)


def after_seeding() -> float:
    """VACUUM ANALYZE (PostgreSQL; autovacuum would), then the best-per-participant table
    built from scratch as an upgrade's backfill does; returns the seconds the build took."""
    from django.core.management import call_command
    from django.db import connection

    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE")
    started = time.perf_counter()
    call_command("rebuild_best_entries", verbosity=0)
    return time.perf_counter() - started


def deep_urls(dataset) -> dict[str, tuple[str, int]]:
    """The keyset links to the rows in the middle of the board and of the best board
    (read here with an OFFSET, once: the pages themselves never use one)."""
    import scoring
    from challenge_site.leaderboard import queries, services

    urls = {}
    for label, best in zip(DEEP, (False, True), strict=True):
        board = queries.Board(dataset, "val", scoring.get_loss(dataset.task, "nlp"), best)
        ids = queries.ranking(board, paged=True)
        count = ids.count()
        position = max(1, count // 2)
        pk = ids[position - 1]
        [entry] = queries.pivot(board, [pk])
        cursor = services.Cursor(False, position, queries.Key.of(board, entry))
        query = "?view=best&" if best else "?"
        urls[label] = (BOARD + query + "after=" + cursor.token(), 1)
    return urls


def full_csv_seconds(url: str, *, most: int | None = None) -> tuple[float, int]:
    """Seconds to the last byte of a streamed CSV (or to its line ``most``), and its
    number of lines."""
    from django.test import Client

    started = time.perf_counter()
    response = Client().get(url)
    lines = 0
    for chunk in response.streaming_content:
        lines += chunk.count(b"\n")
        if most is not None and lines >= most:
            break
    response.close()
    return time.perf_counter() - started, lines


def measure(
    requests: int, *, entries: int, extra: dict | None = None
) -> dict[str, tuple[float, float, int] | None]:
    """{page: (median ms, p95 ms, queries)} over ``requests`` requests after a warm-up;
    None for a page the leaderboard does not have (page 20 of 100 entries)."""
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    client = Client()
    results = {}
    for label, (url, needs) in {**PAGES, **(extra or {})}.items():
        if entries < needs:
            results[label] = None
            continue

        def get(url=url, label=label):
            response = client.get(url)
            if label in STREAMED:  # the header line, then the first rows
                chunks = iter(response.streaming_content)
                next(chunks), next(chunks)
                response.close()
            return response

        for _ in range(5):
            assert get().status_code == 200, url
        with CaptureQueriesContext(connection) as queries:
            get()
        count = len(queries)  # read now: the next request clears the connection's log
        times = []
        for _ in range(requests):
            started = time.perf_counter()
            response = get()
            times.append(time.perf_counter() - started)
            assert response.status_code == 200
        times.sort()
        p95 = times[min(len(times) - 1, round(0.95 * len(times)) - 1)]
        results[label] = (statistics.median(times) * 1000, p95 * 1000, count)
    return results


def report(small: int, large: int, before: dict, after: dict, vendor: str) -> None:
    print(f"\n{vendor}: median / p95 in ms (queries), {small:,} vs {large:,} submissions\n")
    width = max(len(label) for label in after)
    print(f"{'page':<{width}}  {small:>9,}            {large:>9,}            ratio")
    for label in after:
        m2, p2, q2 = after[label]
        if before.get(label) is None:
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
    over = [label for label, (m, _, _) in after.items() if m >= 50]
    print("every view under 50 ms median" if not over else f"50 ms or more: {', '.join(over)}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", default=None, help="postgres://… (default: SQLite)")
    parser.add_argument("--small", type=int, default=100)
    parser.add_argument("--large", type=int, default=100_000)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--seed", type=int, default=2004)
    parser.add_argument(
        "--full-csv", action="store_true", help="also time the whole CSV of the large board"
    )
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    with (
        tempfile.TemporaryDirectory(prefix="bench-leaderboard-var-") as folder,
        throwaway_database(args.database_url) as vendor,
    ):
        setup_django(folder)
        dataset = create_dataset()
        seed(dataset, first=0, last=args.small, rng=rng)
        after_seeding()
        before = measure(args.requests, entries=args.small, extra=deep_urls(dataset))
        started = time.perf_counter()
        if vendor == "postgresql" and args.large - args.small > 50_000:
            seed_sql(dataset, first=args.small, last=args.large, seed=args.seed)
        else:
            seed(dataset, first=args.small, last=args.large, rng=rng)
        seeded = time.perf_counter() - started
        built = after_seeding()
        print(
            f"seeded {args.large:,} submissions in {seeded:.0f} s; best-per-participant "
            f"table built in {built:.1f} s"
        )
        dataset.refresh_from_db()
        after = measure(args.requests, entries=args.large, extra=deep_urls(dataset))
        report(args.small, args.large, before, after, vendor)
        if args.full_csv:
            for label, url, most in (
                ("best per participant", BOARD.rstrip("/") + ".csv?sort=nlp&view=best", None),
                ("all submissions", BOARD.rstrip("/") + ".csv?sort=nlp", 100_001),
            ):
                seconds, lines = full_csv_seconds(url, most=most)
                print(
                    f"CSV export, {label}: {lines - 1:,} rows in {seconds:.1f} s "
                    f"({(lines - 1) / seconds:,.0f} rows/s, streamed in constant memory)"
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
