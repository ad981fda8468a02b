"""Celery tasks: thin wrappers that pass an id to scoring.py and results.py, which send
them by name and never import this module. The results e-mail's batches are sent by the
outbox's task (challenge_site.mailing.tasks)."""

from celery import shared_task
from django.utils import timezone

from challenge_site.mailing.services import MAIL_RETRIES, MAIL_RETRY_DELAY, MAIL_UNAVAILABLE

from . import results, scoring


@shared_task(name=scoring.TASK, bind=True, acks_late=True, reject_on_worker_lost=True)
def send_scoring_notice(self, submission_id: int) -> int:
    """E-mail a submission's outcome to whoever asked; safe to deliver twice (after
    MAIL_RETRIES the e-mail is given up)."""
    try:
        return scoring.notify(submission_id=submission_id, now=timezone.now())
    except MAIL_UNAVAILABLE as error:
        raise self.retry(exc=error, countdown=MAIL_RETRY_DELAY, max_retries=MAIL_RETRIES) from error


@shared_task(name="notifications.resume_results", acks_late=True)
def resume_results() -> list[int]:
    """Queue again the results mailings whose task was lost (Celery beat)."""
    return results.resume_stalled(now=timezone.now())
