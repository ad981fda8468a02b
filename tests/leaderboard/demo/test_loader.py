"""leaderboard.demo.loader: the demo methods' entries, sent through the submission
service on the challenge's clock, scored; running it again sends nothing."""

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client

from challenge_site.leaderboard import interval_runs, services
from challenge_site.leaderboard.demo import loader
from challenge_site.leaderboard.models import IntervalRun
from challenge_site.submissions import services as scoring_services
from challenge_site.submissions.evaluation import REPORTED_KEY
from challenge_site.submissions.models import SplitResult, Status, Submission
from challenge_site.submissions.services import refresh_baseline
from tests.factories import make_challenge, make_dataset
from tests.pages import page_text


def run(capture, *slugs):
    with capture(execute=True):
        call_command("load_demo_submissions", *slugs, stdout=None)


def test_demo_submissions_are_scored_by_the_pipeline(demo, django_capture_on_commit_callbacks):
    challenge, datasets = demo
    run(django_capture_on_commit_callbacks, "epuc")
    users = User.objects.filter(username__startswith="demo-")
    assert sorted(u.profile.display_name for u in users) == [
        "Ada (demo)",
        "Bob (demo)",
        "Cy (demo)",
    ]
    assert not any(u.has_usable_password() for u in users)
    entries = Submission.objects.filter(is_baseline=False)
    assert entries.count() == (3 * 2 + 1) + (5 * 2 + 1) + (4 * 2 + 1)
    assert set(entries.values_list("status", flat=True)) == {Status.SCORED}
    assert set(entries.values_list("mark", flat=True)) == {"<", "", ">"}

    catalysis = datasets["catalysis"]
    hard = entries.get(dataset=catalysis, method="Hard classifier", phase="test")
    by_nlp = services.parse_board(dataset=catalysis, split="test", sort="nlp", view=None)
    by_01l = services.parse_board(dataset=catalysis, split="test", sort="01l", view=None)
    listed = {row.entry.pk for row in services.leaderboard_page(board=by_nlp).rows}
    assert hard.pk not in listed and len(listed) == 4  # 3 probabilistic entries and the baseline
    rows = services.leaderboard_page(board=by_01l).rows
    assert hard.pk in {row.entry.pk for row in rows}
    assert next(r for r in rows if r.entry.pk == hard.pk).non_probabilistic

    gaze = services.parse_board(dataset=datasets["gaze"], split="val", sort=None, view=None)
    rows = services.leaderboard_page(board=gaze).rows
    ensemble = next(r for r in rows if r.entry.method == "Bootstrap ensemble (samples)")
    assert ensemble.value("nlpd") is None and ensemble.value("crps") is not None
    assert ensemble.rank is None  # n/a under nlpd: listed last, unranked
    assert not entries.filter(dataset=datasets["maki"], method__contains="samples").exists()

    text = page_text(Client().get("/challenges/epuc/datasets/gaze/leaderboard/?split=test"))
    assert "Linear regression + Gaussian noise" in text and "Cy (demo)" in text
    # Ada and Bob enter as one team: its name and members, as the 2004 tables list them.
    assert "Two heads (Ada (demo) & Bob (demo))" in text
    assert "Ada (demo) Demo participants" not in text  # never as herself
    assert set(
        entries.filter(user__username__in=["demo-ada", "demo-bob"]).values_list(
            "team__name", flat=True
        )
    ) == {"Two heads"}
    assert "Results: Demo challenge" in page_text(Client().get("/challenges/epuc/results/"))


def test_running_it_again_sends_nothing(demo, django_capture_on_commit_callbacks):
    run(django_capture_on_commit_callbacks, "epuc")
    count = Submission.objects.count()
    run(django_capture_on_commit_callbacks, "epuc")
    assert Submission.objects.count() == count


def test_plans_follow_the_clock(demo):
    challenge, datasets = demo
    plans = loader.plans(datasets["catalysis"])
    assert [p.phase for p in plans] == ["validation"] * 3 + ["test"] * 3 + ["post"]
    assert all(challenge.start < p.when < challenge.test_start for p in plans[:3])
    assert all(challenge.test_start < p.when < challenge.deadline for p in plans[3:6])
    assert plans[-1].when > challenge.deadline


