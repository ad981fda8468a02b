"""The dataset's generation moves on in every transaction that changes its listed scores,
and the caches and drawn plots are keyed by it: a change is seen at once, by every web
process sharing the cache (CACHE_URL: Redis) or the database."""

from pathlib import Path

import time_machine
from django.test import Client

from challenge_site.leaderboard import plots
from challenge_site.leaderboard.models import BoardPlot
from challenge_site.submissions import moderation, services, withdrawal
from challenge_site.submissions.models import Submission
from challenge_site.teams import services as teams
from datasets.models import Dataset
from tests.factories import VALIDATION, make_user
from tests.submissions.helpers import predictions

from .helpers import add_entry, at, cls, reg

ROOT = Path(__file__).resolve().parent.parent.parent
PLOT = "/challenges/demo/datasets/catalysis/leaderboard/plot.svg"


def _generation(dataset) -> int:
    return Dataset.objects.get(pk=dataset.pk).generation


def test_every_change_to_listed_scores_moves_the_generation_on(
    challenge, gaze, ada, submit_zip, score_baseline
):
    organiser = make_user("org", organiser_of=challenge)
    bob = make_user("bob")
    seen = [_generation(gaze)]

    def moved() -> bool:
        seen.append(_generation(gaze))
        return seen[-1] > seen[-2]

    with time_machine.travel(VALIDATION, tick=False):
        score_baseline(gaze, now=VALIDATION)
        assert moved()
        entry = submit_zip(ada, challenge, predictions("gaze"), now=VALIDATION)
        assert moved()
        mine = submit_zip(bob, challenge, predictions("gaze", seed=2), now=VALIDATION)
        assert moved()
        moderation.hide(
            submissions=Submission.objects.filter(pk=entry.pk),
            reason="Dup.",
            user=organiser,
            now=VALIDATION,
        )
        assert moved()
        moderation.restore(
            submissions=Submission.objects.filter(pk=entry.pk), user=organiser, now=VALIDATION
        )
        assert moved()
        services._claim(submission_id=entry.pk, force=True, task_id="t", now=None)
        assert moved()  # off the boards while it is scored again
        services.score_submission(submission_id=entry.pk, task_id="t")
        assert moved()
        withdrawal.withdraw(submission=Submission.objects.get(pk=mine.pk), now=VALIDATION)
        assert moved()
        team = teams.create(challenge=challenge, user=ada, name="Gaze", now=VALIDATION)
        assert moved()
        teams.join(team=team, user=bob, now=VALIDATION)
        assert moved()


def test_the_plot_is_drawn_per_generation(catalysis, ada):
    add_entry(catalysis, created=at(-5), val=cls(0.5, 0.5), baseline=True)
    add_entry(catalysis, user=ada, created=at(0), val=cls(0.3, 0.2))
    client = Client()
    first = client.get(PLOT)
    row = BoardPlot.objects.get(dataset=catalysis, split="val", ranking="nlp", point="01l")
    assert (row.drawn, row.svg) == (_generation(catalysis), first.content.decode())
    # Every web process serves the same stored drawing until the generation moves on.
    BoardPlot.objects.filter(pk=row.pk).update(svg="<svg>drawn elsewhere</svg>")
    assert client.get(PLOT).content == b"<svg>drawn elsewhere</svg>"
    add_entry(catalysis, user=ada, created=at(1), val=cls(0.4, 0.25))
    assert "entries (2)" in client.get(PLOT).content.decode()
    assert plots.version(catalysis) == str(_generation(catalysis))


def test_the_drawing_counts_what_it_leaves_out(catalysis, ada):
    add_entry(catalysis, created=at(-5), val=cls(0.5, 0.5), baseline=True)
    add_entry(catalysis, user=ada, created=at(0), val=cls(float("inf"), 0.2))

    def left_out():
        Client().get(PLOT)
        return BoardPlot.objects.get(dataset=catalysis, split="val").left_out

    assert left_out() == 1
    add_entry(catalysis, user=ada, created=at(1), val=cls(None, 0.2, lift=None, brier=None))
    assert left_out() == 2


def test_a_current_plot_is_served_without_aggregates(gaze, ada, django_assert_num_queries):
    add_entry(gaze, created=at(-5), val=reg(1.1, 1.0), baseline=True)
    add_entry(gaze, user=ada, created=at(0), val=reg(0.3, 0.5))
    client = Client()
    client.get("/challenges/demo/datasets/gaze/leaderboard/plot.svg")
    with django_assert_num_queries(2):  # the dataset row (its generation), the drawing
        client.get("/challenges/demo/datasets/gaze/leaderboard/plot.svg")


def test_a_full_save_of_an_old_copy_keeps_the_generation(gaze, ada):
    """The admin and the importer save a Dataset they loaded earlier: the bumps made in
    between stay, so no cache key is ever used for two states."""
    from datasets.models import Dataset

    stale = Dataset.objects.get(pk=gaze.pk)
    add_entry(gaze, user=ada, created=at(0), val=reg(0.3, 0.5))
    bumped = Dataset.objects.get(pk=gaze.pk).generation
    assert bumped > stale.generation
    stale.description = "edited in the admin"
    stale.save()
    fresh = Dataset.objects.get(pk=gaze.pk)
    assert (fresh.generation, fresh.description) == (bumped, "edited in the admin")
