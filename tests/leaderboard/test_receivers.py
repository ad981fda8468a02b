"""leaderboard.receivers: the leaderboard's answers to the submissions app's signals: a
participant's listing changed (their best rows follow, cached plots go stale), a split's
intervals are stale (a run is asked for once the change commits)."""

from challenge_site.leaderboard import interval_runs, receivers
from challenge_site.leaderboard.models import BestEntry, IntervalRun
from challenge_site.submissions.entrants import Entrant
from datasets.models import Dataset

from .helpers import add_entry, at, cls


def test_a_changed_listing_rewrites_the_best_rows_and_moves_the_generation_on(catalysis, ada):
    entry = add_entry(catalysis, user=ada, created=at(0), val=cls(0.25, 0.5))
    BestEntry.objects.all().delete()
    generation = Dataset.objects.get(pk=catalysis.pk).generation
    receivers.listing_changed(dataset=catalysis, entrant=Entrant.of(entry))
    assert set(BestEntry.objects.values_list("submission", "loss")) == {
        (entry.pk, loss) for loss in ("nlp", "01l", "lift", "brier", "ece", "rauc", "aurc")
    }
    assert Dataset.objects.get(pk=catalysis.pk).generation == generation + 1


def test_stale_intervals_ask_for_a_run_once_the_change_commits(
    catalysis, monkeypatch, django_capture_on_commit_callbacks
):
    sent = []
    monkeypatch.setattr(interval_runs, "send", lambda *args: sent.append(args))
    with django_capture_on_commit_callbacks(execute=False) as pending:
        receivers.intervals_stale(dataset_id=catalysis.pk, split="val")
    assert not IntervalRun.objects.exists() and len(pending) == 1  # nothing before the commit
    pending[0]()
    assert sent == [(catalysis.pk, "val")]
    assert IntervalRun.objects.get(dataset=catalysis, split="val").requested == 1


def test_a_change_of_who_the_boards_list_redraws_and_recomputes_the_public_part(
    catalysis, monkeypatch, django_capture_on_commit_callbacks
):
    """challenges.signals.options_changed (late_joiners_feedback, say) and a publication:
    every dataset's generation moves on and the public part's intervals run again."""
    from challenge_site.challenges import signals
    from challenge_site.challenges.models import Challenge

    challenge = catalysis.challenge
    challenge.test_public_fraction = 0.5
    challenge.save()
    sent = []
    monkeypatch.setattr(interval_runs, "send", lambda *args: sent.append(args))
    for requested, (signal, extra) in enumerate(
        (
            (
                signals.options_changed,
                {"public_part_changed": False, "final_entries_changed": False},
            ),
            (signals.results_published_changed, {}),
        ),
        start=1,
    ):
        generation = Dataset.objects.get(pk=catalysis.pk).generation
        with django_capture_on_commit_callbacks(execute=True):
            signal.send(sender=Challenge, challenge=challenge, **extra)
        assert Dataset.objects.get(pk=catalysis.pk).generation == generation + 1
        # Sent once; the second request finds the run queued (single flight) and counts.
        assert sent == [(catalysis.pk, "public")]
        assert IntervalRun.objects.get(dataset=catalysis, split="public").requested == requested
