from django.db import migrations, models


class Migration(migrations.Migration):
    """A slice's boards (scoring.md §8) keep their best entries under "LOSS@SLICE"."""

    dependencies = [("leaderboard", "0004_backfill_best_entries")]

    operations = [
        migrations.AlterField(
            model_name="bestentry", name="loss", field=models.CharField(max_length=65)
        ),
    ]
