"""The throwaway site the attack benches (bench/attacks.py) run against.

One process: a SQLite file in a temporary folder, Celery tasks run in-process (no broker,
as bench/embedded_upload.py), production settings (no query log), the API's rate limits
off (the bench is one address). An ``Arena`` is one binary challenge in its test phase,
its dataset drawn from a seeded logistic model (so each example's true probability is
known and an entry's *truth*, its expected loss on fresh data, can be computed), public
fraction 0.5, no submission limit. Attackers and honest participants are accounts with
API tokens: they upload zips with ``POST /api/v1/submissions/`` (the real upload,
scoring, Ladder and probing code), read what their own entry shows them with
``GET /api/v1/submissions/<id>/``, and the board is read as an anonymous visitor
(``GET …/leaderboard/?split=public``). Only the measurements (private scores, the
public/private mask, the targets) are read from the server's side.
"""

from __future__ import annotations

import math
import os
import sys
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
# Environment a CI job or a shell may set that would send the bench elsewhere.
FOREIGN = (
    "DATABASE_URL",
    "CELERY_BROKER_URL",
    "CACHE_URL",
    "STORAGE_BACKEND",
    "PRIVATE_STORAGE_BACKEND",
    "PRIVATE_STORAGE_OPTIONS",
)
DATASET = "probe"
SIZES = {"train": 1000, "val": 200}
DIM = 10
FEEDBACKS = ("exact", "ladder", "board_ladder")
LOSSES = {"error": "01l", "logloss": "nlp"}


def setup(folder: str, *, intervals: bool = False) -> None:
    """Django on a fresh SQLite file in ``folder``, migrated. Without ``intervals`` the
    boards' bootstrap intervals are never computed: in production a worker computes them
    apart from scoring, they change nothing a participant is shown of the Ladder or the
    flags, and here, in-process after every upload, they took 80 % of an upload's time."""
    sys.path.insert(0, str(ROOT))
    for name in FOREIGN:
        os.environ.pop(name, None)
    os.environ.update(
        {
            "DJANGO_SETTINGS_MODULE": "challenge_site.settings",
            "DJANGO_DEBUG": "0",
            "SECRET_KEY": "bench-only-not-a-secret",
            "ALLOWED_HOSTS": "testserver",
            "SECURE_SSL_REDIRECT": "0",
            "SESSION_COOKIE_SECURE": "0",
            "CSRF_COOKIE_SECURE": "0",
            "VAR_DIR": folder,
            "MEDIA_ROOT": f"{folder}/media",
            "PRIVATE_ROOT": f"{folder}/private",
            "API_THROTTLE_UPLOAD": "off",
            "API_THROTTLE_USER": "off",
            "API_THROTTLE_ANON": "off",
            "LOG_LEVEL": "ERROR",
        }
    )
    import django

    django.setup()
    from django.db.backends.signals import connection_created

    connection_created.connect(_no_sync)
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    if not intervals:
        from challenge_site.leaderboard import interval_runs

        # The run stays queued, as behind a busy worker.
        interval_runs.send = lambda dataset_id, split: None


def _no_sync(sender, connection, **kwargs) -> None:
    """The throwaway database need not survive a power cut: no fsync per commit."""
    if connection.vendor == "sqlite":
        with connection.cursor() as cursor:
            cursor.execute("PRAGMA synchronous = OFF")


def available_feedbacks() -> list[str]:
    """The feedback options this checkout's Challenge model offers, in FEEDBACKS' order."""
    from challenge_site.challenges.models import Feedback

    return [name for name in FEEDBACKS if name in Feedback.values]


@dataclass(frozen=True)
class Data:
    """A seeded binary problem: inputs, ±1 targets and each example's true p(y = +1)."""

    inputs: dict[str, np.ndarray]
    targets: dict[str, np.ndarray]
    truth: dict[str, np.ndarray]


def draw_data(*, n_test: int, seed: int) -> Data:
    rng = np.random.default_rng(seed)
    weights = rng.normal(size=DIM) * 0.6
    inputs, targets, truth = {}, {}, {}
    for split, rows in {**SIZES, "test": n_test}.items():
        x = rng.normal(size=(rows, DIM))
        p = 1 / (1 + np.exp(-(x @ weights)))
        inputs[split], truth[split] = x, p
        targets[split] = np.where(rng.random(rows) < p, 1, -1)
    return Data(inputs, targets, truth)


