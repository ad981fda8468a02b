"""A loss from another package (spec §9) on the site, from real uploads through scoring: the
example plug-in plugins/floorlog (installed for the tests by requirements-test.txt) is
scored, stored, given intervals from its terms, shown, sorted by and listed with its title
and reference, like a built-in loss; a dataset's list of shown losses (Dataset.losses)
decides the columns, and entries scored before a loss was installed are scored again."""

import math

import numpy as np
import pytest
from django.core.management import call_command
from django.urls import reverse

import scoring
from challenge_site.leaderboard import intervals
from challenge_site.submissions import terms as stored_terms
from challenge_site.submissions.evaluation import read_dataset_targets
from challenge_site.submissions.models import Score, SplitResult, Status
from challenge_site.submissions.services import lacking_losses
from datasets.models import Split
from datasets.services import losses_changed
from scoring import bootstrap
from tests.factories import AFTER, make_dataset

FIELDS = intervals.FIELDS
N = 40


def probabilities(seed: int) -> np.ndarray:
    """p(y = +1) per validation row; the first two certain and wrong (the dataset's first
    targets are −1 and +1), where the floor of 0.001 decides the term."""
    p = np.random.default_rng(seed).uniform(0.02, 0.98, N)
    p[:2] = [1.0, 0.0]
    return p


def prediction_file(seed: int) -> bytes:
    return "".join(f"{float(value)!r}\n" for value in probabilities(seed)).encode()


