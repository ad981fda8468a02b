"""The commands of the account, the catalogue and the leaderboards: each takes the parsed
arguments and a :class:`Context`, prints its result and returns an exit code."""

from __future__ import annotations

import getpass
import hashlib
import json
import re
import sys
import time
import urllib.request
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO
from urllib.parse import quote

from . import config, errors
from .errors import ClientError
from .output import date_text, table, value_text
from .progress import human_bytes
from .transport import Api


@dataclass
class Context:
    settings: config.Settings
    api: Api
    stdout: TextIO = sys.stdout
    stderr: TextIO = sys.stderr
    stdin: TextIO = sys.stdin

    def say(self, text: str = "") -> None:
        self.stdout.write(text + "\n")

    def note(self, text: str) -> None:
        """Progress and advice: stderr, so that stdout stays the command's result."""
        self.stderr.write(text + "\n")
        self.stderr.flush()


def slug_path(*parts: str) -> str:
    return "/".join(quote(part, safe="") for part in parts)


# DRF's 404 for an object that is missing or hidden: the command says which one instead.
GENERIC_404 = re.compile(r"^No \w+ matches the given query\.$")


@contextmanager
def not_found_means(message: str) -> Iterator[None]:
    """Say ``message`` for the site's generic 404 (other 404s keep their own words)."""
    try:
        yield
    except ClientError as error:
        if error.status == 404 and (
            GENERIC_404.match(error.message) or error.message.startswith("not found: ")
        ):
            raise ClientError(message, errors.REFUSED, status=404) from None
        raise


@contextmanager
def refusal_means_refused() -> Iterator[None]:
    """The site's 400 {"detail"} for a team action or a withdrawal it refuses: "not
    allowed" (exit code 4), for no file has problems; its words stay as they are."""
    try:
        yield
    except ClientError as error:
        if error.status == 400:
            error.code = errors.REFUSED
        raise


@contextmanager
def bad_options_mean_usage() -> Iterator[None]:
    """The site's 400 for a leaderboard option it does not know (``--split bogus``): a bad
    argument (exit code 2), with the site's words; no file has problems."""
    try:
        yield
    except ClientError as error:
        if error.status == 400:
            error.code = errors.USAGE
        raise


def need_token(ctx: Context) -> None:
    if not ctx.api.token:
        raise ClientError("not logged in: run `puc login`", errors.AUTH)


# --- The account -------------------------------------------------------------------


def read_token(ctx: Context) -> str:
    url = f"{ctx.settings.url}/accounts/profile/"
    if ctx.stdin.isatty():
        token = getpass.getpass(f"API token (on {url}): ")
    else:
        token = ctx.stdin.readline()
    token = token.strip()
    if not token:
        raise ClientError(f"no token given: copy it from {url}", errors.USAGE)
    return token


def login(args, ctx: Context) -> int:
    """Check the token against /api/me/, then save it with the site URL."""
    token = args.token or read_token(ctx)
    ctx.api.token = token
    try:
        me = ctx.api.get_json("/api/me/")
    except ClientError as error:
        if error.code == errors.AUTH:
            raise ClientError(
                f"the token was refused by {ctx.settings.url}: copy it again from "
                f"{ctx.settings.url}/accounts/profile/",
                errors.AUTH,
            ) from None
        raise
    saved = config.load(ctx.settings.path)
    saved.update(url=ctx.settings.url, token=token)
    config.save(ctx.settings.path, saved)
    ctx.say(f"Logged in to {ctx.settings.url} as {me['username']}.")
    ctx.note(f"Token saved in {ctx.settings.path} (readable by you only).")
    return errors.OK


def logout(args, ctx: Context) -> int:
    saved = config.load(ctx.settings.path)
    if saved.pop("token", None) is None:
        ctx.say("No token was saved.")
    else:
        config.save(ctx.settings.path, saved)
        ctx.say(f"Token removed from {ctx.settings.path}.")
    return errors.OK


def whoami(args, ctx: Context) -> int:
    need_token(ctx)
    me = ctx.api.get_json("/api/me/")
    name = f" ({me['display_name']})" if me.get("display_name") else ""
    ctx.say(f"{me['username']}{name} on {ctx.settings.url}")
    return errors.OK


# --- Challenges and datasets ---------------------------------------------------------


