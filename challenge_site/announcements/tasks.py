"""Celery task: a thin wrapper that passes an announcement id to the services.

services.py sends the task by its name and never imports this module.
"""

from celery import shared_task
from django.utils import timezone

from . import services

# The mail server is down: try again this many seconds later, at most this many times
# (then the announcement stays "being e-mailed" until resumed from the admin).
MAIL_RETRY_DELAY = 60
MAIL_RETRIES = 10


@shared_task(name=services.TASK, bind=True, acks_late=True, reject_on_worker_lost=True)
def send_announcement_batch(self, announcement_id: int) -> int:
    """E-mail the next batch of an announcement's recipients, then queue the next batch.
    Safe to deliver twice: a recipient is claimed before their message goes out, once."""
    try:
        batch = services.send_batch(announcement_id=announcement_id, now=timezone.now())
    except services.MAIL_UNAVAILABLE as error:
        raise self.retry(exc=error, countdown=MAIL_RETRY_DELAY, max_retries=MAIL_RETRIES) from error
    if batch.more:
        services.enqueue(announcement_id)
    return batch.sent
