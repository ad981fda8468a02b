"""bench/attacks.py's harness still attacks the site end to end (issue 32), at a tiny size.

The attacks run in the test database through the real API (uploads scored in-process,
the Ladders and the probing statistics as in production, the board read anonymously);
what they report is checked against what the test computes itself from the stored public
part and the uploaded files.
"""

import sys
from pathlib import Path

import numpy as np
import pytest

import scoring.ladder

sys.path.append(str(Path(__file__).resolve().parents[2] / "bench"))  # after the packages

import attack_site as site  # noqa: E402 - bench/attack_site.py
import attacks  # noqa: E402 - bench/attacks.py

N = 200
SEED = 0

# Real commits: scoring is queued on commit and runs in-process (conftest.celery_in_process).
pytestmark = pytest.mark.django_db(transaction=True)


def arena(feedback: str, attack: str, loss: str = "01l") -> site.Arena:
    return site.Arena.create(
        slug=f"t-{feedback}-{attack}".replace("_", "-"),
        feedback=feedback,
        loss=loss,
        n_test=N,
        seed=SEED,
    )


def test_boosting_under_exact_feedback_inflates_the_board():
    where = arena("exact", "boosting")
    outcome = attacks.boosting(where, k=15, seed=SEED)

    assert len(outcome.entries) == 16 and outcome.released == 16  # every score shown
    best = where.predictions[outcome.best]
    # The board shows the best entry's exact public score, computed here from the stored
    # part, and the private part scores it as the test does.
    assert outcome.shown == pytest.approx(where.public_score(best))
    private = ~where.mask
    assert outcome.private == pytest.approx(
        site.losses(best[private], where.data.targets["test"][private])["01l"]
    )
    assert outcome.best == outcome.entries[-1]  # the vote
    assert outcome.inflation > 0.15  # the public part overfitted: 0.52 − 0.29 at this seed
    assert outcome.inflation_truth > 0.03


def _board_improvements(where: site.Arena, files: list[np.ndarray]) -> int:
    """How many of the files, in order, beat the board's best by the Ladder's step."""
    targets = where.data.targets["test"][where.mask]
    terms = [
        np.where(targets == 1, probs[where.mask] < 0.5, probs[where.mask] >= 0.5).astype(float)
        for probs in files
    ]
    steps = scoring.ladder.ladder(terms, min_precision=1 / targets.size)
    return sum(step.accepted for step in steps)


def test_under_the_board_ladder_many_accounts_learn_no_more_than_one():
    files = attacks.random_pool(count=3, n=N, seed=SEED)
    many = attacks.many_accounts(arena("board_ladder", "many"), accounts=3, seed=SEED)
    one = attacks.one_account(arena("board_ladder", "one"), uploads=3, seed=SEED)

    improvements = _board_improvements(arena("exact", "count"), files)
    assert many.released == one.released == improvements < 3
    assert many.shown == one.shown and many.inflation <= one.inflation
    # The per-participant Ladder shows every account's first entry.
    assert attacks.many_accounts(arena("ladder", "many"), accounts=3, seed=SEED).released == 3


def test_the_oracle_reads_rows_from_exact_scores_and_nothing_from_the_board_ladder():
    exact = attacks.oracle(arena("exact", "oracle", "nlp"), probes=3, seed=SEED, fresh=True)
    where = arena("board_ladder", "oracle", "nlp")
    guarded = attacks.oracle(where, probes=3, seed=SEED, fresh=True)

    assert (exact.probed, exact.memberships, exact.wrong) == (3, 3, 0)
    rows = np.random.default_rng([SEED, 3, 1]).choice(N, size=3, replace=False)
    assert exact.labels == int(where.mask[rows].sum())  # every public row's label
    assert guarded.memberships + guarded.labels <= 1  # the first release at most


@pytest.mark.parametrize(
    ("value", "precision", "reading"),
    [
        (0.693, 0.001, ("private", 0)),
        (0.692, 0.001, ("public", 1)),
        (0.697, 0.001, ("public", -1)),
        (0.69, 0.01, None),  # private and public +1 both round to 0.69
        (0.70, 0.01, ("public", -1)),
        (0.69246408372, 0.0, ("public", 1)),  # exact: ln 2 − (ln 2 + ln 0.99) / 1000
        (0.6925, 0.0, None),
    ],
)
def test_the_oracle_reads_a_shown_score_only_when_one_reading_rounds_to_it(
    value, precision, reading
):
    shown = site.Shown(value, precision, own=True)
    assert attacks.decode(shown, n_public=1000) == reading
