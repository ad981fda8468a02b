"""The heavy-tail marks of the bootstrap intervals (scoring.tails, issue 28) from real
scored uploads to the Score rows, the kept resamples file, the API and the CSV."""

import csv
import io

import numpy as np
import pytest
from django.core.files.storage import storages
from django.urls import reverse

from challenge_site.leaderboard import intervals
from challenge_site.leaderboard.models import IntervalRun
from challenge_site.submissions import terms as stored_terms
from challenge_site.submissions.evaluation import read_dataset_targets
from challenge_site.submissions.models import Score, SplitResult
from datasets.models import Split
from scoring import tails
from tests.factories import AFTER

LOSSES = ("nlpd", "nmse", "crps")
MARKS = ("heavy_tail", "leader_heavy_tail", "baseline_heavy_tail")


def _file(means: np.ndarray, variance: float) -> bytes:
    return "".join(f"1 {float(m)!r} {variance!r}\n" for m in means).encode()


@pytest.fixture
def tailed(waves, ada, grace, submit_zip, score_baseline):
    """The baseline; Ada's entry, whose errors are uniform on ±0.3 (bounded terms, the
    leader); Grace's, whose errors are Cauchy (nlpd and squared-error terms of tail
    index ½, crps terms of index 1: no finite variance)."""
    targets = read_dataset_targets(waves, splits={Split.VAL})[Split.VAL]
    rng = np.random.default_rng(28)
    baseline = score_baseline(waves, now=AFTER)
    light = targets + rng.uniform(-0.3, 0.3, targets.size)
    heavy = targets + rng.standard_cauchy(targets.size)
    made = {"baseline": baseline}
    for key, user, means in (("light", ada, light), ("heavy", grace, heavy)):
        files = {"waves_val_predict.txt": _file(means, 0.25)}
        made[key] = submit_zip(user, waves.challenge, files, now=AFTER, method=key)
    return made


def _marks(submission, loss: str) -> dict:
    return Score.objects.filter(submission=submission, split="val", loss=loss).values(*MARKS).get()


def _alpha(submission, loss: str) -> float:
    """α̂ of the entry's terms; nmse's is the smaller of its squared errors' and of the
    squared deviations of the targets' (its denominator, their resampled variance)."""
    kept = stored_terms.load(SplitResult.objects.get(submission=submission, split="val").terms)
    alpha = float(tails.tail_index(kept["se" if loss == "nmse" else loss]))
    if loss == "nmse":
        t = read_dataset_targets(submission.dataset, splits={Split.VAL})[Split.VAL]
        alpha = min(alpha, float(tails.tail_index((t - t.mean()) ** 2)))
    return alpha


def _light_is_heavy(light, loss: str) -> bool:
    """Ada's errors are bounded: only nmse's denominator can mark her entry."""
    heavy = bool(tails.heavy(_alpha(light, loss)))
    assert loss == "nmse" or not heavy
    return heavy


def test_heavy_tailed_terms_mark_their_intervals_and_light_ones_do_not(tailed):
    light, heavy, baseline = tailed["light"], tailed["heavy"], tailed["baseline"]
    for loss in LOSSES:
        assert _alpha(heavy, loss) < tails.THRESHOLD, loss
        light_heavy = _light_is_heavy(light, loss)
        leader = Score.objects.filter(split="val", loss=loss).order_by("value").first()
        assert leader.submission_id == light.pk, loss
        assert _marks(light, loss)["heavy_tail"] is light_heavy
        assert _marks(light, loss)["leader_heavy_tail"] is False  # against itself
        assert _marks(heavy, loss)["heavy_tail"] is True
        assert _marks(heavy, loss)["leader_heavy_tail"] is True
        assert _marks(heavy, loss)["baseline_heavy_tail"] is True
        base_heavy = bool(tails.heavy(_alpha(baseline, loss)))
        assert _marks(baseline, loss)["heavy_tail"] is base_heavy
        assert _marks(light, loss)["baseline_heavy_tail"] is base_heavy
        assert _marks(baseline, loss)["leader_heavy_tail"] is base_heavy
        assert _marks(baseline, loss)["baseline_heavy_tail"] is False  # against itself


def test_the_kept_file_holds_each_entrys_tail_index(tailed, waves):
    run = IntervalRun.objects.get(dataset=waves, split="val")
    with storages["private"].open(run.resampled, "rb") as handle:
        archive = np.load(io.BytesIO(handle.read()), allow_pickle=False)
        names = [str(name) for name in archive["names"]]
        for submission in tailed.values():
            i = names.index(SplitResult.objects.get(submission=submission, split="val").terms)
            for loss in LOSSES:
                assert archive[f"tail_{loss}"][i] == _alpha(submission, loss)


