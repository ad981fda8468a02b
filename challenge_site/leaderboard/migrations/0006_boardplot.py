import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    """The loss-against-loss plots drawn by a worker (plot_drawings.py): one row each."""

    dependencies = [
        ("datasets", "0007_slices"),
        ("leaderboard", "0005_bestentry_slice_loss"),
    ]

    operations = [
        migrations.CreateModel(
            name="BoardPlot",
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
                ("ranking", models.CharField(max_length=65)),
                ("point", models.CharField(max_length=65)),
                ("requested", models.PositiveBigIntegerField(default=0)),
                ("drawn", models.PositiveBigIntegerField(default=0)),
                (
                    "queued",
                    models.BooleanField(
                        default=False, help_text="A drawing is on its way (sent, not started)."
                    ),
                ),
                ("requested_at", models.DateTimeField(blank=True, null=True)),
                ("drawing_since", models.DateTimeField(blank=True, null=True)),
                ("drawn_at", models.DateTimeField(blank=True, null=True)),
                (
                    "seconds",
                    models.FloatField(
                        blank=True, help_text="How long the last drawing took.", null=True
                    ),
                ),
                ("entries", models.PositiveIntegerField(default=0, help_text="Entries drawn.")),
                (
                    "left_out",
                    models.PositiveIntegerField(
                        default=0,
                        help_text="Entries not drawn: an infinite or n/a value of either loss.",
                    ),
                ),
                (
                    "svg",
                    models.TextField(
                        blank=True, help_text="The finished drawing (empty: none yet)."
                    ),
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
                "indexes": [
                    models.Index(
                        condition=models.Q(
                            ("requested__gt", models.F("drawn")),
                            ("drawn_at__isnull", True),
                            _connector="OR",
                        ),
                        fields=["requested_at"],
                        name="boardplot_behind_idx",
                    )
                ],
                "constraints": [
                    models.UniqueConstraint(
                        fields=("dataset", "split", "ranking", "point"),
                        name="boardplot_unique_plot",
                    ),
                    models.CheckConstraint(
                        condition=models.Q(
                            ("split__in", ["train", "val", "test", "public", "private"])
                        ),
                        name="boardplot_split_valid",
                    ),
                ],
            },
        ),
    ]
