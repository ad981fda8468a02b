"""Cost of hostile prediction files: peak memory and time of ``scoring.evaluate`` on each.

Each file is scored in a fresh process (peak RSS is that process's own; the files
are written in small pieces so that this parent stays small, as ru_maxrss survives
exec), against N regression targets given as an array, as the site's worker does:

- ``x-4M``: ``b"x\\n" * 4_000_000`` (the 10 KB zip of issue 10);
- ``x-40MB``: 20,000,000 such lines;
- ``digits``: four lines of 10 MB of digits each;
- ``5-numbers``: 4,000,000 lines of ``1 2 3 4 5`` (a wrong count on every line);
- ``long-lines``: 2,000 lines of 5,000 numbers (over the 1,001 of the longest legal line);
- ``1e300``: 4,000,000 lines of ``1 0 1e300`` (readable, out of range);
- ``distinct``: 4,000,000 lines each with a different unreadable token;
- ``sparse-bad``: 40 MB of valid rows with one unreadable line per MB (no block is clean).

Usage: python bench/hostile.py [--scoring DIR] [--targets N] [--only NAME ...]
(``--scoring DIR`` imports the ``scoring`` package found in DIR, e.g. an old copy.)
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
N = 4_000_000


def repeat(line: bytes, times: int):
    """Pieces of about 1 MB that make ``line * times``."""
    per = max(1, (1 << 20) // len(line))
    for start in range(0, times, per):
        yield line * min(per, times - start)


def distinct(times: int):
    for start in range(0, times, 100_000):
        yield b"".join(b"x%d\n" % k for k in range(start, min(times, start + 100_000)))


CASES = {
    "x-4M": lambda: repeat(b"x\n", N),
    "x-40MB": lambda: repeat(b"x\n", 20_000_000),
    "digits": lambda: repeat(b"1" * 10_000_000 + b"\n", 4),
    "5-numbers": lambda: repeat(b"1 2 3 4 5\n", N),
    "long-lines": lambda: repeat((" ".join(["1"] * 5000) + "\n").encode(), 2000),
    "1e300": lambda: repeat(b"1 0 1e300\n", N),
    "distinct": lambda: distinct(N),
    "sparse-bad": lambda: repeat(b"1 0 1\n" * 170_000 + b"x\n", 40),
}

SCORE = (
    "import sys, time\n"
    "import numpy as np\n"
    "import scoring\n"
    "t = np.linspace(-1, 1, int(sys.argv[2]))\n"
    "start = time.perf_counter()\n"
    "try:\n"
    "    r = scoring.evaluate(sys.argv[1], t, task='regression', predictions_path='p.txt')\n"
    "    lines = [f'scored {r.scores}']\n"
    "except scoring.ScoringError as err:\n"
    "    lines = err.lines\n"
    "print(time.perf_counter() - start, len(lines), repr(lines[-1][:70]))\n"
)


def measure(path: Path, scoring_dir: Path, n: int) -> str:
    env = dict(os.environ, PYTHONPATH=str(scoring_dir))
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-c", SCORE, str(path), str(n)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=scoring_dir,  # python -c puts the working folder first on sys.path
    )
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    out, err = proc.stdout.read().decode().strip(), proc.stderr.read().decode().strip()
    if status != 0 or err:
        return f"exit {status}: {err[-300:]}"
    inner, _, tail = out.partition(" ")
    return f"{usage.ru_maxrss / 1024:8.0f} MB {wall:7.2f} s wall {float(inner):7.2f} s in evaluate  {tail}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scoring", type=Path, default=ROOT)
    parser.add_argument("--targets", type=int, default=N, help=f"default {N}")
    parser.add_argument("--only", nargs="*", choices=list(CASES))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.only or CASES:
            path = Path(tmp) / f"{name}.txt"
            with path.open("wb") as out:
                for piece in CASES[name]():
                    out.write(piece)
            size = path.stat().st_size / 1e6
            result = measure(path, args.scoring, args.targets)
            print(f"{name:11}{size:7.1f} MB file: {result}", flush=True)
            path.unlink()


if __name__ == "__main__":
    main()
