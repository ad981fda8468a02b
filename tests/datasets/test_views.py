import hashlib
import io
import zipfile
from datetime import UTC, datetime

import pytest
import time_machine
from django.test import Client
from django.urls import reverse

from tests.factories import make_challenge, make_dataset, make_user
from tests.pages import page_text

BEFORE_START = datetime(2030, 1, 9, tzinfo=UTC)
VALIDATION = datetime(2030, 1, 20, tzinfo=UTC)
TEST_PHASE = datetime(2030, 2, 3, tzinfo=UTC)
AFTER = datetime(2030, 3, 1, tzinfo=UTC)


def _zip_names(response) -> list[str]:
    data = b"".join(response.streaming_content)
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        assert archive.testzip() is None
        return archive.namelist()


def _download(client, name="gaze"):
    return client.get(reverse("dataset_zip", args=["demo", name]))


@pytest.mark.parametrize(
    ("when", "settings_", "expected"),
    [
        (VALIDATION, {}, ["train_inputs", "train_targets", "val_inputs"]),
        (
            VALIDATION,
            {"test_inputs_release": "start"},
            ["train_inputs", "train_targets", "val_inputs", "test_inputs"],
        ),
        (
            TEST_PHASE,
            {},
            ["train_inputs", "train_targets", "val_inputs", "val_targets", "test_inputs"],
        ),
        (
            AFTER,
            {"results_published": True},
            ["train_inputs", "train_targets", "val_inputs", "val_targets", "test_inputs"],
        ),
        (
            AFTER,
            {"results_published": True, "test_targets_release": "after_publication"},
            [
                "train_inputs",
                "train_targets",
                "val_inputs",
                "val_targets",
                "test_inputs",
                "test_targets",
            ],
        ),
    ],
)
def test_zip_holds_exactly_what_the_phase_releases(client, challenge, when, settings_, expected):
    for field, value in settings_.items():
        setattr(challenge, field, value)
    with time_machine.travel(when, tick=False):  # published only after the deadline
        challenge.save()
    make_dataset(challenge, "gaze")
    with time_machine.travel(when, tick=False):
        response = _download(client)
    assert response.status_code == 200
    assert response["Content-Type"] == "application/zip"
    assert response["Content-Disposition"] == 'attachment; filename="gaze.zip"'
    assert _zip_names(response) == ["gaze/README.txt"] + [
        f"gaze/gaze_{part}.txt" for part in expected
    ]


def test_zip_members_are_the_stored_bytes(client, challenge, storage_roots):
    dataset = make_dataset(challenge, "gaze")
    with time_machine.travel(VALIDATION, tick=False):
        data = b"".join(_download(client).streaming_content)
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        for datafile in dataset.files.filter(split="train"):
            stored = (storage_roots[datafile.storage_alias] / datafile.path).read_bytes()
            assert archive.read(f"gaze/{datafile.filename}") == stored


@time_machine.travel(BEFORE_START, tick=False)
def test_nothing_downloads_before_start_not_even_for_staff(client, challenge):
    make_dataset(challenge, "gaze")
    assert _download(client).status_code == 404
    assert client.get(reverse("dataset_detail", args=["demo", "gaze"])).status_code == 404
    client.force_login(make_user("org", organiser_of=challenge))
    assert _download(client).status_code == 404
    page = client.get(reverse("dataset_detail", args=["demo", "gaze"]))
    assert page.status_code == 200
    assert "Nothing can be downloaded yet" in page_text(page)


@time_machine.travel(VALIDATION, tick=False)
def test_etag_answers_repeat_downloads_with_304(client, challenge):
    make_dataset(challenge, "gaze")
    first = _download(client)
    etag = first["ETag"]
    assert first["Cache-Control"] == "private, no-cache"
    again = client.get(
        reverse("dataset_zip", args=["demo", "gaze"]), headers={"if-none-match": etag}
    )
    assert again.status_code == 304
    # When the test phase releases more files, the ETag changes.
    with time_machine.travel(TEST_PHASE, tick=False):
        later = client.get(
            reverse("dataset_zip", args=["demo", "gaze"]), headers={"if-none-match": etag}
        )
    assert later.status_code == 200 and later["ETag"] != etag


