from django.core.management.base import BaseCommand
from django.db import transaction

from challenge_site.leaderboard import best, generation
from datasets.models import Dataset


class Command(BaseCommand):
    help = (
        "Compute every dataset's best-per-participant table from scratch (the backfill after "
        "upgrading; scoring keeps it up to date afterwards) and move each dataset's "
        "generation on, so cached plots are drawn again."
    )

    def add_arguments(self, parser):
        parser.add_argument("--dataset", type=int, action="append", help="dataset id (repeat)")

    def handle(self, *args, dataset=None, verbosity=1, **options):
        datasets = Dataset.objects.select_related("challenge").order_by("pk")
        if dataset:
            datasets = datasets.filter(pk__in=dataset)
        for found in datasets:
            with transaction.atomic():
                count = best.rebuild(found)
                generation.bump(dataset_id=found.pk)
            if verbosity:
                self.stdout.write(f"{found.challenge.slug}/{found.name}: {count} best entries")
