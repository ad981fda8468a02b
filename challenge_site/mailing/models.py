"""The outbox every batched e-mail shares (an announcement, a challenge's results): one
Delivery row per recipient of one mailing.

A mailing is named by its kind (registered by the app that sends it, services.register)
and the id of that app's row holding its state (an Announcement, a ResultsMailing). A
row is written (claimed, and committed) *before* its message goes out, and the unique
(kind, mailing, user) triple means no second run, retry or repeated request can write
one again: each person gets the message at most once.
"""

from django.conf import settings
from django.db import models
from django.db.models import Q


class DeliveryStatus(models.TextChoices):
    CLAIMED = "claimed", "Not confirmed"  # written before sending; stays if the run died
    SENT = "sent", "Sent"
    FAILED = "failed", "Refused by the mail server"


class Delivery(models.Model):
    """One recipient of one mailing: the log that keeps it to one message per person."""

    kind = models.CharField(
        max_length=32, help_text="What is being sent: a kind registered with the outbox."
    )
    # No foreign key: the mailing's row belongs to an app above this one. Deleting it
    # deletes its rows all the same (services.register connects that).
    mailing_id = models.PositiveBigIntegerField(help_text="The id of the kind's mailing row.")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    email = models.EmailField(blank=True, help_text="The address it was sent to.")
    status = models.CharField(max_length=8, choices=DeliveryStatus, default=DeliveryStatus.CLAIMED)
    claimed_at = models.DateTimeField()
    sent_at = models.DateTimeField(null=True, blank=True)
    error = models.CharField(max_length=500, blank=True)

    class Meta:
        verbose_name_plural = "deliveries"
        ordering = ["kind", "mailing_id", "id"]
        constraints = [
            # At most one message per person and mailing; its index also serves the next
            # batch's "recipients without a row": WHERE kind = K AND mailing_id = X.
            models.UniqueConstraint(
                fields=["kind", "mailing_id", "user"], name="mailing_delivery_once_per_user"
            ),
            models.CheckConstraint(
                condition=Q(status__in=DeliveryStatus.values), name="mailing_delivery_status_valid"
            ),
        ]

    def __str__(self):
        return f"{self.kind} {self.mailing_id} → {self.email}"
