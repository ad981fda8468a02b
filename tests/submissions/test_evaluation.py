"""submissions.evaluation: from a stored submission to an outcome, writing nothing: on a
hidden split every file is checked before any target is read, a failure there is told
in generic words, and every stored report is bounded."""

import json
import math

import numpy as np
import pytest

import scoring
from challenge_site.submissions.evaluation import REPORT_MAX_BYTES, _finite_json, bounded_report
from challenge_site.submissions.models import Status
from datasets.models import Kind, Split
from scoring.plugins import is_plugin
from tests.factories import AFTER, TEST_PHASE, VALIDATION

from .helpers import gaussian_lines, predictions

GENERIC = (
    "scoring failed because of a fault on our side, not in your files; the organisers "
    "have been told and can score it again"
)


@pytest.fixture
def target_reads(monkeypatch):
    """The splits whose targets the pipeline read, in order."""
    from challenge_site.submissions import evaluation

    reads = []
    real = evaluation.read_dataset_targets

    def spy(dataset, *args, **kwargs):
        result = real(dataset, *args, **kwargs)
        reads.append(sorted(result))
        return result

    monkeypatch.setattr(evaluation, "read_dataset_targets", spy)
    return reads


def test_an_invalid_test_file_is_reported_before_any_target_is_read(
    gaze, participant, submit_zip, target_reads
):
    files = predictions("gaze", ("train", "val"))
    files["gaze_test_predict.txt"] = b"1 0 1\n1 0 x\n1 0 1\n1 0 1\n1 0 1\n"
    submission = submit_zip(participant, gaze.challenge, files, now=TEST_PHASE)
    assert submission.status == Status.INVALID
    assert submission.errors and all(
        line.startswith("gaze_test_predict.txt:2: ") for line in submission.errors
    )
    assert target_reads == []


def test_a_wrong_row_count_is_found_from_the_public_row_count(
    gaze, participant, submit_zip, target_reads
):
    files = {"gaze_test_predict.txt": gaussian_lines(4)}  # the test split has 5 rows
    submission = submit_zip(participant, gaze.challenge, files, now=TEST_PHASE)
    assert submission.status == Status.INVALID
    assert submission.errors == [
        "gaze_test_predict.txt:5: expected 5 rows, one per target, found 4"
    ]
    assert target_reads == []


def test_a_valid_upload_reads_the_targets_once_every_file_is_checked(
    gaze, participant, submit_zip, target_reads, monkeypatch
):
    import scoring.upload_check

    events = []
    real = scoring.evaluate
    real_check = scoring.upload_check.check_file

    def logged(predictions, targets, **kwargs):
        events.append(kwargs["predictions_path"])
        return real(predictions, targets, **kwargs)

    def checked(source, **kwargs):
        events.append(kwargs["path"])
        return real_check(source, **kwargs)

    monkeypatch.setattr(scoring, "evaluate", logged)
    monkeypatch.setattr(scoring.upload_check, "check_file", checked)
    real_read = evaluation_module().read_dataset_targets

    def read(dataset, *args, **kwargs):
        events.append("targets")
        return real_read(dataset, *args, **kwargs)

    monkeypatch.setattr(evaluation_module(), "read_dataset_targets", read)
    files = predictions("gaze", ("val", "test"))
    submission = submit_zip(participant, gaze.challenge, files, now=TEST_PHASE)
    assert submission.status == Status.SCORED
    assert events.index("targets") >= events.index("gaze_test_predict.txt")
    # (The intervals, computed after the scores, read the targets again.)
    last_evaluation = len(events) - events[::-1].index("gaze_test_predict.txt")
    assert events[:last_evaluation].count("targets") == 1
    assert set(events[: events.index("targets")]) == {
        "gaze_val_predict.txt",
        "gaze_test_predict.txt",
    }


def evaluation_module():
    from challenge_site.submissions import evaluation

    return evaluation


