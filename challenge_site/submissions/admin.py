"""The submissions console: every submission of the challenges a user organises (all for
superusers), with filters, the moderation actions (hide, disqualify, restore, each after a
page asking why) and rescoring; every moderation action is recorded (ModerationEvent).
The probing flags (column, filter, explanation) are in admin_probing."""

from django import forms
from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.contrib.admin.utils import unquote
from django.core.exceptions import ValidationError
from django.db.models import TextField
from django.db.models.functions import Cast
from django.http import Http404, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from django.utils.text import Truncator

from challenge_site.challenges import policy
from challenge_site.challenges.admin_scope import (
    ChallengeScopedAdmin,
    OrganisedChallengeFilter,
    ScopedInlineMixin,
)
from datasets.models import Dataset, Split

from . import moderation
from .admin_probing import FIELDSET, READONLY_FIELDS, ProbingAdminMixin, ProbingFlagFilter
from .admin_scores import RankingScoresAdminMixin
from .display import participant_name
from .models import (
    REASON_REQUIRED,
    Moderation,
    ModerationAction,
    ModerationEvent,
    Score,
    SplitResult,
    Submission,
)

# --- Inlines (read only) --------------------------------------------------------------


class ReadOnlyScopedInline(ScopedInlineMixin, admin.TabularInline):
    """Rows shown to the organisers of the submission's challenge, never edited here."""

    parent_challenge_path = "dataset__challenge"
    extra = 0
    max_num = 0
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class ScoreInline(ReadOnlyScopedInline):
    model = Score
    fields = ("split", "loss", "value")
    readonly_fields = fields
    ordering = ("split", "loss")


class SplitResultInline(ReadOnlyScopedInline):
    model = SplitResult
    fields = ("split", "filename", "rows", "non_probabilistic")
    readonly_fields = fields


class ModerationEventInline(ReadOnlyScopedInline):
    model = ModerationEvent
    verbose_name = "moderation event"
    verbose_name_plural = "Moderation history (read only; the actions above record it)"
    fields = ("at", "action", "reason", "who", "previous")
    readonly_fields = fields
    ordering = ("-at", "-id")

    @admin.display(description="Who")
    def who(self, event):
        return event.who


# --- Filters --------------------------------------------------------------------------


class ChallengeFilter(OrganisedChallengeFilter):
    challenge_path = "dataset__challenge"


class DatasetFilter(admin.SimpleListFilter):
    """The datasets of the challenges the user organises (of the chosen challenge, if one
    is chosen): a plain filter on the foreign key would name every dataset of the site."""

    title = "dataset"
    parameter_name = "dataset"

    def lookups(self, request, model_admin):
        datasets = Dataset.objects.select_related("challenge").order_by(
            "challenge__title", "position", "name"
        )
        if not policy.is_superuser(request.user):
            datasets = datasets.filter(challenge__in=policy.organised_ids(request.user))
        chosen = request.GET.get(ChallengeFilter.parameter_name)
        if chosen and chosen.isdigit():
            datasets = datasets.filter(challenge_id=int(chosen))
        several = len({d.challenge_id for d in datasets}) > 1
        return [(d.pk, f"{d.challenge.slug} · {d.name}" if several else d.name) for d in datasets]

    def queryset(self, request, queryset):
        if self.value() is None:
            return queryset
        return queryset.filter(dataset__pk=self.value())


class SplitFilter(admin.SimpleListFilter):
    """Submissions holding predictions for a split (``Submission.splits``, a JSON list)."""

    title = "split held"
    parameter_name = "split"

    def lookups(self, request, model_admin):
        return Split.choices

    def queryset(self, request, queryset):
        value = self.value()
        if value is None:
            return queryset
        if value not in Split.values:
            return queryset.none()
        # JSON containment (``splits__contains``) is not available on SQLite: match the
        # quoted name in the list's text instead; split names do not contain one another.
        return queryset.alias(splits_text=Cast("splits", TextField())).filter(
            splits_text__contains=f'"{value}"'
        )


