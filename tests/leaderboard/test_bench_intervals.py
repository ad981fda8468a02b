"""bench/intervals.py still runs end to end (issue 28, must-have 6), on a tiny split.

The bench is a script of its own (it sets Django up on a throwaway database and runs
migrations), so it runs here as a subprocess, on SQLite, with no broker or cache from
the environment. Its set-up checks that the bulk-seeded entries' scores and terms are
the pipeline's to the last bit, and each new entry's run must write its intervals: a
change that breaks either fails this test. The figures themselves are not asserted.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# The environment a CI job may set that would send the bench elsewhere than its own
# temporary SQLite file and folders.
LOCAL_ONLY = {
    "DATABASE_URL",
    "CELERY_BROKER_URL",
    "CACHE_URL",
    "MEDIA_ROOT",
    "PRIVATE_ROOT",
    "PRIVATE_STORAGE_OPTIONS",
}


def test_the_intervals_bench_runs_on_a_tiny_split(tmp_path):
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in LOCAL_ONLY and not key.startswith(("AWS_", "S3_"))
    }
    env["TMPDIR"] = str(tmp_path)
    done = subprocess.run(
        [sys.executable, "bench/intervals.py", "--entries", "8", "--examples", "200"]
        + ["--repeat", "2"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout
    # 8 seeded, 2 new, and the dataset's baseline.
    assert "# bench/intervals.py on sqlite: 200 examples, 11 listed entries" in out
    assert re.search(r"set-up: 8 entries seeded in [\d.]+ s", out)
    for row in ("| floor:", "| cold:", "| new entry: score committed", "| new entry: slowest"):
        assert re.search(re.escape(row) + r".*\| [\d.]+ \| [\d.]+ \|", out), row
    assert not list(tmp_path.iterdir())  # the throwaway database and files are gone
