"""The admin as each organiser's console: every model admin of challenge data shows an
organiser the rows of the challenges they organise and nothing else (superusers: all).

Rights come from organising a challenge (challenges.policy), not from Django's
per-model permissions: an organiser needs staff status to log in, nothing more. A row of
another challenge is not in the list, not reachable by its URL (the admin's "does not
exist" page) and not offered in a choice of challenge.
"""

from __future__ import annotations

from django.contrib import admin

from . import policy
from .admin_labels import labelled
from .models import Challenge


class ChallengeScopedAdmin(admin.ModelAdmin):
    """``challenge_path``: the lookup from the model to its Challenge ("pk" for Challenge)."""

    challenge_path = "challenge"

    def get_queryset(self, request):
        rows = super().get_queryset(request)
        if policy.is_superuser(request.user):
            return rows
        return rows.filter(**{f"{self.challenge_path}__in": policy.organised_ids(request.user)})

    def challenge_of(self, obj) -> Challenge | None:
        if obj is None:
            return None
        if self.challenge_path == "pk":
            return obj
        for part in self.challenge_path.split("__"):
            obj = getattr(obj, part, None)
            if obj is None:
                return None
        return obj

    def organises(self, request, obj=None) -> bool:
        """The user organises ``obj``'s challenge (or, with no ``obj``, some challenge)."""
        if obj is None:
            return policy.organises_any(request.user)
        return policy.manages(request.user, self.challenge_of(obj))

    def has_module_permission(self, request):
        return policy.in_console(request.user) and policy.organises_any(request.user)

    def formfield_for_dbfield(self, db_field, request, **kwargs):
        return labelled(super().formfield_for_dbfield(db_field, request, **kwargs))

    def has_view_permission(self, request, obj=None):
        return policy.in_console(request.user) and self.organises(request, obj)

    def has_change_permission(self, request, obj=None):
        return policy.in_console(request.user) and self.organises(request, obj)

    def has_add_permission(self, request):
        return policy.in_console(request.user) and policy.organises_any(request.user)

    def has_delete_permission(self, request, obj=None):
        return policy.is_superuser(request.user)

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.related_model is Challenge and not policy.is_superuser(request.user):
            kwargs["queryset"] = policy.organised_challenges(request.user)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)


class OrganisedChallengeFilter(admin.SimpleListFilter):
    """Filter by challenge, offering only those the user organises (a plain list filter
    on the foreign key would name every challenge, drafts of others included)."""

    title = "challenge"
    parameter_name = "challenge"
    challenge_path = "challenge"  # override in a subclass for other models

    def lookups(self, request, model_admin):
        return [
            (c.pk, c.title) for c in policy.organised_challenges(request.user).order_by("title")
        ]

    def queryset(self, request, queryset):
        if self.value() is None:
            return queryset
        return queryset.filter(**{f"{self.challenge_path}__pk": self.value()})


class ScopedInlineMixin:
    """Inline rows follow their parent's challenge: an organiser of it may view, add,
    change and delete them (Django's per-model permissions are not asked)."""

    parent_challenge_path = "challenge"  # from the parent object to its Challenge ("pk")

    def _organises_parent(self, request, obj) -> bool:
        if obj is None:
            return policy.organises_any(request.user)
        challenge = obj
        if self.parent_challenge_path != "pk":
            for part in self.parent_challenge_path.split("__"):
                challenge = getattr(challenge, part, None)
        return policy.in_console(request.user) and policy.manages(request.user, challenge)

    def get_formset(self, request, obj=None, **kwargs):
        """Every field of a tabular row named (the form's own fields too: a file upload,
        a log base), for its column header is its only label."""
        formset = super().get_formset(request, obj, **kwargs)
        for field in formset.form.base_fields.values():
            labelled(field, in_row=isinstance(self, admin.TabularInline))
        return formset

    def has_view_permission(self, request, obj=None):
        return self._organises_parent(request, obj)

    def has_change_permission(self, request, obj=None):
        return self._organises_parent(request, obj)

    def has_add_permission(self, request, obj=None):
        return self._organises_parent(request, obj)

    def has_delete_permission(self, request, obj=None):
        return self._organises_parent(request, obj)
