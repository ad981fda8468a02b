import html
import math
import re
from datetime import UTC, datetime

import numpy as np
import pytest
import time_machine
from django.urls import reverse

import scoring
from tests.factories import make_challenge, make_dataset, make_user
from tests.pages import page_text


@time_machine.travel(datetime(2030, 1, 20, 12, 0, tzinfo=UTC), tick=False)
def test_home_lists_challenges_with_phase_and_time_to_next_date(
    client, db, django_assert_num_queries
):
    make_challenge(slug="live", title="Live one")
    make_challenge(
        slug="later",
        title="Later one",
        start=datetime(2030, 3, 1, tzinfo=UTC),
        test_start=datetime(2030, 4, 1, tzinfo=UTC),
        deadline=datetime(2030, 4, 8, tzinfo=UTC),
    )
    make_challenge(
        slug="old",
        title="Old one",
        start=datetime(2004, 11, 10, tzinfo=UTC),
        test_start=datetime(2004, 12, 3, tzinfo=UTC),
        deadline=datetime(2004, 12, 10, tzinfo=UTC),
    )
    with django_assert_num_queries(1):
        response = client.get(reverse("home"))
    text = page_text(response)
    assert response.status_code == 200
    # Newest first, each with its phase.
    assert text.index("Later one") < text.index("Live one") < text.index("Old one")
    assert "Upcoming" in text and "Validation phase" in text and "Post-challenge" in text
    # Live: the test phase begins 2030-02-01, 11 days 12 hours from now.
    assert (
        "Test phase begins: validation targets released: 1 Feb 2030, 00:00 (in 1 week, 4 days)"
        in text
    )
    assert "The deadline has passed." in text


def test_home_without_challenges_says_how_to_create_one(client, db):
    assert "No challenges yet" in page_text(client.get(reverse("home")))


@time_machine.travel(datetime(2030, 1, 20, tzinfo=UTC), tick=False)
def test_challenge_tabs_show_timeline_datasets_losses_and_limits(
    client, db, django_assert_num_queries
):
    challenge = make_challenge(
        description="Predict **well**.", val_daily_limit=3, test_total_limit=10
    )
    make_dataset(challenge, "gaze", task="regression", sizes=(7, 4, 5), dim=2)
    make_dataset(challenge, "catalysis", task="classification", log_base=10.0)

    with django_assert_num_queries(2):  # the challenge, its first dataset (leaderboards tab)
        overview = client.get(reverse("challenge_detail", args=["demo"]))
    text = page_text(overview)
    assert "<p>Predict <strong>well</strong>.</p>" in overview.content.decode()
    assert "Validation phase" in text
    assert "10 Jan 2030, 00:00 UTC" in text and "8 Feb 2030, 23:59 UTC" in text
    assert "Results: not published yet." in text

    with django_assert_num_queries(2):  # the challenge, its datasets
        data = client.get(reverse("challenge_data", args=["demo"]))
    text = page_text(data)
    assert reverse("dataset_detail", args=["demo", "gaze"]) in data.content.decode()
    # Gaze row: dimension 2, 7/4 examples (the test size waits for the test inputs),
    # ranked by nlpd.
    assert "Gaze Regression 2 7 4 – nlpd" in text
    assert "the test targets are never released" in text

    with django_assert_num_queries(2):
        evaluation = client.get(reverse("challenge_evaluation", args=["demo"]))
    text = page_text(evaluation)
    for task in ("classification", "regression"):
        for loss in scoring.losses_for(task):
            assert loss.title in text and loss.description in text
    assert "gaze: e, catalysis: 10" in text or "catalysis: 10, gaze: e" in text
    assert "gaze: nlpd" in text and "catalysis: nlp" in text
    assert f'href="{reverse("file_formats")}"' in evaluation.content.decode()

    with django_assert_num_queries(2):
        rules = client.get(reverse("challenge_rules", args=["demo"]))
    text = page_text(rules)
    assert "at most 3 submissions per dataset per UTC day" in text
    assert "at most 5 submissions per dataset per UTC day, and 10 in total per dataset" in text
    # Nothing of another tab's content leaks into this one.
    assert "nlpd" not in text and "Timeline" not in text


@time_machine.travel(datetime(2030, 1, 20, tzinfo=UTC), tick=False)
def test_each_tab_has_its_url_and_marks_itself_current(client, challenge):
    make_dataset(challenge, "gaze")
    urls = {
        "Overview": reverse("challenge_detail", args=["demo"]),
        "Data": reverse("challenge_data", args=["demo"]),
        "Evaluation": reverse("challenge_evaluation", args=["demo"]),
        "Rules": reverse("challenge_rules", args=["demo"]),
        "Results": reverse("challenge_results", args=["demo"]),
    }
    board = reverse("leaderboard", args=["demo", "gaze"]) + "?split=val"
    for label, url in urls.items():
        response = client.get(url)
        assert response.status_code == 200, url
        page = response.content.decode()
        nav = re.search(r'<nav class="tabs"[^>]*>(.*?)</nav>', page, re.S)
        assert nav is not None, url
        current = re.findall(r'<a href="([^"]+)" aria-current="page">([^<]+)</a>', nav[1])
        assert current == [(url, label)]
        assert f'<a href="{board}">Leaderboards</a>' in nav[1]
        for other_label, other_url in urls.items():
            assert f'href="{other_url}"' in nav[1], (url, other_label)


