"""scoring._native.radix_argsort: the stable ascending order of doubles, exactly numpy's
argsort(kind="stable") (ties by position, -0.0 equal to 0.0), on the inputs a comparison
sort meets badly and on every sign, subnormal and infinity."""

from __future__ import annotations

import numpy as np
import pytest

from scoring import _accel


def _cases():
    rng = np.random.default_rng(8)
    yield "random", rng.random(50_000)
    yield "normal", rng.normal(size=20_000) * 1e300
    yield "few values", np.round(rng.random(30_000), 1)
    yield "one value", np.full(4_000, 0.25)
    yield "sorted", np.sort(rng.random(10_000))
    yield "reversed", np.sort(rng.random(10_000))[::-1].copy()
    specials = [0.0, -0.0, 5e-324, -5e-324, 2.2e-308, -1e-310, np.inf, -np.inf, 1.0, -1.0]
    yield "specials", rng.choice(specials, 5_000)
    yield "one", np.array([3.0])
    yield "empty", np.zeros(0)


@pytest.mark.parametrize(
    ("name", "keys"), list(_cases()), ids=lambda v: v if isinstance(v, str) else ""
)
def test_the_stable_order_of_numpy(name, keys):
    native = _accel.native()
    if native is None:
        pytest.skip("the C extension is not built")
    order = np.empty(keys.size, dtype=np.intp)
    native.radix_argsort(keys, order)
    assert np.array_equal(order, np.argsort(keys, kind="stable")), name


def test_wrong_buffers_are_refused():
    native = _accel.native()
    if native is None:
        pytest.skip("the C extension is not built")
    with pytest.raises(ValueError, match="buffers of the wrong size"):
        native.radix_argsort(np.zeros(3), np.empty(2, dtype=np.intp))
