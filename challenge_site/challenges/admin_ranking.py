"""The challenge's ranking and feedback options in the admin: the public part of the test
set (``test_public_fraction``), the final entries per participant (``final_entries``) and
the feedback (exact scores, each participant's Ladder or the board's Ladder) and whether
accounts that join during the test phase get public feedback (``late_joiners_feedback``);
their checks and what a change sets off.

- The public part is fixed once the test phase has begun: test entries are scored on it.
- Either Ladder needs every dataset's ranking loss to have per-example terms.
- A changed ``late_joiners_feedback`` lets late joiners' entries into the boards' Ladders
  or takes them out (signals.options_changed, answered by the submissions app).
- A changed public part rescores the challenge's entries (baselines included) so that
  every entry has its part scores; a changed number of final entries recomputes which
  entries count (services.options_changed; a dataset's changed ranking loss likewise,
  datasets.services.ranking_loss_changed, from the dataset admin's save).
"""

from __future__ import annotations

from django.contrib import messages
from django.utils import timezone

import scoring

from . import signals
from .models import LADDERS, Challenge, Feedback, format_utc
from .services import options_changed, save_challenge

FIELDS = ("test_public_fraction", "final_entries", "feedback", "late_joiners_feedback")
FIELDSET = ("Ranking and feedback", {"fields": FIELDS})


def ladder_refusal(*, name: str, task: str, ranking_loss: str) -> str | None:
    """Why the Ladder cannot show the dataset's scores, or None if it can."""
    loss_name = ranking_loss or scoring.default_ranking_loss(task).name
    loss = scoring.find_loss(task, loss_name)
    if loss is None or loss.terms is not None:
        return None  # an unknown loss is reported by the dataset's own check
    return (
        f"The Ladder needs per-example loss terms, and dataset “{name}” ranks by "
        f"{loss_name}, which has none: choose another ranking loss for it, or exact scores."
    )


# Shown when a public part is combined with exact feedback (README, "Visibility").
EXACT_WITH_SPLIT = (
    "Exact feedback with a public part lets participants read which test examples are "
    "public, and their labels, from probe uploads (a log-loss oracle): the Ladder is the "
    "safe choice for a challenge with a public part."
)
# Shown when each participant has their own Ladder (docs/ladder.md).
PER_PARTICIPANT_LADDER = (
    "Each participant's Ladder shows every account its own first entry and improvements: "
    "many accounts with one upload each add up (the board shows the best of their noisy "
    "scores, and each first entry can be a probe). The board's Ladder releases a score only "
    "when it beats the board's best, whoever sends it."
)
# Shown when late joiners get feedback on a challenge with a public part.
LATE_JOINERS = (
    "Accounts that join during the test phase get public feedback: fresh accounts can "
    "probe the public part. Untick “late joiners' feedback” to keep their entries for the "
    "final ranking only."
)


def default_feedback(form, cleaned: dict) -> None:
    """A public part set where the feedback was left as it was (not chosen in this form)
    switches exact feedback to the Ladder: the split's private part is only as private as
    the public scores are coarse."""
    fraction = cleaned.get("test_public_fraction")
    if (
        fraction
        and cleaned.get("feedback") == Feedback.EXACT
        and "feedback" not in form.changed_data
        and "test_public_fraction" in form.changed_data
        and not _ladder_problems(form.instance)
    ):
        cleaned["feedback"] = Feedback.LADDER
        form.feedback_defaulted = True  # said by RankingAdminMixin.save_model


def check_options(form, cleaned: dict) -> None:
    """ChallengeForm.clean: the options against the challenge as stored."""
    default_feedback(form, cleaned)
    challenge = form.instance  # not yet changed by the form (that follows clean)
    fraction = cleaned.get("test_public_fraction")
    if (
        challenge.pk is not None
        and fraction is not None
        and fraction != challenge.test_public_fraction
        and timezone.now() >= challenge.test_start
    ):
        form.add_error(
            "test_public_fraction",
            "The public part is fixed once test entries are scored: the test phase began "
            f"on {format_utc(challenge.test_start)}, so the share stays "
            f"{challenge.test_public_fraction:g}.",
        )
    ladder = (cleaned.get("feedback") or challenge.feedback) in LADDERS
    if ladder and (problems := _ladder_problems(challenge)):
        form.add_error("feedback", problems)


def _ladder_problems(challenge: Challenge) -> list[str]:
    """Why the Ladder cannot show the challenge's datasets' scores (none: it can)."""
    if challenge.pk is None:
        return []
    return [
        message
        for dataset in challenge.datasets.all()
        if (
            message := ladder_refusal(
                name=dataset.name, task=dataset.task, ranking_loss=dataset.ranking_loss
            )
        )
    ]


class RankingAdminMixin:
    """For ChallengeAdmin: what a saved change of the options sets off."""

    def save_model(self, request, obj, form, change):
        before = None
        if change:
            before = (
                Challenge.objects.filter(pk=obj.pk)
                .values_list("test_public_fraction", "final_entries", "late_joiners_feedback")
                .first()
            )
        # Every field the form changed, never results_published (services.save_challenge).
        save_challenge(challenge=obj)
        if getattr(form, "feedback_defaulted", False):
            self.message_user(
                request,
                "With a public part the feedback is now the Ladder, so that probe uploads "
                "cannot tell which test examples are public. To show exact scores anyway, "
                "choose them and save again.",
                messages.INFO,
            )
        elif obj.test_public_fraction and obj.feedback == Feedback.EXACT:
            self.message_user(request, EXACT_WITH_SPLIT, messages.WARNING)
        if obj.test_public_fraction and obj.feedback == Feedback.LADDER:
            self.message_user(request, PER_PARTICIPANT_LADDER, messages.WARNING)
        if obj.test_public_fraction and obj.late_joiners_feedback:
            self.message_user(request, LATE_JOINERS, messages.WARNING)
        if before is None:
            return
        fraction, final_entries, late_joiners = before
        if late_joiners != obj.late_joiners_feedback:
            signals.options_changed.send(
                sender=Challenge,
                challenge=obj,
                public_part_changed=False,
                final_entries_changed=False,
            )
        count = options_changed(
            challenge=obj, public_fraction_before=fraction, final_entries_before=final_entries
        )
        if count:
            self.message_user(
                request,
                f"The public part changed: {count} entr{'y' if count == 1 else 'ies'} "
                "(baselines included) queued to be scored again.",
                messages.INFO,
            )