class ParticipantFilter(admin.SimpleListFilter):
    """One participant's submissions (``?participant=USER_ID``, the link of a participant's
    name in the list); shown only while chosen: a list of every participant would be far
    too long, and the search box finds names."""

    title = "participant"
    parameter_name = "participant"

    def lookups(self, request, model_admin):
        value = self.value()
        if value is None:
            return []
        name = None
        if value.isdigit():
            name = (
                model_admin.get_queryset(request)
                .filter(user_id=int(value))
                .values_list("user__username", flat=True)
                .first()
            )
        # Unknown ids are listed too, so that the filter applies (and finds nothing).
        return [(value, name or f"user #{value} (no submission here)")]

    def queryset(self, request, queryset):
        value = self.value()
        if value is None:
            return queryset
        if not value.isdigit():
            return queryset.none()
        return queryset.filter(user_id=int(value))


# --- The moderation page --------------------------------------------------------------


class ReasonForm(forms.Form):
    reason = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 4, "cols": 80}),
        required=False,
        max_length=moderation.REASON_MAX_LENGTH,
        strip=True,
    )


ACTION_TEXT = {
    ModerationAction.HIDE: {
        "title": "Hide from the leaderboards",
        "verb": "Hide",
        "done": "Hid",
        "explain": "Hidden entries disappear from leaderboards, results, plots and exports. "
        "Their pages are no longer public: only their owners (who read the reason there) "
        "and the organisers see them.",
        "reason": "Reason (required): shown to the entry's owner on its page.",
    },
    ModerationAction.DISQUALIFY: {
        "title": "Disqualify",
        "verb": "Disqualify",
        "done": "Disqualified",
        "explain": "Disqualified entries are not ranked: they disappear from leaderboards, "
        "results, plots and exports. Their pages stay public and say "
        "“Disqualified: <reason>”.",
        "reason": "Reason (required): shown publicly on the entry's page.",
    },
    ModerationAction.RESTORE: {
        "title": "Restore",
        "verb": "Restore",
        "done": "Restored",
        "explain": "Restored entries are listed again (once scored) and their pages no longer "
        "show a reason.",
        "reason": "Reason (optional): recorded in the moderation history only.",
    },
}


def _entries(count: int) -> str:
    return f"{count} entr{'y' if count == 1 else 'ies'}"


# --- Submissions ----------------------------------------------------------------------


