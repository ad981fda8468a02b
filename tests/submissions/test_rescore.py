"""Baselines scored on import and on file changes; rescoring by admin action and command."""

from contextlib import contextmanager
from datetime import UTC, datetime

import numpy as np
import pytest
import time_machine
from django.contrib.admin.sites import site
from django.core.files.storage import storages
from django.core.management import CommandError, call_command
from django.test import RequestFactory

import scoring
from challenge_site.challenges.models import Challenge
from challenge_site.submissions.admin import SubmissionAdmin
from challenge_site.submissions.models import Status, Submission
from datasets.importing import import_challenge
from tests.factories import VALIDATION, dataset_files, make_dataset, write_challenge_folder

from .helpers import predictions, scores_of

TOML = """
slug = "epuc"
title = "Evaluating Predictive Uncertainty"
start = 2004-11-10T00:00:00Z
test_start = 2004-12-03T00:00:00Z
deadline = 2004-12-10T23:59:59Z

[datasets.gaze]
task = "regression"

[datasets.catalysis]
task = "classification"
log_base = 10
"""


FILES = {
    "gaze": dataset_files("gaze", task="regression", sizes=(5, 3, 4), dim=2),
    "catalysis": dataset_files("catalysis", task="classification", sizes=(6, 2, 3)),
}


@pytest.fixture
def folder(tmp_path):
    return write_challenge_folder(tmp_path / "epuc", TOML, FILES)


def _array(text: bytes) -> np.ndarray:
    return np.array([float(x) for x in text.split()])


