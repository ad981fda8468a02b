import math
import re

from django import forms

from challenge_site.challenges.admin_ranking import ladder_refusal
from challenge_site.challenges.models import LADDERS
from scoring import ScoringOptions
from scoring.options import MAX_CLASSES, quantile_levels
from scoring.tasks import all_settings

from .capacity import capacity_problems
from .models import CLASS_COUNT_TASKS, Dataset
from .services import (
    DatasetFilesError,
    check_files,
    check_losses,
    check_ranking_loss,
    check_stored_targets,
)


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    def __init__(self, *args, **kwargs):
        kwargs.setdefault("widget", MultipleFileInput())
        super().__init__(*args, **kwargs)

    def clean(self, data, initial=None):
        files = data if isinstance(data, list | tuple) else [data] if data else []
        return [super(MultipleFileField, self).clean(f, initial) for f in files]


class LogBaseField(forms.Field):
    """The base of nlp's and nlpd's logarithms as people write it: e, 2 or 10 (nats, bits,
    bans), or any other positive number but 1 (the model's check constraint)."""

    default_error_messages = {
        "invalid": "Enter e, 2, 10 or another positive number other than 1.",
    }

    def __init__(self, **kwargs):
        kwargs.setdefault("widget", forms.TextInput(attrs={"size": 8}))
        kwargs.setdefault("help_text", "e (nats), 2 (bits), 10 (bans), or another number.")
        super().__init__(**kwargs)

    def prepare_value(self, value):
        if isinstance(value, float):
            return "e" if math.isclose(value, math.e) else f"{value:g}"
        return value

    def to_python(self, value):
        text = (value or "").strip().lower()
        if text in self.empty_values:
            return None
        if text == "e":
            return math.e
        try:
            base = float(text)
        except ValueError:
            raise forms.ValidationError(self.error_messages["invalid"], code="invalid") from None
        if not (math.isfinite(base) and base > 0 and base != 1):
            raise forms.ValidationError(self.error_messages["invalid"], code="invalid")
        return base


class LossListField(forms.CharField):
    """Dataset.losses as an organiser writes it: loss names separated by commas or
    spaces ("nlp, brier, floorlog"); empty = every loss of the task."""

    def __init__(self, **kwargs):
        kwargs.setdefault("required", False)
        kwargs.setdefault("widget", forms.TextInput(attrs={"size": 60}))
        super().__init__(**kwargs)

    def prepare_value(self, value):
        return ", ".join(value) if isinstance(value, list) else value

    def to_python(self, value):
        return (value or "").replace(",", " ").split()


class QuantileLevelsField(forms.CharField):
    """Dataset.quantile_levels as an organiser writes it: numbers separated by commas or
    spaces ("0.05, 0.25, 0.5, 0.75, 0.95"), strictly increasing in (0, 1); empty = none."""

    def __init__(self, **kwargs):
        kwargs.setdefault("required", False)
        kwargs.setdefault("widget", forms.TextInput(attrs={"size": 40}))
        super().__init__(**kwargs)

    def prepare_value(self, value):
        if isinstance(value, list | tuple):
            return ", ".join(f"{level!r}" for level in value)
        return value

    def to_python(self, value):
        if isinstance(value, list | tuple):
            return list(value)
        parts = (value or "").replace(",", " ").split()
        if not parts:
            return None
        try:
            return list(quantile_levels([float(part) for part in parts]))
        except ValueError as error:
            message = str(error) if "quantile levels" in str(error) else "expected numbers"
            raise forms.ValidationError(
                f"{message}; e.g. 0.05, 0.25, 0.5, 0.75, 0.95.", code="invalid"
            ) from None


