"""Opt-in notification e-mails through the real stack: a scoring run on the Celery worker
and a publication by import_challenge, read in the test's SMTP mailbox."""

import time
from datetime import UTC, datetime, timedelta
from email.header import decode_header, make_header

from challenge_site.accounts.models import Profile
from challenge_site.mailing import tasks
from challenge_site.notifications.models import ResultsMailing, ScoringNotice
from challenge_site.submissions.models import Score

from .client import Client
from .conftest import MAILBOX, import_challenge, make_user, orm, wait_final
from .data import ChallengeSpec, DatasetSpec, prediction_zip
from .harness import wait_until

SINES = DatasetSpec("regression", (60, 40, 50), dim=2, seed=7)


def subject(message) -> str:
    return str(make_header(decode_header(message["Subject"])))


def body(message) -> str:
    return message.get_payload(decode=True).decode()


def participant(username: str, *, scoring: bool, results: bool):
    user, token = make_user(username)
    orm(
        lambda: Profile.objects.filter(user=user).update(
            email_on_scoring_finished=scoring, email_on_results_published=results
        )
    )
    return user, token


def mails_to(user, part: str) -> list:
    return [m for m in MAILBOX.to(user.email) if part in subject(m)]


def wait_mail(user, part: str, *, timeout: float = 60):
    return wait_until(
        lambda: mails_to(user, part), timeout=timeout, what=f"an e-mail to {user} ({part})"
    )[0]


def test_scoring_and_results_emails_reach_only_those_who_asked(stack):
    now = datetime.now(UTC).replace(microsecond=0)
    spec = ChallengeSpec(
        "notify",
        "Notify challenge",
        {"sines": SINES},
        start=now - timedelta(days=10),
        test_start=now - timedelta(days=5),
        deadline=now - timedelta(days=1),  # after the deadline: any split, results hidden
    )
    import_challenge(stack, spec)
    ada, ada_token = participant("nada", scoring=True, results=True)
    bob, bob_token = participant("nbob", scoring=False, results=False)
    ids = {}
    for user, token in ((ada, ada_token), (bob, bob_token)):
        api = Client(stack.base_url, token=token)
        data = prediction_zip("sines", SINES, ("val", "test"))
        response = api.api_submit("notify", data, method="GP regression")
        assert response.status == 201, response
        ids[user.username] = response.json()["id"]
    assert set(wait_final(stack, ids.values()).values()) == {"scored"}

    # Scoring finished: sent by the worker once the run committed.
    message = wait_mail(ada, "is scored")
    assert subject(message) == "sines: your submission “GP regression” is scored"
    text = body(message)
    pk = ids["nada"]
    assert f"https://127.0.0.1/submissions/{pk}/#scores" in text  # SITE_URL from ALLOWED_HOSTS
    assert "Test split: scores hidden until the results are published." in text
    test_scores = orm(lambda: list(Score.objects.filter(submission_id=pk, split="test")))
    assert test_scores and all(repr(s.value) not in text for s in test_scores)
    assert all(f"{s.loss} {s.value:.4g}" not in text for s in test_scores)
    assert message["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"

    # Publication (import_challenge with results_published = true): the results e-mail.
    folder = stack.root / "import" / "notify"
    toml = (folder / "challenge.toml").read_text()
    deadline = next(line for line in toml.splitlines() if line.startswith("deadline = "))
    toml = toml.replace(deadline, f"{deadline}\nresults_published = true")
    (folder / "challenge.toml").write_text(toml)
    stack.manage("import_challenge", str(folder))
    results = wait_mail(ada, "the results are published")
    assert "https://127.0.0.1/challenges/notify/results/" in body(results)
    mailing = orm(lambda: ResultsMailing.objects.get(challenge__slug="notify"))
    for _ in range(2):  # the task delivered again: nobody gets a second one
        tasks.send_batch.delay("results", mailing.pk)
    time.sleep(3)
    assert len(mails_to(ada, "the results are published")) == 1
    assert len(mails_to(ada, "is scored")) == 1
    assert MAILBOX.to(bob.email) == []
    assert orm(lambda: ScoringNotice.objects.filter(submission_id=ids["nbob"]).count()) == 0

    # One click in the mail program turns that kind off.
    header = "".join(message["List-Unsubscribe"].split())  # unfolded
    path = header.strip("<>").removeprefix("https://127.0.0.1")
    assert path.startswith("/notifications/unsubscribe/") and path in text
    response = Client(stack.base_url).post(path, {"List-Unsubscribe": "One-Click"})
    assert response.status == 200
    assert not orm(lambda: Profile.objects.get(user=ada).email_on_scoring_finished)
