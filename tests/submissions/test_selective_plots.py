"""submissions.selective_plots: a split's retention and risk–coverage curves (spec §8) as SVG
drawn by matplotlib from stored plot data, cached per picture, and the numbers the page
shows beside them."""

import json
import math

import numpy as np
import pytest
from django.core.cache import cache

import scoring
from challenge_site.submissions import selective_plots
from challenge_site.submissions.models import SplitResult
from tests.factories import VALIDATION

from .helpers import predictions
from .test_multiclass_plots import assert_clean, texts

# Four examples by certainty with errors 1, 0, 1, 0 (scoring.selective's hand table):
# E = 1, 1, 2, 2; the oracle's 0, 0, 1, 2; rAUC 6/16, the oracle's 3/16, random's 5/16.
RETENTION = {
    "coverage": [0.25, 0.5, 0.75, 1.0],
    "model": [0.25, 0.25, 0.5, 0.5],
    "oracle": [0.0, 0.0, 0.25, 0.5],
    "random": [0.125, 0.25, 0.375, 0.5],
    "risk_model": [1.0, 0.5, 2 / 3, 0.5],
    "risk_oracle": [0.0, 0.0, 1 / 3, 0.5],
    "risk_random": [0.5] * 4,
    "rauc": {"model": 6 / 16, "oracle": 3 / 16, "random": 5 / 16},
    "aurc": {"model": (1 + 0.5 + 2 / 3 + 0.5) / 4, "oracle": (1 / 3 + 0.5) / 4, "random": 0.5},
}


def scored(task: str, preds: str, targets: str) -> dict:
    evaluation = scoring.evaluate(preds.encode(), targets.encode(), task=task)
    return json.loads(json.dumps(evaluation.plot_data(), default=None, allow_nan=True))


def test_the_hand_table_is_what_scoring_stores():
    # The same four examples through scoring: p surest first 0.9 (wrong), 0.8 (right),
    # 0.7 (wrong), 0.6 (right).
    data = scored("classification", "0.9\n0.8\n0.7\n0.6\n", "-1\n1\n-1\n1\n")["retention"]
    assert set(data) == set(RETENTION)
    for key, value in RETENTION.items():
        assert data[key] == pytest.approx(value, rel=1e-15), key


def test_the_retention_curve_starts_at_zero_and_names_the_areas():
    svg = selective_plots.retention_svg(RETENTION, title="gaze, validation split")
    assert_clean(svg)
    shown = texts(svg)
    assert "gaze, validation split:\nretention curve" in "\n".join(shown)
    assert "this entry (rAUC 0.375)" in shown
    assert "oracle (rAUC 0.188)" in shown
    assert "random (rAUC 0.312)" in shown
    assert "Share of the examples kept, surest first (coverage)" in shown


def test_the_risk_coverage_curve_names_the_areas():
    svg = selective_plots.risk_coverage_svg(RETENTION, title="t")
    assert_clean(svg)
    shown = texts(svg)
    assert "this entry (AURC 0.667)" in shown
    assert "random (AURC 0.5)" in shown
    assert "Mean error of the examples kept" in shown


def test_an_infinite_value_stored_as_none_breaks_the_line_and_reads_infinity():
    data = {**RETENTION, "model": [0.25, None, None, None], "rauc": {**RETENTION["rauc"]}}
    data["rauc"]["model"] = None
    svg = selective_plots.retention_svg(data, title="t")
    assert_clean(svg)
    assert "this entry (rAUC ∞)" in texts(svg)


def test_kinds_follow_the_plot_data_key_never_a_task():
    assert selective_plots.kinds({"pit": {}}) == []
    assert selective_plots.kinds({"retention": None}) == []  # a non-probabilistic file
    assert selective_plots.kinds({"retention": RETENTION}) == ["retention", "risk_coverage"]


def test_the_table_lists_every_tenth_of_the_coverage():
    shown = selective_plots.figures({"retention": RETENTION})
    # Four points: 10 % and 20 % both read the first (25 %), listed once.
    assert [row["coverage"] for row in shown["rows"]] == [0.25, 0.5, 0.75, 1.0]
    assert shown["rows"][0] == {
        "coverage": 0.25,
        "model": 0.25,
        "oracle": 0.0,
        "random": 0.125,
        "risk_model": 1.0,
        "risk_oracle": 0.0,
        "risk_random": 0.5,
    }
    assert shown["rauc"] == RETENTION["rauc"] and shown["kinds"] == list(selective_plots.KINDS)
    assert selective_plots.figures({})["rows"] == []


def test_a_large_file_has_ten_table_rows_at_the_tenths():
    rng = np.random.default_rng(4)
    n = 1000
    p = rng.uniform(size=n)
    t = np.where(rng.uniform(size=n) < p, 1, -1)
    data = scored(
        "classification",
        "".join(f"{x!r}\n" for x in p.tolist()),
        "".join(f"{x}\n" for x in t.tolist()),
    )
    rows = selective_plots.figures(data)["rows"]
    assert [row["coverage"] for row in rows] == pytest.approx([k / 10 for k in range(1, 11)])
    assert rows[-1]["model"] == pytest.approx(np.mean((p >= 0.5) != (t == 1)))


@pytest.mark.parametrize(
    ("task", "preds", "targets"),
    [
        ("classification", "0.9\n0.2\n0.6\n0.55\n", "1\n1\n-1\n1\n"),
        ("regression", "1 0 1\n1 2 3\n0 0.1 -1 0.5 0 0.9 1\n2 1 2 4\n", "0\n1\n2\n3\n"),
        ("multiclass", "0.7 0.3\n0.4 0.6\n0.5 0.5\n", "0\n0\n1\n"),
    ],
)
def test_scoring_output_of_every_task_is_drawn(task, preds, targets):
    data = scored(task, preds, targets)
    for draw in (selective_plots.retention_svg, selective_plots.risk_coverage_svg):
        svg = draw(data["retention"], title="t")
        assert_clean(svg)


def test_pictures_are_cached_per_kind_and_a_missing_one_is_a_key_error(
    gaze, participant, submit_zip
):
    submission = submit_zip(participant, gaze.challenge, predictions("gaze"), now=VALIDATION)
    result = SplitResult.objects.get(submission=submission, split="val")
    # A scored regression entry stores its retention: drawn from what scoring kept.
    assert selective_plots.kinds(result.plot_data) == ["retention", "risk_coverage"]
    stored = result.plot_data["retention"]
    assert stored["rauc"]["oracle"] <= stored["rauc"]["model"]
    svg = selective_plots.cached_svg(result, kind="retention", dataset_name="gaze", version="v1")
    assert cache.get(f"submission-plot:{submission.pk}:val:retention:v1") == svg
    assert "gaze, validation split:\nretention curve" in "\n".join(texts(svg))
    model = stored["rauc"]["model"]
    assert f"this entry (rAUC {model:.3g})" in texts(svg)
    risk = selective_plots.cached_svg(
        result, kind="risk_coverage", dataset_name="gaze", version="v1"
    )
    assert risk != svg
    result.plot_data = {**result.plot_data, "retention": None}
    with pytest.raises(KeyError, match="no retention picture in the plot data of the val split"):
        selective_plots.cached_svg(result, kind="retention", dataset_name="gaze", version="v2")
    assert cache.get(f"submission-plot:{submission.pk}:val:retention:v2") is None
    assert math.isfinite(model)
