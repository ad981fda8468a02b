from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("challenges", "0005_challenge_max_team_size")]

    operations = [
        migrations.AddField(
            model_name="challenge",
            name="publish_results_at",
            field=models.DateTimeField(
                blank=True,
                help_text="Publish the results automatically at this time (UTC), after the "
                "deadline; empty = only by hand (“Publish results…”). Setting it shows what "
                "becomes public first; the publication is recorded like a manual one.",
                null=True,
            ),
        ),
        migrations.AddConstraint(
            model_name="challenge",
            constraint=models.CheckConstraint(
                condition=models.Q(publish_results_at__isnull=True)
                | models.Q(publish_results_at__gt=models.F("deadline")),
                name="challenge_publication_after_deadline",
                violation_error_message="The automatic publication must come after the deadline.",
            ),
        ),
    ]
