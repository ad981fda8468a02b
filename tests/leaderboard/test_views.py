"""leaderboard.views: what a leaderboard row shows: marks, the baseline, information
gain, links; and the page's cost in queries, which does not grow with the number of
submissions."""

import math

import numpy as np
import pytest
from django.test import Client

from challenge_site.leaderboard import services
from challenge_site.submissions.models import Status
from tests.factories import AFTER, TEST_PHASE, VALIDATION, dataset_files, make_dataset
from tests.pages import page_text

from .helpers import INF, add_entry, at, cls, page_ids, point_only_cls, reg

URL = "/challenges/demo/datasets/catalysis/leaderboard/"


def test_a_row_shows_mark_method_participant_authors_date_and_links(catalysis, ada, grace):
    before = add_entry(
        catalysis,
        user=ada,
        created=VALIDATION,
        val=cls(0.3, 0.2),
        method="Bayesian NN",
        authors="Neal, R",
        description="Hamiltonian Monte Carlo over the weights.",
    )
    during = add_entry(catalysis, user=grace, created=TEST_PHASE, val=cls(0.4, 0.2), method="SVM")
    after = add_entry(catalysis, user=grace, created=AFTER, val=cls(0.5, 0.2), method="R-MLP")
    response = Client().get(URL)
    html = response.content.decode()
    text = page_text(response)
    assert page_ids(response) == [before.pk, during.pk, after.pk]
    assert "1 < Bayesian NN Ada L. Neal, R 2030-01-20 12:00 0.3" in text
    assert "2 SVM grace 2030-02-03 12:00 0.4" in text
    assert "3 > R-MLP grace 2030-03-01 12:00 0.5" in text
    assert '<span class="mark" title="Made before the test phase">&lt;</span>' in html
    assert '<span class="mark" title="Made after the deadline">&gt;</span>' in html
    for submission in (before, during, after):
        assert f'href="/submissions/{submission.pk}/"' in html
    detail = Client().get(f"/submissions/{before.pk}/")
    assert "Hamiltonian Monte Carlo over the weights." in page_text(detail)


def test_the_baseline_is_highlighted_in_its_place(catalysis, ada, grace):
    better = add_entry(catalysis, user=ada, created=at(0), val=cls(0.2, 0.2))
    baseline = add_entry(catalysis, created=at(-5), val=cls(0.294, 0.409), baseline=True)
    worse = add_entry(catalysis, user=grace, created=at(1), val=cls(0.4, 0.2))
    response = Client().get(URL)
    assert page_ids(response) == [better.pk, baseline.pk, worse.pk]
    html = response.content.decode()
    assert html.count('<tr class="baseline">') == 1
    row = html.split('<tr class="baseline">')[1].split("</tr>")[0]
    assert f'href="/submissions/{baseline.pk}/"' in row and "tag-baseline" in row
    # Under the 0/1 loss the baseline is last: its place moves with the sort.
    assert page_ids(Client().get(URL + "?sort=01l")) == [better.pk, worse.pk, baseline.pk]


@pytest.mark.parametrize(
    ("base", "unit"), [(2.0, "bits"), (math.e, "nats"), (10.0, "bans"), (3.0, "base-3 log units")]
)
def test_information_gain_beside_the_ranking_loss(challenge, ada, grace, base, unit):
    dataset = make_dataset(challenge, "catalysis", task="classification", log_base=base)
    add_entry(dataset, created=at(-5), val=cls(0.9, 0.4), baseline=True)
    good = add_entry(dataset, user=ada, created=at(0), val=cls(0.65, 0.3))
    bad = add_entry(dataset, user=grace, created=at(1), val=cls(1.15, 0.3))
    hopeless = add_entry(dataset, user=grace, created=at(2), val=cls(INF, 0.3))
    hard = add_entry(dataset, user=grace, created=at(3), val=point_only_cls(0.1))

    board = services.parse_board(dataset=dataset, split="val", sort="01l", view=None)
    gains = {row.entry.pk: row.gain for row in services.leaderboard_page(board=board).rows}
    assert gains[good.pk] == pytest.approx(0.9 - 0.65)
    assert gains[bad.pk] == pytest.approx(0.9 - 1.15)
    assert gains[hopeless.pk] == -INF
    assert gains[hard.pk] is None

    text = page_text(Client().get(URL))
    assert f"Gain over baseline ({unit})" in text
    assert "nlp ▲ Gain over baseline" in text  # the column right after the ranking loss
    assert "0.65 +0.25 " in text and "1.15 -0.25 " in text and "∞ −∞ " in text
    assert "0.9 0 " in text  # the baseline itself


