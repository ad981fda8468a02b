"""Leaderboard attacks run through the site's real services (issue 32): what an attacker
and an honest participant actually get from the public board.

Each attack runs in a challenge of its own (bench/attack_site.py: a throwaway SQLite
site, a binary dataset in its test phase, N test examples of which half public, no
submission limit), through ``POST /api/v1/submissions/`` with a token; the attacker
reads its own entries through ``GET /api/v1/submissions/<id>/`` and the board is read
as an anonymous visitor. Attacks:

- ``boosting``: Blum & Hardt's boosting attack. K random files (p = 0.5 ± δ, random
  signs), keep those whose own shown public score beats a random file's expected score,
  then upload their majority vote. One account.
- ``many_accounts``: A accounts, one random file each (the same files as
  ``one_account``, so the two are paired).
- ``one_account``: the same A random files from one account.
- ``oracle`` / ``oracle_fresh``: Whitehill's log-loss oracle with jitter: p = 0.99 on one
  row, 0.5 ± 1e-11 elsewhere, one row per upload; decodes the row's membership (public or
  private part) and label from the shown score. One account, or a fresh account per
  upload (``oracle_fresh``). Always on a log-loss challenge.
- ``honest``: the control population: P participants each uploading U logistic
  regressions fitted on more and more training rows and features (seeded).

Per attack: the best public score the anonymous board shows of the attack's accounts
(``shown``), that entry's private score and its truth (expected loss on fresh targets,
from the generating model), the inflation (private − shown, truth − shown; positive =
the board flatters the entry), how many entries had a public score of their own shown
(``released``), and for the oracles the rows whose membership and label were recovered.

Usage: python bench/attacks.py [--feedback exact|ladder|board_ladder] [--loss error|logloss]
       [--n 2000] [--seed 0] [--k 200] [--accounts 40] [--probes 12] [--honest 10x8]
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

# Appended, not first: bench/scoring.py would hide the scoring package.
sys.path.append(str(Path(__file__).resolve().parent))

import attack_site as site  # noqa: E402 - bench/attack_site.py

DELTA = 0.1  # a random file's p = 0.5 ± DELTA
ORACLE_P = 0.99
JITTER = 1e-11
SIZES = (500, 2000, 8000)


@dataclass
class Outcome:
    attack: str
    feedback: str
    accounts: list[str] = field(default_factory=list)
    entries: list[int] = field(default_factory=list)
    best: int | None = None  # the attack's entry the board shows best
    shown: float | None = None  # … its public score on the board
    private: float | None = None  # … that entry's private score
    truth: float | None = None  # … and its expected loss on fresh targets
    released: int = 0  # entries whose own public score their owner was shown
    probed: int = 0  # oracle rows probed
    memberships: int = 0  # … whose part (public or private) was read right
    labels: int = 0  # … whose label was read right (public rows)
    wrong: int = 0  # … read wrong

    @property
    def inflation(self) -> float | None:
        """private − shown: how far the board flatters the attack's best entry."""
        return None if self.shown is None else self.private - self.shown

    @property
    def inflation_truth(self) -> float | None:
        return None if self.shown is None else self.truth - self.shown


def random_chance(loss: str) -> float:
    """A random ±DELTA file's expected score, whatever the targets."""
    if loss == "01l":
        return 0.5
    return -(math.log(0.5 + DELTA) + math.log(0.5 - DELTA)) / 2


def random_file(rng: np.random.Generator, n: int) -> np.ndarray:
    return 0.5 + DELTA * rng.choice([-1.0, 1.0], size=n)


def _owned(arena: site.Arena, outcome: Outcome, name: str, *, early: bool):
    """A new account of the attack; ``early`` ones joined before the test phase."""
    arena.account(name, early=early)
    outcome.accounts.append(name)


def _upload(arena: site.Arena, outcome: Outcome, name: str, probs) -> site.Shown:
    entry = arena.upload(name, probs)
    outcome.entries.append(entry)
    shown = arena.shown(name, entry)
    outcome.released += shown.own
    return shown


