"""datasets.signals: what a change of a dataset means for the apps above it, told through
signals they connect in their AppConfig.ready() (datasets imports none of them)."""

from challenge_site.submissions.models import Score, Submission
from datasets.models import Dataset
from datasets.signals import dataset_files_changed, ranking_loss_changed
from tests.factories import make_challenge, make_dataset


def test_changed_files_get_the_baseline_scored_again(db, django_capture_on_commit_callbacks):
    dataset = make_dataset(make_challenge())  # (its own commit hooks never ran here)
    assert not Submission.objects.filter(dataset=dataset).exists()
    with django_capture_on_commit_callbacks(execute=True):
        dataset_files_changed.send(sender=Dataset, dataset=dataset)
    baseline = Submission.objects.get(dataset=dataset, is_baseline=True)
    assert baseline.status == "scored"
    assert Score.objects.filter(submission=baseline, split="test", loss="nlpd").exists()


def test_a_new_ranking_loss_is_answered_by_the_submissions(db):
    """(What they recompute: tests/submissions/test_receivers.py.)"""
    dataset = make_dataset(make_challenge(), "gaze")
    responses = ranking_loss_changed.send(sender=Dataset, dataset=dataset)
    assert [f"{r.__module__}.{r.__name__}" for r, _ in responses] == [
        "challenge_site.submissions.receivers.ranking_loss_changed"
    ]
