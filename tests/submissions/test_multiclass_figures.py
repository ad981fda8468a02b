"""The multiclass_figures tag: a split's pictures on the submission page (chosen by the
keys of its plot data), each with its numbers as a table, and the picture URLs with the
page's visibility rules."""

import json
import re

import pytest
import time_machine

import scoring
from challenge_site.challenges.services import publish_results
from challenge_site.submissions.models import SplitResult, Status
from tests.factories import AFTER, TEST_PHASE, VALIDATION
from tests.pages import page_text

from .helpers import make_shapes, predictions, shapes_files, stored_file
from .test_multiclass_plots import TOP_LABEL, classwise, confusion_of

ENSEMBLE = {"tu": 0.92, "du": 0.61, "mi": 0.31, "examples": 44, "members": [5, 5], "log_base": 2.0}
KINDS = ("top_label", "classwise", "confusion", "ensemble")


def multiclass_data(classes: int, *, ensemble: bool = True) -> dict:
    """Plot data of the interface's shape for ``classes`` classes, as stored (JSON)."""
    targets = [k % classes for k in range(3 * classes)]
    predicted = [(k + (k % 4 == 0)) % classes for k in range(3 * classes)]
    data = {
        "top_label": TOP_LABEL,
        "classwise": classwise(classes, seed=classes) if classes <= 20 else None,
        "confusion": confusion_of(targets, predicted, classes),
    }
    if ensemble:
        data["ensemble"] = ENSEMBLE
    return json.loads(json.dumps(data, allow_nan=False))


@pytest.fixture
def entry(catalysis, participant, submit_zip):
    """A scored entry on the validation and test splits whose plot data is replaced by a
    multiclass one (the page asks the keys, never the task)."""
    files = predictions("catalysis", ("val", "test"), task="classification")
    submission = submit_zip(participant, catalysis.challenge, files, now=TEST_PHASE)

    def store(split: str, data: dict):
        SplitResult.objects.filter(submission=submission, split=split).update(plot_data=data)
        return submission

    return store


def picture(pk: int, split: str, kind: str) -> str:
    return f"/submissions/{pk}/plots/{split}/{kind}.svg"


def test_the_page_shows_each_picture_with_its_table(client, entry):
    submission = entry("val", multiclass_data(3))
    with time_machine.travel(AFTER, tick=False):
        page = client.get(f"/submissions/{submission.pk}/")
    html, text = page.content.decode(), page_text(page)
    for kind in KINDS:
        assert f'src="{picture(submission.pk, "val", kind)}"' in html
    # Two columns of class-wise panels for a phone's screen.
    narrow = picture(submission.pk, "val", "classwise_narrow")
    assert f'<source media="(max-width: 40rem)" srcset="{narrow}" width="460">' in html
    assert f"/submissions/{submission.pk}/plots/val.svg" not in html
    assert 'alt="Top-label reliability diagram of the validation split: accuracy' in html
    assert 'alt="Confusion matrix of the validation split, true classes in rows' in html
    ece, rmsce = f"{TOP_LABEL['ece']:.4g}", f"{TOP_LABEL['rmsce']:.4g}"
    assert f"Top-label calibration: ECE {ece} , RMSCE {rmsce} ; accuracy 80.0 % at a mean" in text
    assert "Confidence Examples Mean confidence Accuracy 0.000–0.067 0 n/a n/a" in text
    assert "0.400–0.467 10 0.42 0.4" in text
    assert "Mean predicted Observed frequency 0 (33.3 % of the targets)" in text
    # 9 examples, class k % 3 for example k; examples 0, 4 and 8 taken for the next class.
    assert "True class 0 1 2 Accuracy 0 2 1 0 66.7 % 1 0 2 1 66.7 % 2 1 0 2 66.7 %" in text
    assert "in bits: total uncertainty (TU, the entropy of the members' mean) 0.92" in text
    assert "Total (TU) 0.92 Data (DU) 0.61 Mutual information (MI) 0.31" in text
    assert "Reliability diagram of the validation split: the observed frequency of +1" not in text

    with time_machine.travel(AFTER, tick=False):
        for kind in (*KINDS, "classwise_narrow"):
            response = client.get(picture(submission.pk, "val", kind))
            assert response.status_code == 200, kind
            assert response["Content-Type"] == "image/svg+xml"
            assert "'unsafe-inline'" in response["Content-Security-Policy"]
            again = client.get(
                picture(submission.pk, "val", kind), HTTP_IF_NONE_MATCH=response["ETag"]
            )
            assert again.status_code == 304
        # The binary picture's URL has nothing to draw from multiclass plot data.
        assert client.get(f"/submissions/{submission.pk}/plots/val.svg").status_code == 404
        assert client.get(picture(submission.pk, "val", "pit")).status_code == 404
    assert "'unsafe-inline'" not in page["Content-Security-Policy"]


