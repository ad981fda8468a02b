"""The e-mail "your submission has finished scoring" (opt-in:
Profile.email_on_scoring_finished).

submissions.outcomes calls ``scoring_finished`` inside the scoring transaction, once for
the runs it writes together; nothing is read or sent there: on commit, ``enqueue`` sends
the task only for the entries someone is to be told of (one check for all of them), and
the task (``notify``) claims a ScoringNotice per recipient before their message goes
out. A mail server that is down, a lost broker or a bug here never touches
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
from collections import defaultdict
from datetime import datetime
from functools import partial

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


def scoring_finished(submissions: list[Submission]) -> None:
    """Scoring runs set these submissions' final statuses (called inside their
    transaction, one call for the runs written together): the e-mails are considered
    once that commits, in one check for all of them. Reads nothing, never raises."""
    # What ``to_tell`` reads of each, as committed (copies: the caller's rows live on).
    outcomes = [
        Submission(
            pk=submission.pk,
            status=submission.status,
            user_id=submission.user_id,
            team_id=submission.team_id,
        )
        for submission in submissions
        if not submission.is_baseline and submission.status in FINAL
    ]
    if outcomes:
        transaction.on_commit(partial(enqueue, outcomes), robust=True)


def on_scoring_finished(*, submissions: list[Submission], **_) -> None:
    """Receiver of submissions.signals.scoring_finished."""
    scoring_finished(submissions)


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


def to_tell(outcomes: list[Submission]) -> list[Submission]:
    """Those of the outcomes (status, maker and team as committed) that someone is to be
    told of: ``pending`` of each, read for all of them at once (the teams' members, who
    asked among the recipients, and, only if someone did, what they were told)."""
    members: dict[int, set[int]] = defaultdict(set)
    teams = {outcome.team_id for outcome in outcomes if outcome.team_id is not None}
    if teams:
        for team_id, user_id in Membership.objects.filter(team_id__in=teams).values_list(
            "team_id", "user_id"
        ):
            members[team_id].add(user_id)
    recipients = {
        outcome.pk: ({outcome.user_id} - {None}) | members.get(outcome.team_id, set())
        for outcome in outcomes
    }
    everyone = get_user_model().objects.filter(pk__in=set().union(*recipients.values()))
    asked = set(emails.opted_in(everyone, kind=emails.Kind.SCORING).values_list("pk", flat=True))
    wanted = {pk: users & asked for pk, users in recipients.items()}
    if not any(wanted.values()):
        return []
    told = set(
        ScoringNotice.objects.filter(
            submission_id__in=[pk for pk, users in wanted.items() if users]
        ).values_list("submission_id", "status", "user_id")
    )
    return [
        outcome
        for outcome in outcomes
        if any((outcome.pk, outcome.status, user) not in told for user in wanted[outcome.pk])
    ]


def enqueue(outcomes: list[Submission]) -> None:
    """Send the task (by name: tasks.py imports this module) for each outcome someone is
    to be told of, so that rescoring many entries queues nothing for those who did not
    ask. Never raises: an e-mail that cannot be sent must not fail the scoring."""
    try:
        for outcome in to_tell(outcomes):
            celery_app.signature(TASK, args=(outcome.pk,)).delay()
    except Exception:
        logger.exception(
            "submissions %s: their scoring e-mails could not be queued or sent",
            ", ".join(str(outcome.pk) for outcome in outcomes),
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
