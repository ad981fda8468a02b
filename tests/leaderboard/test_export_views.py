"""leaderboard.export_views: the whole-board downloads answer a complete file (with its
row count and sha256), 202 while it is being prepared, an error when it failed; never
a truncated 200, never another audience's file; hidden boards 403 before anything."""

import base64
import csv
import hashlib
import io
import json

import pytest
from django.test import Client

from challenge_site.leaderboard import export_files
from challenge_site.leaderboard.generation import bump
from challenge_site.leaderboard.models import BoardExport

from .helpers import add_entry, at, client_for, cls

BOARD = "/challenges/demo/datasets/catalysis/leaderboard"
STATUS = f"{BOARD}/export/"
SECRET = "0.8642097531"


@pytest.fixture
def entries(catalysis, ada, grace):
    add_entry(catalysis, created=at(-5), val=cls(0.3, 0.4), test=cls(0.3, 0.4), baseline=True)
    add_entry(catalysis, user=ada, created=at(0), val=cls(0.2, 0.3), test=cls(0.8642097531, 0.3))
    add_entry(catalysis, user=grace, created=at(1), val=cls(0.25, 0.3), test=cls(0.4, 0.3))
    return catalysis


@pytest.fixture
def no_worker(monkeypatch):
    """A broker and no worker yet: builds are sent, not run."""
    sent = []
    monkeypatch.setattr(export_files, "send", sent.append)
    return sent


def body(response) -> bytes:
    return b"".join(response.streaming_content) if response.streaming else response.content


def assert_whole(response) -> bytes:
    """A 200 whose bytes match its row count, length and checksums."""
    assert response.status_code == 200
    data = body(response)
    digest = hashlib.sha256(data).digest()
    assert response["X-Content-SHA256"] == digest.hex()
    assert response["Repr-Digest"] == f"sha-256=:{base64.b64encode(digest).decode()}:"
    assert int(response["Content-Length"]) == len(data)
    return data


def test_the_csv_is_served_whole_with_its_row_count_and_sha256(entries):
    response = Client().get(f"{BOARD}.csv?sort=01l")
    data = assert_whole(response)
    rows = list(csv.DictReader(io.StringIO(data.decode())))
    assert int(response["X-Row-Count"]) == len(rows) == 3
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert 'filename="demo-catalysis-val-01l-all.csv"' in response["Content-Disposition"]
    assert "private" in response["Cache-Control"] and "no-cache" in response["Cache-Control"]
    again = Client().get(f"{BOARD}.csv?sort=01l", HTTP_IF_NONE_MATCH=response["ETag"])
    assert again.status_code == 304


def test_the_json_is_the_whole_board_with_its_count(entries):
    response = Client().get(f"{BOARD}.json?view=best")
    document = json.loads(assert_whole(response))
    assert document["count"] == int(response["X-Row-Count"]) == len(document["results"]) == 3
    assert response["Content-Type"] == "application/json"
    api = Client().get(f"/api/v1{BOARD}/", {"view": "best"}).json()["results"]
    assert [row["submission"] for row in document["results"]] == [r["submission"] for r in api]


def test_while_being_prepared_the_download_answers_202_and_the_page_says_so(entries, no_worker):
    response = Client().get(f"{BOARD}.csv?sort=01l")
    assert response.status_code == 202
    assert response["Retry-After"] == "5"
    assert response["Location"] == f"{STATUS}?split=val&sort=01l&view=all&format=csv"
    assert "being prepared" in response.content.decode()
    assert len(no_worker) == 1
    page = Client().get(response["Location"])
    assert page.status_code == 200
    text = page.content.decode()
    assert '<meta http-equiv="refresh" content="5">' in text and "Being prepared" in text
    assert len(no_worker) == 1  # single flight: the page asks again, nothing more is sent
    export_files.build(export_id=no_worker[0])  # the worker
    assert_whole(Client().get(f"{BOARD}.csv?sort=01l"))
    ready = Client().get(response["Location"]).content.decode()
    row = BoardExport.objects.get()
    assert "Ready." in ready and row.sha256 in ready and "refresh" not in ready
    assert f'href="{BOARD}.csv?split=val&amp;sort=01l&amp;view=all"' in ready


