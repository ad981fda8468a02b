"""Differential test of the multiclass task: ``scoring.evaluate(task="multiclass")`` against
the independent reference of tests/scoring/reference_multiclass.py (spec §7).

Every run draws ``BATCHES × SEEDS_PER_BATCH`` = 2,000 seeded prediction/target file pairs,
written the ways participants write them (``%.6g``, ``np.savetxt``'s ``%.18e``, ``repr``,
MATLAB's ``%16.7e`` with and without tabs, ``%g`` with tabs, ``%.4f``, mixed spellings;
CRLF, trailing blank lines, leading and trailing blanks), with L from 2 to 1000 classes,
single rows, ensemble rows of 2 to 100 members and both mixed in one file, probabilities
from Dirichlet draws, hand-written decimals (``0.1 0.3 0.6``), exact dyadic ties,
confidences on the bin edges m/15, one-hot rows, exact zeros (for the true class too:
nlp = +inf), tiny and subnormal values, sums off by up to 0.009 (each member renormalised),
one-class targets and log bases 2, e and 10. Each of the seven losses, each per-example
term (``Evaluation.terms()``) and tu/du/mi (``Evaluation.reported``) must agree with the
reference within the exactness rule of spec §3 (1e-9 relative, 1e-12 absolute near 0;
inf = inf; n/a = n/a), without a warning. A failure names the seed: ``make_case(seed)``
rebuilds the very same files.

A second set corrupts valid files (a sum of 1.3, logits, a class label out of range, an
ensemble of 101 members, a line over 1 MiB, …) and checks that scoring rejects exactly the
files the reference rejects.
"""

from __future__ import annotations

import math
import random
import warnings
from dataclasses import dataclass, field

import numpy as np
import pytest

import scoring
from scoring import ScoringError, ScoringOptions

from . import reference_multiclass as reference
from .reference_multiclass import Invalid

BATCHES = 40
SEEDS_PER_BATCH = 50
INVALID_BATCHES = 4
INVALID_PER_BATCH = 60
LOG_BASES = (2.0, math.e, 10.0)
REL, ABS = 1e-9, 1e-12
SHOW = 1200  # characters of each file shown in a failure message
MAX_DEVIATION = 0.009  # sums written off by up to this much (the limit is 0.01)

# ------------------------------------------------------------------------- layouts

STYLES = ("g6", "savetxt", "repr", "matlab", "matlab_tabs", "g_tab", "f4", "mixed")
ROUND_TRIP = ("savetxt", "repr")  # styles that write every double exactly
_FORMATS = {
    "g6": lambda x: f"{x:.6g}",
    "savetxt": lambda x: f"{x:.18e}",
    "repr": repr,
    "matlab": lambda x: f"{x:.7e}",
    "g": lambda x: f"{x:g}",
    "f4": lambda x: f"{x:.4f}",
}


def _respell(token: str, rng: random.Random) -> str:
    """Other spellings float() reads: .5, +0.5, 1E-03."""
    choice = rng.randrange(5)
    if choice == 0 and token.startswith("0."):
        return token[1:]
    if choice == 1:
        return "+" + token
    if choice == 2:
        return token.upper()
    return token


