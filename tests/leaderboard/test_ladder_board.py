"""leaderboard.ladder_board: the board as the Ladder shows it: one row per participant,
the score the Ladder shows them on the ranking loss, rounded, and the entry that set it
(what the Ladder stores: tests/submissions/test_ladder.py)."""

import math

import pytest

from challenge_site.leaderboard import ladder_board, services
from challenge_site.submissions.models import Moderation, Score

from .helpers import add_entry, at, cls


def shown(entry, value, precision, *, current=True):
    Score.objects.filter(submission=entry, split="val", loss="nlp").update(
        ladder_value=value, ladder_precision=precision, ladder_current=current
    )


@pytest.fixture
def board(catalysis, ada, grace, alan):
    add_entry(catalysis, created=at(-5), val=cls(0.3, 0.4), baseline=True)
    entries = {
        "ada": add_entry(catalysis, user=ada, created=at(0), val=cls(0.231, 0.3), method="BNN"),
        "ada2": add_entry(catalysis, user=ada, created=at(1), val=cls(0.25, 0.3), method="BNN 2"),
        "grace": add_entry(catalysis, user=grace, created=at(2), val=cls(0.2, 0.3), method="SVM"),
        "alan": add_entry(catalysis, user=alan, created=at(3), val=cls(math.inf, 0.3)),
    }
    shown(entries["ada"], 0.23, 0.01)
    shown(entries["ada2"], 0.23, 0.01, current=False)  # did not beat her shown score
    shown(entries["grace"], 0.2, 0.01)
    shown(entries["alan"], math.inf, 0.0)
    return services.parse_board(dataset=catalysis, split="val", sort=None, view=None), entries


def test_one_row_per_participant_in_the_order_of_the_shown_scores(board):
    parsed, entries = board
    rows = ladder_board.rows(parsed)
    assert [(r.rank, r.submission, r.participant, r.entries) for r in rows] == [
        (1, entries["grace"].pk, "grace", 1),
        (2, entries["ada"].pk, "Ada L.", 2),
        (3, entries["alan"].pk, "alan", 1),
    ]
    assert [(r.text, r.precision_text) for r in rows] == [
        ("0.20", "0.01"),
        ("0.23", "0.01"),
        ("∞", "exact"),
    ]


def test_pages_chunks_and_the_json_row(board):
    parsed, entries = board
    first, more = ladder_board.page(parsed, number=1, size=2)
    assert [r.rank for r in first] == [1, 2] and more
    last, more = ladder_board.page(parsed, number=2, size=2)
    assert [r.rank for r in last] == [3] and not more
    assert [r.rank for r in ladder_board.iter_rows(parsed, chunk=1)] == [1, 2, 3]
    row = ladder_board.json_row(first[1], url="http://s/x/", loss="nlp")
    assert row == {
        "rank": 2,
        "submission": entries["ada"].pk,
        "url": "http://s/x/",
        "participant": "Ada L.",
        "method": "BNN",
        "created": entries["ada"].created.isoformat(),
        "feedback": "ladder",
        "scores": {"nlp": 0.23},
        "precision": 0.01,
        "entries": 2,
    }
    assert ladder_board.json_row(last[0], url="", loss="nlp")["scores"] == {"nlp": "inf"}


def test_entries_that_are_not_listed_leave_the_board(board):
    parsed, entries = board
    entries["grace"].moderation = Moderation.HIDDEN
    entries["grace"].moderation_reason = "A probe."
    entries["grace"].save()
    assert [r.submission for r in ladder_board.rows(parsed)] == [
        entries["ada"].pk,
        entries["alan"].pk,
    ]


def test_a_multiclass_dataset_under_the_ladder(challenge, ada, grace, submit_zip):
    """The Ladder on a multiclass dataset's ranking loss (nlp, which has per-example
    terms): one row per participant, the shown score of the pipeline's Ladder."""
    from tests.factories import VALIDATION
    from tests.submissions.helpers import make_shapes, shapes_files

    challenge.feedback = "ladder"
    challenge.save()
    shapes = make_shapes(challenge)
    made = {}
    for user, seed in ((ada, 1), (ada, 2), (grace, 3)):
        files = shapes_files(("val",), seed=seed)
        made[seed] = submit_zip(user, challenge, files, now=VALIDATION, method=f"m{seed}")
    parsed = services.parse_board(dataset=shapes, split="val", sort=None, view=None)
    assert parsed.sort.name == "nlp"
    rows = ladder_board.rows(parsed)
    assert sorted(r.participant for r in rows) == ["Ada L.", "grace"]
    grace_row = next(r for r in rows if r.participant == "grace")
    score = Score.objects.get(submission=made[3], split="val", loss="nlp")
    assert grace_row.submission == made[3].pk and score.ladder_accepted is True
    assert math.isfinite(score.ladder_value) and abs(score.ladder_value - score.value) <= max(
        score.ladder_precision, 1e-12
    )
