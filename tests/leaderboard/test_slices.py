"""Slices on the boards (scoring.md §8): the ``?slice=NAME`` selector of the leaderboard, its
API and CSV, validated, and never a hint of a slice the user may not see yet."""

import csv
import io

import pytest
import time_machine
from django.test import Client

from challenge_site.leaderboard import slices
from challenge_site.query_params import BadOptions
from tests.factories import VALIDATION, make_dataset

from .helpers import INF, add_entry, add_slices, at, client_for, cls, page_exact_values, page_ids
from .helpers import sliced as on

BOARD = "/challenges/demo/datasets/catalysis/leaderboard/"
API = "/api/v1/challenges/demo/datasets/catalysis/leaderboard/"
CSV = "/challenges/demo/datasets/catalysis/leaderboard.csv"


@pytest.fixture
def labelled(catalysis, ada, grace, alan):
    """Catalysis's 4 validation examples labelled shifted, in, in, shifted (and its test
    examples too); the entries' whole-split order differs from their order on a slice."""
    add_slices(catalysis, "val", ["shifted", "in", "in", "shifted"])
    add_slices(catalysis, "test", ["in", "in", "shifted", "in", "shifted"])

    def scores(whole, shifted, inside):
        return {**cls(*whole), **on(cls(*shifted), "shifted"), **on(cls(*inside), "in")}

    made = {
        "baseline": add_entry(
            catalysis,
            created=at(-5),
            val=scores((0.3, 0.4), (0.35, 0.5), (0.25, 0.3)),
            baseline=True,
        ),
        "ada": add_entry(
            catalysis, user=ada, created=at(0), val=scores((0.1, 0.2), (0.4, 0.5), (0.05, 0.1))
        ),
        "grace": add_entry(
            catalysis, user=grace, created=at(1), val=scores((0.2, 0.3), (0.15, 0.2), (0.3, 0.3))
        ),
        "alan": add_entry(
            catalysis, user=alan, created=at(2), val=scores((0.25, 0.3), (INF, 0.5), (0.2, 0.2))
        ),
        "alan2": add_entry(
            catalysis, user=alan, created=at(3), val=scores((0.5, 0.5), (0.12, 0.1), (0.6, 0.5))
        ),
    }
    return made


def _ids(made, *names):
    return [made[name].pk for name in names]


def test_names_come_in_order_of_first_appearance(labelled, catalysis):
    assert slices.names(catalysis, "val") == ["shifted", "in"]
    assert slices.names(catalysis, "test") == ["in", "shifted"]
    assert slices.membership(catalysis, "val").tolist() == ["shifted", "in", "in", "shifted"]
    assert slices.names(catalysis, "public") == []  # never a part of the test split's
    other = make_dataset(catalysis.challenge, "plain", task="classification")
    assert slices.membership(other, "val") is None and slices.names(other, "val") == []


def test_a_slice_board_ranks_the_slice_scores(labelled):
    whole = Client().get(BOARD)
    assert page_ids(whole) == _ids(labelled, "ada", "grace", "alan", "baseline", "alan2")
    response = Client().get(BOARD + "?slice=shifted")
    assert response.status_code == 200
    # nlp@shifted: alan2 0.12, grace 0.15, baseline 0.35, ada 0.4, alan inf.
    assert page_ids(response) == _ids(labelled, "alan2", "grace", "baseline", "ada", "alan")
    first = page_exact_values(response)[0]
    assert first[:2] == ["0.12", "0.1"]  # the slice's nlp and 01l, not the split's
    assert "slice shifted" in response.content.decode()
    inside = Client().get(BOARD + "?slice=in&sort=01l")
    # 01l@in: ada 0.1, alan 0.2, the baseline and grace 0.3 (in order of time), alan2 0.5.
    assert page_ids(inside) == _ids(labelled, "ada", "alan", "baseline", "grace", "alan2")


def test_best_per_participant_on_a_slice(labelled):
    response = Client().get(BOARD + "?slice=shifted&view=best")
    assert response.status_code == 200
    # Alan's best on the shifted slice is his second entry (his first is inf there).
    assert page_ids(response) == _ids(labelled, "alan2", "grace", "baseline", "ada")
    whole = Client().get(BOARD + "?view=best")
    assert page_ids(whole) == _ids(labelled, "ada", "grace", "alan", "baseline")


def test_the_selector_links_every_visible_slice_and_keeps_the_other_options(labelled):
    page = Client().get(BOARD + "?sort=01l&view=best").content.decode()
    assert "Slice:" in page
    assert "slice=shifted" in page and "slice=in" in page
    on_slice = Client().get(BOARD + "?slice=in").content.decode()
    # "Whole split" drops the slice; the other slice keeps the sort and view.
    assert 'split=val&amp;sort=nlp&amp;view=all">Whole split' in on_slice
    assert 'split=val&amp;sort=nlp&amp;view=all&amp;slice=shifted"' in on_slice
    assert '<strong aria-current="page">in</strong>' in on_slice
    assert "split=val&amp;sort=01l&amp;view=all&amp;slice=in" in on_slice


@pytest.mark.parametrize("value", ["nosuch", "Shifted", "x" * 300, "<b>in</b>", "in\n"])
def test_an_unknown_slice_is_a_field_error(labelled, value):
    response = Client().get(BOARD, {"slice": value})
    assert response.status_code == 400
    assert "slice" in response.content.decode()
    api = Client().get(API, {"slice": value})
    assert api.status_code == 400
    assert set(api.json()) == {"slice"}
    assert "expected one of shifted, in" in api.json()["slice"]


