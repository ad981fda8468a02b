"""The command-line client, installed with pip into a fresh venv, against the running
stack (gunicorn, the Celery worker, PostgreSQL): log in, list, download, validate a bad
file, submit a good one and wait for its score, list one's submissions, a leaderboard;
two participants form a team by its invitation link, and one withdraws the other's entry.

The venv is built once for the module: `python -m venv` and `pip install ./client`
(numpy comes from the machine's package index or wheel cache).
"""

import csv
import io
import os
import stat
import subprocess
import sys
import time
import zipfile
from dataclasses import dataclass

import pytest

from challenge_site.submissions.models import Score, Submission
from challenge_site.teams.models import Membership

from .client import Client
from .conftest import make_user, orm, wait_final
from .data import prediction_lines, prediction_zip
from .harness import REPO


@dataclass
class Run:
    code: int
    out: str
    err: str


@pytest.fixture(scope="module")
def puc_bin(tmp_path_factory):
    """The `puc` console script of a fresh venv that pip installed the client into."""
    venv = tmp_path_factory.mktemp("puc-venv")
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    installed = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", str(REPO / "client")],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert installed.returncode == 0, installed.stderr[-3000:]
    script = venv / "bin" / "puc"
    assert script.exists()
    return script


@pytest.fixture(scope="module")
def cli_user(stack):
    _, token = make_user("terminal")
    return token


