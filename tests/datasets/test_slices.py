"""Slices files (scoring.md §8) end to end: checked on upload and import like the other
files, stored privately, never served, listed, sized or counted for participants; every
loss scored per slice into "LOSS@SLICE" scores, shown (page and API) only once the
split's targets are released."""

import io
import zipfile

import numpy as np
import pytest
import time_machine
from django.contrib.auth.models import AnonymousUser
from django.http import StreamingHttpResponse
from django.test import Client
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

import scoring
from challenge_site.challenges.models import TestTargetsRelease
from challenge_site.challenges.services import publish_results
from challenge_site.submissions.models import Score, Status
from datasets.importing import ImportProblems, import_challenge
from datasets.models import DatasetFile, Kind, Split
from datasets.opening import missing_for_opening
from datasets.services import (
    DatasetFilesError,
    check_files,
    part_statuses,
    released_files,
    save_files,
)
from tests.factories import (
    AFTER,
    TEST_PHASE,
    VALIDATION,
    dataset_admin_form,
    dataset_files,
    make_dataset,
    make_user,
    write_challenge_folder,
)
from tests.submissions.helpers import predictions, stored_file

# Distinctive names, so that finding them in a response can only mean a leak.
IN, SHIFTED = "zzin", "zzshifted"
VAL_SLICES = f"{IN}\n{SHIFTED}\n{IN}\n{SHIFTED}\n".encode()  # 4 validation rows
TEST_SLICES = f"{SHIFTED}\n{IN}\n{IN}\n{SHIFTED}\n{IN}\n".encode()  # 5 test rows
SLICE_FILES = {"gaze_val_slices.txt": VAL_SLICES, "gaze_test_slices.txt": TEST_SLICES}


def add_slices(dataset, files=SLICE_FILES, *, now=VALIDATION):
    checked = check_files(
        name=dataset.name,
        task=dataset.task,
        options=dataset.scoring_options,
        uploads=[(name, data, name) for name, data in files.items()],
        existing=list(dataset.files.all()),
    )
    return save_files(dataset, checked, now=now)


@pytest.fixture
def participant(db):
    return make_user("ada", display_name="Ada L.")


@pytest.fixture
def sliced(challenge):
    challenge.test_targets_release = TestTargetsRelease.AFTER_PUBLICATION
    challenge.save()
    dataset = make_dataset(challenge, "gaze", task="regression")
    add_slices(dataset)
    return dataset


# --- Checking and storing -------------------------------------------------------------


def test_slices_files_are_stored_privately_with_their_row_counts(sliced):
    files = {f.filename: f for f in sliced.files.filter(kind=Kind.SLICES)}
    assert sorted(files) == ["gaze_test_slices.txt", "gaze_val_slices.txt"]
    assert (files["gaze_val_slices.txt"].rows, files["gaze_test_slices.txt"].rows) == (4, 5)
    assert {f.storage_alias for f in files.values()} == {"private"}
    assert stored_file(sliced, "val", "slices") == VAL_SLICES
    # The split sizes still come from the six files.
    assert (sliced.n_val, sliced.n_test) == (4, 5)


def test_a_bad_slices_file_names_every_bad_line(challenge):
    dataset = make_dataset(challenge, "gaze", task="regression")
    with pytest.raises(DatasetFilesError) as error:
        add_slices(dataset, {"gaze_val_slices.txt": b"in\nIn\n\nin\n"})
    assert error.value.problems == [
        "gaze_val_slices.txt:2: expected a slice name of 1 to 32 characters from a-z, 0-9, "
        "_ and -, found 'In'",
        "gaze_val_slices.txt:3: blank line before the last name; every line must hold a slice name",
    ]
    assert not dataset.files.filter(kind=Kind.SLICES).exists()


