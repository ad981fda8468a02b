"""A plain, row-by-row reference implementation of shared/spec/scoring.md §7 (multiclass).

It is the judge of tests/scoring/test_differential_multiclass.py. It shares no code with
the ``scoring`` package (it imports nothing from it) nor with the binary/regression
reference (tests/scoring/reference.py): it reads the file text itself, following §1 and
§7 literally, and is written for trust, not speed:

- every double is taken exactly; each member is divided by its exact sum and the members
  are averaged exactly (integers over a common denominator), so every decision is taken
  on the exact probabilities of §7: the predicted class on ties, the bin of a value on an
  edge m/15, the order of equal probabilities, a one-hot row, the sum within 0.01;
- each exact probability is then rounded once to a double, and the sums (nlp, brier, ece,
  rmsce, sce, ace, the entropies behind tu/du/mi) are ``math.fsum`` of terms rounded once
  or twice: an error of a few units in the 16th digit, six orders of magnitude inside the
  1e-9 relative / 1e-12 absolute of spec §3 (exact rational sums over rows grow to
  thousands of digits and would make the test slow, not more telling).

``evaluate(pred, targets, classes=None, allow_ensembles=True, log_base=e)`` returns a
:class:`Result` or raises :class:`Invalid`.
"""

from __future__ import annotations

import bisect
import functools
import math
import re
import sys
from dataclasses import dataclass
from fractions import Fraction

MAX_LINE_BYTES = 1 << 20  # §1: 1 MiB, the end of line excluded
BOUND = 1e100  # §1: every number within ±1e100
MAX_CLASSES = 1000  # §7: L ≤ 1000
MAX_MEMBERS = 100  # §7: 2 ≤ M ≤ 100
BINS = 15  # §7: 15 bins / ranges, written here on its own
LOSSES = ("nlp", "brier", "01l", "ece", "rmsce", "sce", "ace")

_TOKEN = re.compile(r"[^ \t]+")
_ODD = re.compile(r"[^ \t!-~]")  # anything but blanks and printable ASCII
# the bin edges are the doubles m/15 (§3, §7), and their exact values
_EDGE_DOUBLES = [m / BINS for m in range(BINS + 1)]
_EDGES = [Fraction(e) for e in _EDGE_DOUBLES]


class Invalid(Exception):
    """The files break §1 or §7 (the reference's judgement; no message format is implied)."""


@dataclass
class Result:
    scores: dict  # loss name → float or None (n/a)
    reported: dict  # tu, du, mi when the file has ensemble rows, else {}
    terms: dict  # nlp, brier, 01l → list of n floats, or None where the loss is n/a
    non_probabilistic: bool
    classes: int


# ---------------------------------------------------------------------------- §1 files


def _tokens(line: str) -> list[str]:
    """Split on runs of spaces and tabs (the only separators of §1)."""
    return _TOKEN.findall(line)


def _number(token: str) -> float:
    lowered = token.lower()
    if "nan" in lowered or "inf" in lowered:
        raise Invalid(f"nan and inf are not numbers here: {token!r}")
    try:
        value = float(token)
    except ValueError:
        raise Invalid(f"not a number: {token!r}") from None
    if not -BOUND <= value <= BOUND:  # (float() turns 1e400 into inf: out of bound too)
        raise Invalid(f"value {token} is outside ±1e100")
    return value


def read_lines(data: bytes) -> list[list[float]]:
    """§1: the numbers of each example line (trailing blank lines dropped)."""
    if not data:
        raise Invalid("empty file")
    try:
        text = data.decode("ascii")
    except UnicodeDecodeError:
        raise Invalid("not ASCII") from None
    pieces = text.split("\n")
    # every piece but the last was ended by an LF; the last is what follows the final LF
    last = pieces.pop()
    lines = []
    for index, piece in enumerate([*pieces, last]):
        ended = index < len(pieces)
        if not ended and piece == "":
            break  # the file ends with its LF
        if ended and piece.endswith("\r"):
            piece = piece[:-1]  # CRLF: the CR belongs to the end of line
        if "\r" in piece:
            raise Invalid("a CR not directly before an LF")
        if len(piece) > MAX_LINE_BYTES:
            raise Invalid("line longer than 1 MiB")
        odd = _ODD.search(piece)
        if odd:
            raise Invalid(f"character {odd.group()!r}")
        lines.append(_tokens(piece))
    while lines and not lines[-1]:
        lines.pop()  # blank lines at the end are ignored
    if not lines:
        raise Invalid("no example")
    if any(not tokens for tokens in lines):
        raise Invalid("a blank line before the last example")
    return [[_number(tok) for tok in tokens] for tokens in lines]


# ---------------------------------------------------------------------------- §7 rows


def read_labels(rows: list[list[float]], classes: int) -> list[int]:
    labels = []
    for row in rows:
        if len(row) != 1:
            raise Invalid("one class label per line")
        value = row[0]
        if value != math.floor(value) or not 0 <= value < classes:
            raise Invalid(f"class label {value} is not an integer in 0..{classes - 1}")
        labels.append(int(value))
    return labels