def nan_crps(monkeypatch):
    """A scoring bug: the crps comes out as NaN whatever the file."""
    real = scoring.evaluate

    def buggy(*args, **kwargs):
        evaluation = real(*args, **kwargs)
        if "crps" in evaluation.scores:
            evaluation.scores["crps"] = math.nan
        return evaluation

    monkeypatch.setattr(scoring, "evaluate", buggy)


def test_a_failure_on_the_hidden_test_split_is_generic_counts_and_staff_see_why(
    gaze, participant, submit_zip, monkeypatch, admin_client
):
    from challenge_site.submissions.limits import allowances

    nan_crps(monkeypatch)
    submission = submit_zip(
        participant, gaze.challenge, predictions("gaze", ("test",)), now=TEST_PHASE
    )
    assert submission.status == Status.FAILED
    assert submission.failure == GENERIC
    assert "loss crps of the test split came out as NaN" in submission.failure_detail
    assert "Traceback" in submission.failure_detail
    (allowance,) = allowances(user=participant, challenge=gaze.challenge, now=TEST_PHASE)
    assert allowance.used_today == 1
    page = admin_client.get(f"/admin/submissions/submission/{submission.pk}/change/")
    assert "loss crps of the test split came out as NaN" in page.content.decode()


def test_a_failure_while_reading_hidden_targets_is_generic(
    gaze, participant, submit_zip, monkeypatch
):
    def unreadable(dataset, *args, **kwargs):
        raise RuntimeError("gaze_test_targets.txt: target 3 is 0.4217")

    monkeypatch.setattr(evaluation_module(), "read_dataset_targets", unreadable)
    submission = submit_zip(
        participant, gaze.challenge, predictions("gaze", ("val", "test")), now=TEST_PHASE
    )
    assert (submission.status, submission.failure) == (Status.FAILED, GENERIC)
    assert "RuntimeError: gaze_test_targets.txt: target 3 is 0.4217" in submission.failure_detail


def test_a_failure_on_public_splits_keeps_its_reason(gaze, participant, submit_zip, monkeypatch):
    nan_crps(monkeypatch)
    submission = submit_zip(participant, gaze.challenge, predictions("gaze"), now=VALIDATION)
    assert submission.status == Status.FAILED
    assert submission.failure == "ValueError: loss crps of the val split came out as NaN"
    # After publication the test split is public too.
    challenge = gaze.challenge
    type(challenge).objects.filter(pk=challenge.pk).update(results_published=True)
    files = predictions("gaze", ("test",))
    after = submit_zip(participant, challenge, files, now=AFTER)
    assert after.failure == "ValueError: loss crps of the test split came out as NaN"


def test_without_test_targets_a_file_is_still_checked_against_the_inputs(
    gaze, participant, submit_zip, target_reads, django_capture_on_commit_callbacks
):
    from datasets.services import delete_file

    with django_capture_on_commit_callbacks(execute=True):
        delete_file(gaze.files.get(split="test", kind=Kind.TARGETS))
    target_reads.clear()  # the baseline, scored again
    submission = submit_zip(
        participant, gaze.challenge, {"gaze_test_predict.txt": b"oops\n"}, now=TEST_PHASE
    )
    assert submission.status == Status.INVALID  # checked against the inputs' row count
    assert target_reads == []


def test_error_reports_are_cut_to_20_kb_with_a_count_of_the_rest():
    lines = [f"gaze_val_predict.txt:{i}: " + "x" * 300 for i in range(1, 102)]
    report = bounded_report(lines)
    assert len(json.dumps(report)) <= REPORT_MAX_BYTES == 20_000
    kept = len(report) - 1
    assert report[:kept] == lines[:kept]
    assert report[-1] == f"… and {101 - kept} more lines of this report, left out (over 20 KB)"
    assert bounded_report(lines[:3]) == lines[:3]
    (long,) = bounded_report(["a" * 50_000])
    assert len(long) == 1000 and long.endswith("…")


# --- Multiclass (issue 26) -------------------------------------------------------------