class Layout:
    """How one file is written: number format, separators, line ends, blank decorations."""

    def __init__(self, rng: random.Random, style: str | None = None):
        self.rng = rng
        self.style = style or rng.choice(STYLES)
        self.crlf = rng.random() < 0.3
        self.final_newline = rng.random() < 0.85
        self.blank_tail = rng.choice((0, 0, 0, 1, 2))
        self.lead = rng.random() < 0.15
        self.trail = rng.random() < 0.15

    def number(self, x: float) -> str:
        style = self.style
        if style in ("matlab", "matlab_tabs"):
            return _FORMATS["matlab"](x)
        if style == "g_tab":
            return _FORMATS["g"](x)
        if style == "mixed":
            return _respell(_FORMATS[self.rng.choice(tuple(_FORMATS))](x), self.rng)
        return _FORMATS[style](x)

    def label(self, k: int) -> str:
        style = self.style
        if style in ("matlab", "matlab_tabs"):
            return f"{k:.7e}"
        if style == "savetxt":
            return f"{k:.18e}"  # np.savetxt(targets) of an integer array
        if style == "mixed":
            spellings = (str(k), f"{k}.0", f"+{k}", f"{k}e0", f"0{k}", f"{k}.", f"{k:.7e}")
            return self.rng.choice(spellings + (("-0", "0.0") if k == 0 else ()))
        return str(k)

    def line(self, tokens: list[str]) -> str:
        rng = self.rng
        if not tokens:  # a blank line (only corrupted files have one before the last example)
            return rng.choice(("", " ", "\t"))
        if self.style == "matlab":
            text = "".join(tok.rjust(16) for tok in tokens)
        elif self.style == "matlab_tabs":
            text = "\t".join(tok.rjust(16) for tok in tokens)
        elif self.style == "g_tab":
            text = "\t".join(tokens)
        elif self.style == "mixed":
            text = tokens[0]
            for tok in tokens[1:]:
                text += "".join(rng.choice(" \t") for _ in range(rng.randint(1, 2))) + tok
        else:
            text = " ".join(tokens)
        if self.lead and rng.random() < 0.5:
            text = rng.choice((" ", "  ", "\t")) + text
        if self.trail and rng.random() < 0.5:
            text += rng.choice((" ", "\t", " \t"))
        return text

    def render(self, rows: list[list[str]]) -> bytes:
        eol = "\r\n" if self.crlf else "\n"
        body = eol.join(self.line(tokens) for tokens in rows)
        if self.final_newline or self.blank_tail:
            body += eol
        for i in range(self.blank_tail):
            body += self.rng.choice(("", "", " ", "\t"))
            if i < self.blank_tail - 1 or self.final_newline:
                body += eol
        return body.encode()  # (ASCII but for the corrupted non-ASCII files)


# --------------------------------------------------------------------------- cases


@dataclass
class Case:
    seed: int | str
    classes: int  # L
    option_classes: int | None  # what ScoringOptions(classes=…) is given
    pred_rows: list[list[str]]
    target_rows: list[list[str]]
    pred_layout: Layout
    target_layout: Layout
    log_base: float = math.e
    allow_ensembles: bool = True
    notes: list[str] = field(default_factory=list)
    pred: bytes = b""
    target: bytes = b""

    def render(self):
        self.pred = self.pred_layout.render(self.pred_rows)
        self.target = self.target_layout.render(self.target_rows)
        return self

    def options(self) -> ScoringOptions:
        return ScoringOptions(
            classes=self.option_classes,
            allow_ensembles=self.allow_ensembles,
            log_base=self.log_base,
        )

    def describe(self) -> str:
        def show(data: bytes) -> str:
            text = data.decode("ascii", "replace")
            return repr(text if len(text) <= SHOW else text[:SHOW] + "…")

        return (
            f"seed={self.seed} L={self.classes} classes={self.option_classes} "
            f"log_base={self.log_base} allow_ensembles={self.allow_ensembles} "
            f"styles={self.pred_layout.style}/{self.target_layout.style} notes={self.notes}\n"
            f"  predictions={show(self.pred)}\n  targets={show(self.target)}"
        )


def _classes(rng: random.Random) -> tuple[int, int]:
    """(L, the most rows) — few rows where L is large, to stay fast."""
    band = rng.random()
    if band < 0.15:
        return 2, 40
    if band < 0.45:
        return rng.randint(3, 5), 40
    if band < 0.72:
        return rng.randint(6, 12), 40
    if band < 0.84:
        return rng.randint(13, 25), 25
    if band < 0.95:
        return rng.randint(26, 100), 8
    if band < 0.975:
        return rng.randint(101, 999), 3
    return 1000, 3


def _normalise(values: list[float]) -> list[float]:
    total = math.fsum(values)
    if total <= 0:
        return [1.0 / len(values)] * len(values)
    return [min(1.0, v / total) for v in values]


