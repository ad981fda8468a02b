"""The commands of the account, the catalogue and the leaderboards: each takes the parsed
arguments and a :class:`Context`, prints its result and returns an exit code."""

from __future__ import annotations

import getpass
import json
import re
import sys
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO
from urllib.parse import quote

from . import config, errors
from .errors import ClientError
from .output import date_text, table
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
        with not_found_means(no_dataset(args)):
            if args.output:
                ctx.api.download(path, Path(args.output), params=params)
                ctx.say(f"Saved {args.output}.")
            else:
                ctx.stdout.write(ctx.api.get_text(path, params))
        return errors.OK
    url = ctx.api.url(f"/api/v1/challenges/{board}/leaderboard/", params)
    rows: list[dict] = []
    first = None
    while url and len(rows) < args.limit:
        with not_found_means(no_dataset(args)):
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


def participant(row: dict) -> str:
    """The participant column; the organisers' baselines have none."""
    return row.get("participant") or ("(baseline)" if row.get("is_baseline") else "")


def board_table(page: dict, rows: list[dict]) -> str:
    losses: list[str] = []
    for row in rows:
        losses += [loss for loss in row["scores"] if loss not in losses]
    view = {"all": "every entry", "best": "best entry per participant"}.get(
        page["view"], page["view"]
    )
    title = (
        f"{page['challenge']} / {page['dataset']}: {page['split']} split, "
        f"sorted by {page['sort']}, {view}"
    )
    body = table(
        ["rank", "participant", "method", "id", *losses],
        [
            [row["rank"], participant(row), row["method"], row["submission"]]
            + [row["scores"].get(loss) for loss in losses]
            for row in rows
        ],
    )
    return f"{title}\n{body}"
