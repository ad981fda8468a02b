"""Opt-in notification e-mails: the logs that keep each to one message.

A ScoringNotice is written (claimed, and committed) *before* its message goes out and is
unique per what it tells, so no retried task, second run or rescore can send it again; a
worker killed between the claim and the message leaves the row "not confirmed" and the
e-mail unsent (at most once, as the outbox's Delivery rows, challenge_site.mailing, which
log the results e-mail of each ResultsMailing, kind "results").
"""

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from challenge_site.challenges.models import Challenge, ChallengeEvent
from challenge_site.mailing.models import DeliveryStatus
from challenge_site.submissions.models import Status, Submission


class ScoringNotice(models.Model):
    """The e-mail telling one recipient one outcome (scored, invalid, failed) of one
    submission: a rescore ending as the run before it sends nothing."""

    submission = models.ForeignKey(Submission, on_delete=models.CASCADE, related_name="+")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    status = models.CharField(max_length=8, choices=Status, help_text="The outcome it told.")
    email = models.EmailField(blank=True, help_text="The address it was sent to.")
    delivery = models.CharField(
        max_length=8, choices=DeliveryStatus, default=DeliveryStatus.CLAIMED
    )
    claimed_at = models.DateTimeField()
    sent_at = models.DateTimeField(null=True, blank=True)
    error = models.CharField(max_length=500, blank=True)

    class Meta:
        ordering = ["submission", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["submission", "user", "status"], name="scoringnotice_once_per_outcome"
            ),
            models.CheckConstraint(
                condition=Q(delivery__in=DeliveryStatus.values),
                name="scoringnotice_delivery_valid",
            ),
        ]

    def __str__(self):
        return f"#{self.submission_id} {self.status} → {self.email}"


class MailingState(models.TextChoices):
    SENDING = "sending", "Being e-mailed"
    SENT = "sent", "E-mailed"


class ResultsMailing(models.Model):
    """The e-mail "results published" of one challenge: started by the first publication
    (a withdrawal and a second publication send nothing more), sent in batches."""

    challenge = models.OneToOneField(
        Challenge, on_delete=models.CASCADE, related_name="results_mailing"
    )
    event = models.ForeignKey(
        ChallengeEvent,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="The publication that started it.",
    )
    state = models.CharField(max_length=8, choices=MailingState, default=MailingState.SENDING)
    requested_at = models.DateTimeField(default=timezone.now)
    recipients = models.PositiveIntegerField(
        default=0, help_text="Recipients counted when the results were published."
    )
    sent = models.PositiveIntegerField(default=0)
    failed = models.PositiveIntegerField(default=0, help_text="Addresses the server refused.")
    last_batch_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(state__in=MailingState.values), name="resultsmailing_state_valid"
            ),
            models.CheckConstraint(
                condition=Q(state=MailingState.SENT, finished_at__isnull=False)
                | Q(state=MailingState.SENDING, finished_at__isnull=True),
                name="resultsmailing_finished_when_sent",
            ),
        ]

    def __str__(self):
        return f"Results of {self.challenge}"
