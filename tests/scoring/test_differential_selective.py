"""Differential test of spec §8: ``scoring.evaluate`` against the exact reference of
tests/scoring/reference_selective.py (written from the spec alone, no code shared).

Every run draws ``BATCHES × SEEDS_PER_BATCH`` = 2,000 seeded random files of the three
tasks, built from known doubles (written so that they read back exactly: ``repr`` or
``%.7e`` of values already rounded to 8 digits), with ties in the retention keys on
purpose: repeated probabilities, p beside 1 − p (whose exact confidences differ), permuted
multiclass rows and ensembles, equal variances across row types (a Gaussian v equal to a
sample's population variance or to a quantile row's §8 variance, quantile and sample rows
shifted by whole numbers, v = 0 points beside one-value samples), every regression row type
and mixes (quantile rows of 2 to 200 levels, sample rows with duplicates), magnitudes from
1e-100 to the ±1e100 bound, non-probabilistic files, quantile levels (K from 1 to 99, the
usual symmetric sets and random ones), targets on a quantile or a sample value, and slices.
Checked: ``rauc`` (every task), ``aurc`` (classification tasks only), ``wis`` and its
per-example terms and every ``covP`` when the options give levels (neither otherwise), on
the whole file and on every slice of ``Evaluation.by_slice``, within spec §3's exactness
rule (1e-9 relative, 1e-12 absolute near 0; inf = inf; n/a = n/a) and without a warning.
A failure names the seed: ``make_case(seed)`` rebuilds the very same files.
"""

from __future__ import annotations

import math
import random
import warnings
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np
import pytest

import scoring
from scoring import ScoringOptions

from . import reference_selective as ref

BATCHES = 40
SEEDS_PER_BATCH = 50
REL, ABS = 1e-9, 1e-12
SHOW = 1200
SLICE_NAMES = ("in", "shifted", "a-1", "x_2", "0")
X = 999999999.7013268
# The issue's rows: five copies of X (mean X, variance 0), two tails that cancel in the mean,
# and a mean of ≈ −4.2e83 that is not 0
# (with the spread of their targets: the target on the double nearest the mean is
# EXACTNESS's, below)
SPECIAL_ROWS = (
    ((("s", [X] * 5), ["2"] + [repr(X)] * 5), 1e-4),
    ((("q", [0.5, 0.5000000000001], [0.0, 1.0]), ["0", "0.5", "0", "0.5000000000001", "1"]), 1e12),
    ((("q", [0.1, 0.9], [-1e100, 1e100]), ["0", "0.1", "-1e100", "0.9", "1e100"]), 1e99),
)
LEVEL_SETS = (
    (0.05, 0.25, 0.5, 0.75, 0.95),
    (0.025, 0.1, 0.25, 0.5, 0.75, 0.9, 0.975),
    (0.1, 0.9),
    (0.5,),
    (0.3,),
    (0.01, 0.025, *[k / 20 for k in range(1, 20)], 0.975, 0.99),  # Bracher et al.'s 23
)


# --------------------------------------------------------------------------- cases


@dataclass
class Case:
    seed: int | str
    task: str
    rows: list  # binary p's, multiclass rows, or regression row tuples (reference_selective)
    targets: list
    pred_lines: list[str]
    target_lines: list[str]
    classes: int | None = None
    levels: tuple[float, ...] | None = None
    slices: list[str] | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def pred(self) -> bytes:
        return ("\n".join(self.pred_lines) + "\n").encode()

    @property
    def target(self) -> bytes:
        return ("\n".join(self.target_lines) + "\n").encode()

    def options(self) -> ScoringOptions:
        if self.task == "multiclass":
            return ScoringOptions(classes=self.classes)
        if self.levels is not None:
            return ScoringOptions(quantile_levels=self.levels)
        return ScoringOptions()

    def describe(self) -> str:
        def show(data: bytes) -> str:
            text = data.decode()
            return repr(text if len(text) <= SHOW else text[:SHOW] + "…")

        return (
            f"seed={self.seed} task={self.task} L={self.classes} levels={self.levels} "
            f"notes={self.notes}\n  predictions={show(self.pred)}\n  targets={show(self.target)}"
            + (f"\n  slices={self.slices}" if self.slices else "")
        )


def _token(rng: random.Random, x: float, short: bool) -> tuple[str, float]:
    """A token for ``x`` and the double it reads back as (rounded to 8 digits if short)."""
    if short:
        text = f"{x:.7e}"
        return text, float(text)
    return repr(x), x


def _size(rng: random.Random) -> int:
    return rng.randint(1, 8) if rng.random() < 0.2 else rng.randint(9, 45)


