"""Whether the prediction files of a dataset with classes fit the site's submission limits.

A binary or regression prediction line holds a few numbers; a multiclass line holds L
probabilities (M·L for an ensemble of M members, which are read a block at a time and
need no more memory than single lines). A multiclass split of n examples thus needs an
upload of about n·L numbers, which for CIFAR-scale data (10,000 × 100) is a few MB but
for ImageNet-scale data (50,000 × 1000) exceeds the default limits. A dataset whose
honest submission cannot be uploaded or scored is refused when its files or its number
of classes are given (check_files, the admin form), with the setting to raise, rather
than found out by its participants.

The sizes are those of the file the formats page recommends, ``np.savetxt(path, p,
fmt="%.6g")``: a probability takes at most 12 bytes with its separator (``1.23457e-05``,
``0.000123457``), and measured on softmax outputs (L = 10 to 1000, flat to sharp) 3.8 to
4.4 bytes once zipped (deflate). A smaller zip (fewer digits) always fits when this one
does. Scoring holds the n × L probabilities as float64 and a few arrays of n values (the
confidences, the terms, sort orders): its peak (reading, every loss, the terms and the
plot data; every allocation, as tracemalloc counts them) was about 12 MB for the
reader's blocks, 20 MB more in a process's first run (buffers it keeps), and up to 50
bytes per example plus 17 per probability (n = 1,000 to 1,000,000, L = 2 to 1000):
``MEMORY_BASE``, ``MEMORY_PER_EXAMPLE`` and ``MEMORY_PER_NUMBER`` bound these with a
margin. It depends on n and L alone, not on how the numbers are written: ensemble lines
are averaged a block at a time.
"""

from __future__ import annotations

from collections.abc import Mapping

from django.conf import settings

from .models import Split

# Per number of an n × L prediction file (see the module's docstring).
TEXT_BYTES_PER_NUMBER = 12  # "%.6g" of a probability and its separator, at most
ZIPPED_BYTES_PER_NUMBER = 5  # the same, deflated in a zip (measured: up to 4.4)
MEMORY_BASE = 64 * 10**6  # the reader's blocks and a first run's buffers (measured: 32 MB)
MEMORY_PER_EXAMPLE = 160  # arrays of n values at the peak (measured: up to 50)
MEMORY_PER_NUMBER = 24  # the float64 probabilities and their copies (measured: up to 17)
# The splits a submission must be able to hold on its own (training predictions are
# optional, and may be sent in a zip of their own).
SCORED_SPLITS = (Split.VAL, Split.TEST)


def _size(value: int) -> str:
    if value >= 10**6:
        return f"{value / 1e6:,.1f} MB"
    return f"{value / 1e3:,.1f} kB" if value >= 10**3 else f"{value} bytes"


def capacity_problems(*, name: str, classes: int | None, rows: Mapping[str, int]) -> list[str]:
    """Why the prediction file of a split of ``rows[split]`` examples of ``classes``
    probabilities would not fit the submission limits (settings.SUBMISSION_MAX_*); []
    when it fits or the dataset has no classes. ``name``: the dataset, as messages say it."""
    if not classes:
        return []
    sized = [(rows[split], split) for split in SCORED_SPLITS if rows.get(split)]
    if not sized:
        return []
    n, split = max(sized)
    numbers = n * classes
    what = (
        f"{name}: a {split} prediction file of {n:,} rows of {classes} probabilities "
        f'(np.savetxt with fmt="%.6g")'
    )
    limits = [
        (
            numbers * ZIPPED_BYTES_PER_NUMBER,
            settings.SUBMISSION_MAX_UPLOAD_BYTES,
            "SUBMISSION_MAX_UPLOAD_BYTES",
            "is about {need} zipped, over the {limit} an upload may have",
        ),
        (
            numbers * TEXT_BYTES_PER_NUMBER,
            settings.SUBMISSION_MAX_UNCOMPRESSED_BYTES,
            "SUBMISSION_MAX_UNCOMPRESSED_BYTES",
            "is about {need} unzipped, over the {limit} a submission's files may have",
        ),
        (
            MEMORY_BASE + n * MEMORY_PER_EXAMPLE + numbers * MEMORY_PER_NUMBER,
            settings.SUBMISSION_MAX_MEMORY_BYTES,
            "SUBMISSION_MAX_MEMORY_BYTES",
            "needs about {need} of memory to score, over the {limit} a scoring run may use",
        ),
    ]
    return [
        f"{what} {words.format(need=_size(need), limit=_size(limit))}: "
        f"use fewer classes or rows, or raise {setting}"
        for need, limit, setting, words in limits
        if need > limit
    ]