def test_a_hidden_slice_reads_as_one_that_does_not_exist(labelled, catalysis):
    """Before publication the test split's slices are nobody's business but the organisers':
    naming one gets the answer a dataset without slices gives, word for word."""
    plain = make_dataset(catalysis.challenge, "plain", task="classification")
    add_entry(plain, created=at(0), val=cls(0.3, 0.3), test=cls(0.3, 0.3), baseline=True)
    for url in (API, BOARD):
        for name in ("in", "nosuch"):
            hidden = Client().get(url, {"split": "test", "slice": name})
            none = Client().get(url.replace("catalysis", "plain"), {"split": "test", "slice": name})
            assert hidden.status_code == none.status_code == 400
            assert hidden.content.replace(b"catalysis", b"plain") == none.content
    page = Client().get(BOARD + "?split=test").content.decode()
    assert "slice=" not in page and "Slice" not in page


def test_validation_slices_wait_for_the_validation_targets(labelled, catalysis, organiser):
    with time_machine.travel(VALIDATION, tick=False):
        page = Client().get(BOARD).content.decode()
        assert "slice=" not in page and "Slice:" not in page
        assert Client().get(BOARD, {"slice": "shifted"}).status_code == 400
        assert Client().get(API, {"slice": "shifted"}).json() == {"slice": slices.NONE_SHOWN}
        # Organisers see everything of their challenge at any time.
        assert client_for(organiser).get(BOARD, {"slice": "shifted"}).status_code == 200


def test_the_forest_plot_of_a_slice_board(labelled):
    from .helpers import set_interval

    for name, own in (("alan2", (0.1, 0.14)), ("grace", (0.12, 0.2)), ("ada", (0.3, 0.5))):
        set_interval(labelled[name], "nlp@shifted", own=own)
    page = Client().get(BOARD + "?slice=shifted").content.decode()
    assert "forest.svg?split=val&amp;sort=nlp&amp;view=all&amp;slice=shifted" in page
    response = Client().get(BOARD + "forest.svg", {"slice": "shifted"})
    assert response.status_code == 200 and response["Content-Type"] == "image/svg+xml"
    assert "slice shifted of the validation split" in response.content.decode()
    assert Client().get(BOARD + "forest.svg", {"slice": "nosuch"}).status_code == 400


def test_the_plot_of_a_slice_board(labelled):
    """The ranking loss against the point loss on the slice: its own points and title."""
    page = Client().get(BOARD + "?slice=shifted").content.decode()
    assert "plot.svg?split=val&amp;slice=shifted" in page
    # One entry is infinite on the slice (alan): left out and counted; none on the split.
    assert "1 entry with an infinite or n/a nlp or 01l is left out." in page
    assert "left out." not in Client().get(BOARD).content.decode()
    slice_svg = Client().get(BOARD + "plot.svg", {"slice": "shifted"})
    whole_svg = Client().get(BOARD + "plot.svg")
    assert slice_svg.status_code == whole_svg.status_code == 200
    assert slice_svg["ETag"] != whole_svg["ETag"]
    assert "validation split, slice shifted" in slice_svg.content.decode()
    assert "slice" not in whole_svg.content.decode()
    assert Client().get(BOARD + "plot.svg", {"slice": "nosuch"}).status_code == 400


def test_the_api_ranks_a_slice(labelled):
    body = Client().get(API, {"slice": "shifted"}).json()
    assert body["slice"] == "shifted"
    assert [row["submission"] for row in body["results"]] == _ids(
        labelled, "alan2", "grace", "baseline", "ada", "alan"
    )
    assert body["results"][0]["scores"]["nlp"] == 0.12
    assert body["results"][-1]["scores"]["nlp"] == "inf"
    # The gain is the baseline's slice score minus the entry's.
    assert body["results"][0]["information_gain"] == pytest.approx(0.35 - 0.12)
    assert Client().get(API).json()["slice"] is None


def test_the_csv_has_a_slice_column(labelled):
    response = Client().get(CSV, {"slice": "in"})
    assert response.status_code == 200
    assert "val-in-nlp-all.csv" in response["Content-Disposition"]
    rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert {row["slice"] for row in rows} == {"in"}
    assert [row["nlp"] for row in rows] == ["0.05", "0.2", "0.25", "0.3", "0.6"]
    whole = Client().get(CSV)
    rows = list(csv.DictReader(io.StringIO(b"".join(whole.streaming_content).decode())))
    assert {row["slice"] for row in rows} == {""}
    assert Client().get(CSV, {"slice": "nosuch"}).status_code == 400


def test_parse_names_the_visible_slices(labelled, catalysis):
    now = VALIDATION.replace(month=3)
    anonymous = Client().get("/").wsgi_request.user
    assert slices.parse(catalysis, "val", None, user=anonymous, now=now) == ("", ["shifted", "in"])
    assert slices.parse(catalysis, "val", "in", user=anonymous, now=now) == (
        "in",
        ["shifted", "in"],
    )
    with pytest.raises(BadOptions) as caught:
        slices.parse(catalysis, "test", "in", user=anonymous, now=now)
    assert caught.value.errors == {"slice": "no slice of that name can be shown on this board"}


def test_keys_join_and_split():
    assert slices.key("nlp", "shifted") == "nlp@shifted" and slices.key("nlp", "") == "nlp"
    assert slices.split_key("nlp@shifted") == ("nlp", "shifted")
    assert slices.split_key("crps") == ("crps", "")
