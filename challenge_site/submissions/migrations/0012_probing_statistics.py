"""The statistics behind the probing flags (challenge_site.submissions.probing)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("submissions", "0011_board_ladder"),
    ]

    operations = [
        migrations.AddField(
            model_name="submission",
            name="burst",
            field=models.PositiveIntegerField(
                blank=True,
                help_text="A new account's near-chance first entry in the test phase: such first entries within the 24 h up to it when they made a burst (0: no burst).",
                null=True,
            ),
        ),
        migrations.AddField(
            model_name="submission",
            name="chance_z",
            field=models.FloatField(
                blank=True,
                help_text="Sign-test z against the baseline on the shown split (public part if any): below 3, not better than chance.",
                null=True,
            ),
        ),
        migrations.AddField(
            model_name="submission",
            name="change_share",
            field=models.FloatField(
                blank=True,
                help_text="Largest share of the change from a recent entry of its participant carried by the top few rows.",
                null=True,
            ),
        ),
        migrations.AddField(
            model_name="submission",
            name="combined_corr",
            field=models.FloatField(
                blank=True,
                help_text="Correlation with the z-weighted mean of its participant's earlier near-chance entries (a vote of random vectors).",
                null=True,
            ),
        ),
        migrations.AddField(
            model_name="submission",
            name="max_corr",
            field=models.FloatField(
                blank=True,
                help_text="Largest |correlation| of its terms with its participant's recent entries'.",
                null=True,
            ),
        ),
        migrations.AddField(
            model_name="submission",
            name="random_count",
            field=models.PositiveIntegerField(
                default=0,
                help_text="Its participant's near-chance, mutually uncorrelated entries so far, this one included.",
            ),
        ),
        migrations.AlterField(
            model_name="submission",
            name="rows_off_mode",
            field=models.PositiveIntegerField(
                blank=True,
                help_text="Prediction rows standing out of the file's bulk (else: differing from the most common one).",
                null=True,
            ),
        ),
        migrations.AlterField(
            model_name="submission",
            name="similar_run",
            field=models.PositiveIntegerField(
                default=0,
                help_text="Entries in a row, ending with this one, each a few-row change of one of its participant's recent entries.",
            ),
        ),
    ]
