from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db.models import Prefetch
from django.http import FileResponse, Http404, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.cache import get_conditional_response, patch_cache_control
from django.views.decorators.csrf import csrf_exempt, csrf_protect
from django.views.decorators.http import require_http_methods, require_safe

from challenge_site.access import get_visible_or_404
from challenge_site.challenges.clock import current_phase
from challenge_site.challenges.models import Challenge, Phase
from challenge_site.challenges.participation_views import refusal
from challenge_site.challenges.policy import (
    exact_scores_visible,
    selective_visible,
    visible_challenges,
)

from . import late_joiners, multiclass_plots, policy, selective_plots, services, withdrawal
from .display import participant_name
from .final_views import final_for
from .forms import MySubmissionsFilter, SubmissionForm
from .limits import LimitReached, allowances
from .models import Score, SplitResult, Status
from .plots import cached_svg
from .uploads import limit_upload_size
from .visibility import score_table

PAGE_SIZE = 50


@csrf_exempt  # checked by csrf_protect in _submit, once the upload size limit is in place
@login_required
@require_http_methods(["GET", "POST"])
def submit(request, slug):
    limit_upload_size(request)
    return _submit(request, slug)


@csrf_protect
def _submit(request, slug):
    now = timezone.now()
    challenge = get_visible_or_404(visible_challenges, user=request.user, now=now, slug=slug)
    refused = refusal(request, challenge, back=request.path)
    if refused is not None:
        return refused
    phase = current_phase(challenge, now=now)
    form = SubmissionForm(
        request.POST if request.method == "POST" else None,
        request.FILES if request.method == "POST" else None,
        challenge=challenge,
        request=request,
    )
    status = 200
    if request.method == "POST":
        if form.is_valid():
            data = form.cleaned_data
            try:
                submission = services.submit(
                    user=request.user,
                    challenge=challenge,
                    dataset_name=data["dataset"] or None,
                    method=data["method"],
                    description=data["description"],
                    authors=data["authors"],
                    upload=data["file"],
                    now=now,
                )
            except services.Rejected as rejected:
                for field, problems in rejected.errors.items():
                    form.add_error(None if field == "__all__" else field, problems)
            except LimitReached as limit:
                form.add_error(None, limit.message)
            else:
                messages.success(request, f"Submission #{submission.pk} received.")
                return redirect("submission_detail", pk=submission.pk)
        status = 400
    context = {
        "challenge": challenge,
        "phase": phase,
        "open": phase != Phase.UPCOMING,
        "form": form,
        "allowances": allowances(user=request.user, challenge=challenge, now=now),
        "max_upload_bytes": settings.SUBMISSION_MAX_UPLOAD_BYTES,
    }
    return render(request, "submissions/submit.html", context, status=status)


@require_safe
def submission_detail(request, pk):
    now = timezone.now()
    submission = get_visible_or_404(policy.visible_submissions, user=request.user, now=now, pk=pk)
    table = score_table(submission, user=request.user)
    context = {
        "submission": submission,
        "show_scores": submission.status == Status.SCORED or any(e.cells for e in table),
        "challenge": submission.dataset.challenge,
        "dataset": submission.dataset,
        "participant": participant_name(submission),
        "private": policy.can_see_private(submission, user=request.user),
        "table": table,
        "final": final_for(submission, user=request.user, now=now),
        # The owner's withdraw button, while withdrawing is possible.
        "withdrawal": policy.owns(submission, user=request.user)
        and withdrawal.refusal(submission, now=now) is None,
        "zip_retention_days": settings.SUBMISSION_INVALID_ZIP_RETENTION_DAYS,
    }
    return render(request, "submissions/submission_detail.html", context)


