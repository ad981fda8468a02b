"""Differential test: ``scoring.evaluate`` against the plain reference of tests/scoring/reference.py.

Every run draws ``BATCHES × SEEDS_PER_BATCH`` = 2,100 seeded random prediction/target file
pairs (about 2,050 of them valid), written the ways participants write them (MATLAB ``%16.7e`` fixed width,
``np.savetxt``'s ``%.18e``, ``repr``/``%.17g``, ``%g`` with tabs, mixed separators and
spellings, CRLF, trailing blank lines, leading/trailing blanks), with every row type of
spec §1 (classification p; Gaussian, point, quantile and sample rows mixed in one file),
scales from 1e-12 to the ±1e100 bound, ties, one-class and constant targets, p of exactly
0 or 1, and log bases 2, e and 10. Each loss must agree with the reference within the
exactness rule of spec §3 (1e-9 relative, 1e-12 absolute near 0; inf = inf; n/a = n/a).
A failure names the seed: ``make_case(seed)`` rebuilds the very same files.

A second set corrupts random valid files (a value 2e100, a variance −1, quantile levels
not increasing, …) and checks only that scoring rejects exactly the files the reference
rejects.
"""

from __future__ import annotations

import math
import random
import warnings
from dataclasses import dataclass, field
from fractions import Fraction

import mpmath
import pytest

import scoring
from scoring import ScoringError, ScoringOptions

from . import reference
from .reference import Invalid

BATCHES = 42
SEEDS_PER_BATCH = 50
INVALID_BATCHES = 4
INVALID_PER_BATCH = 75
LOG_BASES = (2.0, math.e, 10.0)
REL, ABS = 1e-9, 1e-12
EPS = 2.0**-52
SHOW = 1500  # characters of each file shown in a failure message

# ------------------------------------------------------------------------- layouts

STYLES = ("matlab", "matlab_tabs", "savetxt", "repr", "g17", "g_tab", "mixed")
_FORMATS = {
    "matlab": lambda x: f"{x:.7e}",
    "savetxt": lambda x: f"{x:.18e}",
    "repr": repr,
    "g17": lambda x: f"{x:.17g}",
    "g": lambda x: f"{x:g}",
}


def _respell(token: str, rng: random.Random) -> str:
    """Other spellings float() reads: .5, +0.5, 1E+00, 3."""
    choice = rng.randrange(6)
    if choice == 0 and token.startswith("0."):
        return token[1:]
    if choice == 1 and token.startswith("-0."):
        return "-" + token[2:]
    if choice == 2 and not token.startswith("-"):
        return "+" + token
    if choice == 3:
        return token.upper()
    if choice == 4 and token.lstrip("+-").isdigit():
        return token + "."
    return token


