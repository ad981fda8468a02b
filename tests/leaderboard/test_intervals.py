"""Bootstrap intervals of a split (scoring.md §5), from real scored uploads to the Score rows,
the JSON and the CSV."""

import csv
import io
import math

import numpy as np
import pytest
from django.core.files.storage import storages
from django.test import Client
from django.urls import reverse

from challenge_site.leaderboard import intervals
from challenge_site.leaderboard.models import IntervalRun
from challenge_site.submissions import moderation
from challenge_site.submissions import terms as stored_terms
from challenge_site.submissions.evaluation import read_dataset_targets
from challenge_site.submissions.models import Score, SplitResult
from challenge_site.submissions.services import rescore
from datasets.models import Split
from scoring import bootstrap
from tests.factories import AFTER

from .helpers import gaussian_file

FIELDS = intervals.FIELDS


def _row(submission, loss, split="val") -> dict:
    return (
        Score.objects.filter(submission=submission, split=split, loss=loss)
        .values(*FIELDS, "value")
        .get()
    )


def test_scoring_keeps_the_terms_whose_means_are_the_scores(entries, waves):
    targets = read_dataset_targets(waves, splits={Split.VAL})[Split.VAL]
    for submission in entries:
        result = SplitResult.objects.get(submission=submission, split="val")
        assert result.terms.startswith(f"terms/{waves.challenge.slug}/waves/{submission.pk}-val-")
        kept = stored_terms.load(result.terms)
        assert set(kept) == {"nlpd", "se", "crps"}
        scores = {row.loss: row.value for row in submission.scores.filter(split="val")}
        assert abs(kept["nlpd"].mean() - scores["nlpd"]) <= 1e-12 * abs(scores["nlpd"])
        assert abs(kept["crps"].mean() - scores["crps"]) <= 1e-12 * scores["crps"]
        nmse = kept["se"].mean() / targets.var()
        assert abs(nmse - scores["nmse"]) <= 1e-12 * scores["nmse"]


def test_every_listed_entry_gets_the_intervals_the_spec_defines(entries, waves):
    baseline, first, second, third = entries
    seed = intervals.seed_for(waves, "val")
    kept = {
        s.pk: stored_terms.load(SplitResult.objects.get(submission=s, split="val").terms)
        for s in entries
    }
    ids = [s.pk for s in entries]
    values = bootstrap.resample(
        {"crps": np.stack([kept[pk]["crps"] for pk in ids], axis=1)}, seed=seed
    )["crps"]
    own = bootstrap.intervals(values)
    ranked = sorted(
        ids, key=lambda pk: Score.objects.get(submission_id=pk, split="val", loss="crps").value
    )
    leader = ids.index(ranked[0])
    lead = bootstrap.intervals(bootstrap.differences(values, values[leader]))
    base = bootstrap.intervals(bootstrap.differences(values, values[0]))
    for i, submission in enumerate(entries):
        row = _row(submission, "crps")
        assert row["lower"] == pytest.approx(own[i, 0], rel=1e-12)
        assert row["upper"] == pytest.approx(own[i, 1], rel=1e-12)
        assert row["lower"] <= row["value"] <= row["upper"]
        assert [row["leader_lower"], row["leader_upper"]] == pytest.approx(
            lead[i].tolist(), abs=1e-15
        )
        assert [row["baseline_lower"], row["baseline_upper"]] == pytest.approx(
            base[i].tolist(), abs=1e-15
        )
        assert row["tied_with_leader"] == bool(lead[i, 0] <= 0 <= lead[i, 1])
    assert _row(entries[leader], "crps")["leader_lower"] == 0.0
    assert _row(baseline, "crps")["baseline_upper"] == 0.0
    # Rank intervals among each participant's best entry, the baseline not ranked.
    assert _row(baseline, "crps")["rank_lower"] is None
    ada_best = min((first, second), key=lambda s: _row(s, "crps")["value"])
    ada_other = second if ada_best == first else first
    assert _row(ada_other, "crps")["rank_lower"] is None
    best = [ada_best, third]
    ranks = bootstrap.rank_intervals(np.stack([values[ids.index(s.pk)] for s in best]))
    for submission, (lower, upper) in zip(best, ranks, strict=True):
        row = _row(submission, "crps")
        assert (row["rank_lower"], row["rank_upper"]) == (lower, upper)
        assert 1 <= row["rank_lower"] <= row["rank_upper"] <= 2


