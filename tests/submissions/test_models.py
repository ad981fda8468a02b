"""submissions.models: what the database itself refuses (a baseline with a user, a second
baseline, a moderated entry without a reason, an unknown status, a score twice), the
stored upload's name, and how rows name themselves."""

import pytest
from django.db import IntegrityError, transaction

from challenge_site.submissions.models import (
    Moderation,
    Score,
    Status,
    Submission,
    SubmissionQuota,
    upload_to,
)
from tests.factories import make_user
from tests.leaderboard.helpers import add_entry, reg


@pytest.fixture
def entries(gaze):
    return {
        "entry": add_entry(gaze, user=make_user("ada"), val=reg(0.5, 0.4), method="GP"),
        "baseline": add_entry(gaze, val=reg(0.7, 0.5), baseline=True),
    }


@pytest.mark.parametrize(
    ("which", "changes"),
    [
        ("baseline", {"user": "ada"}),  # a baseline has no user
        ("entry", {"user": None}),  # an entry has one
        ("entry", {"moderation": Moderation.HIDDEN, "moderation_reason": ""}),
        ("baseline", {"moderation": Moderation.HIDDEN, "moderation_reason": "No."}),
        ("entry", {"status": "done"}),
        ("entry", {"mark": "?"}),
        ("entry", {"phase": "never"}),
    ],
)
def test_the_database_refuses_what_the_code_never_writes(entries, which, changes):
    changes = {k: (entries["entry"].user if v == "ada" else v) for k, v in changes.items()}
    with pytest.raises(IntegrityError), transaction.atomic():
        Submission.objects.filter(pk=entries[which].pk).update(**changes)


def test_one_baseline_per_dataset_and_one_score_per_split_and_loss(entries, gaze):
    with pytest.raises(IntegrityError), transaction.atomic():
        add_entry(gaze, val=reg(0.7, 0.5), baseline=True)
    with pytest.raises(IntegrityError), transaction.atomic():
        Score.objects.create(submission=entries["entry"], dataset=gaze, split="val", loss="nlpd")
    SubmissionQuota.objects.create(user=entries["entry"].user, dataset=gaze)
    with pytest.raises(IntegrityError), transaction.atomic():
        SubmissionQuota.objects.create(user=entries["entry"].user, dataset=gaze)


def test_names_urls_and_the_stored_file_name(entries):
    entry = entries["entry"]
    assert str(entry) == f"#{entry.pk} GP (gaze)"
    assert entry.get_absolute_url() == f"/submissions/{entry.pk}/"
    assert str(Score.objects.get(submission=entry, split="val", loss="nlpd")) == "val nlpd = 0.5"
    assert entry.is_final
    entry.status = Status.QUEUED
    assert not entry.is_final
    name = upload_to(entry, "../../etc/passwd.zip")
    assert name.startswith("submissions/demo/gaze/") and name.endswith(".zip")
    assert len(name.rsplit("/", 1)[1]) == 32 + 4 and "passwd" not in name
    assert upload_to(entry, "x.zip") != name  # random each time
