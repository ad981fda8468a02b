"""submissions.forms: the upload form (the challenge's datasets to choose from, an upload's
problems one per line, the reason an oversized file was skipped) and the filters of
"My submissions"."""

from django.core.files.uploadedfile import SimpleUploadedFile

from challenge_site.submissions.forms import MySubmissionsFilter, SubmissionForm
from challenge_site.submissions.models import Submission
from challenge_site.submissions.uploads import limit_upload_size
from tests.factories import make_challenge, make_dataset, make_user
from tests.leaderboard.helpers import add_entry, reg


def test_the_datasets_of_the_challenge_or_the_file_names(challenge, gaze):
    make_dataset(challenge, "coins", task="classification")
    form = SubmissionForm(challenge=challenge)
    assert form.fields["dataset"].choices == [
        ("", "— from the file names —"),
        ("coins", "coins"),  # in the datasets' order (position, then name)
        ("gaze", "gaze"),
    ]
    bound = SubmissionForm({"method": "GP", "dataset": "wheat"}, challenge=challenge)
    assert not bound.is_valid()
    assert set(bound.errors) == {"dataset", "file"}
    assert 'class="errorlist report"' in str(bound.errors["file"])  # one problem per line


def test_an_oversized_file_is_said_to_be_too_large_not_missing(rf, settings, challenge, gaze):
    settings.SUBMISSION_MAX_UPLOAD_BYTES = 10
    request = rf.post("/x/", {"method": "GP", "file": SimpleUploadedFile("a.zip", b"x" * 100)})
    limit_upload_size(request)
    form = SubmissionForm(request.POST, request.FILES, challenge=challenge, request=request)
    assert not form.is_valid()
    assert form.errors["file"] == ["the file is larger than 0.0 MB, the limit for a submission zip"]
    missing = SubmissionForm({"method": "GP"}, challenge=challenge, request=rf.post("/x/"))
    assert missing.errors["file"] == ["This field is required."]


def test_my_submissions_filters(challenge, gaze):
    ada = make_user("ada")
    other = make_dataset(make_challenge(slug="other", title="Other"), "gaze")
    scored = add_entry(gaze, user=ada, val=reg(0.5, 0.4))
    invalid = add_entry(gaze, user=ada, status="invalid")
    elsewhere = add_entry(other, user=ada, val=reg(0.5, 0.4))
    Submission.objects.filter(pk=elsewhere.pk).update(withdrawn_at=scored.created)
    mine = Submission.objects.filter(user=ada).order_by("pk")
    challenges = [("demo", "Demo challenge"), ("other", "Other")]

    def kept(**data):
        return list(MySubmissionsFilter(data, challenges=challenges).apply(mine))

    assert kept() == [scored, invalid, elsewhere]
    assert kept(status="invalid") == [invalid]
    assert kept(status="withdrawn") == [elsewhere]
    assert kept(challenge="demo", hide_invalid="on") == [scored]
    bad = MySubmissionsFilter({"status": "done"}, challenges=challenges)
    assert list(bad.apply(mine)) == list(mine) and "status" in bad.errors  # shown, ignored
