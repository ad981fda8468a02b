import time
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth.models import User

from challenge_site.celery import app

ROOT = Path(__file__).resolve().parents[1]


def test_celery_takes_its_configuration_from_django_settings():
    assert app.conf.task_always_eager is settings.CELERY_TASK_ALWAYS_EAGER
    assert app.conf.task_acks_late is True
    assert app.conf.task_reject_on_worker_lost is True
    assert app.conf.worker_prefetch_multiplier == 1


def test_configured_broker_accepts_connections():
    """memory:// by default; the Redis of CELERY_BROKER_URL when CI sets it."""
    with app.connection_for_write() as connection:
        connection.ensure_connection(max_retries=3)
        assert connection.as_uri().startswith(settings.CELERY_BROKER_URL.split("://")[0])


def test_tasks_are_routed_to_their_queue_by_name():
    route = app.amqp.router.route
    expected = {
        "submissions.score": "scoring",
        "submissions.sweep": "scoring",
        "submissions.purge_invalid_zips": "scoring",
        "leaderboard.intervals": "intervals",
        "leaderboard.sweep_intervals": "intervals",
        "leaderboard.draw_plot": "boards",
        "leaderboard.build_export": "boards",
        "leaderboard.sweep_boards": "boards",
        "leaderboard.compute_statistics": "boards",
        "leaderboard.sweep_statistics": "boards",
        "notifications.scoring_finished": "mail",
        "notifications.resume_results": "mail",
        "mailing.send_batch": "mail",
        "challenges.publish_scheduled": "celery",
        "anything.else": "celery",
    }
    assert {name: route({}, name)["queue"].name for name in expected} == expected
    # All declared: a worker without -Q consumes every one of them.
    assert sorted(app.amqp.queues) == ["boards", "celery", "intervals", "mail", "scoring"]


def test_every_task_of_the_site_has_a_queue_that_a_worker_consumes():
    """A task left to the default queue would wait for the background worker only if meant
    to; each of the site's tasks is listed, and compose and the operators' guide start a
    worker for every queue."""
    app.loader.import_default_modules()
    site_tasks = {name for name in app.tasks if not name.startswith("celery.")}
    listed = {task for tasks in settings.TASK_QUEUES.values() for task in tasks}
    assert site_tasks <= listed, site_tasks - listed
    compose = (ROOT / "docker-compose.yml").read_text()
    guide = (ROOT / "docs" / "operators.md").read_text()
    for text in (compose, guide):
        assert '"-Q", "scoring"' in text or "-Q scoring " in text
        assert "intervals,boards,mail,celery" in text


def test_beat_sends_the_sweeps_every_one_of_them_run_even_after_a_backlog():
    schedule = app.conf.beat_schedule
    sweep = schedule["sweep-submissions"]
    assert sweep == {"task": "submissions.sweep", "schedule": 15.0}  # no expiry
    assert schedule["sweep-boards"] == {"task": "leaderboard.sweep_boards", "schedule": 60.0}
    assert schedule["sweep-statistics"] == {
        "task": "leaderboard.sweep_statistics",
        "schedule": 60.0,
    }
    assert schedule["publish-scheduled-results"] == {
        "task": "challenges.publish_scheduled",
        "schedule": 60.0,
    }
    app.loader.import_default_modules()
    assert {entry["task"] for entry in schedule.values()} <= set(app.tasks)


def _connection_closes(monkeypatch):
    """Counts the closes of the default database connection (SQLite's in-memory test
    database ignores a close, so the calls are what is counted)."""
    from django.db import connection

    closes = []
    real_close = connection.close
    monkeypatch.setattr(connection, "close", lambda: closes.append(1) or real_close())
    return connection, closes


@pytest.mark.django_db(transaction=True)
def test_a_worker_keeps_its_database_connection_from_task_to_task(monkeypatch):
    """Celery's Django fix-up, as a worker installs it, no longer closes the connection
    around each task (a new PostgreSQL connection per task, as long as a small upload's
    scoring); Django's rules run instead and keep a connection that is fine."""
    from celery.fixups.django import DjangoWorkerFixup

    from challenge_site.celery import keep_database_connections

    fixup = DjangoWorkerFixup(app)
    task = app.tasks["submissions.score"]
    assert task.request.is_eager is False
    connection, closes = _connection_closes(monkeypatch)
    connection.ensure_connection()
    connection.close_at = time.monotonic() + 600  # CONN_MAX_AGE, as settings give PostgreSQL
    for _ in range(3):
        fixup.on_task_prerun(sender=task)
        keep_database_connections(sender=task)
        User.objects.exists()
        fixup.on_task_postrun(sender=task)
        keep_database_connections(sender=task)
    assert closes == []


@pytest.mark.django_db(transaction=True)
def test_a_worker_drops_a_connection_past_its_age_or_after_an_error(monkeypatch):
    from challenge_site.celery import keep_database_connections

    task = app.tasks["submissions.score"]
    connection, closes = _connection_closes(monkeypatch)
    connection.ensure_connection()
    connection.close_at = time.monotonic() - 1  # CONN_MAX_AGE passed
    keep_database_connections(sender=task)
    assert closes == [1]

    connection.ensure_connection()
    connection.close_at = None
    connection.errors_occurred = True
    monkeypatch.setattr(connection, "is_usable", lambda: False)  # the server went away
    keep_database_connections(sender=task)
    assert closes == [1, 1]


@pytest.mark.django_db
def test_a_task_run_eagerly_leaves_its_callers_connection_alone(monkeypatch):
    """Without a broker a task runs inside its caller's transaction: never closed there,
    even past its age."""
    from challenge_site.celery import keep_database_connections

    task = app.tasks["submissions.score"]
    connection, closes = _connection_closes(monkeypatch)
    connection.close_at = time.monotonic() - 1
    task.push_request(is_eager=True)
    try:
        keep_database_connections(sender=task)
    finally:
        task.pop_request()
    assert closes == []
