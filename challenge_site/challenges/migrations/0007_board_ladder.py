from django.db import migrations, models

FEEDBACK_CHOICES = [
    ("exact", "Exact scores"),
    ("ladder", "The Ladder (a score changes only on a real improvement)"),
    (
        "board_ladder",
        "The board's Ladder (one shared ladder: a score is released only when it beats "
        "the board's best)",
    ),
]


class Migration(migrations.Migration):
    dependencies = [("challenges", "0006_organiser_console")]

    operations = [
        migrations.RemoveConstraint(model_name="challenge", name="challenge_feedback_valid"),
        migrations.AddField(
            model_name="challenge",
            name="late_joiners_feedback",
            field=models.BooleanField(
                default=True,
                help_text="Accounts that join after the test phase begins get public "
                "feedback. Unticked, their entries get no score on the test's public part "
                "before the results are published (they count for the final ranking only).",
            ),
        ),
        migrations.AlterField(
            model_name="challenge",
            name="feedback",
            field=models.CharField(
                choices=FEEDBACK_CHOICES,
                default="exact",
                help_text="How validation and public-part scores are shown before their "
                "targets are released or the results published. The Ladder (Blum & Hardt "
                "2015) shows a participant's best only when a new entry beats it by more "
                "than its standard error, rounded to that precision, so that probing the "
                "leaderboard gains nothing. The board's Ladder does the same with one "
                "ladder for the whole board: an entry's score is released only when it "
                "beats the board's released best, so that many accounts learn together no "
                "more than one.",
                max_length=16,
            ),
        ),
        migrations.AddConstraint(
            model_name="challenge",
            constraint=models.CheckConstraint(
                condition=models.Q(("feedback__in", ["exact", "ladder", "board_ladder"])),
                name="challenge_feedback_valid",
            ),
        ),
    ]
