"""Load a challenge folder: ``challenge.toml`` plus one subfolder of files per dataset.

Importing the same folder again updates the challenge in place; a file is stored
again only when its sha256 changed. Every problem names the file and the key (or
line) and says what was expected; nothing is written unless the whole folder is valid.
"""

import math
import tomllib
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from django.core.exceptions import NON_FIELD_ERRORS, ValidationError
from django.db import transaction
from django.utils import timezone

from challenge_site.challenges import signals as challenge_signals
from challenge_site.challenges.admin_ranking import ladder_refusal
from challenge_site.challenges.models import LADDERS, Challenge, Feedback, format_utc
from challenge_site.challenges.services import (
    check_publication,
    options_changed,
    publish_results,
    save_challenge,
    withdraw_results,
)
from scoring.options import MAX_CLASSES
from scoring.tasks import TASKS, all_settings

from .models import Dataset
from .services import (
    PARTS,
    SLICE_PARTS,
    CheckedFile,
    DatasetFilesError,
    check_files,
    check_losses,
    check_ranking_loss,
    delete_file,
    expected_filename,
    levels_changed,
    losses_changed,
    save_files,
    sha256_and_size,
)

REQUIRED = object()
LIMIT = "limit"  # a positive integer, or "unlimited" (stored as no limit)
LEVELS = "levels"  # a list of numbers (Dataset.quantile_levels; the model checks them)
UNLIMITED = "unlimited"
VIA = "import_challenge"  # who changed what, in the challenge's history (ChallengeEvent)


class ImportProblems(Exception):
    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__("\n".join(problems))


@dataclass(frozen=True)
class Key:
    kind: type | str
    default: object = REQUIRED
    optional: bool = False  # a task's setting its datasets may leave unset (None)


CHALLENGE_KEYS = {
    "slug": Key(str),
    "title": Key(str),
    "description": Key(str, ""),
    "rules": Key(str, ""),
    "draft": Key(bool, False),
    "require_rules_acceptance": Key(bool, False),
    "require_approval": Key(bool, False),
    "max_team_size": Key(int, 5),
    "start": Key(datetime),
    "test_start": Key(datetime),
    "deadline": Key(datetime),
    "results_published": Key(bool, False),
    "val_daily_limit": Key(LIMIT, None),
    "test_daily_limit": Key(LIMIT, 5),
    "test_total_limit": Key(LIMIT, None),
    "test_inputs_release": Key(str, "test_start"),
    "test_targets_release": Key(str, "never"),
    "test_public_fraction": Key(float, 0.0),
    "final_entries": Key(int, 2),
    "feedback": Key(str, "exact"),  # "exact", "ladder" or "board_ladder" (docs/ladder.md)
    "late_joiners_feedback": Key(bool, True),
}
DATASET_KEYS = {
    "task": Key(str),
    "description": Key(str, ""),
    "log_base": Key(float, math.e),
    "allow_samples": Key(bool, True),
    "min_quantile_gap": Key(float, 0.0),
    "nmse_normaliser": Key(str, "evaluated"),
    "classes": Key(int, None),
    "allow_ensembles": Key(bool, True),
    "quantile_levels": Key(LEVELS, None, optional=True),  # spec §8: wis and coverages
    "ranking_loss": Key(str, ""),
    "losses": Key(list, []),  # the losses shown (Dataset.losses); [] = every loss of the task
}
EXPECTED = {
    str: "a string",
    bool: "true or false",
    float: "a number",
    int: "an integer",
    datetime: "a date-time with a time zone, e.g. 2004-11-10T00:00:00Z",
    LIMIT: 'a positive integer or "unlimited"',
    LEVELS: "a list of quantile levels, e.g. [0.05, 0.25, 0.5, 0.75, 0.95]",
    list: 'a list of loss names, e.g. ["nlp", "brier"]',
}


def _convert(value, kind):
    """The value as ``kind``, or None if it is not one (TOML already typed it)."""
    if kind == LIMIT:
        if value == UNLIMITED:
            return UNLIMITED
        return value if type(value) is int and value >= 1 else None
    if kind == LEVELS:
        numbers = type(value) is list and all(type(v) in (int, float) for v in value)
        return [float(v) for v in value] if numbers and value else None
    if kind is float:
        return float(value) if type(value) in (int, float) and math.isfinite(value) else None
    if kind is datetime:
        return value if isinstance(value, datetime) and value.tzinfo is not None else None
    return value if type(value) is kind else None


