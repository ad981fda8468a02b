from django.db import migrations, models


class Migration(migrations.Migration):
    """A dataset's optional slices files (scoring.md §8): a new kind of DatasetFile."""

    dependencies = [("datasets", "0006_losses")]

    operations = [
        migrations.AlterField(
            model_name="datasetfile",
            name="kind",
            field=models.CharField(
                choices=[("inputs", "Inputs"), ("targets", "Targets"), ("slices", "Slices")],
                max_length=8,
            ),
        ),
    ]