def test_a_kept_file_without_tail_indices_is_resampled_again(tailed, waves):
    run = IntervalRun.objects.get(dataset=waves, split="val")
    with storages["private"].open(run.resampled, "rb") as handle:
        archive = dict(np.load(io.BytesIO(handle.read()), allow_pickle=False))
    old = {key: value for key, value in archive.items() if not key.startswith("tail_")}
    buffer = io.BytesIO()
    np.savez(buffer, **old)
    with storages["private"].open(run.resampled, "wb") as handle:
        handle.write(buffer.getvalue())
    Score.objects.filter(dataset=waves).update(**dict.fromkeys(MARKS))
    summary = intervals.compute_and_store(dataset_id=waves.pk, split="val")
    assert summary.resampled != run.resampled  # every entry resampled, a new file kept
    assert _marks(tailed["heavy"], "nlpd")["heavy_tail"] is True
    assert _marks(tailed["light"], "nlpd")["heavy_tail"] is False


def test_the_api_and_the_csv_carry_the_marks(tailed, waves, client):
    light, heavy = tailed["light"], tailed["heavy"]
    url = reverse("api_leaderboard", args=[waves.challenge.slug, "waves"])
    rows = client.get(url, {"split": "val", "sort": "nlpd", "view": "best"}).json()["results"]
    by_id = {row["submission"]: row for row in rows}
    for loss in LOSSES:
        assert by_id[heavy.pk]["heavy_tail"][loss] is True
        assert by_id[heavy.pk]["vs_leader_heavy_tail"][loss] is True
        assert by_id[light.pk]["heavy_tail"][loss] is _light_is_heavy(light, loss)
        assert by_id[light.pk]["vs_leader_heavy_tail"][loss] is False
        for row in rows:
            stored = _marks(row["submission"], loss)
            assert row["vs_baseline_heavy_tail"][loss] is stored["baseline_heavy_tail"]
    # The rank interval (the sort loss's, among each participant's best) is the own one's.
    assert by_id[heavy.pk]["rank_interval_heavy_tail"] is True
    assert by_id[light.pk]["rank_interval_heavy_tail"] is False
    assert next(row for row in rows if row["is_baseline"])["rank_interval_heavy_tail"] is None

    csv_url = reverse("leaderboard_csv", args=[waves.challenge.slug, "waves"])
    response = client.get(csv_url, {"split": "val", "sort": "nlpd", "view": "best"})
    table = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    lines = {int(line["submission"]): line for line in table}
    assert lines[heavy.pk]["nmse_heavy_tail"] == "yes"
    assert lines[heavy.pk]["crps_vs_leader_heavy_tail"] == "yes"
    assert lines[light.pk]["nlpd_heavy_tail"] == "no"
    assert lines[light.pk]["nlpd_vs_leader_heavy_tail"] == "no"
    assert lines[heavy.pk]["rank_interval_heavy_tail"] == "yes"
    assert lines[light.pk]["rank_interval_heavy_tail"] == "no"
    for pk, line in lines.items():
        expected = _marks(pk, "crps")["baseline_heavy_tail"]
        assert line["crps_vs_baseline_heavy_tail"] == {True: "yes", False: "no"}[expected]


def test_marks_are_null_where_there_is_no_interval(tailed, waves, client):
    Score.objects.filter(dataset=waves).update(**dict.fromkeys(intervals.FIELDS))
    url = reverse("api_leaderboard", args=[waves.challenge.slug, "waves"])
    row = client.get(url, {"split": "val", "view": "best"}).json()["results"][0]
    assert row["heavy_tail"] == dict.fromkeys(LOSSES)
    assert row["vs_baseline_heavy_tail"] == dict.fromkeys(LOSSES)
    assert row["rank_interval_heavy_tail"] is None


def test_bounded_losses_are_never_marked(shapes_entries):
    """01l and brier terms are bounded (every moment finite): their intervals are not
    marked, whatever Hill's estimator would read into a few rare errors; nlp's are
    judged by their tail index."""
    shapes, entries = shapes_entries
    keys = {loss.name: loss.terms_key for loss in intervals.interval_losses(shapes.task)}
    for split in ("val", "test"):
        rows = Score.objects.filter(dataset=shapes, split=split, lower__isnull=False)
        marks = {(row.submission_id, row.loss): row.heavy_tail for row in rows}
        assert {loss for _, loss in marks} == set(keys) >= {"nlp", "01l", "brier"}
        for (pk, loss), heavy in marks.items():
            if loss in tails.BOUNDED:
                assert heavy is False
            else:
                kept = stored_terms.load(
                    SplitResult.objects.get(submission_id=pk, split=split).terms
                )
                assert heavy is bool(tails.heavy(tails.tail_index(kept[keys[loss]])))
