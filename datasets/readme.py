"""README.txt of a dataset's zip: the description, the files in that zip, the file format.

Plain text, from the same facts the dataset and file-format pages show. It names only
the files it is given (those in the zip: released to the user who downloads it), so it
says nothing of a file that is not released yet.
"""

from __future__ import annotations

from collections.abc import Iterable

from challenge_site.markdown import plain_text
from scoring.tasks import text

from .models import Dataset, DatasetFile, Kind


def readme_text(dataset: Dataset, *, files: Iterable[DatasetFile]) -> str:
    """The README of a zip of ``dataset`` that holds ``files``."""
    challenge = dataset.challenge
    classes = dataset.scoring_options.classes
    title = f"{dataset.name} ({challenge.title})"
    sections = [
        f"{title}\n{'=' * len(title)}",
        text.wrap(
            f"{dataset.get_task_display()} dataset"
            + (f" of {classes} classes (0 to {classes - 1})" if classes else "")
            + (f", {dataset.input_dim} inputs per example" if dataset.input_dim else "")
            + f". Ranked by {dataset.effective_ranking_loss} on the test set (lower is better);"
            f" logarithms in base {dataset.log_base_label}."
        ),
    ]
    if description := plain_text(dataset.description):
        sections.append(description)
    sections.append(text.heading("Files in this zip") + "\n" + _file_lines(files))
    sections.append(format_help(dataset))
    return "\n\n".join(sections) + "\n"


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
    file-format page and the scoring specification, section 1): the rules of every file,
    then the task's own (scoring.tasks: TaskSpec.format_help)."""
    spec = dataset.task_spec
    general = [
        text.heading("File format"),
        text.wrap(
            "Every file, those in this zip and the predictions you submit, is plain ASCII"
            " text with one example per line, in the order of the inputs file."
        ),
        text.bullets(
            [
                "Numbers are separated by spaces or tabs (any number of them). No commas,"
                " no text, no header line.",
                "Any spelling Python's float() reads is fine: 3, -1, +1, 0.5, 6.7125064e-01"
                " (MATLAB's save -ascii style). nan and inf are not numbers here.",
                "Lines may end in LF or CRLF. Blank lines are allowed only at the very end"
                " of the file.",
                "An inputs file holds one input vector per line, all of the same length; a"
                " targets file one target per line: " + spec.readme_targets,
                "A prediction file has exactly as many lines as the inputs file it answers.",
                "When a file breaks a rule, every bad line is reported as FILE:LINE: message.",
            ]
        ),
    ]
    return "\n\n".join(general + spec.format_help(dataset.scoring_options))
