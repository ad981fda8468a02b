"""The organisers' console: each challenge's admin page (ChallengeAdmin), which brings
its datasets, opening, publication, ranking options and exports together. It sits above
the apps it composes (README, "Layout"), so none of them imports it."""

from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.contrib.admin.utils import unquote
from django.contrib.auth.models import Group, User
from django.core.exceptions import PermissionDenied, ValidationError
from django.db.models import Q
from django.http import HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join

from challenge_site.accounts.services import admit_to_console
from challenge_site.challenges import policy
from challenge_site.challenges.admin_ranking import FIELDSET, RankingAdminMixin
from challenge_site.challenges.admin_scope import (
    ChallengeScopedAdmin,
    ScopedInlineMixin,
)
from challenge_site.challenges.clock import current_phase
from challenge_site.challenges.models import Challenge, format_utc, publication_refusal
from challenge_site.challenges.publication import exposure
from challenge_site.challenges.services import publish_results, withdraw_results
from datasets.admin import store_uploads
from datasets.forms import DatasetRankingForm
from datasets.models import Dataset
from datasets.services import ranking_loss_changed

from . import history
from .admin_console import ChallengeForm, console_links
from .admin_opening import OpeningAdminMixin

VIA_ADMIN = "admin"


class DatasetInline(ScopedInlineMixin, admin.TabularInline):
    parent_challenge_path = "pk"
    model = Dataset
    form = DatasetRankingForm
    extra = 0
    fields = (
        "name",
        "task",
        "position",
        "log_base",
        "ranking_loss",
        "upload",
        "input_dim",
        "n_train",
        "n_val",
        "n_test",
    )
    readonly_fields = ("input_dim", "n_train", "n_val", "n_test")
    show_change_link = True

    def has_delete_permission(self, request, obj=None):
        """No "Delete?" box here: a dataset is deleted from its own page ("Change", then
        "Delete"), through a confirmation that lists what goes with it (datasets.admin)."""
        return False

    verbose_name_plural = (
        "Datasets, in the site's order (position, then name). Files: upload here or on "
        "the dataset's own page, “Change”, which also holds the options of its task (such "
        "as a multiclass dataset's classes) and, while it may be deleted, “Delete”"
    )


