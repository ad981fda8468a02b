"""CSV and JSON exports: the page's rows, in the page's order, under the page's rules."""

import csv
import io

import pytest
from django.test import Client
from rest_framework.test import APIClient

from .helpers import INF, add_entry, at, cls, page_exact_values, page_ids, point_only_cls

BOARD = "/challenges/demo/datasets/catalysis/leaderboard"
API = "/api/v1/challenges/demo/datasets/catalysis/leaderboard/"


@pytest.fixture
def many(catalysis, ada, grace, alan):
    """70 entries of three participants: ties, infinities, n/a and point-only files."""
    add_entry(catalysis, created=at(-10), val=cls(0.7, 0.5), baseline=True, method="Baseline")
    users = [ada, grace, alan]
    for i in range(69):
        if i % 10 == 3:
            scores = point_only_cls(0.1 + i / 1000)
        elif i % 10 == 5:
            scores = cls(INF, 0.2, lift=None)
        else:
            scores = cls(0.5 + (i % 7) / 10, 0.3 - (i % 5) / 100, lift=0.4 + (i % 3) / 10)
        add_entry(catalysis, user=users[i % 3], created=at(i), val=scores, method=f"Method {i}")


def csv_rows(response) -> list[dict]:
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    text = b"".join(response.streaming_content).decode()
    return list(csv.DictReader(io.StringIO(text)))


def all_page_rows(client, query: str):
    ids, values, number = [], [], 1
    while True:
        response = client.get(f"{BOARD}/?{query}&page={number}")
        if response.status_code == 404:
            return ids, values
        ids += page_ids(response)
        values += page_exact_values(response)
        number += 1


@pytest.mark.parametrize(
    "query",
    ["sort=nlp", "sort=01l", "sort=lift", "sort=nlp&view=best", "sort=01l&view=best", "sort=ece"],
)
def test_the_csv_has_the_pages_rows_in_the_pages_order(many, query):
    client = Client()
    ids, values = all_page_rows(client, query)
    rows = csv_rows(client.get(f"{BOARD}.csv?{query}"))
    assert [int(row["submission"]) for row in rows] == ids
    losses = ["nlp", "01l", "lift", "brier", "ece"]
    assert [[row[loss] for loss in losses] for row in rows] == values
    ranked = [row["rank"] for row in rows if row["rank"]]
    assert ranked == [str(i) for i in range(1, len(ranked) + 1)]
    assert all(row["rank"] == "" for row in rows[len(ranked) :])  # n/a: unranked, last


def test_the_csv_has_every_row_not_one_page(many):
    rows = csv_rows(Client().get(f"{BOARD}.csv?sort=01l"))
    assert len(rows) == 70  # 69 entries and the baseline, beyond the 50 of a page
    header = list(rows[0])
    assert header == [
        "rank",
        "submission",
        "url",
        "mark",
        "method",
        "authors",
        "participant",
        "created",
        "baseline",
        "non_probabilistic",
        "nlp",
        "01l",
        "lift",
        "brier",
        "ece",
        "nlp_gain_over_baseline_bans",
        *(
            f"{loss}_{column}"
            for loss in ("nlp", "01l", "brier")
            for column in (
                "lower",
                "upper",
                "vs_leader_lower",
                "vs_leader_upper",
                "vs_baseline_lower",
                "vs_baseline_upper",
                "indistinguishable_from_leader",
            )
        ),
        "rank_interval_lower",
        "rank_interval_upper",
    ]
    baseline = next(row for row in rows if row["baseline"] == "yes")
    assert (baseline["method"], baseline["nlp_gain_over_baseline_bans"]) == ("Baseline", "0.0")
    infinite = next(row for row in rows if row["nlp"] == "inf")
    assert infinite["nlp_gain_over_baseline_bans"] == "-inf" and infinite["lift"] == "n/a"
    point = next(row for row in rows if row["non_probabilistic"] == "yes")
    assert point["nlp"] == "n/a" and point["mark"] == "<"
    assert point["url"] == f"http://testserver/submissions/{point['submission']}/"
    response = Client().get(f"{BOARD}.csv?sort=01l&view=best")
    assert 'filename="demo-catalysis-val-01l-best.csv"' in response["Content-Disposition"]


