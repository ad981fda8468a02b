"""Announcements: organisers' news on a challenge's news page, e-mailed once on request.

An announcement is e-mailed at most once: asking marks it "being e-mailed"
(EmailState.SENDING) and Celery sends it in batches through the shared outbox
(challenge_site.mailing), whose Delivery rows, kind "announcement", keep it to one
message per person; the counts below are the announcement's own.
"""

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.utils import timezone

from challenge_site.challenges.models import Challenge


class EmailState(models.TextChoices):
    NOT_SENT = "not_sent", "Not e-mailed"
    SENDING = "sending", "Being e-mailed"
    SENT = "sent", "E-mailed"


class Announcement(models.Model):
    challenge = models.ForeignKey(Challenge, on_delete=models.CASCADE, related_name="announcements")
    title = models.CharField(max_length=200)
    body = models.TextField(
        help_text="Markdown. The e-mail carries this text as it is (plain text), with a "
        "link to the challenge's news page."
    )
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        editable=False,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    created = models.DateTimeField(default=timezone.now, editable=False)
    published_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="Shown on the challenge's news page from this moment on (“Now” publishes "
        "at once); empty: not published. Only a published announcement can be e-mailed.",
    )

    # The e-mail to the participants (admin action "E-mail to participants…").
    email_state = models.CharField(
        max_length=8, choices=EmailState, default=EmailState.NOT_SENT, editable=False
    )
    email_requested_at = models.DateTimeField(null=True, blank=True, editable=False)
    email_requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        editable=False,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    email_site_url = models.CharField(
        max_length=200,
        blank=True,
        editable=False,
        help_text="Scheme and host the e-mail's links start with (of the request that "
        "asked for the e-mail; a Celery worker has no request).",
    )
    email_recipients = models.PositiveIntegerField(
        default=0, editable=False, help_text="Recipients counted when the e-mail was asked for."
    )
    email_sent = models.PositiveIntegerField(default=0, editable=False)
    email_failed = models.PositiveIntegerField(
        default=0, editable=False, help_text="Addresses the mail server refused."
    )
    emailed_at = models.DateTimeField(
        null=True, blank=True, editable=False, help_text="When the last batch went out."
    )

    class Meta:
        ordering = ["-created", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(email_state__in=EmailState.values),
                name="announcement_email_state_valid",
            ),
            # Finished exactly when sent; asked for exactly when not "not e-mailed".
            models.CheckConstraint(
                condition=Q(email_state=EmailState.SENT, emailed_at__isnull=False)
                | (~Q(email_state=EmailState.SENT) & Q(emailed_at__isnull=True)),
                name="announcement_emailed_when_sent",
            ),
            models.CheckConstraint(
                condition=Q(email_state=EmailState.NOT_SENT, email_requested_at__isnull=True)
                | (~Q(email_state=EmailState.NOT_SENT) & Q(email_requested_at__isnull=False)),
                name="announcement_email_requested",
            ),
        ]
        indexes = [
            # The news page: WHERE challenge AND published_at <= now
            # ORDER BY published_at DESC.
            models.Index(F("challenge"), F("published_at").desc(), name="announcement_news_idx"),
        ]

    def __str__(self):
        return self.title

    def is_published(self, *, now) -> bool:
        return self.published_at is not None and self.published_at <= now


class EmailOptOut(models.Model):
    """A user who wants no more announcement e-mails, of any challenge (recorded by the
    unsubscribe link of every such e-mail; removed by its "subscribe again" button)."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="announcement_opt_out"
    )
    created = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name = "e-mail opt-out"

    def __str__(self):
        return str(self.user)
