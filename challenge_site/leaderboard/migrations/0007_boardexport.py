import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("datasets", "0001_initial"),
        ("leaderboard", "0006_boardplot"),
    ]

    operations = [
        migrations.CreateModel(
            name="BoardExport",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "split",
                    models.CharField(
                        choices=[
                            ("train", "Training"),
                            ("val", "Validation"),
                            ("test", "Test"),
                            ("public", "Test, public part"),
                            ("private", "Test, private part"),
                        ],
                        max_length=8,
                    ),
                ),
                ("slice", models.CharField(blank=True, max_length=64)),
                ("sort", models.CharField(max_length=32)),
                ("best", models.BooleanField(default=False)),
                ("final", models.BooleanField(default=False)),
                (
                    "format",
                    models.CharField(choices=[("csv", "CSV"), ("json", "JSON")], max_length=4),
                ),
                (
                    "audience",
                    models.CharField(
                        choices=[("public", "everyone"), ("organisers", "the organisers")],
                        max_length=10,
                    ),
                ),
                (
                    "requested",
                    models.PositiveBigIntegerField(default=0, help_text="The version asked for."),
                ),
                (
                    "built",
                    models.PositiveBigIntegerField(
                        blank=True, help_text="The file's version.", null=True
                    ),
                ),
                (
                    "status",
                    models.CharField(
                        choices=[
                            ("queued", "being prepared"),
                            ("building", "being built"),
                            ("ready", "ready"),
                            ("failed", "failed"),
                        ],
                        default="queued",
                        max_length=8,
                    ),
                ),
                ("requested_at", models.DateTimeField(blank=True, null=True)),
                ("building_since", models.DateTimeField(blank=True, null=True)),
                (
                    "file",
                    models.CharField(
                        blank=True, help_text="Name in the private storage.", max_length=255
                    ),
                ),
                ("rows", models.PositiveBigIntegerField(default=0)),
                ("bytes", models.PositiveBigIntegerField(default=0)),
                ("sha256", models.CharField(blank=True, max_length=64)),
                ("built_at", models.DateTimeField(blank=True, null=True)),
                (
                    "seconds",
                    models.FloatField(
                        blank=True, help_text="How long the last build took.", null=True
                    ),
                ),
                (
                    "error",
                    models.TextField(blank=True, help_text="Why the last build failed."),
                ),
                (
                    "dataset",
                    models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="datasets.dataset",
                    ),
                ),
            ],
            options={
                "constraints": [
                    models.UniqueConstraint(
                        fields=(
                            "dataset",
                            "split",
                            "slice",
                            "sort",
                            "best",
                            "final",
                            "format",
                            "audience",
                        ),
                        name="boardexport_unique_board",
                    )
                ],
                "indexes": [
                    models.Index(
                        condition=models.Q(("status__in", ["queued", "building"])),
                        fields=["requested_at"],
                        name="boardexport_pending_idx",
                    )
                ],
            },
        ),
    ]
