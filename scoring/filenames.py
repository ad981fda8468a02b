"""Prediction file names: ``NAME_SPLIT_predict.txt``, and the name a near miss meant.

A participant's file named ``Gaze_Validation_Predictions.csv`` meant
``gaze_val_predict.txt``: :func:`suggest` finds that name when the words of a file name
are a dataset's name, a split and perhaps the word "predict", however they are spelled
(case, ``validation`` for ``val``, ``prediction(s)`` or ``pred`` for ``predict``, ``.csv``
or no extension for ``.txt``, ``-``, ``.`` or spaces for ``_``), or when the name is one
or two typing slips away from an expected one.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Sequence

SPLITS = ("train", "val", "test")
# How people write the three splits and the word "predict".
SPLIT_WORDS = {
    "train": "train",
    "training": "train",
    "trn": "train",
    "val": "val",
    "valid": "val",
    "validation": "val",
    "validate": "val",
    "dev": "val",
    "test": "test",
    "testing": "test",
    "tst": "test",
}
PREDICT_WORDS = {
    "predict",
    "predicts",
    "prediction",
    "predictions",
    "predicted",
    "pred",
    "preds",
    "predictive",
    "output",
    "outputs",
    "probs",
    "probabilities",
}
# Extensions of plain text files: a name ending in another one is not a near miss.
TEXT_SUFFIXES = {"txt", "csv", "tsv", "dat", "text", "out", "pred", "predict", "asc"}
NAME_RE = re.compile(r"[a-z][a-z0-9-]*")
# How alike (difflib's ratio) a name must be to an expected one to be a typing slip.
CLOSE = 0.85


def expected_name(dataset: str, split: str) -> str:
    return f"{dataset}_{split}_predict.txt"


def _words(text: str) -> list[str]:
    return [word for word in re.split(r"[\s_.\-]+", text.lower()) if word]


def _stem(base: str) -> str | None:
    """``base`` without its text extensions (``.txt``, ``.csv``, ``.txt.txt``), or None
    when it ends in another extension (an image, a zip: not a prediction file)."""
    stem = base.strip()
    for _ in range(2):
        head, dot, suffix = stem.rpartition(".")
        if not dot or not head:
            return stem
        if suffix.lower() not in TEXT_SUFFIXES:
            return None if re.fullmatch(r"[A-Za-z][A-Za-z0-9]{0,4}", suffix) else stem
        stem = head
    return stem


def _split_of(words: list[str]) -> tuple[str, list[str]] | None:
    """The one split the words name and the words left once it and the word "predict"
    are taken out, or None."""
    splits = [i for i, word in enumerate(words) if word in SPLIT_WORDS]
    if len(splits) != 1:
        return None
    rest = [w for i, w in enumerate(words) if i != splits[0]]
    predicts = [w for w in rest if w in PREDICT_WORDS]
    if len(predicts) > 1:
        return None
    return SPLIT_WORDS[words[splits[0]]], [w for w in rest if w not in PREDICT_WORDS]


def suggest(base: str, datasets: Iterable[str] = ()) -> str | None:
    """The prediction file name ``base`` most likely meant, or None.

    ``datasets`` are the names it may be for (the challenge's datasets, or the one
    chosen); with none known, any valid dataset name in ``base`` will do.
    """
    datasets = [name for name in dict.fromkeys(datasets) if name]
    stem = _stem(base)
    if stem is None:
        return None
    words = _words(stem)
    if sum(word in SPLIT_WORDS for word in words) > 1:
        return None  # two splits named: which one?
    found = _split_of(words)
    if found is not None:
        split, rest = found
        for name in sorted(datasets, key=len, reverse=True):  # the longest name first
            if rest == _words(name):
                return expected_name(name, split)
        if not datasets and len(rest) == 1 and NAME_RE.fullmatch(rest[0]):
            return expected_name(rest[0], split)
    return _close(base, datasets)


def _close(base: str, datasets: Sequence[str]) -> str | None:
    """The expected name one or two typing slips away from ``base`` ("gaze_val_predcit.txt",
    "gaz_val_predict.txt"), if exactly one is that close."""
    expected = [expected_name(name, split) for name in datasets for split in SPLITS]
    matches = difflib.get_close_matches(base.lower(), expected, n=2, cutoff=CLOSE)
    if len(matches) == 1:
        return matches[0]
    if len(matches) == 2:
        ratio = [difflib.SequenceMatcher(None, base.lower(), m).ratio() for m in matches]
        if ratio[0] > ratio[1]:
            return matches[0]
    return None