def test_a_multiclass_upload_is_scored_as_scoring_evaluate_scores_its_files(
    challenge, participant, submit_zip
):
    """Single and ensemble lines mixed: the stored scores, terms and reported values are
    those of scoring.evaluate on the same files, with the dataset's options."""
    from challenge_site.submissions import terms as stored_terms
    from challenge_site.submissions.evaluation import REPORTED_KEY, read_dataset_targets
    from challenge_site.submissions.models import SplitResult

    from .helpers import make_shapes, scores_of, shapes_files

    shapes = make_shapes(challenge, log_base=2.0)
    files = shapes_files(("train", "val"), members=3)
    submission = submit_zip(participant, challenge, files, now=VALIDATION)
    assert submission.status == Status.SCORED, submission.errors or submission.failure_detail
    targets = read_dataset_targets(shapes)
    stored = scores_of(submission)
    plugins = [loss.name for loss in scoring.losses_for("multiclass") if is_plugin(loss)]
    for split in ("train", "val"):
        expected = scoring.evaluate(
            files[f"shapes_{split}_predict.txt"],
            targets[split],
            task="multiclass",
            options=scoring.ScoringOptions(log_base=2.0, classes=4, allow_ensembles=True),
            train_targets=targets["train"],
        )
        # The built-in losses, then the installed plug-ins' (spec §9, e.g. plugins/floorlog).
        assert list(expected.scores) == [
            *("nlp", "brier", "01l", "ece", "rmsce", "sce", "ace", "rauc", "aurc", *plugins)
        ]
        assert stored[split] == expected.scores
        result = SplitResult.objects.get(submission=submission, split=split)
        assert set(expected.reported) == {"tu", "du", "mi"}
        assert result.plot_data[REPORTED_KEY] == [list(item) for item in expected.reported.items()]
        assert result.plot_data["ensemble"]["members"][1] == 3
        kept = stored_terms.load(result.terms)
        assert set(kept) == {"nlp", "brier", "01l", *plugins}
        for loss in ("nlp", "brier", "01l", *plugins):
            assert kept[loss].mean() == pytest.approx(expected.scores[loss], rel=1e-12)


def test_the_multiclass_baseline_predicts_the_training_class_frequencies(
    challenge, django_capture_on_commit_callbacks
):
    from challenge_site.submissions.evaluation import REPORTED_KEY, read_dataset_targets
    from challenge_site.submissions.models import SplitResult
    from challenge_site.submissions.services import refresh_baseline

    from .helpers import make_shapes, scores_of

    shapes = make_shapes(challenge)
    with django_capture_on_commit_callbacks(execute=True):
        baseline = refresh_baseline(dataset=shapes, now=VALIDATION)
    baseline.refresh_from_db()
    assert baseline.status == Status.SCORED
    targets = read_dataset_targets(shapes)
    frequencies = np.bincount(targets["train"].astype(int), minlength=4) / targets["train"].size
    line = " ".join(repr(float(p)) for p in frequencies) + "\n"
    for split in ("train", "val", "test"):
        by_hand = scoring.evaluate(
            (line * targets[split].size).encode(),
            targets[split],
            task="multiclass",
            options=shapes.scoring_options,
        )
        expected = scoring.baseline(
            targets["train"], targets[split], task="multiclass", options=shapes.scoring_options
        )
        assert scores_of(baseline)[split] == expected.scores
        for loss, value in by_hand.scores.items():
            assert expected.scores[loss] == pytest.approx(value, rel=1e-12, abs=1e-15), loss
        result = SplitResult.objects.get(submission=baseline, split=split)
        assert REPORTED_KEY not in result.plot_data  # no ensemble lines


