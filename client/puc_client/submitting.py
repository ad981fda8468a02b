"""Submitting, waiting for the score, listing one's submissions and withdrawing one."""

from __future__ import annotations

import json
import time

from . import errors
from .check import local_check
from .commands import Context, need_token, not_found_means, refusal_means_refused
from .errors import ClientError
from .output import date_text, submission_report, table
from .zipping import prepared

FINAL = ("scored", "invalid", "failed")
FIRST_DELAY = 1.0
MAX_DELAY = 15.0
BACKOFF = 1.5


def validate(args, ctx: Context) -> int:
    """The site's upload check, run here on the files (nothing is sent but questions
    about the challenge)."""
    with prepared(args.paths) as upload:
        report_skipped(ctx, upload)
        problems = local_check(ctx, challenge=args.challenge, dataset=args.dataset, upload=upload)
    if problems:
        for line in problems:
            ctx.say(line)
        ctx.note(f"{len(problems)} problem(s): the site would refuse these files.")
        return errors.PROBLEMS
    ctx.say("No problems found: the site would accept these files.")
    return errors.OK


def report_skipped(ctx: Context, upload) -> None:
    if upload.skipped:
        names = ", ".join(path.name for path in upload.skipped)
        ctx.note(f"Left out (not prediction files): {names}")
    if upload.built:
        ctx.note(f"Zipping {', '.join(upload.members)}")


def submit(args, ctx: Context) -> int:
    need_token(ctx)
    # A refused token is said before the upload: the site answers 401 without reading
    # the body, and a large one would end in a broken connection instead.
    ctx.api.get_json("/api/me/")
    fields = {
        "challenge": args.challenge,
        "dataset": args.dataset or "",
        "method": args.method,
        "description": args.description or "",
        "authors": args.authors or "",
    }
    with prepared(args.paths) as upload:
        report_skipped(ctx, upload)
        if not args.no_check:
            problems = local_check(
                ctx, challenge=args.challenge, dataset=args.dataset, upload=upload
            )
            if problems:
                raise ClientError(
                    "not submitted: the files have problems (--no-check sends them anyway):",
                    errors.PROBLEMS,
                    problems,
                )
        name = upload.path.name if not upload.built else "predictions.zip"
        body = ctx.api.upload("/api/v1/submissions/", fields, file=upload.path, filename=name)
    ctx.say(f"Submitted: submission {body['id']} ({body['status']}) {body['url']}")
    if not args.wait:
        ctx.note(f"`puc wait {body['id']}` prints its scores once it is scored.")
        return errors.OK
    return print_final(ctx, wait_for(ctx, body["id"], timeout=args.timeout))


def wait_for(
    ctx: Context, pk: int, *, timeout: float, sleep=time.sleep, clock=time.monotonic
) -> dict:
    """Poll the submission, waiting longer each time (1 s, then x1.5 up to 15 s), until
    it is scored, invalid or failed; ClientError (TIMEOUT) after ``timeout`` seconds."""
    deadline = clock() + timeout
    delay = FIRST_DELAY
    status = None
    while True:
        pause = delay
        try:
            body = get_submission(ctx, pk)
        except ClientError as error:
            if error.code != errors.LIMIT:
                raise
            pause = max(delay, error.retry_after or 0)  # throttled: ask again later
        else:
            if body["status"] != status:
                status = body["status"]
                ctx.note(f"submission {pk}: {status}")
            if status in FINAL:
                return body
        remaining = deadline - clock()
        if remaining <= 0:
            raise ClientError(
                f"submission {pk} is still {status or 'not answered'} after {timeout:.0f} s; "
                f"run `puc wait {pk}` to wait longer",
                errors.TIMEOUT,
            )
        sleep(min(pause, remaining))
        delay = min(delay * BACKOFF, MAX_DELAY)


def get_submission(ctx: Context, pk: int) -> dict:
    with not_found_means(f"no submission {pk} (or not one you may see)"):
        return ctx.api.get_json(f"/api/v1/submissions/{int(pk)}/")


