"""Why an entry wins: the CORP decomposition of brier and nlp, and calibration checks.

Spec §6. For predictions p = p(y = +1) and outcomes o = 1{t = +1}, let S̄(x) be the
mean loss of predictions x. Recalibrating p by isotonic regression (pool adjacent
violators, PAV) gives p̂, the best non-decreasing function of p for every proper
scoring rule at once; c is the constant frequency of +1. Then

    S̄(p) = MCB − DSC + UNC,
    MCB = S̄(p) − S̄(p̂)   (miscalibration: lower is better),
    DSC = S̄(c) − S̄(p̂)   (discrimination: higher is better),
    UNC = S̄(c)          (uncertainty of the targets alone),

all three ≥ 0. Reference: T. Dimitriadis, T. Gneiting and A. I. Jordan, "Stable
reliability diagrams for probabilistic classifiers", PNAS 118 (8), e2016191118 (2021).

Regression: a Kolmogorov–Smirnov test of the PIT values against U(0, 1).

Pure numpy: the site stores what these functions return in a split's plot data.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from . import classification
from .pit import MeanPit, ks_distance

# Relative size under which a negative MCB, DSC or UNC is rounding and is set to 0.
ROUNDING = 1e-12
# The reliability curve keeps at most this many points (two per PAV block).
MAX_CURVE_POINTS = 200
HISTOGRAM_BINS = 20
# Below this λ the Kolmogorov tail Q(λ) is 1 to within 1e-12 (its series converges slowly).
_SMALL_LAMBDA = 0.2
_KS_TERMS = 100


@dataclass(frozen=True)
class Isotonic:
    """The PAV solution of :func:`isotonic`, block by block in increasing p.

    ``order`` sorts p; block k covers the sorted positions ``lo[k]`` to ``hi[k]``
    (inclusive) and holds ``count[k]`` examples whose outcomes sum to ``total[k]``.
    """

    p: np.ndarray = field(repr=False)
    order: np.ndarray = field(repr=False)
    lo: np.ndarray
    hi: np.ndarray
    count: np.ndarray
    total: np.ndarray

    @property
    def value(self) -> np.ndarray:
        """The recalibrated value of each block: the mean of its outcomes."""
        return self.total / self.count

    def fitted(self) -> np.ndarray:
        """The fitted value of every example, in the original order."""
        fitted = np.empty(self.order.size, dtype=np.float64)
        fitted[self.order] = np.repeat(self.value, self.hi - self.lo + 1)
        return fitted


def _violators(count: np.ndarray, total: np.ndarray) -> np.ndarray:
    """Whether each block's mean is ≥ the next one's (cross products: exact for 0/1
    outcomes while count · total < 2**53)."""
    return total[:-1] * count[1:] >= total[1:] * count[:-1]


def isotonic(p, o) -> Isotonic:
    """Pool adjacent violators on the tie groups of p, weighted by their counts.

    One sort; then whole chains of adjacent violating blocks are pooled at once, pass
    after pass, while that shrinks the blocks by a tenth or more (numpy, a few
    passes), and a stack-based PAV over the blocks left finishes. Pooling any adjacent
    blocks whose means are not increasing is what every PAV order does: such blocks lie
    in one level set of the solution (a level set's prefixes have means ≥ its value,
    its suffixes ≤), so the result is the unique isotonic regression.
    """
    p = np.asarray(p, dtype=np.float64)
    o = np.asarray(o, dtype=np.float64)
    if p.shape != o.shape or p.ndim != 1:
        raise ValueError(f"p and o must be 1-D arrays of equal length, got {p.shape} and {o.shape}")
    order = np.argsort(p)  # ties are pooled: no need for a stable sort
    ps = p[order]
    new = np.empty(ps.size, dtype=bool)
    new[:1] = True
    np.not_equal(ps[1:], ps[:-1], out=new[1:])
    lo = np.flatnonzero(new)  # ties in p: one group each
    count = np.diff(lo, append=ps.size).astype(np.float64)
    total = np.add.reduceat(o[order], lo) if lo.size else np.zeros(0)
    while count.size > 1:
        keep = np.empty(count.size, dtype=bool)
        keep[0] = True
        np.logical_not(_violators(count, total), out=keep[1:])
        starts = np.flatnonzero(keep)
        shrunk = starts.size < 0.9 * count.size
        lo, count, total = (
            lo[starts],
            np.add.reduceat(count, starts),
            np.add.reduceat(total, starts),
        )
        if not shrunk:
            break
    first, n_blocks, s_blocks = stack_pav(count, total)
    lo = lo[first]
    hi = np.append(lo[1:], ps.size)[: lo.size] - 1
    return Isotonic(p, order, lo, hi, n_blocks, s_blocks)


def stack_pav(count, total) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The stack-based PAV over groups of weights ``count`` and outcome sums ``total``, in
    order: a block is pooled into the one below while its mean is not above that one's
    (compared by cross products: no division). Returns each block's first group, its
    weight and its outcome sum."""
    first: list[int] = []
    n_stack: list[float] = []
    s_stack: list[float] = []
    for b, (c, s) in enumerate(zip(count.tolist(), total.tolist(), strict=True)):
        while s_stack and s_stack[-1] * c >= s * n_stack[-1]:
            c += n_stack.pop()
            s += s_stack.pop()
            b = first.pop()
        first.append(b)
        n_stack.append(c)
        s_stack.append(s)
    return (
        np.array(first, dtype=np.intp),
        np.array(n_stack, dtype=np.float64),
        np.array(s_stack, dtype=np.float64),
    )


