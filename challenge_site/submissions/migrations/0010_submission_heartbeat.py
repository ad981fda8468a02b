from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("submissions", "0009_splitresult_certain")]

    operations = [
        migrations.AddField(
            model_name="submission",
            name="heartbeat_at",
            field=models.DateTimeField(
                blank=True,
                help_text="Last sign of life of the running scoring attempt.",
                null=True,
            ),
        ),
        migrations.AddIndex(
            model_name="submission",
            index=models.Index(
                condition=models.Q(("withdrawn_at__isnull", False)),
                fields=["dataset"],
                name="submission_withdrawn_idx",
            ),
        ),
    ]
