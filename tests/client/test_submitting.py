"""Checking, submitting and waiting for the score against the live site."""

import io
import zipfile
from datetime import timedelta

import pytest
from django.utils import timezone
from puc_client import commands, config, errors, submitting
from puc_client.errors import ClientError
from puc_client.transport import Api

import scoring
from challenge_site.submissions.models import Status, Submission
from scoring.plugins import is_plugin
from tests.factories import make_zip
from tests.submissions.helpers import predictions, queued_submission


def write(folder, files: dict[str, bytes]):
    folder.mkdir(exist_ok=True)
    for name, data in files.items():
        (folder / name).write_bytes(data)
    return folder


def test_validate_shows_the_sites_line_errors(puc, site, tmp_path):
    bad = {"gaze_val_predict.txt": b"1 0.5 1\n1,0.2,1\n1 0.1\n1 0 1\n"}
    result = puc("validate", "live", str(write(tmp_path / "out", bad)))
    assert result.code == errors.PROBLEMS
    lines = result.out.splitlines()
    assert lines and all(line.startswith("gaze_val_predict.txt") for line in lines)
    assert any(line.startswith("gaze_val_predict.txt:2: ") for line in lines)
    assert any(line.startswith("gaze_val_predict.txt:3: ") for line in lines)
    assert "the site would refuse these files" in result.err
    assert not Submission.objects.filter(is_baseline=False).exists()  # nothing was sent


def test_validate_names_a_near_miss_file_name(puc, site, tmp_path):
    files = {"Gaze_Validation_Predict.txt": predictions("gaze")["gaze_val_predict.txt"]}
    result = puc("validate", "live", str(write(tmp_path / "out", files)))
    assert result.code == errors.PROBLEMS
    assert "gaze_val_predict.txt" in result.out and "Gaze_Validation_Predict.txt" in result.out


def test_validate_a_good_file_needs_no_token(puc, live_server, running, environ, tmp_path):
    environ["PUC_URL"] = live_server.url
    result = puc("validate", "live", str(write(tmp_path / "out", predictions("gaze"))))
    assert (result.code, result.out) == (
        errors.OK,
        "No problems found: the site would accept these files.\n",
    )


def test_submit_refuses_a_bad_file_before_sending_it(puc, site, tmp_path):
    bad = {"gaze_val_predict.txt": b"1 0.5 1\n"}  # one line of four
    result = puc("submit", "live", str(write(tmp_path / "out", bad)), "-m", "GP")
    assert result.code == errors.PROBLEMS
    zipping, first, *details = result.err.splitlines()
    assert zipping == "Zipping gaze_val_predict.txt"
    assert first == ("puc: not submitted: the files have problems (--no-check sends them anyway):")
    assert details and details[0].startswith("  gaze_val_predict.txt")
    assert not Submission.objects.filter(is_baseline=False).exists()


def test_submit_without_the_check_shows_the_sites_reasons(puc, site, tmp_path):
    files = {"gaze_val_targets.txt": predictions("gaze")["gaze_val_predict.txt"]}
    folder = write(tmp_path / "out", files)
    result = puc("submit", "live", str(folder / "gaze_val_targets.txt"), "-m", "GP", "--no-check")
    assert result.code == errors.PROBLEMS
    assert result.err.splitlines()[-1] == (
        "puc: the site refused the request: gaze_val_targets.txt: prediction files end in "
        "_predict.txt; rename it to gaze_val_predict.txt"
    )
    assert not Submission.objects.filter(is_baseline=False).exists()


def test_submit_wait_prints_the_scores(puc, site, tmp_path):
    folder = write(tmp_path / "out", predictions("gaze", ("train", "val")))
    result = puc("submit", "live", str(folder), "-m", "Curl GP", "--wait", "--progress")
    assert result.code == errors.OK, result
    submission = Submission.objects.get(is_baseline=False)
    assert submission.status == "scored" and submission.method == "Curl GP"
    lines = result.out.splitlines()
    assert lines[0] == (
        f"Submitted: submission {submission.pk} (scored) {site['url']}/submissions/{submission.pk}/"
    )
    assert lines[1] == f"Submission {submission.pk} (live / gaze, 'Curl GP'): scored"
    scores = {s.split: {} for s in submission.scores.all()}
    for score in submission.scores.all():
        scores[score.split][score.loss] = score.value
    header = lines[4].split()
    assert header[0] == "split" and set(header[1:]) == set(scores["val"])
    val = dict(zip(header[1:], lines[7].split()[1:], strict=True))
    assert val["nlpd"] == f"{scores['val']['nlpd']:.6g}"
    assert "\rupload predictions.zip [" in result.err and "100%" in result.err
    with zipfile.ZipFile(submission.file.open("rb")) as stored:
        assert sorted(stored.namelist()) == ["gaze_train_predict.txt", "gaze_val_predict.txt"]