def _read_table(table: dict, keys: dict[str, Key], where: str) -> tuple[dict, list[str]]:
    values, problems = {}, []
    for name in table.keys() - keys.keys():
        if name != "datasets":
            allowed = ", ".join(keys)
            problems.append(f"{where}: unknown key {name!r}; expected one of {allowed}")
    for name, key in keys.items():
        if name not in table:
            if key.default is REQUIRED:
                problems.append(f"{where}: key {name!r} is missing")
            else:
                values[name] = key.default
            continue
        value = _convert(table[name], key.kind)
        if value is None:
            problems.append(
                f"{where}: key {name!r}: expected {EXPECTED[key.kind]}, found {table[name]!r}"
            )
        else:
            values[name] = None if value == UNLIMITED else value
    return values, problems


def _model_problems(instance, where: str, exclude: list[str]) -> list[str]:
    try:
        instance.full_clean(exclude=exclude)
    except ValidationError as error:
        return _in_words(error.message_dict, where)
    return []


def _in_words(errors: dict[str, list[str]], where: str) -> list[str]:
    return [
        f"{where}: " + (f"key {name!r}: " if name != NON_FIELD_ERRORS else "") + message
        for name, messages in errors.items()
        for message in messages
    ]


def _challenge_problems(challenge: Challenge, where: str, *, now: datetime) -> list[str]:
    """full_clean's problems and the publication rule's (services.check_publication at
    the import's ``now``), in full_clean's order: the fields', the rule's, then the unique
    and constraint checks, which skip a field already found wrong."""
    errors: dict[str, list[str]] = {}
    exclude = ["feedback"]
    try:
        challenge.full_clean(exclude=exclude, validate_unique=False, validate_constraints=False)
    except ValidationError as error:
        errors = error.update_error_dict(errors)
    if challenge.deadline is not None:
        try:
            check_publication(challenge=challenge, now=now)
        except ValidationError as error:
            errors = error.update_error_dict(errors)
    exclude += [name for name in errors if name != NON_FIELD_ERRORS]
    try:
        challenge.full_clean(exclude=exclude)
    except ValidationError as error:
        errors = error.update_error_dict(errors)
    return _in_words(ValidationError(errors).message_dict, where) if errors else []


@dataclass
class DatasetPlan:
    dataset: Dataset
    checked: list[CheckedFile]
    losses_changed: bool = False  # an existing dataset's shown losses (Dataset.losses)
    levels_changed: bool = False  # an existing dataset's quantile levels: every entry rescored
    # Stored slices files whose file the folder no longer holds (the folder says it all).
    dropped: list = field(default_factory=list)