def test_a_slices_file_names_every_example_of_its_split(challenge):
    dataset = make_dataset(challenge, "gaze", task="regression")  # 4 val, 5 test rows
    with pytest.raises(DatasetFilesError) as error:
        add_slices(
            dataset, {"gaze_val_slices.txt": b"a\nb\na\n", "gaze_test_slices.txt": b"a\n" * 7}
        )
    assert error.value.problems == [
        "gaze_val_slices.txt:4: expected 4 slice names (one per row of gaze_val_inputs.txt), "
        "found 3",
        "gaze_test_slices.txt:6: expected 5 slice names (one per row of gaze_test_inputs.txt), "
        "found 7",
    ]


def test_new_inputs_must_keep_the_slices_count(sliced):
    files = dataset_files("gaze", task="regression", sizes=(6, 3, 5))
    with pytest.raises(DatasetFilesError) as error:
        check_files(
            name="gaze",
            task="regression",
            uploads=[
                (name, files[name], name)
                for name in ("gaze_val_inputs.txt", "gaze_val_targets.txt")
            ],
            existing=[f for f in sliced.files.all() if f.split != "val" or f.kind == "slices"],
        )
    assert error.value.problems == [
        "gaze_val_slices.txt:4: expected 3 slice names (one per row of gaze_val_inputs.txt), "
        "found 4"
    ]


def test_the_admin_takes_slices_files_and_shows_them_to_organisers(admin_client, challenge):
    files = dataset_files("gaze", task="regression", sizes=(6, 4, 5)) | SLICE_FILES
    response = admin_client.post(
        reverse("admin:datasets_dataset_add"), dataset_admin_form(challenge, files), follow=True
    )
    assert "gaze_val_slices.txt" in response.content.decode()  # "Stored …"
    dataset = challenge.datasets.get()
    assert dataset.files.filter(kind=Kind.SLICES).count() == 2
    page = admin_client.get(reverse("admin:datasets_dataset_change", args=[dataset.pk]))
    assert "gaze_test_slices.txt" in page.content.decode()
    # A bad one is refused with its line, like any other file.
    bad = {"gaze_val_slices.txt": b"in\nin\nIN!\nin\n"}
    response = admin_client.post(
        reverse("admin:datasets_dataset_change", args=[dataset.pk]),
        dataset_admin_form(challenge, bad),
    )
    assert "gaze_val_slices.txt:3: expected a slice name" in response.content.decode()


def test_the_training_split_has_no_slices(challenge):
    dataset = make_dataset(challenge, "gaze", task="regression")
    with pytest.raises(DatasetFilesError) as error:
        add_slices(dataset, {"gaze_train_slices.txt": b"a\n" * 6})
    assert error.value.problems[0].startswith(
        "gaze_train_slices.txt: unexpected file name; expected one of gaze_train_inputs.txt"
    )
    assert error.value.problems[0].endswith("(or gaze_val_slices.txt or gaze_test_slices.txt)")


def test_slices_are_optional_for_opening_and_never_released(sliced):
    assert not any(
        "slices" in line for line in missing_for_opening(sliced.challenge, now=VALIDATION)
    )
    for when in (VALIDATION, TEST_PHASE, AFTER):
        assert all(f.kind != Kind.SLICES for f in released_files(sliced, now=when))
        statuses = part_statuses(sliced, user=AnonymousUser(), now=when)
        assert [(s.split, s.kind) for s in statuses if s.kind == Kind.SLICES] == []
    sliced.challenge.results_published = True
    sliced.challenge.save()
    assert all(f.kind != Kind.SLICES for f in released_files(sliced, now=AFTER))


