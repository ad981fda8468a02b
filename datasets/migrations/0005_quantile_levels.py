# Spec §8 (issue 27): a regression dataset's quantile levels, read by wis and the coverage
# of its central intervals; null for every existing dataset (no levels, no wis).

from django.db import migrations, models

import datasets.models


class Migration(migrations.Migration):
    dependencies = [("datasets", "0004_dataset_multiclass")]

    operations = [
        migrations.AddField(
            model_name="dataset",
            name="quantile_levels",
            field=models.JSONField(
                blank=True,
                help_text="Quantile levels strictly increasing in (0, 1), at most 99, e.g. "
                "0.05, 0.25, 0.5, 0.75, 0.95: adds the weighted interval score (wis) and the "
                "coverage of every central interval (two levels summing to 1). Empty: none.",
                null=True,
                validators=[datasets.models.validate_quantile_levels],
            ),
        ),
    ]
