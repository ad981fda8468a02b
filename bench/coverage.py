"""Held-out coverage of the leaderboard's intervals, and of their heavy-tail mark (issue 28).

Each example has a signal s_i ~ N(0, 1) and an outcome y_i = s_i + ε_i, the noise ε_i
i.i.d. N(0, 1) or Student's t with 3 degrees of freedom (variance 3, no finite fourth
moment: the nlpd and squared-error terms of a Gaussian prediction, which grow like ε²,
have tail index 3/2 and no finite variance). Two entries predict every example:
A = N(s_i, 1), well specified for normal noise, and B = N(s_i + 0.1, 1.2²),
mis-specified. (The signal keeps nmse off its boundary: an entry predicting the mean of
i.i.d. outcomes has an nmse estimate ≥ 1 = its true value on every sample.) Each replication runs the site's code path: terms
from scoring.distributions.gaussian_stats (nlpd, crps) and scoring.regression
(squared errors), every loss of both entries on B paired resamples by
scoring.bootstrap.resample (nmse over the resampled targets' variance), the 95 %
percentile intervals of bootstrap.intervals and bootstrap.differences (B − A, as
against a leader or a baseline), and the mark of scoring.tails (own: the entry's α̂;
difference: either entry's).

The true expected losses are exact: for a prediction N(s + μ, σ²) and noise of mean 0
and variance v, E nlpd = ½ log(2πσ²) + (v + μ²)/(2σ²), the nmse estimand is
E(Y − s − μ)²/var Y = (v + μ²)/(1 + v), and E crps is the integral of the closed-form CRPS against
the outcome's density (scipy.integrate.quad, to 1e-10).

Reported per outcome, n and loss: coverage of each entry's own interval and of the
difference interval, the share of those marked, and "ok": covered OR marked, the
criterion of issue 28 (≥ 90 % wherever an interval is shown unmarked). On normal
outcomes the mark rate is what the mark costs: intervals marked that were fine. For
comparison, the coverage the studentised bootstrap (bootstrap-t) would give the own
nlpd and crps intervals, from the same resamples.

Usage: python bench/coverage.py [--quick] [--resamples 1000] [--threshold 2.0]
       [--seed 28] [--n 100 1000 20000]
Replications: 400 at n = 100, 200 at n = 1,000, 120 at n = 20,000 (--quick: 100, 40, 6).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from scoring import bootstrap, tails  # noqa: E402
from scoring.distributions import gaussian_stats  # noqa: E402
from scoring.regression import nlpd_terms, squared_errors  # noqa: E402

ENTRIES = ((0.0, 1.0), (0.1, 1.2))  # (μ, σ) of entries A and B
OUTCOMES = ("normal", "t3")
LOSSES = ("nlpd", "nmse", "crps")
REPLICATIONS = {100: 400, 1000: 200, 20000: 120}
QUICK = {100: 100, 1000: 40, 20000: 6}


def outcome_variance(outcome: str) -> float:
    return {"normal": 1.0, "t3": 3.0}[outcome]


def _density(outcome: str):
    from scipy import stats

    return {"normal": stats.norm(), "t3": stats.t(3)}[outcome].pdf


def _crps(mu: float, sigma: float, y) -> float:
    z = (y - mu) / sigma
    pdf = math.exp(-0.5 * z * z) / math.sqrt(2 * math.pi)
    cdf = 0.5 * (1 + math.erf(z / math.sqrt(2)))
    return sigma * (z * (2 * cdf - 1) + 2 * pdf - 1 / math.sqrt(math.pi))


def true_losses(outcome: str) -> dict[str, np.ndarray]:
    """Loss → (E loss of A, E loss of B) under the outcome distribution."""
    from scipy import integrate

    v = outcome_variance(outcome)
    density = _density(outcome)
    out = {name: np.empty(len(ENTRIES)) for name in LOSSES}
    for j, (mu, sigma) in enumerate(ENTRIES):
        out["nlpd"][j] = 0.5 * math.log(2 * math.pi * sigma**2) + (v + mu**2) / (2 * sigma**2)
        out["nmse"][j] = (v + mu**2) / (1 + v)
        out["crps"][j] = integrate.quad(
            lambda y, mu=mu, sigma=sigma: _crps(mu, sigma, y) * density(y),
            -np.inf,
            np.inf,
            epsabs=1e-12,
            epsrel=1e-10,
        )[0]
    return out


def _terms(signal: np.ndarray, y: np.ndarray) -> dict[str, np.ndarray]:
    """Loss (nmse: its squared errors) → (n, 2) terms of entries A and B."""
    columns = {name: [] for name in LOSSES}
    for mu, sigma in ENTRIES:
        stats = gaussian_stats(signal + mu, np.full(y.size, sigma**2), y)
        columns["nlpd"].append(nlpd_terms(stats.logpdf))
        columns["crps"].append(stats.crps)
        columns["nmse"].append(squared_errors(signal + mu, y))
    return {name: np.stack(arrays, axis=1) for name, arrays in columns.items()}


@dataclass
class Runs:
    """Per replication, for one (outcome, n, loss): whether each entry's own interval
    covered its true loss (reps, 2), each entry's α̂ (reps, 2), whether the
    difference interval B − A covered the true difference (reps,), and whether the
    studentised bootstrap's own interval would have (reps, 2; NaN for nmse)."""

    covered: np.ndarray
    alpha: np.ndarray
    diff_covered: np.ndarray
    studentised: np.ndarray

    def rates(self, threshold: float = tails.THRESHOLD) -> dict[str, np.ndarray]:
        """Per cent: coverage, marks and "covered or marked", [own A, own B, B − A]."""
        marked = tails.heavy(self.alpha, threshold=threshold)
        diff_marked = marked.any(axis=1)
        covered = np.column_stack([self.covered, self.diff_covered])
        marks = np.column_stack([marked, diff_marked])
        return {
            "covered": 100 * covered.mean(axis=0),
            "marked": 100 * marks.mean(axis=0),
            "ok": 100 * (covered | marks).mean(axis=0),
            "studentised": 100 * self.studentised.mean(axis=0),
        }