def pav(p, o) -> np.ndarray:
    """Isotonic (non-decreasing) regression of o on p by pool adjacent violators.

    Minimises Σᵢ (p̂ᵢ − oᵢ)² over p̂ non-decreasing in p, with equal p values given the
    same fitted value (ties pooled: a tie group is one point of weight its count). Each
    fitted value is the mean of o over its block, so a block of outcomes all 0 (all 1)
    gets exactly 0 (1). The solution minimises the mean of every proper scoring rule
    (Brier, log score) among such functions, which is what the CORP decomposition uses.

    One sort, then PAV over the tie groups weighted by their counts (:func:`isotonic`):
    O(n log n).

    Parameters
    ----------
    p : array_like, shape (n,)
        The predictions (any real numbers; only their order matters).
    o : array_like, shape (n,)
        The outcomes, 0 or 1 (any real numbers give their isotonic regression).

    Returns
    -------
    numpy.ndarray, shape (n,)
        The fitted values, in the original order.
    """
    return isotonic(p, o).fitted()


def _mean_brier(x: np.ndarray, o: np.ndarray) -> float:
    return float(np.mean((x - o) ** 2))


def _mean_nlp(x: np.ndarray, o: np.ndarray, base: float) -> float:
    """−(1/n) Σ log_b(probability of the true class), 0·log 0 = 0: a term whose true
    class has probability 1 is 0, and one whose true class has probability 0 is +inf."""
    prob = np.where(o == 1, x, 1.0 - x)
    if (prob == 0).any():
        return math.inf
    return float(-np.mean(np.log(prob)) / math.log(base))


def _split(score: float, recalibrated: float, constant: float) -> dict[str, float]:
    """{"score", "mcb", "dsc", "unc"} with negatives of relative size < ROUNDING set to 0."""
    mcb = score - recalibrated  # +inf when score is
    dsc = constant - recalibrated
    unc = constant
    finite = [abs(v) for v in (score, recalibrated, constant) if math.isfinite(v)]
    tolerance = ROUNDING * max(finite, default=0.0)
    mcb, dsc, unc = (0.0 if -tolerance <= v < 0 else v for v in (mcb, dsc, unc))
    return {"score": score, "mcb": mcb, "dsc": dsc, "unc": unc}


