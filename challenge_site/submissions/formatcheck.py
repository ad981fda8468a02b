"""The format check of an upload refused for a limit.

An upload over the daily or total limit is still checked, at no cost to the limit: a
file that breaks the format gets its line errors (Rejected, 400) rather than the limit's
refusal (429), which only a valid file gets. The check is the scoring worker's first
stage (scoring.upload_check.check_files, the same messages), which reads no target: its
outcome cannot depend on a hidden one. It runs in the web process, outside any lock,
streaming each file (bounded memory) for SUBMISSION_LIMIT_CHECK_SECONDS at most; a file
not read to its end in that time is reported by what was found, as valid if nothing was.

Each such check costs the web process up to that time, and an upload refused this way is
not stored, so it would not count against SUBMISSION_MAX_REJECTED_PER_DAY: a user gets at
most that many of these checks per UTC day (counted in Django's cache, as the throttles
are); past it an upload over a limit gets the limit's refusal unchecked.
"""

import time
from datetime import datetime

from django.conf import settings
from django.core.cache import cache

from datasets.models import Dataset
from scoring.upload_check import bounded_report, check_files

from .archive import ArchiveError, Limits, inspect, open_zip
from .evaluation import dataset_facts


def allowed(*, user, now: datetime) -> bool:
    """Count one over-limit check of ``user`` today; False once they had their share."""
    key = f"submissions:limit-check:{user.pk}:{now:%Y-%m-%d}"
    cache.add(key, 0, timeout=2 * 24 * 3600)
    try:
        used = cache.incr(key)
    except ValueError:  # expired between add and incr
        cache.add(key, 1, timeout=2 * 24 * 3600)
        used = 1
    return used <= settings.SUBMISSION_MAX_REJECTED_PER_DAY


def format_problems(*, upload, dataset: Dataset, dataset_names, limits: Limits) -> list[str]:
    """The report lines the scoring worker would give ``upload`` for ``dataset``; [] if
    its files break no rule of the format (or none was found in the time allowed)."""
    deadline = time.monotonic() + settings.SUBMISSION_LIMIT_CHECK_SECONDS
    try:
        upload.seek(0)
        with open_zip(upload, size=upload.size, limits=limits) as archive:
            contents = inspect(
                archive,
                dataset_name=dataset.name,
                limits=limits,
                dataset_names=list(dataset_names),
            )
            lines = check_files(archive, contents, dataset_facts(dataset), deadline=deadline)
    except ArchiveError as error:
        return error.problems
    return bounded_report(lines)
