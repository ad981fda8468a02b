"""The e-mail "your submission has finished scoring" (opt-in:
Profile.email_on_scoring_finished).

submissions.outcomes.write calls ``scoring_finished`` inside the scoring transaction;
nothing is read or sent there: on commit, ``enqueue`` sends the task only if someone is
to be told, and the task (``notify``) claims a ScoringNotice per recipient before their
message goes out. A mail server that is down, a lost broker or a bug here never touches
the scoring run.

Against floods when the organisers rescore many entries: one e-mail per submission,
recipient and outcome. The first run that ends scored, the first that ends invalid and
the first that ends failed are told; a rescore ending as an earlier run did sends
nothing (so a failed entry rescored into scored is told, a scored one rescored with new
targets is not).

The e-mail tells exactly what the recipient sees on the entry's page at that moment:
the same score table (submissions.visibility.score_table, which asks policy), so hidden
test scores stay hidden and a Ladder split gives its shown value only.
"""

from __future__ import annotations

import logging
import smtplib
from datetime import datetime

from django.contrib.auth import get_user_model
from django.core.mail import get_connection
from django.db import IntegrityError, transaction
from django.db.models import Q, QuerySet
from django.urls import reverse

from challenge_site.celery import app as celery_app
from challenge_site.mailing.models import DeliveryStatus
from challenge_site.submissions.models import FINAL, Moderation, Status, Submission
from challenge_site.submissions.policy import can_see_private
from challenge_site.submissions.templatetags.submission_format import score
from challenge_site.submissions.visibility import score_table
from challenge_site.teams.models import Membership

from . import emails
from .models import ScoringNotice

logger = logging.getLogger(__name__)

TASK = "notifications.scoring_finished"
REPORT_LINES = 5  # of an invalid submission's report; the rest is on its page
ANCHORS = {Status.SCORED: "#scores", Status.INVALID: "#errors", Status.FAILED: "#failure"}
VERBS = {Status.SCORED: "is scored", Status.INVALID: "is invalid", Status.FAILED: "failed"}


def scoring_finished(submission: Submission) -> None:
    """A scoring run of ``submission`` set its final status (called inside the run's
    transaction): the e-mail is considered once that commits. Reads nothing, never
    raises."""
    if submission.is_baseline or submission.status not in FINAL:
        return
    # What ``pending`` reads of it, as committed (a copy: the caller's row lives on).
    outcome = Submission(
        pk=submission.pk,
        status=submission.status,
        user_id=submission.user_id,
        team_id=submission.team_id,
    )

    def after_commit():
        enqueue(outcome.pk, outcome=outcome)

    transaction.on_commit(after_commit, robust=True)


def on_scoring_finished(*, submission: Submission, **_) -> None:
    """Receiver of submissions.signals.scoring_finished."""
    scoring_finished(submission)


def recipients_for(submission: Submission) -> QuerySet:
    """Who is told about an entry: its maker, and every member of its team (each reads
    what the entry's page shows them: policy.owns makes them all its owners)."""
    members = Q(pk=submission.user_id)
    if submission.team_id is not None:
        team = Membership.objects.filter(team_id=submission.team_id).values("user")
        members |= Q(pk__in=team)
    return get_user_model().objects.filter(members)


def pending(submission: Submission) -> QuerySet:
    """Recipients who asked for these e-mails and were not told this outcome yet."""
    told = ScoringNotice.objects.filter(submission=submission, status=submission.status)
    return emails.opted_in(recipients_for(submission), kind=emails.Kind.SCORING).exclude(
        pk__in=told.values("user")
    )


def enqueue(submission_id: int, *, outcome: Submission | None = None) -> None:
    """Send the task (by name: tasks.py imports this module) when someone is to be told,
    so that rescoring many entries queues nothing for those who did not ask. Never
    raises: an e-mail that cannot be sent must not fail the scoring. ``outcome``: the
    entry's status and makers as its run committed them (else they are read)."""
    try:
        # What ``pending`` reads: the outcome and who made the entry.
        submission = outcome or (
            Submission.objects.filter(pk=submission_id).only("status", "user_id", "team_id").first()
        )
        if submission is None or submission.status not in FINAL or not pending(submission):
            return
        celery_app.signature(TASK, args=(submission_id,)).delay()
    except Exception:
        logger.exception(
            "submission %s: its scoring e-mail could not be queued or sent", submission_id
        )


