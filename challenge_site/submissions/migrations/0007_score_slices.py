from django.db import migrations, models


class Migration(migrations.Migration):
    """Scores of a loss on one slice of a split (scoring.md §8) are stored as "LOSS@SLICE":
    a loss name (up to 32 characters, a plug-in's), "@", a slice name (up to 32)."""

    dependencies = [("submissions", "0006_team_withdrawn"), ("datasets", "0007_slices")]

    operations = [
        migrations.AlterField(
            model_name="score",
            name="loss",
            field=models.CharField(
                help_text="A name from scoring.LOSSES, or LOSS@SLICE on a slice.", max_length=65
            ),
        ),
    ]
