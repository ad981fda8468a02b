"""Bulk exports of one challenge for its organisers, streamed as they are built.

- :func:`iter_submissions_archive`: every submission's stored zip in one zip, under
  ``DATASET/ID-USERNAME.zip`` (stored as they are: they are compressed already), and
  ``manifest.csv`` with one row per submission, baselines and deleted zips included.
- :func:`iter_scores_csv`: every Score row of the challenge, test split included, in a
  long layout (one line per submission, split and loss) that pivots easily.

Memory stays bounded whatever the number of submissions: rows come from the database
with ``.iterator()`` (one query, fetched in chunks), files are copied ``CHUNK`` bytes at
a time and handed on at once, and the manifest (written last, once every file's sha256
is known) is spooled to a temporary file past ``MANIFEST_IN_MEMORY`` bytes.

Who may export is decided by the views (bulk_views.py) through ``policy``; these
generators export everything of the challenge they are given.
"""

from __future__ import annotations

import csv
import hashlib
import re
import tempfile
import zipfile
from collections.abc import Iterator
from datetime import datetime
from functools import partial

from django.db.models import Case, IntegerField, Value, When
from django.urls import reverse

from challenge_site.challenges.models import Challenge
from challenge_site.spreadsheet import csv_number, csv_text
from datasets.archive import _Sink
from datasets.models import Split

from .models import Score, Submission

CHUNK = 256 * 1024  # bytes copied (and yielded) at a time
ROWS_PER_FETCH = 500  # rows fetched from the database at a time
MANIFEST_IN_MEMORY = 1024 * 1024  # the manifest moves to a temporary file beyond this

MANIFEST = "manifest.csv"
MANIFEST_HEADER = [
    "submission",
    "dataset",
    "username",
    "display_name",
    "baseline",
    "method",
    "authors",
    "mark",
    "phase",
    "status",
    "created",
    "queued_at",
    "started_at",
    "finished_at",
    "original_filename",
    "file_size",
    "file",
    "file_status",
    "sha256",
    "file_deleted_at",
    "team",
    "withdrawn_at",
]
SCORES_HEADER = [
    "dataset",
    "split",
    "submission",
    "username",
    "display_name",
    "baseline",
    "method",
    "authors",
    "mark",
    "phase",
    "status",
    "created",
    "loss",
    "value",
    "team",
    "slice",  # scoring.md §8: the slice a score is computed on; empty for the whole split
]


class FileStatus:
    """The manifest's ``file_status``: what became of a submission's zip."""

    INCLUDED = "included"  # in the archive, at ``file``
    DELETED = "deleted"  # deleted on purpose (file_deleted_at), e.g. an old invalid upload
    MISSING = "missing"  # named by the database but not found in the storage
    NONE = "none"  # never had one: a baseline


SUBMISSION_FIELDS = (
    "pk",
    "dataset__name",
    "user__username",
    "user__profile__display_name",
    "is_baseline",
    "method",
    "authors",
    "mark",
    "phase",
    "status",
    "created",
    "queued_at",
    "started_at",
    "finished_at",
    "original_filename",
    "file_size",
    "file",
    "file_deleted_at",
    "team__name",
    "withdrawn_at",
)
SCORE_FIELDS = (
    "dataset__name",
    "split",
    "submission_id",
    "submission__user__username",
    "submission__user__profile__display_name",
    "submission__is_baseline",
    "submission__method",
    "submission__authors",
    "submission__mark",
    "submission__phase",
    "submission__status",
    "submission__created",
    "loss",
    "value",
    "submission__team__name",
)
SPLIT_ORDER = Case(
    *(When(split=split, then=Value(i)) for i, split in enumerate(Split.values)),
    default=Value(len(Split.values)),
    output_field=IntegerField(),
)


class _Echo:
    """A csv writer's file that gives each line back instead of storing it."""

    def write(self, value: str) -> str:
        return value


def _time(value: datetime | None) -> str:
    return value.isoformat() if value is not None else ""


def _yes(value: bool) -> str:
    return "yes" if value else "no"


def member_name(*, submission_id: int, dataset: str, username: str | None) -> str:
    """Where a submission's zip goes in the archive: ``DATASET/ID-USERNAME.zip``."""
    user = re.sub(r"[^\w.@+-]", "_", username or "") or "baseline"
    return f"{dataset}/{submission_id}-{user}.zip"


def export_links(challenge: Challenge) -> list[tuple[str, str]]:
    """(label, URL) of the challenge's exports, for the admin; organisers only may open them."""
    return [
        ("All submissions (zip)", reverse("export_submissions", args=[challenge.slug])),
        ("All scores (CSV)", reverse("export_scores", args=[challenge.slug])),
    ]


# --- Submissions -------------------------------------------------------------------------


def _submission_rows(challenge: Challenge) -> Iterator[dict]:
    return (
        Submission.objects.filter(dataset__challenge=challenge)
        .order_by("dataset__position", "dataset__name", "pk")
        .values(*SUBMISSION_FIELDS)
        .iterator(chunk_size=ROWS_PER_FETCH)
    )