class Layout:
    """How one file is written: number format, separators, line ends and blank decorations."""

    def __init__(self, rng: random.Random, style: str | None = None):
        self.rng = rng
        self.style = style or rng.choice(STYLES)
        self.crlf = rng.random() < 0.3
        self.final_newline = rng.random() < 0.85
        self.blank_tail = rng.choice((0, 0, 0, 1, 2, 3))
        self.lead = rng.random() < 0.2
        self.trail = rng.random() < 0.2
        # participants writing repr / %.17g usually write the flag as an integer
        self.int_flags = rng.random() < 0.7

    def number(self, x: float) -> str:
        style, rng = self.style, self.rng
        if style in ("matlab", "matlab_tabs"):
            return _FORMATS["matlab"](x)
        if style == "savetxt":
            return _FORMATS["savetxt"](x)
        if style == "repr":
            return repr(x)
        if style == "g17":
            return _FORMATS["g17"](x)
        if style == "g_tab":
            return _FORMATS["g"](x)
        return _respell(_FORMATS[rng.choice(tuple(_FORMATS))](x), rng)

    def value(self, x: float) -> tuple[str, float]:
        token = self.number(x)
        return token, float(token)

    def flag(self, k: int) -> str:
        if self.style in ("repr", "g17", "g_tab") and self.int_flags:
            return str(k)
        if self.style == "mixed":
            return self.rng.choice((str(k), f"{k}.0", f"+{k}", f"{k:.7e}", f"{k}e0", f"0{k}"))
        return self.number(float(k))

    def line(self, tokens: list[str]) -> str:
        rng = self.rng
        if not tokens:  # a blank line (only invalid files have one before the last example)
            return rng.choice(("", " ", "\t"))
        if self.style == "matlab":
            text = "".join(tok.rjust(16) for tok in tokens)
        elif self.style == "matlab_tabs":
            text = "\t".join(tok.rjust(16) for tok in tokens)
        elif self.style in ("savetxt", "repr", "g17"):
            text = " ".join(tokens)
        elif self.style == "g_tab":
            text = "\t".join(tokens)
        else:
            text = tokens[0]
            for tok in tokens[1:]:
                text += "".join(rng.choice(" \t") for _ in range(rng.randint(1, 3))) + tok
        if self.lead and rng.random() < 0.5:
            text = rng.choice((" ", "  ", "\t", " \t")) + text
        if self.trail and rng.random() < 0.5:
            text += rng.choice((" ", "  ", "\t", "\t "))
        return text

    def render(self, rows: list[list[str]]) -> bytes:
        eol = "\r\n" if self.crlf else "\n"
        body = eol.join(self.line(tokens) for tokens in rows)
        if self.final_newline or self.blank_tail:
            body += eol
        for i in range(self.blank_tail):
            body += self.rng.choice(("", "", " ", "\t", "  "))
            if i < self.blank_tail - 1 or self.final_newline:
                body += eol
        return body.encode("ascii")


# --------------------------------------------------------------------------- cases


@dataclass
class Case:
    seed: int
    task: str | None
    kind: str  # "classification" or "regression"
    pred_rows: list[list[str]]
    target_rows: list[list[str]]
    pred_layout: Layout
    target_layout: Layout
    log_base: float = math.e
    allow_samples: bool = True
    min_quantile_gap: float = 0.0
    notes: list[str] = field(default_factory=list)
    pred: bytes = b""
    target: bytes = b""

    def render(self):
        self.pred = self.pred_layout.render(self.pred_rows)
        self.target = self.target_layout.render(self.target_rows)
        return self

    def options(self) -> ScoringOptions:
        return ScoringOptions(
            log_base=self.log_base,
            allow_samples=self.allow_samples,
            min_quantile_gap=self.min_quantile_gap,
        )

    def describe(self) -> str:
        def show(data: bytes) -> str:
            text = data.decode("ascii", "replace")
            return repr(text if len(text) <= SHOW else text[:SHOW] + "…")

        return (
            f"seed={self.seed} task={self.task} log_base={self.log_base} "
            f"allow_samples={self.allow_samples} min_quantile_gap={self.min_quantile_gap} "
            f"styles={self.pred_layout.style}/{self.target_layout.style} notes={self.notes}\n"
            f"  predictions={show(self.pred)}\n  targets={show(self.target)}"
        )


def _target_token(layout: Layout, t: float) -> str:
    """A target token that reads back as exactly ``t`` (ties must survive the format)."""
    token = layout.number(t)
    return token if float(token) == t else repr(t)


def _clamp(x: float, bound: float = 1e100) -> float:
    return max(-bound, min(bound, x))


def _p_value(rng: random.Random, mode: str) -> float:
    if mode == "mixed":
        mode = rng.choice(("uniform", "ties", "tiny", "edges", "zero_one"))
    if mode == "uniform":
        return rng.random()
    if mode == "ties":
        return rng.choice((0.0, 0.1, 0.25, 0.5, 0.5, 0.75, 0.9, 1.0, 1 / 3))
    if mode == "tiny":
        x = 10.0 ** -rng.uniform(1, 12)
        return x if rng.random() < 0.5 else 1 - x
    if mode == "edges":  # the ECE bin edges m/15 (as doubles), from both sides
        m = rng.randint(7, 15)
        return m / 15 if rng.random() < 0.5 else 1 - m / 15
    return float(rng.randint(0, 1))  # zero_one


