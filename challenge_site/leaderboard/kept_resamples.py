"""The resampled losses of a split's entries, kept between interval runs (intervals.py).

One private .npz per (dataset, split), keyed by each entry's terms file: its losses on
the B resamples (``loss_KEY``: one row per entry) and the Hill tail index α̂ of its terms
(``tail_KEY``: one value per entry, scoring.tails), so that a run reads, rather than
recomputes, every entry it has seen. A file without the tail indices (written before
them) is not used: every entry is resampled again.
"""

import io
import logging
import secrets
from dataclasses import dataclass, field

import numpy as np
from django.core.files.base import File

from challenge_site.submissions.storage import private_storage
from datasets.models import Dataset
from scoring import bootstrap

logger = logging.getLogger(__name__)

FOLDER = "intervals"


@dataclass
class Resampled:
    """Each entry's losses on the resamples, by its terms file name."""

    n: int
    seed: int
    # terms name → loss key ("nlp", "nlp@shifted") → (B,) or None
    rows: dict[str, dict[str, np.ndarray | None]]
    labelling: str = ""  # parts_of's fingerprint of the slices
    # terms name → loss key → α̂ of the entry's terms on that part (NaN: no terms)
    tails: dict[str, dict[str, float]] = field(default_factory=dict)

    def drop(self, name: str) -> None:
        del self.rows[name]
        self.tails.pop(name, None)

    def clear(self) -> None:
        self.rows.clear()
        self.tails.clear()


def load(name: str, *, n: int, seed: int, labelling: str = "") -> Resampled:
    """The kept file ``name``, or nothing kept when it is for other resamples (n, seed,
    slices), lacks the tail indices, or cannot be read."""
    empty = Resampled(n, seed, {}, labelling)
    if not name:
        return empty
    try:
        with private_storage().open(name, "rb") as handle:
            data = handle.read()
        with np.load(io.BytesIO(data), allow_pickle=False) as archive:
            if int(archive["n"]) != n or int(archive["seed"]) != seed:
                return empty
            stored = str(archive["labelling"]) if "labelling" in archive.files else ""
            if stored != labelling:
                return empty
            names = [str(item) for item in archive["names"]]
            matrices = {
                key.removeprefix("loss_"): archive[key]
                for key in archive.files
                if key.startswith("loss_")
            }
            if any(f"tail_{key}" not in archive.files for key in matrices):
                return empty  # kept before the tail indices: resample again
            indices = {key: archive[f"tail_{key}"] for key in matrices}
    except (OSError, ValueError, KeyError):
        logger.warning("resampled losses %s unreadable; resampling every entry", name)
        return empty
    rows, tails = {}, {}
    for i, terms_name in enumerate(names):
        rows[terms_name] = {
            loss: None if np.isnan(matrix[i]).all() else matrix[i]
            for loss, matrix in matrices.items()
        }
        tails[terms_name] = {loss: float(alpha[i]) for loss, alpha in indices.items()}
    return Resampled(n, seed, rows, labelling, tails)


def save(dataset: Dataset, split: str, resampled: Resampled, keys) -> str:
    """A new private file holding ``resampled`` under the loss keys ``keys``; its name."""
    names = sorted(resampled.rows)
    arrays = {
        "names": np.array(names, dtype=str),
        "n": np.array(resampled.n),
        "seed": np.array(resampled.seed, dtype=np.uint64),
        "labelling": np.array(resampled.labelling, dtype=str),
    }
    for key in keys:
        matrix = np.full((len(names), bootstrap.RESAMPLES), np.nan)
        alpha = np.full(len(names), np.nan)
        for i, name in enumerate(names):
            row = resampled.rows[name].get(key)
            if row is not None:
                matrix[i] = row
            alpha[i] = resampled.tails.get(name, {}).get(key, np.nan)
        arrays[f"loss_{key}"] = matrix
        arrays[f"tail_{key}"] = alpha
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    buffer.seek(0)
    name = f"{FOLDER}/{dataset.pk}-{split}-{secrets.token_hex(8)}.npz"
    return private_storage().save(name, File(buffer))


def delete(name: str) -> None:
    if name:
        private_storage().delete(name)