def measure(arena: site.Arena, outcome: Outcome) -> Outcome:
    """The attack's best row on the anonymous board, its private score and truth."""
    names = {arena.username(name) for name in outcome.accounts}
    best = None
    for row in arena.board():
        value = site.board_value(row, arena.loss)
        mine = row.get("participant") in names and value is not None
        if mine and (best is None or value < best[0]):
            best = (value, row["submission"])
    if best is not None:
        outcome.shown, outcome.best = best
        outcome.private = arena.private_score(best[1])
        outcome.truth = arena.truth(best[1])
    return outcome


def boosting(arena: site.Arena, *, k: int, seed: int) -> Outcome:
    rng = np.random.default_rng([seed, 1])
    outcome = Outcome("boosting", arena.feedback)
    _owned(arena, outcome, "booster", early=True)
    chance, kept = random_chance(arena.loss), []
    for _ in range(k):
        probs = random_file(rng, arena.n_test)
        shown = _upload(arena, outcome, "booster", probs)
        if shown.own and shown.value < chance:
            kept.append(probs - 0.5)
    if kept:
        votes = np.sum(np.sign(kept), axis=0)
        ties = rng.choice([-1.0, 1.0], size=arena.n_test)
        final = 0.5 + DELTA * np.where(votes == 0, ties, np.sign(votes))
    else:
        final = random_file(rng, arena.n_test)
    _upload(arena, outcome, "booster", final)
    return measure(arena, outcome)


def random_pool(*, count: int, n: int, seed: int) -> list[np.ndarray]:
    """The random files many_accounts and one_account both upload (paired)."""
    rng = np.random.default_rng([seed, 2])
    return [random_file(rng, n) for _ in range(count)]


def many_accounts(arena: site.Arena, *, accounts: int, seed: int) -> Outcome:
    outcome = Outcome("many_accounts", arena.feedback)
    for index, probs in enumerate(random_pool(count=accounts, n=arena.n_test, seed=seed)):
        name = f"sybil{index}"
        _owned(arena, outcome, name, early=False)
        _upload(arena, outcome, name, probs)
    return measure(arena, outcome)


def one_account(arena: site.Arena, *, uploads: int, seed: int) -> Outcome:
    outcome = Outcome("one_account", arena.feedback)
    _owned(arena, outcome, "single", early=True)
    for probs in random_pool(count=uploads, n=arena.n_test, seed=seed):
        _upload(arena, outcome, "single", probs)
    return measure(arena, outcome)


def decode(shown: site.Shown, *, n_public: int) -> tuple[str, int] | None:
    """(part, label) that a shown score of the oracle file says, or None when it says
    nothing (no score of its own, or two readings round to the same shown value)."""
    if not shown.own or shown.value is None:
        return None
    base = math.log(2)
    readings = {
        ("private", 0): base,
        ("public", 1): base + (-math.log(ORACLE_P) - base) / n_public,
        ("public", -1): base + (-math.log(1 - ORACLE_P) - base) / n_public,
    }
    unit = shown.precision
    if unit:
        readings = {key: round(value / unit) * unit for key, value in readings.items()}
    tolerance = unit / 2 if unit else 1e-9
    near = [key for key, value in readings.items() if abs(value - shown.value) <= tolerance]
    if len(near) != 1:
        return None
    same = [key for key, value in readings.items() if abs(value - readings[near[0]]) < 1e-12]
    return near[0] if len(same) == 1 else None