def test_a_multiclass_dataset_gets_its_entries_and_the_ensemble_its_uncertainties(
    db, django_capture_on_commit_callbacks
):
    challenge = make_challenge(slug="cifar10c", results_published=True)
    dataset = make_dataset(
        challenge, "clusters10", task="multiclass", classes=10, sizes=(300, 80, 100), seed=6
    )
    with django_capture_on_commit_callbacks(execute=True):
        refresh_baseline(dataset=dataset, now=challenge.start)
    run(django_capture_on_commit_callbacks, "cifar10c")
    entries = Submission.objects.filter(dataset=dataset, is_baseline=False)
    assert entries.count() == 4 * 2 + 1
    assert set(entries.values_list("status", flat=True)) == {Status.SCORED}

    board = services.parse_board(dataset=dataset, split="test", sort="nlp", view=None)
    rows = {row.entry.method: row for row in services.leaderboard_page(board=board).rows}
    probabilistic = [
        "Softmax regression",
        "Ensemble of 5 softmax regressions",
        "Temperature-scaled softmax regression",
        "Linear softmax regression",
    ]
    assert set(probabilistic) < set(rows) and "Hard k-NN vote" not in rows
    # Four different models: four different calibration errors and log losses.
    assert len({rows[m].value("ece") for m in probabilistic}) == 4
    assert len({rows[m].value("nlp") for m in probabilistic}) == 4
    hard = entries.get(method="Hard k-NN vote", phase="test")
    assert SplitResult.objects.get(submission=hard).non_probabilistic

    ensemble = entries.get(method="Ensemble of 5 softmax regressions", phase="test")
    reported = dict(SplitResult.objects.get(submission=ensemble).plot_data[REPORTED_KEY])
    assert set(reported) == {"tu", "du", "mi"} and reported["mi"] > 0
    single = entries.get(method="Softmax regression", phase="test")
    assert REPORTED_KEY not in SplitResult.objects.get(submission=single).plot_data


def _scores(dataset) -> list[tuple]:
    """Every Score row of the dataset's entries: the loss and its bootstrap interval."""
    from challenge_site.leaderboard.intervals import FIELDS
    from challenge_site.submissions.models import Score

    rows = Score.objects.filter(dataset=dataset).order_by("submission_id", "split", "loss")
    return list(rows.values_list("submission_id", "split", "loss", "value", *FIELDS))


@pytest.mark.django_db(transaction=True)
def test_a_load_computes_each_splits_intervals_once_with_the_scores_of_one_by_one(
    monkeypatch,
):
    # Committed transactions, as under `make run`: every entry is scored as it is sent.
    challenge = make_challenge(slug="epuc", results_published=True)
    gaze = make_dataset(challenge, "gaze", task="regression", sizes=(60, 30, 40), seed=5)
    refresh_baseline(dataset=gaze, now=challenge.start)
    runs = []
    compute = interval_runs.intervals.compute_and_store

    def counted(*, dataset_id, split):
        runs.append(split)
        return compute(dataset_id=dataset_id, split=split)

    monkeypatch.setattr(interval_runs.intervals, "compute_and_store", counted)
    report = loader.load(challenge=challenge, log=lambda line: None)
    entries = Submission.objects.filter(dataset=gaze, is_baseline=False).order_by("pk")
    assert len(report.created) == entries.count() == 5 * 2 + 1
    assert set(entries.values_list("status", flat=True)) == {Status.SCORED}
    # One run per split, after the last entry (one per entry and split before: 22).
    assert sorted(runs) == ["test", "val"]
    # Every request answered, nothing left queued (the public and private rows: none).
    assert {
        (split, requested == computed, queued)
        for split, requested, computed, queued in IntervalRun.objects.values_list(
            "split", "requested", "computed", "queued"
        )
    } == {("val", True, False), ("test", True, False)}
    loaded = _scores(gaze)
    nmse = [row for row in loaded if row[1] in ("val", "test") and row[2] == "nmse"]
    assert len(nmse) == 2 + 11 + 1  # the baseline's two splits, the entries' (one has both)
    assert all(row[4] is not None for row in nmse)  # each with its interval
    # Scored again one by one through the pipeline, intervals after each: same numbers.
    for entry in entries[:3]:
        scoring_services.score_submission(submission_id=entry.pk, force=True)
    assert runs[2:] == ["val"] * 3  # the first three are validation entries
    again = _scores(gaze)
    # The scores exactly; the intervals up to rounding (a run reuses its resamples).
    assert [row[:4] for row in again] == [row[:4] for row in loaded]
    assert [row[4:] for row in again] == [pytest.approx(row[4:], rel=1e-9) for row in loaded]


def test_the_plans_files_computed_at_once_are_those_of_one_after_the_other(demo, monkeypatch):
    """loader.predicted forks a process per CPU for a dataset's plans: the same bytes, in
    the same order, as loader.predictions plan after plan (and as without the fork)."""
    _, datasets = demo
    for name in ("catalysis", "gaze"):
        files = loader.Files(datasets[name])
        plans = loader.plans(datasets[name])
        assert len(plans) > 2
        at_once = loader.predicted(files, plans)
        one_by_one = [loader.predictions(loader.Files(datasets[name]), plan) for plan in plans]
        assert at_once == one_by_one
    monkeypatch.setattr(loader.os, "cpu_count", lambda: 1)  # no fork: computed here
    files = loader.Files(datasets["gaze"])
    assert loader.predicted(files, loader.plans(datasets["gaze"])) == one_by_one