def print_final(ctx: Context, body: dict) -> int:
    ctx.say(submission_report(body))
    return errors.OK if body["status"] == "scored" else errors.PROBLEMS


def wait(args, ctx: Context) -> int:
    return print_final(ctx, wait_for(ctx, args.id, timeout=args.timeout))


def show(args, ctx: Context) -> int:
    body = get_submission(ctx, args.id)
    if args.json:
        ctx.say(json.dumps(body, indent=2))
    else:
        ctx.say(submission_report(body))
    return errors.OK


def submissions(args, ctx: Context) -> int:
    """One's own (or one's team's) submissions, newest first, following the pages."""
    need_token(ctx)
    params = {
        "challenge": args.challenge,
        "dataset": args.dataset,
        "status": args.status,
    }
    url = ctx.api.url("/api/v1/submissions/", params)
    rows: list[dict] = []
    while url and len(rows) < args.limit:
        page = ctx.api.get_json(url)
        rows += page["results"]
        url = page.get("next")
    more = bool(url) or len(rows) > args.limit
    rows = rows[: args.limit]
    if args.json:
        ctx.say(json.dumps(rows, indent=2))
        return errors.OK
    if not rows:
        ctx.say("No submissions.")
        return errors.OK
    ctx.say(submissions_table(rows))
    if more:
        ctx.note(f"First {len(rows)} submissions; --limit N shows more.")
    return errors.OK


def team_name(row: dict) -> str:
    """The item's team: a name, or {"name", …} (absent or null: no team)."""
    value = row.get("team")
    if isinstance(value, dict):
        return str(value.get("name") or value.get("label") or "")
    return str(value or "")


def is_withdrawn(row: dict) -> bool:
    """``withdrawn`` as a flag or a date; ``withdrawn_at`` as GET …/withdraw/ gives it."""
    return bool(row.get("withdrawn") or row.get("withdrawn_at"))


def submissions_table(rows: list[dict]) -> str:
    """The listing; a team column only when an entry is a team's (a site without teams, or
    one that does not say, shows none), and withdrawn entries marked in their status."""
    teams = any(team_name(row) for row in rows)
    headers = ["id", "created", "challenge", "dataset", "splits"]
    headers += ["team"] * teams + ["method", "status"]
    lines = []
    for row in rows:
        status = row["status"] + (" (withdrawn)" if is_withdrawn(row) else "")
        lines.append(
            [
                row["id"],
                date_text(row.get("created")),
                row.get("challenge", ""),
                row.get("dataset", ""),
                ",".join(row.get("splits") or []),
            ]
            + [team_name(row)] * teams
            + [row.get("method", ""), status]
        )
    return table(headers, lines)


def withdraw(args, ctx: Context) -> int:
    """Take one's entry off the leaderboards for good, after a yes (or --yes)."""
    need_token(ctx)
    pk = args.id
    if not args.yes:
        if not ctx.stdin.isatty():
            raise ClientError(
                f"not withdrawn: there is no terminal to confirm on; "
                f"`puc withdraw {pk} --yes` withdraws submission {pk}",
                errors.USAGE,
            )
        body = get_submission(ctx, pk)
        ctx.stderr.write(
            f"Withdraw submission {pk} ({body.get('challenge', '?')} / "
            f"{body.get('dataset', '?')}, {body.get('method', '')!r})? It leaves the "
            "leaderboards for good and still counts against the limits. [y/N] "
        )
        ctx.stderr.flush()
        if ctx.stdin.readline().strip().lower() not in ("y", "yes"):
            ctx.say("Not withdrawn.")
            return errors.OK
    with (
        not_found_means(f"no submission {pk} of yours or your team's"),
        refusal_means_refused(),
    ):
        done = ctx.api.post_json(f"/api/v1/submissions/{int(pk)}/withdraw/", {})
    ctx.say(
        f"Withdrew submission {done['id']} ({date_text(done.get('withdrawn_at'))}): it has "
        "left the leaderboards and still counts against the limits."
    )
    return errors.OK
