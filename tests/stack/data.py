"""Small challenges for the stack, written as import_challenge folders, and prediction zips.

Dataset files come from tests.factories.dataset_files (they pass the scoring parser), so
this module needs Django set up (see harness.Stack.setup_django).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

from tests.factories import dataset_files, make_zip
from tests.submissions.helpers import gaussian_lines, probability_lines


@dataclass
class DatasetSpec:
    task: str
    sizes: tuple[int, int, int]  # train, validation, test rows
    dim: int = 2
    seed: int = 0


@dataclass
class ChallengeSpec:
    slug: str
    title: str
    datasets: dict[str, DatasetSpec]
    start: datetime
    test_start: datetime
    deadline: datetime
    limits: dict[str, int | str] = field(default_factory=dict)
    description: str = "A small challenge generated for the stack tests."


def _dated(slug, title, datasets, limits, *, start: int, test_start: int, deadline: int):
    """A challenge whose dates are these many days from now."""
    now = datetime.now(UTC).replace(microsecond=0)
    return ChallengeSpec(
        slug,
        title,
        datasets,
        start=now + timedelta(days=start),
        test_start=now + timedelta(days=test_start),
        deadline=now + timedelta(days=deadline),
        limits=limits,
    )


def in_validation(slug: str, title: str, datasets: dict[str, DatasetSpec], **limits):
    """Opened two days ago; the test phase is ten days away."""
    return _dated(slug, title, datasets, limits, start=-2, test_start=10, deadline=20)


def in_test_phase(slug: str, title: str, datasets: dict[str, DatasetSpec], **limits):
    """Opened ten days ago; in its test phase since two days, the deadline ten days away."""
    return _dated(slug, title, datasets, limits, start=-10, test_start=-2, deadline=10)


def _toml_value(value) -> str:
    if isinstance(value, datetime):
        return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return str(value)


def write_challenge(spec: ChallengeSpec, folder: Path) -> dict[str, dict[str, bytes]]:
    """challenge.toml and a subfolder of six files per dataset; returns the files by dataset."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = [
        f"slug = {_toml_value(spec.slug)}",
        f"title = {_toml_value(spec.title)}",
        f"description = {_toml_value(spec.description)}",
        f"start = {_toml_value(spec.start)}",
        f"test_start = {_toml_value(spec.test_start)}",
        f"deadline = {_toml_value(spec.deadline)}",
    ]
    lines += [f"{key} = {_toml_value(value)}" for key, value in spec.limits.items()]
    written = {}
    for name, dataset in spec.datasets.items():
        lines += ["", f"[datasets.{name}]", f"task = {_toml_value(dataset.task)}"]
        files = dataset_files(
            name, task=dataset.task, sizes=dataset.sizes, dim=dataset.dim, seed=dataset.seed
        )
        (folder / name).mkdir(exist_ok=True)
        for filename, data in files.items():
            (folder / name / filename).write_bytes(data)
        written[name] = files
    (folder / "challenge.toml").write_text("\n".join(lines) + "\n")
    return written


def prediction_lines(task: str, rows: int, *, seed: int = 1) -> bytes:
    return (gaussian_lines if task == "regression" else probability_lines)(rows, seed=seed)


def prediction_zip(name: str, spec: DatasetSpec, splits=("val",), *, seed: int = 1) -> bytes:
    """A valid submission zip for the dataset: one prediction file per split."""
    rows = dict(zip(("train", "val", "test"), spec.sizes, strict=True))
    return make_zip(
        {
            f"{name}_{split}_predict.txt": prediction_lines(spec.task, rows[split], seed=seed)
            for split in splits
        }
    )


def sample_lines(rows: int, samples: int, *, seed: int = 0) -> bytes:
    """Regression rows ``2 s1 … sK`` of K standard normal samples, written as numpy bytes
    (fixed width ``-d.ddd``): a large valid file, quick to make, slow to score."""
    rng = np.random.default_rng(seed)
    values = np.clip(np.rint(rng.normal(size=(rows, samples)) * 1000), -9999, 9999)
    values = values.astype(np.int64)
    size = np.abs(values)
    cell = np.empty((rows, samples, 7), dtype=np.uint8)
    cell[..., 0] = ord(" ")
    cell[..., 1] = np.where(values < 0, ord("-"), ord(" "))
    cell[..., 2] = ord("0") + size // 1000
    cell[..., 3] = ord(".")
    cell[..., 4] = ord("0") + size // 100 % 10
    cell[..., 5] = ord("0") + size // 10 % 10
    cell[..., 6] = ord("0") + size % 10
    line = np.empty((rows, samples * 7 + 2), dtype=np.uint8)
    line[:, 0] = ord("2")
    line[:, 1:-1] = cell.reshape(rows, -1)
    line[:, -1] = ord("\n")
    return line.tobytes()