@require_safe
def submission_plot(request, pk, split, kind=""):
    """The split's reliability diagram or PIT histogram, or with ``kind`` its picture of
    that plot-data key (multiclass_plots.kinds, selective_plots.kinds), while its scores
    are visible."""
    now = timezone.now()
    submission = get_visible_or_404(policy.visible_submissions, user=request.user, now=now, pk=pk)
    if not exact_scores_visible(
        submission.dataset.challenge, split, user=request.user, now=now
    ) or late_joiners.withheld(submission, split, user=request.user):
        raise Http404("These scores are not published yet.")
    result = SplitResult.objects.filter(submission=submission, split=split).first()
    if result is None or submission.finished_at is None:
        raise Http404("No plot for this split.")
    named = multiclass_plots.kinds(result.plot_data) + selective_plots.kinds(result.plot_data)
    if kind and kind not in named:
        raise Http404("No such picture for this split.")
    if kind in selective_plots.kinds(result.plot_data) and not selective_visible(
        submission.dataset.challenge, split, user=request.user, now=now
    ):
        raise Http404("No such picture for this split.")
    if not kind and not ({"reliability", "pit"} & result.plot_data.keys()):
        raise Http404("This split's pictures have names (multiclass_plots.kinds).")
    version = f"{submission.finished_at.timestamp():.6f}"
    etag = '"{}"'.format("-".join(p for p in (str(submission.pk), split, kind, version) if p))
    response = get_conditional_response(request, etag=etag)
    if response is None:
        name = submission.dataset.name
        if kind in selective_plots.KINDS:
            svg = selective_plots.cached_svg(result, kind=kind, dataset_name=name, version=version)
        elif kind:
            svg = multiclass_plots.cached_svg(result, kind=kind, dataset_name=name, version=version)
        else:
            svg = cached_svg(result, dataset_name=name, version=version)
        response = HttpResponse(svg, content_type="image/svg+xml")
    response["ETag"] = etag
    # Publication can hide or reveal test plots: browsers must ask again every time.
    patch_cache_control(response, private=True, no_cache=True)
    return response


@require_safe
def submission_file(request, pk):
    """The uploaded zip: its owner and staff only; a 404 for everyone else."""
    now = timezone.now()
    submission = get_visible_or_404(policy.visible_submissions, user=request.user, now=now, pk=pk)
    if not policy.can_see_private(submission, user=request.user) or not submission.file:
        raise Http404("No such file.")
    response = FileResponse(
        submission.file.open("rb"),
        as_attachment=True,
        filename=f"submission-{submission.pk}.zip",
        content_type="application/zip",
    )
    patch_cache_control(response, private=True, no_store=True)
    return response


@login_required
@require_safe
def my_submissions(request):
    """The user's entries and their teams', newest first, with filters (GET)."""
    owned = policy.owned_submissions(request.user)
    challenges = (
        Challenge.objects.filter(datasets__submissions__in=owned)
        .distinct()
        .order_by("title")
        .values_list("slug", "title")
    )
    filters = MySubmissionsFilter(request.GET or None, challenges=list(challenges))
    submissions = (
        filters.apply(owned)
        .select_related("dataset__challenge", "team", "user")
        .prefetch_related(
            Prefetch(
                "scores",
                queryset=Score.objects.only(
                    "submission",
                    "split",
                    "loss",
                    "value",
                    "ladder_value",
                    "ladder_precision",
                    "ladder_accepted",
                ),
            ),
            Prefetch("split_results", queryset=SplitResult.objects.defer("plot_data")),
        )
        .order_by("-created", "-id")
    )
    page = Paginator(submissions, PAGE_SIZE).get_page(request.GET.get("page"))
    rows = [(s, score_table(s, user=request.user)) for s in page.object_list]
    query = request.GET.copy()
    query.pop("page", None)
    context = {
        "page": page,
        "rows": rows,
        "filters": filters,
        "filtered": filters.is_bound and filters.is_valid() and any(filters.cleaned_data.values()),
        "query": query.urlencode(),
    }
    status = 400 if filters.is_bound and not filters.is_valid() else 200
    return render(request, "submissions/my_submissions.html", context, status=status)
