"""95 % bootstrap intervals of the CORP decomposition, in time bounded whatever n.

The bootstrap of spec §5 draws n examples with replacement and refits PAV to them
(Dimitriadis, Gneiting & Jordan, PNAS 118 (8), e2016191118 (2021), SI). Drawing the n
counts of every resample costs O(n · B); here a resample is drawn directly as counts of
the groups of :func:`scoring.corp_pool.group_starts` (at most GROUPS + 2 of them), with
the same distribution: the number drawn from group g is the g-th entry of a
Multinomial(n, n_g/n) draw, and of these, the number with outcome 1 is
Binomial(drawn_g, n⁺_g/n_g), since each draw from the group picks one of its examples
uniformly. PAV is refitted to the groups' drawn weights and outcome sums
(:func:`scoring.corp_pool.pool`).

A mean score needs the sum of the drawn examples' terms: within a cell (group g,
outcome o), k draws sum to k·μ_go plus a deviation of mean 0 and variance k·σ²_go (μ, σ²
the mean and variance of the cell's terms), which is added as a normal deviate: the
resampled score has the bootstrap's mean and variance exactly. When the groups are the
tie groups (at most GROUPS distinct forecasts) every cell's terms are equal (σ = 0) and
every resample is exactly a bootstrap resample's decomposition.
"""

from __future__ import annotations

import math

import numpy as np

from . import bootstrap, classification, decomposition
from .corp_pool import GROUPS, group_starts, pool, tie_starts

ROUNDING = 1e-12
# Resamples drawn per numpy call: memory is O(CHUNK · GROUPS), never O(n · B).
CHUNK = 100
PARTS = ("score", "mcb", "dsc", "unc")