def test_a_stale_file_is_never_served(entries, no_worker):
    export_files.build(export_id=_prepare(f"{BOARD}.csv", no_worker))
    assert Client().get(f"{BOARD}.csv").status_code == 200
    bump(dataset_id=entries.pk)  # a new entry, say
    assert Client().get(f"{BOARD}.csv").status_code == 202


def _prepare(url, sent) -> int:
    assert Client().get(url).status_code == 202
    return sent[-1]


def test_a_failed_build_answers_an_error_and_the_page_offers_a_retry(
    entries, monkeypatch, no_worker
):
    export_id = _prepare(f"{BOARD}.csv", no_worker)

    def broken(board, *, fmt, out):
        raise OSError("disk full")

    monkeypatch.setattr(export_files, "write", broken)
    with pytest.raises(OSError):
        export_files.build(export_id=export_id)
    response = Client().get(f"{BOARD}.csv")
    assert response.status_code == 503
    assert "could not be written or saved to the storage" in response.content.decode()
    assert "disk full" not in response.content.decode()  # details go to the log
    page = Client().get(f"{STATUS}?format=csv").content.decode()
    assert (
        "could not be built" in page and 'method="post"' in page and "csrfmiddlewaretoken" in page
    )
    assert len(no_worker) == 1  # a GET does not try a failed build again
    client = Client(enforce_csrf_checks=True)
    assert client.post(f"{STATUS}?format=csv").status_code == 403  # no CSRF token
    retry = Client().post(f"{STATUS}?split=val&sort=nlp&view=all&format=csv")
    assert retry.status_code == 302 and len(no_worker) == 2
    monkeypatch.undo()
    monkeypatch.setattr(export_files, "send", no_worker.append)
    export_files.build(export_id=export_id)
    assert_whole(Client().get(f"{BOARD}.csv"))


def test_hidden_boards_answer_403_before_anything(entries, no_worker):
    for url in (f"{BOARD}.csv?split=test", f"{BOARD}.json?split=test", f"{STATUS}?split=test"):
        response = Client().get(url)
        assert response.status_code == 403 and SECRET not in response.content.decode()
    assert not BoardExport.objects.exists() and no_worker == []


def test_an_organisers_file_is_never_served_to_anyone_else(entries, organiser, published):
    published.results_published = False
    published.save()
    mine = client_for(organiser).get(f"{BOARD}.csv?split=test")
    assert SECRET in assert_whole(mine).decode()
    assert BoardExport.objects.get().audience == "organisers"
    assert Client().get(f"{BOARD}.csv?split=test").status_code == 403
    published.results_published = True
    published.save()
    theirs = Client().get(f"{BOARD}.csv?split=test")
    assert_whole(theirs)
    rows = BoardExport.objects.order_by("pk")
    assert [row.audience for row in rows] == ["organisers", "public"]
    assert rows[0].file != rows[1].file


def test_bad_options_answer_400(entries):
    assert Client().get(f"{BOARD}.json?sort=nope").status_code == 400
    response = Client().get(f"{STATUS}?format=xlsx")
    assert response.status_code == 400 and "format" in response.content.decode()


def test_the_ladders_board_still_downloads_directly(entries, ada):
    entries.challenge.feedback = "ladder"
    entries.challenge.save()
    with_time = Client()
    from time_machine import travel

    with travel(at(10), tick=False):
        response = with_time.get(f"{BOARD}.csv")
        assert response.status_code == 200 and response.streaming
        assert body(response).decode().startswith("rank,participant,method")
        document = json.loads(body(with_time.get(f"{BOARD}.json")))
        assert document["view"] == "ladder" and document["count"] == len(document["results"])
        assert with_time.get(STATUS).status_code == 403
    assert not BoardExport.objects.exists()
