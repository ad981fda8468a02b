"""The private storage of uploads and per-example terms, looked up at every call, and
whole-object reads that cost one request to an object store."""

import contextlib
import gzip

from django.core.files.base import ContentFile
from django.core.files.storage import Storage, storages

try:  # django-storages' S3 backend, when installed
    from botocore.exceptions import ClientError
    from storages.backends.s3 import S3Storage
    from storages.utils import clean_name
except ImportError:  # files on a local disk only
    S3Storage = None


class PrivateStorage(Storage):
    """Every call goes to ``storages["private"]`` as configured at that moment.

    A FileField evaluates its storage callable once, when the model class loads. Returning
    ``storages["private"]`` itself would build the backend at start-up (before a missing
    backend package can be reported where it is used) and pin it for good, ignoring later
    settings such as each test's own folders. This stand-in forwards instead.
    """

    @staticmethod
    def target() -> Storage:
        return storages["private"]

    def open(self, name, mode="rb"):
        return self.target().open(name, mode)

    def save(self, name, content, max_length=None):
        return self.target().save(name, content, max_length=max_length)

    def generate_filename(self, filename):
        return self.target().generate_filename(filename)

    def get_valid_name(self, name):
        return self.target().get_valid_name(name)

    def get_available_name(self, name, max_length=None):
        return self.target().get_available_name(name, max_length=max_length)

    def path(self, name):
        return self.target().path(name)

    def delete(self, name):
        return self.target().delete(name)

    def exists(self, name):
        return self.target().exists(name)

    def listdir(self, path):
        return self.target().listdir(path)

    def size(self, name):
        return self.target().size(name)

    def url(self, name):
        return self.target().url(name)

    def get_accessed_time(self, name):
        return self.target().get_accessed_time(name)

    def get_created_time(self, name):
        return self.target().get_created_time(name)

    def get_modified_time(self, name):
        return self.target().get_modified_time(name)


PRIVATE_STORAGE = PrivateStorage()


def private_storage():
    return PRIVATE_STORAGE


@contextlib.contextmanager
def reading(name: str, *, storage: Storage | None = None):
    """A binary stream of the stored file ``name`` (of the private storage unless
    ``storage`` is given), read front to back.

    ``Storage.open`` on S3 (django-storages' S3File) asks for the object's metadata
    (HEAD), then copies it through a thread pool made for that one transfer into a
    temporary file: three times the time of one GET for the files a scoring run reads
    (its zip, the targets, terms), which were most of a worker's own overhead. Here an S3
    object is one GET whose body streams; any other backend opens the file as usual.
    A missing file raises FileNotFoundError either way."""
    storage = storage if storage is not None else private_storage().target()
    if S3Storage is None or not isinstance(storage, S3Storage):
        with storage.open(name, "rb") as handle:
            yield handle
        return
    key = storage._normalize_name(clean_name(name))
    # The object parameters a read needs (SSE-C keys), as S3File passes them.
    params = {
        key_: value
        for key_, value in storage.get_object_parameters(name).items()
        if key_.startswith("SSECustomer")
    }
    try:
        # The client, not bucket.Object(): boto3 builds a resource class at each call.
        client = storage.connection.meta.client
        answer = client.get_object(Bucket=storage.bucket_name, Key=key, **params)
    except ClientError as error:
        if error.response.get("ResponseMetadata", {}).get("HTTPStatusCode") == 404:
            raise FileNotFoundError(f"File does not exist: {name}") from None
        raise
    body = answer["Body"]
    try:
        if storage.gzip and answer.get("ContentEncoding") == "gzip":
            # Stored compressed by the backend (its gzip option): read as S3File would.
            with gzip.GzipFile(fileobj=body) as unzipped:
                yield unzipped
        else:
            yield body
    finally:
        body.close()


def read_bytes(name: str, *, storage: Storage | None = None) -> bytes:
    """The whole stored file ``name`` (see :func:`reading`)."""
    with reading(name, storage=storage) as stream:
        return stream.read()


def save_fresh(name: str, data: bytes) -> str:
    """Store ``data`` in the private storage under ``name``, a fresh name (it carries a
    random part, as terms files' do); returns the name stored.

    On S3 one PUT: ``Storage.save`` first asks whether the name is taken (a HEAD, the
    private bucket never overwrites) and then uploads through a thread pool made for
    that one transfer, which together cost more than the PUT for files of a few hundred
    kB. A fresh name needs no such question. Other backends save as usual."""
    storage = private_storage().target()
    if S3Storage is None or not isinstance(storage, S3Storage):
        return storage.save(name, ContentFile(data))
    name = clean_name(name)
    key = storage._normalize_name(name)
    # The parameters Storage.save would send: the object parameters, type and ACL.
    params = storage._get_write_parameters(key, ContentFile(data))
    if storage.gzip and params["ContentType"] in storage.gzip_content_types:
        return storage.save(name, ContentFile(data))  # compressed by the backend
    storage.connection.meta.client.put_object(
        Bucket=storage.bucket_name, Key=key, Body=data, **params
    )
    return name