@time_machine.travel(datetime(2030, 1, 20, tzinfo=UTC), tick=False)
def test_rules_tab_renders_the_rules_as_markdown(client, db):
    make_challenge(rules="## Fair play\n\n1. One account each.\n2. No <script>alert(1)</script>.")
    response = client.get(reverse("challenge_rules", args=["demo"]))
    page = response.content.decode()
    assert "<h2>Fair play</h2>" in page
    assert "<li>One account each.</li>" in page
    assert "<script>alert" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "no rules beyond" not in page_text(response)


@pytest.mark.parametrize("rules", ["", "  \n\n "])
@time_machine.travel(datetime(2030, 1, 20, tzinfo=UTC), tick=False)
def test_empty_rules_say_so_in_a_sentence(client, db, rules):
    make_challenge(rules=rules)
    text = page_text(client.get(reverse("challenge_rules", args=["demo"])))
    assert (
        "The organisers have set no rules beyond the submission limits below "
        "and the phases on the Data page." in text
    )
    assert "Submission limits" in text


@time_machine.travel(datetime(2030, 1, 1, tzinfo=UTC), tick=False)
def test_challenge_page_before_start_names_datasets_without_links(client, challenge):
    make_dataset(challenge, "gaze")
    for url_name in ("challenge_detail", "challenge_data", "challenge_evaluation"):
        response = client.get(reverse(url_name, args=["demo"]))
        assert "/datasets/gaze" not in response.content.decode(), url_name
    response = client.get(reverse("challenge_data", args=["demo"]))
    text = page_text(response)
    assert "Gaze" in text
    assert "can be downloaded once the challenge opens" in text


@pytest.mark.parametrize(
    "url_name", ["challenge_detail", "challenge_data", "challenge_evaluation", "challenge_rules"]
)
def test_draft_tabs_are_404_except_for_its_organisers(client, db, url_name):
    draft = make_challenge(opened_at=None, description="Secret plans.")
    url = reverse(url_name, args=[draft.slug])
    assert client.get(url).status_code == 404
    client.force_login(make_user("stranger"))
    assert client.get(url).status_code == 404
    client.force_login(make_user("organiser", organiser_of=draft))
    assert client.get(url).status_code == 200


def test_unknown_challenge_is_404_with_the_site_layout(client, db):
    response = client.get(reverse("challenge_detail", args=["nope"]))
    assert response.status_code == 404
    assert "Back to the challenges" in response.content.decode()


@pytest.mark.parametrize(
    "url_name", ["challenge_detail", "challenge_data", "challenge_evaluation", "challenge_rules"]
)
def test_pages_refuse_post(client, challenge, url_name):
    assert client.post(reverse(url_name, args=["demo"])).status_code == 405


def _examples(text: str) -> list[str]:
    return [
        html.unescape(block)
        for block in re.findall(r'<pre class="example"[^>]*><code>(.*?)</code></pre>', text, re.S)
    ]


def test_file_format_page_examples_are_valid_files(client, db):
    response = client.get(reverse("file_formats"))
    assert response.status_code == 200
    examples = _examples(response.content.decode())
    classification = examples[0].encode()
    probabilities = scoring.read_classification(classification, path="example.txt")
    assert probabilities.tolist() == [0.91, 0.0625, 0.5, 1.0]
    # Multiclass, four classes: three single lines, then an ensemble line of two members.
    options = scoring.ScoringOptions(classes=4, allow_ensembles=True)
    single = scoring.evaluate(
        examples[1].encode(), np.array([0.0, 2.0, 3.0]), task="multiclass", options=options
    )
    assert single.n == 3 and single.reported == {}
    ensemble = scoring.evaluate(
        examples[2].encode(), np.array([0.0]), task="multiclass", options=options
    )
    assert ensemble.scores["nlp"] == pytest.approx(-math.log(0.55))  # the members' mean
    assert set(ensemble.reported) == {"tu", "du", "mi"}
    gaussian, quantiles, samples, mixed = (e.encode() for e in examples[3:7])
    kinds = {}
    for name, data in [
        ("gaussian", gaussian),
        ("quantiles", quantiles),
        ("samples", samples),
        ("mixed", mixed),
    ]:
        n = data.count(b"\n") + 1
        kinds[name] = scoring.read_regression(data, path=f"{name}.txt", targets=np.zeros(n))
    assert kinds["gaussian"].stats.mean.tolist() == [3.1]
    # Fig. 4 of the 2004 paper; spec section 2 gives its mean as -0.25.
    assert kinds["quantiles"].stats.mean[0] == pytest.approx(-0.25)
    assert kinds["samples"].has_samples
    assert len(kinds["mixed"].kind) == 4
    assert "import numpy as np" in examples[7] and "save('predictions.txt'" in examples[8]


