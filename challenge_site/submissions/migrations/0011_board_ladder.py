import django.db.models.deletion
from django.db import migrations, models

SPLITS = [
    ("train", "Training"),
    ("val", "Validation"),
    ("test", "Test"),
    ("public", "Test, public part"),
    ("private", "Test, private part"),
]
ID = (
    "id",
    models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID"),
)


class Migration(migrations.Migration):
    dependencies = [
        ("datasets", "0007_slices"),
        ("submissions", "0010_submission_heartbeat"),
        ("challenges", "0007_board_ladder"),
    ]

    operations = [
        migrations.CreateModel(
            name="BoardLadder",
            fields=[
                ID,
                ("split", models.CharField(choices=SPLITS, max_length=16)),
                ("loss", models.CharField(blank=True, max_length=32)),
                ("next_seq", models.PositiveIntegerField(default=0)),
                (
                    "dataset",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="datasets.dataset",
                    ),
                ),
                (
                    "holder",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to="submissions.submission",
                    ),
                ),
            ],
        ),
        migrations.CreateModel(
            name="BoardStep",
            fields=[
                ID,
                ("seq", models.PositiveIntegerField()),
                ("scored", models.FloatField(blank=True, null=True)),
                ("value", models.FloatField(blank=True, null=True)),
                ("precision", models.FloatField(blank=True, null=True)),
                ("current", models.BooleanField(default=False)),
                (
                    "board",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="steps",
                        to="submissions.boardladder",
                    ),
                ),
                (
                    "submission",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="submissions.submission",
                    ),
                ),
            ],
        ),
        migrations.AddConstraint(
            model_name="boardladder",
            constraint=models.UniqueConstraint(
                fields=("dataset", "split"), name="boardladder_unique"
            ),
        ),
        migrations.AddIndex(
            model_name="boardstep",
            index=models.Index(fields=["submission"], name="boardstep_submission_idx"),
        ),
        migrations.AddIndex(
            model_name="boardstep",
            index=models.Index(
                condition=models.Q(("current", True)),
                fields=["board", "value"],
                name="boardstep_board_idx",
            ),
        ),
        migrations.AddConstraint(
            model_name="boardstep",
            constraint=models.UniqueConstraint(
                fields=("board", "submission"), name="boardstep_unique"
            ),
        ),
    ]
