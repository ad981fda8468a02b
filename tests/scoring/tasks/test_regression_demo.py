"""scoring.tasks.regression_demo: the demo leaderboard's regression methods."""

import numpy as np
import pytest

import scoring
from scoring.tasks.demo import Data
from scoring.tasks.regression_demo import DEMO, knn_quantiles


@pytest.mark.parametrize("gap", [0.3, 0.5])
@pytest.mark.parametrize("seed", range(8))
def test_quantiles_pass_the_scoring_check_of_the_minimum_gap(gap, seed):
    """The demo's quantile rows pass scoring's own check, which compares the doubles
    exactly (spec §1): q + gap rounded must not fall an ulp short of the gap."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(50, 2))
    y = np.round(rng.normal(size=50) * 7, 3)  # many equal neighbours, values not like the gap
    predictions = knn_quantiles(Data(x, y, x[:20], rng, min_quantile_gap=gap))
    for line in predictions.decode().splitlines():
        values = [float(v) for v in line.split()]
        levels = values[1::2]
        assert values[0] == 0 and levels == sorted(set(levels))
    result = scoring.evaluate(
        predictions,
        np.round(rng.normal(size=20), 3),
        task="regression",
        options=scoring.ScoringOptions(min_quantile_gap=gap),
    )
    assert result.scores["crps"] is not None


def test_the_sample_method_goes_only_to_datasets_that_accept_samples():
    allowing = [method.title for _, method in DEMO.chosen(scoring.ScoringOptions())]
    refusing = [m.title for _, m in DEMO.chosen(scoring.ScoringOptions(allow_samples=False))]
    assert allowing == [*refusing[:4], "Bootstrap ensemble (samples)"] and len(refusing) == 4
