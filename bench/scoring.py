"""Speed and memory of ``scoring.evaluate`` on every layout participants write, against pandas.

Writes each layout the way a participant's tool writes it, with matching targets:

============== ===============================================================
matlab         MATLAB ``save -ascii``: ``%16.7e`` fields, no separator
savetxt        ``np.savetxt`` defaults: ``%.18e``, one space
repr           Python ``" ".join(map(repr, row))`` (shortest round trip, variable width)
g-tab          ``np.savetxt(fmt="%g", delimiter="\\t")``
mixed          Gaussian, 20-quantile and 100-sample rows mixed, written with ``repr``
classification 1,000,000 rows of ``%.17g`` probabilities, targets ``1`` / ``-1``
mc-g6          multiclass: 1,000,000 rows × 10 classes of softmax outputs, ``%.6g``
mc-savetxt     multiclass: 100,000 rows × 100 classes, ``np.savetxt`` defaults (``%.18e``)
mc-ensemble    multiclass: 200,000 rows of 5 members × 10 classes, ``%.4f`` (each member
               normalised before rounding: its sum stays within 0.01)
============== ===============================================================

The regression layouts hold 20,000 rows of 200 quantile pairs; the multiclass ones have
integer targets (``%d``) drawn from the predicted probabilities and are evaluated with
``task="multiclass"`` and ``ScoringOptions(classes=L)``. For each file, each measurement
in a fresh process (median of ``--repeat``):

- ``pandas``: the floor, pandas' C ``read_csv(sep=r"\\s+", header=None,
  names=range(widest line))``, timed inside its process (pandas is a test-only
  requirement). For the multiclass rows the floor is the parse of *both* files, the
  predictions and then the targets, timed in one process (the issue's "pandas' parse of
  the same two files"); the other rows keep the predictions' parse alone;
- ``evaluate``: ``scoring.evaluate`` on the same file and its targets (parse,
  validate, every loss), timed inside its process;
- the ratio: the median over the repeats of evaluate's time over the time of the pandas
  run just before it (paired, so that a drift in the machine's speed cancels);
- memory growth: the peak resident size of the evaluate process, read by GNU
  time (``/usr/bin/time -f %M``), less that of a process that only imports
  numpy and scoring. (A child's ``ru_maxrss`` from ``wait4`` starts at its
  parent's resident size at fork, so it would overstate small children.)

Targets from the issues: evaluate ÷ pandas ≤ 1.0 and memory growth ≤ 2.5× the
(predictions) file on every row, the multiclass rows included (issue 26).

Usage: python bench/scoring.py [--layouts matlab,savetxt,...,mc-g6,...] [--rows 20000]
       [--pairs 200] [--class-rows 1000000] [--mc-scale 1.0] [--repeat 3] [--keep DIR]
       [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
TIME = "/usr/bin/time"

PANDAS = (
    "import sys, time\n"
    "import pandas as pd\n"
    "t = time.perf_counter()\n"
    "df = pd.read_csv(sys.argv[1], sep=r'\\s+', header=None, names=range(int(sys.argv[2])),"
    " engine='c')\n"
    "print(time.perf_counter() - t)\n"
)
EVALUATE = (
    "import sys, time\n"
    "import scoring\n"
    "t = time.perf_counter()\n"
    "r = scoring.evaluate(sys.argv[1], sys.argv[2])\n"
    "print(time.perf_counter() - t)\n"
)
# The multiclass floor: both files parsed, as the evaluation reads both.
PANDAS_PAIR = (
    "import sys, time\n"
    "import pandas as pd\n"
    "t = time.perf_counter()\n"
    "df = pd.read_csv(sys.argv[1], sep=r'\\s+', header=None, names=range(int(sys.argv[2])),"
    " engine='c')\n"
    "ts = pd.read_csv(sys.argv[3], sep=r'\\s+', header=None, names=range(1), engine='c')\n"
    "print(time.perf_counter() - t)\n"
)
EVALUATE_MULTICLASS = (
    "import sys, time\n"
    "import scoring\n"
    "options = scoring.ScoringOptions(classes=int(sys.argv[3]))\n"
    "t = time.perf_counter()\n"
    "r = scoring.evaluate(sys.argv[1], sys.argv[2], task='multiclass', options=options)\n"
    "print(time.perf_counter() - t)\n"
)
# layout → (rows, classes L, members M, number format)
MULTICLASS = {
    "mc-g6": (1_000_000, 10, 1, "%.6g"),
    "mc-savetxt": (100_000, 100, 1, "%.18e"),
    "mc-ensemble": (200_000, 10, 5, "%.4f"),
}
IMPORTS = "import numpy, scoring\nprint(0.0)\n"


def _quantile_table(rng, rows: int, pairs: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows of '0 a1 q1 ... aN qN' (levels jittered, values strictly increasing) and targets."""
    centre = rng.normal(size=rows)
    scale = rng.uniform(0.5, 2.0, rows)
    levels = (np.arange(pairs) + 0.5 + rng.uniform(-0.3, 0.3, (rows, pairs))) / pairs
    values = centre[:, None] + scale[:, None] * np.log(levels / (1 - levels))
    table = np.empty((rows, 1 + 2 * pairs))
    table[:, 0] = 0
    table[:, 1::2] = levels
    table[:, 2::2] = values
    return table, centre + scale * rng.logistic(size=rows)