def floored_terms(p: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """−ln max(p(true class), 0.001), written from the plug-in's definition."""
    return np.array(
        [-math.log(max(pi if t == 1 else 1.0 - pi, 1e-3)) for pi, t in zip(p, targets, strict=True)]
    )


def _row(submission, loss="floorlog", split="val") -> dict:
    return (
        Score.objects.filter(submission=submission, split=split, loss=loss)
        .values(*FIELDS, "value")
        .get()
    )


@pytest.fixture
def plugs(challenge):
    """Classification: 30 training, 40 validation, 20 test rows."""
    return make_dataset(challenge, "plugs", task="classification", sizes=(30, N, 20), seed=7)


@pytest.fixture
def entries(plugs, ada, grace, submit_zip, score_baseline):
    """The baseline, two of Ada's entries and one of Grace's, scored on the validation split."""
    made = [score_baseline(plugs, now=AFTER)]
    for user, seed in ((ada, 1), (ada, 2), (grace, 3)):
        files = {"plugs_val_predict.txt": prediction_file(seed)}
        made.append(submit_zip(user, plugs.challenge, files, now=AFTER, method=f"m{seed}"))
    assert [entry.status for entry in made] == [Status.SCORED] * 4, [e.errors for e in made]
    return made


def test_the_plug_in_loss_is_scored_stored_and_kept_with_its_terms(entries, plugs):
    targets = read_dataset_targets(plugs, splits={Split.VAL})[Split.VAL]
    for seed, submission in enumerate(entries[1:], start=1):
        want = floored_terms(probabilities(seed), targets)
        assert want[:2] == pytest.approx([-math.log(1e-3)] * 2, rel=1e-15)  # floored
        kept = stored_terms.load(SplitResult.objects.get(submission=submission, split="val").terms)
        assert kept["floorlog"] == pytest.approx(want, rel=1e-15)
        assert _row(submission)["value"] == pytest.approx(math.fsum(want) / N, rel=1e-15)
    # The baseline too: the training frequency of +1 for every row.
    train = read_dataset_targets(plugs, splits={Split.TRAIN})[Split.TRAIN]
    base = floored_terms(np.full(N, np.mean(train == 1)), targets)
    assert _row(entries[0])["value"] == pytest.approx(base.mean(), rel=1e-14)


def test_the_plug_in_loss_gets_the_intervals_the_spec_defines(entries, plugs):
    seed = intervals.seed_for(plugs, "val")
    kept = [
        stored_terms.load(SplitResult.objects.get(submission=s, split="val").terms)["floorlog"]
        for s in entries
    ]
    values = bootstrap.resample({"floorlog": np.stack(kept, axis=1)}, seed=seed)["floorlog"]
    own = bootstrap.intervals(values)
    base = bootstrap.intervals(bootstrap.differences(values, values[0]))
    for i, submission in enumerate(entries):
        row = _row(submission)
        assert row["lower"] == pytest.approx(own[i, 0], rel=1e-12)
        assert row["upper"] == pytest.approx(own[i, 1], rel=1e-12)
        assert row["lower"] <= row["value"] <= row["upper"]
        assert [row["baseline_lower"], row["baseline_upper"]] == pytest.approx(
            base[i].tolist(), abs=1e-15
        )
        assert row["tied_with_leader"] is not None


def test_the_leaderboard_sorts_by_it_and_shows_it_with_its_intervals(entries, plugs, client):
    url = reverse("api_leaderboard", args=[plugs.challenge.slug, "plugs"])
    rows = client.get(url, {"split": "val", "sort": "floorlog"}).json()["results"]
    assert len(rows) == 4
    values = [row["scores"]["floorlog"] for row in rows]
    assert values == sorted(values)
    assert set(rows[0]["intervals"]) == {"nlp", "01l", "brier", "floorlog"}
    for row in rows:
        stored = _row(row["submission"])
        assert row["scores"]["floorlog"] == stored["value"]
        assert row["intervals"]["floorlog"] == [stored["lower"], stored["upper"]]
    assert rows[0]["vs_leader"]["floorlog"] == [0.0, 0.0]

    page = client.get(
        reverse("leaderboard", args=[plugs.challenge.slug, "plugs"]),
        {"split": "val", "sort": "floorlog"},
    )
    assert page.status_code == 200
    html = page.content.decode()
    assert "floorlog" in html and "Floored log score" in html


def test_the_dataset_s_list_decides_the_columns_and_what_may_sort(entries, plugs, client):
    plugs.losses = ["nlp", "floorlog"]
    plugs.save()
    assert [loss.name for loss in plugs.shown_losses()] == ["nlp", "floorlog"]
    url = reverse("api_leaderboard", args=[plugs.challenge.slug, "plugs"])
    rows = client.get(url, {"split": "val", "sort": "floorlog"}).json()["results"]
    assert set(rows[0]["scores"]) == {"nlp", "floorlog"}
    assert set(rows[0]["intervals"]) == {"nlp", "floorlog"}
    refused = client.get(url, {"split": "val", "sort": "brier"})
    assert refused.status_code == 400 and "sort" in refused.json()


def test_the_evaluation_tab_lists_it_with_its_title_reference_and_package(entries, plugs, client):
    page = client.get(reverse("challenge_evaluation", args=[plugs.challenge.slug]))
    html = page.content.decode()
    loss = scoring.get_loss("classification", "floorlog")
    assert "<code>floorlog</code>" in html and loss.title in html
    assert loss.reference in html and "scoring-floorlog" in html


def test_entries_scored_before_a_loss_was_installed_are_scored_again(
    entries, plugs, django_capture_on_commit_callbacks
):
    """A plug-in installed after some entries were scored: they lack its Score rows (as
    here, deleted) until the dataset's losses change or `manage.py rescore --missing`."""
    old = entries[2]
    value = _row(old)["value"]
    Score.objects.filter(submission=old, loss="floorlog").delete()
    assert list(lacking_losses(plugs)) == [old]

    call_command("rescore", "--missing", "--dataset", "plugs", stdout=(out := _Sink()))
    assert out.text == "Queued 1 submission(s) for rescoring.\n"

    Score.objects.filter(submission=old, loss="floorlog").delete()
    with django_capture_on_commit_callbacks(execute=True):
        losses_changed(dataset=plugs)
    old.refresh_from_db()
    assert old.status == Status.SCORED
    assert _row(old)["value"] == value and _row(old)["lower"] is not None
    assert not lacking_losses(plugs).exists()


class _Sink:
    def __init__(self):
        self.text = ""

    def write(self, text):
        self.text += text

    def flush(self):
        pass