def test_show_an_invalid_one_prints_its_report(puc, site, tmp_path):
    # Right names, wrong format: accepted at upload, found invalid by the scoring run.
    bad = make_zip({"gaze_val_predict.txt": b"1 0 1\n1 0 1\n1 0 1\n"})
    path = tmp_path / "bad.zip"
    path.write_bytes(bad)
    result = puc("submit", "live", str(path), "-m", "GP", "--no-check", "--wait")
    assert result.code == errors.PROBLEMS
    submission = Submission.objects.get(is_baseline=False)
    assert submission.status == "invalid"
    shown = puc("show", str(submission.pk))
    assert shown.code == errors.OK
    for line in submission.errors:
        assert line in shown.out.splitlines()


def test_daily_limit_gives_the_sites_message_and_when_to_retry(puc, site, tmp_path):
    challenge = site["challenge"]
    challenge.val_daily_limit = 1
    challenge.save()
    folder = write(tmp_path / "out", predictions("gaze"))
    assert puc("submit", "live", str(folder), "-m", "first").code == errors.OK
    result = puc("submit", "live", str(folder), "-m", "second")
    assert result.code == errors.LIMIT
    zipping, message = result.err.splitlines()
    assert message.startswith("puc: you have made 1 submission to gaze today")
    assert "; retry in " in message


def test_wait_backs_off_and_times_out(site):
    """Polled at 1, 1.5, 2.25 … s; gives up after the timeout with the last status."""
    queued = queued_submission(site["user"], site["challenge"], now=timezone.now())
    # In this transactional test the in-process worker scores it at once: put it back
    # where it waits for a worker.
    Submission.objects.filter(pk=queued.pk).update(status=Status.QUEUED)
    ctx = commands.Context(
        config.Settings(site["url"], site["token"], None),
        Api(site["url"], token=site["token"]),
        io.StringIO(),
        io.StringIO(),
    )
    clock = {"now": 0.0}
    sleeps = []

    def sleep(seconds):
        sleeps.append(seconds)
        clock["now"] += seconds

    with pytest.raises(ClientError) as raised:
        submitting.wait_for(ctx, queued.pk, timeout=10, sleep=sleep, clock=lambda: clock["now"])
    assert raised.value.code == errors.TIMEOUT
    assert raised.value.message == (
        f"submission {queued.pk} is still queued after 10 s; run `puc wait {queued.pk}` "
        "to wait longer"
    )
    assert sleeps == [1.0, 1.5, 2.25, 3.375, 1.875]
    assert ctx.stderr.getvalue() == f"submission {queued.pk}: queued\n"


def test_submissions_lists_ones_own_with_filters(puc, site, tmp_path):
    gaze = write(tmp_path / "gaze", predictions("gaze"))
    coins = write(tmp_path / "coins", predictions("coins", task="classification"))
    broken = tmp_path / "broken.zip"
    broken.write_bytes(make_zip({"gaze_val_predict.txt": b"1 0 1\n"}))
    assert puc("submit", "live", str(gaze), "-m", "GP", "--wait").code == errors.OK
    assert puc("submit", "live", str(coins), "-m", "LR", "--wait").code == errors.OK
    assert puc("submit", "live", str(broken), "-m", "X", "--no-check", "--wait").code == (
        errors.PROBLEMS
    )
    ids = list(
        Submission.objects.filter(is_baseline=False)
        .order_by("-created", "-id")
        .values_list("pk", flat=True)
    )
    listing = puc("submissions").out.splitlines()
    assert listing[0].split() == [
        "id",
        "created",
        "challenge",
        "dataset",
        "splits",
        "method",
        "status",
    ]
    assert [int(line.split()[0]) for line in listing[2:]] == ids
    assert [line.split()[-1] for line in listing[2:]] == ["invalid", "scored", "scored"]
    only = puc("submissions", "--dataset", "coins").out.splitlines()[2:]
    assert [line.split()[-2:] for line in only] == [["LR", "scored"]]
    invalid = puc("submissions", "--status", "invalid", "--challenge", "live")
    assert [int(line.split()[0]) for line in invalid.out.splitlines()[2:]] == [ids[0]]
    limited = puc("submissions", "--limit", "1")
    assert len(limited.out.splitlines()) == 3
    assert limited.err == "First 1 submissions; --limit N shows more.\n"


