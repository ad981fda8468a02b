from datetime import datetime

from django.shortcuts import render
from django.utils import timezone
from django.views.decorators.http import require_safe

import scoring
from challenge_site.access import get_visible_or_404

from . import policy
from .clock import current_phase, next_milestone, timeline
from .splits import Split
from .tabs import tabs_for


@require_safe
def home(request):
    now = timezone.now()
    challenges = [
        {
            "challenge": challenge,
            "phase": current_phase(challenge, now=now),
            "next": next_milestone(challenge, now=now),
        }
        for challenge in policy.visible_challenges(user=request.user, now=now)
    ]
    return render(request, "challenges/home.html", {"challenges": challenges})


def _challenge_page(request, slug, *, tab: str, datasets: bool = False) -> tuple[dict, datetime]:
    """What every tab of a challenge shows (title, phase, the tab bar), and the clock;
    404 unless the user may see the challenge. ``datasets``: fetch them (in context)."""
    now = timezone.now()
    challenge = get_visible_or_404(policy.visible_challenges, user=request.user, now=now, slug=slug)
    context = {
        "challenge": challenge,
        "phase": current_phase(challenge, now=now),
        "next": next_milestone(challenge, now=now),
        "active_tab": tab,
    }
    if datasets:
        context["datasets"] = list(challenge.datasets.all())
    context["tabs"] = tabs_for(
        challenge, active=tab, user=request.user, now=now, datasets=context.get("datasets")
    )
    return context, now


@require_safe
def challenge_detail(request, slug):
    """Overview: the description, the phase and the timeline."""
    context, now = _challenge_page(request, slug, tab="overview")
    challenge = context["challenge"]
    context.update(
        timeline=timeline(challenge, now=now),
        results_preview=policy.results_preview(challenge, user=request.user),
    )
    return render(request, "challenges/challenge_detail.html", context)


@require_safe
def challenge_data(request, slug):
    """Data: the datasets, their sizes as far as released, and what is released when."""
    context, now = _challenge_page(request, slug, tab="data", datasets=True)
    challenge = context["challenge"]
    context.update(
        datasets_open=policy.datasets_open(challenge, user=request.user, now=now),
        rows_shown={
            split: policy.split_rows_visible(challenge, split, user=request.user, now=now)
            for split in Split
        },
        test_scores_visible=policy.split_visible(
            challenge, policy.HIDDEN_UNTIL_PUBLICATION, user=request.user
        ),
        public_board_visible=policy.public_board_visible(challenge, user=request.user),
    )
    return render(request, "challenges/challenge_data.html", context)


@require_safe
def challenge_evaluation(request, slug):
    """Evaluation: the losses of the challenge's tasks and what ranks each dataset."""
    context, _ = _challenge_page(request, slug, tab="evaluation", datasets=True)
    datasets = context["datasets"]
    used = {d.task for d in datasets}
    tasks = [spec for name, spec in scoring.tasks.TASKS.items() if name in used]
    # Every loss of each task, plug-ins' included (spec §9), with where a plug-in's is from.
    context["losses"] = [
        (
            spec.label,
            [(loss, scoring.plugins.origin_of(loss)) for loss in scoring.losses_for(spec.name)],
        )
        for spec in tasks
    ]
    return render(request, "challenges/challenge_evaluation.html", context)


@require_safe
def challenge_rules(request, slug):
    """Rules: the organisers' text and the submission limits."""
    context, _ = _challenge_page(request, slug, tab="rules")
    return render(request, "challenges/challenge_rules.html", context)


@require_safe
def file_formats(request):
    return render(request, "challenges/file_formats.html")