def challenges(args, ctx: Context) -> int:
    body = ctx.api.get_json("/api/v1/challenges/")
    if args.json:
        ctx.say(json.dumps(body["results"], indent=2))
        return errors.OK
    rows = [[c["slug"], c["phase"], date_text(c["deadline"]), c["title"]] for c in body["results"]]
    ctx.say(table(["challenge", "phase", "deadline", "title"], rows) if rows else "No challenges.")
    return errors.OK


def challenge_info(ctx: Context, slug: str) -> dict:
    with not_found_means(f"no challenge {slug!r}: `puc challenges` lists them"):
        return ctx.api.get_json(f"/api/v1/challenges/{slug_path(slug)}/")


def no_dataset(args) -> str:
    return (
        f"no dataset {args.dataset!r} in challenge {args.challenge!r} (or it has not opened): "
        f"`puc datasets {args.challenge}` lists them"
    )


def datasets(args, ctx: Context) -> int:
    body = challenge_info(ctx, args.challenge)
    if args.json:
        ctx.say(json.dumps(body["datasets"], indent=2))
        return errors.OK
    accepts = body["accepts"]
    splits = ", ".join(accepts["splits"]) or "none"
    ctx.say(f"{body['title']} ({body['slug']}): {body['phase']} phase; submissions accept {splits}")
    if body["participation"]["detail"]:
        ctx.note(f"{body['participation']['detail']} ({body['participation']['join_url']})")
    rows = []
    for dataset in body["datasets"]:
        counts = dataset.get("rows") or {}
        rows.append(
            [
                dataset["name"],
                dataset["task"],
                counts.get("train"),
                counts.get("val"),
                counts.get("test"),
                len(dataset.get("files") or []),
                dataset.get("classes"),  # a multiclass dataset's L (None: other tasks)
            ]
        )
    ctx.say(table(["dataset", "task", "train", "val", "test", "files", "classes"], rows))
    return errors.OK


def download(args, ctx: Context) -> int:
    destination = Path(args.output) if args.output else Path(f"{args.dataset}.zip")
    if destination.is_dir():
        destination = destination / f"{args.dataset}.zip"
    if not destination.parent.is_dir():
        raise ClientError(f"{destination.parent}: no such folder", errors.USAGE)
    path = f"/api/v1/challenges/{slug_path(args.challenge, 'datasets', args.dataset)}.zip"
    with not_found_means(no_dataset(args)):
        size = ctx.api.download(path, destination)
    ctx.say(f"Saved {destination} ({human_bytes(size)}).")
    if args.extract:
        with zipfile.ZipFile(destination) as archive:
            archive.extractall(destination.parent)
            folder = destination.parent / args.dataset
        ctx.say(f"Extracted into {folder}/.")
    return errors.OK


# --- Leaderboards ------------------------------------------------------------------------


def leaderboard(args, ctx: Context) -> int:
    params = {"split": args.split, "sort": args.sort, "view": args.view}
    board = slug_path(args.challenge, "datasets", args.dataset)
    if args.csv:
        # The site's own CSV: every row, in the page's order, its columns.
        path = f"/challenges/{board}/leaderboard.csv"
        with not_found_means(no_dataset(args)), bad_options_mean_usage():
            text = board_file(ctx, path, params, output=Path(args.output) if args.output else None)
        if args.output:
            ctx.say(f"Saved {args.output}.")
        else:
            ctx.stdout.write(text)
        return errors.OK
    url = ctx.api.url(f"/api/v1/challenges/{board}/leaderboard/", params)
    rows: list[dict] = []
    first = None
    while url and len(rows) < args.limit:
        with not_found_means(no_dataset(args)), bad_options_mean_usage():
            page = ctx.api.get_json(url)
        first = first or page
        rows += page["results"]
        url = page["next"]
    more = bool(url) or len(rows) > args.limit
    rows = rows[: args.limit]
    if args.json:
        text = json.dumps(rows, indent=2)
    else:
        text = board_table(first, rows) if rows else "No entries yet."
    if args.output:
        Path(args.output).write_text(text + "\n", encoding="utf-8")
        ctx.say(f"Saved {args.output}.")
    else:
        ctx.say(text)
    if more:
        ctx.note(f"First {len(rows)} rows; --limit N shows more, --csv gives them all.")
    return errors.OK


# How long `leaderboard --csv` waits for the site to prepare a board's file.
BOARD_FILE_WAIT = 900


