"""Participants in the admin: each organiser sees those of their challenges (who they
are, when they accepted the rules, their approval), approves them and withdraws approvals
(participation.approve / revoke_approval record who and when), refuses them with a reason
e-mailed to them, writes to one of them, and exports the list as CSV.

Rows are made by the participants themselves on the join page; what they recorded (when
they joined, when they accepted the rules) is read only here.
"""

import csv

from django import forms
from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.http import HttpResponse
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils import timezone

from challenge_site.mailing.services import MAIL_UNAVAILABLE
from challenge_site.spreadsheet import csv_text

from . import participation
from .admin_scope import ChallengeScopedAdmin, OrganisedChallengeFilter
from .models import Participant

CSV_COLUMNS = [
    "challenge",
    "username",
    "display_name",
    "affiliation",
    "email",
    "joined",
    "rules_accepted_at",
    "approved_at",
    "approved_by",
]


class MessageForm(forms.Form):
    subject = forms.CharField(max_length=150, strip=True)
    body = forms.CharField(
        label="Message", widget=forms.Textarea(attrs={"rows": 8, "cols": 80}), strip=True
    )


class RefusalForm(forms.Form):
    reason = forms.CharField(
        label="Reason (required): e-mailed to each of them",
        widget=forms.Textarea(attrs={"rows": 4, "cols": 80}),
        max_length=2000,
        strip=True,
    )


class _SetFilter(admin.SimpleListFilter):
    """Yes/No on whether a date field is set."""

    field = ""

    def lookups(self, request, model_admin):
        return [("yes", "Yes"), ("no", "No")]

    def queryset(self, request, queryset):
        if self.value() not in ("yes", "no"):
            return queryset
        return queryset.filter(**{f"{self.field}__isnull": self.value() == "no"})


class ApprovedFilter(_SetFilter):
    title = "approved"
    parameter_name = "approved"
    field = "approved_at"


class RulesAcceptedFilter(_SetFilter):
    title = "accepted the rules"
    parameter_name = "rules_accepted"
    field = "rules_accepted_at"