def _lines(rows) -> bytes:
    return "".join(" ".join(f"{v:.6g}" for v in np.atleast_1d(r)) + "\n" for r in rows).encode()


def losses(probs: np.ndarray, targets: np.ndarray) -> dict[str, float]:
    """Both ranking losses of ``probs`` (p(y = +1)) on ±1 ``targets`` (scoring.md §3)."""
    positive = targets == 1
    with np.errstate(divide="ignore"):
        nlp = -np.mean(np.log(np.where(positive, probs, 1 - probs)))
    wrong = np.where(positive, probs < 0.5, probs >= 0.5)
    return {"nlp": float(nlp), "01l": float(np.mean(wrong))}


def expected_loss(probs: np.ndarray, truth: np.ndarray, loss: str) -> float:
    """The loss ``probs`` would have on average over fresh targets drawn with ``truth``."""
    if loss == "01l":
        return float(np.mean(np.where(probs >= 0.5, 1 - truth, truth)))
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = -(truth * np.log(probs) + (1 - truth) * np.log(1 - probs))
    return float(np.mean(terms))


@dataclass(frozen=True)
class Shown:
    """What the owner's API shows of their entry's public score: ``value`` None when the
    entry shows nothing of its own (the Ladder kept an earlier score)."""

    value: float | None
    precision: float  # 0 = exact
    own: bool  # the value is this entry's (exact feedback, or the Ladder accepted it)


