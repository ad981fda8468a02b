"""Populate a challenge's leaderboards with example submissions, the way a participant would.

For every dataset, each simple method of its task's demo (scoring.tasks: TaskSpec.demo)
is fitted and its predictions are zipped and sent through ``submissions.services.submit``
(so the pipeline scores them, limits and marks included) under one of three demo users:

- in the validation phase, validation predictions from the training data (marked "<");
- in the test phase, test predictions from training and validation data (no mark);
- after the deadline, one more method with validation and test predictions (">").

The submission times are fixed points of the challenge's clock, so running it again
finds every submission already made and sends nothing (idempotent).

Each entry is scored as an upload is (the same task, in this process when no broker is
set), but the bootstrap intervals of a dataset split, which every scored entry asks for
again and which took about 70 % of the load, are computed once per split when the
challenge's entries are all in (:func:`intervals_once`).
"""

import io
import multiprocessing
import os
import zipfile
import zlib
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import numpy as np
from django.contrib.auth.models import User
from django.core.files.storage import storages
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db.models import F
from django.utils import timezone

import scoring
from challenge_site.accounts.models import Profile
from challenge_site.challenges.clock import current_phase
from challenge_site.challenges.models import Challenge
from challenge_site.leaderboard import interval_runs
from challenge_site.leaderboard.models import IntervalRun
from challenge_site.submissions import services
from challenge_site.submissions.limits import LimitReached
from challenge_site.submissions.models import Submission
from challenge_site.teams import services as teams
from challenge_site.teams.models import Team
from datasets.models import Dataset, Kind, Split
from scoring.tasks.demo import Data, Method

USERS = {
    "demo-ada": "Ada (demo)",
    "demo-bob": "Bob (demo)",
    "demo-cy": "Cy (demo)",
}
AUTHORS = "Demo participants"
# Joint entries, as the 2004 tables list them ("Zadrozny, B & Langford, J"): in the
# 2004 challenge, Ada and Bob take part as one team (formed in its validation phase); in
# teamwork, whose teams are still forming, Ada and Cy (a team a visitor can look at).
TEAMS = {
    "epuc": ("Two heads", ["demo-ada", "demo-bob"]),
    "teamwork": ("Pair programmers", ["demo-ada", "demo-cy"]),
}


@dataclass(frozen=True)
class Plan:
    username: str
    method: Method
    phase: str  # "validation", "test" or "post"
    splits: tuple[str, ...]
    when: datetime


@dataclass
class Report:
    created: list[Submission] = field(default_factory=list)
    skipped: int = 0
    problems: list[str] = field(default_factory=list)


def demo_users() -> dict[str, User]:
    """The demo participants, created without a usable password (nobody logs in as them)."""
    users = {}
    for username, display_name in USERS.items():
        user, created = User.objects.get_or_create(username=username)
        if created:
            user.set_unusable_password()
            user.save(update_fields=["password"])
        Profile.objects.update_or_create(user=user, defaults={"display_name": display_name})
        users[username] = user
    return users


def moments(challenge: Challenge) -> dict[str, datetime]:
    """Middle of the validation phase, middle of the test phase (on the hour when that
    stays inside the phase), and three days after the deadline."""
    phases = {
        "validation": (challenge.start, challenge.test_start),
        "test": (challenge.test_start, challenge.deadline),
        "post": (challenge.deadline + timedelta(days=3), challenge.deadline + timedelta(days=3)),
    }
    result = {}
    for phase, (begin, end) in phases.items():
        # At most two weeks in: a running challenge's entries are already made.
        middle = min(begin + (end - begin) / 2, begin + timedelta(days=14))
        on_the_hour = middle.replace(minute=0, second=0, microsecond=0)
        result[phase] = on_the_hour if on_the_hour > begin or begin == end else middle
    return result


