"""Shared pieces of the demo generators: dataset containers, seeding, writing."""

import json
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np


@dataclass
class DemoDataset:
    """One dataset: its challenge.toml table and its six arrays."""

    name: str
    options: dict
    splits: dict[str, tuple[np.ndarray, np.ndarray]]  # split -> (inputs, targets)
    input_format: str = "%.6g"
    target_format: str = "%.6g"
    # split -> the slice name of every example (NAME_split_slices.txt, scoring.md §8)
    slices: dict[str, list[str]] = field(default_factory=dict)


@dataclass
class DemoChallenge:
    settings: dict
    datasets: list[DemoDataset] = field(default_factory=list)


def rng_for(seed: int, name: str) -> np.random.Generator:
    """An independent stream per dataset, so changing one generator does not move the others."""
    return np.random.default_rng([seed, zlib.crc32(name.encode())])


def _toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str) and value[:4].isdigit() and value.endswith("Z"):
        return value  # an offset date-time, e.g. 2004-11-10T00:00:00Z
    return json.dumps(value)  # a TOML basic string: JSON escapes are valid TOML


def challenge_toml(challenge: DemoChallenge) -> str:
    lines = ["# Synthetic demo data: see datasets/demo/README.md", ""]
    lines += [f"{key} = {_toml_value(value)}" for key, value in challenge.settings.items()]
    for dataset in challenge.datasets:
        lines += ["", f"[datasets.{dataset.name}]"]
        lines += [f"{key} = {_toml_value(value)}" for key, value in dataset.options.items()]
    return "\n".join(lines) + "\n"


def write_challenge(challenge: DemoChallenge, folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "challenge.toml").write_text(challenge_toml(challenge))
    for dataset in challenge.datasets:
        directory = folder / dataset.name
        directory.mkdir(exist_ok=True)
        for split, (inputs, targets) in dataset.splits.items():
            stem = directory / f"{dataset.name}_{split}"
            np.savetxt(f"{stem}_inputs.txt", inputs, fmt=dataset.input_format)
            np.savetxt(f"{stem}_targets.txt", targets, fmt=dataset.target_format)
            if split in dataset.slices:
                Path(f"{stem}_slices.txt").write_text(
                    "".join(f"{name}\n" for name in dataset.slices[split])
                )
