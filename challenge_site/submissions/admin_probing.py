"""The probing flags in the submissions console (challenge_site.submissions.probing): a
column (each flag with its evidence: the counts and statistics behind it), a list filter
and their explanation above the list, and the final-ranking and probing fields
(the stored statistics) of an entry's page. The column's flags are computed for the whole page of
the list with one call of ``probing.flags`` (one query), not a query per row."""

from django.contrib import admin
from django.utils.html import format_html_join
from django.utils.safestring import mark_safe

from . import probing

# The change page's read-only fields (a fieldset of SubmissionAdmin).
FIELDSET = (
    "Final ranking and probing (set when the entry is scored and its participant chooses)",
    {
        "fields": (
            ("final", "in_final_ranking"),
            "probing_flags",
            ("rows_off_mode", "change_share", "similar_run", "near_previous"),
            ("chance_z", "max_corr", "random_count", "combined_corr", "burst"),
            "predictions_sha256",
        )
    },
)
READONLY_FIELDS = (
    "final",
    "in_final_ranking",
    "probing_flags",
    "rows_off_mode",
    "change_share",
    "similar_run",
    "near_previous",
    "chance_z",
    "max_corr",
    "random_count",
    "combined_corr",
    "burst",
    "predictions_sha256",
)


class ProbingFlagFilter(admin.SimpleListFilter):
    """The entries with one of the probing flags (``?probing=CODE``)."""

    title = "Probing flag"
    parameter_name = "probing"

    def lookups(self, request, model_admin):
        return [(code, label) for code, (label, _) in probing.FLAGS.items()]

    def queryset(self, request, queryset):
        value = self.value()
        if value is None:
            return queryset
        if value not in probing.FLAGS:
            return queryset.none()
        return queryset.filter(probing.flagged_filter(value))


def explanations() -> list[tuple[str, str]]:
    """(label, explanation) of every flag, for the text above the list."""
    return [(label, explanation) for label, explanation in probing.FLAGS.values()]


class ProbingAdminMixin:
    """For SubmissionAdmin: the "Probing" column, filled for the page's rows at once."""

    def get_changelist_instance(self, request):
        changelist = super().get_changelist_instance(request)
        rows = changelist.result_list  # evaluated here once; the template reuses the rows
        found = probing.flags(rows)
        for submission in rows:
            submission.probing_found = found.get(submission.pk, [])
        return changelist

    def changelist_view(self, request, extra_context=None):
        extra_context = {"probing_explanations": explanations(), **(extra_context or {})}
        return super().changelist_view(request, extra_context)

    @admin.display(description="Probing")
    def probing_flags(self, submission):
        found = getattr(submission, "probing_found", None)
        if found is None:  # an entry's page, or a row the list did not prepare
            found = probing.flags([submission]).get(submission.pk, []) if submission.pk else []
        if not found:
            return "–"
        # Each flag's label (its explanation on hover) and this entry's evidence.
        return format_html_join(
            mark_safe("<br>"),
            '<span class="probing-flag" title="{}">{}</span> '
            '<small class="probing-evidence">({})</small>',
            ((flag.explanation, flag.label, flag.evidence) for flag in found),
        )