def plans(dataset: Dataset) -> list[Plan]:
    """What the demo users send to ``dataset``, in time order: its task's demo entries
    that the dataset's settings accept, then the one after the deadline."""
    demo = dataset.task_spec.demo
    chosen = demo.chosen(dataset.scoring_options)
    after = demo.after
    at = moments(dataset.challenge)
    result = []
    for phase, splits in (("validation", (Split.VAL,)), ("test", (Split.TEST,))):
        for minute, (username, method) in enumerate(chosen):
            when = at[phase] + timedelta(minutes=minute)
            result.append(Plan(username, method, phase, splits, when))
    result.append(Plan(after[0], after[1], "post", (Split.VAL, Split.TEST), at["post"]))
    # Nothing is sent from the future (a running challenge has no entries after today).
    return [plan for plan in result if plan.when <= timezone.now()]


def read_file(dataset: Dataset, split: str, kind: str) -> np.ndarray:
    """A stored dataset file, read (and checked) by the scoring package."""
    datafile = dataset.files.get(split=split, kind=kind)
    with storages[datafile.storage_alias].open(datafile.path, "rb") as handle:
        data = handle.read()
    if kind == Kind.INPUTS:
        return scoring.read_inputs(data, path=datafile.filename)
    return scoring.read_targets(
        data, path=datafile.filename, task=dataset.task, options=dataset.scoring_options
    )


def _zip(files: dict[str, bytes]) -> SimpleUploadedFile:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return SimpleUploadedFile("predictions.zip", buffer.getvalue(), content_type="application/zip")


class Files:
    """A dataset's arrays, read once; targets as the task's demo methods learn them
    (binary classes as 0/1, multiclass labels as integers)."""

    def __init__(self, dataset: Dataset):
        self.dataset = dataset
        self.cache: dict[tuple[str, str], np.ndarray] = {}

    def get(self, split: str, kind: str) -> np.ndarray:
        if (split, kind) not in self.cache:
            array = read_file(self.dataset, split, kind)
            if kind == Kind.TARGETS:
                array = self.dataset.task_spec.demo.targets(array)
            if kind == Kind.INPUTS and array.ndim == 1:
                array = array[:, None]
            self.cache[(split, kind)] = array
        return self.cache[(split, kind)]

    def training(self, phase: str) -> tuple[np.ndarray, np.ndarray]:
        """Training data, plus the validation data once its targets are released."""
        x, y = self.get(Split.TRAIN, Kind.INPUTS), self.get(Split.TRAIN, Kind.TARGETS)
        if phase == "validation":
            return x, y
        return (
            np.vstack([x, self.get(Split.VAL, Kind.INPUTS)]),
            np.concatenate([y, self.get(Split.VAL, Kind.TARGETS)]),
        )


def predictions(files: Files, plan: Plan) -> dict[str, bytes]:
    dataset = files.dataset
    x, y = files.training(plan.phase)
    options = dataset.scoring_options
    result = {}
    for split in plan.splits:
        seed = zlib.crc32(f"{dataset.challenge.slug}/{dataset.name}/{plan.method.title}".encode())
        data = Data(
            x,
            y,
            files.get(split, Kind.INPUTS),
            np.random.default_rng([seed, zlib.crc32(f"{plan.phase}/{split}".encode())]),
            dataset.min_quantile_gap,
            # A multiclass dataset's L (None elsewhere): a class missing from the training
            # targets still gets its column.
            options.classes,
        )
        result[f"{dataset.name}_{split}_predict.txt"] = plan.method.predict(data)
    return result


# The plans whose files forked processes compute (predicted): set before the fork, so
# that a child finds its plan by index (a method may be a lambda, which pickle refuses).
_JOBS: list[tuple[Files, Plan]] = []


def _predict_job(index: int) -> dict[str, bytes]:
    files, plan = _JOBS[index]
    return predictions(files, plan)


def predicted(files: Files, plans: list[Plan]) -> list[dict[str, bytes]]:
    """The prediction files of each of ``plans``, in order: the same bytes as
    :func:`predictions` one plan after the other, computed in one forked process per CPU
    when there are several plans. The children read only what the parent loaded first
    (the dataset's arrays and its fields): never the database."""
    for plan in plans:  # load here every array and field a plan reads
        files.training(plan.phase)
        for split in plan.splits:
            files.get(split, Kind.INPUTS)
    dataset = files.dataset
    _ = (dataset.challenge.slug, dataset.scoring_options, dataset.min_quantile_gap)
    workers = min(len(plans), os.cpu_count() or 1)
    if workers < 2 or "fork" not in multiprocessing.get_all_start_methods():
        return [predictions(files, plan) for plan in plans]
    _JOBS[:] = [(files, plan) for plan in plans]
    try:
        context = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
            return list(pool.map(_predict_job, range(len(plans))))
    finally:
        _JOBS.clear()