def test_nmse_intervals_resample_the_targets_variance(entries, waves):
    seed = intervals.seed_for(waves, "val")
    targets = read_dataset_targets(waves, splits={Split.VAL})[Split.VAL]
    submission = entries[1]
    se = stored_terms.load(SplitResult.objects.get(submission=submission, split="val").terms)["se"]
    values = bootstrap.resample({}, squared_errors={"nmse": se}, targets=targets, seed=seed)["nmse"]
    lower, upper = bootstrap.intervals(values)[0]
    row = _row(submission, "nmse")
    assert row["lower"] == pytest.approx(lower, rel=1e-12)
    assert row["upper"] == pytest.approx(upper, rel=1e-12)


def test_rescoring_rewrites_the_terms_and_deletes_the_old_file(
    entries, staff, django_capture_on_commit_callbacks
):
    submission = entries[1]
    old = SplitResult.objects.get(submission=submission, split="val").terms
    private = storages["private"]
    assert private.exists(old)
    with django_capture_on_commit_callbacks(execute=True):
        rescore(submissions=type(submission).objects.filter(pk=submission.pk))
    new = SplitResult.objects.get(submission=submission, split="val").terms
    assert new != old and private.exists(new) and not private.exists(old)
    assert _row(submission, "crps")["lower"] is not None


def test_deleting_an_entry_deletes_its_terms_and_recomputes_without_it(
    entries, django_capture_on_commit_callbacks
):
    leader = min(entries, key=lambda s: _row(s, "nlpd")["value"])
    name = SplitResult.objects.get(submission=leader, split="val").terms
    with django_capture_on_commit_callbacks(execute=True):
        leader.delete()
    assert not storages["private"].exists(name)
    rest = [s for s in entries if s.pk != leader.pk]
    new_leader = min(rest, key=lambda s: _row(s, "nlpd")["value"])
    assert _row(new_leader, "nlpd")["leader_lower"] == 0.0


def test_hiding_the_leader_makes_the_runner_up_the_leader(
    entries, waves, grace, staff, submit_zip, django_capture_on_commit_callbacks
):
    # An entry that knows the targets leads, clearly.
    targets = read_dataset_targets(waves, splits={Split.VAL})[Split.VAL]
    lines = "".join(f"1 {float(t)!r} 0.01\n" for t in targets).encode()
    leader = submit_zip(grace, waves.challenge, {"waves_val_predict.txt": lines}, now=AFTER)
    runner_up = min(entries, key=lambda s: _row(s, "crps")["value"])
    assert _row(leader, "crps")["leader_lower"] == 0.0
    assert _row(runner_up, "crps")["tied_with_leader"] is False
    with django_capture_on_commit_callbacks(execute=True):
        moderation.hide(
            submissions=type(leader).objects.filter(pk=leader.pk),
            reason="copied",
            user=staff,
            now=AFTER,
        )
    assert all(_row(leader, "crps")[name] is None for name in FIELDS)
    assert _row(runner_up, "crps")["leader_lower"] == 0.0
    assert _row(runner_up, "crps")["tied_with_leader"] is True


def test_a_run_resamples_only_the_entries_it_has_not_seen(
    entries, waves, ada, submit_zip, monkeypatch
):
    seen = []
    real = bootstrap.resample

    def counting(terms, **kwargs):
        seen.append(
            max(
                array.shape[1]
                for array in [*terms.values(), *kwargs.get("squared_errors", {}).values()]
            )
        )
        return real(terms, **kwargs)

    monkeypatch.setattr(bootstrap, "resample", counting)
    before = IntervalRun.objects.get(dataset=waves, split="val").resampled
    files = {"waves_val_predict.txt": gaussian_file(60, seed=9)}
    submit_zip(ada, waves.challenge, files, now=AFTER)
    assert seen == [1]
    run = IntervalRun.objects.get(dataset=waves, split="val")
    assert run.entries == 5 and run.computed == run.requested and not run.queued
    assert run.resampled != before and not storages["private"].exists(before)
    # Computing again from the kept file writes nothing new.
    summary = intervals.compute_and_store(dataset_id=waves.pk, split="val")
    assert summary.updated == 0 and seen == [1]


