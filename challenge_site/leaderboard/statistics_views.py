"""The statistics page of a challenge and its drawings: for its organisers at any time,
public once the results are published (``statistics.statistics_visible``).

Everyone else gets, for a draft, the 404 of any hidden challenge; for an open challenge
before publication, the page says when it becomes public (403) and shows no number of
the challenge; its drawings answer 403 with the same sentence.
"""

from django.http import Http404, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone
from django.utils.cache import get_conditional_response, patch_cache_control
from django.views.decorators.http import require_safe

from challenge_site.access import get_visible_or_404
from challenge_site.challenges.policy import visible_challenges

from . import statistics, statistics_snapshots
from .statistics_snapshots import PLOTS

# Seconds a client waits before asking again for a drawing not computed yet.
RETRY_AFTER = 5


def _private(response: HttpResponse) -> HttpResponse:
    # Publication can be withdrawn and every upload changes the numbers: never reuse a
    # stored copy unchecked.
    patch_cache_control(response, private=True, no_cache=True)
    return response


@require_safe
def challenge_statistics(request, slug):
    """Valid submissions per day, per dataset and phase, the uploads' outcomes and the
    time to a score: each a drawing with its numbers in a table under it, as of the
    latest snapshot a worker computed (statistics_snapshots; "being computed" before the
    first)."""
    now = timezone.now()
    challenge = get_visible_or_404(visible_challenges, user=request.user, now=now, slug=slug)
    context = {"challenge": challenge}
    if not statistics.statistics_visible(challenge, user=request.user):
        context["reason"] = statistics.hidden_reason(challenge, now=now)
        return _private(render(request, "leaderboard/statistics.html", context, status=403))
    snapshot = statistics_snapshots.latest(challenge, now=now, fields=["numbers"])
    context.update(
        snapshot=snapshot,
        stats=None if snapshot is None else statistics_snapshots.load(snapshot.numbers),
        preview=not challenge.results_published,
        plots={
            kind: reverse("challenge_statistics_plot", args=[challenge.slug, kind])
            for kind in PLOTS
        },
        phases=[phase.label for phase in statistics.PHASES],
    )
    return _private(render(request, "leaderboard/statistics.html", context))


@require_safe
def statistics_plot(request, slug, kind):
    """One drawing of the statistics page, as SVG (``kind``: a key of PLOTS), from the
    latest snapshot; 503 with Retry-After before the first."""
    plot = PLOTS.get(kind)
    if plot is None:
        raise Http404("No such drawing.")
    now = timezone.now()
    challenge = get_visible_or_404(visible_challenges, user=request.user, now=now, slug=slug)
    if not statistics.statistics_visible(challenge, user=request.user):
        return _private(
            HttpResponse(
                statistics.hidden_reason(challenge, now=now) + "\n",
                content_type="text/plain; charset=utf-8",
                status=403,
            )
        )
    field = f"{kind}_svg"
    snapshot = statistics_snapshots.latest(challenge, now=now, fields=[field])
    if snapshot is None:  # never computed in the request: the first one is on its way
        response = HttpResponse(
            "The statistics are being computed.\n",
            content_type="text/plain; charset=utf-8",
            status=503,
        )
        response["Retry-After"] = str(RETRY_AFTER)
        return _private(response)
    etag = f'"{challenge.pk}-{kind}-{snapshot.computed}-{snapshot.computed_at.timestamp():.6f}"'
    response = get_conditional_response(request, etag=etag)
    if response is None:
        response = HttpResponse(getattr(snapshot, field), content_type="image/svg+xml")
    response["ETag"] = etag
    return _private(response)