def _xlogy(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a · log b with 0 · log 0 = 0 (b ≥ 0)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(a == 0, 0.0, a * np.log(b))


def _clip_rounding(values: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """Negatives of size ≤ ROUNDING · scale (rounding of a difference ≥ 0) set to 0."""
    tolerance = ROUNDING * np.where(np.isfinite(scale), np.abs(scale), 0.0)
    return np.where((values < 0) & (values >= -tolerance), 0.0, values)


class Groups:
    """The sorted examples in groups: per group its size ``count`` and positives
    ``ones``; per cell (group, outcome 0 or 1: arrays of shape (2, groups)) and loss, the
    mean ``mu`` and variance ``var`` of the finite terms and whether one is +inf
    (``inf``: False when no term is); ``runs``:
    the first group of each run of groups whose outcomes are all 0 (or all 1), pooled
    since such a run is constant in the isotonic fit of any weights (a block ending
    inside it would have a suffix of mean ≤ its value, the next block a prefix of mean
    ≥ its own); ``exact``: the groups are the tie groups."""

    def __init__(self, p: np.ndarray, o: np.ndarray, terms: dict, *, limit: int = GROUPS):
        # Examples of one tie group are interchangeable here: any sort order will do.
        order = np.argsort(p)
        ps, os = p[order], o[order]
        self.n = p.size
        self.starts = group_starts(ps, limit=limit)
        self.exact = self.starts.size == tie_starts(ps).size
        g = self.starts.size
        self.count = np.diff(self.starts, append=self.n).astype(np.float64)
        self.ones = np.add.reduceat(os, self.starts)
        cell = np.repeat(np.arange(g), np.diff(self.starts, append=self.n))
        cell[os == 1] += g
        size = np.maximum(np.bincount(cell, minlength=2 * g), 1.0)
        self.mu, self.var, self.inf = {}, {}, {}
        for name, term in terms.items():
            term = term[order]
            infinite = np.isposinf(term)
            finite = np.where(infinite, 0.0, term)
            mu = np.bincount(cell, finite, minlength=2 * g) / size
            self.mu[name], self.inf[name] = mu.reshape(2, g), bool(infinite.any())
            if self.exact:  # every cell holds equal terms
                var = np.zeros(2 * g)
            else:
                deviation = np.where(infinite, 0.0, finite - mu[cell])
                var = np.bincount(cell, deviation * deviation, minlength=2 * g) / size
            self.var[name] = var.reshape(2, g)
            if self.inf[name]:
                hits = np.bincount(cell, infinite, minlength=2 * g) > 0
                self.inf[name] = hits.reshape(2, g)
        kind = np.where(self.ones == 0, 0, np.where(self.ones == self.count, 1, 2))
        new = np.ones(g, dtype=bool)
        new[1:] = (kind[1:] != kind[:-1]) | (kind[1:] == 2)
        self.runs = np.flatnonzero(new)

    def draw(self, rng: np.random.Generator, rows: int) -> tuple[np.ndarray, np.ndarray]:
        """``rows`` bootstrap resamples as draws per cell: (zeros, ones), (rows, groups)."""
        drawn = rng.multinomial(self.n, self.count / self.n, size=rows)
        ones = rng.binomial(drawn, self.ones / self.count)
        return (drawn - ones).astype(np.float64), ones.astype(np.float64)

    def parts(self, zeros, ones, noise, base: float) -> dict:
        """Score, MCB, DSC, UNC of each loss on each resample (rows of ``zeros`` and
        ``ones``, the draws per cell); ``noise`` (name → (rows,) standard normals, or
        None) scales each score's within-cell deviation."""
        n, rows = self.n, zeros.shape[0]
        w = np.add.reduceat(zeros + ones, self.runs, axis=1)
        s = np.add.reduceat(ones, self.runs, axis=1)
        runs = self.runs.size
        # A run nobody drew has no weight: it is left out of that row's PAV.
        drawn = np.flatnonzero(w)
        row_of = drawn // runs
        first = np.ones(row_of.size, dtype=bool)
        first[1:] = row_of[1:] != row_of[:-1]
        lo, bw, bs = pool(w.ravel()[drawn], s.ravel()[drawn], first)
        block_row = row_of[lo]
        mean = bs / bw
        # Σ_i w_i (p̂_i − o_i)² over a block of mean m is S − S²/W; the log score 0·log 0 = 0.
        recal = {
            "brier": np.bincount(block_row, bs - bs * mean, minlength=rows) / n,
            "nlp": -np.bincount(
                block_row, _xlogy(bs, mean) + _xlogy(bw - bs, 1.0 - mean), minlength=rows
            )
            / n
            / math.log(base),
        }
        c = ones.sum(axis=1) / n
        unc = {
            "brier": c * (1.0 - c),
            "nlp": -(_xlogy(c, c) + _xlogy(1.0 - c, 1.0 - c)) / math.log(base),
        }
        out = {}
        for name in self.mu:
            mu, var, inf = self.mu[name], self.var[name], self.inf[name]
            score = (zeros @ mu[0] + ones @ mu[1]) / n
            if noise is not None:
                score += np.sqrt(zeros @ var[0] + ones @ var[1]) * noise[name] / n
            if inf is not False:
                score[(zeros @ inf[0] + ones @ inf[1]) > 0] = np.inf
            scale = np.maximum(np.where(np.isfinite(score), score, 0.0), unc[name])
            with np.errstate(invalid="ignore"):
                mcb = _clip_rounding(score - recal[name], scale)
            out[name] = {
                "score": score,
                "mcb": mcb,
                "dsc": _clip_rounding(unc[name] - recal[name], scale),
                "unc": unc[name],
            }
        return out

    def estimate(self, base: float) -> dict:
        """The decomposition of the file itself, PAV constrained to the groups."""
        zeros = (self.count - self.ones)[None, :]
        got = self.parts(zeros, self.ones[None, :], None, base)
        return {name: {part: float(v[0]) for part, v in by.items()} for name, by in got.items()}


def decomposition_intervals(
    p,
    t,
    *,
    seed: int,
    resamples: int = bootstrap.RESAMPLES,
    log_base: float = math.e,
    limit: int = GROUPS,
) -> dict:
    """95 % bootstrap intervals of the CORP decomposition of brier and nlp.

    On each of B bootstrap resamples (W_bi: how often example i is drawn in resample b,
    drawn per group as the module docstring says) the decomposition of
    :func:`scoring.decomposition.corp` is recomputed with the weights W_bi: S̄_b(p) =
    (1/n) Σ W_bi S(pᵢ, oᵢ), p̂_b the weighted PAV fit, c_b = (1/n) Σ W_bi oᵢ, and

    .. math::

        \\mathrm{MCB}_b = \\bar S_b(p) - \\bar S_b(\\hat p_b),\\quad
        \\mathrm{DSC}_b = \\bar S_b(c_b) - \\bar S_b(\\hat p_b),\\quad
        \\mathrm{UNC}_b = \\bar S_b(c_b);

    as Dimitriadis, Gneiting & Jordan (PNAS 2021, SI) resample the examples for the
    uncertainty of the decomposition. With q_lo, q_hi the 2.5 and 97.5 percentiles over
    b (:func:`scoring.bootstrap.percentiles`, +inf sorting last):

    - score and UNC (means of per-example terms): the percentile interval
      [q_lo, q_hi], as §5;
    - MCB and DSC: the *basic* (reverse percentile) interval
      [max(0, 2θ̂ − q_hi), max(0, 2θ̂ − q_lo)] about the CORP estimate θ̂. The PAV fit
      is optimistic in-sample (it follows the noise of its own outcomes), which biases
      both MCB and DSC upward by O(blocks/n); each refit on a resample adds that bias
      again, so the percentile interval sits twice the bias above the population
      value and misses it (x = Φ(2z), true p = Φ(z), 100–200 replications: MCB of
      brier covered 0–15 % of the time at n = 100 to 1,000, DSC 56–85 %). Reflecting
      the resampled spread about θ̂ cancels the bias to first order: 83–99 % at n = 300,
      88–99 % at n = 1,000 (tests/scoring/test_corp_bands.py). MCB, DSC ≥ 0, hence the
      clip at 0. An infinite θ̂ (MCB of nlp where a true class got probability 0) keeps
      the percentile interval. Above ``limit`` distinct forecasts the resamples refit
      PAV constrained to the groups, and θ̂ is constrained alike, so that the reflection
      cancels the same bias.

    Parameters
    ----------
    p : array_like, shape (n,)
        p(y = +1) per example, in [0, 1].
    t : array_like, shape (n,)
        The targets, +1 or −1.
    seed : int
        The resamples' seed (:func:`scoring.corp_bands.seed_for` (n, "intervals") on the site).
    resamples : int
        B.
    log_base : float
        Base of the logarithm in nlp.
    limit : int
        Most groups (:func:`scoring.corp_pool.group_starts`) a resample's PAV runs on.

    Returns
    -------
    dict
        ``{"brier": {"score", "mcb", "dsc", "unc"}, "nlp": {…}, "level", "resamples"}``,
        each part ``[lower, upper]`` (+inf bounds where nlp's are; None when n = 0).
    """
    p = np.asarray(p, dtype=np.float64)
    t = np.asarray(t, dtype=np.float64)
    out: dict = {"level": bootstrap.LEVEL, "resamples": int(resamples)}
    if p.size == 0:
        out.update({name: dict.fromkeys(PARTS) for name in ("brier", "nlp")})
        return out
    terms = {
        "brier": classification.brier_terms(p, t),
        "nlp": classification.nlp_terms(p, t, base=log_base),
    }
    groups = Groups(p, (t == 1).astype(np.float64), terms, limit=limit)
    values = {name: {part: np.empty(resamples) for part in PARTS} for name in terms}
    rng = np.random.Generator(np.random.PCG64(seed))
    for start in range(0, resamples, CHUNK):
        rows = min(CHUNK, resamples - start)
        zeros, ones = groups.draw(rng, rows)
        noise = None if groups.exact else {name: rng.standard_normal(rows) for name in terms}
        for name, got in groups.parts(zeros, ones, noise, log_base).items():
            for part in PARTS:
                values[name][part][start : start + rows] = got[part]
    q = (bootstrap.LOWER_PERCENTILE, bootstrap.UPPER_PERCENTILE)
    # The basic interval reflects about the estimate the resamples refit: the exact CORP
    # one, or, when grouped, the one constrained to the same groups.
    if groups.exact:
        estimate = decomposition.corp(p, t, log_base=log_base)
    else:
        estimate = groups.estimate(log_base)
    for name, by_part in values.items():
        out[name] = {}
        for part, v in by_part.items():
            lower, upper = bootstrap.percentiles(v, q).tolist()
            centre = estimate[name][part]
            if part in ("mcb", "dsc") and math.isfinite(centre):
                lower, upper = max(0.0, 2 * centre - upper), max(0.0, 2 * centre - lower)
            if part == "mcb" and math.isfinite(centre):
                # PAV's MCB is biased upward by what the fit learns from the noise, most
                # where the miscalibration is mild: the reflected lower end then lies above
                # the true value (an independent check: 72–75 % coverage of nlp's MCB for
                # p^1.25 at n = 300 and 1,000). The interval keeps its upper end and starts
                # at 0, the least MCB can be: how miscalibrated the forecast may be at most.
                # Whether it is miscalibrated at all is the consistency band's question.
                lower = 0.0
            out[name][part] = [lower, upper]
    return out