def _vector(rng: random.Random, mode: str, L: int) -> list[float]:
    """One probability vector (its sum 1 up to rounding; exactly 1 for 'dyadic'/'edges')."""
    if mode == "dirichlet":
        alpha = rng.choice((0.05, 0.3, 1.0, 5.0))
        return _normalise([rng.gammavariate(alpha, 1.0) for _ in range(L)])
    if mode == "peaked":
        eps = 10.0 ** -rng.uniform(1, 12)
        rest = _normalise([rng.random() for _ in range(L - 1)])
        top = rng.randrange(L)
        values = [eps * r for r in rest]
        values.insert(top, 1 - eps)
        return values
    if mode == "dyadic":  # exact sums of 1 and ties everywhere, the top class included
        units = 2 ** rng.randint(1, 6)
        counts = [0] * L
        for _ in range(units):
            counts[rng.randrange(min(L, rng.choice((2, 3, L))))] += 1
        rng.shuffle(counts)
        return [c / units for c in counts]
    if mode == "decimal":  # hand-written: 0.1 0.3 0.6, 0.25 0.25 0.5, …
        step = rng.choice((10, 20, 100, 5))
        counts = [0] * L
        for _ in range(step):
            counts[rng.randrange(min(L, rng.choice((2, 3, 4, L))))] += 1
        rng.shuffle(counts)
        return [c / step for c in counts]
    if mode == "edges":  # the top class exactly on an edge m/15 (≥ 1/2), the rest exact
        c = rng.randint(8, 15) / 15
        rest = 1 - c  # exact (Sterbenz)
        parts = [rest / 2, rest / 4, rest / 4] if L > 3 and rest else [rest / 2, rest / 2]
        values = [0.0] * L
        top = rng.randrange(L)
        values[top] = c
        others = [k for k in range(L) if k != top]
        rng.shuffle(others)
        if len(others) == 1:
            values[others[0]] = rest
        else:
            for k, part in zip(others, parts, strict=False):
                values[k] += part
        return values
    if mode == "onehot":
        values = [0.0] * L
        values[rng.randrange(L)] = 1.0
        return values
    if mode == "uniform":
        return [1 / L] * L
    if mode == "tiny":  # values down to the subnormals, the top class taking the rest
        low = 3 + math.log10(L)  # the small values sum to at most 1e-3
        values = [
            rng.choice((5e-324, 1e-310, 10.0 ** -rng.uniform(low, 300), 0.0)) for _ in range(L)
        ]
        top = rng.randrange(L)
        values[top] = 0.0
        values[top] = max(0.0, 1 - math.fsum(values))
        return values
    raise AssertionError(mode)


def _zero_out(rng: random.Random, values: list[float], L: int) -> list[float]:
    """Exact zeros for some classes (the rest renormalised)."""
    keep = rng.randrange(L)
    values = [0.0 if k != keep and rng.random() < 0.4 else v for k, v in enumerate(values)]
    return _normalise(values) if math.fsum(values) > 0 else _vector(rng, "onehot", L)


def _member_tokens(
    rng: random.Random, layout: Layout, values: list[float], deviation: float
) -> tuple[list[str], list[float]]:
    """Tokens of one member written with its sum off by ``deviation`` (clipped to [0, 1]);
    if the rounding of the format carries the written sum past ±0.0095, the largest value
    is corrected (as a participant renormalising by hand would)."""
    scaled = [min(1.0, v * (1 + deviation)) for v in values]
    tokens = [layout.number(v) for v in scaled]
    read = [float(t) for t in tokens]
    for _ in range(3):
        total = math.fsum(read)
        if abs(total - 1) <= 0.0095:
            break
        top = max(range(len(read)), key=read.__getitem__)
        fixed = min(1.0, max(0.0, read[top] - (total - 1)))
        tokens[top] = layout.number(fixed)
        read[top] = float(tokens[top])
    else:
        tokens, read = [repr(v) for v in values], list(values)
    return tokens, read


def _sample(rng: random.Random, p: list[float]) -> int:
    u, acc = rng.random() * math.fsum(p), 0.0
    for k, x in enumerate(p):
        acc += x
        if u < acc:
            return k
    return max(range(len(p)), key=p.__getitem__)


def _members(rng: random.Random, style: str, base: list[float], mode: str, L: int, M: int):
    if style == "identical":
        return [list(base) for _ in range(M)]
    if style == "onehot":
        return [
            _vector(rng, "onehot", L) if rng.random() < 0.5 else _onehot_of(base) for _ in range(M)
        ]
    if style == "diverse":
        return [_vector(rng, mode, L) for _ in range(M)]
    sigma = rng.choice((0.05, 0.5, 2.0))  # perturbed around the base
    return [_normalise([v * math.exp(sigma * rng.gauss(0, 1)) for v in base]) for _ in range(M)]


