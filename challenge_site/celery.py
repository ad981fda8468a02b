"""The Celery application: configuration comes from Django settings (CELERY_*)."""

import os

from celery import Celery, signals
from django.db import close_old_connections

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "challenge_site.settings")

app = Celery("challenge_site")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@signals.task_prerun.connect
@signals.task_postrun.connect
def keep_database_connections(sender=None, **kwargs) -> None:
    """A worker's database connections follow Django's own rules around each task, as a
    web request's do: kept for CONN_MAX_AGE, closed after an error that left them
    unusable or when the health check before the next query fails.

    Celery's Django fix-up would close them before and after every task instead (unless
    CELERY_DB_REUSE_MAX, which settings set past any worker's life): each task then
    opened a new PostgreSQL connection (a server process forked, the start-up's round
    trips), about as long as scoring a small upload, and all of the cost of a batch's
    other messages (submissions/batches.py). A task run eagerly (no broker) runs inside
    its caller, whose connection and transaction are not the task's to close.
    """
    request = getattr(sender, "request", None)
    if not getattr(request, "is_eager", False):
        close_old_connections()
