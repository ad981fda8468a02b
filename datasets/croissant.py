"""A dataset's Croissant 1.0 description (MLCommons' JSON-LD metadata for ML datasets):
its released files with their sha256 and download URLs, one record set per file (its
columns and their types) and the prediction format the task expects.

One document for everybody: it is built from the files the clock has released
(``released_files``), never from what the asking user may see, so an organiser's page
carries no more than an anonymous visitor's and nothing unreleased (no name, sha256,
size or row count) ever appears. The dataset page embeds it in a data block and
``…/croissant.json`` serves it (datasets.views).

The files are headerless ASCII, numbers separated by runs of blanks (spec §1), which no
Croissant reader parses as columns: each file is read by lines (``text/plain`` with
``fileProperty: lines``, which mlcroissant reads) and a column is the n-th number of a
line, picked by a regex ``transform``. A one-number file needs no regex (the reader
already gives a number per line). Each file's ``contentUrl`` is its own download
(``…/files/NAME``, under the zip's rules) so that its stored sha256 can be checked.

The prediction file is a record set with no file: the task's help as its description
and, as inline ``data``, the help's example lines that are valid for this dataset (the
upload check says which). Croissant wants a field read from a file or given data, so a
dataset none of whose examples fit (a multiclass one of other than 3 classes) gets the
help in its own description instead.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable
from datetime import datetime

import numpy as np
from django.conf import settings
from django.urls import reverse
from django.utils.safestring import SafeString, mark_safe

from challenge_site.markdown import plain_text
from scoring.upload_check import check_file

from .models import Dataset, DatasetFile, Kind
from .services import released_files

# The JSON-LD context of Croissant 1.0 (its specification's, as mlcroissant writes it).
CONTEXT = {
    "@language": "en",
    "@vocab": "https://schema.org/",
    "citeAs": "cr:citeAs",
    "column": "cr:column",
    "conformsTo": "dct:conformsTo",
    "cr": "http://mlcommons.org/croissant/",
    "rai": "http://mlcommons.org/croissant/RAI/",
    "data": {"@id": "cr:data", "@type": "@json"},
    "dataType": {"@id": "cr:dataType", "@type": "@vocab"},
    "dct": "http://purl.org/dc/terms/",
    "equivalentProperty": "cr:equivalentProperty",
    "examples": {"@id": "cr:examples", "@type": "@json"},
    "extract": "cr:extract",
    "field": "cr:field",
    "fileProperty": "cr:fileProperty",
    "fileObject": "cr:fileObject",
    "fileSet": "cr:fileSet",
    "format": "cr:format",
    "includes": "cr:includes",
    "isLiveDataset": "cr:isLiveDataset",
    "jsonPath": "cr:jsonPath",
    "key": "cr:key",
    "md5": "cr:md5",
    "parentField": "cr:parentField",
    "path": "cr:path",
    "recordSet": "cr:recordSet",
    "references": "cr:references",
    "regex": "cr:regex",
    "repeated": "cr:repeated",
    "replace": "cr:replace",
    "samplingRate": "cr:samplingRate",
    "sc": "https://schema.org/",
    "separator": "cr:separator",
    "source": "cr:source",
    "subField": "cr:subField",
    "transform": "cr:transform",
}
CONFORMS_TO = "http://mlcommons.org/croissant/1.0"
MEDIA_TYPE = "application/ld+json"
FILE_FORMAT = "text/plain"

# The challenges carry no citation of their own: every dataset cites the paper of the
# challenge this site replicates (shared/seeds/000), whose formats and losses it uses.
CITATION = (
    "@inproceedings{quinonero2006evaluating,"
    " author = {Qui{\\~n}onero-Candela, Joaquin and Rasmussen, Carl Edward and Sinz, Fabian"
    ' and Bousquet, Olivier and Sch{\\"o}lkopf, Bernhard},'
    " title = {Evaluating Predictive Uncertainty Challenge},"
    " booktitle = {Machine Learning Challenges: Evaluating Predictive Uncertainty, Visual"
    " Object Classification, and Recognising Textual Entailment (MLCW 2005)},"
    " series = {Lecture Notes in Artificial Intelligence}, volume = {3944},"
    " pages = {1--27}, publisher = {Springer}, year = {2006}}"
)

# Wider inputs get one text field per line, not a field per column: a regex per column
# costs O(columns) per value, and the document would grow by ~300 bytes a column.
MAX_COLUMN_FIELDS = 100

# A field that takes the (n+1)-th number of a line (numbers separated by runs of blanks,
# leading blanks allowed: spec §1).
COLUMN_REGEX = r"^\s*(?:\S+\s+){%d}(\S+)"

# The one field of the prediction record set, and how the task's help marks an example.
PREDICTION_FIELD = "predictions/line"
EXAMPLE_INDENT = "    "  # scoring.tasks.text.example


def croissant_document(*, dataset: Dataset, now: datetime, absolute: Callable[[str], str]) -> dict:
    """The Croissant description of ``dataset`` at ``now``: the files released then, and
    nothing of the others. ``absolute`` turns a site path into a URL (the request's
    ``build_absolute_uri``)."""
    challenge = dataset.challenge
    files = released_files(dataset, now=now)
    args = [challenge.slug, dataset.name]
    # With no example valid for this dataset, the prediction format goes in the
    # description (module docstring).
    examples = _prediction_examples(dataset)
    return {
        "@context": CONTEXT,
        "@type": "sc:Dataset",
        "conformsTo": CONFORMS_TO,
        "name": f"{dataset.name} ({challenge.title})",
        "description": _description(dataset, predictions_set=bool(examples)),
        # No licence field exists: the challenge's rules are the terms of use.
        "license": absolute(reverse("challenge_rules", args=[challenge.slug])),
        "citeAs": CITATION,
        "url": absolute(reverse("dataset_detail", args=args)),
        "datePublished": challenge.start.isoformat(),
        "version": _version(files),
        "creator": {
            "@type": "sc:Organization",
            "name": settings.SITE_NAME,
            "url": absolute(reverse("home")),
        },
        "keywords": ["predictive uncertainty", dataset.get_task_display()],
        "distribution": [
            _file_object(f, url=absolute(reverse("dataset_file", args=[*args, f.filename])))
            for f in files
        ],
        "recordSet": [_record_set(dataset, f) for f in files]
        + ([_predictions(dataset, examples)] if examples else []),
    }


def croissant_json(document: dict) -> str:
    return json.dumps(document, ensure_ascii=False, indent=1)


# Django's json_script escapes: inside <script> no "</script>" or "<!--" can form.
_SCRIPT_ESCAPES = {ord("<"): "\\u003C", ord(">"): "\\u003E", ord("&"): "\\u0026"}


def croissant_script(document: dict) -> SafeString:
    """The document as the body of a ``<script type="application/ld+json">`` data block:
    JSON with <, > and & escaped as \\u003C…, which JSON readers decode back, so nothing
    in a description can close the element."""
    return mark_safe(croissant_json(document).translate(_SCRIPT_ESCAPES))  # noqa: S308


def document_etag(body: bytes) -> str:
    return f'"{hashlib.sha256(body).hexdigest()[:32]}"'


# --- Parts -----------------------------------------------------------------------------


def _description(dataset: Dataset, *, predictions_set: bool) -> str:
    challenge = dataset.challenge
    classes = dataset.scoring_options.classes
    summary = (
        f"{dataset.get_task_display()} dataset of the challenge “{challenge.title}”"
        + (f", {classes} classes (0 to {classes - 1})" if classes else "")
        + (f", {dataset.input_dim} inputs per example" if dataset.input_dim else "")
        + ". Plain ASCII files, one example per line, numbers separated by blanks."
    )
    if predictions_set:
        summary += " The record set 'predictions' describes the file a participant submits."
    else:
        summary += f"\n\n{_prediction_help(dataset)}"
    own = plain_text(dataset.description)
    return f"{own}\n\n{summary}" if own else summary


def _version(files: Iterable[DatasetFile]) -> str:
    """MAJOR.MINOR.PATCH+BUILD: the minor number counts the released files (each release
    adds some), the build names their contents (a replaced file changes it)."""
    files = list(files)
    digest = hashlib.sha256("".join(f.sha256 for f in files).encode()).hexdigest()[:8]
    return f"1.{len(files)}.0+{digest}"


def _file_object(datafile: DatasetFile, *, url: str) -> dict:
    return {
        "@type": "cr:FileObject",
        "@id": datafile.filename,
        "name": datafile.filename,
        "description": _file_words(datafile),
        "contentUrl": url,
        "contentSize": f"{datafile.size} B",
        "encodingFormat": FILE_FORMAT,
        "sha256": datafile.sha256,
    }


def _file_words(datafile: DatasetFile) -> str:
    what = datafile.get_split_display().lower()
    if datafile.kind == Kind.INPUTS:
        return f"The {what} inputs: {datafile.rows} rows of {datafile.columns} numbers."
    return f"The {what} targets: {datafile.rows} rows of one target each."


def _record_set_id(datafile: DatasetFile) -> str:
    return f"{datafile.split}_{datafile.kind}"


def _record_set(dataset: Dataset, datafile: DatasetFile) -> dict:
    record_set = _record_set_id(datafile)
    if datafile.kind == Kind.INPUTS:
        if datafile.columns > MAX_COLUMN_FIELDS:
            fields = [_line_field(record_set, datafile)]
        else:
            fields = [
                _column_field(
                    record_set,
                    datafile,
                    name=f"x{column + 1}",
                    column=column,
                    description=f"Input {column + 1} of {datafile.columns}.",
                    data_type="sc:Float",
                )
                for column in range(datafile.columns)
            ]
    else:
        fields = [
            _column_field(
                record_set,
                datafile,
                name="y",
                column=0,
                description=f"The target: {dataset.task_spec.readme_targets}",
                data_type="sc:Integer" if _integral_targets(dataset) else "sc:Float",
            )
        ]
    return {
        "@type": "cr:RecordSet",
        "@id": record_set,
        "name": record_set,
        "description": f"{_file_words(datafile)} One record per line of {datafile.filename}.",
        "field": fields,
    }


def _integral_targets(dataset: Dataset) -> bool:
    """Whether the task's targets are whole numbers, asked of the task itself: it refuses
    a fractional target (spec: ±1 labels, class labels), or takes any number."""
    return dataset.task_spec.target_error(np.array([0.5]), dataset.scoring_options) is not None


def _source(datafile: DatasetFile, *, column: int | None) -> dict:
    source = {"fileObject": {"@id": datafile.filename}, "extract": {"fileProperty": "lines"}}
    if column is not None and datafile.columns > 1:
        source["transform"] = {"regex": COLUMN_REGEX % column}
    return source


def _column_field(
    record_set: str,
    datafile: DatasetFile,
    *,
    name: str,
    column: int,
    description: str,
    data_type: str,
) -> dict:
    return {
        "@type": "cr:Field",
        "@id": f"{record_set}/{name}",
        "name": name,
        "description": description,
        "dataType": data_type,
        "source": _source(datafile, column=column),
    }


def _line_field(record_set: str, datafile: DatasetFile) -> dict:
    return {
        "@type": "cr:Field",
        "@id": f"{record_set}/x",
        "name": "x",
        "description": f"The line: {datafile.columns} numbers separated by blanks.",
        "dataType": "sc:Text",
        "source": _source(datafile, column=None),
    }


def _prediction_help(dataset: Dataset) -> str:
    """The prediction format in words: the task's own help, as the zip's README gives it."""
    return "\n\n".join(dataset.task_spec.format_help(dataset.scoring_options))


def _prediction_examples(dataset: Dataset) -> list[str]:
    """The example lines of the task's help that are valid prediction lines for this
    dataset (its options: classes, sample rows, quantile gap), as the upload check says:
    an example of another number of classes, or a line of code, is not one."""
    candidates = dict.fromkeys(
        line.strip()
        for paragraph in dataset.task_spec.format_help(dataset.scoring_options)
        if all(line.startswith(EXAMPLE_INDENT) for line in paragraph.splitlines())
        for line in paragraph.splitlines()
    )
    return [
        line
        for line in candidates
        if not check_file(
            f"{line}\n".encode(),
            path="example",
            task=dataset.task,
            rows=1,
            options=dataset.scoring_options,
        )
    ]


def _predictions(dataset: Dataset, examples: list[str]) -> dict:
    """The file a participant submits, as a record set with no file: its format in words
    and, as its inline data, example lines valid for this dataset."""
    return {
        "@type": "cr:RecordSet",
        "@id": "predictions",
        "name": "predictions",
        "description": (
            "The prediction file a participant submits for each evaluated split (not part"
            " of the data): plain ASCII, one line per example, in the order of the split's"
            f" inputs file.\n\n{_prediction_help(dataset)}"
        ),
        "field": [
            {
                "@type": "cr:Field",
                "@id": PREDICTION_FIELD,
                "name": "line",
                "description": "One example's predictive distribution, as described above.",
                "dataType": "sc:Text",
            }
        ],
        "data": [{PREDICTION_FIELD: line} for line in examples],
    }