def draw(outcome: str, n: int, *, seed: int, rep: int):
    """Replication ``rep``'s outcomes y (n,), the terms of entries A and B (loss → (n, 2))
    and the random generator that goes on to seed its resamples."""
    stream = np.random.SeedSequence(seed, spawn_key=(OUTCOMES.index(outcome), n, rep))
    rng = np.random.default_rng(stream)
    signal = rng.standard_normal(n)
    y = signal + (rng.standard_normal(n) if outcome == "normal" else rng.standard_t(3, n))
    return y, _terms(signal, y), rng


def studentised(terms: np.ndarray, means: np.ndarray, squares: np.ndarray) -> np.ndarray:
    """The studentised (bootstrap-t) 95 % interval of each column's mean (Efron &
    Tibshirani 1993, §12.5): [x̄ − t₉₇.₅ ŝ, x̄ − t₂.₅ ŝ], t_q the percentiles of
    (x̄_b − x̄)/ŝ_b over the resamples, ŝ = sd/√n (ŝ_b from the resample's own moments,
    ``means`` and ``squares``: the mean of the terms and of their squares, (k, B))."""
    n = terms.shape[0]
    centre = terms.mean(axis=0)
    scale = terms.std(axis=0) / np.sqrt(n)
    with np.errstate(invalid="ignore", divide="ignore"):
        scale_b = np.sqrt(np.maximum(squares - means**2, 0.0) / n)
        pivots = (means - centre[:, None]) / scale_b
    low, high = bootstrap.percentiles(pivots, (97.5, 2.5)).T
    return np.stack([centre - low * scale, centre - high * scale], axis=1)