def make_classification(rng: random.Random, seed: int) -> Case:
    n = rng.randint(1, 40)
    pl = Layout(rng)
    tl = Layout(rng, pl.style if rng.random() < 0.5 else None)
    mode = rng.choice(("uniform", "uniform", "ties", "tiny", "edges", "zero_one", "mixed"))
    sprinkle = rng.random() < 0.25  # some p of exactly 0 or 1 in a probabilistic file
    target_mode = rng.choice(("follow", "follow", "noise", "one_class"))
    sign = rng.choice((1, -1))
    pred_rows, target_rows = [], []
    for _ in range(n):
        x = _p_value(rng, mode)
        if sprinkle and rng.random() < 0.2:
            x = float(rng.randint(0, 1))
        token, p = pl.value(x)
        if target_mode == "follow":
            y = 1 if rng.random() < p else -1
        elif target_mode == "noise":
            y = rng.choice((1, -1))
        else:
            y = sign
        pred_rows.append([token])
        target_rows.append([_class_token(tl, y)])
    case = Case(
        seed,
        rng.choice(("classification",) * 3 + (None,)),
        "classification",
        pred_rows,
        target_rows,
        pl,
        tl,
        log_base=rng.choice(LOG_BASES),
        notes=[f"p={mode}", f"targets={target_mode}"] + (["sprinkled 0/1"] if sprinkle else []),
    )
    return case


def _class_token(layout: Layout, y: int) -> str:
    if layout.style == "mixed":
        return layout.rng.choice((str(y), "+1" if y > 0 else "-1", f"{y}.0", f"{y:.7e}"))
    return layout.flag(y) if layout.style in ("repr", "g17", "g_tab") else layout.number(float(y))


def _strict(xs) -> bool:
    return all(a < b for a, b in zip(xs[:-1], xs[1:], strict=True))


def _levels(rng: random.Random, n: int) -> list[float]:
    mode = rng.choice(("uniform", "uniform", "even", "edges", "tiny_gap", "extreme"))
    if mode == "even":
        return [(k + 1) / (n + 1) for k in range(n)]
    levels = sorted(rng.random() for _ in range(n))
    if mode == "edges":
        levels[0] = 10.0 ** -rng.uniform(1, 12)
        levels[-1] = 1 - 10.0 ** -rng.uniform(1, 8)
        levels.sort()
    elif mode == "tiny_gap":
        k = rng.randrange(n - 1)
        levels[k + 1] = levels[k] + levels[k] * 10.0 ** -rng.uniform(4, 12)
        levels.sort()
    elif mode == "extreme":  # levels far below 1e-12: huge tails (means up to ~1e300)
        levels = sorted(10.0 ** -rng.uniform(12, 200) for _ in range(n))
    return levels


def _quantile_row(rng, pl: Layout, m: float, scale: float, coarse: bool, unit: float):
    for _ in range(30):
        n = rng.randint(2, 20) if rng.random() < 0.95 else rng.randint(21, 40)
        a_tokens = [pl.value(a) for a in _levels(rng, n)]
        if coarse:
            start = m - unit * rng.randint(0, 2 * n)
            gaps = [unit * rng.randint(1, 3) for _ in range(n - 1)]
        else:
            start = m - scale * rng.uniform(0, 3)
            gaps = [
                scale * rng.expovariate(1.0) * 10.0 ** rng.choice((0, 0, 0, -3, 2))
                for _ in range(n - 1)
            ]
        values = [start]
        for g in gaps:
            values.append(values[-1] + g)
        q_tokens = [pl.value(_clamp(v)) for v in values]
        a = [v for _, v in a_tokens]
        q = [v for _, v in q_tokens]
        if a[0] > 0 and a[-1] < 1 and _strict(a) and _strict(q):
            tokens = [pl.flag(0)]
            for (ta, _), (tq, _) in zip(a_tokens, q_tokens, strict=True):
                tokens += [ta, tq]
            return tokens, ("q", a, q)
    return [pl.flag(0), "0.25", "-1", "0.75", "1"], ("q", [0.25, 0.75], [-1.0, 1.0])


def _tiny_variance_mean(rng: random.Random, pl: Layout, t: float, v: float):
    """The mean of a row of tiny variance v: its −ln p(t) either far beyond the largest
    double or below 1e300, a row term that may overflow while the mean over the rows does
    not (test_a_finite_nlpd_whose_row_term_overflows)."""
    if rng.random() < 0.5:
        d = math.copysign(1e6 * rng.uniform(1, 10), -t if t else 1.0)
    else:
        d = rng.uniform(0, 1) * math.sqrt(1e300 * v)
    return pl.value(t + d)


