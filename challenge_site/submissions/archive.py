"""Submission zips: the checks live in the scoring package (scoring.archive), so that a
participant's machine runs the same code and gets the same messages; the site adds its
limits, read from the settings."""

import zipfile  # noqa: F401 - tests reach the zip module through this module

from django.conf import settings

from scoring.archive import (  # noqa: F401 - the site's names for them
    ArchiveError,
    Contents,
    HeldArchive,
    bounded,
    inspect,
    open_member,
    open_zip,
    verify,
)
from scoring.archive import Limits as _Limits


class Limits(_Limits):
    """The zip limits, with the site's values (settings.SUBMISSION_MAX_*)."""

    @classmethod
    def from_settings(cls) -> "Limits":
        return cls(
            settings.SUBMISSION_MAX_UPLOAD_BYTES,
            settings.SUBMISSION_MAX_UNCOMPRESSED_BYTES,
            settings.SUBMISSION_MAX_COMPRESSION_RATIO,
            settings.SUBMISSION_MAX_ZIP_ENTRIES,
        )