def test_the_leaderboard_json_and_csv_carry_the_intervals(entries, waves, client):
    url = reverse("api_leaderboard", args=[waves.challenge.slug, "waves"])
    rows = client.get(url, {"split": "val", "sort": "crps"}).json()["results"]
    leader = rows[0]
    assert leader["vs_leader"]["crps"] == [0.0, 0.0]
    assert leader["indistinguishable_from_leader"]["crps"] is True
    assert set(leader["intervals"]) == {"nlpd", "nmse", "crps"}
    for row in rows:
        stored = _row(row["submission"], "crps")
        assert row["intervals"]["crps"] == [stored["lower"], stored["upper"]]
        assert row["vs_baseline"]["crps"] == [stored["baseline_lower"], stored["baseline_upper"]]
        assert row["rank_interval"] is None  # the all-submissions view
    best = client.get(url, {"split": "val", "sort": "crps", "view": "best"}).json()["results"]
    ranked = [row for row in best if not row["is_baseline"]]
    assert all(row["rank_interval"][0] >= 1 for row in ranked)
    assert [row["rank_interval"] for row in best if row["is_baseline"]] == [None]

    csv_url = reverse("leaderboard_csv", args=[waves.challenge.slug, "waves"])
    response = client.get(csv_url, {"split": "val", "sort": "crps", "view": "best"})
    table = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    for line, row in zip(table, best, strict=True):
        assert float(line["crps_lower"]) == row["intervals"]["crps"][0]
        assert line["crps_indistinguishable_from_leader"] in {"yes", "no"}
        if row["rank_interval"]:
            assert [int(line["rank_interval_lower"]), int(line["rank_interval_upper"])] == row[
                "rank_interval"
            ]
        else:
            assert line["rank_interval_lower"] == ""


def test_intervals_are_null_while_being_computed(entries, waves, client):
    Score.objects.filter(dataset=waves).update(**dict.fromkeys(FIELDS))
    url = reverse("api_leaderboard", args=[waves.challenge.slug, "waves"])
    row = client.get(url, {"split": "val", "view": "best"}).json()["results"][0]
    assert row["intervals"] == {"nlpd": None, "nmse": None, "crps": None}
    assert row["indistinguishable_from_leader"] == {"nlpd": None, "nmse": None, "crps": None}
    assert row["rank_interval"] is None


def test_multiclass_intervals_for_the_losses_with_terms_only(shapes_entries):
    """nlp, brier and 01l get the spec's intervals from their kept terms; ece, rmsce, sce
    and ace, which have no per-example terms, none (scoring.md §5, §7)."""
    shapes, entries = shapes_entries
    assert (
        [loss.name for loss in intervals.interval_losses(shapes.task)]
        == [
            "nlp",
            "brier",
            "01l",
            "floorlog",  # the example plug-in's (plugins/floorlog: tests/leaderboard/test_plugin_losses.py)
        ]
    )
    seed = intervals.seed_for(shapes, "val")
    kept = [
        stored_terms.load(SplitResult.objects.get(submission=s, split="val").terms) for s in entries
    ]
    for loss in ("nlp", "brier", "01l"):
        values = bootstrap.resample(
            {loss: np.stack([terms[loss] for terms in kept], axis=1)}, seed=seed
        )[loss]
        own = bootstrap.intervals(values)
        for i, submission in enumerate(entries):
            row = _row(submission, loss)
            assert row["lower"] == pytest.approx(own[i, 0], rel=1e-12, abs=1e-15), loss
            assert row["upper"] == pytest.approx(own[i, 1], rel=1e-12, abs=1e-15), loss
            assert row["lower"] <= row["value"] <= row["upper"]
            assert row["tied_with_leader"] is not None
    for loss in ("ece", "rmsce", "sce", "ace"):
        for submission in entries:
            row = _row(submission, loss)
            assert row["value"] is not None and math.isfinite(row["value"])
            assert all(row[field] is None for field in FIELDS), (loss, row)


LABELS = np.where(np.random.default_rng(5).random(60) < 0.3, "far", "near")


@pytest.fixture
def sliced_entries(waves, ada, grace, submit_zip, score_baseline):
    """``entries`` on a validation split labelled far and near (scoring.md §8): scored,
    sliced and given their intervals by the pipeline."""
    from .helpers import add_slices

    add_slices(waves, "val", LABELS.tolist())
    made = [score_baseline(waves, now=AFTER)]
    for user, seed in ((ada, 1), (ada, 2), (grace, 3)):
        files = {"waves_val_predict.txt": gaussian_file(60, seed=seed)}
        made.append(submit_zip(user, waves.challenge, files, now=AFTER, method=f"m{seed}"))
    return made


