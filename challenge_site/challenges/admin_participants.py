"""Participants in the admin: each organiser sees those of their challenges, approves them
and withdraws approvals (participation.approve / revoke_approval record who and when).

Rows are made by the participants themselves on the join page; what they recorded (when
they joined, when they accepted the rules) is read only here.
"""

from django.contrib import admin, messages
from django.utils import timezone

from . import participation
from .admin_scope import ChallengeScopedAdmin, OrganisedChallengeFilter
from .models import Participant


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
        "email",
        "challenge",
        "joined",
        "rules_accepted_at",
        "approved_at",
        "approved_by",
    )
    list_filter = (OrganisedChallengeFilter, ApprovedFilter, RulesAcceptedFilter)
    list_select_related = ("user", "challenge", "approved_by")
    search_fields = ("user__username", "user__email")
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
    actions = ["approve_selected", "revoke_approval"]

    @admin.display(description="E-mail", ordering="user__email")
    def email(self, participant):
        return participant.user.email

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