def notify(*, submission_id: int, now: datetime) -> int:
    """E-mail the submission's outcome to each recipient still to be told; returns how
    many were sent. Raises one of MAIL_UNAVAILABLE when the mail server is down (nobody
    is claimed) or fails on a message (its claim is released, for the task's retry)."""
    submission = (
        Submission.objects.select_related("dataset__challenge", "user")
        .filter(pk=submission_id)
        .first()
    )
    if submission is None or submission.is_baseline or submission.status not in FINAL:
        return 0
    users = list(pending(submission))
    if not users:
        return 0
    sent = 0
    # Opened before anyone is claimed: a server that is down leaves the claims untouched.
    with get_connection(fail_silently=False) as connection:
        for user in users:
            notice = _claim(submission, user=user, now=now)
            if notice is None:  # another run told them this outcome meanwhile
                continue
            try:
                message = build_message(submission, user=user, now=now, connection=connection)
                connection.send_messages([message])
            except smtplib.SMTPRecipientsRefused as error:
                ScoringNotice.objects.filter(pk=notice.pk).update(
                    delivery=DeliveryStatus.FAILED, error=str(error)[:500]
                )
            except BaseException:
                notice.delete()  # not handed over: the retry sends it
                raise
            else:
                ScoringNotice.objects.filter(pk=notice.pk).update(
                    delivery=DeliveryStatus.SENT, sent_at=now
                )
                sent += 1
    return sent


def _claim(submission: Submission, *, user, now: datetime) -> ScoringNotice | None:
    """The recipient's notice of this outcome, committed before the message goes out;
    None if one exists already (the unique triple)."""
    try:
        with transaction.atomic():
            return ScoringNotice.objects.create(
                submission=submission,
                user=user,
                status=submission.status,
                email=user.email,
                claimed_at=now,
            )
    except IntegrityError:
        return None


# --- The message -----------------------------------------------------------------------------


def build_message(submission: Submission, *, user, now: datetime, connection=None):
    dataset = submission.dataset
    private = can_see_private(submission, user=user)
    table = score_table(submission, user=user, now=now)
    errors = list(submission.errors or []) if private else []
    page = emails.absolute(reverse("submission_detail", args=[submission.pk]))
    if private:  # the section of the page that says more
        page += ANCHORS[submission.status]
    context = {
        "submission": submission,
        "dataset": dataset,
        "challenge": dataset.challenge,
        "verb": VERBS[submission.status],
        "private": private,
        "score_lines": score_lines(table)
        if submission.status == Status.SCORED or any(e.cells for e in table)
        else [],
        "moderation": submission.moderation if submission.moderation != Moderation.NONE else "",
        "errors": errors[:REPORT_LINES],
        "more_errors": max(0, len(errors) - REPORT_LINES),
        "page_url": page,
    }
    subject = f"{dataset.name}: your submission “{submission.method}” {VERBS[submission.status]}"
    return emails.build(
        user=user,
        kind=emails.Kind.SCORING,
        subject=subject,
        template="notifications/scoring_email.txt",
        context=context,
        connection=connection,
    )


def score_lines(table) -> list[str]:
    """The page's score section (templates/submissions/_scores.html) as lines of text."""
    lines = []
    for entry in table:
        split = "" if entry.split in ("public", "private") else " split"
        if entry.visible and entry.cells:
            values = ", ".join(
                f"{cell.loss.name} {score(cell.value) if cell.computed else '—'}"
                for cell in entry.cells
            )
            note = ""
            if entry.result is not None and entry.result.non_probabilistic:
                note = " (non-probabilistic predictions: only point losses apply)"
            lines.append(f"{entry.label}{split}{note}: {values}")
            if entry.certainty:  # the page's sentence on examples claimed certain
                lines.append(f"  {entry.certainty}")
        elif entry.ladder is not None:
            lines.append(_ladder_line(entry))
        elif not entry.visible:
            lines.append(f"{entry.label}{split}: scores hidden until the results are published.")
    return lines


def _ladder_line(entry) -> str:
    ladder = entry.ladder
    head = f"{entry.label}{'' if entry.split == 'public' else ' split'}, shown through the Ladder: "
    if ladder.note:
        # The board's Ladder kept this entry's score back: the note says why, no digit.
        text = f"{ladder.note}."
    elif ladder.shown is None:
        text = f"this entry has no shown score (its {ladder.loss.name} is n/a)."
    else:
        text = f"your shown {ladder.loss.name} is {ladder.text} (shown to {ladder.precision_text})."
        if ladder.first:
            text += " This entry set it: it is your first entry with a shown score on this split."
        elif ladder.accepted:
            text += " This entry set it: it beat your previous shown score by more than the "
            text += "standard error of their difference."
        else:
            text += " This entry did not beat your shown score by more than the standard "
            text += "error of the difference between the two entries, so the shown score "
            text += "stays as it was."
    when = (
        "when the validation targets are released"
        if entry.split == "val"
        else "when the results are published"
    )
    return f"{head}{text} Exact scores, the other losses and the plots appear {when}."
