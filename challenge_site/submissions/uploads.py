"""Refuse an oversized upload while it arrives, instead of spooling all of it to disk."""

from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.files.uploadhandler import FileUploadHandler, SkipFile, StopFutureHandlers

# The one file field of a submission (the form's and the API's).
UPLOAD_FIELD = "file"


class SizeLimitUploadHandler(FileUploadHandler):
    """Skips (drains without storing) ``file`` uploads past ``max_bytes`` in all, and drops
    files sent in any other field: a request stores at most ``max_bytes``, whatever it
    holds. The request's ``oversized_uploads`` names the skipped ``file`` field, so the
    form can say why."""

    def __init__(self, request, *, max_bytes: int):
        super().__init__(request)
        self.max_bytes = max_bytes
        self.received = 0  # of all the request's file fields named "file"
        self.dropping = False

    def new_file(self, *args, **kwargs):
        super().new_file(*args, **kwargs)
        self.dropping = self.field_name != UPLOAD_FIELD
        if self.dropping:
            # Only this handler sees the file: none after it opens a temporary file.
            # (SkipFile would close the files the other handlers already completed.)
            raise StopFutureHandlers

    def receive_data_chunk(self, raw_data, start):
        if self.dropping:
            return None  # read and dropped
        self.received += len(raw_data)
        if self.received > self.max_bytes:
            self.request.oversized_uploads.add(self.field_name)
            raise SkipFile
        return raw_data

    def file_complete(self, file_size):
        if self.dropping:
            return SimpleUploadedFile(self.file_name or "dropped", b"")  # stands for it, empty
        return None


def limit_upload_size(request) -> None:
    """Put the size limit first among ``request``'s upload handlers (before the body is read)."""
    django_request = getattr(request, "_request", request)
    if not hasattr(django_request, "oversized_uploads"):
        django_request.oversized_uploads = set()
        django_request.upload_handlers.insert(
            0,
            SizeLimitUploadHandler(django_request, max_bytes=settings.SUBMISSION_MAX_UPLOAD_BYTES),
        )


def oversized(request, field: str) -> bool:
    django_request = getattr(request, "_request", request)
    return field in getattr(django_request, "oversized_uploads", set())


def too_large_message() -> str:
    limit = settings.SUBMISSION_MAX_UPLOAD_BYTES
    return f"the file is larger than {limit / 1_000_000:.1f} MB, the limit for a submission zip"
