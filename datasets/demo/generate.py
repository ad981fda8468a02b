"""Write the synthetic demo challenges: ``python -m datasets.demo.generate OUTDIR``.

OUTDIR/epuc/ replicates the shape of the 2004 Evaluating Predictive Uncertainty
challenge, OUTDIR/covshift/ the 2006 covariate-shift challenge (with a public part of
its test sets), OUTDIR/probing/ a running challenge with the Ladder, OUTDIR/cifar10c/
a ten-class problem whose test inputs are corrupted as in CIFAR-10-C and OUTDIR/teamwork/
a challenge in its validation phase on the day it is written (teams open): each folder
holds a challenge.toml and one subfolder of files per dataset, ready for
``manage.py import_challenge``. The numbers are synthetic (see README.md), drawn
from a seeded generator: the same seed always writes the same bytes (teamwork's
challenge.toml also holds the day's dates: ``--today``).
"""

import argparse
import sys
from datetime import date
from pathlib import Path

from . import cifar10c, covshift, epuc, probing, teamwork
from .common import DemoChallenge, write_challenge

DEFAULT_SEED = 2004


def build(seed: int = DEFAULT_SEED, *, today: date | None = None) -> dict[str, DemoChallenge]:
    return {
        "epuc": epuc.build(seed),
        "covshift": covshift.build(seed),
        "probing": probing.build(seed),
        "cifar10c": cifar10c.build(seed),
        "teamwork": teamwork.build(seed, today=today),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m datasets.demo.generate", description="Write the synthetic demo challenges."
    )
    parser.add_argument(
        "outdir",
        type=Path,
        help="folder to write epuc/, covshift/, probing/, cifar10c/ and teamwork/ into",
    )
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument(
        "--today",
        type=date.fromisoformat,
        default=None,
        help="the day teamwork's dates are relative to (YYYY-MM-DD; default: today, UTC)",
    )
    parser.add_argument(
        "--only", nargs="+", metavar="SLUG", help="write these challenges only (e.g. teamwork)"
    )
    args = parser.parse_args(argv)
    for slug, challenge in build(args.seed, today=args.today).items():
        if args.only and slug not in args.only:
            continue
        write_challenge(challenge, args.outdir / slug)
        print(f"wrote {args.outdir / slug}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
