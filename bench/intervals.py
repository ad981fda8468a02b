"""How soon a new entry's bootstrap intervals appear on a split of 20,000 examples with
1,000 listed entries (issue 13: within 10 s of its score), and what the kept terms cost.

Seeds a throwaway database (bench/leaderboard.py's: SQLite by default, PostgreSQL with
``--database-url``) with one regression dataset (nlpd, nmse and crps get intervals),
its stored target files, and N scored entries of Gaussian predictions by N/4
participants (so the best-per-participant view has N/4 entries to rank). Each entry's
per-example terms are computed by the scoring package from its predictions and stored
as the pipeline stores them (one compressed .npz in the private storage), with its
Score rows. Then, with the same code a Celery worker runs (interval_runs.run):

1. cold: the split's first run, every entry resampled (no resample file yet);
2. new entry: one more entry scored (its Score rows and terms written as the pipeline
   writes them), then the run it triggers; repeated ``--repeat`` times. The task is sent
   as the score commits, so this run is the time from the score to its intervals (plus
   the broker's hop, and a wait if a run of the same split is under way).

The floor is the least work a new entry's intervals can take in numpy: drawing the
split's B = 1000 resamples of n indices (counts) and one product with the entry's
three term columns. Ratios are run ÷ floor, both measured in the same process.

Usage: python bench/intervals.py [--database-url URL] [--entries 1000] [--examples 20000]
       [--repeat 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))

from leaderboard import setup_django, throwaway_database  # noqa: E402 - bench/leaderboard.py


def _files(n: int, rng: np.random.Generator) -> dict[str, bytes]:
    files = {}
    for split, rows in (("train", 2000), ("val", n), ("test", 100)):
        x = rng.normal(size=(rows, 2))
        t = x[:, 0] + rng.normal(0, 0.5, rows)
        files[f"waves_{split}_inputs.txt"] = "".join(f"{a:.6g} {b:.6g}\n" for a, b in x).encode()
        files[f"waves_{split}_targets.txt"] = "".join(f"{v!r}\n" for v in t.tolist()).encode()
    return files


def create_dataset(n: int, rng):
    from challenge_site.challenges.models import Challenge
    from datasets.models import Dataset
    from datasets.services import check_files, save_files

    start = datetime(2020, 1, 1, tzinfo=UTC)
    challenge = Challenge.objects.create(
        slug="bench",
        title="Bench",
        start=start,
        test_start=datetime(2020, 6, 1, tzinfo=UTC),
        deadline=datetime(2020, 6, 30, tzinfo=UTC),
        opened_at=start,
    )
    dataset = Dataset.objects.create(challenge=challenge, name="waves", task="regression")
    files = _files(n, rng)
    checked = check_files(
        name="waves", task="regression", uploads=[(k, v, k) for k, v in files.items()]
    )
    save_files(dataset, checked, now=start)
    return dataset


class Entries:
    """Scored entries written as services._write writes them (without the upload)."""

    def __init__(self, dataset, rng):
        import scoring
        from challenge_site.submissions.evaluation import read_dataset_targets
        from datasets.models import Split

        self.dataset, self.rng = dataset, rng
        self.targets = read_dataset_targets(dataset, splits={Split.VAL})[Split.VAL]
        self.scoring = scoring
        self.count = 0

    def add(self, users: list, *, now) -> int:
        from django.db import transaction

        from challenge_site.submissions import terms as stored_terms
        from challenge_site.submissions.evaluation import Outcome, SplitOutcome
        from challenge_site.submissions.models import Submission
        from challenge_site.submissions.services import _write
        from datasets.models import Split

        n = self.targets.size
        skill = self.rng.uniform(0.2, 1.0)
        mean = skill * self.targets + self.rng.normal(0, 0.6, n)
        sd = self.rng.uniform(0.5, 1.2)
        lines = "".join(f"1 {m!r} {sd * sd!r}\n" for m in mean.tolist()).encode()
        evaluation = self.scoring.evaluate(lines, self.targets, task="regression")
        self.count += 1
        user = users[self.count % len(users)]
        with transaction.atomic():
            submission = Submission.objects.create(
                user_id=user,
                dataset=self.dataset,
                method=f"Method {self.count}",
                created=now,
                queued_at=now,
                finished_at=now,
                phase="validation",
                status="running",
                splits=["val"],
            )
        outcome = Outcome(
            "scored",
            [
                SplitOutcome(
                    Split.VAL,
                    "waves_val_predict.txt",
                    n,
                    False,
                    dict(evaluation.scores),
                    {},
                    evaluation.terms(),
                )
            ],
        )
        stored = stored_terms.save_outcome(submission_id=submission.pk, outcome=outcome)
        with transaction.atomic():
            _write(submission, outcome, stored=stored)
        return submission.pk


def floor_seconds(n: int) -> float:
    """Counts of the B resamples and one product with three term columns."""
    from scoring import bootstrap

    terms = np.random.default_rng(0).random((n, 3))
    started = time.perf_counter()
    for _, counts in bootstrap.resample_counts(n, seed=1):
        counts @ terms
    return time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", default=None, help="postgres://… (default: SQLite)")
    parser.add_argument("--entries", type=int, default=1000)
    parser.add_argument("--examples", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    with (
        tempfile.TemporaryDirectory(prefix="bench-intervals-") as folder,
        throwaway_database(args.database_url) as vendor,
    ):
        setup_django(folder)
        run_bench(args, vendor, folder)
    return 0


def run_bench(args, vendor: str, folder: str) -> None:
    from django.contrib.auth.models import User
    from django.db import transaction

    from challenge_site.leaderboard import interval_runs
    from challenge_site.leaderboard.models import IntervalRun
    from challenge_site.submissions.models import Score, SplitResult

    rng = np.random.default_rng(2006)
    dataset = create_dataset(args.examples, rng)
    User.objects.bulk_create(User(username=f"p{i}") for i in range(max(1, args.entries // 4)))
    users = list(User.objects.values_list("pk", flat=True))
    entries = Entries(dataset, rng)
    now = dataset.challenge.start
    sent = []
    interval_runs.send = lambda *a, **k: sent.append(a)  # the bench runs each run itself
    seeded = time.perf_counter()
    for _ in range(args.entries):
        with transaction.atomic():
            entries.add(users, now=now)
    seeded = time.perf_counter() - seeded
    terms_bytes = [
        Path(folder, "private", name).stat().st_size
        for name in SplitResult.objects.values_list("terms", flat=True)
        if Path(folder, "private", name).exists()
    ]
    started = time.perf_counter()
    interval_runs.run(dataset_id=dataset.pk, split="val")
    cold = time.perf_counter() - started
    state = IntervalRun.objects.get(dataset=dataset, split="val")
    resampled_bytes = Path(folder, "private", state.resampled).stat().st_size

    warm = []
    for _ in range(args.repeat):
        with transaction.atomic():
            pk = entries.add(users, now=now)
        started = time.perf_counter()
        interval_runs.run(dataset_id=dataset.pk, split="val")
        warm.append(time.perf_counter() - started)
        assert Score.objects.filter(submission_id=pk, loss="crps", lower__isnull=False).exists()
    floors = [floor_seconds(args.examples) for _ in range(3)]
    floor = statistics.median(floors)
    listed = IntervalRun.objects.get(dataset=dataset, split="val").entries
    print(
        f"# bench/intervals.py on {vendor}: {args.examples:,} examples, {listed:,} listed entries"
    )
    print(f"(seeding {args.entries:,} entries took {seeded:.0f} s)")
    print()
    print("| run | seconds | ÷ floor |")
    print("|---|---|---|")
    print(f"| floor: one entry's resamples in numpy | {floor:.2f} | 1.0 |")
    print(f"| cold: every entry resampled | {cold:.2f} | {cold / floor:.1f} |")
    median = statistics.median(warm)
    print(
        f"| new entry: its run (median of {len(warm)}; {min(warm):.2f}–{max(warm):.2f}) "
        f"| {median:.2f} | {median / floor:.1f} |"
    )
    print()
    kb = statistics.median(terms_bytes) / 1000
    print(
        f"Terms file per entry and split: {kb:.0f} KB median (n = {args.examples:,}, three "
        f"float64 columns, compressed), i.e. {kb * 100_000 / 1e6:.1f} GB per 100,000 entries; "
        f"{kb / args.examples * 1000:.1f} KB per 1,000 examples per entry."
    )
    print(
        f"Resampled losses kept for the split: {resampled_bytes / 1e6:.1f} MB for {listed:,} "
        f"entries ({resampled_bytes / max(listed, 1) / 1000:.0f} KB per entry, whatever n)."
    )


if __name__ == "__main__":
    raise SystemExit(main())
