from django.core.management.base import BaseCommand
from django.utils import timezone

from challenge_site.submissions.services import purge_invalid_zips


class Command(BaseCommand):
    help = (
        "Delete the zips of submissions found invalid more than "
        "SUBMISSION_INVALID_ZIP_RETENTION_DAYS days ago (Celery beat does this every hour)."
    )

    def handle(self, *args, **options):
        count = purge_invalid_zips(now=timezone.now())
        self.stdout.write(f"Deleted the zips of {count} invalid submission(s).")