def make_binary(rng: random.Random, case: Case):
    mode = rng.choice(("ties", "mirror", "uniform", "rounded", "zero_one", "mixed"))
    pool = [
        rng.choice((0.0, 0.1, 0.2, 0.3, 0.5, 0.7, 0.8, 0.9, 1.0, 1 / 3, 2 / 3)) for _ in range(4)
    ]
    for _ in range(_size(rng)):
        pick = mode if mode != "mixed" else rng.choice(("ties", "mirror", "uniform", "rounded"))
        if pick == "ties":
            p = rng.choice(pool)
        elif pick == "mirror":  # p and the double 1 − p: equal doubles, unequal exact 1 − p
            p = rng.choice(pool)
            p = 1 - p if rng.random() < 0.5 else p
        elif pick == "uniform":
            p = rng.random()
        elif pick == "rounded":
            p = round(rng.random(), rng.choice((1, 2)))
        else:
            p = float(rng.randint(0, 1))
        target = 1 if rng.random() < (p if rng.random() < 0.8 else 0.5) else -1
        case.rows.append(p)
        case.targets.append(target)
        case.pred_lines.append(repr(p))
        case.target_lines.append(str(target))
    case.notes.append(f"p={mode}")


def _vector(rng: random.Random, classes: int, mode: str) -> list[float]:
    if mode == "onehot":
        out = [0.0] * classes
        out[rng.randrange(classes)] = 1.0
        return out
    if mode == "uniform":
        return [1 / classes] * classes
    if mode == "perm":  # a fixed vector, permuted: equal confidences
        base = [0.5, 0.3, 0.2] + [0.0] * (classes - 3) if classes >= 3 else [0.75, 0.25]
        rng.shuffle(base)
        return base
    raw = [rng.expovariate(1.0) ** rng.choice((1, 3)) for _ in range(classes)]
    total = sum(raw)
    if mode == "rounded" and classes <= 12:  # %.3f: sums off by up to 0.006, renormalised
        return [float(f"{x / total:.3f}") for x in raw]
    return [x / total for x in raw]


def make_multiclass(rng: random.Random, case: Case):
    classes = rng.choice((2, 2, 3, 3, 4, 5, 7, 10, rng.randint(11, 40)))
    case.classes = classes
    mode = rng.choice(("mixed", "mixed", "perm", "rounded", "onehot", "ensembles"))
    for _ in range(_size(rng)):
        pick = mode
        if mode in ("mixed", "ensembles"):
            pick = rng.choice(("onehot", "uniform", "perm", "rounded", "dirichlet"))
        members = 1
        if mode == "ensembles" or (mode == "mixed" and rng.random() < 0.3):
            members = rng.randint(2, 4)
        row = []
        for _ in range(members):
            row += _vector(rng, classes, pick if members == 1 or rng.random() < 0.7 else "onehot")
        label = rng.randrange(classes)
        if rng.random() < 0.6:  # often the predicted class
            label = max(range(classes), key=lambda k, row=row: row[k])
        case.rows.append(row)
        case.targets.append(label)
        case.pred_lines.append(" ".join(repr(x) for x in row))
        case.target_lines.append(str(label))
    case.notes.append(f"rows={mode}")


def _distinct_whole_widths(lows: list[float]) -> bool:
    """Intervals whose widths 100(1 − 2α) round to distinct P, none near a half (where the
    rounding of P is a matter of taste the spec leaves open)."""
    widths = [100 * (1 - 2 * x) for x in lows]
    far = all(abs(abs(w - round(w)) - 0.5) > 1e-6 for w in widths)
    return far and len({round(w) for w in widths}) == len(widths) and all(x > 0 for x in lows)


def _levels(rng: random.Random) -> tuple[float, ...] | None:
    if rng.random() < 0.25:
        return None
    band = rng.random()
    if band < 0.5:
        return rng.choice(LEVEL_SETS)
    if band < 0.8:  # symmetric pairs about 0.5, maybe with the median
        while True:
            lows = sorted(
                {
                    min(0.49, round(rng.uniform(0.001, 0.499), rng.choice((2, 3, 6))))
                    for _ in range(rng.randint(1, 12))
                }
            )
            if _distinct_whole_widths(lows):
                break
        middle = (0.5,) if rng.random() < 0.6 else ()
        return tuple(lows) + middle + tuple(1 - x for x in reversed(lows))
    count = rng.randint(1, 99) if rng.random() < 0.3 else rng.randint(1, 9)
    levels = sorted({rng.uniform(1e-6, 1 - 1e-6) for _ in range(count)})
    return tuple(levels)


