from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from datasets.importing import ImportProblems, import_challenge


class Command(BaseCommand):
    help = (
        "Create or update a challenge from a folder holding challenge.toml and one "
        "subfolder of NAME_{train,val,test}_{inputs,targets}.txt files per dataset."
    )

    def add_arguments(self, parser):
        parser.add_argument("folder", type=Path)

    def handle(self, *args, folder, **options):
        if not folder.is_dir():
            raise CommandError(f"{folder}: not a folder")
        try:
            summary = import_challenge(folder)
        except ImportProblems as error:
            raise CommandError(
                "cannot import the challenge:\n" + "\n".join(error.problems)
            ) from None
        for line in summary:
            self.stdout.write(line)
