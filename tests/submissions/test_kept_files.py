"""submissions.kept_files: parsed files a worker keeps in memory, least recently used
first out, bounded in bytes, handed out as copies that never change what is kept."""

import numpy as np
import pytest

from challenge_site.submissions.kept_files import KeptFiles


def test_a_value_is_read_once_and_handed_out_as_copies():
    kept = KeptFiles(1024)
    reads = []

    def read():
        reads.append(1)
        return np.array([1.0, 2.0])

    first = kept.get("a", read)
    first[0] = 99.0  # the caller's own array
    again = kept.get("a", read)
    assert reads == [1]
    assert again.tolist() == [1.0, 2.0]
    again[1] = -1.0
    assert kept.get("a", read).tolist() == [1.0, 2.0]
    assert kept.held == 16
    with pytest.raises(ValueError):
        kept.entries["a"][0] = 5.0  # what is kept is read-only


def test_dicts_of_arrays_are_kept_and_copied_too():
    kept = KeptFiles(1024)
    kept.put("t", {"nlp": np.array([0.5]), "brier": np.array([0.25, np.inf])})
    found = kept.peek("t")
    assert {key: value.tolist() for key, value in found.items()} == {
        "nlp": [0.5],
        "brier": [0.25, np.inf],
    }
    found["nlp"][0] = 7.0
    assert kept.peek("t")["nlp"].tolist() == [0.5]
    assert kept.held == 24
    kept.forget("t")
    assert kept.peek("t") is None and kept.held == 0


def test_the_least_recently_used_go_first_and_too_large_ones_are_never_kept():
    kept = KeptFiles(32)  # two arrays of two float64s
    kept.put("a", np.zeros(2))
    kept.put("b", np.ones(2))
    assert kept.peek("a") is not None  # a is now the more recent
    kept.put("c", np.full(2, 2.0))
    assert list(kept.entries) == ["a", "c"] and kept.held == 32
    big = kept.get("big", lambda: np.zeros(5))
    assert big.tolist() == [0.0] * 5 and "big" not in kept.entries
    kept.put("a", np.zeros(1))  # replaced, not counted twice
    assert kept.held == 24
    kept.clear()
    assert kept.entries == {} and kept.held == 0
