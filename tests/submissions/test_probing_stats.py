"""submissions.probing_stats: the statistics recorded when an entry is scored, and the
flags read from them, on seeded simulations at the issue's size (N = 2,000 test
examples, public fraction 0.5): the attacks flagged (≥ 90 % of their entries), a
population of honest participants improving a model hardly ever (≤ 1 %).

Entries are real rows with their terms stored as the pipeline stores them, and
``probing.record`` is called with the outcome the pipeline would pass (the upload and
scoring path itself: test_probing.py)."""

import hashlib
from datetime import timedelta

import numpy as np
import pytest

from challenge_site.challenges.models import Participant
from challenge_site.challenges.splits import ScoredSplit
from challenge_site.submissions import probing, probing_stats
from challenge_site.submissions import terms as stored_terms
from challenge_site.submissions.evaluation import Outcome, SplitOutcome
from challenge_site.submissions.models import SplitResult, Status, Submission
from scoring.probing import rows_off_bulk, rows_off_exact_mode
from tests.factories import START, TEST_START, VALIDATION, make_dataset, make_user
from tests.leaderboard.helpers import add_entry
from tests.scoring import probing_sim as sim

KEY = "nlp"


@pytest.fixture
def world():
    return sim.world(21)


@pytest.fixture
def big(challenge, world):
    """A classification dataset of sim.N test rows whose baseline is scored with the
    simulated world's terms (its stored targets are not read: the outcomes carry terms)."""
    dataset = make_dataset(challenge, "big", task="classification", sizes=(20, 10, sim.N))
    baseline = add_entry(dataset, baseline=True, created=START)
    _store(baseline, sim.nlp(world.baseline, world.y), world)
    return dataset


def _parts(terms, world) -> dict[str, np.ndarray]:
    return {
        "test": terms,
        str(ScoredSplit.PUBLIC): terms[world.public],
        str(ScoredSplit.PRIVATE): terms[~world.public],
    }


def _store(submission, terms, world) -> dict[str, np.ndarray]:
    parts = _parts(terms, world)
    SplitResult.objects.bulk_create(
        SplitResult(
            submission=submission,
            split=split,
            rows=values.size,
            terms=stored_terms.save(submission=submission, split=split, terms={KEY: values}),
        )
        for split, values in parts.items()
    )
    Submission.objects.filter(pk=submission.pk).update(splits=["test"])
    return parts


def enter(dataset, world, user, p, *, created, stored: bool = False) -> Submission:
    """A scored entry of the file ``p`` (p(y = +1) per test example), recorded
    (``stored``: with its terms files' names, as the scoring path records it)."""
    submission = add_entry(dataset, user=user, created=created)
    parts = _store(submission, sim.nlp(p, world.y), world)
    submission.refresh_from_db()
    off = rows_off_bulk(p) or rows_off_exact_mode(p)
    outcome = Outcome(
        Status.SCORED,
        [
            SplitOutcome(split, "big_test_predict.txt", v.size, False, {}, {}, {KEY: v}, off)
            for split, v in parts.items()
        ],
    )
    submission.predictions_sha256 = hashlib.sha256(p.tobytes()).hexdigest()
    names = dict(SplitResult.objects.filter(submission=submission).values_list("split", "terms"))
    probing.record(submission=submission, outcome=outcome, stored=names if stored else None)
    return submission


def test_an_entry_is_compared_with_the_array_its_participant_stored_before(
    big, world, storage_roots
):
    """The scoring path remembers each entry's compared array (terms.COMPARED): the next
    entry of its participant reads it from memory after whole files pushed it out of
    terms.KEPT, and gets the statistics it would get from the storage."""
    first, second = sim.honest(world, 31)[:2]
    user, other = make_user("kept"), make_user("read")
    entries = []
    for who, stored in ((user, True), (other, False)):
        earlier = enter(big, world, who, first, created=VALIDATION, stored=stored)
        stored_terms.KEPT.clear()
        if stored:  # not read again: the files of the earlier entry are gone
            for name in SplitResult.objects.filter(submission=earlier).values_list(
                "terms", flat=True
            ):
                (storage_roots["private"] / name).unlink()
        entries.append(enter(big, world, who, second, created=VALIDATION + timedelta(hours=1)))
    kept, read = (Submission.objects.get(pk=e.pk) for e in entries)
    assert kept.max_corr is not None and 0.2 < kept.max_corr < 1
    assert (kept.max_corr, kept.change_share, kept.near_previous) == (
        read.max_corr,
        read.change_share,
        read.near_previous,
    )


