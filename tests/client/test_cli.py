"""Argument parsing, and failures as one line and an exit code."""

import pytest
from puc_client import cli, errors


def parse(*argv):
    return cli.build_parser().parse_args(list(argv))


def test_site_options_before_or_after_the_command():
    before = parse("--url", "http://a.example", "--token", "t", "challenges")
    after = parse("challenges", "--url", "http://a.example", "--token", "t")
    for args in (before, after):
        assert (args.url, args.token, args.progress) == ("http://a.example", "t", None)
    assert parse("download", "c", "d", "--progress").progress is True
    assert parse("--no-progress", "download", "c", "d").progress is False


def test_submit_arguments():
    args = parse("submit", "live", "out/", "x.txt", "-m", "GP", "--wait", "--timeout", "30")
    assert args.handler is cli.submitting.submit
    assert (args.challenge, args.paths, args.method) == ("live", ["out/", "x.txt"], "GP")
    assert (args.wait, args.timeout, args.no_check, args.dataset) == (True, 30.0, False, None)


def test_team_arguments():
    shown = parse("team", "live", "--json")
    assert (shown.handler, shown.challenge, shown.action, shown.json) == (
        cli.teams.team,
        "live",
        None,
        True,
    )
    joined = parse("team", "live", "join", "https://a.example/x/", "--token", "t")
    assert (joined.action, joined.link, joined.token, joined.json) == (
        "join",
        "https://a.example/x/",
        "t",
        False,
    )
    assert parse("team", "live", "decline", "3", "--json").invitation == 3
    assert parse("withdraw", "12").yes is False and parse("withdraw", "12", "-y").yes is True


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["submit", "live", "out/"], "the following arguments are required: -m/--method"),
        (["wait", "0"], "expected a whole number >= 1, got '0'"),
        (["wait", "5", "--timeout", "-3"], "expected a number of seconds > 0, got '-3'"),
        (["leaderboard", "c", "d", "--csv", "--json"], "not allowed with argument"),
        (["submissions", "--status", "done"], "invalid choice: 'done'"),
        (["withdraw", "0", "--yes"], "expected a whole number >= 1, got '0'"),
        (["team", "live", "accept", "first"], "expected a whole number >= 1, got 'first'"),
        (["team", "live", "create"], "the following arguments are required: name"),
        (["team", "live", "disband"], "invalid choice: 'disband'"),
        ([], "the following arguments are required: COMMAND"),
    ],
)
def test_bad_arguments_exit_2_with_the_reason(argv, message, capsys):
    with pytest.raises(SystemExit) as exited:
        parse(*argv)
    assert exited.value.code == errors.USAGE
    assert message in capsys.readouterr().err


def test_help_lists_the_exit_codes(capsys):
    with pytest.raises(SystemExit):
        parse("--help")
    text = capsys.readouterr().out
    for code, meaning in errors.EXIT_CODES.items():
        assert f"  {code:<4} {meaning}" in text


def test_errors_are_one_line_without_a_traceback(puc, environ):
    environ["PUC_URL"] = "http://127.0.0.1:9"  # the discard port: nothing listens
    result = puc("challenges")
    assert result.code == errors.UNAVAILABLE
    assert result.out == ""
    assert result.err.startswith("puc: cannot reach http://127.0.0.1:9: ")
    assert result.err.count("\n") == 1 and "Traceback" not in result.err


def test_commands_that_need_a_token_say_so(puc):
    result = puc("submissions")
    assert (result.code, result.err) == (errors.AUTH, "puc: not logged in: run `puc login`\n")


def test_before_any_login_an_unreachable_default_site_means_not_logged_in(
    puc, environ, monkeypatch
):
    monkeypatch.setattr(cli.config, "DEFAULT_URL", "http://127.0.0.1:9")  # nothing listens
    result = puc("challenges")
    assert result.code == errors.AUTH
    assert result.err.startswith("puc: not logged in: run `puc login --url https://SITE`")
    assert "http://127.0.0.1:9 cannot be reached" in result.err
    # A site the user named stays "cannot reach" (exit 6): they did say which site.
    environ["PUC_URL"] = "http://127.0.0.1:9"
    assert puc("challenges").code == errors.UNAVAILABLE


def test_pipe_safe_output_swallows_a_closed_pipe_and_later_writes():
    import os

    read, write = os.pipe()
    os.close(read)
    stream = os.fdopen(write, "w", buffering=1)
    output = cli.PipeSafeOutput(stream)
    assert output.write("line\n" * 10_000) == 50_000
    assert output.closed_pipe
    output.write("more\n")
    output.flush()
    stream.close()