def test_file_format_numpy_snippets_write_valid_files(client, db, tmp_path, monkeypatch):
    """Run the page's numpy snippet and parse each file it writes."""
    snippet = _examples(client.get(reverse("file_formats")).content.decode())[7]
    assert 'np.savetxt("predictions.txt", softmax(logits), fmt="%.6g")' in snippet
    rng = np.random.default_rng(1)
    n = 4
    written = []
    monkeypatch.chdir(tmp_path)

    def capture(name, rows, fmt):
        np.savetxt(name, rows, fmt=fmt)
        written.append((tmp_path / name).read_bytes())

    namespace = {
        "np": type(
            "np",
            (),
            {
                **{
                    k: getattr(np, k) for k in ("ones_like", "column_stack", "empty", "full", "exp")
                },
                "savetxt": staticmethod(capture),
            },
        ),
        "p": rng.random(n),
        "m": rng.normal(size=n),
        "v": rng.random(n),
        "a": np.array([0.1, 0.5, 0.9]),
        "q": np.sort(rng.normal(size=(n, 3)), axis=1),
        "s": rng.normal(size=(n, 5)),
        "logits": 4 * rng.normal(size=(n, 3)),
        "probs": rng.dirichlet(np.ones(3), size=(2, n)),  # 2 members, n examples, 3 classes
    }
    exec(snippet.replace("import numpy as np\n", ""), namespace)  # noqa: S102 - our own page
    assert len(written) == 6
    scoring.read_classification(written[0], path="p.txt")
    options = scoring.ScoringOptions(classes=3)
    for data in written[1:3]:
        evaluation = scoring.evaluate(data, np.zeros(n), task="multiclass", options=options)
        assert evaluation.n == n
    assert set(evaluation.reported) == {"tu", "du", "mi"}  # the ensemble's lines
    for data in written[3:]:
        rows = scoring.read_regression(data, path="r.txt", targets=np.zeros(n))
        assert np.isfinite(rows.stats.mean).all()


def test_file_format_page_says_how_the_largest_ensembles_fit_a_line(client, db):
    """100 members of 1000 classes written with the page's "%.6g" exceed the 1 MiB line of
    scoring.md section 1; the page names the limit and a format whose lines fit."""
    text = html.unescape(client.get(reverse("file_formats")).content.decode())
    assert "at most 1 MiB (1,048,576 bytes)" in text
    assert 'fmt="%.3g"' in text
    rng = np.random.default_rng(3)
    members = rng.dirichlet(np.full(1000, 0.01), size=100)  # sharp: many tiny probabilities
    members[:, :3] = [1.23456e-100, 1.23456e-10, 0.000123456]  # the longest spellings
    members /= members.sum(axis=1, keepdims=True)
    wide = " ".join(f"{p:.6g}" for p in members.ravel())
    narrow = " ".join(f"{p:.3g}" for p in members.ravel())
    assert len(wide) > 2**20 >= len(narrow)
    options = scoring.ScoringOptions(classes=1000, allow_ensembles=True)
    evaluation = scoring.evaluate(
        (narrow + "\n").encode(), np.array([0.0]), task="multiclass", options=options
    )
    assert evaluation.n == 1 and set(evaluation.reported) == {"tu", "du", "mi"}
    with pytest.raises(scoring.ScoringError, match=r"predictions:1: a line of \d+ bytes"):
        scoring.evaluate(
            (wide + "\n").encode(), np.array([0.0]), task="multiclass", options=options
        )


def test_unpublished_results_name_the_public_part_board_too(client, challenge):
    with time_machine.travel(datetime(2030, 1, 20, tzinfo=UTC), tick=False):
        before = page_text(client.get(reverse("challenge_results", args=["demo"])))
        challenge.test_public_fraction = 0.4
        challenge.save()
        after = page_text(client.get(reverse("challenge_results", args=["demo"])))
    assert "the leaderboards of the validation split are open" in before
    assert "public part" not in before
    assert (
        "the leaderboards of the validation split and, from the test phase on, of the test's "
        "public part are open" in after
    )


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("feedback", "late", "present", "absent"),
    [
        (
            "board_ladder",
            False,
            [
                "The board's Ladder.",
                "not released: not better than the board's best by the step",
                "Joining during the test phase.",
                "no public feedback: you joined during the test phase",
            ],
            ["Ladder feedback.", "Exact feedback."],
        ),
        (
            "ladder",
            True,
            ["Ladder feedback.", "square root of the number of examples"],
            [
                "The board's Ladder.",
                "Joining during the test phase.",
            ],
        ),
        ("exact", False, ["Exact feedback.", "Joining during the test phase."], ["Ladder"]),
    ],
)
def test_the_rules_tab_says_what_feedback_participants_get(client, feedback, late, present, absent):
    make_challenge(test_public_fraction=0.5, feedback=feedback, late_joiners_feedback=late)
    with time_machine.travel(datetime(2030, 1, 20, tzinfo=UTC), tick=False):
        text = page_text(client.get("/challenges/demo/rules/"))
    for phrase in present:
        assert phrase in text, phrase
    for phrase in absent:
        assert phrase not in text, phrase