def oracle(arena: site.Arena, *, probes: int, seed: int, fresh: bool) -> Outcome:
    """Whitehill's oracle, one row per upload, jittered so no two files share a value."""
    rng = np.random.default_rng([seed, 3, int(fresh)])  # two variants: two files
    outcome = Outcome("oracle_fresh" if fresh else "oracle", arena.feedback)
    rows = rng.choice(arena.n_test, size=probes, replace=False)
    n_public = int(arena.mask.sum())  # round(fraction × N): the rules give both
    targets = arena.data.targets["test"]
    if not fresh:
        _owned(arena, outcome, "oracle", early=True)
    for index, row in enumerate(rows):
        name = f"fresh{index}" if fresh else "oracle"
        if fresh:
            _owned(arena, outcome, name, early=False)
        probs = 0.5 + rng.uniform(-JITTER, JITTER, size=arena.n_test)
        probs[row] = ORACLE_P
        reading = decode(_upload(arena, outcome, name, probs), n_public=n_public)
        outcome.probed += 1
        if reading is None:
            continue
        part, label = reading
        public = bool(arena.mask[row])
        right_part = (part == "public") == public
        outcome.memberships += right_part
        right_label = right_part and public and label == targets[row]
        outcome.labels += right_label
        outcome.wrong += not (right_part and (right_label or not public))
    return measure(arena, outcome)


def fit_logistic(x: np.ndarray, y: np.ndarray, *, ridge: float = 1e-2) -> np.ndarray:
    """Weights (intercept last) of an L2-penalised logistic regression, Newton's method."""
    design = np.hstack([x, np.ones((x.shape[0], 1))])
    target = (y == 1).astype(float)
    weights = np.zeros(design.shape[1])
    for _ in range(25):
        p = 1 / (1 + np.exp(-(design @ weights)))
        gradient = design.T @ (p - target) + ridge * weights
        hessian = (design.T * (p * (1 - p))) @ design + ridge * np.eye(design.shape[1])
        step = np.linalg.solve(hessian, gradient)
        weights -= step
        if np.max(np.abs(step)) < 1e-8:
            break
    return weights


def honest_file(data: site.Data, *, participant: int, upload: int, uploads: int, seed: int):
    """Participant's model after ``upload`` improvements: more training rows (a
    participant-specific bootstrap of them) and more features."""
    rng = np.random.default_rng([seed, 4, participant, upload])
    x, y = data.inputs["train"], data.targets["train"]
    progress = upload / max(uploads - 1, 1)
    features = 2 + round((x.shape[1] - 2) * progress)
    rows = int(round(40 * (x.shape[0] / 40) ** progress))
    chosen = rng.choice(x.shape[0], size=rows, replace=True)
    weights = fit_logistic(x[chosen, :features], y[chosen])
    test = data.inputs["test"][:, :features]
    probs = 1 / (1 + np.exp(-(test @ weights[:-1] + weights[-1])))
    return np.clip(probs, 1e-4, 1 - 1e-4)


def honest(
    arena: site.Arena,
    *,
    participants: int,
    uploads: int,
    seed: int,
    rounds: range | None = None,
    outcome: Outcome | None = None,
) -> Outcome:
    """The control: each participant's uploads in turn, round-robin, as a board fills
    (``rounds``: only these of the ``uploads``, continuing ``outcome``)."""
    if outcome is None:
        outcome = Outcome("honest", arena.feedback)
        for j in range(participants):
            _owned(arena, outcome, f"honest{j}", early=True)
    for u in range(uploads) if rounds is None else rounds:
        for j in range(participants):
            probs = honest_file(arena.data, participant=j, upload=u, uploads=uploads, seed=seed)
            _upload(arena, outcome, f"honest{j}", probs)
    return measure(arena, outcome)


@dataclass(frozen=True)
class Plan:
    """What to run: sizes of each attack (0 = skip it)."""

    k: int = 200
    accounts: int = 40
    probes: int = 12
    participants: int = 10
    uploads: int = 8


