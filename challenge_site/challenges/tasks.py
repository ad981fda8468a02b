"""Celery task: the beat's sweep of scheduled publications (services.publish_scheduled)."""

from celery import shared_task
from django.utils import timezone

from . import services

TASK = "challenges.publish_scheduled"


@shared_task(name=TASK, acks_late=True)
def publish_scheduled() -> list[str]:
    """Publish the results whose time has come; safe to run twice (a challenge already
    published is skipped, under the row lock of publish_results)."""
    return services.publish_scheduled(now=timezone.now())
