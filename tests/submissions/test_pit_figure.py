"""A sample (ensemble) submission's PIT histogram on the site: the stored plot data hold
fractional counts (each example spread over its verification-rank PIT interval,
scoring.distributions.sample_stats) and the figure draws them."""

import pytest

from challenge_site.submissions import plots
from challenge_site.submissions.models import SplitResult
from tests.factories import VALIDATION


def test_an_ensemble_submission_stores_and_draws_fractional_pit_counts(
    gaze, participant, submit_zip
):
    # Two members far either side of every target: rank 1 of {0, 1, 2}, PIT uniform on
    # [1/3, 2/3], which covers 0.2, 0.3, 0.3 and 0.2 of the bins 3 to 6.
    files = {"gaze_val_predict.txt": b"2 -1e6 1e6\n" * 4}
    entry = submit_zip(participant, gaze.challenge, files, now=VALIDATION)
    result = SplitResult.objects.get(submission=entry, split="val")
    pit = result.plot_data["pit"]
    assert pit["n"] == 4
    assert [b["count"] for b in pit["bins"]] == pytest.approx(
        [0, 0, 0, 0.8, 1.2, 1.2, 0.8, 0, 0, 0], abs=1e-3
    )
    assert pit["coverage"]["50"] == pytest.approx(1.0)  # [1/3, 2/3] ⊂ [0.25, 0.75]
    assert pit["coverage"]["10"] == pytest.approx(0.3)  # [0.45, 0.55]: 0.1 of 1/3
    assert result.plot_data["calibration_test"]["statistic"] == pytest.approx(1 / 3)
    svg = plots.render(result, dataset_name="gaze")
    assert "PIT value F(y)" in svg and svg.count("<svg") == 1
