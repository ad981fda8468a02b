"""How soon a new entry's bootstrap intervals appear on a split of 20,000 examples with
1,000 listed entries (issue 13: within 10 s of its score; issue 28, must-have 6), and
what the kept terms cost.

Seeds a throwaway database (bench/leaderboard.py's throwaway_database: SQLite by
default; with ``--database-url`` PostgreSQL, in the database it names, created and
dropped by the run, or a new uniquely named one for ``…:5432/``) with one regression
dataset (nlpd, nmse and crps get intervals), its stored target files and baseline, and
N scored entries of Gaussian predictions by N/4 participants (so the best-per-participant
view has N/4 entries to rank).

The set-up writes the N entries in bulk, so that it costs less than the runs it
prepares: Submission, SplitResult and Score rows by bulk inserts, a hundred entries per
transaction; each entry's scores and per-example terms computed by the scoring package
from its predictive means and variances (the Gaussian rows' statistics; the first
entry checked to give the pipeline's numbers to the last bit) and its terms stored as
the pipeline stores them (terms.save: one compressed .npz in the private storage); then
the best-per-participant rows built as an upgrade builds them. Then, with the same code
a Celery worker runs (interval_runs.run):

1. cold: the split's first run, every entry resampled (no resample file yet);
2. new entry: one more entry scored by the pipeline's path (scoring.evaluate on its
   file, its Score rows and terms written by outcomes.write, which asks for the run
   as it commits), then that run; repeated ``--repeat`` times and timed from the score's
   commit to the intervals written (a worker adds the broker's hop, and a wait if a
   run of the same split is under way).

The floor is the least work a new entry's intervals can take in numpy: drawing the
split's B = 1000 resamples of n indices (counts) and one product with the entry's
three term columns. Ratios are run ÷ floor, both measured in the same process. The
set-up's seconds and the load average are printed beside the runs (the runs are
wall-clock times: on a machine loaded by other work they grow).

Usage: python bench/intervals.py [--database-url URL] [--entries 1000] [--examples 20000]
       [--repeat 5]
"""

from __future__ import annotations

import argparse
import os
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


PREDICTIONS = "waves_val_predict.txt"
BATCH = 100  # entries per bulk insert (and per transaction) while seeding


def _gaussian(targets: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, float]:
    """One entry's predictive means and variance: a skill in [0.2, 1] times the target,
    plus noise, and one standard deviation for every example."""
    skill = rng.uniform(0.2, 1.0)
    mean = skill * targets + rng.normal(0, 0.6, targets.size)
    sd = rng.uniform(0.5, 1.2)
    return mean, sd * sd


def _lines(mean: np.ndarray, variance: float) -> bytes:
    """The entry's prediction file (Gaussian rows ``1 m v``, every digit kept)."""
    return "".join(f"1 {m!r} {variance!r}\n" for m in mean.tolist()).encode()


