from django.core.management.base import BaseCommand, CommandError

from challenge_site.submissions.models import Submission
from challenge_site.submissions.services import lacking_losses, rescore
from datasets.models import Dataset


class Command(BaseCommand):
    help = (
        "Score submissions again (e.g. after a loss was added to the scoring registry); "
        "all of them, or those of one challenge and/or dataset. With --missing, only the "
        "scored entries lacking a loss their dataset shows (after installing a plug-in "
        "loss: README, “Adding a loss”)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--challenge", metavar="SLUG", help="only this challenge")
        parser.add_argument("--dataset", metavar="NAME", help="only datasets with this name")
        parser.add_argument(
            "--missing",
            action="store_true",
            help="only the entries scored before a loss their dataset shows was installed",
        )

    def handle(self, *args, challenge=None, dataset=None, missing=False, **options):
        submissions = Submission.objects.all()
        if challenge is not None:
            submissions = submissions.filter(dataset__challenge__slug=challenge)
        if dataset is not None:
            submissions = submissions.filter(dataset__name=dataset)
        if (challenge or dataset) and not submissions.exists():
            raise CommandError("no submissions match " + _describe(challenge, dataset))
        if missing:
            datasets = Dataset.objects.filter(pk__in=submissions.values("dataset"))
            ids = [s.pk for d in datasets for s in lacking_losses(d).only("pk")]
            submissions = submissions.filter(pk__in=ids)
        count = rescore(submissions=submissions)
        self.stdout.write(f"Queued {count} submission(s) for rescoring.")


def _describe(challenge, dataset) -> str:
    parts = []
    if challenge is not None:
        parts.append(f"challenge {challenge!r}")
    if dataset is not None:
        parts.append(f"dataset {dataset!r}")
    return " and ".join(parts)