def _flagged(entries) -> list[set[str]]:
    rows = Submission.objects.select_related("dataset").filter(pk__in=[e.pk for e in entries])
    found = probing.flags(rows)
    return [{flag.code for flag in found[e.pk]} for e in entries]


def _share(entries) -> float:
    return np.mean([bool(codes) for codes in _flagged(entries)])


def _filtered(code) -> set[int]:
    return set(Submission.objects.filter(probing.flagged_filter(code)).values_list("pk", flat=True))


def test_honest_participants_are_hardly_ever_flagged_and_boosting_is(big, world):
    honest = []
    for seed in range(30):
        user = make_user(f"honest{seed}")
        for j, p in enumerate(sim.honest(world, seed)):
            honest.append(enter(big, world, user, p, created=VALIDATION + timedelta(hours=j)))
    attacker = make_user("booster")
    files = sim.boosting(world, seed=22, k=50)
    attack = [
        enter(big, world, attacker, p, created=VALIDATION + timedelta(minutes=j))
        for j, p in enumerate(files)
    ]
    assert _share(honest) <= 0.01, [
        e.pk for e, c in zip(honest, _flagged(honest), strict=True) if c
    ]
    assert _share(attack) >= 0.9
    codes = _flagged(attack)
    assert all(probing.BOOSTING in c for c in codes[:-1])  # every random vector
    assert probing.COMBINED in codes[-1]  # and their vote
    vote = Submission.objects.get(pk=attack[-1].pk)
    assert vote.combined_corr > probing.COMBINED_R and vote.chance_z > 0
    assert _filtered(probing.BOOSTING) == {e.pk for e in attack[:-1]}
    assert _filtered(probing.COMBINED) == {attack[-1].pk}
    flag = probing.flags([vote])[vote.pk][-1]
    assert flag.code == probing.COMBINED and f"r = {vote.combined_corr:.2f}" in flag.evidence


@pytest.mark.parametrize("kind", ["1e-11", "ulps"])
@pytest.mark.parametrize("base", ["constant", "model"])
def test_a_jittered_oracle_is_flagged_whatever_its_base(big, world, kind, base):
    start = sim.honest(world, 23)[-1] if base == "model" else np.full(sim.N, 0.5)
    user = make_user("oracle")
    files = sim.oracle(start, seed=24, kind=kind)
    entries = [
        enter(big, world, user, p, created=VALIDATION + timedelta(minutes=j))
        for j, p in enumerate(files)
    ]
    stored = Submission.objects.filter(pk__in=[e.pk for e in entries]).order_by("created")
    assert [e.similar_run for e in stored] == list(range(1, len(files) + 1))
    assert min(e.change_share for e in stored[1:]) > 0.99
    codes = _flagged(entries)
    assert _share(entries) >= 0.9
    assert all(probing.RUN in c for c in codes[1:])
    if base == "constant":  # each probe is also constant but for its few rows
        assert all(probing.CONSTANT in c for c in codes[1:]) and codes[0] <= {probing.BOOSTING}
    assert _filtered(probing.RUN) == {e.pk for e in entries[1:]}


