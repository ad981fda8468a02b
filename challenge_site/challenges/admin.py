"""The challenges app's own admin pages: the history of each challenge (ChallengeEvent)
and its participants. The console that brings a challenge's datasets, publication and
exports together (ChallengeAdmin) is challenge_site.console's."""

from django.contrib import admin

from .admin_scope import ChallengeScopedAdmin, OrganisedChallengeFilter
from .models import ChallengeEvent


@admin.register(ChallengeEvent)
class ChallengeEventAdmin(ChallengeScopedAdmin):
    """Read only: events are written by the code that makes the change."""

    list_display = ("at", "challenge", "kind", "who", "via", "summary")
    list_filter = ("kind", OrganisedChallengeFilter)
    list_select_related = ("challenge",)
    search_fields = ("challenge__slug", "username")
    fields = ("challenge", "kind", "at", "user", "username", "via", "summary", "detail")
    readonly_fields = fields
    date_hierarchy = "at"

    @admin.display(description="Who")
    def who(self, event):
        return event.who

    @admin.display(description="What")
    def summary(self, event):
        return event.summary

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


from . import admin_participants  # noqa
