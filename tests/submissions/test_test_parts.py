"""The test split's public and private parts (Challenge.test_public_fraction): scored at
once and on every upload, stored with their terms, never telling which examples are
public, and shown by the rules of challenges.policy."""

import numpy as np
import pytest
import time_machine

import scoring
from challenge_site.submissions import terms
from challenge_site.submissions.models import Score, SplitResult, Status
from tests.factories import AFTER, TEST_PHASE, make_dataset

from .helpers import get_at, scores_of, stored_file

N_TEST = 200


@pytest.fixture
def split_challenge(challenge):
    challenge.test_public_fraction = 0.3
    challenge.save()
    return challenge


@pytest.fixture
def beta(split_challenge):
    """Classification, 200 test examples, 30 % of them public."""
    return make_dataset(split_challenge, "beta", task="classification", sizes=(40, 20, N_TEST))


def _probabilities(rows: int, seed: int) -> bytes:
    rng = np.random.default_rng(seed)
    return "".join(f"{p:.6g}\n" for p in 0.05 + 0.9 * rng.random(rows)).encode()


def _upload(submit_zip, user, challenge, *, seed: int, now=TEST_PHASE, **fields):
    files = {"beta_test_predict.txt": _probabilities(N_TEST, seed)}
    return submit_zip(user, challenge, files, now=now, **fields)


def test_an_entry_is_scored_on_both_parts_with_their_terms(beta, participant, submit_zip):
    submission = _upload(submit_zip, participant, beta.challenge, seed=1)
    assert submission.status == Status.SCORED
    scores = scores_of(submission)
    assert set(scores) == {"test", "public", "private"}
    results = {r.split: r for r in SplitResult.objects.filter(submission=submission)}
    assert results["public"].rows == 60 and results["private"].rows == 140
    # Each part's losses are those of the examples it holds: the mean losses add up.
    for loss in ("nlp", "brier", "01l"):
        whole = scores["test"][loss] * N_TEST
        parts = scores["public"][loss] * 60 + scores["private"][loss] * 140
        assert parts == pytest.approx(whole, rel=1e-12)
    # The public part is the seeded subset; its score equals scoring it directly.
    mask = scoring.ladder.public_mask(N_TEST, 0.3, beta.test_parts_seed)
    targets = scoring.read_targets(
        stored_file(beta, "test", "targets"), path="t", task="classification"
    )
    p = np.loadtxt(_probabilities(N_TEST, 1).decode().splitlines())
    public = scoring.evaluate(
        "".join(f"{x:.6g}\n" for x in p[mask]).encode(), targets[mask], task="classification"
    )
    assert scores["public"]["nlp"] == pytest.approx(public.scores["nlp"], rel=1e-12)
    assert scores["public"]["lift"] == pytest.approx(public.scores["lift"], rel=1e-12)
    stored = terms.load(results["public"].terms)
    assert stored["nlp"].shape == (60,)
    assert stored["nlp"].mean() == pytest.approx(scores["public"]["nlp"], rel=1e-12)


def test_the_seed_is_drawn_once_and_kept_when_targets_change(split_challenge):
    first = make_dataset(split_challenge, "one", task="classification", sizes=(10, 10, 50))
    second = make_dataset(split_challenge, "two", task="classification", sizes=(10, 10, 50))
    assert first.test_parts_seed is not None and second.test_parts_seed is not None
    assert first.test_parts_seed != second.test_parts_seed
    from datasets.services import check_files, save_files
    from tests.factories import dataset_files

    files = dataset_files("one", task="classification", sizes=(10, 10, 50), seed=5)
    checked = check_files(
        name="one",
        task="classification",
        uploads=[(name, data, name) for name, data in files.items()],
    )
    seed = first.test_parts_seed
    save_files(first, checked, now=TEST_PHASE)
    first.refresh_from_db()
    assert first.test_parts_seed == seed


def test_without_a_public_part_only_the_test_split_is_scored(challenge, participant, submit_zip):
    dataset = make_dataset(challenge, "beta", task="classification", sizes=(40, 20, N_TEST))
    submission = _upload(submit_zip, participant, dataset.challenge, seed=1)
    assert set(scores_of(submission)) == {"test"}


def _get(url, *, user=None, when=TEST_PHASE):
    return get_at(url, user=user, when=when)


def test_public_part_is_shown_at_once_private_waits_for_publication(
    beta, participant, other, submit_zip
):
    submission = _upload(submit_zip, participant, beta.challenge, seed=1)
    base = "/challenges/demo/datasets/beta/leaderboard/"
    public = _get(base + "?split=public")
    assert public.status_code == 200
    assert f'href="/submissions/{submission.pk}/"' in public.content.decode()
    value = Score.objects.get(submission=submission, split="public", loss="nlp").value
    assert f"{value:.4f}"[:5] in public.content.decode()
    for split in ("private", "test"):
        hidden = _get(base + f"?split={split}", user=other)
        assert hidden.status_code == 403
        private_value = Score.objects.get(submission=submission, split=split, loss="nlp").value
        assert f"{private_value:.4f}" not in hidden.content.decode()
        api = _get(f"/api/v1/challenges/demo/datasets/beta/leaderboard/?split={split}")
        assert api.status_code == 403
    # The owner's page and API show the public part only.
    page = _get(f"/submissions/{submission.pk}/", user=participant).content.decode()
    assert "Test, public part" in page
    data = _get(f"/api/v1/submissions/{submission.pk}/", user=participant).json()
    assert set(data["scores"]) == {"public"}
    assert (
        _get(f"/submissions/{submission.pk}/plots/private.svg", user=participant).status_code == 404
    )
    assert (
        _get(f"/submissions/{submission.pk}/plots/public.svg", user=participant).status_code == 200
    )


def test_after_publication_every_part_is_public(beta, participant, submit_zip):
    submission = _upload(submit_zip, participant, beta.challenge, seed=1)
    with time_machine.travel(AFTER, tick=False):
        beta.challenge.results_published = True
        beta.challenge.save()
    data = _get(f"/api/v1/submissions/{submission.pk}/", when=AFTER).json()
    assert set(data["scores"]) == {"test", "public", "private"}
    for split in ("public", "private", "test"):
        assert (
            _get(
                f"/challenges/demo/datasets/beta/leaderboard/?split={split}", when=AFTER
            ).status_code
            == 200
        )
