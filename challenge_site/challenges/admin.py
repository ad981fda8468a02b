from django.contrib import admin, messages
from django.utils import timezone

from datasets.forms import DatasetForm
from datasets.models import Dataset

from .models import Challenge
from .services import current_phase, set_results_published


class DatasetInline(admin.TabularInline):
    model = Dataset
    form = DatasetForm
    extra = 0
    fields = (
        "name",
        "task",
        "position",
        "log_base",
        "allow_samples",
        "min_quantile_gap",
        "nmse_normaliser",
        "ranking_loss",
        "input_dim",
        "n_train",
        "n_val",
        "n_test",
    )
    readonly_fields = ("input_dim", "n_train", "n_val", "n_test")
    show_change_link = True


@admin.register(Challenge)
class ChallengeAdmin(admin.ModelAdmin):
    list_display = (
        "title",
        "slug",
        "phase",
        "start",
        "test_start",
        "deadline",
        "results_published",
    )
    list_filter = ("results_published",)
    search_fields = ("slug", "title")
    prepopulated_fields = {"slug": ("title",)}
    inlines = [DatasetInline]
    actions = ["publish_results", "unpublish_results"]
    fieldsets = [
        (None, {"fields": ("slug", "title", "description")}),
        ("Dates (UTC)", {"fields": ("start", "test_start", "deadline")}),
        (
            "Release",
            {"fields": ("test_inputs_release", "test_targets_release", "results_published")},
        ),
        (
            "Submission limits",
            {"fields": ("val_daily_limit", "test_daily_limit", "test_total_limit")},
        ),
    ]

    @admin.display(description="Phase")
    def phase(self, challenge):
        return current_phase(challenge, now=timezone.now()).label

    @admin.action(description="Publish results of the selected challenges")
    def publish_results(self, request, queryset):
        changed = set_results_published(queryset, published=True)
        self.message_user(
            request, f"Results published for {changed} challenge(s).", messages.SUCCESS
        )

    @admin.action(description="Withdraw (unpublish) results of the selected challenges")
    def unpublish_results(self, request, queryset):
        changed = set_results_published(queryset, published=False)
        self.message_user(
            request, f"Results withdrawn for {changed} challenge(s).", messages.SUCCESS
        )
