from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("datasets", "0005_quantile_levels")]

    operations = [
        migrations.AddField(
            model_name="dataset",
            name="losses",
            field=models.JSONField(
                blank=True,
                default=list,
                help_text="Losses the leaderboard shows, e.g. nlp, brier; empty = every loss "
                "of the task. The ranking loss must be one of them.",
            ),
        ),
        migrations.AlterField(
            model_name="dataset",
            name="ranking_loss",
            field=models.CharField(
                blank=True,
                help_text="Loss that ranks submissions; empty = the task's default (nlp for "
                "classification and multiclass, nlpd for regression).",
                max_length=32,
            ),
        ),
    ]
