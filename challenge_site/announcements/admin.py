from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils import timezone

from challenge_site.challenges.admin_scope import ChallengeScopedAdmin, OrganisedChallengeFilter
from challenge_site.challenges.models import format_utc

from . import services
from .models import Announcement, EmailState


@admin.register(Announcement)
class AnnouncementAdmin(ChallengeScopedAdmin):
    """Organisers post their challenges' news here and e-mail it to the participants
    (the action "E-mail to participants…", once per announcement, after a confirmation
    that says how many people receive it)."""

    challenge_path = "challenge"
    list_display = ("title", "challenge", "published_at", "email_progress", "author")
    list_filter = (OrganisedChallengeFilter,)
    list_select_related = ("challenge", "author")
    search_fields = ("title", "challenge__slug", "challenge__title")
    fields = ("challenge", "title", "body", "published_at", "author", "created", "email_progress")
    readonly_fields = ("author", "created", "email_progress")
    actions = ["email_participants"]

    def get_changeform_initial_data(self, request):
        """News is published when posted, unless the organiser sets a later time (or
        clears the field to keep a draft)."""
        return {
            "published_at": timezone.now().replace(microsecond=0),
            **super().get_changeform_initial_data(request),
        }

    def save_model(self, request, obj, form, change):
        if not change:
            obj.author = request.user
        super().save_model(request, obj, form, change)
        self.message_user(request, publication_message(obj, now=timezone.now()))

    @admin.display(description="E-mail")
    def email_progress(self, announcement):
        if announcement.pk is None or announcement.email_state == EmailState.NOT_SENT:
            return "Not e-mailed; the list's action “E-mail to participants…” sends it once."
        text = f"{announcement.email_sent} of {announcement.email_recipients} sent" + (
            f", {announcement.email_failed} refused" if announcement.email_failed else ""
        )
        if announcement.email_state == EmailState.SENDING:
            return f"Being e-mailed: {text} so far."
        return f"E-mailed on {format_utc(announcement.emailed_at)}: {text}."

    @admin.action(description="E-mail to participants…", permissions=["change"])
    def email_participants(self, request, queryset):
        """Once per announcement, after a page that says who receives it and how many;
        an announcement whose sending stopped (the broker or mail server was down) is
        resumed for those who have not received it."""
        now = timezone.now()
        to_send, to_resume = [], []
        for announcement in queryset.select_related("challenge"):
            if not self.has_change_permission(request, announcement):
                continue
            if announcement.email_state == EmailState.SENDING:
                to_resume.append(announcement)
            elif refusal := services.email_refusal(announcement, now=now):
                self.message_user(request, refusal, messages.WARNING)
            else:
                to_send.append(announcement)
        if not (to_send or to_resume):
            if not queryset.exists():
                self.message_user(request, "No announcement you may e-mail was selected.")
            return None
        if request.method == "POST" and request.POST.get("post") == "yes":
            self._send(request, to_send, to_resume, now=now)
            return None
        items = [
            {
                "announcement": announcement,
                "resume": announcement.email_state == EmailState.SENDING,
                "recipients": (
                    services.pending_recipients(announcement)
                    if announcement.email_state == EmailState.SENDING
                    else services.recipients(challenge=announcement.challenge)
                ).count(),
            }
            for announcement in [*to_send, *to_resume]
        ]
        context = {
            **self.admin_site.each_context(request),
            "title": "E-mail to participants?",
            "subtitle": None,
            "opts": self.opts,
            "items": items,
            "total": sum(item["recipients"] for item in items),
            "action": "email_participants",
            "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
            "cancel_url": reverse(
                f"admin:{self.opts.app_label}_{self.opts.model_name}_changelist",
                current_app=self.admin_site.name,
            ),
            "media": self.media,
        }
        request.current_app = self.admin_site.name
        return TemplateResponse(request, "announcements/admin/email_confirmation.html", context)

    def _send(self, request, to_send, to_resume, *, now) -> None:
        site_url = f"{request.scheme}://{request.get_host()}"
        started = 0
        for announcement in to_send:
            try:
                services.request_email(
                    announcement_id=announcement.pk, user=request.user, site_url=site_url, now=now
                )
            except services.EmailRefused as refusal:  # changed since the page was shown
                self.message_user(request, str(refusal), messages.WARNING)
            else:
                started += 1
        resumed = sum(
            services.resume_email(announcement_id=announcement.pk) for announcement in to_resume
        )
        if started:
            self.message_user(
                request,
                f"E-mailing {started} announcement(s) to the participants, in batches; "
                "the list's “E-mail” column shows the progress.",
                messages.SUCCESS,
            )
        if resumed:
            self.message_user(
                request,
                f"Resumed e-mailing {resumed} announcement(s): only those who have not "
                "received it yet get it.",
                messages.SUCCESS,
            )


def publication_message(announcement: Announcement, *, now) -> str:
    """What the save did to the news page: published, scheduled or kept as a draft."""
    when = announcement.published_at
    if when is None:
        return (
            f"“{announcement.title}” is a draft: it is not on the news page. Set “Published "
            "at” to publish it."
        )
    if when <= now:
        return f"“{announcement.title}” is published on the challenge's news page."
    return (
        f"“{announcement.title}” is scheduled: it appears on the news page on {format_utc(when)}."
    )
