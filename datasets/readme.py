"""README.txt of a dataset's zip: the description, the files in that zip, the file format.

Plain text, from the same facts the dataset and file-format pages show. It names only
the files it is given (those in the zip: released to the user who downloads it), so it
says nothing of a file that is not released yet.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterable

from challenge_site.markdown import plain_text

from .models import Dataset, DatasetFile, Kind, Task

WIDTH = 78


def readme_text(dataset: Dataset, *, files: Iterable[DatasetFile]) -> str:
    """The README of a zip of ``dataset`` that holds ``files``."""
    challenge = dataset.challenge
    title = f"{dataset.name} ({challenge.title})"
    sections = [
        f"{title}\n{'=' * len(title)}",
        _wrap(
            f"{dataset.get_task_display()} dataset"
            + (f", {dataset.input_dim} inputs per example" if dataset.input_dim else "")
            + f". Ranked by {dataset.effective_ranking_loss} on the test set (lower is better);"
            f" logarithms in base {dataset.log_base_label}."
        ),
    ]
    if description := plain_text(dataset.description):
        sections.append(description)
    sections.append(_heading("Files in this zip") + "\n" + _file_lines(files))
    sections.append(format_help(dataset))
    return "\n\n".join(sections) + "\n"


def _heading(text: str) -> str:
    return f"{text}\n{'-' * len(text)}"


def _wrap(text: str, *, indent: str = "") -> str:
    return textwrap.fill(text, WIDTH, initial_indent=indent, subsequent_indent=indent)


def _bullets(items: list[str]) -> str:
    return "\n".join(
        textwrap.fill(item, WIDTH, initial_indent="- ", subsequent_indent="  ") for item in items
    )


def _example(lines: list[str]) -> str:
    return "\n".join(f"    {line}" for line in lines)


def _file_lines(files: Iterable[DatasetFile]) -> str:
    rows = []
    for datafile in files:
        if datafile.kind == Kind.INPUTS:
            shape = f"{datafile.rows} rows of {datafile.columns} numbers (inputs)"
        else:
            shape = f"{datafile.rows} rows of one target each"
        rows.append((datafile.filename, shape))
    width = max((len(name) for name, _ in rows), default=0)
    return "\n".join(f"{name.ljust(width)}  {shape}" for name, shape in rows)


def format_help(dataset: Dataset) -> str:
    """The file format as plain text, for ``dataset``'s task and options (from the site's
    file-format page and the scoring specification, section 1)."""
    general = [
        _heading("File format"),
        _wrap(
            "Every file, those in this zip and the predictions you submit, is plain ASCII"
            " text with one example per line, in the order of the inputs file."
        ),
        _bullets(
            [
                "Numbers are separated by spaces or tabs (any number of them). No commas,"
                " no text, no header line.",
                "Any spelling Python's float() reads is fine: 3, -1, +1, 0.5, 6.7125064e-01"
                " (MATLAB's save -ascii style). nan and inf are not numbers here.",
                "Lines may end in LF or CRLF. Blank lines are allowed only at the very end"
                " of the file.",
                "An inputs file holds one input vector per line, all of the same length; a"
                " targets file one target per line: "
                + ("+1 or -1." if dataset.task == Task.CLASSIFICATION else "a real number."),
                "A prediction file has exactly as many lines as the inputs file it answers.",
                "When a file breaks a rule, every bad line is reported as FILE:LINE: message.",
            ]
        ),
    ]
    if dataset.task == Task.CLASSIFICATION:
        specific = _classification_help()
    else:
        specific = _regression_help(dataset)
    return "\n\n".join(general + specific)


def _classification_help() -> list[str]:
    return [
        _heading("Predictions (classification)"),
        _wrap(
            "One number per line: your probability that the example belongs to class +1,"
            " between 0 and 1. For example:"
        ),
        _example(["0.91", "0.0625", "5.0000000e-01", "1"]),
        _wrap(
            "A probability of exactly 0 or 1 that turns out wrong costs an infinite log"
            " loss. A file whose every line is 0 or 1 is a non-probabilistic entry, scored"
            " only by the classification error."
        ),
    ]


def _regression_help(dataset: Dataset) -> list[str]:
    parts = [
        _heading("Predictions (regression)"),
        _wrap(
            "Each line starts with a flag saying how it describes your predictive"
            " distribution of the target. Different lines of one file may use different"
            " kinds."
        ),
        _wrap(
            "Flag 1, a Gaussian: 1 m v. Mean m and variance v (not the standard deviation),"
            " v >= 0. Variance 0 is a point prediction; a file of point predictions only is"
            " scored by nMSE alone. A mean of 3.1 and variance 1.7:"
        ),
        _example(["1 3.1 1.7"]),
        _wrap(
            "Flag 0, quantiles: 0 a1 q1 a2 q2 ... aN qN. Pairs of a probability level a and"
            " its quantile q: your probability that the target is below q is a. Between 2"
            " and 200 pairs; levels strictly increase inside (0, 1) and quantiles strictly"
            " increase. The density is flat between quantiles, with exponential tails"
            " outside carrying the remaining probability."
            + (
                f" In this dataset consecutive quantiles must be at least"
                f" {dataset.min_quantile_gap:g} apart."
                if dataset.min_quantile_gap
                else ""
            )
            + " For example:"
        ),
        _example(["0 0.2 -2 0.3 -1 0.8 1 0.9 3"]),
    ]
    if dataset.allow_samples:
        parts += [
            _wrap(
                "Flag 2, a sample: 2 s1 s2 ... sK. Between 1 and 1000 values drawn from your"
                " predictive distribution (an ensemble), scored as their empirical"
                " distribution; NLPD is not available for a file with sample lines."
                " For example:"
            ),
            _example(["2 4.9 5.3 5.1 6.0 5.4"]),
            _wrap("A file mixing all three:"),
            _example(
                ["1 3.1 1.7", "0 0.2 -2 0.3 -1 0.8 1 0.9 3", "2 4.9 5.3 5.1 6.0 5.4", "1 -0.25 0"]
            ),
        ]
    else:
        parts += [
            _wrap("Flag 2 (a sample of values) is not accepted for this dataset."),
            _wrap("A file mixing both kinds:"),
            _example(["1 3.1 1.7", "0 0.2 -2 0.3 -1 0.8 1 0.9 3", "1 -0.25 0"]),
        ]
    return parts