def test_the_csv_keeps_spreadsheet_formulas_inert(catalysis, ada):
    add_entry(catalysis, user=ada, created=at(0), val=cls(0.3, 0.2), method="=HYPERLINK(1)")
    add_entry(catalysis, user=ada, created=at(1), val=cls(0.4, 0.2), authors="@SUM(A1)")
    rows = csv_rows(Client().get(f"{BOARD}.csv"))
    assert rows[0]["method"] == "'=HYPERLINK(1)" and rows[1]["authors"] == "'@SUM(A1)"
    assert Client().get(f"{BOARD}.csv?sort=nope").status_code == 400


def test_api_rows(catalysis, ada):
    catalysis.challenge.results_published = True
    catalysis.challenge.save()
    baseline = add_entry(catalysis, created=at(-5), val=cls(0.29, 0.5), baseline=True)
    entry = add_entry(
        catalysis, user=ada, created=at(0), val=cls(INF, 0.25, lift=None), method="SVM + Platt"
    )
    body = APIClient().get(f"{API}?split=val&sort=nlp").json()
    assert (body["split"], body["sort"], body["view"], body["page"]) == ("val", "nlp", "all", 1)
    assert (body["next"], body["previous"]) == (None, None)
    first, second = body["results"]
    assert first == {
        "rank": 1,
        "submission": baseline.pk,
        "participant": "",
        "method": "Entry",
        "mark": "",
        "created": "2030-01-20T11:55:00Z",
        "scores": {"nlp": 0.29, "01l": 0.5, "lift": 0.5, "brier": 0.2, "ece": 0.1},
        "authors": "",
        "is_baseline": True,
        "non_probabilistic": False,
        "information_gain": 0.0,
        "url": f"http://testserver/submissions/{baseline.pk}/",
        "in_final_ranking": None,  # a validation board: no final selections
        # No interval computed for these rows (tests/leaderboard/test_intervals.py has them).
        "intervals": {"nlp": None, "01l": None, "brier": None},
        "vs_leader": {"nlp": None, "01l": None, "brier": None},
        "vs_baseline": {"nlp": None, "01l": None, "brier": None},
        "indistinguishable_from_leader": {"nlp": None, "01l": None, "brier": None},
        "rank_interval": None,
    }
    assert second["submission"] == entry.pk and second["participant"] == "Ada L."
    assert second["mark"] == "<" and second["method"] == "SVM + Platt"
    assert second["scores"]["nlp"] == "inf" and second["scores"]["lift"] is None
    assert second["information_gain"] == "-inf"


def test_api_pages_and_errors(many, catalysis):
    client = APIClient()
    body = client.get(f"{API}?sort=01l").json()
    assert len(body["results"]) == 50 and body["previous"] is None
    assert body["next"] == f"http://testserver{API}?split=val&sort=01l&view=all&page=2"
    second = client.get(body["next"]).json()
    assert len(second["results"]) == 20 and second["next"] is None
    assert second["previous"] == f"http://testserver{API}?split=val&sort=01l&view=all&page=1"
    assert second["results"][0]["rank"] == 51
    ids = [r["submission"] for r in body["results"] + second["results"]]
    assert ids == all_page_rows(Client(), "sort=01l")[0]
    assert client.get(f"{API}?sort=01l&page=3").status_code == 404

    response = client.get(f"{API}?sort=nlpd&split=train&view=x&page=0")
    assert response.status_code == 400
    assert set(response.json()) == {"sort", "split", "view"}
    response = client.get(f"{API}?split=test")
    assert response.status_code == 403
    assert "published with the results" in response.json()["detail"]
    assert client.get("/api/v1/challenges/demo/datasets/nope/leaderboard/").status_code == 404
