"""leaderboard.api: GET /api/v1/challenges/<slug>/datasets/<name>/leaderboard/: the
page's rows as JSON, paged, with the reasons for a refused query."""

from django.test import Client
from rest_framework.test import APIClient

from scoring import losses_for
from scoring.plugins import is_plugin

from .helpers import INF, add_entry, all_page_rows, at, cls

API = "/api/v1/challenges/demo/datasets/catalysis/leaderboard/"
# The installed plug-in losses (spec §9, e.g. plugins/floorlog): columns after the built-in
# ones, with terms (hence intervals); null in rows scored without them.
PLUGINS = [loss.name for loss in losses_for("classification") if is_plugin(loss)]


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
        "scores": {
            **{"nlp": 0.29, "01l": 0.5, "lift": 0.5, "brier": 0.2, "ece": 0.1},
            **{"rauc": 0.05, "aurc": 0.1},
            **dict.fromkeys(PLUGINS),  # not computed: added after this row was scored
        },
        "authors": "",
        "is_baseline": True,
        "non_probabilistic": False,
        "certain": None,  # no SplitResult: scored before the count was kept
        "information_gain": 0.0,
        "url": f"http://testserver/submissions/{baseline.pk}/",
        "in_final_ranking": None,  # a validation board: no final selections
        # No interval computed for these rows (tests/leaderboard/test_intervals.py has them).
        "intervals": dict.fromkeys(["nlp", "01l", "brier", *PLUGINS]),
        "vs_leader": dict.fromkeys(["nlp", "01l", "brier", *PLUGINS]),
        "vs_baseline": dict.fromkeys(["nlp", "01l", "brier", *PLUGINS]),
        "indistinguishable_from_leader": dict.fromkeys(["nlp", "01l", "brier", *PLUGINS]),
        "rank_interval": None,
        "heavy_tail": dict.fromkeys(["nlp", "01l", "brier", *PLUGINS]),
        "vs_leader_heavy_tail": dict.fromkeys(["nlp", "01l", "brier", *PLUGINS]),
        "vs_baseline_heavy_tail": dict.fromkeys(["nlp", "01l", "brier", *PLUGINS]),
        "rank_interval_heavy_tail": None,
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
