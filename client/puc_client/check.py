"""The site's upload check, run on this machine: scoring.upload_check.check_upload, the
very code the site runs, fed with the challenge's public facts from
GET /api/v1/challenges/<slug>/ (datasets, their tasks, rows and options; the phase)."""

from __future__ import annotations

from datetime import datetime

from . import errors
from .commands import Context, challenge_info
from .errors import ClientError
from .output import date_text
from .zipping import Prepared

CHECKED_PHASES = ("validation", "test", "post")


def local_check(
    ctx: Context, *, challenge: str, dataset: str | None, upload: Prepared
) -> list[str]:
    """The report lines the site would give for ``upload`` ([] if none)."""
    try:
        from scoring.upload_check import DatasetFacts, check_upload
    except ImportError as error:  # numpy missing, or an older scoring package
        raise ClientError(
            f"the local check needs the scoring package and numpy ({error}); "
            "reinstall the client, or skip the check with --no-check",
            errors.USAGE,
        ) from None
    info = challenge_info(ctx, challenge)
    if info["phase"] not in CHECKED_PHASES:
        raise ClientError(
            f"{info['slug']} opens on {date_text(info['start'])}: "
            "it takes no submissions before then",
            errors.REFUSED,
        )
    facts = [DatasetFacts.from_json(d) for d in info["datasets"] if "rows" in d]
    return check_upload(
        upload.path,
        datasets=facts,
        dataset=dataset or None,
        phase=info["phase"],
        test_start=datetime.fromisoformat(info["test_start"].replace("Z", "+00:00")),
    )