@time_machine.travel(VALIDATION, tick=False)
def test_dataset_page_shows_sizes_rows_and_release_dates(
    client, challenge, django_assert_num_queries
):
    dataset = make_dataset(
        challenge, "gaze", sizes=(6, 4, 5), dim=3, min_quantile_gap=0.5, allow_samples=False
    )
    train_inputs = dataset.files.get(split="train", kind="inputs")
    with django_assert_num_queries(2):
        response = client.get(reverse("dataset_detail", args=["demo", "gaze"]))
    text = page_text(response)
    assert "Download gaze.zip" in text
    assert f"gaze_train_inputs.txt 6 3 {train_inputs.size} bytes available" in text
    # Unreleased files show when they come, and nothing of themselves (see below).
    assert (
        "gaze_val_targets.txt – – – from 1 Feb 2030, 00:00 UTC (when the test phase begins)" in text
    )
    assert "gaze_test_targets.txt – – – never" in text and text.rstrip().count(" never ") == 1
    assert (
        "Minimum gap between quantiles 0.5" in text
        and "Sample rows ( 2 s1 … sK ) not allowed" in text
    )


@time_machine.travel(VALIDATION, tick=False)
def test_a_classification_dataset_page_shows_no_regression_settings(client, challenge):
    """The scoring facts of the dataset's task only (templates/datasets/settings/)."""
    make_dataset(challenge, "catalysis", task="classification")
    text = page_text(client.get(reverse("dataset_detail", args=["demo", "catalysis"])))
    assert "Base of logarithms e" in text and "How to write predictions" in text
    assert "Sample rows" not in text and "nMSE normalised by" not in text


@time_machine.travel(VALIDATION, tick=False)
def test_a_multiclass_dataset_page_shows_its_classes_and_ensembles(client, challenge):
    make_dataset(challenge, "shapes", task="multiclass", classes=4, allow_ensembles=False)
    text = page_text(client.get(reverse("dataset_detail", args=["demo", "shapes"])))
    assert "Classes 4 (targets 0 … 3 ; a prediction line holds 4 probabilities)" in text
    assert "Ensemble lines (M·L numbers, M = 2 … 100 members) not allowed" in text
    assert "Sample rows" not in text and "Ranking loss nlp" in text


@time_machine.travel(VALIDATION, tick=False)
def test_unreleased_files_leave_no_trace_for_participants(client, challenge):
    """Size, rows, columns, hash and even existence of a file stay hidden until its
    release: for ±1 targets the size alone is 2n + the number of negatives."""
    assert challenge.test_inputs_release == "test_start"
    dataset = make_dataset(challenge, "gaze", task="classification", sizes=(6, 4, 5))
    unreleased = {("val", "targets"), ("test", "inputs"), ("test", "targets")}
    hidden = [f for f in dataset.files.all() if (f.split, f.kind) in unreleased]
    assert len(hidden) == 3
    url = reverse("dataset_detail", args=["demo", "gaze"])
    for user_client in (client, _client_of("participant")):
        html = user_client.get(url).content.decode()
        for datafile in hidden:
            row = html[html.index(datafile.filename) :].split("</tr>")[0]
            assert "–" in row and "bytes" not in row and str(datafile.rows) not in row
            assert datafile.sha256 not in html
        challenge_html = user_client.get(reverse("challenge_data", args=["demo"])).content
        assert b'<td class="num">4</td>' in challenge_html  # n_val: its inputs are out
        assert b'<td class="num">5</td>' not in challenge_html  # n_test before its inputs
    # Organisers see everything.
    staff_html = _client_of("organiser", organiser_of=challenge).get(url).content.decode()
    for datafile in hidden:
        row = staff_html[staff_html.index(datafile.filename) :].split("</tr>")[0]
        assert "bytes" in row


def _client_of(username: str, *, organiser_of=None) -> Client:
    """A client logged in now (inside the test's clock, so the session has not expired)."""
    logged_in = Client()
    logged_in.force_login(make_user(username, organiser_of=organiser_of))
    return logged_in


@time_machine.travel(VALIDATION, tick=False)
def test_unknown_dataset_is_404(client, challenge):
    assert client.get(reverse("dataset_detail", args=["demo", "nope"])).status_code == 404
    assert client.get(reverse("dataset_zip", args=["other", "gaze"])).status_code == 404


@time_machine.travel(AFTER, tick=False)
def test_no_url_serves_stored_files(client, challenge, storage_roots):
    dataset = make_dataset(challenge, "gaze")
    for datafile in dataset.files.all():
        assert client.get(f"/media/{datafile.path}").status_code == 404
        assert client.get(f"/{datafile.path}").status_code == 404


