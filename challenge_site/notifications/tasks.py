"""Celery tasks: thin wrappers that pass an id to scoring.py and results.py, which send
them by name and never import this module."""

from celery import shared_task
from django.utils import timezone

from challenge_site.announcements.services import MAIL_UNAVAILABLE

from . import results, scoring

# The mail server is down: try again this many seconds later, at most this many times
# (then a results mailing waits for resume_stalled; a scoring e-mail is given up).
MAIL_RETRY_DELAY = 60
MAIL_RETRIES = 10


@shared_task(name=scoring.TASK, bind=True, acks_late=True, reject_on_worker_lost=True)
def send_scoring_notice(self, submission_id: int) -> int:
    """E-mail a submission's outcome to whoever asked; safe to deliver twice."""
    try:
        return scoring.notify(submission_id=submission_id, now=timezone.now())
    except MAIL_UNAVAILABLE as error:
        raise self.retry(exc=error, countdown=MAIL_RETRY_DELAY, max_retries=MAIL_RETRIES) from error


@shared_task(name=results.TASK, bind=True, acks_late=True, reject_on_worker_lost=True)
def send_results_batch(self, mailing_id: int) -> int:
    """E-mail the next batch of a challenge's results mailing, then queue the next one.
    Safe to deliver twice: a recipient is claimed before their message goes out, once."""
    try:
        batch = results.send_batch(mailing_id=mailing_id, now=timezone.now())
    except MAIL_UNAVAILABLE as error:
        raise self.retry(exc=error, countdown=MAIL_RETRY_DELAY, max_retries=MAIL_RETRIES) from error
    if batch.more:
        results.enqueue(mailing_id)
    return batch.sent


@shared_task(name="notifications.resume_results", acks_late=True)
def resume_results() -> list[int]:
    """Queue again the results mailings whose task was lost (Celery beat)."""
    return results.resume_stalled(now=timezone.now())
