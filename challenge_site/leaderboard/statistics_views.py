"""The statistics page of a challenge and its drawings: for its organisers at any time,
public once the results are published (``statistics.statistics_visible``).

Everyone else gets, for a draft, the 404 of any hidden challenge; for an open challenge
before publication, the page says when it becomes public (403) and shows no number of
the challenge; its drawings answer 403 with the same sentence.
"""

from collections.abc import Callable
from dataclasses import dataclass

from django.http import Http404, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone
from django.utils.cache import get_conditional_response, patch_cache_control
from django.views.decorators.http import require_safe

from challenge_site.access import get_visible_or_404
from challenge_site.challenges.policy import visible_challenges

from . import statistics, statistics_plots


@dataclass(frozen=True)
class Plot:
    title: str
    compute: Callable  # (challenge=, now=) -> the numbers drawn
    draw: Callable  # (numbers, title=) -> SVG


PLOTS = {
    "daily": Plot(
        "valid submissions per day",
        lambda challenge, now: statistics.daily(challenge=challenge, now=now),
        statistics_plots.daily_svg,
    ),
    "datasets": Plot(
        "per dataset and phase",
        lambda challenge, now: statistics.by_dataset(challenge=challenge),
        statistics_plots.datasets_svg,
    ),
    "outcomes": Plot(
        "what became of the uploads",
        lambda challenge, now: statistics.outcomes(challenge=challenge),
        statistics_plots.outcomes_svg,
    ),
    "turnaround": Plot(
        "from upload to scored",
        lambda challenge, now: statistics.turnaround(challenge=challenge),
        statistics_plots.turnaround_svg,
    ),
}


def _private(response: HttpResponse) -> HttpResponse:
    # Publication can be withdrawn and every upload changes the numbers: never reuse a
    # stored copy unchecked.
    patch_cache_control(response, private=True, no_cache=True)
    return response


@require_safe
def challenge_statistics(request, slug):
    """Valid submissions per day, per dataset and phase, the uploads' outcomes and the
    time to a score: each a drawing with its numbers in a table under it."""
    now = timezone.now()
    challenge = get_visible_or_404(visible_challenges, user=request.user, now=now, slug=slug)
    context = {"challenge": challenge}
    if not statistics.statistics_visible(challenge, user=request.user):
        context["reason"] = statistics.hidden_reason(challenge, now=now)
        return _private(render(request, "leaderboard/statistics.html", context, status=403))
    context.update(
        stats=statistics.challenge_statistics(challenge=challenge, now=now),
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
    """One drawing of the statistics page, as SVG (``kind``: a key of PLOTS)."""
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
    data = plot.compute(challenge=challenge, now=now)
    title = f"{challenge.title}: {plot.title}"
    key = f"{challenge.pk}-{kind}-{statistics_plots.fingerprint(kind, (title, data))}"
    etag = f'"{key}"'
    response = get_conditional_response(request, etag=etag)
    if response is None:
        svg = statistics_plots.cached_svg(key, lambda: plot.draw(data, title=title))
        response = HttpResponse(svg, content_type="image/svg+xml")
    response["ETag"] = etag
    return _private(response)
