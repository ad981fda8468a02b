"""Leaderboard render time with 100, 100,000 and 1,000,000 submissions stored, and the
work done off the request path (the plot's drawing, the whole-board exports).

Seeds a throwaway database and requests pages through Django's test Client with the
production settings (DJANGO_DEBUG=0: cached templates, no query log), so each timing
is a whole request on the server: URL routing, middleware, the queries and the
template (no network). Prints median and 95th percentile per page, the number of
queries, the ratio of the largest leaderboard to the smallest, and every page at 50 ms
or more.

- SQLite (default): a fresh file in a temporary folder, deleted afterwards. No
  ANALYZE, as on a site nobody tunes.
- PostgreSQL: ``--database-url postgres://USER@HOST:PORT/NAME`` uses the database NAME,
  created if it does not exist (and then dropped at the end, also after a failure;
  PostgreSQL 13 or later: DROP DATABASE … WITH (FORCE)), or used and kept if it exists
  and is empty; with no NAME (or ``postgres``, the maintenance database) a new
  ``bench_leaderboard_PID_RANDOM``, dropped at the end. A run drops no database it did
  not create (see leaderboard_seed.throwaway_database). ANALYZE after seeding.

One challenge with results published, one classification dataset (five losses, the
widest pivot) and its baseline. N submissions by max(10, N/100) participants: 95 %
scored, with validation and test scores for every loss (values rounded to 3 decimals,
so there are ties; 2 % of the files point-only, 1 % with an infinite nlp), and 5 %
invalid (no scores; never listed). The board is seeded to each size in turn in the same
database and measured there. On PostgreSQL a step of more than 50,000 is seeded in SQL
(INSERT … SELECT over generate_series, with setseed: minutes for a million), then VACUUM
ANALYZE, then the best-per-participant table is built (manage.py rebuild_best_entries,
timed); the seeding time is printed.

Off the request path (leaderboard_work.py): tasks the site sends are kept, not run, as a
broker would keep them for a worker. At each size, a few new entries are scored (each a
change of the board) and the first views after each are timed (the plot, the board
page); then the plot's drawing task and each export's build task run as a worker would,
in a child process that reports the task's seconds and its peak memory (ru_maxrss);
then the first plot view after the drawing and the whole export as served (its row
count and sha256 headers checked against the body) are timed. Besides the fixed pages,
it measures a deep keyset page (the cursor of the row in the middle of the board, and
of the best-per-participant board) and the exports' first bytes.

Usage: python bench/leaderboard.py [--database-url URL] [--sizes 100 100000 1000000]
       [--small 100] [--large 100000] [--requests 200] [--changes 5] [--exports csv json]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from leaderboard_seed import (  # noqa: E402 - bench/leaderboard_seed.py
    after_seeding,
    change,
    create_dataset,
    seed,
    seed_sql,
    setup_django,
    throwaway_database,
)
from leaderboard_work import (  # noqa: E402 - bench/leaderboard_work.py
    DRAW_TASK,
    EXPORT_TASK,
    Outbox,
    download,
    run_in_child,
    timed_get,
)

__all__ = ["main", "setup_django", "throwaway_database"]  # bench/intervals.py uses both

BOARD = "/challenges/bench/datasets/catalysis/leaderboard/"
CHALLENGE = "/challenges/bench/"
EXPORTS = {
    "csv": BOARD.rstrip("/") + ".csv?sort=nlp",
    "json": BOARD.rstrip("/") + ".json?sort=nlp",
}
# label: (URL, entries the page needs to exist)
PAGES = {
    "page 1, default sort (nlp)": (BOARD, 1),
    "page 1, sort=01l (point-only files included)": (BOARD + "?sort=01l", 1),
    "page 1, sort=lift": (BOARD + "?sort=lift", 1),
    "page 20 (rows 951-1000), nlp": (BOARD + "?page=20", 1000),
    "best per participant, nlp": (BOARD + "?view=best", 1),
    "API page 1, sort=nlp": ("/api/v1" + BOARD + "?sort=nlp", 1),
    "plot (latest drawing)": (BOARD + "plot.svg", 1),
    "CSV export (ready file), first bytes": (EXPORTS["csv"], 1),
    "JSON export (ready file), first bytes": (EXPORTS["json"], 1),
    "results page": (CHALLENGE + "results/", 1),
    "statistics page": (CHALLENGE + "statistics/", 1),
    **{
        f"statistics plot {kind}": (CHALLENGE + f"statistics/{kind}.svg", 1)
        for kind in ("daily", "datasets", "outcomes", "turnaround")
    },
}
# Filled in once the board is seeded: the cursor of the row in the middle.
DEEP = ("deep keyset page (middle row), nlp", "deep keyset page, best per participant")
STREAMED = {"CSV export (ready file), first bytes", "JSON export (ready file), first bytes"}
TARGET_MS = 50
# At most this long on one page's timed requests (but at least 5 of them).
PAGE_SECONDS = 30


def routed(url: str) -> bool:
    """Whether the site has the URL's route (the JSON export is new with issue 29)."""
    from django.urls import Resolver404, resolve

    try:
        resolve(url.split("?")[0])
    except Resolver404:
        return False
    return True