@admin.register(Submission)
class SubmissionAdmin(RankingScoresAdminMixin, ProbingAdminMixin, ChallengeScopedAdmin):
    """Each organiser's submissions console: the submissions of their challenges only."""

    challenge_path = "dataset__challenge"
    list_display = (
        "id",
        "challenge_name",
        "dataset_name",
        "participant",
        "method",
        "held_splits",
        "status",
        *RankingScoresAdminMixin.RANKING_COLUMNS,
        "moderation_state",
        "phase",
        "probing_flags",
        "created",
    )
    list_display_links = ("id", "method")
    list_filter = (
        ChallengeFilter,
        DatasetFilter,
        "phase",
        SplitFilter,
        "status",
        "moderation",
        "is_baseline",
        "final",
        ProbingFlagFilter,
        ParticipantFilter,
    )
    list_select_related = ("dataset__challenge", "user__profile", "team")
    search_fields = (
        "method",
        "authors",
        "user__username",
        "user__profile__display_name",
        "dataset__name",
    )
    search_help_text = "Method, authors, participant (user or display name), dataset."
    date_hierarchy = "created"
    actions = ["hide_selected", "disqualify_selected", "restore_selected", "rescore_selected"]
    inlines = [SplitResultInline, ScoreInline, ModerationEventInline]
    fieldsets = [
        (
            None,
            {
                "fields": (
                    ("user", "dataset", "is_baseline"),
                    "method",
                    "authors",
                    "description",
                    ("created", "phase", "mark"),
                    ("file", "original_filename", "file_size", "splits", "file_deleted_at"),
                    ("status", "attempts", "task_id"),
                    ("queued_at", "started_at", "finished_at"),
                    "error_report",
                    "failure",
                    "failure_cause",
                )
            },
        ),
        (
            "Moderation (changed by the actions above, which record who, when and why)",
            {"fields": (("moderation", "moderated_at"), "moderation_reason")},
        ),
        FIELDSET,
    ]
    readonly_fields = (
        "user",
        "dataset",
        "is_baseline",
        "created",
        "phase",
        "mark",
        "file",
        "original_filename",
        "file_size",
        "splits",
        "status",
        "attempts",
        "task_id",
        "queued_at",
        "started_at",
        "finished_at",
        "error_report",
        "failure",
        "failure_cause",
        "file_deleted_at",
        "moderation",
        "moderated_at",
        "moderation_reason",
        *READONLY_FIELDS,
    )

    def has_add_permission(self, request):
        return False  # submissions arrive through the upload page and the API

    # --- Columns ---

    @admin.display(description="Challenge", ordering="dataset__challenge__slug")
    def challenge_name(self, submission):
        return submission.dataset.challenge.slug

    @admin.display(description="Dataset", ordering="dataset__name")
    def dataset_name(self, submission):
        return submission.dataset.name

    @admin.display(description="Participant", ordering="user__username")
    def participant(self, submission):
        if submission.is_baseline:
            return "baseline"
        name = submission.user.get_username()
        label = participant_name(submission)
        if label != name:
            label = f"{label} ({name})"
        return format_html(
            '<a href="?{}={}" title="Every submission of {}">{}</a>',
            ParticipantFilter.parameter_name,
            submission.user_id,
            name,
            label,
        )

    @admin.display(description="Splits")
    def held_splits(self, submission):
        return ", ".join(submission.splits) or "–"

    @admin.display(description="Moderation", ordering="moderation")
    def moderation_state(self, submission):
        if submission.moderation == Moderation.NONE:
            return "–"
        return format_html(
            "<strong>{}</strong>: {}",
            submission.get_moderation_display(),
            Truncator(submission.moderation_reason).chars(80),
        )

    @admin.display(description="Errors")
    def error_report(self, submission):
        if not submission.errors:
            return "–"
        return format_html(
            "<pre>{}</pre>", format_html_join("\n", "{}", ((line,) for line in submission.errors))
        )

    @admin.display(description="Cause of the failure (staff only)")
    def failure_cause(self, submission):
        if not submission.failure_detail:
            return "–"
        return format_html("<pre>{}</pre>", submission.failure_detail)

    # --- Actions ---

    @admin.action(description="Rescore the selected submissions", permissions=["change"])
    def rescore_selected(self, request, queryset):
        count = moderation.rescore(submissions=queryset, user=request.user, now=timezone.now())
        self.message_user(request, f"Queued {count} submission(s) for rescoring.", messages.SUCCESS)

    @admin.action(
        description="Hide the selected entries from the leaderboards…", permissions=["change"]
    )
    def hide_selected(self, request, queryset):
        return self._moderation_page(
            request, queryset, ModerationAction.HIDE, admin_action="hide_selected"
        )

    @admin.action(description="Disqualify the selected entries…", permissions=["change"])
    def disqualify_selected(self, request, queryset):
        return self._moderation_page(
            request, queryset, ModerationAction.DISQUALIFY, admin_action="disqualify_selected"
        )

    @admin.action(
        description="Restore the selected hidden or disqualified entries…", permissions=["change"]
    )
    def restore_selected(self, request, queryset):
        return self._moderation_page(
            request, queryset, ModerationAction.RESTORE, admin_action="restore_selected"
        )

    # --- The buttons of a submission's page ---

    def get_urls(self):
        info = self.opts.app_label, self.opts.model_name
        return [
            path(
                "<path:object_id>/moderate/<str:action>/",
                self.admin_site.admin_view(self.moderate_view),
                name="{}_{}_moderate".format(*info),
            ),
            *super().get_urls(),
        ]

    def moderate_view(self, request, object_id, action):
        if action not in moderation.OUTCOME:
            raise Http404("No such moderation action.")
        submission = self.get_object(request, unquote(object_id))
        if submission is None or not self.has_change_permission(request, submission):
            return self._get_obj_does_not_exist_redirect(request, self.opts, object_id)
        change_url = reverse(
            f"admin:{self.opts.app_label}_{self.opts.model_name}_change",
            args=[submission.pk],
            current_app=self.admin_site.name,
        )
        queryset = self.get_queryset(request).filter(pk=submission.pk)
        response = self._moderation_page(
            request, queryset, ModerationAction(action), cancel_url=change_url
        )
        return response or HttpResponseRedirect(change_url)

    def change_view(self, request, object_id, form_url="", extra_context=None):
        extra_context = extra_context or {}
        submission = self.get_object(request, unquote(object_id))
        if (
            submission is not None
            and not submission.is_baseline
            and self.has_change_permission(request, submission)
        ):
            extra_context["moderation_links"] = [
                {
                    "label": f"{ACTION_TEXT[action]['title']}…",
                    "url": reverse(
                        f"admin:{self.opts.app_label}_{self.opts.model_name}_moderate",
                        args=[submission.pk, action.value],
                        current_app=self.admin_site.name,
                    ),
                }
                for action, outcome in moderation.OUTCOME.items()
                if outcome != submission.moderation
            ]
        return super().change_view(request, object_id, form_url, extra_context)

    def _moderation_page(self, request, queryset, action, *, admin_action="", cancel_url=""):
        """Ask for the reason, then moderate; None when done (or nothing to do)."""
        submissions = list(queryset.select_related("dataset__challenge", "user").order_by("pk"))
        entries = [s for s in submissions if not s.is_baseline]
        baselines = [s for s in submissions if s.is_baseline]
        text = ACTION_TEXT[action]
        if not entries:
            self.message_user(
                request, "Baselines are never moderated: nothing to do.", messages.WARNING
            )
            return None
        form = ReasonForm(request.POST if request.POST.get("post") == "yes" else None)
        if form.is_bound and form.is_valid():
            try:
                reason = moderation.clean_reason(action=action, reason=form.cleaned_data["reason"])
            except ValidationError as error:
                form.add_error("reason", error)
            else:
                outcome = moderation.moderate(
                    submissions=queryset.filter(pk__in=[s.pk for s in entries]),
                    action=action,
                    reason=reason,
                    user=request.user,
                    now=timezone.now(),
                )
                self._report(request, outcome, text)
                return None
        context = {
            **self.admin_site.each_context(request),
            "title": f"{text['title']} {_entries(len(entries))}?",
            "subtitle": None,
            "opts": self.opts,
            "text": text,
            "reason_required": action in REASON_REQUIRED,
            "form": form,
            "entries": entries,
            "baselines": baselines,
            "action": admin_action,
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
            request, "admin/submissions/submission/moderation_confirmation.html", context
        )

    def _report(self, request, outcome, text) -> None:
        if outcome.changed:
            ids = ", ".join(f"#{s.pk}" for s in outcome.changed)
            self.message_user(
                request,
                f"{text['done']} {_entries(len(outcome.changed))}: {ids}.",
                messages.SUCCESS,
            )
        if outcome.unchanged:
            ids = ", ".join(f"#{s.pk}" for s in outcome.unchanged)
            self.message_user(request, f"Unchanged (already so): {ids}.", messages.INFO)
        if outcome.baselines:
            ids = ", ".join(f"#{s.pk}" for s in outcome.baselines)
            self.message_user(
                request, f"Baselines are never moderated: {ids} left as they are.", messages.INFO
            )