def run_attacks(
    *, feedback: str, loss: str, n: int, seed: int, plan: Plan, tag: str = "", **options
) -> dict[str, tuple[site.Arena, Outcome]]:
    """Every attack of ``plan`` in a challenge of its own; {attack: (arena, outcome)}."""

    def arena(attack: str, ranking_loss: str = loss) -> site.Arena:
        slug = f"{tag}{feedback}-{ranking_loss}-{seed}-{attack}".replace("_", "-")
        return site.Arena.create(
            slug=slug, feedback=feedback, loss=ranking_loss, n_test=n, seed=seed, **options
        )

    found = {}

    def keep(attack: str, ranking_loss: str, run) -> None:
        where = arena(attack, ranking_loss)
        found[attack] = (where, run(where))

    if plan.k:
        keep("boosting", loss, lambda a: boosting(a, k=plan.k, seed=seed))
    if plan.accounts:
        keep("many_accounts", loss, lambda a: many_accounts(a, accounts=plan.accounts, seed=seed))
        keep("one_account", loss, lambda a: one_account(a, uploads=plan.accounts, seed=seed))
    if plan.probes:
        keep("oracle", "nlp", lambda a: oracle(a, probes=plan.probes, seed=seed, fresh=False))
        keep("oracle_fresh", "nlp", lambda a: oracle(a, probes=plan.probes, seed=seed, fresh=True))
    if plan.participants and plan.uploads:
        keep(
            "honest",
            loss,
            lambda a: honest(a, participants=plan.participants, uploads=plan.uploads, seed=seed),
        )
    return found


def _figure(value, digits: int = 4) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def table(outcomes: list[Outcome]) -> list[str]:
    lines = [
        "| attack | feedback | accounts | uploads | released | shown | private | truth "
        "| private − shown | truth − shown | memberships / labels / wrong of probed |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for o in outcomes:
        probed = f"{o.memberships} / {o.labels} / {o.wrong} of {o.probed}" if o.probed else "–"
        lines.append(
            f"| {o.attack} | {o.feedback} | {len(o.accounts)} | {len(o.entries)} | {o.released} "
            f"| {_figure(o.shown)} | {_figure(o.private)} | {_figure(o.truth)} "
            f"| {_figure(o.inflation)} | {_figure(o.inflation_truth)} | {probed} |"
        )
    return lines


def parse_population(text: str) -> tuple[int, int]:
    participants, _, uploads = text.partition("x")
    try:
        found = int(participants), int(uploads)
    except ValueError:
        found = (-1, -1)
    if min(found) < 0:
        raise argparse.ArgumentTypeError(f"expected PxU, e.g. 10x8, found {text!r}")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--feedback", default="exact", choices=site.FEEDBACKS)
    parser.add_argument("--loss", default="error", choices=sorted(site.LOSSES))
    parser.add_argument("--n", type=int, default=2000, help=f"test examples, e.g. {SIZES}")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--k", type=int, default=200, help="boosting's random files")
    parser.add_argument("--accounts", type=int, default=40)
    parser.add_argument("--probes", type=int, default=12, help="oracle uploads")
    parser.add_argument("--honest", type=parse_population, default=(10, 8), help="PxU")
    parser.add_argument(
        "--no-late-feedback",
        action="store_true",
        help="accounts that join during the test phase get no public feedback",
    )
    args = parser.parse_args(argv)
    if args.n < 10:
        parser.error("--n must be at least 10")
    plan = Plan(args.k, args.accounts, args.probes, *args.honest)
    options = {"late_joiners_feedback": False} if args.no_late_feedback else {}
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench-attacks-") as folder:
        site.setup(folder)
        if args.feedback not in site.available_feedbacks():
            parser.error(f"this checkout has no {args.feedback!r} feedback option")
        found = run_attacks(
            feedback=args.feedback,
            loss=site.LOSSES[args.loss],
            n=args.n,
            seed=args.seed,
            plan=plan,
            **options,
        )
    print(
        f"# bench/attacks.py: feedback {args.feedback}, ranking loss {site.LOSSES[args.loss]} "
        f"(oracles: nlp), N = {args.n:,} (public 0.5), seed {args.seed}"
        + (", late joiners get no feedback" if args.no_late_feedback else "")
    )
    print()
    print("\n".join(table([outcome for _, outcome in found.values()])))
    print(f"\n({time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
