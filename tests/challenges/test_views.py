import html
import re
from datetime import UTC, datetime

import numpy as np
import pytest
import time_machine
from django.urls import reverse

import scoring
from tests.factories import make_challenge, make_dataset
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
def test_challenge_page_shows_timeline_datasets_losses_and_limits(
    client, db, django_assert_num_queries
):
    challenge = make_challenge(description="Predict well.", val_daily_limit=3, test_total_limit=10)
    make_dataset(challenge, "gaze", task="regression", sizes=(7, 4, 5), dim=2)
    make_dataset(challenge, "catalysis", task="classification", log_base=10.0)
    with django_assert_num_queries(2):
        response = client.get(reverse("challenge_detail", args=["demo"]))
    text = page_text(response)
    assert "Predict well." in text
    assert "Validation phase" in text
    assert "10 Jan 2030, 00:00 UTC" in text and "8 Feb 2030, 23:59 UTC" in text
    assert reverse("dataset_detail", args=["demo", "gaze"]) in response.content.decode()
    # Gaze row: dimension 2, 7/4 examples (the test size waits for the test inputs),
    # ranked by nlpd.
    assert "Gaze Regression 2 7 4 – nlpd" in text
    for task in ("classification", "regression"):
        for loss in scoring.losses_for(task):
            assert loss.title in text and loss.description in text
    assert "at most 3 submissions per dataset per UTC day" in text
    assert "at most 5 submissions per dataset per UTC day, and 10 in total per dataset" in text
    assert "gaze: e, catalysis: 10" in text or "catalysis: 10, gaze: e" in text


@time_machine.travel(datetime(2030, 1, 1, tzinfo=UTC), tick=False)
def test_challenge_page_before_start_names_datasets_without_links(client, challenge):
    make_dataset(challenge, "gaze")
    response = client.get(reverse("challenge_detail", args=["demo"]))
    text, response_html = page_text(response), response.content.decode()
    assert "Gaze" in text
    assert "/datasets/gaze" not in response_html
    assert "can be downloaded once the challenge opens" in text


def test_unknown_challenge_is_404_with_the_site_layout(client, db):
    response = client.get(reverse("challenge_detail", args=["nope"]))
    assert response.status_code == 404
    assert "Back to the challenges" in response.content.decode()


def test_pages_refuse_post(client, challenge):
    assert client.post(reverse("challenge_detail", args=["demo"])).status_code == 405


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
    gaussian, quantiles, samples, mixed = (e.encode() for e in examples[1:5])
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
    assert "import numpy as np" in examples[5] and "save('predictions.txt'" in examples[6]


def test_file_format_numpy_snippets_write_valid_files(client, db, tmp_path, monkeypatch):
    """Run the page's numpy snippet and parse each file it writes."""
    snippet = _examples(client.get(reverse("file_formats")).content.decode())[5]
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
                **{k: getattr(np, k) for k in ("ones_like", "column_stack", "empty", "full")},
                "savetxt": staticmethod(capture),
            },
        ),
        "p": rng.random(n),
        "m": rng.normal(size=n),
        "v": rng.random(n),
        "a": np.array([0.1, 0.5, 0.9]),
        "q": np.sort(rng.normal(size=(n, 3)), axis=1),
        "s": rng.normal(size=(n, 5)),
    }
    exec(snippet.replace("import numpy as np\n", ""), namespace)  # noqa: S102 - our own page
    assert len(written) == 4
    scoring.read_classification(written[0], path="p.txt")
    for data in written[1:]:
        rows = scoring.read_regression(data, path="r.txt", targets=np.zeros(n))
        assert np.isfinite(rows.stats.mean).all()