def _write_repr(path: Path, rows) -> None:
    """As a Python participant writes: the flag as an integer, then repr of each value."""
    with open(path, "w") as f:
        for flag, row in rows:
            head = "" if flag is None else f"{flag} "
            f.write(head + " ".join(map(repr, row)) + "\n")


def _softmax(logits: np.ndarray) -> np.ndarray:
    e = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _write_multiclass(rng, layout: str, pred: Path, targets: Path, scale: float) -> int:
    """Softmax outputs of a classifier of middling accuracy (members: the same logits with
    their own noise), targets drawn from the members' mean; returns the numbers per line."""
    rows, classes, members, fmt = MULTICLASS[layout]
    rows = max(1, round(rows * scale))
    with open(pred, "w") as pf, open(targets, "w") as tf:
        for start in range(0, rows, 50_000):  # in chunks: the generator's memory stays small
            size = min(50_000, rows - start)
            logits = rng.normal(0, 2.0, (size, 1, classes))
            noisy = logits + rng.normal(0, 0.7, (size, members, classes))
            p = _softmax(noisy)  # (size, M, L), each member normalised before rounding
            mean = p.mean(axis=1)
            u = rng.uniform(size=(size, 1))
            y = np.minimum((mean.cumsum(axis=1) < u).sum(axis=1), classes - 1)
            np.savetxt(pf, p.reshape(size, members * classes), fmt=fmt)
            np.savetxt(tf, y, fmt="%d")
    return members * classes


def write_layout(layout: str, pred: Path, targets: Path, args) -> int:
    """Write one layout's prediction and target files; return the widest line's numbers."""
    rng = np.random.default_rng(2004)
    if layout in MULTICLASS:
        return _write_multiclass(rng, layout, pred, targets, args.mc_scale)
    if layout == "classification":
        p = rng.uniform(0.01, 0.99, args.class_rows)
        t = np.where(rng.uniform(size=p.size) < p, 1, -1)
        np.savetxt(pred, p, fmt="%.17g")
        np.savetxt(targets, t, fmt="%d")
        return 1
    if layout == "mixed":
        return _write_mixed(rng, pred, targets, args.rows)
    table, t = _quantile_table(rng, args.rows, args.pairs)
    if layout == "matlab":
        np.savetxt(pred, table, fmt="%16.7e", delimiter="")
        np.savetxt(targets, t, fmt="%16.7e")
    elif layout == "savetxt":
        np.savetxt(pred, table)
        np.savetxt(targets, t)
    elif layout == "repr":
        _write_repr(pred, ((0, row[1:].tolist()) for row in table))
        _write_repr(targets, ((None, [x]) for x in t.tolist()))
    elif layout == "g-tab":
        np.savetxt(pred, table, fmt="%g", delimiter="\t")
        np.savetxt(targets, t, fmt="%g")
    else:
        raise SystemExit(f"unknown layout {layout!r}")
    return table.shape[1]


def _write_mixed(rng, pred: Path, targets: Path, rows: int) -> int:
    kind = rng.integers(0, 3, rows)
    quantiles, t = _quantile_table(rng, rows, 20)
    mean, sd = rng.normal(size=rows), rng.uniform(0.5, 2.0, rows)
    samples = mean[:, None] + sd[:, None] * rng.normal(size=(rows, 100))
    lines = []
    for i in range(rows):
        if kind[i] == 0:
            lines.append((0, quantiles[i, 1:].tolist()))
        elif kind[i] == 1:
            lines.append((1, [float(mean[i]), float(sd[i] ** 2)]))
        else:
            lines.append((2, samples[i].tolist()))
    _write_repr(pred, lines)
    _write_repr(targets, ((None, [x]) for x in t.tolist()))
    return 101