def form_team(*, challenge: Challenge, users: dict[str, User]) -> None:
    """The challenge's demo team (TEAMS), formed at the start of its validation phase, as
    its members would have formed it then (teams.services and its rules)."""
    if challenge.slug not in TEAMS:
        return
    name, members = TEAMS[challenge.slug]
    if Team.objects.filter(challenge=challenge, name=name).exists():
        return
    formed = challenge.start
    team = teams.create(challenge=challenge, user=users[members[0]], name=name, now=formed)
    for username in members[1:]:
        teams.join(team=team, user=users[username], now=formed)


@contextmanager
def intervals_once(challenge: Challenge) -> Iterator[None]:
    """Inside: the intervals of the challenge's splits are asked for but not computed;
    on the way out, one run per split asked for. interval_runs already debounces requests
    while a run is queued, so the splits are marked queued for the load's duration: each
    scored entry only raises the ``requested`` count, and the run sent at the end (as its
    sweep sends one) computes them all, the same numbers as after the last entry of a
    one-by-one load. A split already queued or running is left to its own run."""
    held = []
    for dataset in challenge.datasets.all():
        for split in interval_runs.SPLITS:
            row, _ = IntervalRun.objects.get_or_create(dataset=dataset, split=split)
            if IntervalRun.objects.filter(pk=row.pk, queued=False).update(queued=True):
                held.append(row.pk)
    try:
        yield
    finally:
        IntervalRun.objects.filter(pk__in=held).update(queued=False)
        # Splits nobody asked for (no public part, no entries) keep no row.
        IntervalRun.objects.filter(pk__in=held, requested=0).delete()
    behind = IntervalRun.objects.filter(pk__in=held, requested__gt=F("computed"))
    for dataset_id, split in behind.values_list("dataset_id", "split"):
        IntervalRun.objects.filter(dataset_id=dataset_id, split=split).update(queued=True)
        interval_runs.send(dataset_id, split)


def load(*, challenge: Challenge, log=print) -> Report:
    """Send every planned submission not sent before; returns what happened."""
    with intervals_once(challenge):
        return _send_all(challenge=challenge, log=log)


def _send_all(*, challenge: Challenge, log) -> Report:
    users = demo_users()
    report = Report()
    try:
        form_team(challenge=challenge, users=users)
    except teams.TeamError as error:  # e.g. the members are in other teams already
        report.problems.append(f"team: {error}")
    for dataset in challenge.datasets.all():
        files = Files(dataset)
        pending = []
        for plan in plans(dataset):
            user = users[plan.username]
            # By phase, not by time: teamwork's dates follow the day `make run` runs, and
            # an entry sent on an earlier day must not be sent again at the new date.
            exists = Submission.objects.filter(
                user=user,
                dataset=dataset,
                method=plan.method.title,
                phase=current_phase(challenge, now=plan.when),
            ).exists()
            if exists:
                report.skipped += 1
            else:
                pending.append(plan)
        # Every entry's files first, all at once (the models' fits take most of the
        # load's time), then each entry sent and scored in turn, in time order.
        for plan, files_of_plan in zip(pending, predicted(files, pending), strict=True):
            user = users[plan.username]
            try:
                submission = services.submit(
                    user=user,
                    challenge=challenge,
                    dataset_name=dataset.name,
                    method=plan.method.title,
                    description=plan.method.description,
                    authors=AUTHORS,
                    upload=_zip(files_of_plan),
                    now=plan.when,
                )
            except (services.Rejected, LimitReached) as error:
                report.problems.append(f"{dataset.name}, {plan.method.title}: {error}")
                continue
            submission.refresh_from_db(fields=["status"])
            report.created.append(submission)
            log(
                f"{challenge.slug}/{dataset.name}: #{submission.pk} {plan.method.title} "
                f"({plan.phase}) {submission.status}"
            )
    return report