def corp(
    p, t, *, log_base: float = math.e, fit: Isotonic | None = None
) -> dict[str, dict[str, float | None]]:
    """CORP decomposition of the Brier score and nlp (spec §6).

    For S̄ the mean Brier score or the mean nlp (log score in base ``log_base``):

    .. math::

        \\bar S(p) = \\mathrm{MCB} - \\mathrm{DSC} + \\mathrm{UNC},\\quad
        \\mathrm{MCB} = \\bar S(p) - \\bar S(\\hat p),\\quad
        \\mathrm{DSC} = \\bar S(c) - \\bar S(\\hat p),\\quad
        \\mathrm{UNC} = \\bar S(c),

    where p̂ = :func:`pav` (p, o) is the PAV-recalibrated prediction, o = 1{t = +1} and
    c = mean(o) the frequency of +1 among these targets (Dimitriadis, Gneiting & Jordan,
    PNAS 2021). With the Brier score, UNC = c(1 − c); with nlp, UNC is the entropy
    −c log_b c − (1 − c) log_b(1 − c).

    S̄(p) is computed as the losses of :mod:`scoring.classification` compute it, and MCB
    and DSC as the differences above, so the identity holds to rounding (1e-12 relative).
    MCB ≥ 0 and DSC ≥ 0 because p itself and c are non-decreasing functions of p, of
    which p̂ has the lowest mean score; a negative value of size below 1e-12 times the
    largest of S̄(p), S̄(p̂), S̄(c) is rounding and is set to 0 (which moves the identity by
    no more than that).

    nlp uses 0·log 0 = 0: PAV gives exactly 0 or 1 only to blocks whose outcomes are all
    0 or all 1, so the recalibrated nlp is always finite, and so is UNC. When a true class
    got probability 0, S̄(p) = +inf and then MCB = +inf: the identity holds in the extended
    sense (+inf = +inf − DSC + UNC), DSC and UNC stay finite.

    A one-class target set gives UNC = 0 and DSC = 0 (p̂ = c). A non-probabilistic file
    (every p 0 or 1) is decomposed too: the decomposition is defined, though the site
    reports these losses as n/a for such files (spec §3).

    Parameters
    ----------
    p : array_like, shape (n,)
        p(y = +1) per example, in [0, 1].
    t : array_like, shape (n,)
        The targets, +1 or −1.
    log_base : float
        Base of the logarithm in nlp.
    fit : Isotonic, optional
        :func:`isotonic` (p, o) when already computed.

    Returns
    -------
    dict
        ``{"brier": {...}, "nlp": {...}}``, each ``{"score", "mcb", "dsc", "unc"}``
        (floats; None for every value when n = 0).
    """
    p = np.asarray(p, dtype=np.float64)
    t = np.asarray(t, dtype=np.float64)
    if p.size == 0:
        nothing = dict.fromkeys(("score", "mcb", "dsc", "unc"))
        return {"brier": dict(nothing), "nlp": dict(nothing)}
    o = (t == 1).astype(np.float64)
    recalibrated = (fit or isotonic(p, o)).fitted()
    constant = np.full(p.size, float(np.mean(o)))
    return {
        "brier": _split(
            classification.brier(p, t), _mean_brier(recalibrated, o), _mean_brier(constant, o)
        ),
        "nlp": _split(
            classification.nlp(p, t, base=log_base),
            _mean_nlp(recalibrated, o, log_base),
            _mean_nlp(constant, o, log_base),
        ),
    }


