from django.contrib import admin

from .models import Membership, Team


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    fields = ("user", "joined")
    readonly_fields = ("user", "joined")
    can_delete = False


@admin.register(Team)
class TeamAdmin(admin.ModelAdmin):
    """Read-only for everyone: teams change through their members' page, whose rules
    (the test phase, the limits, the entries that follow a member) the admin would skip."""

    list_display = ("name", "challenge", "members_label", "created")
    list_filter = ("challenge",)
    search_fields = ("name", "members_label", "memberships__user__username")
    readonly_fields = ("challenge", "name", "created", "created_by", "members_label")
    exclude = ("invite_code",)
    inlines = [MembershipInline]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
