"""Withdrawing an entry: its participant takes it off the leaderboards for good.

A withdrawn entry leaves every board, plot, export and the results, frees its place
among the final entries, and is no longer the participant's Ladder score; it still counts
against the submission limits (withdrawing is not a way to submit again), and its page
stays for its participant and the organisers. Once a challenge's results are published
its entries stay as published: only the organisers change them then (moderation).
"""

from datetime import datetime

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db import transaction
from django.shortcuts import redirect
from django.utils import timezone
from django.views.decorators.http import require_POST
from rest_framework import status
from rest_framework.decorators import api_view, permission_classes
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response

from challenge_site.challenges.models import Phase

from . import standings
from .access import get_owned_or_404
from .entrants import Entrant
from .models import Status, Submission


class WithdrawalError(Exception):
    """Why the entry cannot be withdrawn, in words for its participant."""


def refusal(submission: Submission, *, now: datetime) -> str | None:
    challenge = submission.dataset.challenge
    if submission.withdrawn_at is not None:
        return f"Submission #{submission.pk} is withdrawn already."
    if submission.status == Status.INVALID:
        return f"Submission #{submission.pk} is invalid: it is on no leaderboard to withdraw from."
    if submission.phase == Phase.TEST and now > challenge.deadline:
        # Withdrawing one would change which entries count (finals.counted_ids) after
        # final choices have closed.
        return (
            "The test phase is over: its entries stay as they are until the results, "
            "which take them as they stood at the deadline."
        )
    if challenge.results_published:
        return (
            "The results of this challenge are published: its entries stay as published. "
            "Write to the organisers if this entry must go."
        )
    return None


def withdraw(*, submission: Submission, now: datetime) -> Submission:
    """Withdraw the entry (its owner's call, checked by the caller)."""
    with transaction.atomic():
        standings.lock_owners([submission.pk])  # before the submission: see standings
        submission = (
            Submission.objects.select_for_update(of=("self",), no_key=True)
            .select_related("dataset__challenge")
            .get(pk=submission.pk)
        )
        reason = refusal(submission, now=now)
        if reason:
            raise WithdrawalError(reason)
        submission.withdrawn_at = now
        submission.final = False
        submission.save(update_fields=["withdrawn_at", "final"])
        standings.entries_changed(
            dataset=submission.dataset, entrant=Entrant.of(submission), splits=submission.splits
        )
    return submission


@login_required
@require_POST
def withdraw_view(request, pk):
    submission = get_owned_or_404(user=request.user, pk=pk)
    try:
        withdraw(submission=submission, now=timezone.now())
    except WithdrawalError as error:
        messages.error(request, str(error))
    else:
        messages.success(
            request,
            f"Submission #{submission.pk} is withdrawn: it has left the leaderboards and "
            "still counts against the limits.",
        )
    return redirect("submission_detail", pk=submission.pk)


@api_view(["POST"])
@permission_classes([IsAuthenticated])
def api_withdraw(request, pk):
    """→ {"id", "withdrawn_at"}; 400 {"detail"} when refused; 404 for others' entries."""
    submission = get_owned_or_404(user=request.user, pk=pk)
    try:
        submission = withdraw(submission=submission, now=timezone.now())
    except WithdrawalError as error:
        return Response({"detail": str(error)}, status=status.HTTP_400_BAD_REQUEST)
    return Response({"id": submission.pk, "withdrawn_at": submission.withdrawn_at})
