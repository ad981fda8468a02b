"""Logging in, listing, downloading and leaderboards against the live site."""

import csv
import hashlib
import io
import json
import os
import stat
import urllib.request
import zipfile

from puc_client import config, errors

from tests.factories import dataset_files
from tests.submissions.helpers import predictions


def test_login_checks_the_token_and_saves_it_0600(puc, live_server, ada, environ, tmp_path):
    result = puc("login", "--url", live_server.url, stdin=ada["token"] + "\n")
    assert result.code == errors.OK, result
    assert result.out == f"Logged in to {live_server.url} as ada.\n"
    path = tmp_path / "config" / "puc.json"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert config.load(path) == {"url": live_server.url, "token": ada["token"]}
    # Later commands need neither --url nor --token.
    assert puc("whoami").out == f"ada (Ada L.) on {live_server.url}\n"
    assert puc("logout").out == f"Token removed from {path}.\n"
    assert config.load(path) == {"url": live_server.url}
    assert puc("whoami").code == errors.AUTH


def test_login_with_a_wrong_token_saves_nothing(puc, live_server, ada, tmp_path):
    result = puc("login", "--url", live_server.url, "--token", "f" * 40)
    assert result.code == errors.AUTH
    assert result.err == (
        f"puc: the token was refused by {live_server.url}: copy it again from "
        f"{live_server.url}/accounts/profile/\n"
    )
    assert not (tmp_path / "config" / "puc.json").exists()


def test_challenges_and_datasets(puc, site):
    listing = puc("challenges")
    assert listing.code == errors.OK
    header, rule, row = listing.out.splitlines()
    assert header.split() == ["challenge", "phase", "deadline", "title"]
    assert row.split()[:2] == ["live", "validation"] and row.endswith("Live challenge")
    datasets = puc("datasets", "live").out.splitlines()
    assert datasets[0] == "Live challenge (live): validation phase; submissions accept train, val"
    assert [line.split() for line in datasets[3:]] == [
        ["coins", "classification", "6", "4", "-", "3", "-"],
        ["gaze", "regression", "6", "4", "-", "3", "-"],
    ]


def test_download_streams_the_zip_with_a_progress_bar(puc, site, tmp_path):
    target = tmp_path / "data"
    target.mkdir()
    result = puc("download", "live", "gaze", "-o", str(target), "--extract", "--progress")
    assert result.code == errors.OK, result
    saved = target / "gaze.zip"
    assert result.out.splitlines()[0].startswith(f"Saved {saved} (")
    assert result.err.startswith("\rgaze.zip ") and result.err.endswith("\n")
    files = dataset_files("gaze", task="regression")
    with zipfile.ZipFile(saved) as archive:
        assert archive.read("gaze/gaze_train_targets.txt") == files["gaze_train_targets.txt"]
        assert "gaze/gaze_val_targets.txt" not in archive.namelist()  # not released yet
    assert (target / "gaze" / "gaze_val_inputs.txt").read_bytes() == files["gaze_val_inputs.txt"]
    assert not [p for p in target.iterdir() if p.name.endswith(".part")]


def test_download_of_an_unknown_dataset(puc, site, tmp_path):
    target = tmp_path / "data"
    target.mkdir()
    result = puc("download", "live", "nope", "-o", str(target))
    assert result.code == errors.REFUSED
    assert result.err == (
        "puc: no dataset 'nope' in challenge 'live' (or it has not opened): "
        "`puc datasets live` lists them\n"
    )
    assert list(target.iterdir()) == []


def test_leaderboard_table_json_and_the_sites_csv(puc, site, tmp_path):
    folder = tmp_path / "out"
    folder.mkdir()
    for name, data in predictions("gaze").items():
        (folder / name).write_bytes(data)
    submitted = puc("submit", "live", str(folder), "-m", "Curl GP", "--wait")
    assert submitted.code == errors.OK, submitted
    table = puc("leaderboard", "live", "gaze").out.splitlines()
    assert table[0] == "live / gaze: val split, sorted by nlpd, every entry"
    assert table[1].split()[:4] == ["rank", "participant", "method", "id"]
    rows = json.loads(puc("leaderboard", "live", "gaze", "--json").out)
    body = [line.split() for line in table[3 : 3 + len(rows)]]
    assert {row["method"] for row in rows} == {"Curl GP", "Baseline"}
    for row, line in zip(rows, body, strict=True):  # the table shows the API's rows in order
        assert int(line[0]) == row["rank"] and str(row["submission"]) in line
        assert f"{row['scores']['nlpd']:.6g}" in line
        who = "Ada L." if row["method"] == "Curl GP" else "(baseline)"
        assert " ".join(line).startswith(f"{row['rank']} {who} {row['method']}")

    saved = tmp_path / "board.csv"
    result = puc("leaderboard", "live", "gaze", "--csv", "-o", str(saved))
    assert result.code == errors.OK, result
    url = f"{site['url']}/challenges/live/datasets/gaze/leaderboard.csv"
    with urllib.request.urlopen(url) as response:
        assert saved.read_bytes() == response.read()  # the site's own CSV, byte for byte
    rows = list(csv.DictReader(io.StringIO(saved.read_text())))
    assert sorted(row["method"] for row in rows) == ["Baseline", "Curl GP"]
    printed = puc("leaderboard", "live", "gaze", "--csv").out
    assert printed == saved.read_bytes().decode()