@dataclass
class Arena:
    """One challenge in its test phase with one dataset; its accounts and entries."""

    slug: str
    feedback: str
    loss: str
    data: Data
    mask: np.ndarray  # True = public test example (read from the server, for measuring)
    challenge_id: int = 0
    clients: dict = field(default_factory=dict)
    predictions: dict = field(default_factory=dict)  # submission id -> probabilities
    owners: dict = field(default_factory=dict)  # submission id -> account name

    @property
    def n_test(self) -> int:
        return self.mask.size

    # --- Setting up ------------------------------------------------------------------

    @classmethod
    def create(
        cls,
        *,
        slug: str,
        feedback: str,
        loss: str,
        n_test: int = 2000,
        seed: int = 0,
        public_fraction: float = 0.5,
        **options,
    ) -> Arena:
        """The challenge (test phase since two days, no limit), its dataset stored through
        the dataset services (the public/private split drawn by the site)."""
        from django.utils import timezone

        from challenge_site.challenges.models import Challenge
        from challenge_site.submissions.evaluation import public_mask
        from datasets.models import Dataset
        from datasets.services import check_files, save_files

        now = timezone.now()
        challenge = Challenge.objects.create(
            slug=slug,
            title=slug,
            start=now - timedelta(days=10),
            test_start=now - timedelta(days=2),
            deadline=now + timedelta(days=10),
            opened_at=now - timedelta(days=10),
            test_public_fraction=public_fraction,
            feedback=feedback,
            test_daily_limit=None,
            test_total_limit=None,
            max_team_size=1,
            **options,
        )
        # The public part is drawn from the seed (the site draws it at random when the
        # test targets are first stored, and keeps a seed already set): the arenas of one
        # seed share it, so attacks uploading the same files are paired.
        parts_seed = int(np.random.default_rng([seed, 99]).integers(2**62))
        dataset = Dataset.objects.create(
            challenge=challenge,
            name=DATASET,
            task="classification",
            ranking_loss=loss,
            test_parts_seed=parts_seed,
        )
        data = draw_data(n_test=n_test, seed=seed)
        files = {}
        for split in ("train", "val", "test"):
            files[f"{DATASET}_{split}_inputs.txt"] = _lines(data.inputs[split])
            files[f"{DATASET}_{split}_targets.txt"] = _lines(data.targets[split])
        checked = check_files(
            name=DATASET,
            task="classification",
            options=dataset.scoring_options,
            uploads=[(name, content, name) for name, content in files.items()],
        )
        save_files(dataset, checked, now=now - timedelta(days=10))
        dataset.refresh_from_db()
        return cls(
            slug, feedback, loss, data, public_mask(dataset, n_test), challenge_id=challenge.pk
        )

    def username(self, name: str) -> str:
        return f"{self.slug}-{name}"[:150]

    def account(self, name: str, *, early: bool = False):
        """A new account with an API token (an APIClient that sends it). An ``early`` one
        joined the challenge the day after it opened, before the test phase; the others
        join with their first entry, during the test phase (late joiners)."""
        from django.contrib.auth.models import User
        from rest_framework.authtoken.models import Token
        from rest_framework.test import APIClient

        from challenge_site.challenges.models import Challenge, Participant

        user = User.objects.create_user(self.username(name), password=None)
        if early:
            challenge = Challenge.objects.get(pk=self.challenge_id)
            Participant.objects.create(
                challenge=challenge, user=user, joined=challenge.start + timedelta(days=1)
            )
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
        self.clients[name] = client
        return client

    # --- What a participant does and sees --------------------------------------------

    def upload(self, name: str, probs: np.ndarray, *, method: str = "probe") -> int:
        """``name`` uploads ``probs`` as test predictions; returns the scored entry's id."""
        from django.core.files.uploadedfile import SimpleUploadedFile

        from tests.factories import make_zip

        text = "".join(f"{p:.17g}\n" for p in probs).encode()
        archive = make_zip({f"{DATASET}_test_predict.txt": text})
        upload = SimpleUploadedFile("predictions.zip", archive, content_type="application/zip")
        response = self.clients[name].post(
            "/api/v1/submissions/",
            {"challenge": self.slug, "dataset": DATASET, "method": method, "file": upload},
            format="multipart",
        )
        if response.status_code != 201:
            raise RuntimeError(f"upload refused ({response.status_code}): {response.content!r}")
        body = response.json()
        if body["status"] != "scored":
            raise RuntimeError(f"entry {body['id']} not scored: {body['status']}")
        self.predictions[body["id"]] = np.asarray(probs, dtype=float)
        self.owners[body["id"]] = name
        return body["id"]

    def shown(self, name: str, submission: int) -> Shown:
        """What the entry's owner reads of its public score through the API."""
        body = self.clients[name].get(f"/api/v1/submissions/{submission}/").json()
        ladder = body.get("ladder", {}).get("public")
        if ladder is not None:
            value = ladder.get("shown")
            own = bool(ladder.get("accepted"))
            return Shown(_number(value) if own else None, ladder.get("precision") or 0.0, own)
        exact = body.get("scores", {}).get("public", {}).get(self.loss)
        return Shown(_number(exact), 0.0, exact is not None)

    def board(self) -> list[dict]:
        """Every row of the public part's board as an anonymous visitor reads it (one row
        per participant: best entries on an exact board)."""
        from rest_framework.test import APIClient

        visitor = APIClient()
        url = f"/api/v1/challenges/{self.slug}/datasets/{DATASET}/leaderboard/"
        rows, page = [], 1
        while True:
            response = visitor.get(url, {"split": "public", "view": "best", "page": page})
            if response.status_code != 200:
                if page > 1 and response.status_code == 404:
                    return rows
                raise RuntimeError(f"board: {response.status_code} {response.content!r}")
            body = response.json()
            rows += body["results"]
            if not body.get("next"):
                return rows
            page += 1

    # --- Measuring (the server's side) ------------------------------------------------

    def public_score(self, probs: np.ndarray) -> float:
        return losses(probs[self.mask], self.data.targets["test"][self.mask])[self.loss]

    def private_score(self, submission: int) -> float:
        """The entry's private score as stored by the site."""
        from challenge_site.submissions.models import Score

        return Score.objects.get(submission_id=submission, split="private", loss=self.loss).value

    def truth(self, submission: int) -> float:
        return expected_loss(self.predictions[submission], self.data.truth["test"], self.loss)

    def chance(self) -> float:
        """The loss of knowing nothing (p = 0.5 everywhere)."""
        return 0.5 if self.loss == "01l" else math.log(2)


def board_value(row: dict, loss: str) -> float | None:
    """The ranking loss's value a board row shows (None: no score shown)."""
    return _number((row.get("scores") or {}).get(loss))


def _number(value) -> float | None:
    if value is None:
        return None
    return math.inf if value == "inf" else float(value)
