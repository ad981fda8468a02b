from django.db import migrations, models


class Migration(migrations.Migration):
    """Heavy-tail marks of the bootstrap intervals (scoring.tails, issue 28): NULL until an
    interval run writes them."""

    dependencies = [("submissions", "0007_score_slices")]

    operations = [
        migrations.AddField(
            model_name="score",
            name="heavy_tail",
            field=models.BooleanField(
                blank=True, help_text="Own (and rank) interval may be too narrow.", null=True
            ),
        ),
        migrations.AddField(
            model_name="score",
            name="leader_heavy_tail",
            field=models.BooleanField(
                blank=True, help_text="Entry − leader interval may be too narrow.", null=True
            ),
        ),
        migrations.AddField(
            model_name="score",
            name="baseline_heavy_tail",
            field=models.BooleanField(
                blank=True, help_text="Entry − baseline interval may be too narrow.", null=True
            ),
        ),
    ]
