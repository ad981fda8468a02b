"""datasets.archive: a dataset's released files as one zip, streamed chunk by chunk, its
README first; and the ETag that changes whenever those bytes would."""

import io
import zipfile

import time_machine
from django.core.files.storage import storages
from django.urls import reverse

from datasets.archive import archive_etag, iter_archive
from datasets.models import Dataset
from tests.factories import VALIDATION, make_dataset


def _download(client, name="gaze", **headers):
    return client.get(reverse("dataset_zip", args=["demo", name]), headers=headers)


def _zip(response) -> zipfile.ZipFile:
    assert response.status_code == 200
    archive = zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content)))
    assert archive.testzip() is None
    return archive


def test_the_files_are_zipped_into_the_folder_readme_first(challenge):
    dataset = make_dataset(challenge, "gaze")
    files = list(dataset.files.order_by("split", "kind"))
    chunks = list(iter_archive(files, folder="gaze", readme="Read me.\n"))
    assert len(chunks) > 2  # streamed, not built whole
    with zipfile.ZipFile(io.BytesIO(b"".join(chunks))) as archive:
        assert archive.testzip() is None
        names = archive.namelist()
        assert names == ["gaze/README.txt", *(f"gaze/{f.filename}" for f in files)]
        assert archive.read("gaze/README.txt") == b"Read me.\n"
        for datafile in files:
            with storages[datafile.storage_alias].open(datafile.path, "rb") as stored:
                assert archive.read(f"gaze/{datafile.filename}") == stored.read()
        newest = max(f.uploaded for f in files).timetuple()[:6]
        assert archive.getinfo("gaze/README.txt").date_time == newest
    without = zipfile.ZipFile(io.BytesIO(b"".join(iter_archive(files, folder="x"))))
    assert without.namelist() == [f"x/{f.filename}" for f in files]


def test_the_etag_follows_the_names_contents_and_readme(challenge):
    dataset = make_dataset(challenge, "gaze")
    files = list(dataset.files.all())
    etag = archive_etag(files, readme="a")
    assert len(etag) == 32 and etag == archive_etag(files, readme="a")
    assert archive_etag(files, readme="b") != etag
    assert archive_etag(files[:-1], readme="a") != etag
    files[0].sha256 = "0" * 64
    assert archive_etag(files, readme="a") != etag


@time_machine.travel(VALIDATION, tick=False)
def test_etag_changes_when_the_readme_does(client, challenge):
    dataset = make_dataset(challenge, "gaze", description="First words.")
    first = _download(client)
    etag = first["ETag"]
    assert _download(client, **{"if-none-match": etag}).status_code == 304
    Dataset.objects.filter(pk=dataset.pk).update(description="Second words.")
    changed = _download(client, **{"if-none-match": etag})
    assert changed.status_code == 200 and changed["ETag"] != etag
    with _zip(changed) as archive:
        assert "Second words." in archive.read("gaze/README.txt").decode()
    # An option the format help mentions changes it too.
    Dataset.objects.filter(pk=dataset.pk).update(allow_samples=False)
    again = _download(client, **{"if-none-match": changed["ETag"]})
    assert again.status_code == 200 and again["ETag"] != changed["ETag"]
    # Same README, same files: the same ETag.
    assert _download(client)["ETag"] == again["ETag"]
