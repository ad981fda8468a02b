"""Spec §8's quantile scores on the site, from real uploads through scoring: a regression
dataset with quantile levels scores ``wis`` (stored, kept with its terms, given the
intervals of spec §5, shown and sortable on the leaderboard) and reports the coverage of
its central intervals, shown on the submission page as nominal against observed; a dataset
without levels has neither, and changing the levels scores every entry again."""

import numpy as np
import pytest
from django.urls import reverse

import scoring
from challenge_site.leaderboard import intervals
from challenge_site.submissions import terms as stored_terms
from challenge_site.submissions.evaluation import REPORTED_KEY, read_dataset_targets
from challenge_site.submissions.models import Score, SplitResult, Status
from datasets.models import Split
from datasets.services import levels_changed
from scoring import bootstrap
from tests.factories import AFTER, make_dataset

LEVELS = [0.05, 0.25, 0.5, 0.75, 0.95]
N = 30


def rows_file(seed: int) -> bytes:
    """Every row type: Gaussians, quantile rows and samples, one in three each."""
    rng = np.random.default_rng(seed)
    lines = []
    for i in range(N):
        m = float(rng.normal())
        if i % 3 == 0:
            lines.append(f"1 {m!r} {float(rng.uniform(0.2, 2.0))!r}")
        elif i % 3 == 1:
            q = np.sort(m + rng.normal(size=4))
            lines.append("0 0.1 {!r} 0.4 {!r} 0.6 {!r} 0.9 {!r}".format(*q.tolist()))
        else:
            lines.append("2 " + " ".join(repr(float(s)) for s in m + rng.normal(size=5)))
    return ("\n".join(lines) + "\n").encode()


@pytest.fixture
def sine(challenge):
    """Regression with quantile levels: 20 training, 30 validation, 10 test rows."""
    return make_dataset(
        challenge, "sine", task="regression", sizes=(20, N, 10), seed=3, quantile_levels=LEVELS
    )


@pytest.fixture
def entries(sine, ada, grace, submit_zip, score_baseline):
    made = [score_baseline(sine, now=AFTER)]
    for user, seed in ((ada, 1), (ada, 2), (grace, 3)):
        files = {"sine_val_predict.txt": rows_file(seed)}
        made.append(submit_zip(user, sine.challenge, files, now=AFTER, method=f"m{seed}"))
    assert [entry.status for entry in made] == [Status.SCORED] * 4, [e.errors for e in made]
    return made


def _row(submission, loss="wis", split="val") -> dict:
    return (
        Score.objects.filter(submission=submission, split=split, loss=loss)
        .values(*intervals.FIELDS, "value")
        .get()
    )


def _evaluation(seed, sine):
    targets = read_dataset_targets(sine, splits={Split.VAL})[Split.VAL]
    return scoring.evaluate(
        rows_file(seed), targets, task="regression", options=sine.scoring_options
    )


def test_the_dataset_s_levels_reach_scoring_and_its_shown_losses(sine, challenge):
    assert sine.scoring_options.quantile_levels == tuple(LEVELS)
    assert "wis" in [loss.name for loss in sine.shown_losses()]
    plain = make_dataset(challenge, "plain", task="regression")
    assert plain.scoring_options.quantile_levels is None
    assert "wis" not in [loss.name for loss in plain.shown_losses()]


def test_wis_is_stored_with_its_terms_and_coverage_is_reported(entries, sine):
    for seed, submission in enumerate(entries[1:], start=1):
        want = _evaluation(seed, sine)
        result = SplitResult.objects.get(submission=submission, split="val")
        kept = stored_terms.load(result.terms)
        np.testing.assert_array_equal(kept["wis"], want.terms()["wis"])
        assert _row(submission)["value"] == pytest.approx(want.scores["wis"], rel=1e-15)
        reported = dict(result.plot_data[REPORTED_KEY])
        assert reported == pytest.approx(want.reported) and set(reported) == {"cov50", "cov90"}


def test_wis_gets_the_intervals_the_spec_defines(entries, sine):
    seed = intervals.seed_for(sine, "val")
    kept = [
        stored_terms.load(SplitResult.objects.get(submission=s, split="val").terms)["wis"]
        for s in entries
    ]
    values = bootstrap.resample({"wis": np.stack(kept, axis=1)}, seed=seed)["wis"]
    own = bootstrap.intervals(values)
    for i, submission in enumerate(entries):
        row = _row(submission)
        assert [row["lower"], row["upper"]] == pytest.approx(own[i].tolist(), rel=1e-12)
        assert row["lower"] <= row["value"] <= row["upper"]


def test_the_leaderboard_sorts_by_wis_with_intervals(entries, sine, client):
    url = reverse("api_leaderboard", args=[sine.challenge.slug, "sine"])
    rows = client.get(url, {"split": "val", "sort": "wis"}).json()["results"]
    values = [row["scores"]["wis"] for row in rows]
    assert len(rows) == 4 and values == sorted(values)
    for row in rows:
        stored = _row(row["submission"])
        assert row["intervals"]["wis"] == [stored["lower"], stored["upper"]]
    page = client.get(reverse("leaderboard", args=[sine.challenge.slug, "sine"]), {"split": "val"})
    assert page.status_code == 200 and "Weighted interval score" in page.content.decode()


def test_the_submission_page_shows_nominal_against_observed_coverage(entries, sine, ada, client):
    submission = entries[1]
    client.force_login(ada)
    html = client.get(reverse("submission_detail", args=[submission.pk])).content.decode()
    reported = _evaluation(1, sine).reported
    assert "<svg" in html and "Nominal coverage" in html and "<code>cov90</code>" in html
    assert "90.0 %" in html and f"{reported['cov90'] * 100:.1f} %" in html
    assert "<script" not in html.split("<svg", 1)[1].split("</svg>", 1)[0]


def test_new_levels_score_every_entry_again(entries, sine, django_capture_on_commit_callbacks):
    sine.quantile_levels = [0.1, 0.9]
    sine.save()
    with django_capture_on_commit_callbacks(execute=True):
        levels_changed(dataset=sine)
    for entry in entries:
        entry.refresh_from_db()
        assert entry.status == Status.SCORED
        result = SplitResult.objects.get(submission=entry, split="val")
        assert [name for name, _ in result.plot_data[REPORTED_KEY]] == ["cov80"]
    want = scoring.evaluate(
        rows_file(1),
        read_dataset_targets(sine, splits={Split.VAL})[Split.VAL],
        task="regression",
        options=scoring.ScoringOptions(quantile_levels=(0.1, 0.9)),
    )
    assert _row(entries[1])["value"] == pytest.approx(want.scores["wis"], rel=1e-15)