def recalibration(
    p,
    t,
    *,
    max_points: int = MAX_CURVE_POINTS,
    bins: int = HISTOGRAM_BINS,
    fit: Isotonic | None = None,
) -> dict:
    """The data of a CORP reliability diagram: the PAV curve and a histogram of p.

    ``curve`` is the PAV step function as [x, y] points, two per block: its smallest and
    largest p, both at the block's recalibrated value; joined in order they draw the
    recalibrated curve (flat over a block, straight between blocks). With more than
    ``max_points // 2`` blocks, that many are kept, evenly spaced among them, the first
    and last included. ``histogram`` counts p in ``bins`` equal bins on [0, 1] (the
    last one closed), as ``{"lower", "upper", "count"}``. ``fit``: :func:`isotonic`
    (p, o) when already computed.
    """
    p = np.asarray(p, dtype=np.float64)
    if fit is None:
        fit = isotonic(p, (np.asarray(t, dtype=np.float64) == 1).astype(np.float64))
    keep = np.arange(fit.lo.size)
    most = max(max_points // 2, 2)
    if keep.size > most:
        keep = np.unique(np.linspace(0, keep.size - 1, most).round().astype(np.intp))
    x_lo = fit.p[fit.order[fit.lo[keep]]]
    x_hi = fit.p[fit.order[fit.hi[keep]]]
    y = fit.value[keep]
    curve = [
        point
        for a, b, v in zip(x_lo.tolist(), x_hi.tolist(), y.tolist(), strict=True)
        for point in ([a, v], [b, v])
    ]
    counts, _ = np.histogram(p, bins=bins, range=(0.0, 1.0))
    return {
        "curve": curve,
        "histogram": [
            {"lower": k / bins, "upper": (k + 1) / bins, "count": int(c)}
            for k, c in enumerate(counts)
        ],
    }


def kolmogorov_tail(lam: float) -> float:
    """Q(λ) = 2 Σ_{k≥1} (−1)^{k−1} exp(−2k²λ²) = P(K > λ) for the Kolmogorov K, in [0, 1].

    For λ < 0.2, Q(λ) = 1 to within 1e-12 and 1 is returned.
    """
    if lam < _SMALL_LAMBDA:
        return 1.0
    total = 0.0
    for k in range(1, _KS_TERMS + 1):
        term = math.exp(-2.0 * k * k * lam * lam)
        total += term if k % 2 else -term
        if term <= 1e-17 * total:
            break
    return min(max(2.0 * total, 0.0), 1.0)


def pit_uniformity_test(pit, *, pit_low=None) -> dict:
    """Kolmogorov–Smirnov test of the mean PIT distribution against U(0, 1).

    Each example's PIT is uniform on [``pit_low``, ``pit``] (``pit_low`` None: the single
    value ``pit``), the non-randomised PIT of Czado, Gneiting & Held (2009, Biometrics
    65), and F̄(u) is their mean CDF (:mod:`scoring.pit`). The statistic is
    D = sup_u |F̄(u) − u|, taken at F̄'s breakpoints (it is linear between them); for
    single values it is the classical D = max_i max(i/n − u₍ᵢ₎, u₍ᵢ₎ − (i − 1)/n). The
    p-value is Q(λ) of :func:`kolmogorov_tail` with Stephens' correction
    λ = (√n + 0.12 + 0.11/√n)·D (M. A. Stephens, JRSS B 32, 1970): against the exact
    distribution within 0.01 for p < 0.5 from n = 100 on and everywhere from n = 150 on
    (at n = 100 the largest error is 0.0115, near p = 0.75). A calibrated forecaster's
    PIT is uniform, so a small p-value says it is not calibrated.

    With PIT intervals the p-value is conservative (too large): F̄ is the randomised
    PIT's empirical CDF averaged over the randomisation, so D is at most the randomised
    statistic's mean given the data (Jensen) and smaller in increasing convex order than
    the statistic whose null distribution Q describes. A small p-value still says the
    forecast is not calibrated; a calibrated discrete forecast is rejected less often
    than the nominal level (calibrated Poisson ensembles of 10 members at n = 20,000:
    p from 0.75 to 1 in eleven seeded runs).

    Returns
    -------
    dict
        ``{"statistic": D, "p_value": Q(λ), "test": "Kolmogorov–Smirnov"}``; the
        statistic and p-value are None when there is no value (n = 0).
    """
    mean_pit = MeanPit.of(pit, pit_low)  # (``pit`` may be a MeanPit already)
    n = mean_pit.n
    if n == 0:
        return {"statistic": None, "p_value": None, "test": "Kolmogorov–Smirnov"}
    d = ks_distance(mean_pit)
    root = math.sqrt(n)
    p_value = kolmogorov_tail((root + 0.12 + 0.11 / root) * d)
    return {"statistic": d, "p_value": p_value, "test": "Kolmogorov–Smirnov"}
