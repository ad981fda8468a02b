"""submissions.plots: a scored split's reliability diagram or PIT histogram, drawn as
SVG by matplotlib from the stored plot data, cached per scoring run."""

import pytest
import time_machine
from django.core.cache import cache

from challenge_site.submissions import plots
from challenge_site.submissions.models import SplitResult
from scoring import plots as scoring_plots
from tests.factories import AFTER, VALIDATION, make_dataset

from .helpers import predictions


def test_the_svg_follows_the_stored_plot_data(gaze, participant, submit_zip):
    entry = submit_zip(participant, gaze.challenge, predictions("gaze"), now=VALIDATION)
    result = SplitResult.objects.get(submission=entry, split="val")
    svg = plots.render(result, dataset_name="gaze")
    assert svg.lstrip().startswith("<?xml") and "gaze, validation split" in svg
    assert "PIT value F(y)" in svg and "Observed frequency" not in svg
    # Results scored before the calibration test keep the single panel.
    assert "coverage" in svg.lower()
    older = {"pit": result.plot_data["pit"]}
    SplitResult.objects.filter(pk=result.pk).update(plot_data=older)
    result.refresh_from_db()
    assert plots.render(result, dataset_name="gaze") != svg
    key = f"submission-plot:{entry.pk}:val:v1"
    assert plots.cached_svg(result, dataset_name="gaze", version="v1") == cache.get(key)


def test_a_reliability_diagram_draws_the_bins_it_is_given():
    bins = scoring_plots.reliability([0.1, 0.2, 0.8, 0.9], [-1, 1, 1, 1])
    svg = plots.reliability_svg(bins, title="coins, test split")
    assert "coins, test split" in svg and "Observed frequency" in svg
    assert svg.count("<svg") == 1


@pytest.mark.parametrize(
    ("name", "task", "marker"),
    [
        ("gaze", "regression", "PIT value F(y)"),
        ("catalysis", "classification", "Observed frequency"),
    ],
)
def test_plots_are_svg_drawn_by_matplotlib_and_cached(
    client, challenge, participant, submit_zip, name, task, marker
):
    make_dataset(challenge, name, task=task)
    submission = submit_zip(
        participant, challenge, predictions(name, ("val",), task=task), now=VALIDATION
    )
    url = f"/submissions/{submission.pk}/plots/val.svg"
    with time_machine.travel(AFTER, tick=False):
        response = client.get(url)
        assert response.status_code == 200
        assert response["Content-Type"] == "image/svg+xml"
        svg = response.content.decode()
        assert svg.lstrip().startswith("<?xml") and "<svg" in svg and marker in svg
        assert "matplotlib" in svg
        assert client.get(url, HTTP_IF_NONE_MATCH=response["ETag"]).status_code == 304
        assert client.get(url).content.decode() == svg
        assert client.get(f"/submissions/{submission.pk}/plots/train.svg").status_code == 404
    assert "no-cache" in response["Cache-Control"] and "private" in response["Cache-Control"]
