from django.core.management.base import BaseCommand, CommandError

from challenge_site.challenges.models import Challenge
from challenge_site.leaderboard.demo import loader


class Command(BaseCommand):
    help = (
        "Send example submissions of simple seeded methods to the demo challenges through the "
        "submission service, under demo users it creates. Running it again sends nothing new."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "slugs",
            nargs="*",
            default=["epuc", "covshift", "probing", "cifar10c", "teamwork"],
            help="challenges (default: the demos)",
        )

    def handle(self, *args, slugs, **options):
        challenges = {c.slug: c for c in Challenge.objects.filter(slug__in=slugs)}
        missing = [slug for slug in slugs if slug not in challenges]
        if missing:
            raise CommandError(
                f"no challenge {', '.join(missing)}: import it first "
                "(python manage.py import_challenge DIR)"
            )
        problems = []
        for slug in slugs:
            report = loader.load(challenge=challenges[slug], log=self.stdout.write)
            problems += report.problems
            scored = sum(s.status == "scored" for s in report.created)
            self.stdout.write(
                f"{slug}: {len(report.created)} submissions sent ({scored} scored), "
                f"{report.skipped} already there"
            )
        if problems:
            raise CommandError("refused:\n" + "\n".join(problems))