def _copy(source, target, digest) -> Iterator[int]:
    """Copy ``source`` into ``target`` chunk by chunk, yielding after each chunk."""
    for chunk in iter(partial(source.read, CHUNK), b""):
        digest.update(chunk)
        target.write(chunk)
        yield len(chunk)


def iter_submissions_archive(challenge: Challenge, *, now: datetime) -> Iterator[bytes]:
    """Every submission of ``challenge`` as one zip, yielded chunk by chunk.

    Each stored upload is copied byte for byte (ZIP_STORED) to ``member_name``; the
    manifest, written last, lists every submission, with the file's size and sha256 (as
    copied) or why it has none (``FileStatus``).
    """
    storage = Submission._meta.get_field("file").storage
    writer = csv.writer(_Echo())
    sink = _Sink()
    with (
        tempfile.SpooledTemporaryFile(max_size=MANIFEST_IN_MEMORY, mode="w+b") as manifest,
        zipfile.ZipFile(sink, "w", compression=zipfile.ZIP_STORED) as archive,
    ):
        manifest.write(writer.writerow(MANIFEST_HEADER).encode())
        for row in _submission_rows(challenge):
            name, size, sha256 = "", row["file_size"], ""
            if row["file_deleted_at"] is not None:
                status = FileStatus.DELETED
            elif not row["file"]:
                status = FileStatus.NONE
            else:
                try:
                    source = storage.open(row["file"], "rb")
                except OSError:  # FileNotFoundError, or a storage that lost it
                    status = FileStatus.MISSING
                else:
                    status = FileStatus.INCLUDED
                    name = member_name(
                        submission_id=row["pk"],
                        dataset=row["dataset__name"],
                        username=row["user__username"],
                    )
                    info = zipfile.ZipInfo(name, date_time=row["created"].timetuple()[:6])
                    info.compress_type = zipfile.ZIP_STORED
                    info.file_size = row["file_size"]  # decides Zip64 before any byte
                    digest, size = hashlib.sha256(), 0
                    with source, archive.open(info, "w") as target:
                        for copied in _copy(source, target, digest):
                            size += copied
                            if data := sink.drain():
                                yield data
                    sha256 = digest.hexdigest()
            manifest.write(
                writer.writerow(
                    [
                        row["pk"],
                        row["dataset__name"],
                        csv_text(row["user__username"] or ""),
                        csv_text(row["user__profile__display_name"] or ""),
                        _yes(row["is_baseline"]),
                        csv_text(row["method"]),
                        csv_text(row["authors"]),
                        row["mark"],
                        row["phase"],
                        row["status"],
                        _time(row["created"]),
                        _time(row["queued_at"]),
                        _time(row["started_at"]),
                        _time(row["finished_at"]),
                        csv_text(row["original_filename"]),
                        size,
                        name,
                        status,
                        sha256,
                        _time(row["file_deleted_at"]),
                        csv_text(row["team__name"] or ""),
                        _time(row["withdrawn_at"]),
                    ]
                ).encode()
            )
        info = zipfile.ZipInfo(MANIFEST, date_time=now.timetuple()[:6])
        info.compress_type = zipfile.ZIP_DEFLATED
        info.file_size = manifest.tell()
        manifest.seek(0)
        with archive.open(info, "w") as target:
            for chunk in iter(partial(manifest.read, CHUNK), b""):
                target.write(chunk)
                if data := sink.drain():
                    yield data
    yield sink.drain()  # the rest, and the central directory written on close


# --- Scores ------------------------------------------------------------------------------


def _score_rows(challenge: Challenge) -> Iterator[tuple]:
    return (
        Score.objects.filter(dataset__challenge=challenge)
        .order_by("dataset__position", "dataset__name", SPLIT_ORDER, "submission_id", "loss")
        .values_list(*SCORE_FIELDS)
        .iterator(chunk_size=ROWS_PER_FETCH)
    )


def iter_scores_csv(challenge: Challenge) -> Iterator[str]:
    """Every score of ``challenge`` (all splits, hidden ones included) as CSV lines.

    One line per (dataset, split, submission, loss), ordered so; ``value`` at full
    precision, ``inf`` and ``n/a`` as the leaderboard CSV writes them. ``status`` is the
    submission's: one being rescored keeps its previous scores until the new ones land.
    """
    writer = csv.writer(_Echo())
    yield writer.writerow(SCORES_HEADER)
    for (
        dataset,
        split,
        submission_id,
        username,
        display_name,
        is_baseline,
        method,
        authors,
        mark,
        phase,
        status,
        created,
        loss,
        value,
        team,
    ) in _score_rows(challenge):
        # A slice's score is stored as "LOSS@SLICE": its loss and its slice, in two columns.
        loss, _, slice_name = loss.partition("@")
        yield writer.writerow(
            [
                dataset,
                split,
                submission_id,
                csv_text(username or ""),
                csv_text(display_name or ""),
                _yes(is_baseline),
                csv_text(method),
                csv_text(authors),
                mark,
                phase,
                status,
                _time(created),
                loss,
                csv_number(value),
                csv_text(team or ""),
                slice_name,
            ]
        )
