"""submissions.storage: the private storage of uploads and terms, looked up at every call
(each test's own folders, a changed configuration), never pinned at start-up; whole
files read and written with one request each on S3."""

import io

import pytest
from botocore.exceptions import ClientError
from botocore.response import StreamingBody
from botocore.stub import Stubber
from django.core.files.base import ContentFile

from challenge_site.submissions.models import Submission
from challenge_site.submissions.storage import (
    PRIVATE_STORAGE,
    private_storage,
    read_bytes,
    reading,
    save_fresh,
)


def test_every_call_goes_to_the_private_storage_of_the_moment(settings, tmp_path, storage_roots):
    assert private_storage() is PRIVATE_STORAGE
    name = private_storage().save("uploads/a.zip", ContentFile(b"PK"))
    assert (storage_roots["private"] / name).read_bytes() == b"PK"
    assert private_storage().exists(name) and private_storage().size(name) == 2
    with private_storage().open(name) as handle:
        assert handle.read() == b"PK"
    assert private_storage().listdir("uploads") == ([], ["a.zip"])
    elsewhere = tmp_path / "elsewhere"
    settings.STORAGES = {
        **settings.STORAGES,
        "private": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": str(elsewhere), "base_url": None},
        },
    }
    assert not private_storage().exists(name)  # the new configuration, at once
    again = private_storage().save("uploads/a.zip", ContentFile(b"PK2"))
    assert (elsewhere / again).read_bytes() == b"PK2"
    private_storage().delete(again)
    assert not (elsewhere / again).exists()


def test_the_upload_field_stores_there():
    assert Submission._meta.get_field("file").storage is PRIVATE_STORAGE


def test_reading_and_saving_whole_files_on_a_disk(storage_roots):
    name = save_fresh("terms/x.npz", b"abc")
    assert (storage_roots["private"] / name).read_bytes() == b"abc"
    assert read_bytes(name) == b"abc"
    with reading(name) as stream:
        assert stream.read(2) == b"ab"
    with pytest.raises(FileNotFoundError):
        read_bytes("terms/missing.npz")


S3_OPTIONS = {
    "bucket_name": "private-bucket",
    "access_key": "key",
    "secret_key": "secret",
    "region_name": "us-east-1",
    "endpoint_url": "http://127.0.0.1:9",  # never reached: the client is stubbed
    "addressing_style": "path",
    "signature_version": "s3v4",
    "default_acl": "private",
    "file_overwrite": False,  # as settings.env_s3_storages: a name in use is never replaced
}


@pytest.fixture
def s3(settings):
    """The private storage on S3, its client stubbed: every request is named in advance."""
    settings.STORAGES = {
        **settings.STORAGES,
        "private": {"BACKEND": "storages.backends.s3.S3Storage", "OPTIONS": S3_OPTIONS},
    }
    storage = private_storage().target()
    with Stubber(storage.connection.meta.client) as stubber:
        yield stubber
        stubber.assert_no_pending_responses()


def test_an_s3_object_is_read_with_one_get_and_nothing_else(s3):
    s3.add_response(
        "get_object",
        {"Body": StreamingBody(io.BytesIO(b"PK zip"), 6), "ContentLength": 6},
        {"Bucket": "private-bucket", "Key": "uploads/a.zip"},
    )
    assert read_bytes("uploads/a.zip") == b"PK zip"  # no HEAD, no ranged transfer
    s3.add_client_error("get_object", service_error_code="NoSuchKey", http_status_code=404)
    with pytest.raises(FileNotFoundError):
        read_bytes("uploads/gone.zip")
    s3.add_client_error("get_object", service_error_code="AccessDenied", http_status_code=403)
    with pytest.raises(ClientError):  # anything but a missing file is not hidden
        read_bytes("uploads/other.zip")


def test_a_fresh_name_is_written_to_s3_with_one_put_and_the_storage_s_parameters(s3):
    # No HEAD first (is the name taken?): a fresh name carries a random part.
    s3.add_response(
        "put_object",
        {},
        {
            "Bucket": "private-bucket",
            "Key": "terms/demo/gaze/1-val-ab.npz",
            "Body": b"\x93NUMPY",
            "ContentType": "application/octet-stream",
            "ACL": "private",
        },
    )
    assert save_fresh("terms/demo/gaze/1-val-ab.npz", b"\x93NUMPY") == (
        "terms/demo/gaze/1-val-ab.npz"
    )
