from django.contrib import admin, messages
from django.utils import timezone

import scoring
from challenge_site.challenges import policy
from challenge_site.challenges.admin_scope import (
    ChallengeScopedAdmin,
    OrganisedChallengeFilter,
    ScopedInlineMixin,
)

from . import deletion
from .forms import DatasetRankingForm
from .models import Dataset, DatasetFile, Kind
from .services import (
    delete_file,
    levels_changed,
    losses_changed,
    ranking_loss_changed,
    save_files,
)


class DatasetFileInline(ScopedInlineMixin, admin.TabularInline):
    model = DatasetFile
    extra = 0
    max_num = 0  # files arrive through the upload field, checked by the scoring parser
    fields = ("filename", "storage_alias", "rows", "columns", "size", "sha256", "uploaded")
    readonly_fields = fields
    verbose_name_plural = "Stored files (tick Delete to remove one)"


def store_uploads(model_admin, request, dataset: Dataset, checked, *, via: str) -> None:
    """Store the files a form checked (DatasetUploadForm) and say what was stored, and
    what replaced targets do to published results."""
    changed = save_files(dataset, checked, now=timezone.now(), user=request.user, via=via)
    if changed:
        names = ", ".join(c.filename for c in changed)
        model_admin.message_user(request, f"Stored {names}.", messages.SUCCESS)
    dataset.challenge.refresh_from_db(fields=["results_published"])
    if dataset.challenge.results_published and any(c.kind == Kind.TARGETS for c in changed):
        model_admin.message_user(
            request,
            f"The results of “{dataset.challenge}” are published: the scores are computed "
            "again with the new targets, and the challenge's pages say the results were "
            "revised today.",
            messages.WARNING,
        )


@admin.register(Dataset)
class DatasetAdmin(ChallengeScopedAdmin):
    form = DatasetRankingForm
    list_display = (
        "name",
        "challenge",
        "task",
        "input_dim",
        "n_train",
        "n_val",
        "n_test",
        "ranking_loss",
    )
    list_filter = (OrganisedChallengeFilter, "task")
    list_select_related = ("challenge",)
    search_fields = ("name", "challenge__slug", "challenge__title")
    readonly_fields = ("input_dim", "n_train", "n_val", "n_test")
    inlines = [DatasetFileInline]

    def get_fieldsets(self, request, obj=None):
        """The settings of the dataset's task only (its TaskSpec.settings): a
        classification dataset has no samples option, quantile gap or nMSE normaliser, a
        regression one no classes. (A new dataset shows every task's, a section each,
        until its task is saved; a change of task posted shows the new task's too, so
        that its settings can be checked and given: DatasetForm.shown_settings.)"""
        fieldsets = [
            (
                None,
                {
                    "fields": (
                        "challenge",
                        "name",
                        "task",
                        "description",
                        "position",
                        "shown_settings",
                    )
                },
            ),
            ("Scoring", {"fields": ("log_base", "ranking_loss", "losses")}),
        ]
        specs = list(scoring.TASKS.values()) if obj is None else [obj.task_spec]
        posted = request.POST.get("task") if request.method == "POST" else None
        if obj is not None and posted in scoring.TASKS and posted != obj.task:
            specs.append(scoring.get_task(posted))
        shown = set()
        for spec in specs:
            fields = tuple(name for name in spec.settings if name not in shown)
            shown.update(fields)
            if fields:
                only = f"Only for {spec.label.lower()} datasets." if obj is None else ""
                fieldsets.append((f"{spec.label} options", {"fields": fields, "description": only}))
        fieldsets.append(
            ("Files", {"fields": ("upload", "input_dim", "n_train", "n_val", "n_test")})
        )
        return fieldsets

    def has_delete_permission(self, request, obj=None):
        if policy.is_superuser(request.user):
            return True
        return obj is not None and policy.may_delete_dataset(request.user, obj.challenge)

    def get_deleted_objects(self, objs, request):
        """The confirmation's list of what is lost, counted (deletion.lost), rather than
        Django's walk over every related row (a page per score of a large board)."""
        return deletion.lost(objs), deletion.counts(objs), set(), []

    def save_model(self, request, obj, form, change):
        super().save_model(request, obj, form, change)
        if change and "ranking_loss" in form.changed_data:
            ranking_loss_changed(dataset=obj)  # the Ladder's shown scores, the final entries
        if change and "losses" in form.changed_data:
            losses_changed(dataset=obj)  # the boards' columns; entries lacking one rescored
        if change and "quantile_levels" in form.changed_data:
            levels_changed(dataset=obj)  # wis and coverages change: every entry rescored
        store_uploads(self, request, obj, form.checked_files, via="dataset admin")

    def save_formset(self, request, form, formset, change):
        if formset.model is not DatasetFile:
            return super().save_formset(request, form, formset, change)
        formset.save(commit=False)
        for datafile in formset.deleted_objects:
            delete_file(datafile, user=request.user, via="dataset admin", now=timezone.now())
            self.message_user(request, f"Deleted {datafile.filename}.", messages.SUCCESS)
