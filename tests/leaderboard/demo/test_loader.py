"""leaderboard.demo.loader: the demo methods' entries, sent through the submission
service on the challenge's clock, scored; running it again sends nothing."""

from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client

from challenge_site.leaderboard import services
from challenge_site.leaderboard.demo import loader
from challenge_site.submissions.models import Status, Submission
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