def test_the_table_shows_marks_intervals_and_why_a_rank_is_missing():
    from puc_client.commands import board_table

    page = {"challenge": "c", "dataset": "d", "split": "test", "sort": "nlp", "view": "all"}
    common = {"participant": "Ada", "method": "GP", "authors": "", "is_baseline": False}
    rows = [
        {**common, "rank": 1, "submission": 7, "mark": "", "scores": {"nlp": 0.25},
         "intervals": {"nlp": [0.2, 0.3]}, "indistinguishable_from_leader": {"nlp": True},
         "heavy_tail": {"nlp": False}},
        {**common, "rank": 2, "submission": 8, "mark": ">", "scores": {"nlp": 0.5},
         "intervals": {"nlp": [0.4, 0.6]}, "indistinguishable_from_leader": {"nlp": False},
         "heavy_tail": {"nlp": True}},
        {**common, "rank": None, "submission": 9, "mark": "", "scores": {"nlp": None},
         "intervals": {"nlp": None}},
        {**common, "participant": "", "is_baseline": True, "rank": None, "submission": 1,
         "mark": "", "scores": {"nlp": 0.69}, "intervals": {"nlp": [0.6, 0.7]}},
    ]  # fmt: skip
    lines = board_table(page, rows).splitlines()
    assert lines[1].split() == ["rank", "participant", "method", "id", "mark", "nlp", "nlp",
                                "95%", "interval"]  # fmt: skip
    assert lines[3].endswith("0.25  ≈ [0.2, 0.3]")
    assert ">" in lines[4].split() and lines[4].endswith("[0.4, 0.6] †")
    assert "id 9: rank -, its nlp is n/a" in lines
    assert "id 1: rank -, the baseline, shown in its place, takes no rank" in lines
    assert "mark >: made after the deadline" in lines
    assert any(line.startswith("nlp 95% interval: paired bootstrap") for line in lines)


def test_a_bad_board_option_is_a_usage_error_with_the_sites_words(puc, site):
    result = puc("leaderboard", "live", "gaze", "--split", "bogus")
    assert result.code == errors.USAGE
    assert result.err.startswith("puc: the site refused the request: ")
    assert "bogus" in result.err
    csv = puc("leaderboard", "live", "gaze", "--split", "bogus", "--csv")
    assert csv.code == errors.USAGE


def test_hidden_test_board_gives_the_sites_reason(puc, site):
    result = puc("leaderboard", "live", "gaze", "--split", "test")
    assert result.code == errors.REFUSED
    assert result.err.startswith("puc: ") and "test" in result.err.lower()


class _Answer:
    def __init__(self, status, headers):
        self.status, self.headers = status, headers

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class _PreparingSite:
    """A site whose board file is being prepared twice, then ready; the first GET
    arrives after the board changed again (another file than the HEAD announced)."""

    def __init__(self, data: bytes):
        self.data, self.heads, self.gets = data, [202, 202, 200, 200], 0
        self.sha = hashlib.sha256(data).hexdigest()

    def url(self, path, params=None):
        return "http://site" + path

    def _headers(self, accept):
        return {}

    def _open(self, request):
        assert request.get_method() == "HEAD"
        status = self.heads.pop(0)
        headers = {"Retry-After": "5"} if status == 202 else {"X-Content-SHA256": self.sha}
        return _Answer(status, headers)

    def get_text(self, path, params=None):
        self.gets += 1
        return "being prepared\n" if self.gets == 1 else self.data.decode()


class _Clock:
    def __init__(self):
        self.now, self.slept = 0.0, []

    def monotonic(self):
        return self.now

    def sleep(self, seconds):
        self.slept.append(seconds)
        self.now += seconds


def test_the_csv_waits_while_the_site_prepares_it_and_checks_its_sha256():
    from puc_client.commands import Context, board_file

    site = _PreparingSite(b"rank,submission\n1,7\n")
    err = io.StringIO()
    ctx = Context(settings=None, api=site, stdout=io.StringIO(), stderr=err)
    clock = _Clock()
    text = board_file(ctx, "/b.csv", {}, output=None, clock=clock)
    assert text == "rank,submission\n1,7\n" and site.gets == 2
    assert clock.slept == [5, 5, 5]  # twice preparing, once a file that did not match
    assert err.getvalue() == "The site is preparing the board's file; waiting for it.\n"