def test_a_public_part_board_is_linked_from_the_dataset_page_and_the_data_tab(client, challenge):
    make_dataset(challenge, "gaze", sizes=(6, 4, 5))
    public_board = reverse("leaderboard", args=["demo", "gaze"]) + "?split=public"
    with time_machine.travel(TEST_PHASE, tick=False):
        assert (
            public_board
            not in client.get(reverse("dataset_detail", args=["demo", "gaze"])).content.decode()
        )
        challenge.test_public_fraction = 0.4
        challenge.save()
        dataset_page = client.get(reverse("dataset_detail", args=["demo", "gaze"])).content.decode()
        data_tab = client.get(reverse("challenge_data", args=["demo"])).content.decode()
        board = client.get(public_board)
    assert f'href="{public_board}"' in dataset_page.replace("&amp;", "&")
    assert "test split, public part" in dataset_page
    assert f'href="{public_board}"' in data_tab.replace("&amp;", "&")
    assert board.status_code == 200


def _file_url(filename, name="gaze"):
    return reverse("dataset_file", args=["demo", name, filename])


@time_machine.travel(VALIDATION, tick=False)
def test_a_released_file_downloads_alone_with_its_sha256_as_etag(client, challenge, storage_roots):
    """The Croissant document's contentUrl: the stored bytes, whose sha256 it lists."""
    dataset = make_dataset(challenge, "gaze")
    datafile = dataset.files.get(split="train", kind="inputs")
    response = client.get(_file_url(datafile.filename))
    assert response.status_code == 200
    body = b"".join(response.streaming_content)
    assert body == (storage_roots[datafile.storage_alias] / datafile.path).read_bytes()
    assert hashlib.sha256(body).hexdigest() == datafile.sha256
    assert response["ETag"] == f'"{datafile.sha256}"'
    assert response["Content-Type"] == "text/plain; charset=us-ascii"
    assert response["Content-Disposition"] == 'attachment; filename="gaze_train_inputs.txt"'
    assert response["Cache-Control"] == "private, no-cache"
    again = client.get(_file_url(datafile.filename), headers={"if-none-match": response["ETag"]})
    assert again.status_code == 304


def test_an_unreleased_file_is_404_like_a_missing_one_even_for_organisers(client, challenge):
    make_dataset(challenge, "gaze", task="classification")
    make_dataset(challenge, "other")
    organiser = _client_of("organiser", organiser_of=challenge)
    with time_machine.travel(VALIDATION, tick=False):
        for user_client in (client, organiser):
            for filename in (
                "gaze_val_targets.txt",
                "gaze_test_inputs.txt",
                "gaze_test_targets.txt",
                "gaze_train_slices.txt",
                "other_train_inputs.txt",  # another dataset's, released
                "nope.txt",
            ):
                answer = user_client.get(_file_url(filename))
                assert answer.status_code == 404, filename
                assert answer.content == user_client.get(_file_url("nope.txt")).content
    with time_machine.travel(TEST_PHASE, tick=False):
        assert client.get(_file_url("gaze_val_targets.txt")).status_code == 200
        assert client.get(_file_url("gaze_test_inputs.txt")).status_code == 200
        assert client.get(_file_url("gaze_test_targets.txt")).status_code == 404


@time_machine.travel(BEFORE_START, tick=False)
def test_no_file_downloads_before_the_start(client, challenge):
    make_dataset(challenge, "gaze")
    assert client.get(_file_url("gaze_train_inputs.txt")).status_code == 404
    client.force_login(make_user("org", organiser_of=challenge))
    assert client.get(_file_url("gaze_train_inputs.txt")).status_code == 404


@time_machine.travel(VALIDATION, tick=False)
def test_a_file_download_asks_what_the_zip_asks(client, db):
    challenge = make_challenge(require_rules_acceptance=True)
    make_dataset(challenge, "gaze")
    anonymous = client.get(_file_url("gaze_train_inputs.txt"))
    assert anonymous.status_code == 302 and "/accounts/login/" in anonymous["Location"]
    participant = _client_of("participant")
    refused = participant.get(_file_url("gaze_train_inputs.txt"))
    assert refused.status_code == 403
    assert participant.get(_file_url("gaze_val_targets.txt")).status_code == 403
    # The Croissant document itself is public metadata: no participation needed.
    assert client.get(reverse("dataset_croissant", args=["demo", "gaze"])).status_code == 200