class Entries:
    """Scored entries on the validation split, written as the pipeline writes them.

    :meth:`add` is one entry by the pipeline's own path (scoring.evaluate on its file,
    submissions.evaluation's split outcomes, terms.save_outcome, outcomes.write, which
    asks for the split's intervals as its transaction commits): the entry the bench
    times. :meth:`seed` writes many at once for the set-up: Submission, Score and
    SplitResult rows by bulk inserts and each entry's terms by terms.save (the pipeline's
    files), its scores and terms computed by the scoring package from the predictive
    means and variances directly (the Gaussian rows' statistics, as scoring.baseline
    builds them), without writing and parsing 20,000 lines; the first seeded entry is
    checked against the pipeline's path, so both give the same numbers.
    """

    def __init__(self, dataset, rng):
        from challenge_site.submissions.evaluation import read_dataset_targets
        from datasets.models import Split

        self.dataset, self.rng = dataset, rng
        targets = read_dataset_targets(dataset, splits={Split.VAL, Split.TRAIN})
        self.targets, self.train = targets[Split.VAL], targets[Split.TRAIN]
        self.options = dataset.scoring_options
        self.count = 0

    def _submission(self, users: list, *, now, status: str):
        from challenge_site.submissions.models import Submission

        self.count += 1
        return Submission(
            user_id=users[self.count % len(users)],
            dataset=self.dataset,
            method=f"Method {self.count}",
            created=now,
            queued_at=now,
            finished_at=now,
            phase="validation",
            status=status,
            splits=["val"],
        )

    def _evaluate(self, lines: bytes):
        """The pipeline's scoring of one file (submissions.evaluation._evaluate_archive)."""
        import scoring

        return scoring.evaluate(
            lines,
            self.targets,
            task=self.dataset.task,
            options=self.options,
            predictions_path=PREDICTIONS,
            train_targets=self.train,
        )

    def add(self, users: list, *, now) -> int:
        """One more entry, scored and written by the pipeline's path; its id."""
        import hashlib

        from django.db import transaction

        from challenge_site.submissions import terms as stored_terms
        from challenge_site.submissions.evaluation import Outcome, _with_parts
        from challenge_site.submissions.models import Status
        from challenge_site.submissions.outcomes import write
        from datasets.models import Split

        lines = _lines(*_gaussian(self.targets, self.rng))
        submission = self._submission(users, now=now, status="running")
        submission.save()
        outcome = Outcome(
            Status.SCORED,
            _with_parts(self.dataset, Split.VAL, PREDICTIONS, self._evaluate(lines)),
            fingerprint=hashlib.sha256(b"val:" + lines).hexdigest(),
        )
        stored = stored_terms.save_outcome(submission_id=submission.pk, outcome=outcome)
        with transaction.atomic():
            write(submission, outcome, stored=stored)
        return submission.pk

    def _scores_and_terms(self, mean: np.ndarray, variance: float):
        """The entry's scores and per-example terms by the scoring package, from the
        Gaussian rows' statistics (the context scoring.evaluate builds from the file)."""
        from scoring.distributions import gaussian_stats
        from scoring.losses import Context, compute_scores, compute_terms
        from scoring.regression_rows import GAUSSIAN, RegressionRows

        n = self.targets.size
        variances = np.full(n, variance)
        rows = RegressionRows(
            np.full(n, GAUSSIAN, dtype=np.int8),
            variances,
            gaussian_stats(mean, variances, self.targets),
        )
        context = Context(self.dataset.task, self.targets, self.options, self.train, rows=rows)
        return compute_scores(context), compute_terms(context)

    def check(self) -> None:
        """The bulk path gives the pipeline's scores and terms, to the last bit (on a
        copy of the generator: the seeded entries stay those of the same seed)."""
        import copy

        mean, variance = _gaussian(self.targets, copy.deepcopy(self.rng))
        scores, terms = self._scores_and_terms(mean, variance)
        evaluation = self._evaluate(_lines(mean, variance))
        if scores != evaluation.scores:
            raise AssertionError(f"bulk scores {scores} != pipeline's {evaluation.scores}")
        expected = evaluation.terms()
        if terms.keys() != expected.keys() or not all(
            np.array_equal(terms[key], expected[key]) for key in terms
        ):
            raise AssertionError("the bulk path's terms differ from the pipeline's")

    def seed(self, users: list, *, count: int, now, workers: int = 2) -> None:
        """``count`` scored entries by bulk inserts, ``BATCH`` per transaction; the terms
        files are compressed and written by ``workers`` threads (zlib lets go of the GIL)."""
        from concurrent.futures import ThreadPoolExecutor

        from django.db import transaction

        from challenge_site.submissions import terms as stored_terms
        from challenge_site.submissions.models import Score, SplitResult, Submission
        from datasets.models import Split

        def save(pair):
            return stored_terms.save(submission=pair[0], split=Split.VAL, terms=pair[1][1])

        self.check()
        spent = self.phases = dict.fromkeys(("scores and terms", "terms files", "rows"), 0.0)
        with ThreadPoolExecutor(max_workers=workers) as pool:
            for first in range(0, count, BATCH):
                size = min(BATCH, count - first)
                clock = time.perf_counter()
                computed = [
                    self._scores_and_terms(*_gaussian(self.targets, self.rng)) for _ in range(size)
                ]
                spent["scores and terms"] += time.perf_counter() - clock
                with transaction.atomic():
                    clock = time.perf_counter()
                    made = Submission.objects.bulk_create(
                        [self._submission(users, now=now, status="scored") for _ in range(size)]
                    )
                    spent["rows"] += time.perf_counter() - clock
                    clock = time.perf_counter()
                    names = list(pool.map(save, zip(made, computed, strict=True)))
                    spent["terms files"] += time.perf_counter() - clock
                    clock = time.perf_counter()
                    SplitResult.objects.bulk_create(
                        SplitResult(
                            submission=submission,
                            split=Split.VAL,
                            filename=PREDICTIONS,
                            rows=self.targets.size,
                            terms=name,
                        )
                        for submission, name in zip(made, names, strict=True)
                    )
                    Score.objects.bulk_create(
                        Score(
                            submission=submission,
                            dataset_id=self.dataset.pk,
                            split=Split.VAL,
                            loss=loss,
                            value=value,
                        )
                        for submission, (scores, _) in zip(made, computed, strict=True)
                        for loss, value in scores.items()
                    )
                    spent["rows"] += time.perf_counter() - clock


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
        throwaway_database(args.database_url, prefix="bench_intervals") as vendor,
    ):
        setup_django(folder)
        run_bench(args, vendor, folder)
    return 0