def measure(code: str, *argv: str) -> tuple[float, int]:
    """(seconds the process printed, its peak resident bytes by GNU time)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run(
        [TIME, "-f", "%M", sys.executable, "-c", code, *argv],
        capture_output=True,
        text=True,
        env=env,
    )
    if proc.returncode != 0:
        raise SystemExit(f"{argv} failed:\n{proc.stderr}")
    kilobytes = int(proc.stderr.strip().splitlines()[-1])
    return float(proc.stdout.strip().splitlines()[-1]), kilobytes * 1024


def run_layout(layout: str, folder: Path, args) -> dict:
    pred, targets = folder / f"{layout}_predict.txt", folder / f"{layout}_targets.txt"
    # Generate in a child: the parent's size would not matter to GNU time, but its
    # time would: keep the bench's own process small and quick.
    width = int(
        subprocess.run(
            [sys.executable, __file__, "--generate-only", layout, str(folder), *_sizes(args)],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    )
    size = pred.stat().st_size
    if layout in MULTICLASS:
        classes = str(MULTICLASS[layout][1])
        floor = (PANDAS_PAIR, str(pred), str(width), str(targets))
        evaluation = (EVALUATE_MULTICLASS, str(pred), str(targets), classes)
    else:
        floor = (PANDAS, str(pred), str(width))
        evaluation = (EVALUATE, str(pred), str(targets))
    runs = {"pandas": [], "evaluate": [], "imports": []}
    for _ in range(args.repeat):
        runs["pandas"].append(measure(*floor))
        runs["evaluate"].append(measure(*evaluation))
        runs["imports"].append(measure(IMPORTS))
    pandas_s = statistics.median(s for s, _ in runs["pandas"])
    evaluate_s = statistics.median(s for s, _ in runs["evaluate"])
    # Each evaluate run against the pandas run just before it: on a machine whose speed
    # drifts (shared cores), paired ratios drift less than the times themselves.
    paired = [e / p for (e, _), (p, _) in zip(runs["evaluate"], runs["pandas"], strict=True)]
    base = statistics.median(m for _, m in runs["imports"])
    peak = statistics.median(m for _, m in runs["evaluate"])
    row = {
        "file_bytes": size,
        "pandas_seconds": pandas_s,
        "evaluate_seconds": evaluate_s,
        "ratio": statistics.median(paired),
        "paired_ratios": paired,
        "evaluate_peak_bytes": peak,
        "imports_peak_bytes": base,
        "growth_per_file_byte": (peak - base) / size,
        "all_runs": runs,
    }
    if not args.keep:
        pred.unlink()
        targets.unlink()
    return row


def _sizes(args) -> list[str]:
    return [
        "--rows",
        str(args.rows),
        "--pairs",
        str(args.pairs),
        "--class-rows",
        str(args.class_rows),
        "--mc-scale",
        str(args.mc_scale),
    ]


LAYOUTS = ["matlab", "savetxt", "repr", "g-tab", "mixed", "classification", *MULTICLASS]


def main() -> None:
    if not os.path.exists(TIME):
        raise SystemExit(f"{TIME} (GNU time) is needed for peak memory: apt-get install time")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layouts", default=",".join(LAYOUTS))
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--pairs", type=int, default=200)
    parser.add_argument("--class-rows", type=int, default=1_000_000)
    parser.add_argument(
        "--mc-scale", type=float, default=1.0, help="multiclass rows × this (a quick look)"
    )
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--keep", type=Path, help="write the files here and keep them")
    parser.add_argument("--json", type=Path, help="also write the figures as JSON")
    parser.add_argument("--generate-only", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.generate_only:
        layout, folder = args.generate_only
        pred, targets = (
            Path(folder) / f"{layout}_predict.txt",
            Path(folder) / f"{layout}_targets.txt",
        )
        print(write_layout(layout, pred, targets, args))
        return
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        print(
            f"{'layout':16}{'MB':>8}{'pandas s':>10}{'evaluate s':>12}{'÷ pandas':>10}{'growth ÷ file':>15}"
        )
        for layout in args.layouts.split(","):
            row = run_layout(layout, folder, args)
            results[layout] = row
            print(
                f"{layout:16}{row['file_bytes'] / 1e6:8.1f}{row['pandas_seconds']:10.3f}"
                f"{row['evaluate_seconds']:12.3f}{row['ratio']:10.2f}"
                f"{row['growth_per_file_byte']:15.2f}",
                flush=True,
            )
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
