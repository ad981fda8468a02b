"""bench/stack.py's board figures: the plot's redrawing and the whole-board exports at
each board size, through the real stack's web process and background worker.

For each size of ``--board-sizes`` (growing), in the stack's own database (this process's
Django points at it, Stack.setup_django): the board of bench/leaderboard_seed.py is
seeded up to that size (a challenge of its own, ``boardbench``, one classification
dataset with five losses; more than 50,000 new entries at once are seeded in SQL:
leaderboard_seed.seed_sql, which runs ANALYZE before its commit), then VACUUM
ANALYZE and the best-per-participant table (after_seeding). Then, as a visitor sees it
over HTTP (gunicorn, the background worker drawing and building):

- plot: a drawing of the current generation is waited for first (the seeding's own
  changes drawn, the plot polled until its ETag says so); then one new scored entry is
  listed the way scoring lists one (leaderboard_seed.change: its scores, the best rows,
  the dataset's generation, in one transaction, which sends the redraw to the worker on
  commit). Timed from that commit: the first view of the board page (and whether it
  says "Being redrawn") and of ``plot.svg``, each one request; and the time until
  ``plot.svg`` serves a drawing of the new generation (its ETag ends with the drawing's
  generation, plot_drawings/views.leaderboard_plot), polled every 0.2 s. The worker's
  own drawing seconds (BoardPlot.seconds) are read too.
- exports: the whole board (``sort=nlp``) as CSV, then as JSON: from the first request
  (202 with Retry-After and Location expected) to the file served (200), polled every
  0.5 s (a visitor following Retry-After would poll every 5 s); the file is downloaded
  whole, its sha256 compared with X-Content-SHA256 and its rows (CSV: lines after the
  header; JSON: the rows' lines and its "count") with X-Row-Count. The worker's own build
  seconds (BoardExport.seconds) are read too.

- pages: after the exports, each page of PAGES requested PAGE_REPEAT times in turn
  (the board untouched meanwhile): median and 95th percentile of the whole request as
  the client sees it, and its statuses (a 500 or any status but 200 is reported).
- the background worker's peak memory: the largest VmHWM (peak resident set) among its
  processes (/proc) after each export, an upper bound of the building process's peak
  (a prefork child keeps its high-water mark from earlier tasks).

The machine's load average (os.getloadavg) is recorded at each size's start and end.
"""

from __future__ import annotations

import hashlib
import os
import random
import re
import sys
import time
import urllib.error
import urllib.request
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from leaderboard_seed import after_seeding, change, seed, seed_sql  # noqa: E402

SLUG, DATASET = "boardbench", "catalysis"
BOARD = f"/challenges/{SLUG}/datasets/{DATASET}/leaderboard/"
PLOT = BOARD + "plot.svg"
EXPORTS = {fmt: BOARD.rstrip("/") + f".{fmt}?sort=nlp" for fmt in ("csv", "json")}
PLOT_POLL, EXPORT_POLL = 0.2, 0.5
PAGE_REPEAT = 21
# The pages a visitor opens on a large board (every one constant in the board's size).
PAGES = {
    "board page 1": BOARD,
    "board, sort=01l": BOARD + "?sort=01l",
    "best per participant": BOARD + "?view=best",
    "board page 20": BOARD + "?page=20",
    "API page 1": f"/api/v1/challenges/{SLUG}/datasets/{DATASET}/leaderboard/",
    "results page": f"/challenges/{SLUG}/results/",
    "plot.svg": PLOT,
    "dataset page": f"/challenges/{SLUG}/datasets/{DATASET}/",
    "challenge page": f"/challenges/{SLUG}/",
}
PLOT_TIMEOUT, EXPORT_TIMEOUT = 900.0, 3600.0
SQL_STEP = 50_000  # more new entries than this at once: seeded in SQL