def replicate(outcome: str, n: int, *, seed: int, rep: int, resamples: int, truth) -> dict:
    """One replication: loss → (own covered (2,), α̂ (2,), difference covered,
    studentised own covered (2,))."""
    y, terms, rng = draw(outcome, n, seed=seed, rep=rep)
    resample_seed = int(rng.integers(2**63))
    values = bootstrap.resample(
        {"nlpd": terms["nlpd"], "crps": terms["crps"]},
        squared_errors={"nmse": terms["nmse"]},
        targets=y,
        seed=resample_seed,
        resamples=resamples,
    )
    # The same resamples of the squared terms: each resample's standard error.
    squares = bootstrap.resample(
        {name: terms[name] ** 2 for name in ("nlpd", "crps")},
        seed=resample_seed,
        resamples=resamples,
    )
    out = {}
    for name in LOSSES:
        own = bootstrap.intervals(values[name])
        diff = bootstrap.intervals(bootstrap.differences(values[name][1:], values[name][0]))[0]
        true = truth[name]
        covered = (own[:, 0] <= true) & (true <= own[:, 1])
        true_diff = true[1] - true[0]
        diff_covered = bool(diff[0] <= true_diff <= diff[1])
        t_covered = np.full(len(ENTRIES), np.nan)
        if name in squares:
            t_interval = studentised(terms[name], values[name], squares[name])
            t_covered = ((t_interval[:, 0] <= true) & (true <= t_interval[:, 1])).astype(float)
        out[name] = (covered, tails.tail_index(terms[name]), diff_covered, t_covered)
    return out


def simulate(
    outcome: str,
    n: int,
    *,
    replications: int,
    resamples: int = bootstrap.RESAMPLES,
    seed: int = 28,
) -> dict[str, Runs]:
    """Loss → the outcomes of ``replications`` seeded replications."""
    truth = true_losses(outcome)
    raw = {name: ([], [], [], []) for name in LOSSES}
    for rep in range(replications):
        result = replicate(outcome, n, seed=seed, rep=rep, resamples=resamples, truth=truth)
        for name, values in result.items():
            for kept, value in zip(raw[name], values, strict=True):
                kept.append(value)
    return {name: Runs(*(np.array(values) for values in kept)) for name, kept in raw.items()}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer replications")
    parser.add_argument("--resamples", type=int, default=bootstrap.RESAMPLES)
    parser.add_argument("--threshold", type=float, default=tails.THRESHOLD)
    parser.add_argument("--seed", type=int, default=28)
    parser.add_argument("--n", type=int, nargs="+", default=list(REPLICATIONS))
    args = parser.parse_args(argv)
    counts = QUICK if args.quick else REPLICATIONS
    print(
        f"B = {args.resamples}, α̂ threshold {args.threshold}, k = max(10, ⌊√n⌋); "
        "per cent of replications; A = N(0,1), B = N(0.1,1.2²), Δ = B − A; "
        "t: the studentised bootstrap's own coverage (not the site's)"
    )
    header = (
        "outcome      n loss reps | cov A  cov B  cov Δ | mark A mark B mark Δ "
        "|  ok A   ok B   ok Δ | t A    t B"
    )
    print(header)
    print("-" * len(header))
    worst = 100.0
    for outcome in OUTCOMES:
        for n in args.n:
            reps = counts.get(n, 40)
            started = time.perf_counter()
            runs = simulate(outcome, n, replications=reps, resamples=args.resamples, seed=args.seed)
            for name, run in runs.items():
                rates = run.rates(args.threshold)
                worst = min(worst, *rates["ok"])
                cells = " | ".join(
                    "  ".join(f"{value:5.1f}" for value in rates[key])
                    for key in ("covered", "marked", "ok", "studentised")
                )
                print(f"{outcome:7} {n:6} {name:4} {len(run.covered):4} | {cells}")
            print(f"  ({outcome}, n = {n}: {time.perf_counter() - started:.1f} s)")
    print(f"lowest 'covered or marked': {worst:.1f} %")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