def _onehot_of(p: list[float]) -> list[float]:
    top = max(range(len(p)), key=p.__getitem__)
    return [1.0 if k == top else 0.0 for k in range(len(p))]


def make_case(seed: int) -> Case:
    rng = random.Random(seed)
    L, most_rows = _classes(rng)
    n = rng.randint(1, most_rows)
    mode = rng.choice(
        ("dirichlet", "dirichlet", "peaked", "dyadic", "decimal", "edges", "onehot", "uniform")
        + ("tiny", "mixed")
    )
    pl = Layout(rng)
    if mode == "edges" and rng.random() < 0.8:
        pl = Layout(rng, rng.choice(ROUND_TRIP))  # else the edges move with the format
    tl = Layout(rng, pl.style if rng.random() < 0.5 else None)
    ensembles = rng.choice(("none", "none", "none", "mixed", "mixed", "all"))
    member_style = rng.choice(("perturbed", "perturbed", "identical", "onehot", "diverse"))
    most_members = rng.choice((3, 5, 10, 100)) if L <= 10 else (3 if L >= 100 else 5)
    deviate = rng.random() < 0.3
    zeros = rng.random() < 0.15
    target_mode = rng.choice(("follow", "follow", "noise", "one_class", "argmax"))
    one_class = rng.randrange(L)
    notes = [f"p={mode}", f"ensembles={ensembles}/{member_style}", f"targets={target_mode}"]
    if deviate:
        notes.append("sums off")
    if zeros:
        notes.append("zeros")

    pred_rows, target_rows, any_ensemble = [], [], False
    for _ in range(n):
        row_mode = (
            rng.choice(("dirichlet", "dyadic", "decimal", "edges", "peaked"))
            if mode == "mixed"
            else mode
        )
        base = _vector(rng, row_mode, L)
        if zeros and row_mode not in ("onehot", "edges", "dyadic"):
            base = _zero_out(rng, base, L)
        ensemble = ensembles == "all" or (ensembles == "mixed" and rng.random() < 0.5)
        members = (
            _members(rng, member_style, base, row_mode, L, rng.randint(2, most_members))
            if ensemble
            else [base]
        )
        tokens, read = [], []
        for values in members:
            deviation = rng.uniform(-MAX_DEVIATION, MAX_DEVIATION) if deviate else 0.0
            t, r = _member_tokens(rng, pl, values, deviation)
            tokens += t
            read.append(r)
        any_ensemble |= ensemble
        pred_rows.append(tokens)
        mean = [math.fsum(column) / len(read) for column in zip(*read, strict=True)]
        if target_mode == "follow":
            y = _sample(rng, mean)
        elif target_mode == "noise":  # any class given a probability (nlp finite)
            y = rng.choice([k for k in range(L) if mean[k] > 0] or [0])
        elif target_mode == "argmax":
            y = max(range(L), key=mean.__getitem__)
        else:
            y = one_class
        if zeros and rng.random() < 0.05:  # a true class given probability 0: nlp = +inf
            zero_classes = [k for k in range(L) if mean[k] == 0]
            y = rng.choice(zero_classes) if zero_classes else y
        target_rows.append([tl.label(y)])
    # the default L is the first line's count: only when that line is a single row
    option_classes = L
    if len(pred_rows[0]) == L and rng.random() < 0.15:
        option_classes = None
        notes.append("classes from the first line")
    case = Case(
        seed,
        L,
        option_classes,
        pred_rows,
        target_rows,
        pl,
        tl,
        log_base=rng.choice(LOG_BASES),
        allow_ensembles=any_ensemble or rng.random() < 0.9,
        notes=notes,
    )
    return case.render()


# --------------------------------------------------------------------------- checks


def _close(got, want) -> bool:
    if want is None:
        return got is None
    if got is None or math.isnan(got):
        return False
    if math.isinf(want) or math.isinf(got):
        return got == want
    return abs(got - want) <= REL * abs(want) or abs(got - want) <= ABS