def create_dataset():
    """leaderboard_seed.create_dataset's board under a slug of its own (the stack's
    scoring runs use ``bench``)."""
    from challenge_site.challenges.models import Challenge
    from datasets.models import Dataset

    challenge = Challenge.objects.create(
        slug=SLUG,
        title="Board bench",
        start=datetime(2020, 1, 1, tzinfo=UTC),
        test_start=datetime(2020, 6, 1, tzinfo=UTC),
        deadline=datetime(2020, 6, 30, tzinfo=UTC),
        results_published=True,
        opened_at=datetime(2020, 1, 1, tzinfo=UTC),
    )
    return Dataset.objects.create(
        challenge=challenge, name=DATASET, task="classification", log_base=10.0
    )


def get(base_url: str, path: str, *, body: bool = True, timeout: float = 120):
    """(status, headers, body or b"", ms) of one GET; an HTTP error's answer too."""
    started = time.perf_counter()
    try:
        response = urllib.request.urlopen(base_url + path, timeout=timeout)
    except urllib.error.HTTPError as error:
        response = error
    with response:
        content = response.read() if body else b""
        return response.status, response.headers, content, (time.perf_counter() - started) * 1000


def drawn_generation(headers) -> int | None:
    """The generation of the drawing served (the ETag's last part), or None."""
    match = re.search(r"-(\d+)\"?$", headers.get("ETag") or "")
    return int(match.group(1)) if match else None


def ensure_drawing(base_url: str, dataset) -> float:
    """Seconds until the plot serves a drawing of the dataset's current generation (the
    seeding's own changes drawn first, so that the timed drawing is the change's)."""
    from datasets.models import Dataset

    current = Dataset.objects.values_list("generation", flat=True).get(pk=dataset.pk)
    started = time.monotonic()
    while True:
        status, headers, _, _ = get(base_url, PLOT, body=False)
        if status == 200 and (drawn_generation(headers) or 0) >= current:
            return time.monotonic() - started
        if time.monotonic() - started > PLOT_TIMEOUT:
            raise TimeoutError("no drawing of the plot")
        time.sleep(PLOT_POLL)


def plot_figures(base_url: str, dataset, rng) -> dict:
    from challenge_site.leaderboard.models import BoardPlot

    before = ensure_drawing(base_url, dataset)
    warm = [get(base_url, BOARD)[3] for _ in range(2)][-1]  # before the change
    generation = change(dataset, number=int(time.time()), rng=rng)
    committed = time.monotonic()
    status, _, page, page_ms = get(base_url, BOARD)
    plot_status, plot_headers, _, plot_ms = get(base_url, PLOT)
    first_generation = drawn_generation(plot_headers)
    while True:
        status_now, headers, _, _ = get(base_url, PLOT, body=False)
        served = drawn_generation(headers) if status_now == 200 else None
        if served is not None and served >= generation:
            break
        if time.monotonic() - committed > PLOT_TIMEOUT:
            raise TimeoutError(f"plot of generation {generation} not served")
        time.sleep(PLOT_POLL)
    ready = time.monotonic() - committed
    row = BoardPlot.objects.filter(dataset=dataset).order_by("-drawn_at").first()
    return {
        "first_drawing_wait_s": before,
        "generation": generation,
        "page_before_change_ms": warm,
        "page_first_view_ms": page_ms,
        "page_status": status,
        "page_says_being_redrawn": b"Being redrawn" in page,
        "plot_first_view_ms": plot_ms,
        "plot_first_view_status": plot_status,
        "plot_first_view_generation": first_generation,
        "plot_ready_s": ready,
        "drawing_task_s": row.seconds if row else None,
        "drawing_entries": row.entries if row else None,
    }