def _plan_dataset(
    challenge: Challenge, name: str, table, folder: Path, where: str
) -> tuple[DatasetPlan | None, list[str]]:
    if not isinstance(table, dict):
        return None, [f"{where}: expected a table, found {table!r}"]
    values, problems = _read_table(table, DATASET_KEYS, where)
    if not problems:
        problems = _setting_problems(table, values, where)
    if problems:
        return None, problems
    existing = None
    if challenge.pk:
        existing = Dataset.objects.filter(challenge=challenge, name=name).first()
    dataset = existing or Dataset(challenge=challenge, name=name)
    old_targets = (dataset.task, dataset.classes) if existing else None
    old_losses = list(dataset.losses) if existing else None
    old_levels = dataset.quantile_levels if existing else None
    values["losses"] = list(values["losses"])  # (not the default's own list)
    for key, value in values.items():
        setattr(dataset, key, value)
    problems = _model_problems(dataset, where, exclude=["challenge"])
    if (
        message := check_ranking_loss(task=dataset.task, ranking_loss=dataset.ranking_loss)
    ) is not None:
        problems.append(f"{where}: key 'ranking_loss': {message}")
    if problems:  # (the scoring options exist only once every setting is valid)
        return None, problems
    problems += [
        f"{where}: key 'losses': {problem}"
        for problem in check_losses(
            task=dataset.task,
            options=dataset.scoring_options,
            losses=dataset.losses,
            ranking_loss=dataset.ranking_loss,
        )
    ]
    if problems:
        return None, problems

    directory = folder / name
    if not directory.is_dir():
        return None, [f"{directory}/: missing folder with the files of [datasets.{name}]"]
    ordered = [expected_filename(name, split, kind) for split, kind in PARTS]
    expected = set(ordered)
    # A split's slices (scoring.md §8) are optional: NAME_{val,test}_slices.txt.
    optional = [expected_filename(name, split, kind) for split, kind in SLICE_PARTS]
    present = {p.name for p in directory.iterdir() if not p.name.startswith(".")}
    problems = [f"{directory / f}: missing file" for f in sorted(expected - present)]
    problems += [
        f"{directory / f}: unexpected file; expected only {', '.join(sorted(expected))}"
        f" (and optionally {' and '.join(optional)})"
        for f in sorted(present - expected - set(optional))
    ]
    if problems:
        return None, problems
    ordered += [filename for filename in optional if filename in present]

    stored = {f.filename: f for f in existing.files.all()} if existing else {}
    dropped = [
        f for filename, f in stored.items() if filename in optional and filename not in present
    ]
    uploads, kept = [], []
    for filename in ordered:
        path = directory / filename
        old = stored.get(filename)
        same_reading = old_targets == (dataset.task, dataset.classes)  # targets read alike
        if old is not None and same_reading and old.sha256 == sha256_and_size(path)[0]:
            kept.append(old)
        else:
            uploads.append((filename, path, str(path)))
    try:
        checked = check_files(
            name=name,
            task=dataset.task,
            options=dataset.scoring_options,
            uploads=uploads,
            existing=kept,
            folder=f"{directory}/",
        )
    except DatasetFilesError as error:
        return None, error.problems
    changed = old_losses is not None and old_losses != dataset.losses
    levels = existing is not None and old_levels != dataset.quantile_levels
    plan = DatasetPlan(
        dataset, checked, losses_changed=changed, levels_changed=levels, dropped=dropped
    )
    return plan, []


def _setting_problems(table: dict, values: dict, where: str) -> list[str]:
    """A task's own settings (TaskSpec.settings) belong to its datasets alone, and a
    setting without a default (classes) must be given for them."""
    spec = TASKS.get(values["task"])
    if spec is None:
        return []  # the model's check names the tasks
    problems = []
    for name in all_settings():
        owners = [other.name for other in TASKS.values() if name in other.settings]
        if name in table and name not in spec.settings:
            problems.append(
                f"{where}: key {name!r} is a setting of {' and '.join(owners)} datasets, "
                f"not of a {spec.name} one; remove it"
            )
        elif name in spec.settings and values.get(name) is None and not DATASET_KEYS[name].optional:
            problems.append(
                f"{where}: key {name!r} is missing: a {spec.name} dataset needs it"
                + (f" (the number of classes, 2 to {MAX_CLASSES})" if name == "classes" else "")
            )
    return problems


def _option_problems(challenge: Challenge, values: dict, where: str, *, now) -> list[str]:
    """The ranking and feedback options against the challenge as stored (as the admin)."""
    problems = []
    if values["feedback"] not in Feedback.values:
        names = [repr(str(value)) for value in Feedback.values]
        expected = ", ".join(names[:-1]) + " or " + names[-1]
        problems.append(
            f"{where}: key 'feedback': expected {expected}, found {values['feedback']!r}"
        )
    fraction = values["test_public_fraction"]
    if challenge.pk and fraction != challenge.test_public_fraction and now >= challenge.test_start:
        problems.append(
            f"{where}: key 'test_public_fraction': the public part is fixed once test entries "
            f"are scored: the test phase began on {format_utc(challenge.test_start)}, so it "
            f"stays {challenge.test_public_fraction:g}"
        )
    return problems


def _options_changed(
    challenge: Challenge, fraction: float, final_entries: int, late_joiners: bool
) -> list[str]:
    """Inside the import's transaction: a new public part rescores the challenge's entries
    (baselines included); a new number of final entries recomputes those that count
    (challenges.services.options_changed, as the admin does); a changed
    late_joiners_feedback lets late joiners into the boards' Ladders or out of them."""
    count = options_changed(
        challenge=challenge, public_fraction_before=fraction, final_entries_before=final_entries
    )
    if late_joiners != challenge.late_joiners_feedback:
        challenge_signals.options_changed.send(
            sender=Challenge,
            challenge=challenge,
            public_part_changed=False,
            final_entries_changed=False,
        )
    if challenge.test_public_fraction != fraction:
        return [f"  public part changed: {count} entries queued to be scored again"]
    return []


