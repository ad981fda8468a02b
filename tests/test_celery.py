from pathlib import Path

from django.conf import settings

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
