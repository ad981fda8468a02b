"""Speed and memory of the scoring command line against two parsing floors.

Generates two files in MATLAB ``save -ascii`` layout (the challenge's own
format, ``%16.7e`` per value) and the matching targets, then measures, each
in a fresh process so that peak memory is the process's own:

- ``numpy split``: ``numpy.array(text.split(), float)`` on the file's text;
- ``pandas``: pandas' C ``read_csv(sep=r"\\s+")`` (the bench needs pandas;
  it is a test-only requirement);
- ``evaluate``: ``scoring.evaluate`` on the same bytes (parse, validate,
  every loss), timed inside the process;
- ``cli``: the whole ``python -m scoring evaluate PRED TARGETS`` process,
  interpreter start-up and imports included.

Ratios are against the pandas parse. Targets from the issue: evaluate/pandas
<= 1.0 and peak memory under 2.5x the file size.

Usage: python bench/scoring.py [--rows 20000] [--pairs 200] [--class-rows 1000000]
       [--repeat 3] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent

FLOORS = {
    "numpy split": (
        "import numpy as np, sys, time\n"
        "t = time.perf_counter()\n"
        "x = np.array(open(sys.argv[1]).read().split(), float)\n"
        "print(time.perf_counter() - t)\n"
    ),
    "pandas": (
        "import pandas as pd, sys, time\n"
        "t = time.perf_counter()\n"
        "df = pd.read_csv(sys.argv[1], sep=r'\\s+', header=None, engine='c')\n"
        "print(time.perf_counter() - t)\n"
    ),
    "evaluate": (
        "import sys, time\n"
        "import scoring\n"
        "t = time.perf_counter()\n"
        "r = scoring.evaluate(sys.argv[1], sys.argv[2])\n"
        "print(time.perf_counter() - t)\n"
    ),
}


def write_regression(path: Path, targets: Path, rows: int, pairs: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    centre = rng.normal(size=rows)
    scale = rng.uniform(0.5, 2.0, rows)
    # Levels spread over (0, 1) with jitter, far enough apart to survive 8 digits.
    levels = (np.arange(pairs) + 0.5 + rng.uniform(-0.3, 0.3, (rows, pairs))) / pairs
    # Quantiles of a logistic-ish distribution per row: strictly increasing.
    values = centre[:, None] + scale[:, None] * np.log(levels / (1 - levels))
    table = np.empty((rows, 1 + 2 * pairs))
    table[:, 0] = 0
    table[:, 1::2] = levels
    table[:, 2::2] = values
    np.savetxt(path, table, fmt="%16.7e", delimiter="")
    t = centre + scale * rng.logistic(size=rows)
    np.savetxt(targets, t, fmt="%16.7e")


def write_classification(path: Path, targets: Path, rows: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.01, 0.99, rows)
    t = np.where(rng.uniform(size=rows) < p, 1.0, -1.0)
    np.savetxt(path, p, fmt="%16.7e")
    np.savetxt(targets, t, fmt="%16.7e")


def measure(argv: list[str]) -> tuple[float, float, int]:
    """(seconds printed by the process or wall time, wall seconds, peak RSS bytes)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    out = proc.stdout.read().decode()
    err = proc.stderr.read().decode()
    proc.stdout.close()
    proc.stderr.close()
    if status != 0:
        raise SystemExit(f"{argv} failed:\n{err}")
    try:
        inner = float(out.strip().splitlines()[-1])
    except (ValueError, IndexError):
        inner = wall
    return inner, wall, usage.ru_maxrss * 1024


def run_case(name: str, pred: Path, targets: Path, repeat: int) -> dict:
    size = pred.stat().st_size
    rows = {}
    commands = {
        "numpy split": [sys.executable, "-c", FLOORS["numpy split"], str(pred)],
        "pandas": [sys.executable, "-c", FLOORS["pandas"], str(pred)],
        "evaluate": [sys.executable, "-c", FLOORS["evaluate"], str(pred), str(targets)],
        "cli": [sys.executable, "-m", "scoring", "evaluate", str(pred), str(targets)],
    }
    for label, argv in commands.items():
        best = None
        for _ in range(repeat):
            inner, wall, rss = measure(argv)
            if best is None or inner < best[0]:
                best = (inner, wall, rss)
        rows[label] = {"seconds": best[0], "wall": best[1], "peak_bytes": best[2]}
    # What the interpreter holds before reading a byte: python, numpy, scoring.
    _, _, base = measure([sys.executable, "-c", "import scoring"])
    floor = rows["pandas"]["seconds"]
    print(
        f"\n{name}: {pred.name}, {size / 1e6:.1f} MB (interpreter + imports: {base / 1e6:.0f} MB)"
    )
    print(f"{'':14}{'seconds':>9}{'/pandas':>9}{'peak MB':>9}{'peak/file':>10}{'growth/file':>12}")
    for label, r in rows.items():
        print(
            f"{label:14}{r['seconds']:9.3f}{r['seconds'] / floor:9.2f}"
            f"{r['peak_bytes'] / 1e6:9.1f}{r['peak_bytes'] / size:10.2f}"
            f"{(r['peak_bytes'] - base) / size:12.2f}"
        )
    return {"file_bytes": size, "import_bytes": base, **rows}


def _names(folder: Path) -> tuple[Path, Path, Path, Path]:
    return (
        folder / "outaouais_test_predict.txt",
        folder / "outaouais_test_targets.txt",
        folder / "big_test_predict.txt",
        folder / "big_test_targets.txt",
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--pairs", type=int, default=200)
    parser.add_argument("--class-rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--keep", type=Path, help="write the files here and keep them")
    parser.add_argument("--json", type=Path, help="also write the figures as JSON")
    parser.add_argument("--generate-only", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.generate_only:
        folder = args.generate_only
        write_regression(*_names(folder)[:2], args.rows, args.pairs, seed=2004)
        write_classification(*_names(folder)[2:], args.class_rows, seed=2006)
        return
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        # Generate in a child: a parent grown by the generator would pass its
        # resident size on to every measured child (ru_maxrss survives exec).
        subprocess.run(
            [
                sys.executable,
                __file__,
                "--generate-only",
                str(folder),
                "--rows",
                str(args.rows),
                "--pairs",
                str(args.pairs),
                "--class-rows",
                str(args.class_rows),
            ],
            check=True,
        )
        reg, reg_t, cls, cls_t = _names(folder)
        results = {
            "regression": run_case("regression (quantile rows)", reg, reg_t, args.repeat),
            "classification": run_case("classification", cls, cls_t, args.repeat),
        }
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
