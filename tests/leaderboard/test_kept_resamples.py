"""The resampled losses kept between interval runs (challenge_site/leaderboard/kept_resamples.py)."""

import io

import numpy as np
import pytest
from django.core.files.base import File

from challenge_site.leaderboard import kept_resamples
from challenge_site.submissions.storage import private_storage
from scoring import bootstrap


def _resampled(seed: int = 7) -> kept_resamples.Resampled:
    rng = np.random.default_rng(seed)
    a, b = rng.normal(size=bootstrap.RESAMPLES), rng.normal(size=bootstrap.RESAMPLES)
    return kept_resamples.Resampled(
        n=100,
        seed=seed,
        rows={"terms/a.npz": {"nlp": a, "brier": None}, "terms/b.npz": {"nlp": b, "brier": b}},
        labelling="",
        tails={"terms/a.npz": {"nlp": 1.5, "brier": np.nan}, "terms/b.npz": {"nlp": 3.2}},
    )


def test_a_saved_file_loads_back_every_row_and_tail_index(catalysis):
    kept = _resampled()
    name = kept_resamples.save(catalysis, "val", kept, ["nlp", "brier"])
    back = kept_resamples.load(name, n=100, seed=7)
    assert set(back.rows) == {"terms/a.npz", "terms/b.npz"}
    np.testing.assert_array_equal(back.rows["terms/a.npz"]["nlp"], kept.rows["terms/a.npz"]["nlp"])
    assert back.rows["terms/a.npz"]["brier"] is None  # absent stays absent, not NaNs
    np.testing.assert_array_equal(
        back.rows["terms/b.npz"]["brier"], kept.rows["terms/b.npz"]["brier"]
    )
    assert back.tails["terms/a.npz"]["nlp"] == 1.5
    assert np.isnan(back.tails["terms/b.npz"]["brier"])  # never computed: NaN
    kept_resamples.delete(name)
    assert not private_storage().exists(name)


@pytest.mark.parametrize(
    "asked", [{"n": 101, "seed": 7}, {"n": 100, "seed": 8}, {"n": 100, "seed": 7, "labelling": "x"}]
)
def test_a_file_for_other_resamples_is_not_used(catalysis, asked):
    name = kept_resamples.save(catalysis, "val", _resampled(), ["nlp"])
    assert kept_resamples.load(name, **asked).rows == {}


def test_a_file_kept_before_the_tail_indices_is_resampled_again(catalysis):
    buffer = io.BytesIO()
    np.savez(
        buffer,
        names=np.array(["terms/a.npz"]),
        n=np.array(100),
        seed=np.array(7, dtype=np.uint64),
        labelling=np.array(""),
        loss_nlp=np.zeros((1, bootstrap.RESAMPLES)),
    )
    buffer.seek(0)
    name = private_storage().save("intervals/old.npz", File(buffer))
    assert kept_resamples.load(name, n=100, seed=7).rows == {}


def test_an_unreadable_file_means_nothing_kept(catalysis):
    name = private_storage().save("intervals/broken.npz", File(io.BytesIO(b"not an npz")))
    assert kept_resamples.load(name, n=100, seed=7).rows == {}
    assert kept_resamples.load("", n=100, seed=7).rows == {}