def test_a_burst_of_new_accounts_is_flagged_sign_ups_before_the_test_phase_are_not(
    big, world, challenge
):
    rng = np.random.default_rng(25)
    # The validation phase's sign-ups: 22 days, 8 participants (well under 1 a day).
    for i in range(8):
        early = make_user(f"early{i}")
        Participant.objects.create(challenge=challenge, user=early, joined=START)
    assert probing_stats.burst_threshold(challenge) == probing.BURST_MIN
    accounts = []
    for i in range(40):
        user = make_user(f"fresh{i}")
        joined = TEST_START + timedelta(hours=2, minutes=i)
        Participant.objects.create(challenge=challenge, user=user, joined=joined)
        p = 0.5 + 0.05 * rng.choice([-1.0, 1.0], sim.N)
        accounts.append(enter(big, world, user, p, created=joined + timedelta(minutes=5)))
    # An old participant's first entry in the test phase, and a new account with a model.
    late = enter(
        big, world, early, sim.honest(world, 26)[0], created=TEST_START + timedelta(hours=3)
    )
    modeller = make_user("modeller")
    Participant.objects.create(challenge=challenge, user=modeller, joined=TEST_START)
    good = enter(
        big, world, modeller, sim.honest(world, 27)[-1], created=TEST_START + timedelta(hours=4)
    )
    stored = Submission.objects.filter(pk__in=[e.pk for e in accounts])
    # The first four made no burst when they came; the fifth's made them one.
    assert [e.burst for e in stored.order_by("created")] == [0] * 4 + list(range(5, 41))
    assert all(probing.BURST in c for c in _flagged(accounts))
    assert _flagged([late, good]) == [set(), set()]
    assert Submission.objects.get(pk=late.pk).burst is None  # joined before the test phase
    assert Submission.objects.get(pk=good.pk).burst is None  # far better than chance
    assert _filtered(probing.BURST) == {e.pk for e in accounts}
    first = Submission.objects.select_related("dataset").get(pk=accounts[0].pk)
    flag = probing.flags([first])[first.pk][-1]
    assert (
        flag.code == probing.BURST
        and flag.evidence == "40 new accounts' near-chance first entries within 24 h"
    )


def test_four_new_accounts_a_day_and_a_busy_sign_up_rate_are_no_burst(big, world, challenge):
    rng = np.random.default_rng(28)
    for i in range(16):  # one every 6 h 15 min: never 5 within 24 h
        user = make_user(f"new{i}")
        joined = TEST_START + i * timedelta(hours=6, minutes=15)
        Participant.objects.create(challenge=challenge, user=user, joined=joined)
        enter(big, world, user, 0.5 + 0.05 * rng.choice([-1.0, 1.0], sim.N), created=joined)
    assert not Submission.objects.filter(burst__gt=0).exists()
    assert Submission.objects.filter(burst=0).count() == 16
    # 50 sign-ups a day before the test phase: 5 new accounts in a day are the usual.
    for i in range(22 * 50):
        Participant.objects.create(
            challenge=challenge, user=make_user(f"crowd{i}"), joined=START + timedelta(hours=i / 3)
        )
    assert probing_stats.burst_threshold(challenge) == 150


def test_without_a_scored_baseline_nothing_is_near_chance(challenge, world):
    dataset = make_dataset(challenge, "bare", task="classification", sizes=(20, 10, sim.N))
    user = make_user("someone")
    entry = enter(dataset, world, user, np.full(sim.N, 0.5), created=VALIDATION)
    stored = Submission.objects.get(pk=entry.pk)
    assert (stored.chance_z, stored.random_count, stored.max_corr) == (None, 0, None)


def test_the_vote_of_200_random_vectors_is_flagged_too(big, world):
    """More vectors than COMBINE_MAX: the vote is compared with those of highest z."""
    attacker = make_user("patient")
    files = sim.boosting(world, seed=29, k=200)
    attack = [
        enter(big, world, attacker, p, created=VALIDATION + timedelta(minutes=j))
        for j, p in enumerate(files)
    ]
    codes = _flagged(attack)
    assert all(probing.BOOSTING in c for c in codes[:-1])
    assert probing.COMBINED in codes[-1]
    assert not any(probing.COMBINED in c for c in codes[:-1])  # no vector is a vote