def test_information_gain_of_pipeline_scores_by_hand(challenge, ada, submit_zip, score_baseline):
    """Base 2: predicting 1/2 everywhere costs exactly 1 bit per example; the baseline
    predicts the training frequency f of class +1."""
    dataset = make_dataset(challenge, "catalysis", task="classification", seed=3, log_base=2.0)
    files = dataset_files("catalysis", task="classification", seed=3)
    train = np.array(files["catalysis_train_targets.txt"].split(), dtype=float)
    val = np.array(files["catalysis_val_targets.txt"].split(), dtype=float)
    f = np.mean(train == 1)
    baseline_nlp = -np.mean(np.where(val == 1, np.log2(f), np.log2(1 - f)))

    score_baseline(dataset, now=at(-60))
    half = submit_zip(
        ada, dataset.challenge, {"catalysis_val_predict.txt": b"0.5\n" * 4}, now=VALIDATION
    )
    assert half.status == Status.SCORED
    board = services.parse_board(dataset=dataset, split="val", sort=None, view=None)
    rows = {row.entry.pk: row for row in services.leaderboard_page(board=board).rows}
    assert rows[half.pk].value("nlp") == pytest.approx(1.0)
    assert rows[half.pk].gain == pytest.approx(baseline_nlp - 1.0)
    assert "Gain over baseline (bits)" in page_text(Client().get(URL))


def test_pipeline_entries_infinite_and_point_only(
    catalysis, ada, grace, submit_zip, score_baseline
):
    """Real zips: probabilities, a hard 0/1 file and a certain mistake (nlp = ∞)."""
    targets = dataset_files("catalysis", task="classification", seed=3)[
        "catalysis_val_targets.txt"
    ].split()
    right = b"".join(b"0.8\n" if t == b"1" else b"0.2\n" for t in targets)
    hard = b"".join(b"1\n" if t == b"1" else b"0\n" for t in targets)
    wrong_for_sure = b"".join(b"0\n" if t == b"1" else b"0.5\n" for t in targets)
    baseline = score_baseline(catalysis, now=at(-60))
    soft = submit_zip(
        ada, catalysis.challenge, {"catalysis_val_predict.txt": right}, now=at(0), method="Soft"
    )
    sure = submit_zip(
        grace, catalysis.challenge, {"catalysis_val_predict.txt": hard}, now=at(1), method="Hard"
    )
    oops = submit_zip(
        grace, catalysis.challenge, {"catalysis_val_predict.txt": wrong_for_sure}, now=at(2)
    )

    response = Client().get(URL)
    assert page_ids(response) == [soft.pk, baseline.pk, oops.pk]
    assert "∞" in page_text(response)
    response = Client().get(URL + "?sort=01l")
    assert page_ids(response)[:2] == [soft.pk, sure.pk]  # both 0/1 loss 0: by time
    assert "point predictions" in page_text(response)


def test_gain_of_a_loss_that_is_not_a_log_loss_is_in_its_own_units(catalysis, ada):
    catalysis.ranking_loss = "brier"
    catalysis.save()
    add_entry(catalysis, created=at(-5), val=cls(0.9, 0.4, brier=0.25), baseline=True)
    add_entry(catalysis, user=ada, created=at(0), val=cls(0.65, 0.3, brier=0.2))
    text = page_text(Client().get(URL))
    assert "Gain over baseline (brier units)" in text and "bans" not in text
    assert "0.2 +0.05 " in text
    header = Client().get(URL.replace("leaderboard/", "leaderboard.csv"))
    assert "brier_gain_over_baseline_brier_units" in b"".join(header.streaming_content).decode()


def test_regression_page_with_samples_and_nmse_normalised_by_training(challenge, ada):
    dataset = make_dataset(challenge, "gaze", task="regression", nmse_normaliser="training")
    add_entry(dataset, created=at(-5), val=reg(1.1, 1.0), baseline=True)
    add_entry(dataset, user=ada, created=at(0), val=reg(None, 0.2, crps=0.1), method="Ensemble")
    text = page_text(Client().get("/challenges/demo/datasets/gaze/leaderboard/"))
    assert "Gain over baseline (nats)" in text
    assert "Ensemble Ada L. 2030-01-20 12:00 n/a n/a 0.2 0.1" in text


