"""Why an entry wins: the CORP decomposition on the submission page and in the API, the
recalibrated reliability diagram, the PIT coverage plot and the KS calibration test."""

import math

import numpy as np
import pytest
import time_machine
from django.test import Client

import scoring
from challenge_site.submissions.evaluation import read_dataset_targets
from challenge_site.submissions.models import SplitResult
from datasets.models import Split
from scoring.corp_bands import decomposition_intervals, seed_for
from scoring.decomposition import corp
from tests.factories import AFTER, TEST_PHASE, VALIDATION
from tests.pages import page_text

from .helpers import predictions

CAPTION = "split — why this score: miscalibration (MCB), discrimination (DSC), uncertainty (UNC)"
SENTENCE = "Each score splits as S = MCB − DSC + UNC"


def get(url, *, user=None):
    client = Client()
    with time_machine.travel(AFTER, tick=False):
        if user is not None:
            client.force_login(user)
        return client.get(url)


def _values(data: bytes) -> np.ndarray:
    return np.array([float(line) for line in data.split()])


@pytest.fixture
def both_splits(catalysis, participant, submit_zip):
    """A classification submission with validation and test predictions (test hidden)."""
    files = predictions("catalysis", ("val", "test"), task="classification")
    submission = submit_zip(participant, catalysis.challenge, files, now=TEST_PHASE)
    return submission, files


def test_page_explains_a_visible_classification_split(both_splits, catalysis, other):
    submission, files = both_splits
    text = page_text(get(f"/submissions/{submission.pk}/", user=other))
    assert f"Validation {CAPTION}" in text and SENTENCE in text
    assert "lower is better" in text and "higher is better" in text
    targets = read_dataset_targets(catalysis, [Split.VAL])[Split.VAL]
    p = _values(files["catalysis_val_predict.txt"])
    expected = corp(p, targets)["nlp"]
    # MCB and DSC with their 95 % bootstrap intervals, from the n-derived seed.
    bounds = decomposition_intervals(p, targets, seed=seed_for(p.size, "intervals"))["nlp"]
    mcb, dsc = (
        f"{expected[part]:.4g} [{bounds[part][0]:.4g}, {bounds[part][1]:.4g}]"
        for part in ("mcb", "dsc")
    )
    row = f"{expected['score']:.4g} {mcb} {dsc} {expected['unc']:.4g}"
    assert f"Loss Score MCB DSC UNC nlp {row} brier" in text
    assert "In brackets: 95 % intervals from 1000 bootstrap resamples" in text


def test_api_gives_the_decomposition_of_visible_splits(both_splits, catalysis, other):
    submission, files = both_splits
    body = get(f"/api/v1/submissions/{submission.pk}/", user=other).json()
    assert set(body["decomposition"]) == {"val"} == set(body["scores"])
    targets = read_dataset_targets(catalysis, [Split.VAL])[Split.VAL]
    expected = corp(_values(files["catalysis_val_predict.txt"]), targets)
    assert set(body["decomposition"]["val"]) == {"nlp", "brier"}
    for loss in ("nlp", "brier"):
        parts = body["decomposition"]["val"][loss]
        assert parts == {
            part: pytest.approx(expected[loss][part]) for part in ("mcb", "dsc", "unc")
        }
        score = body["scores"]["val"][loss]
        assert score == pytest.approx(parts["mcb"] - parts["dsc"] + parts["unc"], abs=1e-12)


@pytest.mark.parametrize("published", [False, True])
@pytest.mark.parametrize("viewer", ["anonymous", "other", "owner", "staff"])
def test_a_hidden_test_split_never_leaks_its_decomposition(
    both_splits, catalysis, participant, other, staff, viewer, published
):
    submission, _ = both_splits
    catalysis.challenge.results_published = published
    with time_machine.travel(AFTER, tick=False):
        catalysis.challenge.save()
    user = {"anonymous": None, "other": other, "owner": participant, "staff": staff}[viewer]
    sees_test = published or viewer == "staff"
    text = page_text(get(f"/submissions/{submission.pk}/", user=user))
    assert f"Validation {CAPTION}" in text
    assert (f"Test {CAPTION}" in text) is sees_test
    body = get(f"/api/v1/submissions/{submission.pk}/", user=user).json()
    assert set(body["decomposition"]) == ({"val", "test"} if sees_test else {"val"})
    assert set(body["decomposition"]) == set(body["scores"])