@pytest.mark.django_db
def test_import_takes_optional_slices_and_drops_those_removed(tmp_path):
    toml = (
        'slug = "shift"\ntitle = "Shift"\nstart = 2030-01-10T00:00:00Z\n'
        "test_start = 2030-02-01T00:00:00Z\ndeadline = 2030-02-08T23:59:59Z\n\n"
        '[datasets.gaze]\ntask = "regression"\n'
    )
    files = dataset_files("gaze", task="regression", sizes=(6, 4, 5)) | SLICE_FILES
    folder = write_challenge_folder(tmp_path / "shift", toml, {"gaze": files})
    summary = import_challenge(folder)
    assert "gaze_val_slices.txt" in summary[1] and "gaze_test_slices.txt" in summary[1]
    stored = DatasetFile.objects.filter(kind=Kind.SLICES)
    assert sorted((f.split, f.rows, f.storage_alias) for f in stored) == [
        ("test", 5, "private"),
        ("val", 4, "private"),
    ]
    # A bad name is a line error naming the file in the folder.
    (folder / "gaze" / "gaze_val_slices.txt").write_bytes(b"in\nin\nout of\nin\n")
    with pytest.raises(ImportProblems) as error:
        import_challenge(folder)
    assert error.value.problems == [
        f"{folder}/gaze/gaze_val_slices.txt:3: expected a slice name of 1 to 32 characters "
        "from a-z, 0-9, _ and -, found 'out of'"
    ]
    # The folder says it all: a slices file taken out of it is deleted.
    (folder / "gaze" / "gaze_val_slices.txt").unlink()
    summary = import_challenge(folder)
    assert "gaze_val_slices.txt deleted" in summary[1]
    assert list(DatasetFile.objects.filter(kind=Kind.SLICES).values_list("split", flat=True)) == [
        "test"
    ]


# --- Scoring ----------------------------------------------------------------------------


@pytest.fixture
def scored(sliced, participant, submit_zip):
    files = predictions("gaze", ("val", "test"))
    submission = submit_zip(participant, sliced.challenge, files, now=TEST_PHASE)
    assert submission.status == Status.SCORED
    return submission


def by_split(submission) -> dict[str, dict[str, float | None]]:
    out: dict[str, dict[str, float | None]] = {}
    for score in submission.scores.order_by("pk"):
        out.setdefault(score.split, {})[score.loss] = score.value
    return out


def test_every_loss_is_scored_on_each_slice_of_val_and_test(sliced, scored):
    scores = by_split(scored)
    files = predictions("gaze", ("val", "test"))
    for split, labels in (("val", VAL_SLICES), ("test", TEST_SLICES)):
        targets = scoring.read_targets(stored_file(sliced, split, "targets"), path="t")
        whole = scoring.evaluate(
            files[f"gaze_{split}_predict.txt"],
            targets,
            task="regression",
            options=sliced.scoring_options,
        )
        names = scoring.read_slices(labels, path="s", n=whole.n)
        expected = {
            f"{loss}@{name}": value
            for name, part in whole.by_slice(names).items()
            for loss, value in part.scores.items()
        }
        stored = {key: value for key, value in scores[split].items() if "@" in key}
        assert stored == pytest.approx(expected)
        # Slices in order of first appearance, as written.
        first = [key.split("@")[1] for key in scores[split] if "@" in key]
        assert list(dict.fromkeys(first)) == list(dict.fromkeys(labels.decode().split()))
    assert "train" not in scores and "public" not in scores  # (no train file, no public part)


def test_the_baseline_is_scored_per_slice_too(sliced, django_capture_on_commit_callbacks):
    from challenge_site.submissions.services import refresh_baseline

    with django_capture_on_commit_callbacks(execute=True):
        baseline = refresh_baseline(dataset=sliced, now=VALIDATION)
    baseline.refresh_from_db()
    assert baseline.status == Status.SCORED
    keys = set(baseline.scores.filter(split="test").values_list("loss", flat=True))
    assert {f"nlpd@{IN}", f"nlpd@{SHIFTED}", "nlpd"} <= keys
    assert not baseline.scores.filter(split="train", loss__contains="@").exists()


def test_adding_slices_later_fills_the_slice_scores(
    challenge, participant, submit_zip, django_capture_on_commit_callbacks
):
    dataset = make_dataset(challenge, "gaze", task="regression")
    submission = submit_zip(participant, challenge, predictions("gaze"), now=VALIDATION)
    assert not submission.scores.filter(loss__contains="@").exists()
    with django_capture_on_commit_callbacks(execute=True):
        add_slices(dataset, {"gaze_val_slices.txt": VAL_SLICES})
    submission.refresh_from_db()
    assert submission.status == Status.SCORED
    keys = set(submission.scores.filter(split="val").values_list("loss", flat=True))
    assert {f"nlpd@{IN}", f"nlpd@{SHIFTED}", "nlpd"} <= keys


