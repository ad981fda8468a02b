"""`puc team CHALLENGE [ACTION …]`: the caller's team in a challenge, and the actions of the
team page (create, join by link or code, invite, accept or decline an invitation, a new
link, leave), through GET/POST /api/v1/challenges/<slug>/team/."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from urllib.parse import unquote, urlsplit

from . import errors
from .commands import Context, need_token, not_found_means, refusal_means_refused, slug_path
from .errors import ClientError
from .output import table

# The command line's action names -> the API's.
ACTIONS = {
    "create": "create",
    "join": "join",
    "invite": "invite",
    "accept": "accept",
    "decline": "decline",
    "new-link": "new_link",
    "leave": "leave",
}
# The path of the team page's invitation link (teams/urls.py, "team_join").
LINK = re.compile(r"/challenges/(?P<slug>[^/]+)/team/join/(?P<code>[^/]+)/?$")


def invite_code(text: str, *, challenge: str, site: str) -> tuple[str, str | None]:
    """The code of an invitation link (…/challenges/<slug>/team/join/<code>/) or the bare
    code, and a warning when the link names another host than ``site``."""
    text = text.strip()
    if "/" not in text:
        if not text:
            raise ClientError("no invitation code given", errors.USAGE)
        return text, None
    parts = urlsplit(text)
    found = LINK.search(parts.path)
    if found is None:
        raise ClientError(
            f"not an invitation link: {text!r}; expected "
            f"…/challenges/{challenge}/team/join/CODE/ or the CODE alone",
            errors.USAGE,
        )
    slug, code = unquote(found["slug"]), unquote(found["code"])
    if slug != challenge:
        raise ClientError(
            f"the link invites to a team of {slug!r}, not of {challenge!r}: "
            f"run `puc team {slug} join …`",
            errors.USAGE,
        )
    warning = None
    host = urlsplit(site).netloc
    if parts.netloc and parts.netloc != host:
        # A code only works on the site that made it; the same site may have two names.
        warning = f"warning: the link is for {parts.netloc}; puc talks to {host} (--url)"
    return code, warning


def _team_name(state: dict) -> str:
    return (state.get("team") or {}).get("name", "")


def _request(args, ctx: Context) -> tuple[dict, Callable[[dict], str]]:
    """The API's POST body for ``args.action``, and what to say, given the state after."""
    action, slug = args.action, args.challenge
    if action == "create":
        name = " ".join(args.name)
        return {"action": "create", "name": name}, lambda s: f"Created the team {_team_name(s)!r}."
    if action == "join":
        code, warning = invite_code(args.link, challenge=slug, site=ctx.settings.url)
        if warning:
            ctx.note(warning)
        return {"action": "join", "code": code}, lambda s: f"Joined the team {_team_name(s)!r}."
    if action == "invite":
        return (
            {"action": "invite", "username": args.username},
            lambda s: f"Invited {args.username}: `puc team {slug}` shows them the invitation.",
        )
    if action == "accept":
        return (
            {"action": "accept", "invitation": args.invitation},
            lambda s: f"Joined the team {_team_name(s)!r}.",
        )
    if action == "decline":
        return (
            {"action": "decline", "invitation": args.invitation},
            lambda s: f"Declined invitation {args.invitation}.",
        )
    if action == "new-link":
        return (
            {"action": "new_link"},
            lambda s: "A new invitation link: the old one no longer works.",
        )
    return {"action": ACTIONS[action]}, lambda s: f"You left your team in {slug}."


def team(args, ctx: Context) -> int:
    """Show the caller's team (after the action, if one is given)."""
    need_token(ctx)
    path = f"/api/v1/challenges/{slug_path(args.challenge)}/team/"
    unknown = f"no challenge {args.challenge!r}: `puc challenges` lists them"
    if args.action is None and args.challenge in ACTIONS:
        unknown += f" (usage: puc team CHALLENGE {args.challenge} …)"
    with not_found_means(unknown):
        if args.action is None:
            state = ctx.api.get_json(path)
        else:
            body, done = _request(args, ctx)
            with refusal_means_refused():
                state = ctx.api.post_json(path, body)
            if args.json:
                ctx.note(done(state))  # stdout is the JSON alone
            else:
                ctx.say(done(state))
    if args.json:
        ctx.say(json.dumps(state, indent=2))
    else:
        show(ctx, state)
    return errors.OK


def show(ctx: Context, state: dict) -> None:
    slug = state["challenge"]
    found = state.get("team")
    if found:
        members = found["members"]
        ctx.say(
            f"Team {found['name']!r} in {slug}: {len(members)} of at most "
            f"{state['max_team_size']} members"
        )
        ctx.say(table(["user", "name"], [[m["username"], m["name"]] for m in members]))
        ctx.say(f"Invitation link: {found['invite_url']}")
    else:
        ctx.say(f"You are in no team of {slug}.")
    invitations = state.get("invitations") or []
    if invitations:
        ctx.say("")
        ctx.say("Invitations to you:")
        ctx.say(
            table(
                ["id", "team", "members"],
                [[i["id"], i["team"], i["members"]] for i in invitations],
            )
        )
    if not state.get("forming"):
        ctx.note(state.get("refusal") or "Teams cannot change now.")
    elif invitations:
        ctx.note(f"`puc team {slug} accept ID` joins that team; `decline ID` turns it down.")
    elif not found:
        ctx.note(
            f"`puc team {slug} create NAME` forms a team; `puc team {slug} join LINK` joins "
            "one by its invitation link."
        )
