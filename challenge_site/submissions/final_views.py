"""Marking an entry as final: POST /submissions/<id>/final/ (a form on the entry's page)
and POST /api/v1/submissions/<id>/final/ with {"final": true|false} (token or session).

Only the entry's owner may choose; anyone else gets the 404 the entry's private parts
give. The choice never depends on a hidden score; what counts for the final ranking by
default (the best on the public part) is shown only where the public part's exact scores
are visible to the asker.
"""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect
from django.utils import timezone
from django.views.decorators.http import require_POST
from rest_framework import status
from rest_framework.decorators import api_view, permission_classes
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response

from challenge_site.challenges.clock import current_phase
from challenge_site.challenges.models import Phase
from challenge_site.challenges.policy import exact_scores_visible
from datasets.models import ScoredSplit

from . import finals, late_joiners, policy
from .access import get_owned_or_404
from .entrants import Entrant
from .models import Status, Submission


def _own_entry(request, pk: int) -> Submission:
    """The user's own entry, else 404 (the same answer for others' and missing ones)."""
    return get_owned_or_404(user=request.user, pk=pk)


def final_for(submission: Submission, *, user, now) -> dict | None:
    """``final_status`` for the owner of a test-phase entry; None for anyone else."""
    if not policy.owns(submission, user=user):
        return None
    if submission.phase != Phase.TEST or submission.status == Status.INVALID:
        return None  # an invalid entry can never be final: no panel
    return final_status(submission, user=user, now=now)


def final_status(submission: Submission, *, user, now) -> dict:
    """What the entry's page and the API say about final selections to ``user``."""
    dataset = submission.dataset
    challenge = dataset.challenge
    chosen = finals.selection(dataset=dataset, entrant=Entrant.of(submission))
    # Without a choice, the K best on the public part count: which ones tells the order of
    # the public part's exact scores, which the Ladder keeps from participants.
    counts_known = not challenge.has_public_part or (
        exact_scores_visible(challenge, ScoredSplit.PUBLIC, user=user, now=now)
        and not late_joiners.withheld(submission, ScoredSplit.PUBLIC, user=user)
    )
    full = not submission.final and len(chosen.chosen) >= chosen.limit
    return {
        "final": submission.final,
        # Whether the button shows: marking needs a selectable entry and a free place
        # (at 2 of 2 the page says to unmark one first); unmarking only the test phase (a
        # final entry the organisers hid may be given up).
        "selectable": (finals.selectable(submission, now=now) and not full)
        or (submission.final and current_phase(challenge, now=now) == Phase.TEST),
        "full": full and finals.selectable(submission, now=now),
        "chosen": len(chosen.chosen),
        "limit": chosen.limit,
        "in_final_ranking": submission.in_final_ranking if counts_known else None,
    }


@login_required
@require_POST
def choose_final(request, pk):
    submission = _own_entry(request, pk)
    final = request.POST.get("final") == "1"
    try:
        finals.choose(submission=submission, final=final, now=timezone.now())
    except finals.SelectionError as error:
        messages.error(request, str(error))
    else:
        messages.success(
            request,
            f"Submission #{submission.pk} is {'now' if final else 'no longer'} one of your "
            "final entries.",
        )
    return redirect("submission_detail", pk=submission.pk)


@api_view(["POST"])
@permission_classes([IsAuthenticated])
def api_choose_final(request, pk):
    """{"final": true|false} → the entry's final status; 400 with the reason if refused."""
    submission = _own_entry(request, pk)
    if not hasattr(request.data, "get"):  # a JSON array or scalar, not an object
        return Response(
            {"final": ['expected an object: {"final": true}']},
            status=status.HTTP_400_BAD_REQUEST,
        )
    value = request.data.get("final")
    if not isinstance(value, bool):
        if value in ("true", "false"):
            value = value == "true"
        else:
            return Response(
                {"final": ["expected true or false"]}, status=status.HTTP_400_BAD_REQUEST
            )
    now = timezone.now()
    try:
        finals.choose(submission=submission, final=value, now=now)
    except finals.SelectionError as error:
        return Response({"detail": str(error)}, status=status.HTTP_400_BAD_REQUEST)
    submission.refresh_from_db()
    return Response(final_status(submission, user=request.user, now=now))