# --- Visibility: the page, the API, and every participant-facing response --------------


def api_get(user, url, *, when):
    client = APIClient()
    if user is not None:
        token, _ = Token.objects.get_or_create(user=user)
        client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    with time_machine.travel(when, tick=False):
        return client.get(url)


def web_get(user, url, *, when):
    client = Client()
    with time_machine.travel(when, tick=False):
        if user is not None:
            client.force_login(user)
        return client.get(url)


def content(response) -> bytes:
    if isinstance(response, StreamingHttpResponse):
        return b"".join(response.streaming_content)
    return response.content


def slice_keys(scores: dict) -> set[str]:
    return {key for split in scores.values() for key in split if "@" in key}


def test_api_shows_slice_scores_only_once_the_split_targets_are_released(
    sliced, scored, participant
):
    url = f"/api/v1/submissions/{scored.pk}/"
    # The test phase: validation targets are out, test targets are not.
    body = api_get(participant, url, when=TEST_PHASE).json()
    assert {key for key in body["scores"]["val"] if "@" in key} == {
        f"{loss.name}@{name}" for loss in sliced.shown_losses() for name in (IN, SHIFTED)
    }
    assert "test" not in body["scores"]
    stored = by_split(scored)["val"]
    assert body["scores"]["val"][f"nlpd@{SHIFTED}"] == pytest.approx(stored[f"nlpd@{SHIFTED}"])
    # Published, with the test targets released after publication: test slices too.
    publish_results(challenge=sliced.challenge, user=None, now=AFTER)
    body = api_get(participant, url, when=AFTER).json()
    assert f"crps@{IN}" in body["scores"]["test"]
    assert not any("@" in key for key in body["scores"].get("public", {}))


def test_test_slices_stay_hidden_when_the_test_targets_are_never_released(
    sliced, scored, participant
):
    sliced.challenge.test_targets_release = TestTargetsRelease.NEVER
    sliced.challenge.save()
    publish_results(challenge=sliced.challenge, user=None, now=AFTER)
    body = api_get(participant, f"/api/v1/submissions/{scored.pk}/", when=AFTER).json()
    assert "nlpd" in body["scores"]["test"]
    assert not any("@" in key for key in body["scores"]["test"])
    assert any("@" in key for key in body["scores"]["val"])


def test_the_submission_page_shows_a_slice_table_once_visible(sliced, scored, participant):
    url = f"/submissions/{scored.pk}/"
    later = web_get(participant, url, when=TEST_PHASE).content.decode()
    assert "Validation split, slice by slice" in later and f"<code>{SHIFTED}</code>" in later
    assert "Test split, slice by slice" not in later


def test_organisers_see_the_slices_at_any_time(sliced, participant, submit_zip):
    submission = submit_zip(participant, sliced.challenge, predictions("gaze"), now=VALIDATION)
    organiser = make_user("orga", organiser_of=sliced.challenge)
    body = api_get(organiser, f"/api/v1/submissions/{submission.pk}/", when=VALIDATION).json()
    assert f"nlpd@{IN}" in body["scores"]["val"]