def deep_urls(dataset) -> dict[str, tuple[str, int]]:
    """The keyset links to the rows in the middle of the board and of the best board
    (read here with an OFFSET, once: the pages themselves never use one)."""
    import scoring
    from challenge_site.leaderboard import queries, services

    urls = {}
    for label, best in zip(DEEP, (False, True), strict=True):
        board = queries.Board(dataset, "val", scoring.get_loss(dataset.task, "nlp"), best)
        ids = queries.ranking(board, paged=True)
        count = ids.count()
        position = max(1, count // 2)
        pk = ids[position - 1]
        [entry] = queries.pivot(board, [pk])
        cursor = services.Cursor(False, position, queries.Key.of(board, entry))
        query = "?view=best&" if best else "?"
        urls[label] = (BOARD + query + "after=" + cursor.token(), 1)
    return urls


def _first_bytes(response) -> None:
    """An export's first two chunks (its header and first rows), then the rest left."""
    if response.streaming:
        for number, _ in enumerate(response.streaming_content):
            if number == 1:
                break
        response.close()


def warm_up(get) -> set[int]:
    """Five requests (one for a page slower than a second): their statuses."""
    statuses = set()
    for _ in range(5):
        started = time.perf_counter()
        statuses.add(get().status_code)
        if time.perf_counter() - started > 1:
            break
    return statuses


def measure(
    requests: int, *, entries: int, extra: dict | None = None, outbox: Outbox | None = None
) -> dict:
    """{page: (median ms, p95 ms, queries)} over ``requests`` requests after a warm-up
    (fewer for a page slower than PAGE_SECONDS / requests);
    None for a page the leaderboard does not have (page 20 of 100 entries), a string for
    a page that did not answer 200 (also after the tasks its warm-up sent have run)."""
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    # A view's exception is a 500 in the figures, not the end of a long run.
    client = Client(raise_request_exception=False)
    results = {}
    for label, (url, needs) in {**PAGES, **(extra or {})}.items():
        if entries < needs or not routed(url):
            results[label] = None
            continue

        def get(url=url, label=label):
            response = client.get(url)
            if label in STREAMED:
                _first_bytes(response)
            return response

        statuses = warm_up(get)
        if statuses != {200} and outbox is not None:  # a drawing or file being prepared
            outbox.drain()
            statuses = warm_up(get)
        if statuses != {200}:
            results[label] = f"status {sorted(statuses)}"
            continue
        with CaptureQueriesContext(connection) as queries:
            get()
        count = len(queries)  # read now: the next request clears the connection's log
        times, statuses, began = [], set(), time.perf_counter()
        for _ in range(requests):
            if len(times) >= 5 and time.perf_counter() - began > PAGE_SECONDS:
                break  # a slow page: its median is clear long before (a million entries)
            started = time.perf_counter()
            statuses.add(get().status_code)
            times.append(time.perf_counter() - started)
        if statuses != {200}:
            results[label] = f"status {sorted(statuses)}"
            continue
        times.sort()
        p95 = times[min(len(times) - 1, round(0.95 * len(times)) - 1)]
        results[label] = (statistics.median(times) * 1000, p95 * 1000, count)
    return results


def off_request(dataset, outbox: Outbox, *, changes: int, exports: list[str], rng) -> dict:
    """The plot's and the exports' figures at the current size: {label: text}.

    ``changes`` new entries, each followed by the first plot view and board page after
    it; then the first request of each export (no file for this generation yet); then
    the worker's drawing and builds, each in a child process; then the first plot view
    after the drawing and each whole file as served. No change after the builds, so the
    pages measured next find everything current."""
    from django.test import Client

    # A view's exception is a 500 in the figures, not the end of a long run.
    client = Client(raise_request_exception=False)
    plot_url = PAGES["plot (latest drawing)"][0]
    figures, plot_ms, page_ms, statuses = {}, [], [], []
    # A first drawing, if the plot has none yet (the smallest board): the views after a
    # change are timed as they mostly are, with a drawing to serve meanwhile.
    timed_get(client, plot_url)
    outbox.drain()
    for number in range(changes):
        change(dataset, number=number, rng=rng)
        ms, response = timed_get(client, plot_url)
        plot_ms.append(ms)
        statuses.append(response.status_code)
        page_ms.append(timed_get(client, BOARD)[0])
    if changes:
        figures["plot view, first after a change: median / max ms (statuses)"] = (
            f"{statistics.median(plot_ms):.1f} / {max(plot_ms):.1f} ({_statuses(statuses)})"
        )
        figures["board page, first after a change: median / max ms"] = (
            f"{statistics.median(page_ms):.1f} / {max(page_ms):.1f}"
        )
    builds = {}
    for kind in exports:
        if not routed(EXPORTS[kind]):
            figures[f"{kind.upper()} export"] = "no such route"
            continue
        ms, response = timed_get(client, EXPORTS[kind])
        figures[f"{kind.upper()}: first request after a change: ms (status)"] = (
            f"{ms:.1f} ({response.status_code})"
        )
        builds[kind] = outbox.take({EXPORT_TASK})
    draws = [run_in_child(sent, outbox=outbox) for sent in outbox.take({DRAW_TASK})]
    figures["plot drawing task: s (peak RSS MiB, +growth)"] = _tasks(draws)
    ms, response = timed_get(client, plot_url)
    figures["plot view, first after the drawing: ms (status)"] = (
        f"{ms:.1f} ({response.status_code})"
    )
    for kind, sent in builds.items():
        reports = [run_in_child(one, outbox=outbox) for one in sent]
        figures[f"{kind.upper()}: build task: s (peak RSS MiB, +growth)"] = _tasks(reports)
    outbox.drain()  # anything else sent meanwhile (not timed)
    for kind in builds:
        whole = download(client, EXPORTS[kind])
        checked = "no digest header" if whole.digest_ok is None else f"sha256 ok={whole.digest_ok}"
        figures[f"{kind.upper()}: whole file served: s, MB, lines, X-Row-Count, sha256"] = (
            f"{whole.ms / 1000:.1f} s ({whole.status}), {whole.size / 1e6:.1f} MB, "
            f"{whole.lines:,} lines, rows={whole.rows_header}, {checked}"
        )
    return figures


def _statuses(codes: list[int]) -> str:
    return ", ".join(f"{code}×{codes.count(code)}" for code in sorted(set(codes)))


def _task(report: dict) -> str:
    if "seconds" not in report:
        return f"failed: {report['error']}"
    if "error" in report:
        return f"{report['seconds']:.2f} s, failed: {report['error']}"
    peak, start = report["rss_peak_mib"], report["rss_start_mib"]
    result = "" if report["result"] in (True, None) else f" result={report['result']}"
    return f"{report['seconds']:.2f} s ({peak:.0f}, +{peak - start:.0f}){result}"


def _tasks(reports: list[dict]) -> str:
    return "; ".join(map(_task, reports)) if reports else "no task sent"


def _cell(result) -> str:
    if result is None:
        return f"{'–':>21}"
    if isinstance(result, str):
        return f"{result:>21}"
    median, p95, queries = result
    return f"{median:6.1f} / {p95:6.1f} ({queries})".rjust(21)


def report(sizes: list[int], pages: dict, work: dict, vendor: str) -> None:
    print(f"\n{vendor}: median / p95 in ms (queries) with " + ", ".join(f"{n:,}" for n in sizes))
    print("submissions; ratio: the largest board against the smallest\n")
    labels = list(pages[sizes[-1]])
    width = max(len(label) for label in labels)
    print(f"{'page':<{width}}  " + "  ".join(f"{n:>21,}" for n in sizes) + "  ratio")
    for label in labels:
        cells = [pages[n].get(label) for n in sizes]
        first, last = cells[0], cells[-1]
        ratio = (
            f"{last[0] / first[0]:5.2f}"
            if isinstance(first, tuple) and isinstance(last, tuple)
            else ""
        )
        print(f"{label:<{width}}  " + "  ".join(_cell(c) for c in cells) + f"  {ratio}")
    print("\nOff the request path (tasks run as a worker would, in a child process):\n")
    for label in work[sizes[-1]]:
        print(label)
        for n in sizes:
            print(f"  {n:>11,}: {work[n].get(label, '–')}")
    print()
    for n in sizes:
        over = [
            f"{label} ({result[0]:.1f} ms)"
            for label, result in pages[n].items()
            if isinstance(result, tuple) and result[0] >= TARGET_MS
        ]
        failed = [
            f"{label}: {result}" for label, result in pages[n].items() if isinstance(result, str)
        ]
        verdict = (
            f"every page under {TARGET_MS} ms median"
            if not over
            else f"{TARGET_MS} ms or more: " + "; ".join(over)
        )
        print(f"{n:>11,} submissions: {verdict}" + (f"; not 200: {failed}" if failed else ""))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", default=None, help="postgres://… (default: SQLite)")
    parser.add_argument("--sizes", type=int, nargs="+", help="board sizes, growing")
    parser.add_argument("--small", type=int, default=100, help="without --sizes: 1st size")
    parser.add_argument("--large", type=int, default=100_000, help="without --sizes: 2nd")
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--changes", type=int, default=5, help="new entries timed per size")
    parser.add_argument("--exports", nargs="*", default=["csv", "json"], choices=EXPORTS)
    parser.add_argument("--seed", type=int, default=2004)
    args = parser.parse_args(argv)
    sizes = args.sizes or [args.small, args.large]
    if sizes != sorted(set(sizes)) or sizes[0] < 1:
        parser.error("sizes grow: each larger than the one before")
    rng = random.Random(args.seed)
    with (
        tempfile.TemporaryDirectory(prefix="bench-leaderboard-var-") as folder,
        throwaway_database(args.database_url) as vendor,
    ):
        setup_django(folder)
        outbox = Outbox().install()
        dataset = create_dataset()
        pages, work, have = {}, {}, 0
        for size in sizes:
            started = time.perf_counter()
            if vendor == "postgresql" and have and size - have > 50_000:
                seed_sql(dataset, first=have, last=size, seed=args.seed)
            else:
                seed(dataset, first=have, last=size, rng=rng)
            seeded = time.perf_counter() - started
            built = after_seeding()
            print(
                f"seeded {size:,} submissions ({seeded:.0f} s); best-per-participant table "
                f"built in {built:.1f} s",
                flush=True,
            )
            have = size
            dataset.refresh_from_db()
            work[size] = off_request(
                dataset, outbox, changes=args.changes, exports=args.exports, rng=rng
            )
            for label, text in work[size].items():
                print(f"  {label}: {text}", flush=True)
            dataset.refresh_from_db()
            pages[size] = measure(
                args.requests, entries=size, extra=deep_urls(dataset), outbox=outbox
            )
            for label, result in pages[size].items():  # as it comes: a long run may stop
                print(f"  {label}: {_cell(result).strip()}", flush=True)
        report(sizes, pages, work, vendor)
    return 0


if __name__ == "__main__":
    sys.exit(main())
