import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    """The statistics pages computed by a worker (statistics_snapshots.py): one row per
    challenge."""

    dependencies = [
        ("challenges", "0006_organiser_console"),
        ("leaderboard", "0007_boardexport"),
    ]

    operations = [
        migrations.CreateModel(
            name="StatisticsSnapshot",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("requested", models.PositiveBigIntegerField(default=0)),
                ("computed", models.PositiveBigIntegerField(default=0)),
                (
                    "queued",
                    models.BooleanField(
                        default=False,
                        help_text="A computation is on its way (sent, not started).",
                    ),
                ),
                ("requested_at", models.DateTimeField(blank=True, null=True)),
                ("computing_since", models.DateTimeField(blank=True, null=True)),
                ("computed_at", models.DateTimeField(blank=True, null=True)),
                (
                    "seconds",
                    models.FloatField(
                        blank=True, help_text="How long the last computation took.", null=True
                    ),
                ),
                (
                    "numbers",
                    models.JSONField(blank=True, default=dict, help_text="The page's tables."),
                ),
                ("daily_svg", models.TextField(blank=True)),
                ("datasets_svg", models.TextField(blank=True)),
                ("outcomes_svg", models.TextField(blank=True)),
                ("turnaround_svg", models.TextField(blank=True)),
                (
                    "challenge",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="challenges.challenge",
                    ),
                ),
            ],
            options={
                "indexes": [
                    models.Index(
                        condition=models.Q(
                            ("requested__gt", models.F("computed")),
                            ("computed_at__isnull", True),
                            _connector="OR",
                        ),
                        fields=["requested_at"],
                        name="statisticssnapshot_behind_idx",
                    )
                ],
            },
        ),
    ]
