from django.contrib import admin
from django.contrib.auth.admin import UserAdmin
from django.contrib.auth.models import User

from .models import Profile


class ProfileInline(admin.StackedInline):
    model = Profile
    can_delete = False


admin.site.unregister(User)


@admin.register(User)
class ParticipantAdmin(UserAdmin):
    inlines = [ProfileInline]
    list_display = ("username", "email", "display_name", "is_staff", "is_active", "date_joined")
    list_select_related = ("profile",)
    search_fields = (*UserAdmin.search_fields, "profile__display_name", "profile__affiliation")

    @admin.display(description="Display name", ordering="profile__display_name")
    def display_name(self, user):
        profile = getattr(user, "profile", None)
        return profile.display_name if profile else ""
