import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="Delivery",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "kind",
                    models.CharField(
                        help_text="What is being sent: a kind registered with the outbox.",
                        max_length=32,
                    ),
                ),
                (
                    "mailing_id",
                    models.PositiveBigIntegerField(help_text="The id of the kind's mailing row."),
                ),
                (
                    "email",
                    models.EmailField(
                        blank=True, help_text="The address it was sent to.", max_length=254
                    ),
                ),
                (
                    "status",
                    models.CharField(
                        choices=[
                            ("claimed", "Not confirmed"),
                            ("sent", "Sent"),
                            ("failed", "Refused by the mail server"),
                        ],
                        default="claimed",
                        max_length=8,
                    ),
                ),
                ("claimed_at", models.DateTimeField()),
                ("sent_at", models.DateTimeField(blank=True, null=True)),
                ("error", models.CharField(blank=True, max_length=500)),
                (
                    "user",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "verbose_name_plural": "deliveries",
                "ordering": ["kind", "mailing_id", "id"],
                "constraints": [
                    models.UniqueConstraint(
                        fields=("kind", "mailing_id", "user"),
                        name="mailing_delivery_once_per_user",
                    ),
                    models.CheckConstraint(
                        condition=models.Q(("status__in", ["claimed", "sent", "failed"])),
                        name="mailing_delivery_status_valid",
                    ),
                ],
            },
        ),
    ]