def participant_urls(dataset, submission) -> list[str]:
    board = "/challenges/demo/datasets/gaze/leaderboard"
    return [
        "/",
        "/leaderboards/",
        "/challenges/demo/",
        "/challenges/demo/data/",
        "/challenges/demo/evaluation/",
        "/challenges/demo/results/",
        "/challenges/demo/statistics/",
        "/challenges/demo/datasets/gaze/",
        "/challenges/demo/datasets/gaze.zip",
        "/api/v1/challenges/",
        "/api/v1/challenges/demo/",
        "/api/v1/challenges/demo/datasets/gaze.zip",
        f"{board}/",
        f"{board}/?split=val",
        f"{board}/?split=test",
        f"{board}.csv",
        f"{board}.csv?split=val",
        f"{board}/?split=val&format=json",
        f"/api/v1/{board}/",
        f"/api/v1/{board}/?split=val",
        f"/api/v1/{board}/?split=test",
        # Naming a slice (H7's selector): before its release, the answer to any name.
        f"{board}/?split=test&slice={IN}",
        f"{board}/?split=val&slice={SHIFTED}",
        f"{board}/?split=test&slice={SHIFTED}&view=best",
        f"{board}.csv?split=test&slice={IN}",
        f"{board}/forest.svg?split=test&slice={IN}",
        f"/api/v1/{board}/?split=test&slice={SHIFTED}",
        f"/submissions/{submission.pk}/",
        f"/api/v1/submissions/{submission.pk}/",
        f"/submissions/{submission.pk}/plots/val.svg",
        "/api/v1/submissions/",
        "/accounts/submissions/",
        "/formats/",
        "/challenges/demo/statistics/datasets.svg",
        f"{board}/?split=val&view=best",
        f"{board}/plot.svg?split=val",
        f"{board}/forest.svg?split=val",
    ]


def leaks(body: bytes) -> list[bytes]:
    """What would tell of the slices: their names, their files, their scores' keys."""
    found = [word for word in (IN.encode(), SHIFTED.encode(), b"_slices") if word in body]
    if body[:2] == b"PK":  # a zip: its members and their contents
        with zipfile.ZipFile(io.BytesIO(body)) as archive:
            for name in archive.namelist():
                if "slices" in name:
                    found.append(name.encode())
                found += leaks(archive.read(name)) if not name.endswith(".zip") else []
    return found


@pytest.mark.parametrize("viewer", ["anonymous", "participant"])
def test_no_participant_facing_response_tells_of_the_slices_before_release(
    sliced, participant, submit_zip, viewer
):
    submission = submit_zip(participant, sliced.challenge, predictions("gaze"), now=VALIDATION)
    assert submission.scores.filter(loss__contains="@").exists()  # stored, not shown
    user = participant if viewer == "participant" else None
    answered = set()
    for url in participant_urls(sliced, submission):
        for get in (web_get, api_get):
            response = get(user, url, when=VALIDATION)
            assert leaks(content(response)) == [], url  # (error pages included)
            if response.status_code == 200:
                answered.add(url)
    # The pages that would show them did answer (the test is not vacuous).
    shown = {"/challenges/demo/datasets/gaze/", "/challenges/demo/datasets/gaze.zip"}
    if user is not None:
        shown |= {f"/submissions/{submission.pk}/", f"/api/v1/submissions/{submission.pk}/"}
    assert shown <= answered


def test_no_response_ever_serves_the_slices_file(sliced, scored, participant):
    publish_results(challenge=sliced.challenge, user=None, now=AFTER)
    for when in (TEST_PHASE, AFTER):
        for url in participant_urls(sliced, scored):
            response = web_get(participant, url, when=when)
            if response.status_code >= 400:
                continue
            body = content(response)
            assert b"_slices" not in body, url
            assert VAL_SLICES not in body and TEST_SLICES not in body, url
    # After release the names appear (as scores), never the file: the dataset zip's members.
    zipped = content(web_get(participant, "/challenges/demo/datasets/gaze.zip", when=AFTER))
    with zipfile.ZipFile(io.BytesIO(zipped)) as archive:
        assert not [name for name in archive.namelist() if "slices" in name]
        assert "gaze/gaze_test_targets.txt" in archive.namelist()


def test_publication_counts_leave_the_slice_scores_out(sliced, scored):
    from challenge_site.submissions.receivers import exposure_counted

    counted = exposure_counted(challenge=sliced.challenge, split=Split.TEST)
    whole = Score.objects.filter(split="test", dataset=sliced).exclude(loss__contains="@")
    assert sum(row["test_scores"] for row in counted.values()) <= whole.count()
    assert np.all([row["test_scores"] > 0 for row in counted.values()]) or not counted