def test_infinite_miscalibration_is_shown_as_infinity(catalysis, participant, submit_zip):
    targets = read_dataset_targets(catalysis, [Split.VAL])[Split.VAL]
    # The first +1 target gets probability 0: nlp and its MCB are infinite.
    p = np.full(targets.size, 0.5)
    p[int(np.flatnonzero(targets == 1)[0])] = 0.0
    files = {"catalysis_val_predict.txt": "".join(f"{x}\n" for x in p).encode()}
    submission = submit_zip(participant, catalysis.challenge, files, now=VALIDATION)
    stored = SplitResult.objects.get(submission=submission, split="val").plot_data
    assert stored["decomposition"]["nlp"]["mcb"] is None  # JSON: non-finite as null
    body = get(f"/api/v1/submissions/{submission.pk}/").json()
    nlp = body["decomposition"]["val"]["nlp"]
    assert nlp["mcb"] == "inf" and body["scores"]["val"]["nlp"] == "inf"
    assert math.isfinite(nlp["dsc"]) and math.isfinite(nlp["unc"])
    text = page_text(get(f"/submissions/{submission.pk}/"))
    assert "Loss Score MCB DSC UNC nlp ∞ ∞ " in text


def test_non_probabilistic_predictions_get_no_decomposition(catalysis, participant, submit_zip):
    files = {"catalysis_val_predict.txt": b"1\n0\n1\n0\n"}
    submission = submit_zip(participant, catalysis.challenge, files, now=VALIDATION)
    body = get(f"/api/v1/submissions/{submission.pk}/").json()
    assert body["decomposition"] == {"val": {"nlp": None, "brier": None}}
    assert CAPTION not in page_text(get(f"/submissions/{submission.pk}/"))


def test_reliability_diagram_draws_the_recalibrated_curve(both_splits):
    submission, _ = both_splits
    svg = get(f"/submissions/{submission.pk}/plots/val.svg").content.decode()
    assert "recalibrated (PAV)" in svg and "Observed frequency" in svg


def test_regression_page_shows_coverage_and_the_calibration_test(gaze, participant, submit_zip):
    files = predictions("gaze", ("val",))
    submission = submit_zip(participant, gaze.challenge, files, now=VALIDATION)
    result = SplitResult.objects.get(submission=submission, split="val")
    test = result.plot_data["calibration_test"]
    assert test["test"] == "Kolmogorov–Smirnov" and 0 <= test["p_value"] <= 1
    response = get(f"/submissions/{submission.pk}/")
    text = page_text(response)
    assert "Central interval Observed coverage 10 %" in text and "95 %" in text
    assert "Calibration test (Kolmogorov–Smirnov, PIT values against uniform):" in text
    p = test["p_value"]
    if p >= 0.05:
        assert f"PIT values consistent with uniform (KS p = {p:.2f})" in text
    else:
        assert "not calibrated at the 5 % level (p" in text
    assert CAPTION not in text
    assert "The central 50 %, 80 % and 95 % predictive intervals hold the target" in text
    svg = get(f"/submissions/{submission.pk}/plots/val.svg").content.decode()
    assert "Interval coverage" in svg and "PIT value F(y)" in svg
    assert get(f"/api/v1/submissions/{submission.pk}/").json()["decomposition"] == {}


@pytest.mark.parametrize("task", ["classification", "regression"])
def test_results_scored_before_still_render_without_extras(
    catalysis, gaze, participant, submit_zip, task
):
    dataset = catalysis if task == "classification" else gaze
    files = predictions(dataset.name, ("val",), task=task)
    submission = submit_zip(participant, dataset.challenge, files, now=VALIDATION)
    result = SplitResult.objects.get(submission=submission, split="val")
    if task == "classification":
        old = {"reliability": result.plot_data["reliability"]}
    else:
        pit = result.plot_data["pit"]
        coverage = {level: pit["coverage"][level] for level in ("50", "80", "95")}
        old = {"pit": {**pit, "coverage": coverage}}
    SplitResult.objects.filter(pk=result.pk).update(plot_data=old)
    response = get(f"/submissions/{submission.pk}/")
    assert response.status_code == 200
    text = page_text(response)
    assert CAPTION not in text and "Calibration test" not in text
    assert "Central interval Observed coverage" not in text
    svg = get(f"/submissions/{submission.pk}/plots/val.svg")
    assert svg.status_code == 200
    assert "recalibrated (PAV)" not in svg.content.decode()
    assert "Interval coverage" not in svg.content.decode()
    assert get(f"/api/v1/submissions/{submission.pk}/").json()["decomposition"] == {}


def test_the_stored_decomposition_is_the_scoring_packages(catalysis, participant, submit_zip):
    files = predictions("catalysis", ("val",), task="classification")
    submission = submit_zip(participant, catalysis.challenge, files, now=VALIDATION)
    stored = SplitResult.objects.get(submission=submission, split="val").plot_data
    targets = read_dataset_targets(catalysis, [Split.VAL])[Split.VAL]
    p = _values(files["catalysis_val_predict.txt"])
    options = scoring.ScoringOptions(log_base=catalysis.log_base)
    assert stored["decomposition"] == corp(p, targets, log_base=options.log_base)
    assert len(stored["recalibration"]["histogram"]) == 20
