# The multiclass task (issue 26): a dataset's number of classes and whether ensemble
# lines are allowed; rows of the other tasks keep classes NULL, which both constraints allow.

import django.core.validators
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("challenges", "0005_challenge_max_team_size"),
        ("datasets", "0003_dataset_generation"),
    ]

    operations = [
        migrations.AlterField(
            model_name="dataset",
            name="task",
            field=models.CharField(
                choices=[
                    ("classification", "Classification"),
                    ("regression", "Regression"),
                    ("multiclass", "Multiclass classification"),
                ],
                max_length=16,
            ),
        ),
        migrations.AddField(
            model_name="dataset",
            name="allow_ensembles",
            field=models.BooleanField(
                default=True,
                help_text="Prediction lines may hold M·L numbers, M = 2 … 100 ensemble members' "
                "probabilities (averaged; their total, data and model uncertainty are reported).",
            ),
        ),
        migrations.AddField(
            model_name="dataset",
            name="classes",
            field=models.PositiveSmallIntegerField(
                blank=True,
                help_text="Number of classes L (2 to 1000): targets are 0 … L−1 and each "
                "prediction line holds L probabilities.",
                null=True,
                validators=[
                    django.core.validators.MinValueValidator(2),
                    django.core.validators.MaxValueValidator(1000),
                ],
            ),
        ),
        migrations.AlterField(
            model_name="dataset",
            name="ranking_loss",
            field=models.CharField(
                blank=True,
                help_text="Loss that ranks submissions; empty = the task's default (nlp for "
                "classification and multiclass, nlpd for regression).",
                max_length=16,
            ),
        ),
        migrations.AddConstraint(
            model_name="dataset",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    ("classes__isnull", True),
                    models.Q(("classes__gte", 2), ("classes__lte", 1000)),
                    _connector="OR",
                ),
                name="dataset_classes_range",
                violation_error_message="classes must be between 2 and 1000.",
            ),
        ),
        migrations.AddConstraint(
            model_name="dataset",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    ("classes__isnull", False),
                    models.Q(("task__in", ["multiclass"]), _negated=True),
                    _connector="OR",
                ),
                name="dataset_classes_required",
                violation_error_message="A dataset of this task needs its number of classes.",
            ),
        ),
    ]
