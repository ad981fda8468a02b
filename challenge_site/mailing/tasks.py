"""Celery task: a thin wrapper that passes a mailing's kind and id to the services.

services.py sends the task by its name and never imports this module.
"""

from celery import shared_task
from django.utils import timezone

from . import services


@shared_task(name=services.TASK, bind=True, acks_late=True, reject_on_worker_lost=True)
def send_batch(self, kind: str, mailing_id: int) -> int:
    """E-mail the next batch of a mailing's recipients, then queue the next batch. Safe
    to deliver twice: a recipient is claimed before their message goes out, once."""
    try:
        batch = services.send_batch(kind=kind, mailing_id=mailing_id, now=timezone.now())
    except services.MAIL_UNAVAILABLE as error:
        raise self.retry(
            exc=error, countdown=services.MAIL_RETRY_DELAY, max_retries=services.MAIL_RETRIES
        ) from error
    if batch.more:
        services.enqueue(kind, mailing_id)
    return batch.sent