def _quantile_levels(rng: random.Random) -> list[float]:
    kind = rng.random()
    if kind < 0.3:
        return list(rng.choice(LEVEL_SETS[:3] + LEVEL_SETS[5:]))
    count = rng.randint(2, 12) if rng.random() < 0.9 else rng.randint(13, 200)
    while True:
        a = sorted(
            {
                rng.uniform(1e-6, 1 - 1e-6)
                if kind < 0.85
                else 10 ** -rng.uniform(0.1, 30 if kind < 0.97 else 300)  # tails to 1e300
                for _ in range(count)
            }
        )
        if len(a) >= 2 and a[0] > 0 and a[-1] < 1:
            return a


def _quantile_row(rng, centre: float, scale: float, short: bool):
    a = _quantile_levels(rng)
    values = [centre + scale * rng.uniform(-3, 0)]
    for _ in a[1:]:
        values.append(values[-1] + scale * rng.expovariate(1.0) * rng.choice((1, 1, 1e-3, 30)))
    q = []
    for v in values:
        _, x = _token(rng, max(-1e100, min(1e100, v)), short)
        q.append(x)
    if not all(x < y for x, y in zip(q, q[1:], strict=False)):
        return None
    tokens = ["0"] + [t for pair in zip(a, q, strict=True) for t in (repr(pair[0]), repr(pair[1]))]
    return ("q", a, q), tokens


