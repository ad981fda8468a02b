"""The leaderboard bench's off-request work: the plot's drawing and the whole-board
exports, which workers do (issue 29), timed apart from the pages.

The site sends its tasks by name (``challenge_site.celery.app.signature(NAME, …)``).
:class:`Outbox` stands in for the broker: a sent task is kept, not run, so a request is
timed doing only what a web process does, as with a broker and workers; the bench then
plays the worker. The tasks whose cost grows with the board (the plot's drawing, an
export's build) run in a fresh child process (:func:`run_in_child`) that reports the
task's seconds and the process's peak memory (``ru_maxrss``), as a worker's would be;
any other task runs here (:meth:`Outbox.drain`).

Run as a script, this module is that child: ``python bench/leaderboard_work.py NAME
ARGS_JSON KWARGS_JSON`` with the parent's environment (its database, folders, settings).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import resource
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The tasks timed in a child process (the fixed names of issue 29's brief).
DRAW_TASK = "leaderboard.draw_plot"
EXPORT_TASK = "leaderboard.build_export"
WORKER_TASKS = (DRAW_TASK, EXPORT_TASK)


@dataclass
class Sent:
    name: str
    args: tuple
    kwargs: dict


class _Signature:
    def __init__(self, outbox: Outbox, name: str, args, kwargs):
        self.sent = Sent(name, tuple(args or ()), dict(kwargs or {}))
        self.outbox = outbox

    def apply_async(self, *_, **__):
        self.outbox.sent.append(self.sent)

    def delay(self, *args, **kwargs):
        self.sent = Sent(self.sent.name, args, kwargs)
        self.apply_async()


@dataclass
class Outbox:
    """The tasks sent since the last :meth:`take`, in order."""

    sent: list[Sent] = field(default_factory=list)

    def install(self) -> Outbox:
        """Replace the Celery app's ``signature`` (the site's one way to send a task)."""
        from challenge_site.celery import app

        def signature(name, args=None, kwargs=None, **_):
            return _Signature(self, name, args, kwargs)

        app.signature = signature
        return self

    def take(self, names=None) -> list[Sent]:
        """The sent tasks (of ``names``, or all), each once, removed from the outbox."""
        taken, kept, seen = [], [], set()
        for sent in self.sent:
            if names is not None and sent.name not in names:
                kept.append(sent)
                continue
            key = (sent.name, json.dumps([sent.args, sent.kwargs], sort_keys=True, default=str))
            if key not in seen:
                seen.add(key)
                taken.append(sent)
        self.sent = kept
        return taken

    def drain(self, *, rounds: int = 10) -> list[dict]:
        """Run every sent task (and those they send) as a worker would; the tasks of
        WORKER_TASKS in child processes. Returns the child processes' reports."""
        from challenge_site.celery import app

        reports = []
        for _ in range(rounds):
            pending = self.take()
            if not pending:
                return reports
            for sent in pending:
                if sent.name in WORKER_TASKS:
                    reports.append(run_in_child(sent, outbox=self))
                else:
                    app.tasks[sent.name](*sent.args, **sent.kwargs)
        raise RuntimeError(f"tasks still sent after {rounds} rounds: {self.sent[:5]}")


def run_in_child(sent: Sent, *, outbox: Outbox | None = None) -> dict:
    """The task in a fresh Python process with this one's environment: {"task", "args",
    "result", "seconds", "rss_start_mib", "rss_peak_mib"} (or {"error"}: the child's last
    line of stderr); the tasks it sent go to ``outbox``. The parent's connection is closed first (SQLite: no lock held)."""
    from django.db import connections

    connections.close_all()
    done = subprocess.run(
        [sys.executable, __file__, sent.name, json.dumps(sent.args), json.dumps(sent.kwargs)],
        cwd=ROOT,
        env=os.environ.copy(),
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:  # reported, not raised: a long run keeps its other figures
        print(f"{sent.name}{sent.args} failed:\n{done.stderr[-3000:]}", file=sys.stderr)
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return {"task": sent.name, "args": list(sent.args), "error": last[:200]}
    report = json.loads(done.stdout.strip().splitlines()[-1])
    if report["result"] is False:  # the task logged why (its wrapper returns False)
        errors = [line for line in done.stderr.splitlines() if "Error" in line]
        if errors:
            report["error"] = errors[-1][:200]
    if outbox is not None:
        outbox.sent += [Sent(name, tuple(args), kwargs) for name, args, kwargs in report["sent"]]
    return report


def _child(name: str, args: list, kwargs: dict) -> dict:
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from challenge_site.celery import app

    app.loader.import_default_modules()  # the tasks' modules (and matplotlib) loaded first
    task = app.tasks[name]
    outbox = Outbox().install()
    start = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    result = task(*args, **kwargs)
    seconds = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {
        "task": name,
        "args": args,
        "result": result if isinstance(result, bool | int | float | str | None) else repr(result),
        "seconds": seconds,
        "rss_start_mib": start / 1024,  # Linux: KiB
        "rss_peak_mib": peak / 1024,
        "sent": [[s.name, list(s.args), s.kwargs] for s in outbox.sent],
    }


def timed_get(client, url: str) -> tuple[float, object]:
    """(ms, response) of one request; a streamed body is read to its end."""
    started = time.perf_counter()
    response = client.get(url)
    if response.streaming:
        for _ in response.streaming_content:
            pass
        response.close()
    return (time.perf_counter() - started) * 1000, response


@dataclass(frozen=True)
class Download:
    """A whole export as served: its status, bytes, lines, and whether its row count and
    sha256 headers agree with the body."""

    status: int
    ms: float
    size: int
    lines: int
    rows_header: str | None
    digest_ok: bool | None  # None: no digest header


def download(client, url: str) -> Download:
    """The whole body, in constant memory (hashed and counted as it comes)."""
    started = time.perf_counter()
    response = client.get(url)
    digest, size, lines = hashlib.sha256(), 0, 0
    chunks = response.streaming_content if response.streaming else [response.content]
    for chunk in chunks:
        digest.update(chunk)
        size += len(chunk)
        lines += chunk.count(b"\n")
    if response.streaming:
        response.close()
    ms = (time.perf_counter() - started) * 1000
    digest_ok = None
    if response.has_header("Repr-Digest"):
        wanted = base64.b64encode(digest.digest()).decode()
        digest_ok = f"sha-256=:{wanted}:" in response["Repr-Digest"]
    elif response.has_header("X-Content-SHA256"):
        digest_ok = response["X-Content-SHA256"].strip().lower() == digest.hexdigest()
    return Download(response.status_code, ms, size, lines, response.get("X-Row-Count"), digest_ok)


if __name__ == "__main__":
    name, args, kwargs = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3])
    print(json.dumps(_child(name, args, kwargs)))
