"""The leaderboard bench's database: a throwaway database and the seeded board.

bench/leaderboard.py times the pages; this module makes the board they show (and
bench/intervals.py borrows its throwaway database and Django set-up). See
bench/leaderboard.py's docstring for what is seeded and why.
"""

from __future__ import annotations

import os
import random
import secrets
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


@contextmanager
def throwaway_database(url: str | None, *, prefix: str = BENCH_DB):
    """Sets DATABASE_URL to the bench's database for the duration; yields the vendor.

    - No URL (or ``sqlite…``): a fresh SQLite file in a temporary folder, deleted after.
    - ``postgres://USER@HOST:PORT/`` or ``…/postgres`` (the server's maintenance
      database, as the operators' guide's examples give): a new database of a name no other run
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
    template row of the small board: INSERT … SELECT over generate_series.

    ANALYZE runs inside the transaction, before its commit, on a fresh connection: the
    new rows' deferred foreign-key checks run at COMMIT, and with plans made while the
    tables held a hundred rows each was a whole-table scan (seen with gdb: 17 minutes and
    more for 100,000 entries; 40 s with the statistics of the rows being committed)."""
    from django.contrib.auth.models import User
    from django.db import connection, connections, transaction

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
    connections.close_all()  # (no plan cached from the smaller board)
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
        for model in (Submission, Score):
            cursor.execute(f"ANALYZE {model._meta.db_table}")


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


def change(dataset, *, number: int, rng: random.Random) -> int:
    """One more scored entry, listed the way scoring lists one: its Score rows and the
    leaderboard's answer to ``signals.listing_changed`` (the participant's best rows, the
    dataset's generation, and what hangs on them: the plots' redraw requests) in one
    transaction. Returns the dataset's generation after it."""
    from django.contrib.auth.models import User
    from django.db import transaction

    from challenge_site.submissions import signals
    from challenge_site.submissions.entrants import Entrant
    from challenge_site.submissions.models import Submission
    from datasets.models import Dataset

    user_id = User.objects.order_by("pk").values_list("pk", flat=True).first()
    # A minute after the latest entry, as seed() spaces them (not now: the statistics
    # page would count every day since).
    latest = Submission.objects.filter(dataset=dataset).aggregate(top=models_max("created"))
    created = latest["top"] + timedelta(minutes=1)
    with transaction.atomic():
        submission = Submission.objects.create(
            user_id=user_id,
            dataset=dataset,
            method=f"Change {number}",
            authors="A. Author",
            created=created,
            queued_at=created,
            finished_at=created,
            phase="validation",
            mark="<",
            status="scored",
            splits=["val", "test"],
        )
        insert_scores(
            [
                (submission.pk, dataset.pk, split, loss, round(rng.random(), 3))
                for split in ("val", "test")
                for loss in LOSSES
            ]
        )
        signals.listing_changed.send(
            sender=Dataset, dataset=dataset, entrant=Entrant.of(submission)
        )
    return Dataset.objects.values_list("generation", flat=True).get(pk=dataset.pk)