# --- Moderation events ----------------------------------------------------------------


class EventChallengeFilter(OrganisedChallengeFilter):
    challenge_path = "submission__dataset__challenge"


@admin.register(ModerationEvent)
class ModerationEventAdmin(ChallengeScopedAdmin):
    """Read only: events are written by the moderation actions."""

    challenge_path = "submission__dataset__challenge"
    list_display = ("at", "entry", "challenge_name", "action", "reason", "who", "previous")
    list_filter = (EventChallengeFilter, "action")
    list_select_related = ("submission__dataset__challenge",)
    search_fields = ("submission__method", "submission__user__username", "username", "reason")
    date_hierarchy = "at"
    fields = ("submission", "action", "reason", "previous", "at", "user", "username")
    readonly_fields = fields

    @admin.display(description="Entry", ordering="submission")
    def entry(self, event):
        url = reverse(
            "admin:submissions_submission_change",
            args=[event.submission_id],
            current_app=self.admin_site.name,
        )
        return format_html(
            '<a href="{}">#{} {}</a>', url, event.submission_id, event.submission.method
        )

    @admin.display(description="Challenge", ordering="submission__dataset__challenge__slug")
    def challenge_name(self, event):
        dataset = event.submission.dataset
        return f"{dataset.challenge.slug} · {dataset.name}"

    @admin.display(description="Who", ordering="username")
    def who(self, event):
        return event.who

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
