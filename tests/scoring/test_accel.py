"""scoring._accel: the one switch for the C extension. The suite runs on the compiled
paths, and ``no_native`` (tests/conftest.py) turns them off for a block."""

import pytest
import scoring._native as fastparse

from scoring import _accel, textfile


def test_the_extension_is_built():
    """make install builds it; without it every block would take the slower numpy paths."""
    assert _accel.native() is fastparse and textfile.compiled()


def test_disabled_switches_the_compiled_paths_off_for_the_block_only():
    with _accel.disabled():
        assert _accel.native() is None and not textfile.compiled()
        assert _accel.built()  # built, only switched off
        with _accel.disabled():
            assert _accel.native() is None
        assert _accel.native() is None  # the inner block does not switch it back on early
    assert _accel.native() is fastparse and textfile.compiled()


def test_the_switch_comes_back_when_the_block_raises():
    with pytest.raises(RuntimeError), _accel.disabled():
        raise RuntimeError("a block that fails")
    assert _accel.native() is fastparse


def test_the_fixture_is_the_switch(no_native):
    assert no_native is _accel.disabled
    with no_native():
        assert not textfile.compiled()
    assert textfile.compiled()


def test_small_pages_switches_numpy_s_huge_page_advice_off_inside_and_back_after():
    from numpy._core import multiarray

    before = multiarray._get_madvise_hugepage()
    with _accel.small_pages():
        assert multiarray._get_madvise_hugepage() is False
    assert multiarray._get_madvise_hugepage() is before


def test_evaluate_runs_without_huge_page_advice(monkeypatch):
    from numpy._core import multiarray

    import scoring

    seen = []
    original = scoring.evaluate.__globals__["_evaluate"]

    def spy(*args, **kwargs):
        seen.append(multiarray._get_madvise_hugepage())
        return original(*args, **kwargs)

    monkeypatch.setitem(scoring.evaluate.__globals__, "_evaluate", spy)
    result = scoring.evaluate(b"0.9\n0.2\n", b"1\n-1\n")
    assert seen == [False] and result.n == 2


def test_populate_makes_an_array_s_pages_resident_without_changing_them(no_native):
    import resource
    import sys

    import numpy as np

    written = np.arange(4 << 20, dtype=np.float64)
    before = written.copy()
    _accel.populate(written)
    assert np.array_equal(written, before)  # (no page's content changes)
    assert not _accel.populate(np.empty(3))  # (no whole page)
    with no_native():
        assert not _accel.populate(np.empty(8 << 20))
    if not sys.platform.startswith("linux"):
        return
    with _accel.small_pages():
        fresh = np.empty(8 << 20)  # 64 MiB of 4 KiB pages, never touched
    assert _accel.populate(fresh)
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    fresh[:] = 1.0  # (16,384 faults without it)
    assert resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults < 100