def test_fifty_classes_show_the_most_confused_pairs_and_the_accuracy_per_class(client, entry):
    submission = entry("val", multiclass_data(50, ensemble=False))
    with time_machine.travel(AFTER, tick=False):
        page = client.get(f"/submissions/{submission.pk}/")
        assert client.get(picture(submission.pk, "val", "confusion")).status_code == 404
        assert client.get(picture(submission.pk, "val", "classwise")).status_code == 404
        assert client.get(picture(submission.pk, "val", "ensemble")).status_code == 404
        assert client.get(picture(submission.pk, "val", "top_label")).status_code == 200
    html, text = page.content.decode(), page_text(page)
    assert picture(submission.pk, "val", "top_label") in html
    for kind in ("classwise", "confusion", "ensemble"):
        assert picture(submission.pk, "val", kind) not in html
    caption = (
        "The most confused classes of the validation split (50 classes: too many for a matrix)"
    )
    assert caption in text
    # 150 examples, class k % 50 for example k, every 4th taken for the next class: the
    # 38 errors, 13 pairs twice (examples k and k + 100), the first of them 0 → 1.
    assert "True class Predicted as Examples Share of the true class 0 1 2 66.7 %" in text
    assert "Accuracy of each of the 50 classes in the validation split" in text
    assert "Class Examples Correct Accuracy 0 3 1 33.3 % 1 3 3 100.0 %" in text


@pytest.mark.parametrize("published", [False, True])
def test_test_split_pictures_wait_for_publication(client, entry, published):
    entry("val", multiclass_data(3))
    submission = entry("test", multiclass_data(3))
    challenge = submission.dataset.challenge
    if published:
        publish_results(challenge=challenge, user=None, now=AFTER, via="test")
    with time_machine.travel(AFTER, tick=False):
        html = client.get(f"/submissions/{submission.pk}/").content.decode()
        for kind in KINDS:
            assert (picture(submission.pk, "test", kind) in html) is published
            status = client.get(picture(submission.pk, "test", kind)).status_code
            assert status == (200 if published else 404)
            assert picture(submission.pk, "val", kind) in html


def test_a_scored_multiclass_entry_shows_its_own_numbers(
    client, challenge, participant, submit_zip
):
    """Through the whole pipeline: a 4-class dataset, an upload with ensemble rows, its
    stored plot data drawn and tabulated as scoring computed it."""
    shapes = make_shapes(challenge)
    files = shapes_files(("val",))
    submission = submit_zip(participant, challenge, files, now=VALIDATION)
    assert submission.status == Status.SCORED
    targets = stored_file(shapes, "val", "targets")
    options = shapes.scoring_options
    expected = scoring.evaluate(
        files["shapes_val_predict.txt"], targets, task=shapes.task, options=options
    ).plot_data()
    stored = SplitResult.objects.get(submission=submission, split="val").plot_data
    assert stored["confusion"] == expected["confusion"]
    with time_machine.travel(AFTER, tick=False):
        page = client.get(f"/submissions/{submission.pk}/")
        for kind in (*KINDS, "classwise_narrow"):
            response = client.get(picture(submission.pk, "val", kind))
            assert response.status_code == 200, kind
            assert not re.search(rb"\bnan\b", response.content, flags=re.IGNORECASE)
    html, text = page.content.decode(), page_text(page)
    for kind in KINDS:
        assert picture(submission.pk, "val", kind) in html
    cells = " ".join(
        f"{k} {' '.join(map(str, row))} " + ("–" if not n else f"{c / n * 100:.1f} %")
        for k, (row, n, c) in enumerate(
            (row, sum(row), row[k]) for k, row in enumerate(expected["confusion"]["matrix"])
        )
    )
    assert f"True class 0 1 2 3 Accuracy {cells}" in text
    top = expected["top_label"]
    assert f"ECE {top['ece']:.4g} , RMSCE {top['rmsce']:.4g} ;" in text
    ensemble = expected["ensemble"]
    assert ensemble["examples"] == 12  # every other row of the 24 is an ensemble row
    assert f"Total (TU) {ensemble['tu']:.4g} Data (DU) {ensemble['du']:.4g}" in text