@pytest.fixture
def puc(puc_bin, tmp_path):
    """Run the installed `puc` with its config file in tmp_path and a clean environment."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path),
        "PUC_CONFIG": str(tmp_path / "puc" / "config.json"),
    }

    def run(*argv: str, timeout: float = 300, token: str | None = None) -> Run:
        # stdin is no terminal, whatever runs the tests: `withdraw` must not ask.
        done = subprocess.run(
            [str(puc_bin), *argv],
            capture_output=True,
            env={**env, "PUC_TOKEN": token} if token else env,
            cwd=tmp_path,
            stdin=subprocess.DEVNULL,
            timeout=timeout,
        )
        # Decoded by hand: text mode would turn the progress bar's "\r" into "\n".
        return Run(done.returncode, done.stdout.decode(), done.stderr.decode())

    run.config = tmp_path / "puc" / "config.json"
    return run


def test_the_installed_client_end_to_end(stack, challenge, cli_user, puc, tmp_path):
    spec = challenge["datasets"]["sines"]

    # Log in: the token is checked, then saved readable by its owner only.
    login = puc("login", "--url", stack.base_url, "--token", cli_user)
    assert login.code == 0, login
    assert login.out == f"Logged in to {stack.base_url} as terminal.\n"
    assert stat.S_IMODE(os.stat(puc.config).st_mode) == 0o600

    # List challenges and datasets.
    listing = puc("challenges")
    assert listing.code == 0, listing
    assert any(line.split()[:2] == ["stack", "validation"] for line in listing.out.splitlines())
    datasets = puc("datasets", "stack")
    rows = {line.split()[0]: line.split()[1:] for line in datasets.out.splitlines()[3:]}
    # (the last column, classes, only for a multiclass dataset)
    assert rows["sines"] == ["regression", "200", "100", "-", "3", "-"]
    assert rows["coins"][0] == "classification"

    # Download a dataset's zip, with a progress bar (forced: stderr is a pipe here).
    download = puc("download", "stack", "sines", "--progress")
    assert download.code == 0, download
    assert "\rsines.zip " in download.err
    with zipfile.ZipFile(tmp_path / "sines.zip") as archive:
        for name in ("sines_train_inputs.txt", "sines_train_targets.txt", "sines_val_inputs.txt"):
            assert archive.read(f"sines/{name}") == challenge["files"]["sines"][name]

    # Validate a bad file: the line errors are shown, nothing is sent.
    bad = tmp_path / "bad"
    bad.mkdir()
    lines = prediction_lines("regression", 100).splitlines(keepends=True)
    lines[4] = b"1,0.5,1\n"
    lines[9] = b"1 0.5\n"
    (bad / "sines_val_predict.txt").write_bytes(b"".join(lines))
    before = orm(lambda: Submission.objects.filter(user__username="terminal").count())
    checked = puc("validate", "stack", str(bad))
    assert checked.code == 1, checked
    report = checked.out.splitlines()
    assert any(line.startswith("sines_val_predict.txt:5: ") for line in report)
    assert any(line.startswith("sines_val_predict.txt:10: ") for line in report)
    assert orm(lambda: Submission.objects.filter(user__username="terminal").count()) == before

    # The same file sent anyway: the site's report is the one `validate` printed.
    sent = puc("submit", "stack", str(bad), "-m", "Broken", "--no-check", "--wait")
    assert sent.code == 1, sent
    invalid = orm(lambda: Submission.objects.get(user__username="terminal", method="Broken"))
    assert invalid.status == "invalid" and invalid.errors == report

    # Submit a good folder and wait for the score.
    good = tmp_path / "good"
    good.mkdir()
    with zipfile.ZipFile(io.BytesIO(prediction_zip("sines", spec, ("train", "val")))) as made:
        made.extractall(good)
    (good / "notes.md").write_text("not a prediction file\n")
    submitted = puc("submit", "stack", str(good), "-m", "CLI GP", "--wait", "--progress")
    assert submitted.code == 0, submitted
    entry = orm(lambda: Submission.objects.get(user__username="terminal", method="CLI GP"))
    assert wait_final(stack, [entry.pk]) == {entry.pk: "scored"}
    out = submitted.out.splitlines()
    assert out[0].startswith(f"Submitted: submission {entry.pk} (")
    assert f"Submission {entry.pk} (stack / sines, 'CLI GP'): scored" in out
    assert "Left out (not prediction files): notes.md" in submitted.err
    assert "\rupload predictions.zip [" in submitted.err
    nlpd = orm(lambda: Score.objects.get(submission=entry, split="val", loss="nlpd").value)
    header = next(line.split() for line in out if line.startswith("split"))
    val = next(line.split() for line in out if line.startswith("val "))
    assert dict(zip(header, val, strict=True))["nlpd"] == f"{nlpd:.6g}"

    # List one's submissions: newest first, filtered by status.
    mine = puc("submissions", "--challenge", "stack")
    assert mine.code == 0, mine
    ids = [int(line.split()[0]) for line in mine.out.splitlines()[2:]]
    assert ids[:2] == [entry.pk, invalid.pk]
    scored = puc("submissions", "--status", "scored").out.splitlines()[2:]
    assert [int(line.split()[0]) for line in scored] == [entry.pk]

    # The leaderboard, printed and saved as the site's CSV.
    board = puc("leaderboard", "stack", "sines", "--view", "all", "--limit", "500")
    assert board.code == 0, board
    assert any("CLI GP" in line and "Terminal" in line for line in board.out.splitlines())
    saved = tmp_path / "sines.csv"
    assert puc("leaderboard", "stack", "sines", "--csv", "-o", str(saved)).code == 0
    site_csv = Client(stack.base_url).get("/challenges/stack/datasets/sines/leaderboard.csv")
    for _ in range(60):  # a worker builds the file: 202 while it is being prepared
        if site_csv.status != 202:
            break
        time.sleep(1)
        site_csv = Client(stack.base_url).get("/challenges/stack/datasets/sines/leaderboard.csv")
    assert site_csv.status == 200, site_csv
    site_rows = list(csv.reader(io.StringIO(site_csv.body.decode())))
    assert int(site_csv.headers["X-Row-Count"]) == len(site_rows) - 1
    assert saved.read_bytes() == site_csv.body
    methods = [row["method"] for row in csv.DictReader(io.StringIO(saved.read_text()))]
    assert "CLI GP" in methods


def test_wrong_token_and_no_site_are_one_line_errors(stack, puc):
    refused = puc("whoami", "--url", stack.base_url, "--token", "0" * 40)
    assert (refused.code, refused.err) == (3, "puc: the token was refused: run `puc login`\n")
    down = puc("challenges", "--url", "http://127.0.0.1:9")
    assert down.code == 6 and down.err.startswith("puc: cannot reach http://127.0.0.1:9: ")
    assert "Traceback" not in refused.err + down.err


def test_a_team_forms_by_its_link_and_withdraws_an_entry(stack, challenge, puc, tmp_path):
    _, turing = make_user("cli_turing")
    _, hopper = make_user("cli_hopper")
    url = ["--url", stack.base_url]

    # Turing creates the team; Hopper joins with the link Turing was shown.
    created = puc("team", "stack", "create", "Bletchley", *url, token=turing)
    assert created.code == 0, created
    link = created.out.splitlines()[-1].removeprefix("Invitation link: ")
    assert link.startswith(f"{stack.base_url}/challenges/stack/team/join/")
    joined = puc("team", "stack", "join", link, *url, token=hopper)
    assert joined.code == 0, joined
    assert joined.out.splitlines()[0] == "Joined the team 'Bletchley'."
    for token in (turing, hopper):
        shown = puc("team", "stack", *url, token=token).out.splitlines()
        assert shown[0] == "Team 'Bletchley' in stack: 2 of at most 5 members"
        assert [line.split()[0] for line in shown[3:5]] == ["cli_turing", "cli_hopper"]
    assert orm(
        lambda: sorted(
            Membership.objects.filter(team__name="Bletchley", challenge__slug="stack").values_list(
                "user__username", flat=True
            )
        )
    ) == ["cli_hopper", "cli_turing"]

    # Hopper's entry is the team's: Turing lists it and withdraws it.
    spec = challenge["datasets"]["sines"]
    entry_zip = tmp_path / "team.zip"
    entry_zip.write_bytes(prediction_zip("sines", spec, seed=7))
    sent = puc("submit", "stack", str(entry_zip), "-m", "Colossus", "--wait", *url, token=hopper)
    assert sent.code == 0, sent
    entry = orm(lambda: Submission.objects.get(user__username="cli_hopper", method="Colossus"))
    listed = puc("submissions", "--challenge", "stack", *url, token=turing)
    assert [int(line.split()[0]) for line in listed.out.splitlines()[2:]] == [entry.pk]
    every = ["leaderboard", "stack", "sines", "--view", "all", "--limit", "500", *url]
    assert "Colossus" in puc(*every, token=turing).out
    unasked = puc("withdraw", str(entry.pk), *url, token=turing)
    assert unasked.code == 2 and "--yes" in unasked.err
    withdrawn = puc("withdraw", str(entry.pk), "--yes", *url, token=turing)
    assert withdrawn.code == 0, withdrawn
    assert withdrawn.out.startswith(f"Withdrew submission {entry.pk} (")
    assert orm(lambda: Submission.objects.get(pk=entry.pk).withdrawn_at) is not None
    board = puc(*every, token=turing)
    assert board.code == 0, board
    assert "Colossus" not in board.out