def test_submissions_with_an_unknown_challenge_names_the_known_ones(puc, site):
    result = puc("submissions", "--challenge", "nope")
    assert result.code == errors.PROBLEMS
    assert result.err == (
        "puc: the site refused the request: challenge: expected one of live, found 'nope'\n"
    )


def test_submit_with_a_refused_token_sends_nothing(puc, site, environ, tmp_path):
    environ["PUC_TOKEN"] = "1" * 40
    result = puc("submit", "live", str(write(tmp_path / "out", predictions("gaze"))), "-m", "GP")
    assert (result.code, result.err) == (
        errors.AUTH,
        "puc: the token was refused: run `puc login`\n",
    )
    assert not Submission.objects.filter(is_baseline=False).exists()


# --- A multiclass dataset (issue 26) --------------------------------------------------


@pytest.fixture
def shapes(running):
    """4 classes, 24 validation rows; ``allow_ensembles`` as each test sets it."""
    from tests.submissions.helpers import make_shapes

    return make_shapes(running, now=running.start - timedelta(days=1))


def _shapes_lines(rows: list[list[float]]) -> bytes:
    return "".join(" ".join(f"{p:g}" for p in row) + "\n" for row in rows).encode()


def test_validate_checks_a_multiclass_file_with_the_dataset_s_classes_and_ensembles(
    puc, site, shapes, tmp_path
):
    """The width and the ensemble rule come from the API's facts: four classes, no
    ensembles, whatever the first line of the file holds."""
    shapes.allow_ensembles = False
    shapes.save()
    single, five = [0.7, 0.1, 0.1, 0.1], [0.6, 0.1, 0.1, 0.1, 0.1]
    files = {"shapes_val_predict.txt": _shapes_lines([five] + [single] * 22 + [single * 2])}
    result = puc("validate", "live", str(write(tmp_path / "out", files)))
    assert result.code == errors.PROBLEMS, result
    lines = result.out.splitlines()
    assert lines[0].startswith("shapes_val_predict.txt:1: ") and "4" in lines[0]
    assert any(line.startswith("shapes_val_predict.txt:24: ") for line in lines), lines
    assert not any(":2:" in line for line in lines)
    good = {"shapes_val_predict.txt": _shapes_lines([single] * 24)}
    result = puc("validate", "live", str(write(tmp_path / "good", good)))
    assert (result.code, result.out) == (
        errors.OK,
        "No problems found: the site would accept these files.\n",
    )


def test_submit_a_multiclass_ensemble_and_wait_for_its_scores(puc, site, shapes, tmp_path):
    from tests.submissions.helpers import shapes_files

    folder = write(tmp_path / "out", shapes_files(("val",), members=3))
    result = puc("submit", "live", str(folder), "-m", "Deep ensemble", "--wait")
    assert result.code == errors.OK, result
    submission = Submission.objects.get(is_baseline=False)
    assert submission.status == "scored" and submission.dataset == shapes
    out = result.out.splitlines()
    header = out[4].split()
    # The built-in losses, then the installed plug-ins' (spec §9, e.g. plugins/floorlog).
    plugins = [loss.name for loss in scoring.losses_for("multiclass") if is_plugin(loss)]
    builtin = ["nlp", "brier", "01l", "ece", "rmsce", "sce", "ace", "rauc", "aurc"]
    assert header == ["split", *builtin, *plugins]
    val = dict(zip(header[1:], out[6].split()[1:], strict=True))
    nlp = submission.scores.get(split="val", loss="nlp").value
    assert val["nlp"] == f"{nlp:.6g}"
    reported = out[out.index("Reported, not ranked:") + 1].split()
    assert reported == ["split", "tu", "du", "mi"]


def test_validate_into_a_closed_pipe_keeps_its_status(site, tmp_path):
    """`puc validate DIR | head` on an invalid file: the reader has gone, the exit code is
    still 1 (files have problems), with no traceback and no "Exception ignored"."""
    import os
    import subprocess
    import sys

    from puc_client import cli

    bad = {"gaze_val_predict.txt": b"1 0.5 1\n1,0.2,1\n1 0.1\n1 0 1\n"}
    folder = write(tmp_path / "out", bad)
    env = {**os.environ, "PYTHONPATH": os.path.dirname(os.path.dirname(cli.__file__))}
    env |= {"PUC_CONFIG": str(tmp_path / "puc.json"), "PUC_URL": site["url"]}
    process = subprocess.Popen(
        [sys.executable, "-m", "puc_client", "validate", "live", str(folder)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    process.stdout.close()  # `| head -0`: the reader is gone before anything is written
    err = process.stderr.read().decode()
    assert process.wait(timeout=60) == errors.PROBLEMS
    assert "the site would refuse these files" in err
    assert "Traceback" not in err and "Exception ignored" not in err
