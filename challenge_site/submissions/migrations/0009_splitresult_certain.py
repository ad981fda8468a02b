from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("submissions", "0008_score_heavy_tail")]

    operations = [
        migrations.AddField(
            model_name="splitresult",
            name="certain",
            field=models.PositiveIntegerField(
                blank=True,
                help_text="Examples of the whole prediction file of the split whose prediction "
                "claims certainty (probability 0 or 1, a class of probability 0, zero variance): "
                "one whose ruled-out outcome happens makes the log loss infinite. The test's "
                "public and private parts carry the whole test file's count. Empty for a "
                "non-probabilistic file and for a split scored before it was counted.",
                null=True,
            ),
        ),
    ]
