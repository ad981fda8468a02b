"""How far a leaderboard prober climbs with exact scores and with the Ladder
(scoring.ladder; Blum & Hardt 2015, Whitehill 2017).

For each seed, scoring.simulation.simulate_attack runs the same attacker (same targets,
base prediction and flip subsets) under exact and Ladder feedback: a log-loss
prediction on ``--public`` + ``--private`` binary examples, ``--rounds`` submissions
that each flip the sign of a random tenth of the kept logits and are kept when the shown
public score goes down. The gap is the kept entry's private score less the shown public
score (nats; positive = the shown score flatters the entry). Also, for each seed,
simulate_honest's participant (``--rounds`` genuinely different, slowly improving models)
under the Ladder: how far the shown score strays from the truth (the lowest exact public
score so far), in thresholds of its round.

Usage: python bench/ladder.py [--seeds 100] [--rounds 200] [--public 1000] [--private 1000]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scoring import ladder_simulation as simulation  # noqa: E402


def _mean_sd(values) -> str:
    values = [float(v) for v in values]
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return f"{statistics.fmean(values):.4f} ± {sd:.4f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--public", type=int, default=1000)
    parser.add_argument("--private", type=int, default=1000)
    args = parser.parse_args(argv)
    if args.seeds < 1:
        parser.error("--seeds must be at least 1")
    sizes = {"rounds": args.rounds, "n_public": args.public, "n_private": args.private}
    started = time.perf_counter()
    runs = {
        feedback: [
            simulation.simulate_attack(feedback=feedback, seed=seed, **sizes)
            for seed in range(args.seeds)
        ]
        for feedback in simulation.FEEDBACKS
    }
    honest = [
        simulation.simulate_honest(feedback="ladder", seed=seed, **sizes)
        for seed in range(args.seeds)
    ]
    elapsed = time.perf_counter() - started

    print(
        f"# bench/ladder.py: {args.seeds} seeds, {args.rounds} rounds, "
        f"{args.public:,} public + {args.private:,} private examples (log loss, nats)"
    )
    print()
    print("| feedback | gap = private − shown | shown | private | accepted entries |")
    print("|---|---|---|---|---|")
    for feedback, results in runs.items():
        print(
            f"| {feedback} | {_mean_sd(r.gap for r in results)} "
            f"| {_mean_sd(r.shown for r in results)} | {_mean_sd(r.private for r in results)} "
            f"| {_mean_sd(r.accepted for r in results)} |"
        )
    exact = statistics.fmean(r.gap for r in runs["exact"])
    guarded = statistics.fmean(r.gap for r in runs["ladder"])
    ratio = f"{exact / guarded:.1f}" if guarded > 0 else "∞ (ladder gap ≤ 0)"
    print()
    print(f"Mean gap, exact ÷ ladder: {ratio}")
    print()
    errors = np.concatenate([run.error / run.threshold for run in honest])
    judged = np.concatenate([run.error / (run.judged + run.resolution / 2) for run in honest])
    bounded = np.concatenate([run.error / run.bound for run in honest])
    print(
        f"Honest participant under the Ladder ({args.rounds} rounds × {args.seeds} seeds): "
        f"largest |shown − truth| ÷ (the threshold its best entry was judged with + half a "
        f"rounding unit) = "
        f"{judged.max():.3f} (÷ the round's threshold = {errors.max():.3f}; "
        f"÷ (threshold + half a rounding unit) = {bounded.max():.3f}); "
        f"accepted entries {_mean_sd(run.accepted.sum() for run in honest)}."
    )
    print(f"({elapsed:.1f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