def _row(rng, kind: str, centre: float, scale: float, short: bool, templates: dict):
    """One regression row and its tokens (None when the draw is not a valid row)."""
    if kind in ("g", "p"):
        _, m = _token(rng, max(-1e100, min(1e100, centre + scale * rng.gauss(0, 1))), short)
        if kind == "p":
            v = 0.0
        elif "v" in templates and rng.random() < 0.5:
            v = templates["v"]
        elif rng.random() < 0.02:  # subnormal and tiny variances: σ down to 2e-162
            v = rng.choice((5e-324, 1e-310, 1e-300))
        else:
            _, v = _token(rng, min(1e200, (scale * rng.uniform(0.1, 3)) ** 2), short)
        return ("g", m, v), ["1", repr(m), repr(v)]
    if kind == "shifted_q" and "q" in templates:  # same shape, moved by a whole number
        a, q = templates["q"]
        shift = float(rng.randint(-50, 50))
        moved = [x + shift for x in q]
        if any(Fraction(x) + Fraction(shift) != Fraction(y) for x, y in zip(q, moved, strict=True)):
            return None
        return ("q", a, moved), ["0"] + [
            t for p in zip(a, moved, strict=True) for t in (repr(p[0]), repr(p[1]))
        ]
    if kind == "shifted_s" and "s" in templates:
        shift = float(rng.randint(-50, 50))
        s = [x + shift for x in templates["s"]]
        if any(
            Fraction(x) + Fraction(shift) != Fraction(y)
            for x, y in zip(templates["s"], s, strict=True)
        ):
            return None
        return ("s", s), ["2"] + [repr(x) for x in s]
    if kind in ("q", "shifted_q"):
        return _quantile_row(rng, centre, scale, short)
    k = rng.randint(1, 12) if rng.random() < 0.9 else rng.randint(13, 300)
    if rng.random() < 0.4:  # duplicates
        pool = [
            _token(rng, max(-1e100, min(1e100, centre + scale * rng.gauss(0, 1))), short)[1]
            for _ in range(max(1, k // 3))
        ]
        s = [rng.choice(pool) for _ in range(k)]
    else:
        s = [
            _token(rng, max(-1e100, min(1e100, centre + scale * rng.gauss(0, 1))), short)[1]
            for _ in range(k)
        ]
    return ("s", s), ["2"] + [repr(x) for x in s]


def make_regression(rng: random.Random, case: Case):
    band = rng.random()
    if band < 0.5:
        exponent = rng.uniform(-3, 3)
    elif band < 0.8:
        exponent = rng.uniform(-100, 95)
    else:
        exponent = rng.uniform(95, 99.5)
    small = band < 0.5 and rng.random() < 0.5
    scale = 10.0**exponent
    centre = 0.0 if rng.random() < 0.4 else max(-5e99, min(5e99, scale * rng.gauss(0, 5)))
    if small:  # whole-number centres: shifted copies keep exact shapes
        scale, centre = rng.choice((0.25, 1.0, 4.0)), float(rng.randint(-20, 20))
    kinds = rng.choice(
        (("g",), ("q",), ("s",), ("p",), ("g", "p"), ("q", "s"), ("g", "q", "s", "p"))
    )
    if small:
        kinds = kinds + ("shifted_q", "shifted_s")
    short = rng.random() < 0.3
    case.levels = _levels(rng)
    templates = {}
    if rng.random() < 0.5:
        templates["v"] = _token(rng, min(1e200, scale * scale), short)[1]
    case.notes += [f"scale=1e{exponent:.1f}", f"kinds={'/'.join(kinds)}", f"short={short}"]
    n = _size(rng) if case.levels is None or len(case.levels) <= 30 else rng.randint(1, 12)
    while len(case.rows) < n:
        kind, spread = rng.choice(kinds), scale
        made = _row(rng, kind, centre, scale, short, templates)
        if rng.random() < 0.006:  # a row of the issue's exactness cases
            made, spread = rng.choice(SPECIAL_ROWS)
        if made is None:
            continue
        row, tokens = made
        if row[0] == "q" and "q" not in templates:
            templates["q"] = (row[1], row[2])
        if row[0] == "s" and "s" not in templates:
            templates["s"] = row[1]
        if row[0] in ("q", "s") and rng.random() < 0.3:  # a Gaussian of the very same variance
            var = ref.row_variance(row)
            if var <= 1e200 and Fraction(float(var)) == var:
                templates["v"] = float(var)
        truth = row[1] if row[0] == "g" else ref.to_float(ref.row_mean(row))
        t = truth + spread * rng.gauss(0, 1)
        if rng.random() < 0.2:  # on a quantile value, a sample value or the mean
            t = rng.choice(row[2] if row[0] == "q" else row[1] if row[0] == "s" else [row[1]])
        t = max(-1e100, min(1e100, t))
        case.rows.append(row)
        case.targets.append(t)
        case.pred_lines.append(" ".join(tokens))
        case.target_lines.append(repr(t))


def make_case(seed: int) -> Case:
    rng = random.Random(seed)
    task = rng.choice(("classification",) * 3 + ("multiclass",) * 3 + ("regression",) * 4)
    case = Case(seed, task, [], [], [], [])
    {"classification": make_binary, "multiclass": make_multiclass, "regression": make_regression}[
        task
    ](rng, case)
    if rng.random() < 0.35:
        names = rng.sample(SLICE_NAMES, rng.randint(1, 3))
        case.slices = [rng.choice(names) for _ in case.rows]
    return case


# --------------------------------------------------------------------------- the reference


def non_probabilistic(case: Case) -> bool:
    """§3 and §7, decided on the whole file (never per slice)."""
    if case.task == "classification":
        return all(p in (0.0, 1.0) for p in case.rows)
    if case.task == "multiclass":
        return all(max(ref.normalised(row, case.classes)) == 1 for row in case.rows)
    return all(row[0] == "g" and row[2] == 0 for row in case.rows)


def reference_file(case: Case) -> ref.File:
    return ref.File(
        case.task,
        case.rows,
        case.targets,
        classes=case.classes,
        levels=case.levels if case.task == "regression" else None,
        non_probabilistic=non_probabilistic(case),
    )


def expected(case: Case, mask=None) -> dict:
    """{"scores": …, "wis_terms": …, "reported": …} of the rows where ``mask`` holds."""
    keep = None if mask is None else [i for i in range(len(case.rows)) if mask[i]]
    return reference_file(case).scores(keep)


# --------------------------------------------------------------------------- checks


def _close(got, want) -> bool:
    if want is None:
        return got is None
    if got is None or not isinstance(got, float) or math.isnan(got):
        return False
    if math.isinf(want) or math.isinf(got):
        return got == want
    return abs(got - want) <= REL * abs(want) or abs(got - want) <= ABS


def compare(got, want: dict, where: str) -> list[str]:
    problems = []
    for name, value in want["scores"].items():
        if name not in got.scores:
            problems.append(f"{where}{name}: missing from scoring's scores {sorted(got.scores)}")
        elif not _close(got.scores[name], value):
            problems.append(f"{where}{name}: scoring {got.scores[name]!r}, reference {value!r}")
    for name in ("aurc", "wis"):
        if name in got.scores and name not in want["scores"]:
            problems.append(f"{where}{name} = {got.scores[name]!r} where §8 has none")
    cov = {k: v for k, v in got.reported.items() if k.startswith("cov")}
    if sorted(cov) != sorted(want["reported"]):
        problems.append(f"{where}coverages: scoring {cov}, reference {want['reported']}")
    else:
        for name, value in want["reported"].items():
            if not _close(float(cov[name]), value):
                problems.append(f"{where}{name}: scoring {cov[name]!r}, reference {value!r}")
    if want["wis_terms"] is not None or "wis" in want["scores"]:
        terms = got.terms().get("wis")
        if (terms is None) != (want["wis_terms"] is None):
            problems.append(
                f"{where}terms[wis]: scoring {terms!r}, reference {want['wis_terms']!r}"
            )
        elif terms is not None:
            bad = [
                i
                for i, (g, w) in enumerate(zip(terms, want["wis_terms"], strict=False))
                if not _close(float(g), w)
            ]
            if len(terms) != len(want["wis_terms"]) or bad:
                i = bad[0] if bad else 0
                problems.append(
                    f"{where}terms[wis] differ at {len(bad)} rows, first {i + 1}: "
                    f"scoring {terms[i]!r}, reference {want['wis_terms'][i]!r}"
                )
    return problems


def disagreements(case: Case) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            got = scoring.evaluate(case.pred, case.target, task=case.task, options=case.options())
        except scoring.ScoringError as error:
            return [f"scoring rejected a valid file: {error}"]
        want = reference_file(case)
        problems = compare(got, want.scores(), "")
        if case.slices is not None:
            names = np.array(case.slices)
            parts = got.by_slice(names)
            order = list(dict.fromkeys(case.slices))
            if list(parts) != order:
                problems.append(f"by_slice order: scoring {list(parts)}, first appearances {order}")
            for name in order:
                if name in parts:
                    keep = [i for i, x in enumerate(case.slices) if x == name]
                    problems += compare(parts[name], want.scores(keep), f"@{name}: ")
    if caught:
        problems.append(f"warnings on a valid file: {[str(w.message) for w in caught]}")
    return problems


def _report(failures: list, total: int) -> str:
    lines = [f"{len(failures)} of {total} files disagree; first ones:"]
    for case, problems in failures[:3]:
        lines.append(case.describe())
        lines += [f"  - {p}" for p in problems[:8]]
    return "\n".join(lines)


@pytest.mark.parametrize("batch", range(BATCHES))
def test_scoring_agrees_with_the_exact_reference(batch):
    failures = []
    seeds = range(batch * SEEDS_PER_BATCH, (batch + 1) * SEEDS_PER_BATCH)
    for seed in seeds:
        case = make_case(seed)
        problems = disagreements(case)
        if problems:
            failures.append((case, problems))
    assert not failures, _report(failures, len(seeds))


# ------------------------------------------------------------- the rows behind the scores


def _far(got: float, want) -> bool:
    """``got`` outside §3's tolerance of the exact ``want`` (a Fraction or an mpf)."""
    return not _close(float(got), ref.to_float(want)) and abs(ref.mpf(got) - ref.mpf(want)) > (
        REL * abs(ref.mpf(want))
    )


def row_disagreements(case: Case) -> list[str]:
    """The interface the losses read (brief of issue 27: ``RegressionRows``): each row's
    §8 variance, its residual t − m and its quantiles at the levels, against the exact ones."""
    rows = scoring.read_regression(case.pred, path="p", targets=np.array(case.targets))
    want = reference_file(case)
    problems = []
    variance = rows.predictive_variance()
    residual = rows.residuals(np.array(case.targets))
    for i, row in enumerate(case.rows):
        exact = Fraction(case.targets[i]) - ref.row_mean(row)
        if _far(residual[i], exact):
            problems.append(f"row {i + 1}: residual {residual[i]!r}, exact {float(exact)!r}")
        if _far(variance[i], want.keys[i]):
            problems.append(f"row {i + 1}: variance {variance[i]!r}, exact {float(want.keys[i])!r}")
    if case.levels is not None:
        got = rows.quantiles(np.array(case.levels))
        for i, row in enumerate(want.read):
            for k, (base, offset) in enumerate(row):
                exact = base if isinstance(offset, int) else ref.mpf(base) + offset
                if _far(got[i, k], exact):
                    problems.append(
                        f"row {i + 1} at {case.levels[k]!r}: {got[i, k]!r}, exact {float(exact)!r}"
                    )
    return problems


@pytest.mark.parametrize("batch", range(4))
def test_the_rows_read_as_section_8_says(batch):
    failures, seen = [], 0
    for seed in range(batch * 200, (batch + 1) * 200):  # the regression files among them
        case = make_case(seed)
        if case.task != "regression":
            continue
        seen += 1
        problems = row_disagreements(case)
        if problems:
            failures.append((case, problems))
    assert not failures, _report(failures, seen)


# ------------------------------------------------------------------ hand-computed tables


def _line(task: str, row) -> str:
    if task == "classification":
        return repr(row)
    if task == "multiclass":
        return " ".join(repr(x) for x in row)
    if row[0] == "g":
        return f"1 {row[1]!r} {row[2]!r}"
    if row[0] == "q":
        return "0 " + " ".join(f"{a!r} {q!r}" for a, q in zip(row[1], row[2], strict=True))
    return "2 " + " ".join(repr(x) for x in row[1])


def hand_case(task, rows, targets, *, classes=None, levels=None, slices=None, seed="hand"):
    return Case(
        seed,
        task,
        list(rows),
        list(targets),
        [_line(task, row) for row in rows],
        [repr(t) if task == "regression" else str(t) for t in targets],
        classes=classes,
        levels=levels,
        slices=slices,
    )


QUARTERS = ("q", [0.25, 0.75], [-1.25, 0.75])  # §2's Fig. 4 row: b1 = bN = 1, m = −1/4, var 8/3
LN = math.log
HAND = [
    # (case, {name: exact value}); binary: c = max(p, 1 − p) decreasing, e = 1 − a
    # c = (0.9, 0.6, 0.8), e = (1, 0, 0): E = (1, 1, 1)
    (hand_case("classification", [0.9, 0.6, 0.2], [-1, 1, -1]), {"rauc": 1 / 3, "aurc": 11 / 18}),
    # one run of two, e = (0, 1): E = (½, 1); rauc = 3/2 / 4, aurc = (½ + ½)/2
    (hand_case("classification", [0.5, 0.5], [1, -1]), {"rauc": 3 / 8, "aurc": 1 / 2}),
    # 0.25 and 0.75 are dyadic: 1 − 0.25 = 0.75 exactly, a tie; e = (1, 0)
    (hand_case("classification", [0.25, 0.75], [1, 1]), {"rauc": 3 / 8, "aurc": 1 / 2}),
    # the double 0.3 is below 3/10, so its exact 1 − p is above the double 0.7: no tie, the
    # wrong p = 0.3 comes first: E = (1, 1)
    (hand_case("classification", [0.3, 0.7], [1, 1]), {"rauc": 1 / 2, "aurc": 3 / 4}),
    (hand_case("classification", [0.0, 1.0], [1, 1]), {"rauc": None, "aurc": None}),
    # multiclass: ŷ = (0, 0 on the tie, 1), e = (1, 0, 0), c = (¾, ½, ¾): E = (½, 1, 1)
    (
        hand_case("multiclass", [[0.75, 0.25], [0.5, 0.5], [0.25, 0.75]], [1, 0, 1], classes=2),
        {"rauc": 5 / 18, "aurc": 4 / 9},
    ),
    # an ensemble of two one-hot members is (½, ½): ŷ = 0, wrong and least sure: E = (0, 1)
    (
        hand_case("multiclass", [[1.0, 0.0, 0.0, 1.0], [0.75, 0.25]], [1, 0], classes=2),
        {"rauc": 1 / 4, "aurc": 1 / 4},
    ),
    (
        hand_case("multiclass", [[1.0, 0.0], [0.0, 1.0]], [1, 0], classes=2),
        {"rauc": None, "aurc": None},
    ),
    # regression: variance increasing; e = (1, 4, 9), keys (1, 4, 1): E = (5, 10, 14)
    (
        hand_case(
            "regression", [("g", 0.0, 1.0), ("g", 0.0, 4.0), ("s", [-1.0, 1.0])], [1.0, 2.0, 3.0]
        ),
        {"rauc": 29 / 9},
    ),
    # a point (key 0, e 1), the Fig. 4 row (key 8/3, e 1/16), a Gaussian (key 2, e 0)
    (
        hand_case("regression", [("g", 0.0, 0.0), QUARTERS, ("g", 1.0, 2.0)], [1.0, 0.0, 1.0]),
        {"rauc": 49 / 144},
    ),
    (hand_case("regression", [("g", 0.0, 0.0), ("g", 1.0, 0.0)], [1.0, 0.0]), {"rauc": None}),
    # wis: QS_½(0, 1) = 2(0 − ½)(0 − 1) = 1
    (hand_case("regression", [("g", 0.0, 1.0)], [1.0], levels=(0.5,)), {"wis": 1.0, "rauc": 1.0}),
    # the Fig. 4 row at its own levels, t = 0: (2·¼·1.25 + 2·¼·0.75)/2 = ½; [−1.25, 0.75] ∋ 0
    (hand_case("regression", [QUARTERS], [0.0], levels=(0.25, 0.75)), {"wis": 0.5, "cov50": 1.0}),
    # and in its tails: q = −1.25 + ln 0.4, 0.75 + ln 2.5: wis = 0.2(1 + ln 2.5)
    (
        hand_case("regression", [QUARTERS], [0.0], levels=(0.1, 0.9)),
        {"wis": 0.2 * (1 + LN(2.5)), "cov80": 1.0},
    ),
    # a sample at 0.1 and 0.9: 1.3 and 3.7 (numpy's linear rule), t = 4: (0.54 + 0.54)/2
    (
        hand_case("regression", [("s", [4.0, 2.0, 1.0, 3.0])], [4.0], levels=(0.1, 0.9)),
        {"wis": 0.54, "cov80": 0.0},
    ),
    # N(0, 4) at 0.025 and 0.975: ∓2z, z = Φ⁻¹(0.975); wis = 2·0.025·2z, inside the interval
    (
        hand_case("regression", [("g", 0.0, 4.0)], [0.0], levels=(0.025, 0.975)),
        {"wis": 0.1 * 1.959963984540054, "cov95": 1.0},
    ),
]


@pytest.mark.parametrize("index", range(len(HAND)))
def test_hand_computed_values(index):
    case, values = HAND[index]
    want = expected(case)
    table = {**want["scores"], **want["reported"]}
    for name, value in values.items():
        if value is None:
            assert table[name] is None, (name, table)
        else:
            assert math.isclose(table[name], value, rel_tol=1e-14), (name, table[name], value)
    assert disagreements(case) == []


# ------------------------------------------------- the issue's exactness cases (§3 and §8)

EXACTNESS = [
    # five identical copies of X: mean X exactly (not …7013267), variance exactly 0, tied
    # with the point prediction; e ≈ 1e-8 of a mean one ulp (1.2e-7) off is 0.2 % off
    hand_case("regression", [("s", [X] * 5)], [X + 1e-4], levels=(0.05, 0.5, 0.95)),
    hand_case(
        "regression",
        [("s", [X] * 5), ("g", X, 0.0), ("g", 1e9, 1.0)],
        [X, 1e9, 999999999.0],
        levels=(0.5,),
    ),
    # tails b1 ≈ bN ≈ 5e12 whose mean terms (2.5e12 each) cancel
    hand_case(
        "regression", [("q", [0.5, 0.5000000000001], [0.0, 1.0])], [0.5], levels=(0.05, 0.5, 0.95)
    ),
    hand_case(
        "regression",
        [("q", [0.5, 0.5000000000001], [0.0, 1.0]), ("g", 0.0, 1e25), ("s", [0.0, 1.0])],
        [0.5, 0.0, 2.0],
        levels=(0.25, 0.75),
    ),
    # the mean of 0 0.1 −1e100 0.9 1e100 is ≈ −4.2e83, not 0 (1 − 0.9 ≠ 0.1 exactly)
    hand_case(
        "regression",
        [("q", [0.1, 0.9], [-1e100, 1e100])],
        [0.0],
        levels=(0.05, 0.1, 0.5, 0.9, 0.95),
    ),
    hand_case(
        "regression",
        [("q", [0.1, 0.9], [-1e100, 1e100]), ("g", 1e100, 1e200), ("s", [-1e100, 1e100])],
        [0.0, -1e100, 1e100],
        levels=(0.05, 0.95),
        slices=["a", "b", "a"],
    ),
]


# The targets on the double nearest the exact mean: t − m is the mean's rounding error, and
# rauc = (t − m)² is within 1e-9 only if the mean is known far beyond a double (§3's rule
# holds for every valid file). The mean of the first row, −9007199254740091/2^54, is a double:
# rauc = 0 exactly.
EXACTNESS += [
    hand_case(
        "regression", [("q", [0.5, 0.5000000000001], [0.0, 1.0])], [-9007199254740091 / 2**54]
    ),
    hand_case("regression", [("q", [0.1, 0.9], [-1e100, 1e100])], [-4.163336342344337e83]),
    hand_case("regression", [("s", [X] * 5), ("g", 0.0, 1.0)], [X, 0.5]),
    # bN ≈ 1e300 and ≈ 4.5e310: errors beyond the largest double (rauc = +inf, the exact value
    # exceeds it), and a wis finite, then +inf
    hand_case(
        "regression",
        [("q", [5e-324, 1e-300], [0.0, 1.0]), ("g", 0.0, 1.0)],
        [0.0, 1.0],
        levels=(0.25, 0.5, 0.75),
    ),
    hand_case(
        "regression",
        [("q", [5e-324, 2.225073858507e-311], [0.0, 1.0]), ("g", 0.0, 1.0)],
        [0.0, 1.0],
        levels=(0.25, 0.5, 0.75),
    ),
]


@pytest.mark.parametrize("index", range(len(EXACTNESS)))
def test_the_issues_exactness_cases(index):
    case = EXACTNESS[index]
    case.seed = f"EXACTNESS[{index}]"
    problems = disagreements(case)
    assert not problems, case.describe() + "\n" + "\n".join(problems)


# ---------------------------------------------------------------- minimal disagreements
# Minimal files on which scoring and the letter of §8 disagreed in the random run above
# (reported in /tmp/status27/H6.md while issue 27 was built), kept so that they stay fixed.

MINIMAL = {
    # §7's exact probabilities: (0.2, 0.3, 0.5) sums to exactly 1 (c = 1/2, right); three
    # members normalised to exactly 1/3 each and a one-hot average to (1/2, 1/4, 1/4) (c = 1/2,
    # wrong): one run, rauc = (1/2 + 1)/4 = 3/8, aurc = 1/2
    "exact multiclass tie": hand_case(
        "multiclass",
        [[0.2, 0.3, 0.5], [0.3333333333333333] * 9 + [1.0, 0.0, 0.0]],
        [2, 1],
        classes=3,
    ),
    # 0.5/(1 + 1e-300) is below 0.5, exactly: the second row is strictly surer (no tie)
    "multiclass keys a hair apart": hand_case(
        "multiclass", [[1e-300, 0.5, 0.5], [0.0, 0.5, 0.5]], [1, 2], classes=3
    ),
    # the second row is the first moved by +1: §8's variances are exactly equal, a tie
    "shifted quantile rows tie": hand_case(
        "regression",
        [
            ("q", [0.11, 0.58, 0.61], [-4.935, -3.524, -1.424]),
            ("q", [0.11, 0.58, 0.61], [-3.9349999999999996, -2.524, -0.42399999999999993]),
        ],
        [0.0, 0.0],
    ),
    # the second sample is the first moved by −5, exactly: equal population variances
    "shifted samples tie": hand_case(
        "regression",
        [
            ("s", [14.50605, 14.50605, 14.50605, 13.856871, 14.50605, 14.50605]),
            ("s", [9.50605, 9.50605, 9.50605, 8.856871, 9.50605, 9.50605]),
        ],
        [0.0, 0.0],
    ),
    # (the double 1e100)² is 6.2e183 above the double 1e200: the Gaussian is strictly surer
    "variances one double apart": hand_case(
        "regression", [("g", 1e100, 1e200), ("s", [-1e100, 1e100])], [-1e100, 1e100]
    ),
    # a slice of points in a probabilistic file: the file is probabilistic (§3, §7: decided
    # on the whole file, never per slice)
    "binary slice of zeros and ones": hand_case(
        "classification", [0.0, 0.5], [1, 1], slices=["in", "shifted"]
    ),
    "regression slice of points": hand_case(
        "regression",
        [("g", 0.0, 0.0), ("g", 1.0, 1.0)],
        [1.0, 0.0],
        levels=(0.25, 0.75),
        slices=["in", "shifted"],
    ),
    # K = 11 at α = 0.2: numpy's index 10·0.2 is 2 exactly, the 3rd smallest value, = t
    "sample read on a value": hand_case(
        "regression",
        [
            (
                "s",
                [
                    1.9972071198338167e99,
                    1.0486726717183508e99,
                    4.2576741353603043e98,
                    -6.746332977051739e98,
                    -1.24944787564861e98,
                    2.0108723130443235e98,
                    -9.409609405121249e98,
                    1.1278036603172518e99,
                    2.3550965452164166e99,
                    -1.2181434033927405e99,
                    1.207017998291042e99,
                ],
            )
        ],
        [-6.746332977051739e98],
        levels=(0.2, 0.8),
    ),
    # bN ≈ 2.1e303: the reading at 0.5 is ≈ 1.45e303, finite (never NaN, no warning)
    "tail near the largest double": hand_case(
        "regression",
        [
            (
                "q",
                [1.5291440615775928e-282, 1.0548400215451085e-210, 2.9708949439426278e-210],
                [-8.841468999147238e96, 8.885833014420837e97, 8.886237510934287e97],
            )
        ],
        [1e100],
        levels=(0.38, 0.5, 0.62),
    ),
    # the mean ≈ 5.46e12 (an upper tail bN ≈ 5.5e12): t − m ≈ 5.27 needs it to ~1e-22
    "residual of a far tail": hand_case(
        "regression",
        [
            (
                "q",
                [
                    4.488096201843625e-26,
                    8.441764945293863e-17,
                    9.303209216693358e-17,
                    2.3514178338732977e-12,
                ],
                [3.0806817, 3.1290606, 5.1153924, 17.95736],
            )
        ],
        [5461588118437.068],
    ),
}


@pytest.mark.parametrize("name", sorted(MINIMAL))
def test_minimal_disagreements_stay_fixed(name):
    case = MINIMAL[name]
    case.seed = name
    problems = disagreements(case)
    assert not problems, case.describe() + "\n" + "\n".join(problems)
