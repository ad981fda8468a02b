"""The CORP reliability diagram on the submission page: the PAV curve in its consistency
band, and MCB and DSC with their bootstrap intervals; older results still render."""

import numpy as np
import pytest
import time_machine
from django.test import Client

from challenge_site.submissions import multiclass_plots
from challenge_site.submissions.evaluation import read_dataset_targets
from challenge_site.submissions.models import SplitResult
from datasets.models import Split
from scoring import multiclass
from scoring.corp_bands import consistency_bands, decomposition_intervals, inside, seed_for
from scoring.decomposition import corp
from tests.factories import AFTER, VALIDATION
from tests.pages import page_text

from .helpers import predictions

BAND_LABEL = "90 % consistency band"
BRACKETS = "In brackets: 95 % intervals from 1000 bootstrap resamples"


def get(url):
    with time_machine.travel(AFTER, tick=False):
        return Client().get(url)


@pytest.fixture
def scored(catalysis, participant, submit_zip):
    files = predictions("catalysis", ("val",), task="classification")
    submission = submit_zip(participant, catalysis.challenge, files, now=VALIDATION)
    p = np.array([float(line) for line in files["catalysis_val_predict.txt"].split()])
    targets = read_dataset_targets(catalysis, [Split.VAL])[Split.VAL]
    return submission, p, targets


def test_the_page_shows_mcb_and_dsc_with_their_intervals(scored):
    submission, p, targets = scored
    stored = SplitResult.objects.get(submission=submission, split="val").plot_data
    intervals = decomposition_intervals(p, targets, seed=seed_for(p.size, "intervals"))
    assert stored["decomposition_intervals"] == intervals
    text = page_text(get(f"/submissions/{submission.pk}/"))
    expected = corp(p, targets)
    for name in ("brier", "nlp"):
        for part in ("mcb", "dsc"):
            lower, upper = intervals[name][part]
            assert lower <= upper
            assert f"{expected[name][part]:.4g} [{lower:.4g}, {upper:.4g}]" in text
    assert BRACKETS in text


def test_the_reliability_diagram_draws_the_band(scored):
    submission, p, targets = scored
    stored = SplitResult.objects.get(submission=submission, split="val").plot_data
    bands = consistency_bands(p, seed=seed_for(p.size, "bands"))
    assert stored["bands"] == {**bands, "inside": inside(bands, p, targets)}
    text = page_text(get(f"/submissions/{submission.pk}/"))
    share = f"{stored['bands']['inside'] * 100:.1f} %"
    assert "the curve lies inside the 90 % consistency band (where a calibrated" in text
    assert f"from 100 resamples of the outcomes) at {share} of the forecast values" in text
    svg = get(f"/submissions/{submission.pk}/plots/val.svg").content.decode()
    assert BAND_LABEL in svg and "CORP: recalibrated (PAV)" in svg


def test_results_stored_before_the_bands_render_without_them(scored):
    submission, _, _ = scored
    result = SplitResult.objects.get(submission=submission, split="val")
    old = {
        key: value
        for key, value in result.plot_data.items()
        if key not in ("bands", "decomposition_intervals")
    }
    SplitResult.objects.filter(pk=result.pk).update(plot_data=old)
    response = get(f"/submissions/{submission.pk}/")
    assert response.status_code == 200
    text = page_text(response)
    assert "why this score" in text and BRACKETS not in text
    assert "consistency band" not in text
    assert "95 % bootstrap interval" not in response.content.decode()
    svg = get(f"/submissions/{submission.pk}/plots/val.svg").content.decode()
    assert "CORP: recalibrated (PAV)" in svg and BAND_LABEL not in svg


def test_the_top_label_diagram_draws_its_corp_curve_in_its_band():
    rng = np.random.default_rng(6)
    logits = rng.normal(size=(400, 3))
    probs = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    y = rng.integers(0, 3, size=400)
    top_label = multiclass.plot_data(probs, y)["top_label"]
    svg = multiclass_plots.top_label_svg(top_label, title="three classes, test split")
    assert BAND_LABEL in svg and "CORP: recalibrated (PAV)" in svg
    # Stored before the CORP curve: the bins alone.
    older = {key: value for key, value in top_label.items() if key != "corp"}
    svg = multiclass_plots.top_label_svg(older, title="three classes, test split")
    assert BAND_LABEL not in svg and "CORP" not in svg and "gap to the mean confidence" in svg


def test_one_hot_votes_name_no_band_in_the_legend():
    # Every confidence is 1: the band is one point with no area, so the legend must not
    # name it; the CORP curve is a single point, drawn as a marker.
    y = np.random.default_rng(7).integers(0, 3, size=200)
    probs = np.eye(3)[np.roll(y, 1)]
    top_label = multiclass.plot_data(probs, y)["top_label"]
    svg = multiclass_plots.top_label_svg(top_label, title="one-hot votes")
    assert BAND_LABEL not in svg
    assert "CORP: recalibrated (PAV)" in svg