def test_slice_intervals_resample_within_the_slice_from_its_own_seed(sliced_entries, waves):
    """scoring.md §8: every interval of a slice's Score rows (own, against the slice's
    leader and the baseline, rank among the best entries on the slice) comes from B
    resamples of the slice's examples alone, drawn from the slice's own seed; nmse is
    normalised by the variance of the slice's resampled targets."""
    entries, labels = sliced_entries, LABELS
    targets = read_dataset_targets(waves, splits={Split.VAL})[Split.VAL]
    kept = [
        stored_terms.load(SplitResult.objects.get(submission=s, split="val").terms) for s in entries
    ]
    ids = [s.pk for s in entries]
    seeds = {intervals.seed_for(waves, "val", name) for name in ("far", "near")}
    assert len(seeds | {intervals.seed_for(waves, "val")}) == 3
    for name in ("far", "near"):
        mask = labels == name
        # The pipeline's slice scores are the losses on the slice's examples.
        for submission, terms in zip(entries, kept, strict=True):
            assert _row(submission, f"crps@{name}")["value"] == pytest.approx(
                terms["crps"][mask].mean(), rel=1e-12
            )
            assert _row(submission, f"nmse@{name}")["value"] == pytest.approx(
                terms["se"][mask].mean() / targets[mask].var(), rel=1e-9
            )
        seed = intervals.seed_for(waves, "val", name)
        values = {
            **bootstrap.resample(
                {
                    loss: np.stack([terms[loss][mask] for terms in kept], axis=1)
                    for loss in ("nlpd", "crps")
                },
                seed=seed,
            ),
            **bootstrap.resample(
                {},
                squared_errors={"nmse": np.stack([terms["se"][mask] for terms in kept], axis=1)},
                targets=targets[mask],
                seed=seed,
            ),
        }
        for loss, matrix in values.items():
            key = f"{loss}@{name}"
            rows = [_row(s, key) for s in entries]
            own = bootstrap.intervals(matrix)
            leader = min(range(len(ids)), key=lambda i: (rows[i]["value"], ids[i]))
            lead = bootstrap.intervals(bootstrap.differences(matrix, matrix[leader]))
            base = bootstrap.intervals(bootstrap.differences(matrix, matrix[0]))
            for i, row in enumerate(rows):
                assert row["lower"] == pytest.approx(own[i, 0], rel=1e-12), key
                assert row["upper"] == pytest.approx(own[i, 1], rel=1e-12), key
                # (rel: the site resamples each entry as it comes, the test all at once, and
                # a product of another shape may round differently in the last bit)
                assert [row["leader_lower"], row["leader_upper"]] == pytest.approx(
                    lead[i].tolist(), rel=1e-12, abs=1e-15
                ), key
                assert [row["baseline_lower"], row["baseline_upper"]] == pytest.approx(
                    base[i].tolist(), rel=1e-12, abs=1e-15
                ), key
                assert row["tied_with_leader"] == bool(lead[i, 0] <= 0 <= lead[i, 1])
            # Ranks among each participant's best entry on the slice (baseline unranked).
            ada = min((1, 2), key=lambda i: (rows[i]["value"], ids[i]))
            ranks = bootstrap.rank_intervals(np.stack([matrix[ada], matrix[3]]))
            assert [(rows[i]["rank_lower"], rows[i]["rank_upper"]) for i in (ada, 3)] == [
                tuple(int(v) for v in pair) for pair in ranks
            ], key
            assert rows[0]["rank_lower"] is None and rows[3 - ada]["rank_lower"] is None
    # A whole-split interval is not a slice's: the resamples differ.
    assert _row(entries[1], "crps@near")["lower"] != _row(entries[1], "crps")["lower"]
    # The kept resamples serve the next run: nothing to write.
    assert intervals.compute_and_store(dataset_id=waves.pk, split="val").updated == 0
    # The slice's board serves them (the validation targets are out after the deadline).
    url = reverse("api_leaderboard", args=[waves.challenge.slug, "waves"])
    body = Client().get(url, {"sort": "crps", "slice": "far", "view": "best"}).json()
    assert body["slice"] == "far"
    for row in body["results"]:
        stored = _row(row["submission"], "crps@far")
        assert row["scores"]["crps"] == stored["value"]
        assert row["intervals"]["crps"] == [stored["lower"], stored["upper"]]
        assert row["vs_leader"]["crps"] == [stored["leader_lower"], stored["leader_upper"]]
        expected = (
            None if stored["rank_lower"] is None else [stored["rank_lower"], stored["rank_upper"]]
        )
        assert row["rank_interval"] == expected
    assert [row["rank_interval"] is None for row in body["results"]].count(False) == 2


def test_a_new_labelling_resamples_again(entries, waves):
    """Slices added after the entries were scored: the kept resamples (drawn without
    slices) are not reused, and the split's own intervals come out the same."""
    from .helpers import add_slices

    before = [_row(s, "crps") for s in entries]
    add_slices(waves, "val", LABELS.tolist())
    run = IntervalRun.objects.get(dataset=waves, split="val")
    summary = intervals.compute_and_store(dataset_id=waves.pk, split="val")
    assert summary.resampled != run.resampled
    for submission, old in zip(entries, before, strict=True):
        assert _row(submission, "crps") == {
            key: pytest.approx(value, rel=1e-12, abs=1e-15) for key, value in old.items()
        }
