"""`puc withdraw` against the live site (asking first on a terminal only), and withdrawn and
team entries in `puc submissions` (a site whose items carry no team or withdrawn field
shows neither)."""

import io
import re
from datetime import UTC, datetime, timedelta

import pytest
from puc_client import cli, errors, submitting
from rest_framework.authtoken.models import Token

from challenge_site.teams import services
from tests.factories import make_user
from tests.submissions.helpers import predictions

from .conftest import Result


class Terminal(io.StringIO):
    """Typed answers, on what the client takes for a terminal."""

    def isatty(self):
        return True


@pytest.fixture
def entry(site, submit_zip):
    """Ada's scored entry in the live challenge (method "Curl GP")."""
    return submit_zip(
        site["user"],
        site["challenge"],
        predictions("gaze"),
        now=datetime.now(UTC),
        method="Curl GP",
    )


def typed(environ, answer: str, *argv: str) -> Result:
    out, err = io.StringIO(), io.StringIO()
    code = cli.run(list(argv), environ=environ, stdin=Terminal(answer), stdout=out, stderr=err)
    return Result(code, out.getvalue(), err.getvalue())


def test_withdraw_with_yes_then_again(puc, site, entry):
    done = puc("withdraw", str(entry.pk), "--yes")
    assert done.code == errors.OK, done
    entry.refresh_from_db()
    assert entry.withdrawn_at is not None and entry.final is False
    when = entry.withdrawn_at.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")
    assert done.out == (
        f"Withdrew submission {entry.pk} ({when}): it has left the leaderboards and still "
        "counts against the limits.\n"
    )
    again = puc("withdraw", str(entry.pk), "-y")
    assert (again.code, again.err) == (
        errors.REFUSED,
        f"puc: the site refused the request: Submission #{entry.pk} is withdrawn already.\n",
    )


def test_without_yes_and_without_a_terminal_it_refuses_to_ask(puc, site, entry):
    result = puc("withdraw", str(entry.pk), stdin="y\n")
    assert (result.code, result.out, result.err) == (
        errors.USAGE,
        "",
        f"puc: not withdrawn: there is no terminal to confirm on; `puc withdraw {entry.pk} "
        f"--yes` withdraws submission {entry.pk}\n",
    )
    entry.refresh_from_db()
    assert entry.withdrawn_at is None


def test_on_a_terminal_it_asks_first(site, environ, entry):
    question = (
        f"Withdraw submission {entry.pk} (live / gaze, 'Curl GP')? It leaves the leaderboards "
        "for good and still counts against the limits. [y/N] "
    )
    kept = typed(environ, "\n", "withdraw", str(entry.pk))
    assert (kept.code, kept.out, kept.err) == (errors.OK, "Not withdrawn.\n", question)
    entry.refresh_from_db()
    assert entry.withdrawn_at is None
    gone = typed(environ, "yes\n", "withdraw", str(entry.pk))
    assert gone.code == errors.OK and gone.err == question
    assert gone.out.startswith(f"Withdrew submission {entry.pk} (")
    entry.refresh_from_db()
    assert entry.withdrawn_at is not None


def test_only_ones_own_or_ones_teams_entries(puc, site, entry, transactional_db):
    bob = make_user("bob")
    bob_token = Token.objects.create(user=bob).key
    others = puc("withdraw", str(entry.pk), "--yes", "--token", bob_token)
    assert (others.code, others.err) == (
        errors.REFUSED,
        f"puc: no submission {entry.pk} of yours or your team's\n",
    )
    missing = puc("withdraw", "999999", "--yes")
    assert missing.err == "puc: no submission 999999 of yours or your team's\n"
    entry.refresh_from_db()
    assert entry.withdrawn_at is None
    # In ada's team, the entry is bob's to withdraw too.
    now = datetime.now(UTC)
    team = services.create(challenge=site["challenge"], user=site["user"], name="Gaze", now=now)
    services.join(team=team, user=bob, now=now)
    assert puc("withdraw", str(entry.pk), "--yes", "--token", bob_token).code == errors.OK
    entry.refresh_from_db()
    assert entry.withdrawn_at is not None


def test_published_results_stay_as_published(puc, site, entry):
    challenge = site["challenge"]
    now = datetime.now(UTC)
    challenge.test_start = now - timedelta(days=1, hours=1)
    challenge.deadline = now - timedelta(days=1)
    challenge.results_published = True
    challenge.save()
    result = puc("withdraw", str(entry.pk), "--yes")
    assert result.code == errors.REFUSED
    assert result.err == (
        "puc: the site refused the request: The results of this challenge are published: its "
        "entries stay as published. Write to the organisers if this entry must go.\n"
    )
    entry.refresh_from_db()
    assert entry.withdrawn_at is None


def test_submissions_shows_the_team_and_marks_withdrawn_entries(puc, site, entry, submit_zip):
    now = datetime.now(UTC)
    # Ada's entry becomes the team's as she forms it; the next is the team's from the start.
    services.create(challenge=site["challenge"], user=site["user"], name="Gaze", now=now)
    later = submit_zip(
        site["user"], site["challenge"], predictions("gaze", seed=2), now=now, method="Later"
    )
    assert puc("withdraw", str(entry.pk), "--yes").code == errors.OK
    listing = puc("submissions")
    assert listing.code == errors.OK, listing
    header, _, *lines = listing.out.splitlines()
    assert header.split() == [
        "id",
        "created",
        "challenge",
        "dataset",
        "splits",
        "team",
        "method",
        "status",
    ]
    cells = [re.split(r"\s{2,}", line.strip()) for line in lines]
    assert [row[0] for row in cells] == [str(later.pk), str(entry.pk)]
    assert [row[5:] for row in cells] == [
        ["Gaze", "Later", "scored"],
        ["Gaze", "Curl GP", "scored (withdrawn)"],
    ]
    only = puc("submissions", "--status", "withdrawn").out.splitlines()[2:]
    assert [line.split()[0] for line in only] == [str(entry.pk)]


@pytest.mark.parametrize(
    ("team", "withdrawn", "cells"),
    [
        ("Gaze", True, ["Gaze", "GP", "scored (withdrawn)"]),
        (
            {"name": "Gaze", "label": "Gaze (Ada L.)"},
            "2030-01-20T12:00:00Z",
            ["Gaze", "GP", "scored (withdrawn)"],
        ),
        (None, False, ["GP", "scored"]),
        ("", None, ["GP", "scored"]),
        (None, None, ["GP", "scored"]),  # with neither field: see below
    ],
)
def test_submissions_table_takes_a_team_as_a_name_or_an_object(team, withdrawn, cells):
    row = {
        "id": 7,
        "created": "2030-01-20T12:00:00Z",
        "challenge": "live",
        "dataset": "gaze",
        "splits": ["train", "val"],
        "method": "GP",
        "status": "scored",
        "team": team,
        "withdrawn": withdrawn,
    }
    if team is None and withdrawn is None:
        del row["team"], row["withdrawn"]  # an item from a site that does not say
    header, _, line = submitting.submissions_table([row]).splitlines()
    teams = ["team"] if team else []
    assert header.split() == [
        "id",
        "created",
        "challenge",
        "dataset",
        "splits",
        *teams,
        "method",
        "status",
    ]
    assert re.split(r"\s{2,}", line.strip()) == [
        "7",
        "2030-01-20 12:00 UTC",
        "live",
        "gaze",
        "train,val",
        *cells,
    ]