def _member(values: list[float]) -> tuple[list[int], int]:
    """One member (or single row), checked: integers a_k and S with x_k / Σx = a_k / S
    exactly (every x_k scaled by the same power of two)."""
    for x in values:
        if not 0.0 <= x <= 1.0:
            raise Invalid(f"probability {x} outside [0, 1]")
    ratios = [x.as_integer_ratio() for x in values]  # denominators are powers of two
    shift = max(den.bit_length() - 1 for _, den in ratios)
    ints = [num << (shift - (den.bit_length() - 1)) for num, den in ratios]
    total = sum(ints)  # Σx = total / 2^shift exactly
    if 100 * abs(total - (1 << shift)) > (1 << shift):  # |Σx − 1| > 1/100
        raise Invalid(f"probabilities sum to {total / (1 << shift)}, not 1")
    return ints, total


@dataclass
class Row:
    """One example's prediction: p_k = num[k] / den exactly (the members divided by their
    own sums and averaged), ``p`` those values each rounded once to a double, ``members``
    the normalised members (rounded once) of an ensemble row, else None."""

    num: list[int]
    den: int
    p: list[float]
    members: list[list[float]] | None

    def exact(self, k: int) -> Fraction:
        return Fraction(self.num[k], self.den)


def read_rows(lines: list[list[float]], classes: int, allow_ensembles: bool) -> list[Row]:
    rows = []
    for line in lines:
        count = len(line)
        if count == classes:
            ints, total = _member(line)
            rows.append(Row(ints, total, [a / total for a in ints], None))  # int / int rounds once
            continue
        m_count = count // classes
        if not (allow_ensembles and count % classes == 0 and 2 <= m_count <= MAX_MEMBERS):
            raise Invalid(f"{count} numbers: expected {classes} (or M·{classes})")
        members = [_member(line[m * classes : (m + 1) * classes]) for m in range(m_count)]
        # (1/M) Σ_m a_mk / S_m over the common denominator M · lcm(S_m)
        common = math.lcm(*(total for _, total in members))
        scale = [common // total for _, total in members]
        num = [
            sum(ints[k] * f for (ints, _), f in zip(members, scale, strict=True))
            for k in range(classes)
        ]
        den = m_count * common
        normalised = [[a / total for a in ints] for ints, total in members]
        rows.append(Row(num, den, [x / den for x in num], normalised))
    return rows


# ------------------------------------------------------------- exact decisions


def _argmax(row: Row) -> int:
    """The smallest k of the largest p_k (one denominator: compare the numerators)."""
    top = max(row.num)
    return row.num.index(top)


def _bin(row: Row, k: int) -> int:
    """The bin m of p_k: m/15 < p ≤ (m+1)/15, the first bin [0, 1/15] closed.

    Rounding to the nearest double is monotone, so the double p decides, except when it
    falls on an edge; then the exact value does."""
    x = row.p[k]
    index = bisect.bisect_left(_EDGE_DOUBLES, x)  # the first edge ≥ x
    if index == 0:
        return 0  # p = 0 (or rounded to 0): the closed first bin
    if x == _EDGE_DOUBLES[index] and row.num[k] * _EDGES[index].denominator > (
        _EDGES[index].numerator * row.den
    ):
        return index  # the exact p is above the edge its double sits on
    return index - 1


def _exact_order(rows: list[Row], k: int) -> list[int]:
    """The examples in stable order of p_k: by the doubles, then runs of equal doubles by
    the exact values (a stable sort keeps lines in order on exact ties)."""
    order = sorted(range(len(rows)), key=lambda i: rows[i].p[k])
    out, start = [], 0
    while start < len(order):
        stop = start + 1
        while stop < len(order) and rows[order[stop]].p[k] == rows[order[start]].p[k]:
            stop += 1
        run = order[start:stop]
        if len(run) > 1:
            run.sort(key=functools.cmp_to_key(lambda i, j: _compare(rows[i], rows[j], k)))
        out += run
        start = stop
    return out


def _compare(a: Row, b: Row, k: int) -> int:
    left, right = a.num[k] * b.den, b.num[k] * a.den
    return (left > right) - (left < right)


def _array_split(n: int, parts: int) -> list[tuple[int, int]]:
    """[start, stop) of ``parts`` ranges over n items, sizes differing by at most one, the
    larger first (numpy's array_split), written out."""
    size, extra = divmod(n, parts)
    ranges, start = [], 0
    for r in range(parts):
        stop = start + size + (1 if r < extra else 0)
        ranges.append((start, stop))
        start = stop
    return ranges


# -------------------------------------------------------------------------- losses


def _neg_ln(row: Row, k: int) -> float:
    """−ln p_k; +inf for an exact 0 (a p below the smallest double is not 0)."""
    if row.num[k] == 0:
        return math.inf
    if row.p[k] >= sys.float_info.min:
        return -math.log(row.p[k])
    return math.log(row.den) - math.log(row.num[k])  # (then −ln p > 708: no cancellation)


def losses(rows: list[Row], y: list[int], log_base: float) -> tuple[dict, dict]:
    """The seven losses of §7 (None for n/a) and their per-example terms."""
    n, classes = len(rows), len(rows[0].num)
    predicted = [_argmax(row) for row in rows]
    correct = [1 if k == t else 0 for k, t in zip(predicted, y, strict=True)]
    zero_one = [float(1 - a) for a in correct]
    scores = {"01l": math.fsum(zero_one) / n}
    terms = {"01l": zero_one, "nlp": None, "brier": None}
    # every averaged row one-hot: a single class with a nonzero (exact) probability
    if all(sum(1 for v in row.num if v) == 1 for row in rows):
        scores.update(nlp=None, brier=None, ece=None, rmsce=None, sce=None, ace=None)
        return scores, terms
    hit = [[1 if k == t else 0 for k in range(classes)] for t in y]  # 1{y_i = k}

    ln_b = math.log(log_base)
    terms["nlp"] = [_neg_ln(row, t) / ln_b for row, t in zip(rows, y, strict=True)]
    scores["nlp"] = math.fsum(terms["nlp"]) / n  # (an inf term makes it inf)

    terms["brier"] = [
        math.fsum((x - o) ** 2 for x, o in zip(row.p, hits, strict=True))
        for row, hits in zip(rows, hit, strict=True)
    ]
    scores["brier"] = math.fsum(terms["brier"]) / n

    # top label: |B|/n · |mean a − mean c| = |Σ_B (a − c)| / n
    count, gaps = [0] * BINS, [[] for _ in range(BINS)]
    for row, k, a in zip(rows, predicted, correct, strict=True):
        m = _bin(row, k)
        count[m] += 1
        gaps[m].append(a - row.p[k])
    sums = [math.fsum(g) for g in gaps]
    scores["ece"] = math.fsum(abs(s) for s in sums) / n
    scores["rmsce"] = math.sqrt(
        math.fsum(s * s / c for s, c in zip(sums, count, strict=True) if c) / n
    )

    # sce: per class k, the bins of p_ik (the first one closed)
    sce = []
    for k in range(classes):
        gaps = [[] for _ in range(BINS)]
        for i, row in enumerate(rows):
            gaps[_bin(row, k)].append(hit[i][k] - row.p[k])
        sce += [abs(math.fsum(g)) for g in gaps if g]
    scores["sce"] = math.fsum(sce) / (n * classes)

    # ace: per class k, the examples in stable order of p_ik, cut as array_split(order, 15)
    ranges = [(a, b) for a, b in _array_split(n, BINS) if b > a]
    ace = []
    for k in range(classes):
        order = _exact_order(rows, k)
        for start, stop in ranges:
            gap = math.fsum(hit[i][k] - rows[i].p[k] for i in order[start:stop])
            ace.append(abs(gap) / (stop - start))
    scores["ace"] = math.fsum(ace) / (len(ranges) * classes)
    return scores, terms


def _entropy(q: list[float]) -> float:
    """H(q) = −Σ q_k ln q_k in nats, 0·ln 0 = 0."""
    return -math.fsum(x * math.log(x) for x in q if x > 0)


def ensemble_report(rows: list[Row], log_base: float) -> dict:
    """tu, du and mi (base b) over the examples that have ensemble rows; {} if none."""
    ensembles = [row for row in rows if row.members is not None]
    if not ensembles:
        return {}
    scale = len(ensembles) * math.log(log_base)
    total = [_entropy(row.p) for row in ensembles]
    data = [math.fsum(_entropy(q) for q in row.members) / len(row.members) for row in ensembles]
    return {
        "tu": math.fsum(total) / scale,
        "du": math.fsum(data) / scale,
        "mi": math.fsum(t - d for t, d in zip(total, data, strict=True)) / scale,
    }


# ------------------------------------------------------------------------- entry


def evaluate(
    predictions: bytes,
    targets: bytes,
    *,
    classes: int | None = None,
    allow_ensembles: bool = True,
    log_base: float = math.e,
) -> Result:
    """Judge and score one pair of files as §7 says; :class:`Invalid` when they break it."""
    pred_lines = read_lines(predictions)
    target_lines = read_lines(targets)
    if classes is None:  # §7: the count of numbers on the first prediction line
        classes = len(pred_lines[0])
    if not 2 <= classes <= MAX_CLASSES:
        raise Invalid(f"{classes} classes: expected 2 to {MAX_CLASSES}")
    labels = read_labels(target_lines, classes)
    rows = read_rows(pred_lines, classes, allow_ensembles)
    if len(rows) != len(labels):
        raise Invalid("the number of examples differs from the number of targets")
    scores, terms = losses(rows, labels, log_base)
    return Result(
        scores={name: scores[name] for name in LOSSES},
        reported=ensemble_report(rows, log_base),
        terms=terms,
        non_probabilistic=scores["nlp"] is None,
        classes=classes,
    )
