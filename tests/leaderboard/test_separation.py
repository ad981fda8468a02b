"""leaderboard.separation: whether a dataset's winner can be told apart from its
runner-up (scoring.md §5), in one sentence under its results table.

The bootstrap fields are written on the Score rows directly (helpers.set_interval), as
intervals.py would."""

import pytest
from django.test import Client

from tests.pages import page_text

from .helpers import add_entry, at, cls, set_interval

RESULTS = "/challenges/demo/results/"


@pytest.fixture
def final(catalysis, ada, grace):
    catalysis.challenge.results_published = True
    catalysis.challenge.save()
    entries = {
        "ada": add_entry(catalysis, user=ada, created=at(0), test=cls(0.2, 0.3), method="BNN"),
        "ada2": add_entry(catalysis, user=ada, created=at(1), test=cls(0.21, 0.3), method="BNN 2"),
        "grace": add_entry(catalysis, user=grace, created=at(2), test=cls(0.25, 0.3), method="SVM"),
    }
    add_entry(catalysis, created=at(-5), test=cls(0.33, 0.41), baseline=True, method="Baseline")
    set_interval(entries["ada"], split="test", own=(0.18, 0.22), leader=(0.0, 0.0), tied=True)
    return entries


def test_results_say_the_winner_is_ahead_of_the_runner_up(final):
    set_interval(final["grace"], split="test", own=(0.22, 0.28), leader=(0.01, 0.05), tied=False)
    response = Client().get(RESULTS)
    text = page_text(response)
    assert (
        "“BNN” by Ada L. is ahead of the runner-up “SVM” by grace: the difference in nlp is between "
        "0.01 and 0.05 (95 % interval)." in text
    )  # the runner-up is another participant's best, not Ada's second entry
    assert "1 < BNN 0.2 ± 0.020 (95 % interval 0.18 to 0.22) +0.13" in text
    assert 'class="separation separation-ahead"' in response.content.decode()


def test_results_say_when_the_winner_cannot_be_told_apart(final):
    set_interval(final["grace"], split="test", own=(0.2, 0.3), leader=(-0.02, 0.09), tied=True)
    text = page_text(Client().get(RESULTS))
    assert (
        "“BNN” by Ada L. and “SVM” by grace cannot be told apart on this test set: the difference in "
        "nlp is between -0.02 and 0.09 (95 % interval), which holds 0." in text
    )


def test_results_say_when_intervals_are_being_computed(final):
    text = page_text(Client().get(RESULTS))
    assert (
        "Whether “BNN” by Ada L. is ahead of the runner-up “SVM” by grace is not known yet" in text
    )
    assert "being computed" in text and "SVM 0.25 " in text


def test_results_when_the_baseline_leads(catalysis, ada):
    catalysis.challenge.results_published = True
    catalysis.challenge.save()
    add_entry(catalysis, created=at(-5), test=cls(0.1, 0.41), baseline=True, method="Baseline")
    entry = add_entry(catalysis, user=ada, created=at(0), test=cls(0.2, 0.3), method="BNN")
    set_interval(entry, split="test", own=(0.1, 0.3), leader=(-0.01, 0.2), tied=True)
    text = page_text(Client().get(RESULTS))
    assert (
        "The baseline ranks first under nlp, but the best entry “BNN” by Ada L. cannot be told "
        "apart from it on this test set: the difference in nlp is between -0.01 and 0.2" in text
    )
