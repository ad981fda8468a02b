"""scoring.multiclass_rows: the predictions of a valid multiclass file, as losses take them."""

import contextlib
import math
from fractions import Fraction

import numpy as np
import pytest

from scoring.multiclass_rows import ClassRows, normalise


def rows() -> ClassRows:
    probs = np.array([[0.6, 0.4], [0.25, 0.75], [1.0, 0.0]])
    entropy = -(0.5 * math.log(0.5) * 2 + 0.9 * math.log(0.9) + 0.1 * math.log(0.1)) / 2
    return ClassRows(
        probs, np.array([1, 2, 1], dtype=np.int32), np.array([np.nan, entropy, np.nan])
    )


def test_the_fields_and_what_they_say():
    r = rows()
    assert (r.n, r.classes) == (3, 2)
    assert r.has_ensembles
    assert r.point is None  # decided on these rows until a file's decision is handed down
    assert not ClassRows.single(np.eye(3)).has_ensembles


def test_a_subset_keeps_the_rows_where_the_mask_holds():
    r = rows()
    part = r.subset(np.array([True, False, True]))
    assert part.probs.tolist() == [[0.6, 0.4], [1.0, 0.0]]
    assert part.members.tolist() == [1, 1] and np.isnan(part.member_entropy).all()
    assert not part.has_ensembles  # (its one ensemble row was left out)
    ensemble = r.subset(np.array([False, True, False]))
    assert ensemble.has_ensembles and ensemble.member_entropy[0] == r.member_entropy[1]


def test_a_subset_keeps_the_whole_files_decision():
    r = ClassRows.single(np.array([[1.0, 0.0], [0.5, 0.5]]))
    decided = ClassRows(r.probs, r.members, r.member_entropy, point=False)
    assert decided.subset(np.array([True, False])).point is False


def test_single_rows_have_one_member_and_no_entropy():
    r = ClassRows.single([[0.5, 0.5], [0.1, 0.9]])
    assert r.probs.dtype == np.float64 and r.probs.flags.c_contiguous
    assert r.members.tolist() == [1, 1] and r.members.dtype == np.int32
    assert np.isnan(r.member_entropy).all()


@pytest.mark.parametrize(
    ("probs", "members", "entropy"),
    [
        (np.zeros(3), np.ones(3, np.int32), np.zeros(3)),  # not n × L
        (np.zeros((3, 2)), np.ones(2, np.int32), np.zeros(3)),
        (np.zeros((3, 2)), np.ones(3, np.int32), np.zeros(4)),
    ],
)
def test_mismatched_shapes_are_refused(probs, members, entropy):
    with pytest.raises(ValueError, match="expected probs of n × L"):
        ClassRows(probs, members, entropy)


# ------------------------------------------------------------- exact normalisation


def _exact_rows(v: np.ndarray):
    """Each row's exact probabilities (members over their exact sums, averaged)."""
    out = []
    for row in v:
        total = [Fraction(0)] * row.shape[1]
        for member in row.tolist():
            parts = [Fraction(x) for x in member]
            s = sum(parts, Fraction(0))
            total = [a + b / s for a, b in zip(total, parts, strict=True)]
        out.append([t / row.shape[0] for t in total])
    return out


@pytest.mark.parametrize("members", [1, 3])
def test_normalise_rounds_the_exact_values_once_on_both_paths(members, no_native):
    rng = np.random.default_rng(members)
    v = np.round(rng.dirichlet(np.ones(4), size=(300, members)), 3)
    v[0] = [[0.6, 0.1, 0.1, 0.2]] * members  # sums to 1 exactly, a float sum does not
    v[1] = [[0.3333333333333333] * 3 + [0.0]] * members  # p = 1/3 exactly
    got = []
    for switch in (contextlib.nullcontext, no_native):
        probs, resid = np.empty((300, 4)), np.empty((300, 4), dtype=np.float32)
        with switch():
            assert normalise(v, probs, resid) == {}
        got.append((probs, resid))
    assert (got[0][0] == got[1][0]).all() and (got[0][1] == got[1][1]).all()
    probs, resid = got[0]
    for i, row in enumerate(_exact_rows(v)):
        assert probs[i].tolist() == [float(x) for x in row]
        sides = [(x > Fraction(float(x))) - (x < Fraction(float(x))) for x in row]
        assert np.sign(resid[i]).tolist() == sides
    assert probs[0, 0] == 0.6 and resid[0, 0] == 0  # exact: on the edge 9/15, not above
    assert probs[1, 0] == 5 / 15 and resid[1, 0] > 0  # 1/3, above the double 5/15


@pytest.mark.parametrize("members", [1, 2])
def test_rows_below_2_to_the_minus_900_are_flagged_wherever_they_fall_on_both_paths(
    members, no_native
):
    """The C kernel takes single rows in runs of 64 and sums four at once: a tiny value in
    the first, last and any row of a run, and in a short last run, is still flagged."""
    rng = np.random.default_rng(members)
    v = rng.dirichlet(np.ones(6), size=(301, members))
    tiny_rows = [0, 3, 4, 63, 64, 127, 200, 300]
    for i in tiny_rows:
        v[i, -1, i % 6] = 2.0**-950
    got = []
    for switch in (contextlib.nullcontext, no_native):
        probs, resid = np.empty((301, 6)), np.empty((301, 6), dtype=np.float32)
        with switch():
            exact = normalise(v, probs, resid)
        got.append((sorted(exact), probs, resid))
    assert got[0][0] == got[1][0] == tiny_rows
    assert np.array_equal(got[0][1], got[1][1]) and np.array_equal(got[0][2], got[1][2])


def test_rows_with_subnormal_values_are_kept_exactly():
    v = np.array([[[5e-324, 1.0], [0.0, 1.0]], [[0.5, 0.5], [0.5, 0.5]]])
    probs, resid = np.empty((2, 2)), np.empty((2, 2), dtype=np.float32)
    exact = normalise(v, probs, resid)
    assert list(exact) == [0]
    tiny = Fraction(5e-324)
    assert exact[0][0] == tiny / (1 + tiny) / 2  # below the smallest double, not 0
    assert probs[0, 0] == 0.0 and resid[0, 0] > 0
    rows = ClassRows(probs, np.array([2, 2], np.int32), np.zeros(2), resid=resid, exact=exact)
    assert rows.subset(np.array([False, True])).exact == {}
    assert rows.subset(np.array([True, False])).exact == {0: exact[0]}
