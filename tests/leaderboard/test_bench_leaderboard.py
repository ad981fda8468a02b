"""bench/leaderboard.py still runs end to end (issue 29, must-have 5), on tiny boards.

The bench is a script of its own (it sets Django up on a throwaway database and runs
migrations), so it runs here as a subprocess, on SQLite, with no broker or cache from
the environment. Its figures are not asserted, but what they are made of is: the plot
is drawn by the worker's task (not in the request), the first export request after a
change answers 202 and sends a build, and each file served afterwards is whole (its
X-Row-Count and sha256 headers agree with the body the bench read).
"""

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

from leaderboard_work import Outbox, Sent  # noqa: E402 - bench/leaderboard_work.py

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


def test_the_outbox_hands_out_each_sent_task_once_by_name():
    outbox = Outbox()
    outbox.sent = [
        Sent("leaderboard.draw_plot", (1, "val", "nlp", "01l"), {}),
        Sent("leaderboard.build_export", (7,), {}),
        Sent("leaderboard.draw_plot", (1, "val", "nlp", "01l"), {}),
        Sent("leaderboard.build_export", (8,), {}),
    ]
    assert outbox.take({"leaderboard.build_export"}) == [
        Sent("leaderboard.build_export", (7,), {}),
        Sent("leaderboard.build_export", (8,), {}),
    ]
    # A task sent twice before a worker took it is run once, as single flight makes it.
    assert outbox.take() == [Sent("leaderboard.draw_plot", (1, "val", "nlp", "01l"), {})]
    assert outbox.sent == []


def test_the_leaderboard_bench_runs_on_tiny_boards(tmp_path):
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in LOCAL_ONLY and not key.startswith(("AWS_", "S3_"))
    }
    env["TMPDIR"] = str(tmp_path)
    done = subprocess.run(
        [sys.executable, "bench/leaderboard.py", "--sizes", "4", "12", "--requests", "1"]
        + ["--changes", "1"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,  # minutes on a loaded 2-core machine
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout
    assert re.search(r"seeded 12 submissions \(\d+ s\); best-per-participant table", out)
    assert len(re.findall(r"^page +4 +12 +ratio$", out, flags=re.M)) == 1
    assert re.search(r"^page 1, default sort \(nlp\) +[\d.]+ / +[\d.]+ \(\d+\)", out, re.M)
    work = out.split("Off the request path")[1]

    def figures(label: str) -> list[str]:
        """The figure of each size under ``label``."""
        block = work.split(label + "\n")[1]
        return re.findall(r"^ +(?:4|12): (.*)$", block, flags=re.M)[:2]

    for text in figures("plot drawing task: s (peak RSS MiB, +growth)"):
        assert re.fullmatch(r"[\d.]+ s \(\d+, \+\d+\)", text), text  # drawn, and True
    for text in figures("plot view, first after the drawing: ms (status)"):
        assert text.endswith("(200)")
    for kind in ("CSV", "JSON"):
        for text in figures(f"{kind}: first request after a change: ms (status)"):
            assert text.endswith("(202)")
        for text in figures(f"{kind}: build task: s (peak RSS MiB, +growth)"):
            assert re.fullmatch(r"[\d.]+ s \(\d+, \+\d+\)", text), text
        for text in figures(f"{kind}: whole file served: s, MB, lines, X-Row-Count, sha256"):
            lines, rows = re.search(r"([\d,]+) lines, rows=(\d+), sha256 ok=True", text).groups()
            # CSV: a header line; JSON: the metadata line and the closing one.
            extra = 1 if kind == "CSV" else 2
            assert int(lines.replace(",", "")) == int(rows) + extra, text
    assert re.search(r"^ +12 submissions: (every page under 50 ms|50 ms or more)", out, re.M)
    assert not list(tmp_path.iterdir())  # the throwaway database and files are gone
