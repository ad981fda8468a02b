"""How many entries of each leaderboard attack the probing flags catch, and how many of an
honest population they wrongly flag (issue 32, must-have 2: targets ≥ 90 % and ≤ 1 %).

One challenge in its test phase (bench/attack_site.py: a throwaway SQLite site, N test
examples of which half public, log loss ranking by default), one board shared by all:
the honest population (P participants who joined before the test phase, U uploads each
of logistic regressions on more and more rows and features, round-robin) uploads its
first half, then the attacks run in turn through the API (bench/attacks.py): boosting (K
random files and their majority vote, one account), Whitehill's jittered oracle (one
account, then a fresh account per upload) and the many-accounts attack (A accounts, one
random file each), then the honest population uploads its second half. The flags are
read as the organisers' console reads them: ``challenge_site.submissions.probing.flags``
on the entries (scored, with the statistics recorded at scoring).

An entry counts as flagged when it has at least one flag; the table gives the share per
attack and which flags fired (entries per flag).

Usage: python bench/probing_flags.py [--feedback exact] [--loss logloss] [--n 2000]
       [--seed 0] [--k 200] [--accounts 40] [--probes 12] [--honest 20x10]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parent))  # after ROOT: see attacks.py

import attack_site as site  # noqa: E402 - bench/attack_site.py
import attacks  # noqa: E402 - bench/attacks.py

ATTACK_TARGET, HONEST_TARGET = 0.90, 0.01


def flagged(entries: list[int]) -> tuple[int, Counter]:
    """(entries with a flag, {flag code: entries}) as the console's flags say."""
    from challenge_site.submissions import probing
    from challenge_site.submissions.models import Submission

    rows = Submission.objects.filter(pk__in=entries).select_related("dataset").order_by("pk")
    found = probing.flags(rows)
    codes = Counter(flag.code for flags in found.values() for flag in flags)
    return sum(bool(found.get(entry)) for entry in entries), codes


def run(*, feedback: str, loss: str, n: int, seed: int, plan: attacks.Plan) -> list:
    """[(outcome, flagged entries, flag counts)] per attack and the honest population."""
    arena = site.Arena.create(
        slug=f"flags-{feedback}-{seed}".replace("_", "-"),
        feedback=feedback,
        loss=loss,
        n_test=n,
        seed=seed,
    )
    first = plan.uploads // 2
    population = attacks.honest(
        arena, participants=plan.participants, uploads=plan.uploads, seed=seed, rounds=range(first)
    )
    outcomes = []
    if plan.k:
        outcomes.append(attacks.boosting(arena, k=plan.k, seed=seed))
    if plan.probes:
        outcomes.append(attacks.oracle(arena, probes=plan.probes, seed=seed, fresh=False))
        outcomes.append(attacks.oracle(arena, probes=plan.probes, seed=seed, fresh=True))
    if plan.accounts:
        outcomes.append(attacks.many_accounts(arena, accounts=plan.accounts, seed=seed))
    attacks.honest(
        arena,
        participants=plan.participants,
        uploads=plan.uploads,
        seed=seed,
        rounds=range(first, plan.uploads),
        outcome=population,
    )
    outcomes.append(attacks.measure(arena, population))
    return [(outcome, *flagged(outcome.entries)) for outcome in outcomes]


def table(results: list) -> list[str]:
    lines = [
        "| entries of | accounts | entries | flagged | share | target | flags (entries) |",
        "|---|---|---|---|---|---|---|",
    ]
    for outcome, caught, codes in results:
        total = len(outcome.entries)
        share = caught / total if total else 0.0
        honest = outcome.attack == "honest"
        target = f"≤ {HONEST_TARGET:.0%}" if honest else f"≥ {ATTACK_TARGET:.0%}"
        met = share <= HONEST_TARGET if honest else share >= ATTACK_TARGET
        which = ", ".join(f"{code} {count}" for code, count in sorted(codes.items())) or "–"
        lines.append(
            f"| {outcome.attack} | {len(outcome.accounts)} | {total} | {caught} "
            f"| {share:.1%} | {target} {'✓' if met else '✗'} | {which} |"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--feedback", default="exact", choices=site.FEEDBACKS)
    parser.add_argument("--loss", default="logloss", choices=sorted(site.LOSSES))
    parser.add_argument("--n", type=int, default=2000, help="test examples")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--k", type=int, default=200, help="boosting's random files")
    parser.add_argument("--accounts", type=int, default=40)
    parser.add_argument("--probes", type=int, default=12, help="oracle uploads")
    parser.add_argument("--honest", type=attacks.parse_population, default=(20, 10), help="PxU")
    args = parser.parse_args(argv)
    if args.n < 10:
        parser.error("--n must be at least 10")
    if min(args.honest) < 1:
        parser.error("--honest needs at least one participant and one upload")
    plan = attacks.Plan(args.k, args.accounts, args.probes, *args.honest)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench-flags-") as folder:
        site.setup(folder)
        if args.feedback not in site.available_feedbacks():
            parser.error(f"this checkout has no {args.feedback!r} feedback option")
        results = run(
            feedback=args.feedback, loss=site.LOSSES[args.loss], n=args.n, seed=args.seed, plan=plan
        )
    print(
        f"# bench/probing_flags.py: feedback {args.feedback}, ranking loss "
        f"{site.LOSSES[args.loss]}, N = {args.n:,} (public 0.5), seed {args.seed}, "
        f"honest {args.honest[0]}×{args.honest[1]}"
    )
    print()
    print("\n".join(table(results)))
    print(f"\n({time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
