from django.contrib import admin, messages
from django.utils.html import format_html, format_html_join

from . import services
from .models import Score, SplitResult, Submission


class ScoreInline(admin.TabularInline):
    model = Score
    fields = ("split", "loss", "value")
    readonly_fields = fields
    extra = 0
    max_num = 0
    can_delete = False
    ordering = ("split", "loss")


class SplitResultInline(admin.TabularInline):
    model = SplitResult
    fields = ("split", "filename", "rows", "non_probabilistic")
    readonly_fields = fields
    extra = 0
    max_num = 0
    can_delete = False


@admin.register(Submission)
class SubmissionAdmin(admin.ModelAdmin):
    list_display = (
        "id",
        "dataset",
        "user",
        "method",
        "status",
        "mark",
        "phase",
        "created",
        "attempts",
    )
    list_filter = ("status", "is_baseline", "phase", "dataset__challenge")
    list_select_related = ("dataset__challenge", "user")
    search_fields = ("method", "authors", "user__username", "dataset__name")
    date_hierarchy = "created"
    actions = ["rescore_selected"]
    inlines = [SplitResultInline, ScoreInline]
    fields = (
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
    )

    def has_add_permission(self, request):
        return False  # submissions arrive through the upload page and the API

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

    @admin.action(description="Rescore the selected submissions")
    def rescore_selected(self, request, queryset):
        count = services.rescore(submissions=queryset)
        self.message_user(request, f"Queued {count} submission(s) for rescoring.", messages.SUCCESS)
