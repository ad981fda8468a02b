from django.conf import settings

from challenge_site.celery import app


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