def _load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def seed(dataset, entries: Entries, *, count: int) -> list[int]:
    """The set-up: ``count`` entries by count/4 participants, their best-per-participant
    rows built as an upgrade's backfill builds them, the split's intervals asked for (as
    the pipeline's last entry would have: the run the bench then times cold) and, on
    PostgreSQL, ANALYZE (autovacuum would). Returns the participants' ids."""
    from django.contrib.auth.models import User
    from django.core.management import call_command
    from django.db import connection, transaction

    from challenge_site.leaderboard import interval_runs

    User.objects.bulk_create(User(username=f"p{i}") for i in range(max(1, count // 4)))
    users = list(User.objects.order_by("pk").values_list("pk", flat=True))
    entries.seed(users, count=count, now=dataset.challenge.start)
    call_command("rebuild_best_entries", verbosity=0)
    with transaction.atomic():
        interval_runs.request(dataset_id=dataset.pk, split="val")
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
    return users


def run_bench(args, vendor: str, folder: str) -> None:
    from challenge_site.leaderboard import interval_runs
    from challenge_site.leaderboard.models import IntervalRun
    from challenge_site.submissions.models import Score, SplitResult

    sent = []
    interval_runs.send = lambda *a, **k: sent.append(a)  # the bench runs each run itself
    loads = {"start": _load()}
    rng = np.random.default_rng(2006)
    started = time.perf_counter()
    dataset = create_dataset(args.examples, rng)
    entries = Entries(dataset, rng)
    users = seed(dataset, entries, count=args.entries)
    seeded = time.perf_counter() - started
    terms_bytes = [
        Path(folder, "private", name).stat().st_size
        for name in SplitResult.objects.values_list("terms", flat=True)
        if Path(folder, "private", name).exists()
    ]
    loads["measurement"] = _load()
    started = time.perf_counter()
    assert interval_runs.run(dataset_id=dataset.pk, split="val")
    cold = time.perf_counter() - started
    state = IntervalRun.objects.get(dataset=dataset, split="val")
    resampled_bytes = Path(folder, "private", state.resampled).stat().st_size

    warm = []
    for _ in range(args.repeat):
        pk = entries.add(users, now=dataset.challenge.start)
        # The score has committed (and asked for the run): from here to its intervals.
        started = time.perf_counter()
        assert interval_runs.run(dataset_id=dataset.pk, split="val")
        warm.append(time.perf_counter() - started)
        assert Score.objects.filter(submission_id=pk, loss="crps", lower__isnull=False).exists()
    floors = [floor_seconds(args.examples) for _ in range(3)]
    floor = statistics.median(floors)
    loads["end"] = _load()
    listed = IntervalRun.objects.get(dataset=dataset, split="val").entries
    phases = ", ".join(f"{label} {seconds:.1f} s" for label, seconds in entries.phases.items())
    print(
        f"# bench/intervals.py on {vendor}: {args.examples:,} examples, {listed:,} listed entries"
    )
    print(
        f"set-up: {args.entries:,} entries seeded in {seeded:.1f} s ({phases}; the rest: the "
        f"dataset, its baseline, the best-per-participant rows). "
        f"Load average (1, 5, 15 min) at the start {loads['start']}, "
        f"before the runs {loads['measurement']}, at the end {loads['end']} "
        f"({os.cpu_count()} CPUs)."
    )
    print()
    print("| run | seconds | ÷ floor |")
    print("|---|---|---|")
    print(f"| floor: one entry's resamples in numpy | {floor:.2f} | 1.0 |")
    print(f"| cold: every entry resampled | {cold:.2f} | {cold / floor:.1f} |")
    median = statistics.median(warm)
    print(
        f"| new entry: score committed to intervals written (median of {len(warm)}; "
        f"{min(warm):.2f}–{max(warm):.2f}) | {median:.2f} | {median / floor:.1f} |"
    )
    print(f"| new entry: slowest | {max(warm):.2f} | {max(warm) / floor:.1f} |")
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