def test_a_multiclass_file_is_checked_with_the_dataset_s_classes_and_ensemble_rule(
    challenge, participant, submit_zip, target_reads
):
    """Four classes and no ensembles, whatever the file's first line holds; found before
    any target is read, each bad line named."""
    from .helpers import make_shapes

    make_shapes(challenge, allow_ensembles=False)
    single, five = "0.7 0.1 0.1 0.1\n", "0.6 0.1 0.1 0.1 0.1\n"
    lines = five + single * 22 + single.strip() + " " + single
    submission = submit_zip(
        participant, challenge, {"shapes_val_predict.txt": lines.encode()}, now=VALIDATION
    )
    assert submission.status == Status.INVALID
    assert [line.split(": ")[0] for line in submission.errors] == [
        "shapes_val_predict.txt:1",
        "shapes_val_predict.txt:24",
    ], submission.errors
    assert "4" in submission.errors[0]
    assert target_reads == []


def test_target_files_are_parsed_once_per_content_and_handed_out_as_copies(gaze, monkeypatch):
    from challenge_site.submissions import evaluation

    evaluation.KEPT.clear()
    fetched = []
    real = evaluation.read_bytes

    def counting(name, **kwargs):
        fetched.append(name)
        return real(name, **kwargs)

    monkeypatch.setattr(evaluation, "read_bytes", counting)
    first = evaluation.read_dataset_targets(gaze, {Split.VAL})[Split.VAL]
    expected = first.tolist()
    first[0] = 1e6  # a caller's change stays with the caller
    again = evaluation.read_dataset_targets(gaze, {Split.VAL, Split.TRAIN})
    assert again[Split.VAL].tolist() == expected
    assert len(again[Split.TRAIN]) == 6
    assert len(fetched) == 2  # validation once, then training; never validation again
    # The file replaced (another sha256): read afresh, never the kept parse.
    datafile = gaze.files.get(split=Split.VAL, kind=Kind.TARGETS)
    datafile.sha256 = "0" * 64
    datafile.save(update_fields=["sha256"])
    assert evaluation.read_dataset_targets(gaze, {Split.VAL})[Split.VAL].tolist() == expected
    assert len(fetched) == 3


def _finite_json_one_by_one(value):
    """The rule of ``_finite_json`` applied item by item, with no shortcut."""
    if isinstance(value, dict):
        return {key: _finite_json_one_by_one(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_finite_json_one_by_one(item) for item in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def test_plot_data_loses_every_non_finite_number_and_keeps_every_other_value():
    inf, nan = math.inf, math.nan
    rng = np.random.default_rng(29)
    odd = [nan, inf, -inf, 1e308, -1e308, 0.0, -0.0, 5e-324, 1, True, None, "NaN"]
    data = {
        "curve": rng.normal(size=50).tolist(),
        "with_nan": [0.5, nan, 0.25],
        "tail_inf": (1.0, 2.0, inf),
        "cancelling": [inf, -inf],  # a sum of NaN
        "overflowing": [1e308, 1e308, 1e308],  # finite items whose sum is inf
        "big_int": [10**400, 2.5],
        "ints": [1, 2, 3],
        "empty": [],
        "strings": ["a", "b"],
        "nested": [[0.1, nan], [0.2, 0.3], {"x": [inf], "y": 2.0}],
        "arrays": [np.array([1.0, 2.0]), np.array([3.0])],
        "mixed": [float(v) if isinstance(v, float) else v for v in odd],
        "random": [odd[i] for i in rng.integers(0, len(odd), size=200)],
        "scalar_nan": nan,
    }
    cleaned = _finite_json(data)
    expected = _finite_json_one_by_one(data)
    assert json.dumps(cleaned, default=repr, allow_nan=False) == json.dumps(
        expected, default=repr, allow_nan=False
    )
    assert cleaned["overflowing"] == [1e308, 1e308, 1e308]
    assert cleaned["cancelling"] == [None, None]
    assert cleaned["tail_inf"] == [1.0, 2.0, None]
    assert cleaned["big_int"] == [10**400, 2.5]
    assert cleaned["nested"][0] == [0.1, None]
    assert math.copysign(1.0, cleaned["mixed"][6]) == -1.0  # -0.0 kept as it is
    assert isinstance(cleaned["tail_inf"], list)