def _head(ctx: Context, path: str, params: dict) -> tuple[int, dict]:
    """(status, headers) of a HEAD request: the site answers 202 while it prepares a
    board's file (a worker builds it), 200 with its X-Content-SHA256 once ready."""
    url = ctx.api.url(path, params)
    request = urllib.request.Request(url, headers=ctx.api._headers("*/*"), method="HEAD")
    with ctx.api._open(request) as response:
        return response.status, dict(response.headers)


def board_file(ctx: Context, path: str, params: dict, *, output: Path | None, clock=time):
    """The board's whole file (the text, or saved to ``output``; then ""): waits while the
    site prepares it, and checks what arrived against the sha256 the site announced,
    asking again if the board changed in between (a new file is then being prepared)."""
    deadline = clock.monotonic() + BOARD_FILE_WAIT
    told = False
    while True:
        status, headers = _head(ctx, path, params)
        expected = {k.lower(): v for k, v in headers.items()}.get("x-content-sha256")
        if status == 200:
            if output is not None:
                ctx.api.download(path, output, params=params)
                data, text = output.read_bytes(), ""
            else:
                text = ctx.api.get_text(path, params)
                data = text.encode()
            if expected is None or hashlib.sha256(data).hexdigest() == expected:
                return text
        elif not told:
            ctx.note("The site is preparing the board's file; waiting for it.")
            told = True
        if clock.monotonic() > deadline:
            raise ClientError(
                f"the site was still preparing the file after {BOARD_FILE_WAIT} s; try again later",
                errors.UNAVAILABLE,
            )
        retry = {k.lower(): v for k, v in headers.items()}.get("retry-after", "")
        clock.sleep(min(max(int(retry) if retry.isdigit() else 5, 1), 30))


def participant(row: dict) -> str:
    """The participant column; the organisers' baselines have none."""
    return row.get("participant") or ("(baseline)" if row.get("is_baseline") else "")


# The site's marks (its leaderboard's legend): entries made outside the test phase.
MARKS = {"<": "made before the test phase", ">": "made after the deadline"}


def _interval_text(row: dict, sort: str) -> str:
    """The sort loss's 95 % interval as the site shows it: "[lo, hi]", "≈" when the entry
    cannot be told apart from the leader, "†" when the interval may be too narrow."""
    pair = (row.get("intervals") or {}).get(sort)
    if not pair:
        return ""
    text = f"[{value_text(pair[0])}, {value_text(pair[1])}]"
    if (row.get("indistinguishable_from_leader") or {}).get(sort):
        text = "≈ " + text
    if (row.get("heavy_tail") or {}).get(sort):
        text += " †"
    return text


def _unranked_reason(row: dict, sort: str) -> str | None:
    """Why a row's rank is "-", as the site's page says it; None for a ranked row."""
    if row.get("rank") is not None:
        return None
    if row.get("is_baseline"):
        return "the baseline, shown in its place, takes no rank"
    if row.get("in_final_ranking") is False:
        return "does not count for the final ranking"
    if row["scores"].get(sort) is None:
        return f"its {sort} is n/a"
    return "not ranked on this board"


def board_table(page: dict, rows: list[dict]) -> str:
    losses: list[str] = []
    for row in rows:
        losses += [loss for loss in row["scores"] if loss not in losses]
    view = {"all": "every entry", "best": "best entry per participant"}.get(
        page["view"], page["view"]
    )
    sort = page["sort"]
    title = (
        f"{page['challenge']} / {page['dataset']}: {page['split']} split, sorted by {sort}, {view}"
    )
    with_intervals = any((row.get("intervals") or {}).get(sort) for row in rows)
    headers = ["rank", "participant", "method", "id", "mark", *losses]
    headers += [f"{sort} 95% interval"] if with_intervals else []
    body = table(
        headers,
        [
            [row["rank"], participant(row), row["method"], row["submission"], row.get("mark")]
            + [row["scores"].get(loss) for loss in losses]
            + ([_interval_text(row, sort)] if with_intervals else [])
            for row in rows
        ],
    )
    notes = [
        f"id {row['submission']}: rank -, {reason}"
        for row in rows
        if (reason := _unranked_reason(row, sort))
    ]
    marks = sorted({row.get("mark") for row in rows} & MARKS.keys())
    notes += [f"mark {mark}: {MARKS[mark]}" for mark in marks]
    if with_intervals:
        notes.append(
            f"{sort} 95% interval: paired bootstrap; ≈ cannot be told apart from the leader; "
            "† may be too narrow (a few examples dominate)"
        )
    return "\n".join([title, body, *notes])
