"""leaderboard.exports: the CSV export: the page's rows, in the page's order, under the
page's rules (the JSON of the API: test_api.py)."""

import csv
import io

import pytest
from django.conf import settings
from django.test import Client

from challenge_site.leaderboard.display import NOT_COMPUTED
from scoring import losses_for
from scoring.plugins import is_plugin

from .helpers import add_entry, all_page_rows, at, cls

BOARD = "/challenges/demo/datasets/catalysis/leaderboard"
API = "/api/v1/challenges/demo/datasets/catalysis/leaderboard/"


def plugin_losses(task: str) -> list[str]:
    """The task's installed plug-in losses (spec §9, e.g. plugins/floorlog), after the
    built-in ones; each has per-example terms, hence intervals."""
    return [loss.name for loss in losses_for(task) if is_plugin(loss)]


def csv_rows(response) -> list[dict]:
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    text = b"".join(response.streaming_content).decode()
    return list(csv.DictReader(io.StringIO(text)))


@pytest.mark.parametrize(
    "query",
    ["sort=nlp", "sort=01l", "sort=lift", "sort=nlp&view=best", "sort=01l&view=best", "sort=ece"],
)
def test_the_csv_has_the_pages_rows_in_the_pages_order(many, query):
    client = Client()
    ids, values = all_page_rows(client, query)
    rows = csv_rows(client.get(f"{BOARD}.csv?{query}"))
    assert [int(row["submission"]) for row in rows] == ids
    losses = [loss.name for loss in losses_for("classification")]  # every column of the page
    # A loss added after an entry was scored (a plug-in's, here): the page's note, an empty
    # CSV cell.
    values = [["" if value == NOT_COMPUTED else value for value in row] for row in values]
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
        "certain",
        "slice",  # empty: the whole split (a slice's board names its slice)
        "nlp",
        "01l",
        "lift",
        "brier",
        "ece",
        "rauc",
        "aurc",
        *plugin_losses("classification"),
        "nlp_gain_over_baseline_bans",
        *(
            f"{loss}_{column}"
            for loss in ("nlp", "01l", "brier", *plugin_losses("classification"))
            for column in (
                "lower",
                "upper",
                "vs_leader_lower",
                "vs_leader_upper",
                "vs_baseline_lower",
                "vs_baseline_upper",
                "indistinguishable_from_leader",
                "heavy_tail",
                "vs_leader_heavy_tail",
                "vs_baseline_heavy_tail",
            )
        ),
        "rank_interval_lower",
        "rank_interval_upper",
        "rank_interval_heavy_tail",
    ]
    baseline = next(row for row in rows if row["baseline"] == "yes")
    assert (baseline["method"], baseline["nlp_gain_over_baseline_bans"]) == ("Baseline", "0.0")
    infinite = next(row for row in rows if row["nlp"] == "inf")
    assert infinite["nlp_gain_over_baseline_bans"] == "-inf" and infinite["lift"] == "n/a"
    point = next(row for row in rows if row["non_probabilistic"] == "yes")
    assert point["nlp"] == "n/a" and point["mark"] == "<"
    # Built by a worker, which has no request: links start with SITE_URL.
    assert point["url"] == f"{settings.SITE_URL}/submissions/{point['submission']}/"
    response = Client().get(f"{BOARD}.csv?sort=01l&view=best")
    assert 'filename="demo-catalysis-val-01l-best.csv"' in response["Content-Disposition"]


def test_the_csv_keeps_spreadsheet_formulas_inert(catalysis, ada):
    add_entry(catalysis, user=ada, created=at(0), val=cls(0.3, 0.2), method="=HYPERLINK(1)")
    add_entry(catalysis, user=ada, created=at(1), val=cls(0.4, 0.2), authors="@SUM(A1)")
    rows = csv_rows(Client().get(f"{BOARD}.csv"))
    assert rows[0]["method"] == "'=HYPERLINK(1)" and rows[1]["authors"] == "'@SUM(A1)"
    assert Client().get(f"{BOARD}.csv?sort=nope").status_code == 400


def test_a_multiclass_csv_and_json_carry_every_loss_and_the_intervals_of_three(shapes_entries):
    shapes, entries = shapes_entries
    board = "/challenges/demo/datasets/shapes/leaderboard"
    rows = csv_rows(Client().get(f"{board}.csv?split=val&sort=ace"))
    plugins = plugin_losses("multiclass")
    losses = ["nlp", "brier", "01l", "ece", "rmsce", "sce", "ace", "rauc", "aurc", *plugins]
    header = list(rows[0])
    assert header[10:12] == ["certain", "slice"]
    assert header[12 : 13 + len(losses)] == [*losses, "nlp_gain_over_baseline_nats"]
    assert [name for name in header if name.endswith("_vs_leader_lower")] == [
        "nlp_vs_leader_lower",
        "brier_vs_leader_lower",
        "01l_vs_leader_lower",
        *(f"{name}_vs_leader_lower" for name in plugins),
    ]
    by_id = {int(row["submission"]): row for row in rows}
    assert sorted(by_id) == sorted(s.pk for s in entries)
    for submission in entries:
        for score in submission.scores.filter(split="val"):
            assert float(by_id[submission.pk][score.loss]) == pytest.approx(score.value, rel=1e-9)
        assert by_id[submission.pk]["nlp_lower"] != ""
    body = Client().get(f"/api/v1{board}/", {"split": "val", "sort": "sce"}).json()
    assert [row["submission"] for row in body["results"]] == [
        int(r["submission"]) for r in csv_rows(Client().get(f"{board}.csv?split=val&sort=sce"))
    ]
    first = body["results"][0]
    assert list(first["scores"]) == losses
    assert set(first["intervals"]) == {"nlp", "brier", "01l", *plugins}