def test_import_creates_and_scores_a_baseline_per_dataset(
    db, folder, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        import_challenge(folder)
    baselines = {b.dataset.name: b for b in Submission.objects.filter(is_baseline=True)}
    assert set(baselines) == {"gaze", "catalysis"}
    for name, task, options in (
        ("gaze", "regression", scoring.ScoringOptions()),
        ("catalysis", "classification", scoring.ScoringOptions(log_base=10)),
    ):
        baseline = baselines[name]
        assert (baseline.user, baseline.method, baseline.status) == (None, "Baseline", "scored")
        assert baseline.splits == ["train", "val", "test"]
        files = FILES[name]
        train = _array(files[f"{name}_train_targets.txt"])
        for split in ("train", "val", "test"):
            expected = scoring.baseline(
                train, _array(files[f"{name}_{split}_targets.txt"]), task=task, options=options
            ).scores
            assert scores_of(baseline)[split] == expected

    # Importing the same folder again changes no file: the baseline is left as it is.
    finished = baselines["gaze"].finished_at
    with django_capture_on_commit_callbacks(execute=True):
        import_challenge(folder)
    assert Submission.objects.filter(is_baseline=True).count() == 2
    assert Submission.objects.get(is_baseline=True, dataset__name="gaze").finished_at == finished


def test_changed_targets_rescore_baseline_and_submissions(
    db, folder, participant, submit_zip, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        import_challenge(folder)
    challenge = Challenge.objects.get(slug="epuc")
    files = {"gaze_val_predict.txt": b"1 0 1\n1 0.5 2\n1 -1 1\n"}
    submission = submit_zip(participant, challenge, files, now=datetime(2004, 11, 20, tzinfo=UTC))
    old = scores_of(submission)["val"]
    (folder / "gaze" / "gaze_val_targets.txt").write_text("3\n-2\n7\n")
    with django_capture_on_commit_callbacks(execute=True):
        import_challenge(folder)
    new = scores_of(Submission.objects.get(pk=submission.pk))["val"]
    expected = scoring.evaluate(
        files["gaze_val_predict.txt"], np.array([3.0, -2.0, 7.0]), task="regression"
    ).scores
    assert new == expected != old
    baseline = Submission.objects.get(is_baseline=True, dataset__name="gaze")
    assert (
        scores_of(baseline)["val"]["nmse"]
        == scoring.baseline(
            _array(
                dataset_files("gaze", task="regression", sizes=(5, 3, 4), dim=2)[
                    "gaze_train_targets.txt"
                ]
            ),
            np.array([3.0, -2.0, 7.0]),
            task="regression",
        ).scores["nmse"]
    )


def test_baseline_without_training_targets_fails_with_a_reason(
    challenge, django_capture_on_commit_callbacks
):
    from datasets.services import delete_file

    dataset = make_dataset(challenge, "gaze")
    with django_capture_on_commit_callbacks(execute=True):
        delete_file(dataset.files.get(split="train", kind="targets"))
    baseline = Submission.objects.get(is_baseline=True)
    assert baseline.status == Status.FAILED
    assert baseline.failure == (
        "gaze: the baseline needs the training targets, which are not stored yet"
    )


@contextmanager
def registered_loss():
    """A loss added to the registry for a while, as an organiser might add one."""
    loss = scoring.register(
        name="mae",
        title="Mean absolute error",
        task=scoring.Task.REGRESSION,
        probabilistic=False,
        compute=lambda c: float(np.mean(np.abs(c.targets - c.rows.stats.mean))),
        description="(1/n) Σ |t − mean|.",
    )
    try:
        yield loss
    finally:
        del scoring.LOSSES[(loss.task, loss.name)]


def _targets(dataset, split):
    datafile = dataset.files.get(split=split, kind="targets")
    with storages[datafile.storage_alias].open(datafile.path, "rb") as handle:
        return scoring.read_targets(handle.read(), path=datafile.filename, task=dataset.task)


def test_added_loss_fills_in_on_rescore(
    client, gaze, participant, other, submit_zip, django_capture_on_commit_callbacks, capsys
):
    first = submit_zip(participant, gaze.challenge, predictions("gaze"), now=VALIDATION)
    second = submit_zip(other, gaze.challenge, predictions("gaze", seed=4), now=VALIDATION)
    assert set(scores_of(first)["val"]) == {"nlpd", "nmse", "crps", "rauc"}
    with registered_loss():
        with time_machine.travel(VALIDATION, tick=False):
            page = client.get(f"/submissions/{first.pk}/").content.decode()
        assert "added after this submission was scored" in page  # the new column, not yet filled
        with django_capture_on_commit_callbacks(execute=True):
            call_command("rescore", "--challenge", "demo", "--dataset", "gaze")
        assert capsys.readouterr().out == "Queued 2 submission(s) for rescoring.\n"
        for submission, seed in ((first, 1), (second, 4)):
            lines = predictions("gaze", seed=seed)["gaze_val_predict.txt"].splitlines()
            mean = np.array([float(line.split()[1]) for line in lines])
            expected = float(np.mean(np.abs(_targets(gaze, "val") - mean)))
            assert scores_of(submission)["val"]["mae"] == expected
            assert set(scores_of(submission)["val"]) == {"nlpd", "nmse", "crps", "rauc", "mae"}
        with time_machine.travel(VALIDATION, tick=False):
            page = client.get(f"/submissions/{first.pk}/").content.decode()
        assert "added after this submission was scored" not in page
        assert '<abbr title="Mean absolute error">mae</abbr>' in page
    assert scoring.find_loss("regression", "mae") is None


def test_rescore_command_filters_and_complains(
    gaze, participant, submit_zip, capsys, django_capture_on_commit_callbacks
):
    submit_zip(participant, gaze.challenge, predictions("gaze"), now=VALIDATION)
    with pytest.raises(CommandError, match="no submissions match challenge 'nope'"):
        call_command("rescore", "--challenge", "nope")
    with django_capture_on_commit_callbacks(execute=True):
        call_command("rescore")
    assert capsys.readouterr().out == "Queued 1 submission(s) for rescoring.\n"
    assert Submission.objects.get().attempts == 1  # a new run: attempts start again


def test_admin_action_rescores_the_selection(
    gaze, participant, staff, submit_zip, django_capture_on_commit_callbacks
):
    one = submit_zip(participant, gaze.challenge, predictions("gaze"), now=VALIDATION)
    two = submit_zip(participant, gaze.challenge, predictions("gaze"), now=VALIDATION)
    finished = {s.pk: s.finished_at for s in (one, two)}
    request = RequestFactory().post("/admin/submissions/submission/")
    request.user = staff
    request._messages = _Messages()
    admin = SubmissionAdmin(Submission, site)
    with django_capture_on_commit_callbacks(execute=True):
        admin.rescore_selected(request, Submission.objects.filter(pk=one.pk))
    assert request._messages.texts == ["Queued 1 submission(s) for rescoring."]
    assert Submission.objects.get(pk=one.pk).finished_at > finished[one.pk]
    assert Submission.objects.get(pk=two.pk).finished_at == finished[two.pk]


class _Messages:
    def __init__(self):
        self.texts = []

    def add(self, level, message, extra_tags=""):
        self.texts.append(str(message))


def test_admin_pages_render(admin_client, gaze, participant, submit_zip):
    submission = submit_zip(
        participant, gaze.challenge, {"gaze_val_predict.txt": b"nope\n"}, now=VALIDATION
    )
    changelist = admin_client.get("/admin/submissions/submission/")
    assert changelist.status_code == 200
    page = admin_client.get(f"/admin/submissions/submission/{submission.pk}/change/")
    assert page.status_code == 200
    assert "gaze_val_predict.txt:1: " in page.content.decode()
    assert admin_client.get("/admin/submissions/submission/add/").status_code == 403
