"""Fill the best-per-participant table of a site that has scores already (an upgrade, or a
`make run` on an old var/db.sqlite3): without it their best boards would be empty until
``manage.py rebuild_best_entries`` ran. The same code as that command, on today's models:
with no dataset (a new site, the tests) it does nothing."""

from django.db import migrations


def backfill(apps, schema_editor):
    from challenge_site.leaderboard import best
    from datasets.models import Dataset

    for dataset in Dataset.objects.select_related("challenge").order_by("pk"):
        best.rebuild(dataset)


class Migration(migrations.Migration):
    dependencies = [
        ("leaderboard", "0003_bestentry"),
        ("submissions", "0006_team_withdrawn"),
        ("teams", "0001_initial"),
    ]

    operations = [migrations.RunPython(backfill, migrations.RunPython.noop)]