def page_figures(base_url: str) -> dict:
    """{page: {median_ms, p95_ms, statuses}}: PAGE_REPEAT rounds over PAGES."""
    times = {name: [] for name in PAGES}
    statuses = {name: set() for name in PAGES}
    for _ in range(PAGE_REPEAT):
        for name, path in PAGES.items():
            status, _, _, ms = get(base_url, path)
            times[name].append(ms)
            statuses[name].add(status)
    out = {}
    for name, values in times.items():
        values.sort()
        out[name] = {
            "median_ms": values[len(values) // 2],
            "p95_ms": values[min(len(values) - 1, round(0.95 * (len(values) - 1)))],
            "statuses": sorted(statuses[name]),
        }
    return out


def group_peak_rss_mib(pgid: int) -> float | None:
    """The largest VmHWM among the processes of process group ``pgid`` (MiB)."""
    peak = None
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            if int(fields[2]) != pgid:  # (state, ppid, pgrp, ...)
                continue
            status = (entry / "status").read_text()
        except (OSError, IndexError, ValueError):
            continue  # gone meanwhile
        found = re.search(r"^VmHWM:\s+(\d+) kB", status, re.MULTILINE)
        if found:
            mib = int(found.group(1)) / 1024
            peak = mib if peak is None else max(peak, mib)
    return peak


def export_figures(base_url: str, fmt: str) -> dict:
    """First request to the whole file served, then the file downloaded and checked."""
    started = time.monotonic()
    status, headers, _, first_ms = get(base_url, EXPORTS[fmt], body=False)
    first = {
        "first_status": status,
        "first_ms": first_ms,
        "retry_after": headers.get("Retry-After"),
        "location": bool(headers.get("Location")),
    }
    while status != 200:
        if status not in (202, 503) or time.monotonic() - started > EXPORT_TIMEOUT:
            return {**first, "error": f"status {status} after {time.monotonic() - started:.0f} s"}
        time.sleep(EXPORT_POLL)
        status, headers, _, _ = get(base_url, EXPORTS[fmt], body=False)
    ready = time.monotonic() - started
    digest, size, lines, tail = hashlib.sha256(), 0, 0, b""
    began = time.perf_counter()
    with urllib.request.urlopen(base_url + EXPORTS[fmt], timeout=600) as response:
        headers = response.headers
        while chunk := response.read(1 << 20):
            digest.update(chunk)
            size += len(chunk)
            lines += chunk.count(b"\n")
            tail = (tail + chunk)[-200:]
    download = time.perf_counter() - began
    header_rows = int(headers.get("X-Row-Count", -1))
    if fmt == "csv":
        body_rows = lines - 1  # the header line
    else:  # one line per row between the head and the closing line (exports.json_lines)
        body_rows = lines - 2
        count = re.search(rb'"count": (\d+)\}\s*$', tail)
        if count is None or int(count.group(1)) != body_rows:
            body_rows = -1
    return {
        **first,
        "ready_s": ready,
        "download_s": download,
        "bytes": size,
        "rows": header_rows,
        "rows_ok": header_rows == body_rows,
        "sha256_ok": headers.get("X-Content-SHA256", "").lower() == digest.hexdigest(),
    }


def run_board(stack, sizes: list[int], *, seed_value: int = 2004) -> dict:
    """{size: figures} for each board size in turn (see the module's docstring)."""
    from challenge_site.leaderboard.models import BoardExport

    rng = random.Random(seed_value)
    dataset = create_dataset()
    figures, have = {}, 0
    for size in sizes:
        load_start = os.getloadavg()
        started = time.perf_counter()
        if have and size - have > SQL_STEP:
            seed_sql(dataset, first=have, last=size, seed=seed_value)
        else:
            seed(dataset, first=have, last=size, rng=rng)
        seeded = time.perf_counter() - started
        built = after_seeding()
        have = size
        dataset.refresh_from_db()
        print(f"board: seeded {size:,} entries ({seeded:.0f} s, best table {built:.1f} s)")
        plot = plot_figures(stack.base_url, dataset, rng)
        print(f"  plot: {plot}", flush=True)
        exports = {}
        for fmt in EXPORTS:
            exports[fmt] = export_figures(stack.base_url, fmt)
            row = BoardExport.objects.filter(
                dataset=dataset, format=fmt, built__isnull=False
            ).order_by("-built_at")
            exports[fmt]["build_task_s"] = row.values_list("seconds", flat=True).first()
            background = stack.processes.get(getattr(stack, "background_process", ""))
            exports[fmt]["worker_peak_rss_mib"] = (
                group_peak_rss_mib(background.pid) if background is not None else None
            )
            print(f"  {fmt}: {exports[fmt]}", flush=True)
        pages = page_figures(stack.base_url)
        print(f"  pages: {pages}", flush=True)
        figures[size] = {
            "seed_s": seeded,
            "best_table_s": built,
            "plot": plot,
            "exports": exports,
            "pages": pages,
            "load_start": load_start,
            "load_end": os.getloadavg(),
        }
    return figures


def report_board(figures: dict) -> None:
    print(
        "\nboard (through gunicorn and the background worker): plot first view after a "
        "change, the new drawing served, each export from the first request to the file"
    )
    print(
        f"{'entries':>10} {'page ms':>8} {'plot ms':>8} {'plot s':>7} {'draw s':>7} "
        f"{'CSV s':>7} {'JSON s':>7} {'rows':>10} {'sha256':>7} {'load 1m':>13}"
    )
    for size, row in figures.items():
        plot, csv, js = row["plot"], row["exports"]["csv"], row["exports"]["json"]
        ok = all(e.get("sha256_ok") and e.get("rows_ok") for e in (csv, js))
        draw = plot["drawing_task_s"]
        print(
            f"{size:>10,} {plot['page_first_view_ms']:>8.1f} {plot['plot_first_view_ms']:>8.1f} "
            f"{plot['plot_ready_s']:>7.2f} {draw if draw is not None else float('nan'):>7.2f} "
            f"{csv.get('ready_s', float('nan')):>7.2f} {js.get('ready_s', float('nan')):>7.2f} "
            f"{csv.get('rows', -1):>10,} {'ok' if ok else 'NO':>7} "
            f"{row['load_start'][0]:>6.2f}-{row['load_end'][0]:<6.2f}"
        )
        for fmt, export in row["exports"].items():
            if "error" in export:
                print(f"  {fmt}: {export['error']}")
        print(
            f"  first views: page {plot['page_status']} (before the change "
            f"{plot['page_before_change_ms']:.1f} ms) "
            f"(says 'Being redrawn': {plot['page_says_being_redrawn']}), plot "
            f"{plot['plot_first_view_status']} of generation "
            f"{plot['plot_first_view_generation']} (new: {plot['generation']}); exports' "
            f"first answers: {csv['first_status']}/{js['first_status']} (Retry-After "
            f"{csv['retry_after']}, Location {csv['location']}); build task s: CSV "
            f"{_s(csv.get('build_task_s'))}, JSON {_s(js.get('build_task_s'))}; background "
            f"worker's peak RSS after each: {_mib(csv.get('worker_peak_rss_mib'))}, "
            f"{_mib(js.get('worker_peak_rss_mib'))}; seeded in {row['seed_s']:.0f} s"
        )
    sizes = list(figures)
    print(f"\npages through gunicorn, median / p95 ms over {PAGE_REPEAT} requests each")
    print(f"{'page':<22}" + "".join(f"{size:>22,}" for size in sizes))
    for name in PAGES:
        cells = []
        for size in sizes:
            page = figures[size]["pages"][name]
            bad = [s for s in page["statuses"] if s != 200]
            mark = f" ({','.join(map(str, bad))}!)" if bad else ""
            cells.append(f"{page['median_ms']:.1f} / {page['p95_ms']:.1f}{mark}")
        print(f"{name:<22}" + "".join(f"{cell:>22}" for cell in cells))
    slow = [
        f"{name} at {size:,} ({figures[size]['pages'][name]['median_ms']:.1f} ms)"
        for size in sizes
        for name in PAGES
        if figures[size]["pages"][name]["median_ms"] >= 50
    ]
    print("median 50 ms or more: " + ("; ".join(slow) if slow else "none"))


def _mib(value) -> str:
    return "–" if value is None else f"{value:.0f} MiB"


def _s(seconds) -> str:
    return "–" if seconds is None else f"{seconds:.2f}"