def read_config(folder: Path) -> dict:
    config_path = folder / "challenge.toml"
    if not config_path.is_file():
        raise ImportProblems([f"{config_path}: missing file"])
    try:
        with open(config_path, "rb") as handle:
            return tomllib.load(handle)
    except tomllib.TOMLDecodeError as error:
        raise ImportProblems([f"{config_path}: not valid TOML: {error}"]) from None
    except UnicodeDecodeError as error:
        raise ImportProblems([f"{config_path}: not UTF-8 text: {error}"]) from None


def import_challenge(folder: Path, *, now: datetime | None = None) -> list[str]:
    """Create or update the challenge in ``folder``; returns a summary, one line per change."""
    now = now or timezone.now()
    folder = Path(folder)
    config = read_config(folder)
    where = str(folder / "challenge.toml")
    values, problems = _read_table(config, CHALLENGE_KEYS, where)
    if problems:
        raise ImportProblems(problems)
    # A new challenge opens at once unless the file says draft = true (then "Open
    # challenge…" in the admin opens it); an existing one stays as it is.
    draft = values.pop("draft")
    challenge = Challenge.objects.filter(slug=values["slug"]).first() or Challenge()
    created = challenge.pk is None
    if created and not draft:
        challenge.opened_at = now
    was_published = challenge.results_published
    before = (
        challenge.test_public_fraction,
        challenge.final_entries,
        challenge.late_joiners_feedback,
    )
    problems = _option_problems(challenge, values, where, now=now)
    for key, value in values.items():
        setattr(challenge, key, value)
    # Refuses results_published = true before the deadline.
    problems += _challenge_problems(challenge, where, now=now)

    tables = config.get("datasets")
    if not isinstance(tables, dict) or not tables:
        raise ImportProblems(problems + [f"{where}: expected at least one [datasets.NAME] table"])
    plans = []
    for name, table in tables.items():
        plan, dataset_problems = _plan_dataset(
            challenge, name, table, folder, f"{where}: [datasets.{name}]"
        )
        problems += dataset_problems
        plans.append(plan)
        if plan is not None and challenge.feedback in LADDERS:
            loss = plan.dataset.ranking_loss
            message = ladder_refusal(name=name, task=plan.dataset.task, ranking_loss=loss)
            if message:
                problems.append(f"{where}: [datasets.{name}]: key 'ranking_loss': {message}")
    known = set(tables)
    for child in sorted(folder.iterdir()):
        if child.is_dir() and not child.name.startswith(".") and child.name not in known:
            problems.append(f"{child}/: folder has no [datasets.{child.name}] table in {where}")
    if problems:
        raise ImportProblems(problems)

    summary = [f"{'Created' if created else 'Updated'} challenge {challenge.slug!r}"]
    publish = challenge.results_published and not was_published
    withdraw = was_published and not challenge.results_published
    with transaction.atomic():
        # Files change before a publication of the same import (the results published
        # are those of the new targets, not a revision of them), after a withdrawal.
        challenge.results_published = was_published
        save_challenge(challenge=challenge)
        if withdraw:
            withdraw_results(challenge=challenge, user=None, now=now, via=VIA)
        for position, plan in enumerate(plans):
            plan.dataset.challenge = challenge
            plan.dataset.position = position
            plan.dataset.save()
            if plan.losses_changed:
                losses_changed(dataset=plan.dataset)  # new columns; entries lacking one rescored
            if plan.levels_changed:
                levels_changed(dataset=plan.dataset)  # wis and coverages: every entry rescored
            changed = save_files(plan.dataset, plan.checked, now=now, via=VIA)
            for datafile in plan.dropped:
                delete_file(datafile, via=VIA, now=now)
            names = [c.filename for c in changed] + [f"{f.filename} deleted" for f in plan.dropped]
            names = ", ".join(names) or "no file changed"
            summary.append(f"  dataset {plan.dataset.name}: {names}")
        if publish:
            publish_results(challenge=challenge, user=None, now=now, via=VIA)
            summary.append("  results published")
        elif withdraw:
            summary.append("  results withdrawn")
        if not created:
            summary += _options_changed(challenge, *before)
    for name in challenge.datasets.exclude(name__in=known).values_list("name", flat=True):
        summary.append(
            f"  dataset {name}: not in challenge.toml, left unchanged (delete it in the admin)"
        )
    return summary
