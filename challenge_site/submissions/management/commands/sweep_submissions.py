from django.core.management.base import BaseCommand
from django.utils import timezone

from challenge_site.submissions.services import sweep


class Command(BaseCommand):
    help = (
        "Queue again the submissions left queued, or running, longer than "
        "SUBMISSION_SCORING_TIMEOUT (Celery beat does this every SUBMISSION_SWEEP_INTERVAL)."
    )

    def handle(self, *args, **options):
        ids = sweep(now=timezone.now())
        self.stdout.write(f"Queued {len(ids)} submission(s) again.")
