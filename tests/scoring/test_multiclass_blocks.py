"""scoring.multiclass_blocks: the multiclass summary summed block by block while a file is
read equals the summary of the whole file, and is left to the whole file whenever a block
cannot be summed in order."""

from __future__ import annotations

import numpy as np
import pytest

import scoring
from scoring import multiclass
from scoring.multiclass_blocks import SummaryBlocks


def _file(rng, n: int, classes: int, *, members: int = 1) -> tuple[bytes, np.ndarray]:
    probs = rng.dirichlet(np.full(classes, 0.3), size=(n, members)).reshape(n, -1)
    lines = "\n".join(" ".join(f"{x:.6g}" for x in row) for row in probs)
    return (lines + "\n").encode(), rng.integers(0, classes, n)


def _targets(y) -> bytes:
    return ("\n".join(map(str, y)) + "\n").encode()


def _same(a: multiclass.MulticlassSummary, b: multiclass.MulticlassSummary) -> None:
    assert (a.n, a.classes, a.errors, a.point) == (b.n, b.classes, b.errors, b.point)
    assert a.nll == pytest.approx(b.nll, rel=1e-13) and a.brier == pytest.approx(b.brier, rel=1e-13)
    np.testing.assert_allclose(a.top, b.top, rtol=1e-13, atol=1e-9)
    np.testing.assert_allclose(a.classwise, b.classwise, rtol=1e-13, atol=1e-9)
    for name in ("predicted", "nll_terms", "brier_rows", "labels"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name


@pytest.mark.parametrize(("n", "classes", "members"), [(300_000, 4, 1), (40_000, 7, 3), (5, 3, 1)])
def test_the_summary_summed_while_reading_is_the_whole_files(n, classes, members):
    """Many blocks (a file of several MB) on the reader's second thread, and one block."""
    rng = np.random.default_rng([n, classes])
    data, y = _file(rng, n, classes, members=members)
    options = scoring.ScoringOptions(classes=classes)
    result = scoring.evaluate(data, _targets(y), task="multiclass", options=options)
    rows = result.context.multiclass
    assert rows.summary is not None
    whole = multiclass.summarize(rows.probs, y, resid=rows.resid, exact=rows.exact)
    _same(rows.summary, whole)
    assert result.scores["nlp"] == pytest.approx(whole.nlp(), rel=1e-13)
    # A part of the file (a slice, the test's public part) never reuses it.
    part = result.subset(np.arange(n) % 2 == 0)
    assert part.context.multiclass.summary is None
    assert part.scores["brier"] == pytest.approx(
        multiclass.summarize(rows.probs[::2], y[::2], resid=rows.resid[::2]).brier_score(),
        rel=1e-13,
    )


def test_the_retention_keys_written_while_reading_are_those_gathered_from_the_rows():
    """The kernel writes each row's confidence and its side as the row is summed; they
    equal the gathers from the n × L rows, ties at the top (decided by the sides) too."""
    import dataclasses

    from scoring.tasks.multiclass import MulticlassClassification

    rng = np.random.default_rng(11)
    n, classes = 200_000, 5
    probs = rng.dirichlet(np.full(classes, 0.5), size=n)
    probs[::7, :2] = probs[::7, :2].sum(axis=1, keepdims=True) / 2  # a tie at the top, often
    lines = "\n".join(" ".join(f"{x:.6g}" for x in row) for row in probs)
    y = rng.integers(0, classes, n)
    options = scoring.ScoringOptions(classes=classes)
    result = scoring.evaluate(
        (lines + "\n").encode(), _targets(y), task="multiclass", options=options
    )
    ctx, spec = result.context, MulticlassClassification()
    found = ctx.multiclass.summary
    assert found is not None and found.confidence is not None
    errors, (confidence, sides), _ = spec.retention_inputs(ctx)
    gathered = dataclasses.replace(found, confidence=None, confidence_sides=None)
    rows = dataclasses.replace(ctx.multiclass, summary=gathered)
    again = spec.retention_inputs(spec.context(ctx.targets, options, None, rows))
    assert np.array_equal(errors, again[0])
    assert np.array_equal(confidence, again[1][0]) and np.array_equal(sides, again[1][1])
    assert np.count_nonzero(sides) > n // 2  # (the sides are there to compare)


def test_rows_written_out_of_order_or_decided_exactly_are_summed_from_the_whole_file():
    rng = np.random.default_rng(3)
    data, y = _file(rng, 2_000, 3)
    # An ensemble row among single rows: that block goes through the careful path, which
    # writes rows by index.
    lines = data.splitlines()
    lines[10] = lines[10] + b" " + lines[11]
    options = scoring.ScoringOptions(classes=3, allow_ensembles=True)
    mixed = scoring.evaluate(
        b"\n".join(lines) + b"\n", _targets(y), task="multiclass", options=options
    )
    assert mixed.context.multiclass.summary is None
    assert np.isfinite(mixed.scores["nlp"])
    # A value below 2^-900: its row is decided on exact fractions.
    lines = data.splitlines()
    lines[5] = b"1e-300 0.5 0.5"
    tiny = scoring.evaluate(
        b"\n".join(lines) + b"\n", _targets(y), task="multiclass", options=options
    )
    assert tiny.context.multiclass.exact and tiny.context.multiclass.summary is None


def test_blocks_in_any_order_each_once():
    rng = np.random.default_rng(9)
    probs = rng.dirichlet(np.ones(5), size=1_000)
    y = rng.integers(0, 5, 1_000)
    blocks = SummaryBlocks(y, 5)
    if not blocks.ok:
        pytest.skip("the C extension is not built")
    for start in (600, 0, 300):
        blocks.add(start, probs[start : start + 300], None)
    assert blocks.finish() is None  # rows 900 … 999 missing
    blocks.add(900, probs[900:], None)
    _same(blocks.finish(), multiclass.summarize(probs, y))
    blocks.add(990, probs[990:1001], None)  # past the end: given up
    blocks.abandon()
    assert blocks.finish() is None
