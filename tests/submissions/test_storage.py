"""submissions.storage: the private storage of uploads and terms, looked up at every call
(each test's own folders, a changed configuration), never pinned at start-up."""

from django.core.files.base import ContentFile

from challenge_site.submissions.models import Submission
from challenge_site.submissions.storage import PRIVATE_STORAGE, private_storage


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
