"""The e-mail when a submission has finished scoring: real uploads scored by the
pipeline (on commit, tasks in-process), the locmem mail backend."""

import math
import smtplib

import numpy as np
import pytest
import time_machine
from django.core.mail.backends import locmem

import scoring
from challenge_site.challenges.models import Feedback
from challenge_site.notifications import scoring as notices
from challenge_site.notifications import tasks
from challenge_site.notifications.models import ScoringNotice
from challenge_site.submissions import services
from challenge_site.submissions.models import Score, Status, Submission
from challenge_site.submissions.templatetags.submission_format import score
from tests.factories import TEST_PHASE, VALIDATION, make_dataset
from tests.submissions.helpers import predictions

from .helpers import SITE_URL, to

GP = {"method": "GP regression"}


@pytest.fixture(autouse=True)
def clock():
    with time_machine.travel(VALIDATION, tick=False) as traveller:
        yield traveller


def values(submission, split):
    return {row.loss: row.value for row in Score.objects.filter(submission=submission, split=split)}


def scored_losses(dataset) -> set[str]:
    """The losses scoring stores for the dataset: its task's that apply under its options."""
    return {loss.name for loss in scoring.losses_for(dataset.task, dataset.scoring_options)}


def test_opted_out_participants_get_nothing_and_queue_nothing(
    gaze, bob, submit_zip, mailoutbox, monkeypatch
):
    queued = []
    real = notices.celery_app.signature

    def signature(name, *args, **kwargs):
        queued.append(name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(notices.celery_app, "signature", signature)
    submission = submit_zip(bob, gaze.challenge, predictions("gaze"), now=VALIDATION, **GP)
    assert submission.status == Status.SCORED
    assert mailoutbox == [] and notices.TASK not in queued  # not even a task for them
    assert "submissions.score" in queued  # the spy saw the tasks that were sent
    assert not ScoringNotice.objects.exists()


def test_one_email_with_the_scores_the_page_shows(gaze, ada, submit_zip, mailoutbox, client):
    submission = submit_zip(ada, gaze.challenge, predictions("gaze"), now=VALIDATION, **GP)
    assert submission.status == Status.SCORED
    (message,) = mailoutbox
    assert message.to == ["ada@example.org"]
    assert message.subject == "gaze: your submission “GP regression” is scored"
    body = message.body
    assert f"Your submission “GP regression” (#{submission.pk}) to gaze, Demo challenge" in body
    val = values(submission, "val")
    assert set(val) == scored_losses(gaze)
    cells = [
        f"{loss.name} {score(val[loss.name]) if loss.name in val else '—'}"
        for loss in gaze.shown_losses()  # (wis only with quantile levels: gaze has none)
    ]
    assert f"  Validation split: {', '.join(cells)}\n" in body
    assert f"Its page: {SITE_URL}/submissions/{submission.pk}/#scores" in body
    # The page says the same numbers to its owner.
    client.force_login(ada)
    page = client.get(f"/submissions/{submission.pk}/").content.decode()
    assert all(score(value) in page for value in val.values())
    notice = ScoringNotice.objects.get()
    assert (notice.user, notice.status, notice.delivery) == (ada, Status.SCORED, "sent")


def test_hidden_test_scores_never_reach_the_email(gaze, ada, submit_zip, mailoutbox, clock):
    clock.move_to(TEST_PHASE)
    files = predictions("gaze", ("val", "test"))
    submission = submit_zip(ada, gaze.challenge, files, now=TEST_PHASE, **GP)
    assert submission.status == Status.SCORED
    (message,) = mailoutbox
    test = values(submission, "test")
    assert set(test) == scored_losses(gaze)
    for value in test.values():
        assert score(value) not in message.body
        assert repr(value) not in message.body
    assert "Test split: scores hidden until the results are published." in message.body
    assert all(
        f"{loss} {score(v)}" in message.body for loss, v in values(submission, "val").items()
    )


def test_under_ladder_feedback_only_the_shown_value_is_told(
    challenge, ada, submit_zip, mailoutbox, clock
):
    challenge.test_public_fraction = 0.5
    challenge.feedback = Feedback.LADDER
    challenge.save()
    beta = make_dataset(challenge, "beta", task="classification", sizes=(40, 300, 400))
    clock.move_to(TEST_PHASE)
    p = 0.05 + 0.9 * np.random.default_rng(1).random(400)
    files = {"beta_test_predict.txt": "".join(f"{x:.6g}\n" for x in p).encode()}
    submission = submit_zip(ada, beta.challenge, files, now=TEST_PHASE, method="Probe")
    (message,) = mailoutbox
    body = message.body
    public = Score.objects.get(submission=submission, split="public", loss="nlp")
    assert public.ladder_value is not None and public.ladder_value != public.value
    assert "Test, public part, shown through the Ladder: your shown nlp is " in body
    for row in Score.objects.filter(submission=submission):  # every exact value, both parts
        assert repr(row.value) not in body
        assert f"{row.loss} {score(row.value)}" not in body
    assert "Test, private part: scores hidden until the results are published." in body


def test_invalid_gives_the_first_report_lines_and_the_link(challenge, ada, submit_zip, mailoutbox):
    make_dataset(challenge, "big", sizes=(6, 30, 5))
    submission = submit_zip(ada, challenge, {"big_val_predict.txt": b"oops\n" * 30}, now=VALIDATION)
    assert submission.status == Status.INVALID and len(submission.errors) >= 30
    more = len(submission.errors) - 5
    (message,) = mailoutbox
    assert message.subject == "big: your submission “Gaussian process” is invalid"
    for line in submission.errors[:5]:
        assert f"  {line}\n" in message.body
    assert submission.errors[5] not in message.body
    assert f"… and {more} more lines on its page." in message.body
    assert "Invalid submissions do not count against the limits." in message.body
    assert f"{SITE_URL}/submissions/{submission.pk}/#errors" in message.body


def test_a_failure_says_what_the_page_says_and_nothing_hidden(
    gaze, ada, submit_zip, mailoutbox, monkeypatch, clock
):
    real = scoring.evaluate

    def nan_crps(*args, **kwargs):  # a bug of ours, on the hidden test split
        evaluation = real(*args, **kwargs)
        evaluation.scores["crps"] = math.nan
        return evaluation

    monkeypatch.setattr(scoring, "evaluate", nan_crps)
    clock.move_to(TEST_PHASE)
    submission = submit_zip(ada, gaze.challenge, predictions("gaze", ("test",)), now=TEST_PHASE)
    assert submission.status == Status.FAILED
    (message,) = mailoutbox
    assert message.subject == "gaze: your submission “Gaussian process” failed"
    assert f"What went wrong: {submission.failure}" in message.body
    assert "fault on our side" in submission.failure
    assert "NaN" in submission.failure_detail and "NaN" not in message.body


def test_rescoring_to_the_same_outcome_sends_nothing_a_new_outcome_one(
    gaze, ada, submit_zip, mailoutbox, monkeypatch, django_capture_on_commit_callbacks
):
    submission = submit_zip(ada, gaze.challenge, predictions("gaze"), now=VALIDATION)
    assert len(mailoutbox) == 1
    for _ in range(2):  # the organisers rescore the dataset twice: still scored
        with django_capture_on_commit_callbacks(execute=True):
            services.rescore(submissions=gaze.submissions.all())
    submission.refresh_from_db()
    assert submission.status == Status.SCORED and len(mailoutbox) == 1

    def broken(*args, **kwargs):
        raise ValueError("bad options")

    monkeypatch.setattr(scoring, "evaluate", broken)  # a rescore that fails is news
    with django_capture_on_commit_callbacks(execute=True):
        services.rescore(submissions=gaze.submissions.all())
    monkeypatch.undo()
    with django_capture_on_commit_callbacks(execute=True):  # fixed: scored again, told before
        services.rescore(submissions=gaze.submissions.all())
    assert [m.subject for m in mailoutbox] == [
        "gaze: your submission “Gaussian process” is scored",
        "gaze: your submission “Gaussian process” failed",
    ]
    assert sorted(ScoringNotice.objects.values_list("status", flat=True)) == ["failed", "scored"]


def test_a_mail_server_that_is_down_never_fails_the_scoring(
    gaze, ada, submit_zip, mailoutbox, monkeypatch, caplog
):
    def down(*args, **kwargs):
        raise smtplib.SMTPServerDisconnected("mail server down")

    monkeypatch.setattr(locmem.EmailBackend, "send_messages", down)
    submission = submit_zip(ada, gaze.challenge, predictions("gaze"), now=VALIDATION)
    assert submission.status == Status.SCORED
    assert set(values(submission, "val")) == scored_losses(gaze)
    assert mailoutbox == [] and not ScoringNotice.objects.exists()  # the claim was released
    assert f"submissions {submission.pk}: their scoring e-mails could not be queued" in caplog.text
    monkeypatch.undo()
    # The server is back: the task (a retry, or a second delivery) sends it, once.
    assert tasks.send_scoring_notice.delay(submission.pk).get() == 1
    assert tasks.send_scoring_notice.delay(submission.pk).get() == 0
    assert len(to(mailoutbox, ada)) == 1


def test_baselines_and_unfinished_runs_register_nothing(ada, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks() as callbacks:
        notices.scoring_finished([Submission(is_baseline=True, status=Status.SCORED)])
        notices.scoring_finished([Submission(user=ada, status=Status.RUNNING)])
    assert callbacks == []


def test_every_opted_in_member_of_the_team_is_told(gaze, ada, bob, submit_zip, mailoutbox):
    from challenge_site.teams import services as teams
    from tests.factories import make_user

    from .helpers import opt_in

    cy = opt_in(make_user("cy"), scoring=True, results=False)
    team = teams.create(challenge=gaze.challenge, user=bob, name="Gaze", now=VALIDATION)
    for member in (ada, cy):
        teams.join(team=team, user=member, now=VALIDATION)
    submission = submit_zip(bob, gaze.challenge, predictions("gaze"), now=VALIDATION, **GP)
    assert submission.team_id == team.pk
    # Bob made it but asked for nothing; Ada and Cy, members who asked, are told once each.
    assert sorted(m.to[0] for m in mailoutbox) == ["ada@example.org", "cy@example.org"]


def test_the_email_repeats_the_pages_sentence_on_examples_claimed_certain(
    gaze, ada, submit_zip, mailoutbox, client
):
    # Four validation rows, two of them with variance 0: a certainty claim on 2 of 4.
    files = {"gaze_val_predict.txt": b"1 0.5 0.2\n1 0.1 0\n1 -0.3 0\n1 0.2 1.5\n"}
    submission = submit_zip(ada, gaze.challenge, files, now=VALIDATION, **GP)
    assert submission.status == Status.SCORED
    (message,) = mailoutbox
    client.force_login(ada)
    page = client.get(f"/submissions/{submission.pk}/").content.decode()
    [line] = [line for line in message.body.splitlines() if "Claims certainty" in line]
    assert "2 of 4 examples" in line
    assert line.strip() in " ".join(page.split())  # the page's own sentence


def test_the_ladders_first_shown_score_is_not_said_to_beat_an_earlier_one(
    challenge, ada, submit_zip, mailoutbox, clock, client
):
    challenge.test_public_fraction = 0.5
    challenge.feedback = Feedback.LADDER
    challenge.save()
    beta = make_dataset(challenge, "beta", task="classification", sizes=(40, 300, 400))
    clock.move_to(TEST_PHASE)
    rng = np.random.default_rng(1)
    first_p = 0.05 + 0.9 * rng.random(400)
    first = submit_zip(
        ada,
        beta.challenge,
        {"beta_test_predict.txt": "".join(f"{x:.6g}\n" for x in first_p).encode()},
        now=TEST_PHASE,
        method="First",
    )
    body = mailoutbox[0].body
    assert "This entry set it: it is your first entry with a shown score on this split." in body
    assert "beat your previous shown score" not in body
    client.force_login(ada)
    page = client.get(f"/submissions/{first.pk}/").content.decode()
    assert "it is your first entry with a shown score on this split" in page
    assert "beat your previous shown score" not in page
    # A second entry is compared with the first: never "first" again.
    second_p = np.clip(first_p + 0.01, 0.01, 0.99)
    second = submit_zip(
        ada,
        beta.challenge,
        {"beta_test_predict.txt": "".join(f"{x:.6g}\n" for x in second_p).encode()},
        now=TEST_PHASE,
        method="Second",
    )
    page = client.get(f"/submissions/{second.pk}/").content.decode()
    assert "it is your first entry with a shown score" not in page
    assert "beat your shown score" in page or "beat your previous shown score" in page


def test_the_entries_of_one_transaction_are_checked_together(
    gaze, ada, bob, django_capture_on_commit_callbacks, django_assert_num_queries
):
    """A batch's outcomes: one callback on commit, and one check for all of them (who is
    in the teams, who asked, what they were told) that finds exactly ``pending``'s."""
    from challenge_site.teams import services as teams
    from tests.factories import make_user
    from tests.notifications.test_models import notice
    from tests.submissions.helpers import queued_submission

    from .helpers import opt_in

    cy = opt_in(make_user("cy"), scoring=True)
    dan = opt_in(make_user("dan"), scoring=True)
    team = teams.create(challenge=gaze.challenge, user=bob, name="Gaze", now=VALIDATION)
    teams.join(team=team, user=cy, now=VALIDATION)
    entries = {
        "ada's": queued_submission(ada, gaze.challenge),
        "bob's alone": queued_submission(bob, gaze.challenge),
        "told already": queued_submission(dan, gaze.challenge),
        "told of another outcome": queued_submission(dan, gaze.challenge),
    }
    Submission.objects.filter(pk=entries["bob's alone"].pk).update(team=None)
    entries["the team's"] = queued_submission(bob, gaze.challenge)
    Submission.objects.filter(pk=entries["the team's"].pk).update(team=team)
    notice(entries["told already"], dan, status=Status.SCORED)
    notice(entries["told of another outcome"], dan, status=Status.FAILED)
    Submission.objects.filter(pk__in=[e.pk for e in entries.values()]).update(status=Status.SCORED)
    rows = list(Submission.objects.filter(pk__in=[e.pk for e in entries.values()]))
    assert [row.team_id is not None for row in rows].count(True) == 1

    with django_capture_on_commit_callbacks() as callbacks:
        notices.scoring_finished(rows)
    assert len(callbacks) == 1
    outcomes = callbacks[0].args[0]
    with django_assert_num_queries(3):  # the team's members, who asked, what was told
        told = {outcome.pk for outcome in notices.to_tell(outcomes)}
    names = {entry.pk: name for name, entry in entries.items()}
    assert sorted(names[pk] for pk in told) == [
        "ada's",
        "the team's",
        "told of another outcome",
    ]
    assert told == {row.pk for row in rows if notices.pending(row).exists()}
    # Nobody asked: one query, nothing queued.
    alone = [outcome for outcome in outcomes if outcome.pk == entries["bob's alone"].pk]
    with django_assert_num_queries(1):
        assert notices.to_tell(alone) == []
