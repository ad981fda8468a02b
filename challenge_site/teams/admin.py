from django.contrib import admin

from challenge_site.challenges.admin_scope import ChallengeScopedAdmin, OrganisedChallengeFilter

from .models import Membership, Team


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    fields = ("user", "joined")
    readonly_fields = ("user", "joined")
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(Team)
class TeamAdmin(ChallengeScopedAdmin):
    """Each organiser sees the teams of their challenges, read-only: teams change through
    their members' page, whose rules (the test phase, the limits, the entries that follow
    a member) the admin would skip. The invitation link stays the members' own."""

    list_display = ("name", "challenge", "members_label", "created")
    list_filter = (OrganisedChallengeFilter,)
    list_select_related = ("challenge",)
    search_fields = ("name", "members_label", "memberships__user__username")
    fields = ("challenge", "name", "created", "created_by", "members_label")
    readonly_fields = fields
    inlines = [MembershipInline]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
