"""Small real objects for tests: challenges, and datasets whose files pass the scoring parser."""

import io
import zipfile
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
from django.contrib.auth.models import User

from challenge_site.accounts.models import Profile
from challenge_site.challenges.models import Challenge
from datasets.models import Dataset
from datasets.services import check_files, save_files

START = datetime(2030, 1, 10, tzinfo=UTC)
TEST_START = datetime(2030, 2, 1, tzinfo=UTC)
DEADLINE = datetime(2030, 2, 8, 23, 59, 59, tzinfo=UTC)
# Moments in make_challenge's phases, for time_machine.
BEFORE_START = datetime(2030, 1, 5, tzinfo=UTC)
VALIDATION = datetime(2030, 1, 20, 12, 0, tzinfo=UTC)
TEST_PHASE = datetime(2030, 2, 3, 12, 0, tzinfo=UTC)
AFTER = datetime(2030, 3, 1, 12, 0, tzinfo=UTC)


def make_zip(
    files: dict[str, bytes], *, compression=zipfile.ZIP_DEFLATED, level: int | None = None
) -> bytes:
    """A zip of ``{name: content}``, built in memory."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=compression, compresslevel=level) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue()


OPENED = datetime(2030, 1, 1, tzinfo=UTC)  # when make_challenge's challenges left their draft


def make_challenge(**fields) -> Challenge:
    """An open challenge (``opened_at=None``: a draft)."""
    values = {
        "slug": "demo",
        "title": "Demo challenge",
        "start": START,
        "test_start": TEST_START,
        "deadline": DEADLINE,
        "opened_at": OPENED,
    }
    values.update(fields)
    return Challenge.objects.create(**values)


def dataset_files(
    name: str, *, task: str, sizes=(6, 4, 5), dim=3, seed=0, classes: int | None = None
) -> dict[str, bytes]:
    """The six files of a dataset as bytes: ``{NAME_split_kind.txt: content}``; a
    multiclass dataset's targets are labels 0 … ``classes`` − 1, the training targets
    holding every class once it has as many rows."""
    rng = np.random.default_rng(seed)
    files = {}
    for split, rows in zip(("train", "val", "test"), sizes, strict=True):
        inputs = rng.normal(size=(rows, dim))
        if task == "classification":
            targets = np.where(rng.random(rows) < 0.5, 1, -1)
            target_lines = [f"{int(t)}" for t in targets]
        elif task == "multiclass":
            labels = rng.integers(0, classes, size=rows)
            if split == "train" and rows >= classes:
                labels[:classes] = rng.permutation(classes)
            target_lines = [f"{int(k)}" for k in labels]
        else:
            target_lines = [f"{t:.6g}" for t in rng.normal(size=rows)]
        files[f"{name}_{split}_inputs.txt"] = "".join(
            " ".join(f"{x:.6g}" for x in row) + "\n" for row in inputs
        ).encode()
        files[f"{name}_{split}_targets.txt"] = ("\n".join(target_lines) + "\n").encode()
    return files


def make_dataset(
    challenge: Challenge, name="gaze", *, task="regression", now=START, **options
) -> Dataset:
    """A dataset with all six files stored through the same services the admin uses."""
    sizes, dim, seed = (
        options.pop("sizes", (6, 4, 5)),
        options.pop("dim", 3),
        options.pop("seed", 0),
    )
    dataset = Dataset.objects.create(challenge=challenge, name=name, task=task, **options)
    files = dataset_files(
        name, task=task, sizes=sizes, dim=dim, seed=seed, classes=options.get("classes")
    )
    checked = check_files(
        name=name,
        task=task,
        options=dataset.scoring_options,
        uploads=[(filename, data, filename) for filename, data in files.items()],
    )
    save_files(dataset, checked, now=now)
    dataset.refresh_from_db()
    return dataset


def write_challenge_folder(folder: Path, toml: str, datasets: dict[str, dict[str, bytes]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "challenge.toml").write_text(toml)
    for name, files in datasets.items():
        (folder / name).mkdir(exist_ok=True)
        for filename, data in files.items():
            (folder / name / filename).write_bytes(data)
    return folder


def make_user(
    username: str,
    *,
    display_name: str = "",
    is_staff: bool = False,
    is_superuser: bool = False,
    organiser_of: Challenge | None = None,
) -> User:
    """A user with the tests' password; a profile when a display name is given. The
    organiser of a challenge (``organiser_of``) has staff status, to reach the admin."""
    user = User.objects.create_user(
        username,
        f"{username}@example.org",
        "a-long-Passphrase-42",
        is_staff=is_staff or is_superuser or organiser_of is not None,
        is_superuser=is_superuser,
    )
    if organiser_of is not None:
        organiser_of.organisers.add(user)
    if display_name:
        Profile.objects.create(user=user, display_name=display_name)
    return user


def dataset_admin_form(challenge, files: dict[str, bytes], **overrides) -> dict:
    """The dataset admin page's form (no inline file rows) with ``files`` to upload; the
    dataset "gaze" (regression) unless ``overrides`` say otherwise."""
    from django.core.files.uploadedfile import SimpleUploadedFile

    data = {
        "challenge": challenge.pk,
        "name": "gaze",
        "task": "regression",
        "description": "",
        "position": "0",
        "log_base": "2.718281828459045",
        "allow_samples": "on",
        "min_quantile_gap": "0",
        "nmse_normaliser": "evaluated",
        "ranking_loss": "",
        "files-TOTAL_FORMS": "0",
        "files-INITIAL_FORMS": "0",
        "files-MIN_NUM_FORMS": "0",
        "files-MAX_NUM_FORMS": "0",
        "upload": [SimpleUploadedFile(name, data, "text/plain") for name, data in files.items()],
    }
    data.update(overrides)
    return data
