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
