"""`puc`: the command line. Every failure is one line on stderr and an exit code
(errors.EXIT_CODES, listed by `puc --help`), never a traceback."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from . import __version__, commands, config, errors, submitting, teams
from .errors import ClientError
from .transport import Api

EPILOG = (
    "exit codes:\n"
    + "\n".join(f"  {code:<4} {meaning}" for code, meaning in errors.EXIT_CODES.items())
    + (
        f"\n\nThe site and the token come from --url/--token, else ${config.ENV_URL}/"
        f"${config.ENV_TOKEN}, else the file `puc login` writes\n"
        f"(${config.ENV_CONFIG}, default ~/.config/puc/config.json)."
    )
)


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}")
    return value


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected a number of seconds > 0, got {text!r}")
    return value


def _common(suppress: bool) -> argparse.ArgumentParser:
    """--url, --token, --progress: accepted before and after the command's name."""
    default = argparse.SUPPRESS if suppress else None
    parser = argparse.ArgumentParser(add_help=False)
    group = parser.add_argument_group("site")
    group.add_argument("--url", default=default, help="the site (default: as saved by login)")
    group.add_argument("--token", default=default, help="an API token (default: as saved)")
    group.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=default,
        help="progress bars on stderr (default: when stderr is a terminal)",
    )
    return parser


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="puc",
        description="Command-line client of the predictive uncertainty challenges site.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        parents=[_common(suppress=False)],
    )
    parser.add_argument("--version", action="version", version=f"puc {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    common = _common(suppress=True)

    def command(name: str, handler, help: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help, description=help, parents=[common])
        p.set_defaults(handler=handler)
        return p

    p = command("login", commands.login, "check an API token and save it (0600)")
    p.epilog = "Without --token the token is asked for (or read from stdin)."
    command("logout", commands.logout, "forget the saved token")
    command("whoami", commands.whoami, "who the token authenticates as")

    p = command("challenges", commands.challenges, "list the challenges")
    p.add_argument("--json", action="store_true", help="print the API's JSON")
    p = command("datasets", commands.datasets, "list a challenge's datasets")
    p.add_argument("challenge")
    p.add_argument("--json", action="store_true", help="print the API's JSON")

    p = command("download", commands.download, "download a dataset's zip")
    p.add_argument("challenge")
    p.add_argument("dataset")
    p.add_argument("-o", "--output", help="file or folder (default: ./DATASET.zip)")
    p.add_argument("--extract", action="store_true", help="also unzip it beside the zip")

    paths_help = "a folder of prediction files, the files, or a zip"
    p = command("validate", submitting.validate, "check prediction files as the site would")
    p.add_argument("challenge")
    p.add_argument("paths", nargs="+", metavar="PATH", help=paths_help)
    p.add_argument("--dataset", help="the dataset (default: from the file names)")

    p = command("submit", submitting.submit, "check, zip and submit prediction files")
    p.add_argument("challenge")
    p.add_argument("paths", nargs="+", metavar="PATH", help=paths_help)
    p.add_argument("-m", "--method", required=True, help="the method's name (leaderboards)")
    p.add_argument("--dataset", help="the dataset (default: from the file names)")
    p.add_argument("--description", help="a description of the method")
    p.add_argument("--authors", help="the authors, as the leaderboards show them")
    p.add_argument("--no-check", action="store_true", help="send without the local check")
    p.add_argument("--wait", action="store_true", help="wait for the score and print it")
    p.add_argument("--timeout", type=_seconds, default=600, help="of --wait (default 600 s)")

    p = command("wait", submitting.wait, "wait until a submission is scored; print its scores")
    p.add_argument("id", type=_positive)
    p.add_argument("--timeout", type=_seconds, default=600, help="seconds (default 600)")

    p = command("show", submitting.show, "a submission's status, scores or errors")
    p.add_argument("id", type=_positive)
    p.add_argument("--json", action="store_true", help="print the API's JSON")

    p = command("submissions", submitting.submissions, "list your submissions, newest first")
    p.add_argument("--challenge")
    p.add_argument("--dataset")
    p.add_argument(
        "--status", choices=["queued", "running", "scored", "invalid", "failed", "withdrawn"]
    )
    p.add_argument("--limit", type=_positive, default=50, help="at most (default 50)")
    p.add_argument("--json", action="store_true", help="print the API's JSON rows")

    p = command("withdraw", submitting.withdraw, "take your entry off the leaderboards for good")
    p.add_argument("id", type=_positive)
    p.add_argument("-y", "--yes", action="store_true", help="withdraw without asking")
    p.epilog = "It still counts against the limits. Without --yes it asks, on a terminal only."

    _team_command(command, common)

    p = command("leaderboard", commands.leaderboard, "print or save a leaderboard")
    p.add_argument("challenge")
    p.add_argument("dataset")
    p.add_argument("--split", help="train, val or test (default: the site's)")
    p.add_argument("--sort", help="a loss (default: the dataset's ranking loss)")
    p.add_argument("--view", choices=["best", "all"], help="best per participant, or all")
    p.add_argument("--limit", type=_positive, default=50, help="rows of the table (default 50)")
    form = p.add_mutually_exclusive_group()
    form.add_argument("--csv", action="store_true", help="the site's CSV, every row")
    form.add_argument("--json", action="store_true", help="the API's JSON rows")
    p.add_argument("-o", "--output", help="save to this file instead of printing")
    return parser


def _team_command(command, common: argparse.ArgumentParser) -> None:
    """`puc team CHALLENGE` shows your team; `puc team CHALLENGE ACTION …` acts first."""
    p = command("team", teams.team, "your team in a challenge; create, join or leave one")
    p.add_argument("challenge")
    p.add_argument("--json", action="store_true", help="print the API's JSON")
    p.epilog = "Without an action: the team, its invitation link and your invitations."
    # --json after the action as well (default suppressed: the team parser's stays).
    json_too = argparse.ArgumentParser(add_help=False)
    json_too.add_argument(
        "--json", action="store_true", default=argparse.SUPPRESS, help="print the API's JSON"
    )
    actions = p.add_subparsers(dest="action", metavar="[ACTION]")

    def action(name: str, help: str) -> argparse.ArgumentParser:
        return actions.add_parser(name, help=help, description=help, parents=[common, json_too])

    action("create", "form a team (you are its first member)").add_argument("name", nargs="+")
    action("join", "join a team by its invitation link").add_argument(
        "link", metavar="LINK_OR_CODE", help="…/challenges/CHALLENGE/team/join/CODE/, or CODE"
    )
    action("invite", "invite a user (they accept with `accept`)").add_argument("username")
    for name, what in (("accept", "accept an invitation"), ("decline", "decline an invitation")):
        action(name, what).add_argument(
            "invitation", type=_positive, metavar="INVITATION_ID", help="as `puc team` lists it"
        )
    action("new-link", "replace the invitation link (the old one stops working)")
    action("leave", "leave your team (not once you have entries in it)")


def run(
    argv: Sequence[str] | None = None, *, environ=os.environ, stdin=None, stdout=None, stderr=None
) -> int:
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    args = build_parser().parse_args(argv)
    try:
        settings = config.resolve(url=args.url, token=args.token, environ=environ)
        api = Api(settings.url, token=settings.token, progress=args.progress, stderr=stderr)
        ctx = commands.Context(settings, api, stdout, stderr, stdin or sys.stdin)
        try:
            return args.handler(args, ctx)
        except ClientError as error:
            raise _not_logged_in(error, settings) from None
    except ClientError as error:
        stderr.write(f"puc: {error.message}\n")
        for line in error.details:
            stderr.write(f"  {line}\n")
        return error.code


def _not_logged_in(error: ClientError, settings: config.Settings) -> ClientError:
    """Before any `puc login` (no token, the default site) an unreachable site means the
    user has not said which site: "not logged in" (exit 3) says what to do."""
    if error.code != errors.UNAVAILABLE or not error.message.startswith("cannot reach"):
        return error
    if settings.token is not None or not settings.url_defaulted:
        return error
    return ClientError(
        f"not logged in: run `puc login --url https://SITE` (no site was given, and the "
        f"default {config.DEFAULT_URL} cannot be reached)",
        errors.AUTH,
    )


class PipeSafeOutput:
    """stdout that swallows a closed pipe (`puc validate DIR | head`): the command runs to
    its end and exits with its own status, not 0 and not a traceback."""

    def __init__(self, stream):
        self.stream = stream
        self.closed_pipe = False

    def write(self, text: str) -> int:
        if not self.closed_pipe:
            try:
                self.stream.write(text)
            except BrokenPipeError:
                self._closed()
        return len(text)

    def flush(self) -> None:
        if not self.closed_pipe:
            try:
                self.stream.flush()
            except BrokenPipeError:
                self._closed()

    def _closed(self) -> None:
        self.closed_pipe = True
        # Python flushes sys.stdout again at exit: point it at /dev/null so that the
        # interpreter does not print "Exception ignored … BrokenPipeError" to stderr.
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self.stream.fileno())
            os.close(devnull)
        except (OSError, ValueError, AttributeError):
            pass

    def isatty(self) -> bool:
        return self.stream.isatty()

    def __getattr__(self, name):
        return getattr(self.stream, name)


def main(argv: Sequence[str] | None = None) -> int:
    output = PipeSafeOutput(sys.stdout)
    try:
        return run(argv, stdout=output)
    except KeyboardInterrupt:
        sys.stderr.write("\npuc: interrupted\n")
        return errors.INTERRUPTED
    finally:
        output.flush()  # here, where a closed pipe is caught, not at the interpreter's exit