def make_regression(rng: random.Random, seed: int) -> Case:
    n = rng.randint(1, 40)
    pl = Layout(rng)
    tl = Layout(rng, pl.style if rng.random() < 0.5 else None)
    notes = []
    coarse = rng.random() < 0.25
    unit = rng.choice((1.0, 0.25, 10.0, 1000.0, 0.5))
    band = rng.random()
    if band < 0.4:
        exponent = rng.uniform(-3, 3)
    elif band < 0.7:
        exponent = rng.uniform(-12, 12)
    elif band < 0.93:
        exponent = rng.uniform(12, 99)
    else:  # at the bound: many values clamped to exactly ±1e100, variances to 1e200
        exponent = rng.uniform(99.3, 99.9)
    scale = 10.0**exponent
    centre = 0.0 if rng.random() < 0.3 else _clamp(scale * rng.gauss(0, 3), 5e99)
    if coarse:
        scale, centre = unit, unit * rng.randint(-20, 20)
        notes.append(f"coarse unit={unit}")
    else:
        notes.append(f"scale=1e{exponent:.1f}")
    kinds = rng.choice(
        (("g",), ("q",), ("s",), ("p",), ("g", "q"), ("g", "p"), ("q", "s"), ("g", "q", "s", "p"))
    )
    if rng.random() < 0.1:
        kinds = ("g", "q", "s", "p")
    mixed_scales = not coarse and rng.random() < 0.15
    tie_rate = rng.choice((0.0, 0.0, 0.15, 0.5))
    constant = rng.random() < 0.08
    notes += [f"kinds={''.join(kinds)}", f"ties={tie_rate}"]
    if mixed_scales:
        notes.append("mixed scales")
    if constant:
        notes.append("constant targets")
    pred_rows, target_rows, parsed = [], [], []
    constant_target = None
    for _ in range(n):
        row_scale = scale
        if mixed_scales:
            row_scale = min(1e99, scale * 10.0 ** rng.choice((0, -3, 3, -10, 10, 30)))
        if coarse:
            truth = centre + unit * rng.randint(-5, 5)
        else:
            truth = _clamp(centre + row_scale * rng.gauss(0, 1))
        kind = rng.choice(kinds)
        if coarse:
            m = truth + unit * rng.randint(-2, 2)
        else:
            m = truth if rng.random() < 0.1 else _clamp(truth + row_scale * rng.gauss(0, 1))
        if kind in ("g", "p"):
            tm, m = pl.value(m)
            if kind == "p":
                tv, v = pl.value(0.0)
            elif coarse:
                tv, v = pl.value(unit * unit * rng.randint(1, 4))
            elif rng.random() < 0.03:  # subnormal to tiny variances: nlpd may exceed the doubles
                tv, v = pl.value(rng.choice((5e-324, 1e-310, 1e-300)))
            else:
                tv, v = pl.value(min(1e200, (row_scale * rng.uniform(0.05, 3)) ** 2))
            tokens, row = [pl.flag(1), tm, tv], ("g", m, v)
            tie_points = [m]
        elif kind == "q":
            tokens, row = _quantile_row(rng, pl, m, row_scale, coarse, unit)
            tie_points = row[2]
        else:
            k = rng.randint(1, 20)
            if coarse or rng.random() < 0.2:
                base = [m + unit * rng.randint(-2, 2) for _ in range(max(1, k // 3))]
                if coarse:
                    values = [rng.choice(base) for _ in range(k)]
                else:
                    values = [_clamp(rng.choice(base)) for _ in range(k)]
            else:
                values = [_clamp(m + row_scale * rng.gauss(0, 1)) for _ in range(k)]
            pairs = [pl.value(x) for x in values]
            tokens = [pl.flag(2)] + [tok for tok, _ in pairs]
            row = ("s", [x for _, x in pairs])
            tie_points = row[1]
        t = truth
        if rng.random() < tie_rate:
            t = rng.choice(tie_points)  # a target exactly on a quantile, sample or mean
        if constant:
            constant_target = t if constant_target is None else constant_target
            t = constant_target
        if row[0] == "g" and 0 < row[2] < 1e-290:
            tokens[1], m = _tiny_variance_mean(rng, pl, t, row[2])
            row = ("g", m, row[2])
        pred_rows.append(tokens)
        parsed.append(row)
        target_rows.append([_target_token(tl, t)])
    case = Case(
        seed,
        rng.choice(("regression",) * 3 + (None,)),
        "regression",
        pred_rows,
        target_rows,
        pl,
        tl,
        log_base=rng.choice(LOG_BASES),
        notes=notes,
    )
    has_samples = any(row[0] == "s" for row in parsed)
    if rng.random() < (0.03 if has_samples else 0.1):
        case.allow_samples = False
    gaps = [
        (Fraction(b) - Fraction(a), max(abs(a), abs(b)))
        for row in parsed
        if row[0] == "q"
        for a, b in zip(row[2][:-1], row[2][1:], strict=True)
    ]
    if gaps and rng.random() < 0.08:
        factor = rng.choice((0.5, 2.0, 1.0) if coarse else (0.5, 2.0))
        w = float(min(g for g, _ in gaps) * Fraction(factor))
        # (w may round above the exact smallest gap: test_a_quantile_gap_a_few_ulps_below_...)
        if 0 < w < math.inf:
            case.min_quantile_gap = w
    return case


def make_case(seed: int) -> Case:
    rng = random.Random(seed)
    if rng.random() < 0.4:
        return make_classification(rng, seed).render()
    return make_regression(rng, seed).render()


# --------------------------------------------------------------------------- checks


def _close(got, want) -> bool:
    if want is None:
        return got is None
    if got is None or not isinstance(got, float) or math.isnan(got):
        return False
    if math.isinf(want):
        return got == want
    if math.isinf(got):
        return False
    return abs(got - want) <= REL * abs(want) or abs(got - want) <= ABS


def run_scoring(case: Case):
    """Scoring's verdict: (Evaluation or None when it raised ScoringError, warnings)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            got = scoring.evaluate(case.pred, case.target, task=case.task, options=case.options())
        except ScoringError:
            got = None
    return got, [str(w.message) for w in caught]


def run_reference(case: Case):
    try:
        return reference.evaluate(
            case.pred,
            case.target,
            case.task,
            log_base=case.log_base,
            allow_samples=case.allow_samples,
            min_quantile_gap=case.min_quantile_gap,
        )
    except Invalid:
        return None


def disagreements(case: Case, want) -> list[str]:
    """Human-readable differences between scoring and the reference ``want`` (empty if none)."""
    got, caught = run_scoring(case)
    if want is None or got is None:
        if (want is None) != (got is None):
            verdict = "rejected" if got is None else f"accepted (scores {got.scores})"
            return [f"reference says valid={want is not None}, scoring {verdict}"]
        return []
    problems = []
    if caught:
        problems.append(f"warnings on a valid file: {caught}")
    if str(got.task) != want.task:
        problems.append(f"task: scoring {got.task}, reference {want.task}")
        return problems
    if got.non_probabilistic != want.non_probabilistic:
        problems.append(
            f"non_probabilistic: scoring {got.non_probabilistic}, reference {want.non_probabilistic}"
        )
    for name, value in want.scores.items():
        if name not in got.scores:
            problems.append(f"{name}: missing from scoring's scores {sorted(got.scores)}")
        elif not _close(got.scores[name], value):
            problems.append(f"{name}: scoring {got.scores[name]!r}, reference {value!r}")
    return problems


def _report(failures: list[tuple[Case, list[str]]], total: int) -> str:
    lines = [f"{len(failures)} of {total} files disagree; first ones:"]
    for case, problems in failures[:3]:
        lines.append(case.describe())
        lines += [f"  - {p}" for p in problems]
    return "\n".join(lines)


@pytest.mark.parametrize("batch", range(BATCHES))
def test_scoring_agrees_with_the_reference(batch):
    failures, valid = [], 0
    seeds = range(batch * SEEDS_PER_BATCH, (batch + 1) * SEEDS_PER_BATCH)
    for seed in seeds:
        case = make_case(seed)
        want = run_reference(case)
        valid += want is not None
        problems = disagreements(case, want)
        if problems:
            failures.append((case, problems))
    assert not failures, _report(failures, len(seeds))
    # the generator makes valid files; the few invalid ones (allow_samples / a quantile gap)
    # only check the verdict
    assert valid >= 0.9 * len(seeds)


# ------------------------------------------------------------------------ invalid files


def _replace(rows, i, j, token):
    rows[i] = rows[i][:j] + [token] + rows[i][j + 1 :]


def corrupt(seed: int) -> Case:
    """A random valid case with one random defect (which the reference then judges)."""
    rng = random.Random(10**9 + seed)
    case = make_case(rng.randrange(10**6))
    case.seed = f"corrupt({seed})"
    pred, target = [list(r) for r in case.pred_rows], [list(r) for r in case.target_rows]
    n = len(pred)
    i = rng.randrange(n)
    defect = rng.choice(
        ("big", "big", "negative_variance", "negative_variance", "levels", "levels")
        + ("nan", "inf", "comma", "blank_line", "cr", "count", "flag", "quantile_values")
    )
    big = rng.choice(("2e100", "-2e100", "2.0000000e+100", "1.0000000000000002e100", "1e308"))
    if defect == "big":
        if rng.random() < 0.7:
            j = (
                rng.randrange(len(pred[i]))
                if case.kind == "classification"
                else 1 + rng.randrange(len(pred[i]) - 1)
            )
            _replace(pred, i, j, big)  # in a variance position 2e100 is still valid
        else:
            _replace(target, i, 0, big)
    elif defect == "negative_variance":
        if case.kind == "classification":
            _replace(pred, i, 0, rng.choice(("-1", "-0.5", "1.5")))
        else:
            pred[i] = ["1", pred[i][1] if len(pred[i]) > 1 else "0", rng.choice(("-1", "-1e-300"))]
    elif defect == "levels":
        if case.kind == "classification":
            _replace(target, i, 0, rng.choice(("0", "2", "0.5")))
        else:
            rows = [k for k, r in enumerate(pred) if float(r[0]) == 0] or [i]
            i = rng.choice(rows)
            pred[i] = rng.choice(
                (
                    ["0", "0.7", "1", "0.3", "2"],
                    ["0", "0.5", "1", "0.5", "2"],
                    ["0", "0.2", "1", "0.6", "2", "0.4", "3"],
                    ["0", "0", "1", "0.5", "2"],
                    ["0", "0.5", "1", "1", "2"],
                )
            )
    elif defect == "quantile_values":
        pred[i] = rng.choice((["0", "0.2", "1", "0.6", "1"], ["0", "0.5", "1"], ["2"]))
        if case.kind == "classification":
            pred[i] = ["0.5", "0.5"]
    elif defect == "nan":
        _replace(pred, i, len(pred[i]) - 1, rng.choice(("nan", "NaN", "-nan")))
    elif defect == "inf":
        _replace(pred, i, len(pred[i]) - 1, rng.choice(("inf", "-Infinity", "+inf")))
    elif defect == "comma":
        _replace(pred, i, 0, pred[i][0] + ",")
    elif defect == "blank_line":
        if n > 1:
            pred.insert(rng.randrange(1, n), [])
        else:
            target.insert(0, [])
    elif defect == "cr":
        _replace(pred, i, 0, pred[i][0] + "\r")
    elif defect == "count":
        if rng.random() < 0.5 or n == 1:
            target.append(target[-1])
        else:
            target.pop()
    elif defect == "flag":
        if case.kind == "classification":
            pred[i] = ["1", "0.5", "0.1"]
        else:
            _replace(pred, i, 0, rng.choice(("3", "-1", "0.5", "1.5")))
    case.pred_rows, case.target_rows = pred, target
    case.notes = [f"defect={defect}"]
    case.pred = case.pred_layout.render(pred)
    case.target = case.target_layout.render(target)
    return case


@pytest.mark.parametrize("batch", range(INVALID_BATCHES))
def test_scoring_rejects_exactly_the_files_the_reference_rejects(batch):
    failures, rejected = [], 0
    seeds = range(batch * INVALID_PER_BATCH, (batch + 1) * INVALID_PER_BATCH)
    for seed in seeds:
        case = corrupt(seed)
        want = run_reference(case)
        got, _ = run_scoring(case)
        rejected += want is None
        if (want is None) != (got is None):
            verdict = "rejected" if got is None else "accepted"
            failures.append((case, [f"reference valid={want is not None}, scoring {verdict}"]))
    assert not failures, _report(failures, len(seeds))
    assert rejected >= 0.7 * len(seeds)


# --------------------------------------------------------------- checks of the reference


def test_reference_quantile_crps_equals_piecewise_quadrature():
    """The closed forms of reference.quantile_* against numerical integrals of §2's CDF."""
    rng = random.Random(7)
    with mpmath.workdps(40):
        for _ in range(6):
            n = rng.randint(2, 5)
            a = sorted(rng.uniform(0.02, 0.98) for _ in range(n))
            q = [0.0]
            for _ in range(n - 1):
                q.append(q[-1] + rng.uniform(0.1, 2))
            ma, mq = [mpmath.mpf(x) for x in a], [mpmath.mpf(x) for x in q]
            z1, zn = (ma[1] - ma[0]) / (mq[1] - mq[0]), (ma[-1] - ma[-2]) / (mq[-1] - mq[-2])
            b1, bn = ma[0] / z1, (1 - ma[-1]) / zn

            def cdf(u, ma=ma, mq=mq, b1=b1, bn=bn):
                if u < mq[0]:
                    return ma[0] * mpmath.exp(-(mq[0] - u) / b1)
                if u >= mq[-1]:
                    return 1 - (1 - ma[-1]) * mpmath.exp(-(u - mq[-1]) / bn)
                k = max(k for k in range(len(mq)) if mq[k] <= u)
                return ma[k] + (u - mq[k]) * (ma[k + 1] - ma[k]) / (mq[k + 1] - mq[k])

            def pdf(u, ma=ma, mq=mq, b1=b1, bn=bn, z1=z1, zn=zn):
                if u < mq[0]:
                    return z1 * mpmath.exp(-(mq[0] - u) / b1)
                if u >= mq[-1]:
                    return zn * mpmath.exp(-(u - mq[-1]) / bn)
                k = max(k for k in range(len(mq)) if mq[k] <= u)
                return (ma[k + 1] - ma[k]) / (mq[k + 1] - mq[k])

            pieces = [-mpmath.inf, *mq, mpmath.inf]
            assert abs(mpmath.quad(pdf, pieces) - 1) < 1e-25
            mean = mpmath.quad(lambda u, pdf=pdf: u * pdf(u), pieces)
            assert abs(mean - reference._mpf(reference.quantile_mean(a, q))) < 1e-25
            targets = (
                q[0] - 3 * float(b1),
                q[0],
                (q[0] + q[-1]) / 2,
                q[1],
                q[-1],
                q[-1] + 2 * float(bn),
            )
            for t in targets:
                total = mpmath.quad(
                    lambda u, t=t, cdf=cdf: cdf(u) ** 2 if u < t else (1 - cdf(u)) ** 2,
                    sorted({*pieces, mpmath.mpf(t)}),
                )
                want = reference.quantile_crps(a, q, t)
                assert abs(total - want) < 1e-25, (a, q, t, total, want)
                assert abs(reference.quantile_nll(a, q, t) + mpmath.log(pdf(mpmath.mpf(t)))) < 1e-25


def test_reference_gaussian_crps_equals_quadrature():
    rng = random.Random(8)
    for _ in range(6):
        m, v, t = rng.gauss(0, 2), rng.uniform(0.01, 4), rng.gauss(0, 2)

        def cdf(u, m=m, v=v):
            return mpmath.ncdf(u, m, mpmath.sqrt(v))

        total = mpmath.quad(
            lambda u, t=t: cdf(u) ** 2 if u < t else (1 - cdf(u)) ** 2, [-mpmath.inf, t, mpmath.inf]
        )
        want = reference.gaussian_crps(m, v, t)
        assert abs(total - want) <= 1e-12 * abs(want)


def test_reference_sample_crps_equals_the_step_integral():
    rng = random.Random(9)
    for _ in range(50):
        s = [
            float(rng.randint(-3, 3)) * rng.choice((1, 0.1, 1e-12, 1e90))
            for _ in range(rng.randint(1, 12))
        ]
        t = rng.choice(s + [rng.gauss(0, 1)])
        assert reference.sample_crps(s, t) == reference.sample_crps_by_integral(s, t)


def test_reference_on_hand_computed_files():
    # classification: p = (0.8, 0.3), t = (+1, −1): nlp = −(ln 0.8 + ln 0.7)/2
    r = reference.evaluate(b"0.8\n0.3\n", b"1\n-1\n")
    assert math.isclose(r.scores["nlp"], -(math.log(0.8) + math.log(0.7)) / 2)
    assert r.scores["01l"] == 0 and math.isclose(r.scores["brier"], (0.04 + 0.09) / 2)
    # a perfect ordering: l = (2, 1) for n̄₊ = 1/2; A = 3/2, A_I = 1 + ½·1·3/2 = 7/4, L = 1/3
    assert math.isclose(r.scores["lift"], 1 / 3)
    # all tied: positives accrue evenly, l(k/n) = 1, A = 1, L = 1
    assert math.isclose(reference.evaluate(b"0.5\n0.5\n", b"1\n-1\n").scores["lift"], 1.0)
    # point predictions only: nmse only
    r = reference.evaluate(b"1 0 0\n1 2 0\n", b"0\n1\n", "regression")
    assert r.non_probabilistic and r.scores == {"nlpd": None, "nmse": 2.0, "crps": None}
    # levels 1/4, 3/4 at −1.25, 0.75: b1 = bN = 1, mean = −9/16 + 7/16 − 1/8 = −1/4
    assert reference.quantile_mean([0.25, 0.75], [-1.25, 0.75]) == Fraction(-1, 4)
    with pytest.raises(Invalid):
        reference.evaluate(b"1 0 1\n\n1 0 1\n", b"0\n0\n", "regression")
    with pytest.raises(Invalid):
        reference.evaluate(b"1 0 1\n", b"2e100\n", "regression")
    assert (
        reference.evaluate(b"1 0 1e200\r\n\r\n \n", b"1e100\n", "regression").scores["nmse"] is None
    )


# ---------------------------------------------------------------- former disagreements
# Minimal files on which scoring and the letter of the spec disagreed (found by the
# differential test above), kept so that they stay fixed.


def test_a_finite_nlpd_whose_row_term_overflows():
    # row 1: ½ln(2π·1e-300) + (2e4)²/(2·1e-300) = 2e308 − 344; row 2: ½ln(2π) — mean 1e308
    pred, target = b"1 0 1e-300\n1 0 1\n", b"2e4\n0\n"
    want = reference.evaluate(pred, target, "regression").scores["nlpd"]
    assert math.isclose(want, 1e308, rel_tol=1e-12)
    got = scoring.evaluate(pred, target, task="regression").scores["nlpd"]
    assert _close(got, want), (got, want)


def test_ece_bins_the_exact_confidence_one_minus_p():
    pred, target = b"0.1999999999999999\n0.8\n", b"1\n1\n"
    want = reference.evaluate(pred, target, "classification").scores["ece"]
    assert want == 0.5  # bins 12 (c ≈ 0.8, wrong) and 11 (c = 0.8, right): (0.8 + 0.2)/2
    got = scoring.evaluate(pred, target, task="classification").scores["ece"]
    assert _close(got, want), (got, want)  # (1 − p rounded lands on the edge: one bin)


def test_a_quantile_gap_a_few_ulps_below_the_minimum():
    pred, target = b"0 0.25 0.2 0.75 0.3\n", b"0.25\n"
    assert 0.3 - 0.2 < 0.1
    with pytest.raises(Invalid):
        reference.evaluate(pred, target, "regression", min_quantile_gap=0.1)
    with pytest.raises(ScoringError):
        scoring.evaluate(
            pred, target, task="regression", options=ScoringOptions(min_quantile_gap=0.1)
        )