@admin.register(Challenge)
class ChallengeAdmin(RankingAdminMixin, OpeningAdminMixin, ChallengeScopedAdmin):
    """Each organiser's console: their challenges only (superusers: all). Whoever may add
    challenges (superusers, or staff given the "add challenge" permission) starts a draft
    and becomes its organiser."""

    challenge_path = "pk"
    form = ChallengeForm
    list_display = (
        "title",
        "slug",
        "state",
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
    actions = ["open_challenges", "publish_results", "unpublish_results"]
    readonly_fields = ("state", "console", "publication", "history")
    # Plain multiple selects: the choices are the challenge's own organisers and groups (a
    # few), and filter_horizontal's widget names its search icon in a way screen readers
    # are not given (axe: aria-prohibited-attr).
    fieldsets = [
        (None, {"fields": ("slug", "title", "state", "console", "description", "rules")}),
        (
            "Organisers",
            {
                "fields": (
                    "organisers",
                    "add_organisers",
                    "confirm_new_organisers",
                    "organiser_groups",
                )
            },
        ),
        (
            "Registration and teams",
            {"fields": ("require_rules_acceptance", "require_approval", "max_team_size")},
        ),
        ("Dates (UTC)", {"fields": ("start", "test_start", "deadline")}),
        (
            "Release",
            {
                "fields": (
                    "test_inputs_release",
                    "test_targets_release",
                    "publication",
                    "publish_results_at",
                    "confirm_publication_time",
                )
            },
        ),
        (
            "Submission limits",
            {"fields": ("val_daily_limit", "test_daily_limit", "test_total_limit")},
        ),
        FIELDSET,
        ("History of results and target files", {"fields": ("history",)}),
    ]

    @admin.display(description="Phase")
    def phase(self, challenge):
        return current_phase(challenge, now=timezone.now()).label

    @admin.display(description="State")
    def state(self, challenge):
        if challenge.pk is None or challenge.is_draft:
            return "Draft: only its organisers see it; “Open challenge…” lists what is missing."
        return f"Open since {format_utc(challenge.opened_at)}"

    @admin.display(description="Run it")
    def console(self, challenge):
        """Everything an organiser does with the challenge, one click away."""
        if challenge.pk is None:
            return "Save the challenge first."
        return format_html_join(
            " · ", '<a href="{}">{}</a>', console_links(challenge, self.admin_site.name)
        )

    def has_add_permission(self, request):
        return policy.may_start_challenges(request.user)

    def has_module_permission(self, request):
        return super().has_module_permission(request) or self.has_add_permission(request)

    def has_view_permission(self, request, obj=None):
        if obj is None and self.has_add_permission(request):
            return True  # the list (of none yet) leads to "Add challenge"
        return super().has_view_permission(request, obj)

    def save_formset(self, request, form, formset, change):
        super().save_formset(request, form, formset, change)
        if formset.model is Dataset:  # the files uploaded on the challenge's page
            for dataset_form in formset.initial_forms:
                if dataset_form.instance.pk and "ranking_loss" in dataset_form.changed_data:
                    ranking_loss_changed(dataset=dataset_form.instance)
            for dataset_form in formset.forms:
                checked = getattr(dataset_form, "checked_files", None)
                if checked and dataset_form.instance.pk:
                    store_uploads(
                        self, request, dataset_form.instance, checked, via="challenge admin"
                    )

    def construct_change_message(self, request, form, formsets, add=False):
        """The history says what each change replaced (history.change_message)."""
        default = super().construct_change_message(request, form, formsets, add)
        return default if add else history.change_message(form, default)

    def get_form(self, request, obj=None, change=False, **kwargs):
        request.console_challenge = obj  # for the organisers' choices below
        return super().get_form(request, obj, change=change, **kwargs)

    def formfield_for_manytomany(self, db_field, request, **kwargs):
        """An organiser chooses among the challenge's organisers and groups and their own
        (others are added by user name), never among every account and group of the site."""
        if db_field.name in ("organisers", "organiser_groups") and not policy.is_superuser(
            request.user
        ):
            challenge = getattr(request, "console_challenge", None)
            mine = Q(organised_challenges=challenge) if challenge is not None else Q(pk__in=[])
            if db_field.name == "organisers":
                kwargs["queryset"] = User.objects.filter(mine | Q(pk=request.user.pk)).distinct()
            else:
                kwargs["queryset"] = Group.objects.filter(mine | Q(user=request.user)).distinct()
        return super().formfield_for_manytomany(db_field, request, **kwargs)

    def save_related(self, request, form, formsets, change):
        super().save_related(request, form, formsets, change)
        if not change:  # whoever starts a challenge organises it
            form.instance.organisers.add(request.user)
        for user in form.cleaned_data.get("add_organisers") or []:
            admit_to_console(user=user)
            form.instance.organisers.add(user)

    @admin.display(description="Results")
    def publication(self, challenge):
        """Publication is not a field of the form: the actions (or the buttons above)
        show what becomes public and ask first."""
        if challenge.pk is None:
            return "Not published; publish them from the challenge list after the deadline."
        if challenge.results_published:
            text = "Published"
            if challenge.results_revised_at:
                text += f"; revised on {format_utc(challenge.results_revised_at)}"
            return text + ". “Withdraw results…” above hides the test scores again."
        refusal = publication_refusal(challenge, now=timezone.now())
        scheduled = ""
        if challenge.publish_results_at:
            scheduled = f" Automatic publication on {format_utc(challenge.publish_results_at)}."
        if refusal:
            return f"Not published. {refusal}{scheduled}"
        return "Not published yet. “Publish results…” above shows what becomes public." + scheduled

    @admin.display(description="Recorded")
    def history(self, challenge):
        """Publications, withdrawals and replaced target files, newest first (read only)."""
        if challenge.pk is None:
            return "–"
        events = challenge.events.select_related("user")
        if not events:
            return "Nothing yet."
        rows = format_html_join(
            "",
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            ((format_utc(e.at), e.get_kind_display(), e.who, e.summary or "–") for e in events),
        )
        url = reverse(
            "admin:challenges_challengeevent_changelist", current_app=self.admin_site.name
        )
        return format_html(
            "<table><thead><tr><th>When</th><th>What</th><th>Who</th><th>Detail</th></tr>"
            '</thead><tbody>{}</tbody></table><p><a href="{}?challenge__id__exact={}">'
            "All events of this challenge</a></p>",
            rows,
            url,
            challenge.pk,
        )

    def get_urls(self):
        info = self.opts.app_label, self.opts.model_name
        return [
            *self.opening_urls(),
            path(
                "<path:object_id>/publish/",
                self.admin_site.admin_view(self.publish_view),
                name="{}_{}_publish".format(*info),
            ),
            path(
                "<path:object_id>/withdraw/",
                self.admin_site.admin_view(self.withdraw_view),
                name="{}_{}_withdraw".format(*info),
            ),
            *super().get_urls(),
        ]

    @admin.action(description="Publish results of the selected challenges…", permissions=["change"])
    def publish_results(self, request, queryset):
        return self._confirm(request, list(queryset), publish=True, action="publish_results")

    @admin.action(
        description="Withdraw (unpublish) results of the selected challenges…",
        permissions=["change"],
    )
    def unpublish_results(self, request, queryset):
        return self._confirm(request, list(queryset), publish=False, action="unpublish_results")

    def publish_view(self, request, object_id):
        return self._object_view(request, object_id, publish=True)

    def withdraw_view(self, request, object_id):
        return self._object_view(request, object_id, publish=False)

    def _object_view(self, request, object_id, *, publish: bool):
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
        response = self._confirm(request, [challenge], publish=publish, cancel_url=change_url)
        return response or HttpResponseRedirect(change_url)

    def _confirm(self, request, challenges, *, publish: bool, action="", cancel_url=""):
        """Publish or withdraw after a confirmation page listing, per challenge, what
        becomes public (or hidden again); None when done or when nothing can be done."""
        now = timezone.now()
        ready = []
        for challenge in challenges:
            if challenge.results_published == publish:
                state = "already published" if publish else "not published"
                self.message_user(
                    request, f"The results of “{challenge}” are {state}.", messages.INFO
                )
            elif publish and (refusal := publication_refusal(challenge, now=now)):
                self.message_user(
                    request,
                    f"Cannot publish the results of “{challenge}” yet: {refusal}",
                    messages.ERROR,
                )
            else:
                ready.append(challenge)
        if not ready:
            return None
        if request.method == "POST" and request.POST.get("post") == "yes":
            change = publish_results if publish else withdraw_results
            changed = 0
            for challenge in ready:
                try:
                    changed += change(
                        challenge=challenge, user=request.user, now=now, via=VIA_ADMIN
                    )
                except ValidationError as error:
                    self.message_user(
                        request,
                        f"Cannot publish the results of “{challenge}” yet: {error.messages[0]}",
                        messages.ERROR,
                    )
            done = "published" if publish else "withdrawn"
            self.message_user(
                request, f"Results {done} for {changed} challenge(s).", messages.SUCCESS
            )
            return None
        verb = "Publish" if publish else "Withdraw"
        context = {
            **self.admin_site.each_context(request),
            "title": f"{verb} results? Check what becomes {'public' if publish else 'hidden'}",
            "subtitle": None,
            "opts": self.opts,
            "publish": publish,
            "exposures": [exposure(challenge, now=now) for challenge in ready],
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
            request, "admin/challenges/challenge/publication_confirmation.html", context
        )
