"""The admin's "Open challenge…": a draft leaves its draft only through this page, which
first lists what is missing (datasets.opening) and asks."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.admin import helpers
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import timezone

from datasets.opening import missing_for_opening, open_challenge

VIA_ADMIN = "admin"


class OpeningAdminMixin:
    """For ChallengeAdmin: the action, the button on a draft's page and their page."""

    def opening_urls(self):
        info = self.opts.app_label, self.opts.model_name
        return [
            path(
                "<path:object_id>/open/",
                self.admin_site.admin_view(self.open_view),
                name="{}_{}_open".format(*info),
            )
        ]

    def open_challenges(self, request, queryset):
        return self._confirm_opening(request, list(queryset), action="open_challenges")

    open_challenges.short_description = "Open the selected draft challenges…"
    open_challenges.allowed_permissions = ["change"]

    def open_view(self, request, object_id):
        challenge = self.get_object(request, unquote(object_id))
        if challenge is None:
            return self._get_obj_does_not_exist_redirect(request, self.opts, object_id)
        if not self.has_change_permission(request, challenge):
            raise PermissionDenied
        change_url = reverse(
            f"admin:{self.opts.app_label}_{self.opts.model_name}_change",
            args=[challenge.pk],
            current_app=self.admin_site.name,
        )
        response = self._confirm_opening(request, [challenge], cancel_url=change_url)
        return response or HttpResponseRedirect(change_url)

    def _confirm_opening(self, request, challenges, *, action="", cancel_url=""):
        """Open after a page listing, per draft, what is missing (then nothing can be
        opened) or what opening does; None when done or when there is nothing to do."""
        now = timezone.now()
        drafts = []
        for challenge in challenges:
            if challenge.is_draft:
                drafts.append(challenge)
            else:
                self.message_user(request, f"“{challenge}” is open already.", messages.INFO)
        if not drafts:
            return None
        checks = [(challenge, missing_for_opening(challenge, now=now)) for challenge in drafts]
        ready = [challenge for challenge, missing in checks if not missing]
        if request.method == "POST" and request.POST.get("post") == "yes" and ready:
            opened = 0
            for challenge in ready:
                try:
                    opened += open_challenge(challenge, user=request.user, now=now, via=VIA_ADMIN)
                except ValidationError as error:
                    self.message_user(
                        request,
                        f"“{challenge}” cannot open yet: {' '.join(error.messages)}",
                        messages.ERROR,
                    )
            if opened:
                self.message_user(
                    request,
                    f"Opened {opened} challenge(s): everyone can see them now.",
                    messages.SUCCESS,
                )
            return None
        context = {
            **self.admin_site.each_context(request),
            "title": "Open the challenge? Check what is missing first",
            "subtitle": None,
            "opts": self.opts,
            "checks": checks,
            "ready": ready,
            "action": action,
            "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
            "cancel_url": cancel_url
            or reverse(
                f"admin:{self.opts.app_label}_{self.opts.model_name}_changelist",
                current_app=self.admin_site.name,
            ),
            "media": self.media,
        }
        request.current_app = self.admin_site.name
        return TemplateResponse(
            request, "admin/challenges/challenge/opening_confirmation.html", context
        )