@admin.register(Participant)
class ParticipantAdmin(ChallengeScopedAdmin):
    list_display = (
        "user",
        "display_name",
        "affiliation",
        "email",
        "challenge",
        "joined",
        "rules_accepted_at",
        "approved_at",
        "approved_by",
    )
    list_filter = (OrganisedChallengeFilter, ApprovedFilter, RulesAcceptedFilter)
    list_select_related = ("user__profile", "challenge", "approved_by")
    search_fields = (
        "user__username",
        "user__email",
        "user__profile__display_name",
        "user__profile__affiliation",
    )
    fields = (
        "challenge",
        "user",
        "email",
        "joined",
        "rules_accepted_at",
        "approved_at",
        "approved_by",
    )
    readonly_fields = fields
    date_hierarchy = "joined"
    actions = [
        "approve_selected",
        "revoke_approval",
        "refuse_approval",
        "write_to_participant",
        "export_csv",
    ]

    @admin.display(description="E-mail", ordering="user__email")
    def email(self, participant):
        return participant.user.email

    @admin.display(description="Display name", ordering="user__profile__display_name")
    def display_name(self, participant):
        return _profile(participant).get("display_name", "")

    @admin.display(description="Affiliation", ordering="user__profile__affiliation")
    def affiliation(self, participant):
        return _profile(participant).get("affiliation", "")

    def has_add_permission(self, request):
        return False  # participants join on the site (and accept the rules themselves)

    @admin.action(description="Approve selected participants", permissions=["change"])
    def approve_selected(self, request, queryset):
        count = participation.approve(participants=queryset, by=request.user, now=timezone.now())
        already = queryset.count() - count
        message = f"Approved {count} participant{'' if count == 1 else 's'}."
        if already:
            message += f" {already} already approved."
        self.message_user(request, message, messages.SUCCESS)

    @admin.action(description="Revoke approval", permissions=["change"])
    def revoke_approval(self, request, queryset):
        count = participation.revoke_approval(participants=queryset, by=request.user)
        self.message_user(
            request,
            f"Revoked the approval of {count} participant{'' if count == 1 else 's'}.",
            messages.SUCCESS,
        )

    @admin.action(
        description="Refuse approval, with a reason e-mailed to them…", permissions=["change"]
    )
    def refuse_approval(self, request, queryset):
        form = RefusalForm(request.POST if request.POST.get("post") == "yes" else None)
        if not form.is_valid():
            return self._ask(
                request,
                queryset,
                form,
                action="refuse_approval",
                title="Refuse approval? Their reason is e-mailed to each of them",
                verb="Refuse and e-mail the reason",
            )
        return self._mail(
            request,
            lambda: participation.refuse_approval(
                participants=queryset, reason=form.cleaned_data["reason"], by=request.user
            ),
            done="Refused",
        )

    @admin.action(
        description="E-mail a message to the selected participant…", permissions=["change"]
    )
    def write_to_participant(self, request, queryset):
        if queryset.count() != 1:
            self.message_user(request, "Select one participant to write to.", messages.ERROR)
            return None
        form = MessageForm(request.POST if request.POST.get("post") == "yes" else None)
        if not form.is_valid():
            return self._ask(
                request,
                queryset,
                form,
                action="write_to_participant",
                title="E-mail a message",
                verb="Send the e-mail",
            )
        return self._mail(
            request,
            lambda: participation.write_to(
                participants=queryset,
                subject=form.cleaned_data["subject"],
                body=form.cleaned_data["body"],
                by=request.user,
            ),
            done="E-mailed",
        )

    @admin.action(description="Export the selected participants as CSV", permissions=["view"])
    def export_csv(self, request, queryset):
        """The rows of the organiser's challenges only (the list's scope), as listed."""
        response = HttpResponse(content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = 'attachment; filename="participants.csv"'
        writer = csv.writer(response)
        writer.writerow(CSV_COLUMNS)
        rows = queryset.select_related("user__profile", "challenge", "approved_by")
        for participant in rows.order_by("challenge__slug", "joined", "pk"):
            profile = _profile(participant)
            writer.writerow(
                [
                    participant.challenge.slug,
                    csv_text(participant.user.get_username()),
                    csv_text(profile.get("display_name", "")),
                    csv_text(profile.get("affiliation", "")),
                    csv_text(participant.user.email),
                    _iso(participant.joined),
                    _iso(participant.rules_accepted_at),
                    _iso(participant.approved_at),
                    participant.approved_by.get_username() if participant.approved_by else "",
                ]
            )
        return response

    def _ask(self, request, queryset, form, *, action: str, title: str, verb: str):
        """The page asking for the reason or the message, listing whom it goes to."""
        context = {
            **self.admin_site.each_context(request),
            "title": title,
            "opts": self.opts,
            "participants": queryset.select_related("user", "challenge"),
            "form": form,
            "action": action,
            "verb": verb,
            "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
            "cancel_url": reverse(
                f"admin:{self.opts.app_label}_{self.opts.model_name}_changelist",
                current_app=self.admin_site.name,
            ),
            "media": self.media,
        }
        request.current_app = self.admin_site.name
        return TemplateResponse(
            request, "admin/challenges/participant/message_confirmation.html", context
        )

    def _mail(self, request, send, *, done: str):
        try:
            mailed = send()
        except MAIL_UNAVAILABLE:
            # No 500: the organiser is told, nothing was changed, and sends again later.
            self.message_user(
                request,
                "The mail server could not be reached: nothing was sent or changed. "
                "Try again later.",
                messages.ERROR,
            )
            return None
        if mailed.sent:
            self.message_user(
                request, f"{done}: e-mail sent to {', '.join(mailed.sent)}.", messages.SUCCESS
            )
        if mailed.unreachable:
            self.message_user(
                request,
                f"No e-mail sent to {', '.join(mailed.unreachable)}: no address, or the "
                "account is inactive.",
                messages.WARNING,
            )
        return None


def _profile(participant) -> dict:
    """The participant's display name and affiliation (accounts without a profile yet
    have neither)."""
    profile = getattr(participant.user, "profile", None)
    if profile is None:
        return {}
    return {"display_name": profile.display_name, "affiliation": profile.affiliation}


def _iso(when) -> str:
    return when.isoformat() if when else ""