class DatasetForm(forms.ModelForm):
    """Dataset settings, checked like challenge.toml is on import.

    The admin shows the settings of the dataset's task only (DatasetAdmin.get_fieldsets).
    ``shown_settings`` (hidden) names the settings the posted page showed: when the task
    changes, the new task's settings arrive unposted, and take the dataset's stored values
    (an unposted checkbox would read as off) while the page comes back showing them.
    """

    log_base = LogBaseField(label="Log base", initial=math.e)
    losses = LossListField(
        label="Losses shown",
        help_text=Dataset._meta.get_field("losses").help_text
        + " Plug-in losses (docs/operators.md, “Adding a loss”) included.",
    )
    quantile_levels = QuantileLevelsField(
        label="Quantile levels", help_text=Dataset._meta.get_field("quantile_levels").help_text
    )
    shown_settings = forms.CharField(required=False, widget=forms.HiddenInput)

    class Meta:
        model = Dataset
        fields = [
            "challenge",
            "name",
            "task",
            "description",
            "position",
            "log_base",
            *all_settings(),  # each task's own (scoring.tasks: TaskSpec.settings)
            "ranking_loss",
            "losses",
        ]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for name in all_settings():
            # A setting declared above (quantile_levels) that this form's page leaves out
            # (the challenge page's inline): unposted, it would read as empty, not as kept.
            if name in self.declared_fields and name not in (self._meta.fields or ()):
                del self.fields[name]
        if "shown_settings" not in self.fields:
            return  # a form without the settings (the challenge page's inline)
        names = [name for name in all_settings() if name in self.fields]
        key = self.add_prefix("shown_settings")
        if self.is_bound and key in self.data:
            shown = set(self.data[key].split())
            self.data = self.data.copy()
            for name in names:
                if name not in shown:
                    self._post_stored(name)
            self.data[key] = " ".join(names)
        else:
            self.initial["shown_settings"] = " ".join(names)

    def _post_stored(self, name: str) -> None:
        """Post the dataset's stored value of a setting its page did not show."""
        field, key = self.fields[name], self.add_prefix(name)
        value = field.prepare_value(getattr(self.instance, name))
        if isinstance(field, forms.BooleanField):
            if value:
                self.data[key] = "on"
            else:
                self.data.pop(key, None)
        else:
            self.data[key] = "" if value is None else str(value)

    def clean(self):
        cleaned = super().clean()
        task = cleaned.get("task")
        if task:
            message = check_ranking_loss(task=task, ranking_loss=cleaned.get("ranking_loss", ""))
            if message:
                self.add_error("ranking_loss", message)
            self._check_classes(task, cleaned)
        options = self._options(cleaned) if task else None
        # The challenge page's inline does not show the losses (the declared field is on
        # the form, unposted, and not saved): its ranking loss is checked against the
        # stored list, on the ranking loss.
        posted = "losses" in (self._meta.fields or ())
        field = "losses" if posted else "ranking_loss"
        if task and field not in self.errors:
            for problem in check_losses(
                task=task,
                options=options,
                losses=cleaned.get("losses", []) if posted else self.instance.losses,
                ranking_loss=cleaned.get("ranking_loss", ""),
            ):
                self.add_error(field, problem)
        if options and self.instance.pk and "classes" in self.changed_data:
            rows = {"val": self.instance.n_val, "test": self.instance.n_test}
            name = cleaned.get("name") or self.instance.name
            for problem in capacity_problems(name=name, classes=options.classes, rows=rows):
                self.add_error("classes", problem)
        if options and self.instance.pk and {"task", "classes"} & set(self.changed_data):
            try:
                check_stored_targets(self.instance, task=task, options=options)
            except DatasetFilesError as error:
                self.add_error(
                    "task", [f"The stored targets do not fit a {task} dataset:", *error.problems]
                )
        return cleaned

    def _check_classes(self, task: str, cleaned: dict) -> None:
        """A task that needs the number of classes gets it (the model's check constraint,
        said on the field, or on the task where this form has no such field)."""
        if task not in CLASS_COUNT_TASKS:
            return
        field = "classes" if "classes" in self.fields else None
        classes = cleaned.get("classes") if field else self.instance.classes
        if classes is None and not (field and field in self.errors):
            message = f"A {task} dataset needs its number of classes (2 to {MAX_CLASSES})."
            if field is None:
                message += " Add the dataset on its own admin page, which asks for it."
            self.add_error(field or "task", message)

    def _options(self, cleaned: dict) -> ScoringOptions | None:
        """The scoring options the form would save (None if a setting is not valid)."""
        values = {
            name: cleaned.get(name, getattr(self.instance, name))
            for name in ("log_base", *all_settings())
        }
        if cleaned.get("task") not in CLASS_COUNT_TASKS:
            values["classes"] = None  # a number kept from an earlier task (Dataset.scoring_options)
        try:
            return ScoringOptions(**values)
        except (TypeError, ValueError):
            return None


class DatasetUploadForm(DatasetForm):
    upload = MultipleFileField(
        required=False,
        label="Upload files",
        help_text="Any of NAME_train_inputs.txt, NAME_train_targets.txt, NAME_val_inputs.txt, "
        "NAME_val_targets.txt, NAME_test_inputs.txt, NAME_test_targets.txt, and optionally "
        "NAME_val_slices.txt and NAME_test_slices.txt (a slice name per example, never "
        "released); they replace the stored file of the same name.",
    )

    def clean(self):
        cleaned = super().clean()
        self.checked_files = []
        uploads = [(f.name, f, f.name) for f in cleaned.get("upload", [])]
        name, task = cleaned.get("name"), cleaned.get("task")
        if uploads and name and task and not self.errors:
            existing = list(self.instance.files.all()) if self.instance.pk else []
            replaced = {f.name for f in cleaned["upload"]}
            kept = [f for f in existing if f.filename not in replaced]
            try:
                self.checked_files = check_files(
                    name=name,
                    task=task,
                    options=self._options(cleaned),
                    uploads=uploads,
                    existing=kept,
                )
            except DatasetFilesError as error:
                self.add_error("upload", summarised(error.problems))
        return cleaned


# Line-level problems shown in the admin's error list (one narrow item each): beyond them
# one line counts the rest, as the participant's report keeps a long one readable.
SHOWN_LINES = 8
_LINE_PROBLEM = re.compile(r"^[^:\n]+:\d+: ")


def summarised(problems: list[str], *, shown: int = SHOWN_LINES) -> list[str]:
    """The report's summaries and file-level lines (``PATH: message``) all, the first
    ``shown`` line-level ones (``PATH:LINE: message``), then how many more there are."""
    lines = [problem for problem in problems if _LINE_PROBLEM.match(problem)]
    if len(lines) <= shown:
        return list(problems)
    kept = set(lines[:shown])
    result = [p for p in problems if not _LINE_PROBLEM.match(p) or p in kept]
    more = len(lines) - shown
    result.append(
        f"… and {more} more line{'s' if more != 1 else ''} with problems "
        "(`python -m scoring evaluate` on the files lists every one)."
    )
    return result


class DatasetRankingForm(DatasetUploadForm):
    """The dataset form of the admin (its page and the challenge's inline): a new dataset
    or a changed ranking loss must suit the challenge's feedback."""

    def clean(self):
        cleaned = super().clean()
        challenge, task = cleaned.get("challenge"), cleaned.get("task")
        changed = self.instance.pk is None or {"task", "ranking_loss"} & set(self.changed_data)
        if (
            challenge is not None
            and task
            and changed
            and challenge.feedback in LADDERS
            and "ranking_loss" not in self.errors
        ):
            message = ladder_refusal(
                name=cleaned.get("name") or self.instance.name,
                task=task,
                ranking_loss=cleaned.get("ranking_loss", ""),
            )
            if message:
                self.add_error("ranking_loss", message)
        return cleaned
