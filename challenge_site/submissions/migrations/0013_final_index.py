"""Whether a dataset's final selections are in force (finals.in_force) is read from a
partial index of the few chosen entries, not a scan of all the dataset's submissions."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("submissions", "0012_probing_statistics"),
    ]

    operations = [
        migrations.AddIndex(
            model_name="submission",
            index=models.Index(
                condition=models.Q(("final", True)),
                fields=["dataset"],
                name="submission_final_idx",
            ),
        ),
    ]