def run_scoring(case: Case):
    """Scoring's verdict: (Evaluation or None when it raised ScoringError, warnings)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            got = scoring.evaluate(
                case.pred, case.target, task="multiclass", options=case.options()
            )
        except ScoringError:
            got = None
    return got, [str(w.message) for w in caught]


def run_reference(case: Case):
    try:
        return reference.evaluate(
            case.pred,
            case.target,
            classes=case.option_classes,
            allow_ensembles=case.allow_ensembles,
            log_base=case.log_base,
        )
    except Invalid:
        return None


def _compare_terms(got_terms: dict, want_terms: dict) -> list[str]:
    problems = []
    for name, want in want_terms.items():
        got = got_terms.get(name)
        if want is None or got is None:
            if (want is None) != (got is None):
                problems.append(f"terms[{name}]: scoring {got!r}, reference {want!r}")
            continue
        got = [float(x) for x in np.asarray(got)]
        if len(got) != len(want):
            problems.append(f"terms[{name}]: {len(got)} terms, reference {len(want)}")
            continue
        bad = [i for i, (g, w) in enumerate(zip(got, want, strict=True)) if not _close(g, w)]
        if bad:
            i = bad[0]
            problems.append(
                f"terms[{name}] differ at {len(bad)} rows, first row {i + 1}: "
                f"scoring {got[i]!r}, reference {want[i]!r}"
            )
    return problems


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
    if got.non_probabilistic != want.non_probabilistic:
        problems.append(
            f"non_probabilistic: scoring {got.non_probabilistic}, reference {want.non_probabilistic}"
        )
    for name, value in want.scores.items():
        if name not in got.scores:
            problems.append(f"{name}: missing from scoring's scores {sorted(got.scores)}")
        elif not _close(got.scores[name], value):
            problems.append(f"{name}: scoring {got.scores[name]!r}, reference {value!r}")
    reported = dict(got.reported)
    if sorted(reported) != sorted(want.reported):
        problems.append(f"reported: scoring {reported}, reference {want.reported}")
    else:
        for name, value in want.reported.items():
            if not _close(reported[name], value):
                problems.append(f"{name}: scoring {reported[name]!r}, reference {value!r}")
    return problems + _compare_terms(got.terms(), want.terms)


def _report(failures: list, total: int) -> str:
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
    assert valid == len(seeds)  # the generator writes valid files only


# ------------------------------------------------------------------------ invalid files

DEFECTS = (
    ("sum", "sum", "logits", "negative", "above_one", "count", "members", "no_ensembles")
    + ("label", "label", "nan", "inf", "comma", "text", "blank_line", "cr", "rows", "control")
    + ("non_ascii", "empty", "long_line", "first_line_ensemble", "one_class_line", "big")
)


def _replace(rows, i, j, token):
    rows[i] = rows[i][:j] + [token] + rows[i][j + 1 :]


def corrupt(seed: int) -> Case:
    """A random valid case with one random defect (which the reference then judges)."""
    rng = random.Random(10**9 + seed)
    case = make_case(rng.randrange(10**6))
    case.seed = f"corrupt({seed})"
    pred, target = [list(r) for r in case.pred_rows], [list(r) for r in case.target_rows]
    n, L = len(pred), case.classes
    i = rng.randrange(n)
    j = rng.randrange(len(pred[i]))
    defect = DEFECTS[seed % len(DEFECTS)] if seed < len(DEFECTS) else rng.choice(DEFECTS)
    if defect == "sum":  # one member scaled: a sum between 0 and 1.5, far from 1 ± 0.01
        factor = rng.choice((rng.uniform(0.2, 0.985), rng.uniform(1.015, 1.5)))
        start = (j // L) * L
        values = [float(t) * factor for t in pred[i][start : start + L]]
        pred[i][start : start + L] = [repr(v) for v in values]
    elif defect == "logits":
        pred[i] = [f"{rng.gauss(0, 3):.4f}" for _ in range(L)]
    elif defect == "negative":
        _replace(pred, i, j, rng.choice(("-1e-9", "-0.0001", "-0", "-0.0", "-0.5")))
    elif defect == "above_one":
        _replace(pred, i, j, rng.choice(("1.5", "1.0000001", "2", "1e100")))
    elif defect == "count":
        pred[i] = rng.choice((pred[i][:-1], pred[i] + [pred[i][-1]], pred[i] + ["0"] * (L - 1)))
    elif defect == "members":  # 101 members (or one and a half)
        member = pred[i][:L]
        pred[i] = member * rng.choice((101, 102)) if L <= 20 else member * 3 + member[: L // 2]
    elif defect == "no_ensembles":
        pred[i] = pred[i][:L] * rng.randint(2, 4)
        case.allow_ensembles = False
    elif defect == "label":
        bad = (str(L), str(L + 1), "-1", "0.5", f"{L - 0.5}", "1e100", "1e101", "2e100")
        target[i] = [rng.choice(bad)]
    elif defect == "nan":
        _replace(pred, i, j, rng.choice(("nan", "NaN", "-nan")))
    elif defect == "inf":
        _replace(rng.choice((pred, target)), i, 0, rng.choice(("inf", "-Infinity", "+inf")))
    elif defect == "comma":
        _replace(pred, i, j, pred[i][j] + ",")
    elif defect == "text":
        _replace(rng.choice((pred, target)), i, 0, rng.choice(("cat", "0.5a", "0x1p-1", "1e")))
    elif defect == "blank_line":
        if n > 1:
            pred.insert(rng.randrange(1, n), [])
        else:
            target.insert(0, [])
    elif defect == "cr":
        _replace(pred, i, j, pred[i][j] + "\r")
    elif defect == "rows":
        if rng.random() < 0.5 or n == 1:
            target.append(target[-1])
        else:
            target.pop()
    elif defect == "control":
        _replace(pred, i, j, pred[i][j] + rng.choice(("\x0c", "\x00", "\x0b", "\x7f")))
    elif defect == "non_ascii":
        _replace(pred, i, j, rng.choice(("０.5", "0.5\u00a0", "½")))
    elif defect == "empty":
        pred, target = (([], target), (pred, []))[rng.randrange(2)]
    elif defect == "long_line":  # a line of 1 MiB (allowed) or one byte more (an error)
        length = reference.MAX_LINE_BYTES + rng.choice((0, 1, 1))
        head, last = " ".join(pred[i][:-1]), pred[i][-1]
        if rng.random() < 0.5:  # blanks inside the line
            pred[i] = [head + " " * (length - len(head) - len(last)) + last]
        else:  # blanks at its end count too
            pred[i] = [head + " " + last + " " * (length - len(head) - len(last) - 1)]
        case.pred_layout.style = "savetxt"  # joined by one space: the line as built
        case.pred_layout.lead = case.pred_layout.trail = False
    elif defect == "first_line_ensemble":
        pred[0] = pred[0][:L] * rng.randint(2, 3)
        case.option_classes = None
    elif defect == "one_class_line":
        pred[0] = ["1"]
        case.option_classes = None
    elif defect == "big":
        _replace(rng.choice((pred, target)), i, 0, rng.choice(("2e100", "-2e100", "1e308")))
    case.pred_rows, case.target_rows = pred, target
    case.notes = [f"defect={defect}"]
    case.pred = _render_or_empty(case.pred_layout, pred)
    case.target = _render_or_empty(case.target_layout, target)
    return case


def _render_or_empty(layout: Layout, rows) -> bytes:
    return layout.render(rows) if rows else b""


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


def test_reference_on_a_hand_computed_file():
    # rows (0.5, 0.25, 0.25) y=0, (0.25, 0.25, 0.5) y=1, (0, 1, 0) y=1 (exact dyadic sums)
    pred = b"0.5 0.25 0.25\n0.25 0.25 0.5\n0 1 0\n"
    r = reference.evaluate(pred, b"0\n1\n1\n", classes=3, log_base=2.0)
    assert r.scores["nlp"] == (1 + 2 + 0) / 3  # −log2 of 1/2, 1/4, 1
    # brier: (1/4 + 1/16 + 1/16) + (1/16 + 9/16 + 1/4) + 0 = 3/8 + 7/8
    assert r.scores["brier"] == (3 / 8 + 7 / 8) / 3
    assert r.scores["01l"] == 1 / 3  # row 2 predicts class 2
    # top label: c = 1/2 (bin 7, right), 1/2 (bin 7, wrong), 1 (bin 14, right)
    assert r.scores["ece"] == 2 / 3 * abs(1 / 2 - 1 / 2) + 1 / 3 * 0
    assert r.scores["rmsce"] == 0.0
    # sce: class 0 p = 1/2 (bin 7, o 1), 1/4 (bin 3, o 0), 0 (bin 0, o 0): (1/2 + 1/4)/3;
    # class 1 p = 1/4 (o 0), 1/4 (o 1) share bin 3: |1 − 1/2|/3; p = 1 (o 1): 0;
    # class 2 p = 1/4 (o 0), 1/2 (o 0), 0 (o 0): (1/4 + 1/2)/3
    assert math.isclose(r.scores["sce"], (3 / 4 + 1 / 2 + 3 / 4) / 3 / 3)
    # ace: n = 3, R = 3 ranges of one example each: the mean over (class, example) of
    # |o − p| = (1/2 + 1/4 + 0 + 1/4 + 3/4 + 0 + 1/4 + 1/2 + 0) / 9
    assert math.isclose(r.scores["ace"], 2.5 / 9)
    assert r.terms["01l"] == [0, 1, 0] and r.reported == {} and not r.non_probabilistic


def test_reference_normalises_members_and_reports_tu_du_mi():
    # an ensemble of (1, 0) and (0, 0.995): members normalised, mean (1/2, 1/2)
    r = reference.evaluate(b"1 0 0 0.995\n0.5 0.5\n", b"1\n0\n", classes=2)
    assert r.scores["nlp"] == math.log(2) and r.scores["01l"] == 0.5  # (ties predict 0)
    # tu = mean H over the one ensemble row = ln 2; du = 0 (one-hot members)
    assert math.isclose(r.reported["tu"], math.log(2), rel_tol=1e-15)
    assert r.reported["du"] == 0.0 and r.reported["mi"] == r.reported["tu"]
    # every averaged row one-hot: 01l only; an ensemble of identical one-hot members
    r = reference.evaluate(b"0 0.995 0 0 1 0\n1 0 0\n", b"1\n2\n", classes=3)
    assert r.non_probabilistic and r.scores["01l"] == 0.5
    assert [name for name, v in r.scores.items() if v is not None] == ["01l"]
    assert r.terms["nlp"] is None and r.reported == {"tu": 0.0, "du": 0.0, "mi": 0.0}


def test_reference_array_split_is_numpys():
    for n in range(0, 50):
        sizes = [len(part) for part in np.array_split(np.arange(n), 15)]
        assert [b - a for a, b in reference._array_split(n, 15)] == sizes


def test_reference_judges_files_as_section_7_says():
    def valid(pred, target, **kw) -> bool:
        try:
            reference.evaluate(pred, target, **kw)
        except Invalid:
            return False
        return True

    assert valid(b"0.3 0.7\n", b"1\n") and valid(b"0.3 0.7\r\n\r\n \n", b"1.0000000e+00\n")
    assert valid(b"0.3 0.705\n", b"1\n") and not valid(b"0.3 0.72\n", b"1\n")
    assert not valid(b"0.3 0.7\n", b"2\n") and not valid(b"0.3 0.7\n", b"0.5\n")
    assert not valid(b"-0.1 1.1\n", b"0\n") and valid(b"-0 1\n", b"-0\n")
    assert not valid(b"0.3 0.7 0.5\n", b"0\n", classes=2)
    assert valid(b"0.3 0.7 0.5 0.5\n", b"0\n", classes=2)
    assert not valid(b"0.3 0.7 0.5 0.5\n", b"0\n", classes=2, allow_ensembles=False)
    assert valid(b"0.5 0.5 " * 100 + b"\n", b"0\n", classes=2)
    assert not valid(b"0.5 0.5 " * 101 + b"\n", b"0\n", classes=2)
    assert not valid(b"0.5 0.5\n\n0.5 0.5\n", b"0\n0\n")
    assert not valid(b"1\n", b"0\n") and not valid(b"0.5 0.5\n", b"0\n0\n")
    line = b"0.5 0.5" + b" " * ((1 << 20) - 7)
    assert valid(line + b"\r\n", b"0\n") and not valid(line + b" \n", b"0\n")
    assert not valid(b"0.5 0.5\r \n", b"0\n") and not valid(b"0.5 nan\n", b"0\n")


# ------------------------------------------------------------- minimal disagreements
# Minimal files on which scoring and the letter of §7 disagreed (found by the differential
# test above): every decision is taken on the exact probabilities of §7 (each member
# divided by its exact sum, the members averaged exactly), not on their rounded doubles.


def _both(pred: bytes, target: bytes, classes: int):
    want = reference.evaluate(pred, target, classes=classes)
    got = scoring.evaluate(pred, target, task="multiclass", options=ScoringOptions(classes=classes))
    return got, want


def test_a_row_summing_exactly_to_one_keeps_its_confidence_on_the_edge():
    # 0.6 + 0.1 + 0.1 + 0.2 is exactly 1 in the doubles' own values (a left-to-right or
    # pairwise float sum gives 0.9999999999999999): p = 0.6 = the edge 9/15, bin 8
    pred = b"0 0 0 0 0.6 0.1 0.1 0 0.2 0\n0.62 0.1 0.1 0.08 0.1 0 0 0 0 0\n"
    got, want = _both(pred, b"4\n1\n", 10)
    assert math.isclose(want.scores["ece"], (0.4 + 0.62) / 2)  # bins 8 and 9 apart
    assert _close(got.scores["ece"], want.scores["ece"]), (got.scores, want.scores)
    assert _close(got.scores["rmsce"], want.scores["rmsce"]), (got.scores, want.scores)


def test_the_confidence_of_a_uniform_row_is_one_third_above_the_edge():
    # three equal values: p = 1/3 exactly, above the double 5/15 (0.333…331): bin 5, with
    # the second row (c = 0.35): ECE = |1 − (1/3 + 0.35)| / 2
    pred = b"0.3333333333333333 0.3333333333333333 0.3333333333333333\n0.35 0.33 0.32\n"
    got, want = _both(pred, b"0\n1\n", 3)
    assert math.isclose(want.scores["ece"], (1 - (1 / 3 + 0.35)) / 2)
    assert _close(got.scores["ece"], want.scores["ece"]), (got.scores, want.scores)


def test_a_hard_vote_of_three_members_is_two_thirds_above_the_edge():
    # members one-hot on classes 0, 0, 1: p = (2/3, 1/3, 0), above the double 10/15: bin 10,
    # with the second row (c = 0.7): ECE = |1 − (2/3 + 0.7)| / 2
    pred = b"1 0 0 1 0 0 0 1 0\n0.7 0.2 0.1\n"
    got, want = _both(pred, b"1\n0\n", 3)
    assert math.isclose(want.scores["ece"], (2 / 3 + 0.7 - 1) / 2)
    assert _close(got.scores["ece"], want.scores["ece"]), (got.scores, want.scores)


def test_equal_doubles_are_ordered_by_their_exact_values_in_ace():
    # p_0 of lines 2 and 3 round to the same double 0.3, but exactly line 3's is smaller
    # (its sum is above 1): the first ACE range of class 0 holds lines 1 and 3
    pred = b"0.1 0.9\n0.3 0.7\n0.3 0.7000000000000001\n" + b"0.9 0.1\n" * 13
    target = b"1\n0\n1\n" + b"0\n" * 13
    got, want = _both(pred, target, 2)
    # class 0: {1, 3} 0.2, {2} 0.7, 13 × 0.1; class 1: {4, 5} 0.1, 11 × 0.1, 0.7, 0.3, 0.1
    assert math.isclose(want.scores["ace"], (2.2 + 2.3) / 30)
    assert _close(got.scores["ace"], want.scores["ace"]), (got.scores, want.scores)


def test_the_members_mean_decides_a_tie_of_its_doubles():
    # the decimals average to (0.5, 0.5), but the doubles' exact mean gives class 1 more
    # (by 2/90071992547409920): ŷ = 1, right
    pred = b"0.25 0.75 0.45 0.55 0.4 0.6 0.7 0.3 0.7 0.3\n"
    got, want = _both(pred, b"1\n", 2)
    assert want.scores["01l"] == 0.0
    assert _close(got.scores["01l"], want.scores["01l"]), (got.scores, want.scores)


def test_a_subnormal_mean_is_not_zero():
    # members (5e-324, 1) and (0, 1): p_0 = 2.5e-324 > 0, below the smallest double; its
    # nlp term is −ln p_0 ≈ 745.13, finite (§3: +inf only for a probability of 0)
    pred, target = b"5e-324 1 0 1\n0.5 0.5\n", b"0\n0\n"
    got, want = _both(pred, target, 2)
    assert math.isclose(want.terms["nlp"][0], -(math.log(5e-324) - math.log(2)), rel_tol=1e-12)
    assert _close(got.scores["nlp"], want.scores["nlp"]), (got.scores, want.scores)
