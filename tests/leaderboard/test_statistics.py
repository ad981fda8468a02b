"""leaderboard.statistics: how a challenge is going: what the statistics page counts (its
drawings: test_statistics_plots.py; the page, who sees it and when, and its constant
number of queries: test_statistics_views.py; the ``history`` fixture: conftest.py)."""

from datetime import date, timedelta

import pytest

from challenge_site.leaderboard import statistics
from challenge_site.leaderboard.statistics import Cell, format_duration
from tests.factories import AFTER, VALIDATION

from .helpers import entry, when


def test_valid_submissions_per_day_and_phase(history, challenge):
    daily = statistics.daily(challenge=challenge, now=AFTER)
    assert [day.number for day in daily.days] == list(range(1, 31))
    assert (daily.days[0].date, daily.days[-1].date) == (date(2030, 1, 10), date(2030, 2, 8))
    counted = {day.number: (day.validation, day.test) for day in daily.days if day.total}
    assert counted == {1: (2, 0), 3: (1, 0), 11: (1, 0), 25: (0, 2), 30: (0, 1)}
    assert (daily.validation, daily.test, daily.after_deadline) == (4, 3, 1)
    assert daily.test_start_day == 23


def test_days_end_today_while_the_challenge_runs(challenge, gaze, ada):
    entry(gaze, user=ada, created=when(1, 12))
    daily = statistics.daily(challenge=challenge, now=when(1, 14, 8))
    assert [(day.number, day.total) for day in daily.days] == [
        (1, 0),
        (2, 0),
        (3, 1),
        (4, 0),
        (5, 0),
    ]


def test_valid_submissions_and_participants_per_dataset_and_phase(history, challenge):
    rows = statistics.by_dataset(challenge=challenge)
    assert [(row.name, row.task) for row in rows] == [
        ("catalysis", "classification"),
        ("gaze", "regression"),
    ]
    catalysis, gaze = rows
    # PHASES: validation (Table 1's SV), test (ST), post-challenge.
    assert gaze.cells == (Cell(3, 3), Cell(2, 2), Cell(1, 1)) and gaze.submissions == 6
    assert catalysis.cells == (Cell(1, 1), Cell(1, 1), Cell(0, 0)) and catalysis.submissions == 2


def test_outcomes_count_invalid_failed_and_pending_uploads(history, challenge):
    found = statistics.outcomes(challenge=challenge)
    table = {
        row.label: (
            row.uploads,
            row.scored,
            row.invalid,
            row.failed,
            row.pending,
            row.participants,
            row.uploaders,
        )
        for row in (*found.phases, found.total)
    }
    assert table == {
        "Validation phase": (6, 4, 2, 0, 0, 3, 3),
        "Test phase": (5, 3, 0, 1, 1, 2, 3),
        "Post-challenge": (1, 1, 0, 0, 0, 1, 1),
        "All phases": (12, 8, 2, 1, 1, 3, 3),
    }
    assert found.total.invalid_share == pytest.approx(100 * 2 / 12)
    assert found.total.failed_share == pytest.approx(100 / 12)
    assert found.phases[0].invalid_share == pytest.approx(100 / 3)


def test_median_time_from_upload_to_scored(history, challenge):
    found = statistics.turnaround(challenge=challenge)
    medians = {row.label: (row.scored, row.median) for row in (*found.phases, found.total)}
    assert medians == {
        # 20, 30, 90 (the real upload), 200 s: the middle two.
        "Validation phase": (4, timedelta(seconds=60)),
        # 45, 300, 600 s.
        "Test phase": (3, timedelta(seconds=300)),
        "Post-challenge": (1, timedelta(seconds=10)),
        # 10, 20, 30, 45 | 90, 200, 300, 600 s.
        "All phases": (8, timedelta(seconds=67.5)),
    }


def test_an_empty_challenge_counts_nothing(challenge, gaze):
    found = statistics.challenge_statistics(challenge=challenge, now=VALIDATION)
    assert len(found.daily.days) == 11 and not any(day.total for day in found.daily.days)
    assert found.datasets[0].cells == (Cell(0, 0),) * 3
    assert found.outcomes.total.uploads == 0 and found.outcomes.total.invalid_share is None
    assert found.turnaround.total == statistics.Turnaround("All phases", 0, None)
    assert statistics.daily(challenge=challenge, now=when(1, 1)).days == ()


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (None, "–"),
        (1.5, "1.5 s"),
        (45, "45 s"),
        (60, "1 min"),
        (67.5, "1 min 8 s"),
        (7500, "2 h 5 min"),
        (86400 + 4 * 3600 + 59, "1 d 4 h"),
    ],
)
def test_durations_are_written_with_two_units(seconds, text):
    assert format_duration(None if seconds is None else timedelta(seconds=seconds)) == text
