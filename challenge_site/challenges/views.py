from django.shortcuts import render
from django.utils import timezone
from django.views.decorators.http import require_safe

import scoring
from challenge_site import policy
from challenge_site.access import get_visible_or_404
from datasets.models import Split, Task

from .models import Challenge
from .services import current_phase, next_milestone, timeline


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


@require_safe
def challenge_detail(request, slug):
    now = timezone.now()
    challenge = get_visible_or_404(Challenge, user=request.user, now=now, slug=slug)
    datasets = list(challenge.datasets.all())
    tasks = [task for task in Task if any(d.task == task for d in datasets)]
    context = {
        "challenge": challenge,
        "phase": current_phase(challenge, now=now),
        "next": next_milestone(challenge, now=now),
        "timeline": timeline(challenge, now=now),
        "datasets": datasets,
        "datasets_open": policy.datasets_open(challenge, user=request.user, now=now),
        "rows_shown": {
            split: policy.split_rows_visible(challenge, split, user=request.user, now=now)
            for split in Split
        },
        "test_scores_visible": policy.split_visible(
            challenge, policy.HIDDEN_UNTIL_PUBLICATION, user=request.user
        ),
        "results_preview": policy.results_preview(challenge, user=request.user),
        "losses": [(task.label, scoring.losses_for(task)) for task in tasks],
    }
    return render(request, "challenges/challenge_detail.html", context)


@require_safe
def file_formats(request):
    return render(request, "challenges/file_formats.html")