def _seed(dataset, users, n):
    add_entry(dataset, created=at(-10), val=cls(0.29, 0.4), test=cls(0.3, 0.4), baseline=True)
    for i in range(n):
        add_entry(
            dataset,
            user=users[i % len(users)],
            created=at(i),
            val=cls(0.2 + i / 100, 0.3) if i % 7 else point_only_cls(0.1),
            test=cls(0.25 + i / 100, 0.3),
        )


@pytest.mark.parametrize("n", [3, 30])
@pytest.mark.parametrize(
    ("path", "queries"),
    [
        # (7: one reads the plot's latest drawing, BoardPlot; one looks for the split's
        # slices files, once its targets are out: slices.py)
        ("leaderboard/", 7),
        ("leaderboard/?view=best", 7),
        # (+1 on the test split: whether final selections are in force; its targets are
        # never released here, so its slices are not looked for)
        ("leaderboard/?sort=01l&view=best&split=test", 7),
        # A download whose file is built (export_files; the first request builds it where
        # tasks run in-process): dataset, its interval run, the file's row.
        ("leaderboard.csv", 3),
        ("leaderboard.csv?view=best&sort=brier", 3),
    ],
)
def test_queries_do_not_grow_with_submissions(
    catalysis, ada, grace, alan, n, path, queries, django_assert_num_queries
):
    """Anonymous visitor: dataset, ranking, baseline, pivot (+ other datasets, plot note)."""
    catalysis.challenge.results_published = True
    catalysis.challenge.save()
    _seed(catalysis, [ada, grace, alan], n)
    client = Client()
    # Builds the file, or draws the page's plot (plot_drawings), where tasks run in-process.
    client.get(f"/challenges/demo/datasets/catalysis/{path}")
    with django_assert_num_queries(queries):
        response = client.get(f"/challenges/demo/datasets/catalysis/{path}")
        if path.startswith("leaderboard.csv"):
            b"".join(response.streaming_content)
    assert response.status_code == 200


@pytest.mark.parametrize("n", [3, 30])
def test_api_and_signed_in_pages_take_constant_queries(
    catalysis, ada, grace, alan, n, django_assert_num_queries
):
    _seed(catalysis, [ada, grace, alan], n)
    client = Client()
    with django_assert_num_queries(4):
        assert (
            client.get("/api/v1/challenges/demo/datasets/catalysis/leaderboard/").status_code == 200
        )
    client.get(URL)  # draws the page's plot (plot_drawings), where tasks run in-process
    client.force_login(ada)
    # + session, user and the challenges they organise; the slices files (slices.py); the
    # plot's latest drawing (BoardPlot)
    with django_assert_num_queries(10):
        assert client.get(URL).status_code == 200


def test_every_multiclass_board_lists_the_entries_by_each_loss(shapes_entries, ada):
    """The seven losses as columns, any of them a sort; the best per participant; the
    forest plot of a loss with intervals (none for ece); the test split once published."""
    shapes, entries = shapes_entries
    url = "/challenges/demo/datasets/shapes/leaderboard/"
    client = Client()
    losses = ["nlp", "brier", "01l", "ece", "rmsce", "sce", "ace", "rauc", "aurc"]
    for loss in losses:
        response = client.get(url, {"split": "val", "sort": loss})
        assert response.status_code == 200, loss
        values = {s.pk: s.scores.get(split="val", loss=loss).value for s in entries}
        ordered = sorted(entries, key=lambda s: (values[s.pk], s.pk))  # ties: the earlier
        assert page_ids(response) == [s.pk for s in ordered], loss
    text = page_text(client.get(url, {"split": "val"}))
    assert "nlp ▲ Gain over baseline (nats) brier 01l ece rmsce sce ace" in text
    assert "ece, rmsce, sce, ace, rauc, aurc have none" in text
    best = client.get(url, {"split": "val", "view": "best"})
    assert len(page_ids(best)) == 3  # the baseline, Ada's better entry, Grace's
    forest = client.get(url + "forest.svg", {"split": "val", "sort": "brier"})
    assert forest.status_code == 200 and forest["Content-Type"] == "image/svg+xml"
    assert client.get(url + "forest.svg", {"split": "val", "sort": "ece"}).status_code == 404
    scatter = client.get(url + "plot.svg", {"split": "val"})
    assert scatter.status_code == 200  # nlp against 01l, the task's point loss
    assert client.get(url, {"split": "test"}).status_code == 403  # not published
    shapes.challenge.results_published = True
    shapes.challenge.save()
    published = client.get(url, {"split": "test", "sort": "sce"})
    assert published.status_code == 200 and len(page_ids(published)) == 4
