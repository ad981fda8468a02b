import math

from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator, RegexValidator
from django.db import models
from django.db.models import F, Q

import scoring
from challenge_site.challenges.models import Challenge
from challenge_site.challenges.splits import (  # noqa: F401 - the fields' choices, named here by their users too
    RELEASED_KINDS,
    SLICED_SPLITS,
    TEST_PARTS,
    Kind,
    ScoredSplit,
    Split,
)
from scoring.options import MAX_CLASSES, MAX_LEVELS, MAX_MEMBERS, quantile_levels

DATASET_NAME_VALIDATOR = RegexValidator(
    r"^[a-z][a-z0-9-]*\Z",
    "Use lower-case letters, digits and hyphens, starting with a letter (e.g. 'gaze').",
)


# The tasks of scoring's registry (scoring.tasks), in its order: what a dataset stores.
Task = models.TextChoices(
    "Task",
    [(str(spec.name).upper(), (str(spec.name), spec.label)) for spec in scoring.TASKS.values()],
    module=__name__,
)


# The tasks whose datasets must say how many classes there are (their TaskSpec.settings
# hold "classes"): the check constraint below requires the field for them.
CLASS_COUNT_TASKS = [
    str(spec.name) for spec in scoring.TASKS.values() if "classes" in spec.settings
]
# The tasks whose rows are read at quantile levels (spec §8: regression).
QUANTILE_LEVEL_TASKS = [
    str(spec.name) for spec in scoring.TASKS.values() if "quantile_levels" in spec.settings
]


class NmseNormaliser(models.TextChoices):
    EVALUATED = "evaluated", "Variance of the evaluated split's targets"
    TRAINING = "training", "Variance of the training targets"


class StorageAlias(models.TextChoices):
    DEFAULT = "default", "Default storage"
    PRIVATE = "private", "Private storage (never URL-served)"


class GenerationField(models.PositiveBigIntegerField):
    """A counter that only ``F() + 1`` UPDATEs move (leaderboard.generation.bump): a save
    writes it when the row is inserted, and leaves the stored value on every UPDATE
    (``SET generation = generation``). A full save of a row loaded earlier (the admin, an
    import) thus cannot write back an old generation, which would undo bumps made
    meanwhile and let the next bumps reuse numbers whose cached plots describe an older
    state; and no caller's ``update_fields`` needs rewriting."""

    def pre_save(self, model_instance, add):
        value = super().pre_save(model_instance, add)
        return value if add else F(self.attname)

    def deconstruct(self):
        # The column is a plain positive bigint: migrations need not know this class.
        name, _path, args, kwargs = super().deconstruct()
        return name, "django.db.models.PositiveBigIntegerField", args, kwargs


def validate_quantile_levels(value) -> None:
    """Spec §8's levels: 1 to 99 numbers strictly increasing inside (0, 1) (None: none)."""
    if value is None:
        return
    try:
        quantile_levels(value)
    except ValueError as error:
        raise ValidationError(f"{error}; e.g. [0.05, 0.25, 0.5, 0.75, 0.95].") from None


class Dataset(models.Model):
    challenge = models.ForeignKey(Challenge, on_delete=models.CASCADE, related_name="datasets")
    name = models.CharField(max_length=40, validators=[DATASET_NAME_VALIDATOR])
    task = models.CharField(max_length=16, choices=Task)
    description = models.TextField(blank=True)
    position = models.PositiveSmallIntegerField(default=0, help_text="Order on the challenge page.")

    # Read from the files whenever they change (datasets.services.refresh_shape).
    input_dim = models.PositiveIntegerField(null=True, blank=True, editable=False)
    n_train = models.PositiveIntegerField(null=True, blank=True, editable=False)
    n_val = models.PositiveIntegerField(null=True, blank=True, editable=False)
    n_test = models.PositiveIntegerField(null=True, blank=True, editable=False)

    # Scoring options, passed to the scoring package.
    log_base = models.FloatField(
        default=math.e, help_text="Base of the logarithm in nlp/nlpd (e = nats, 10 as in 2004)."
    )
    allow_samples = models.BooleanField(
        default=True, help_text="Regression predictions may use sample rows ('2 s1 … sK')."
    )
    min_quantile_gap = models.FloatField(
        default=0.0,
        validators=[MinValueValidator(0.0)],
        help_text="Minimum distance between consecutive quantiles in '0 a1 q1 …' rows.",
    )
    nmse_normaliser = models.CharField(
        max_length=16, choices=NmseNormaliser, default=NmseNormaliser.EVALUATED
    )
    classes = models.PositiveSmallIntegerField(
        null=True,
        blank=True,
        validators=[MinValueValidator(2), MaxValueValidator(MAX_CLASSES)],
        help_text=f"Number of classes L (2 to {MAX_CLASSES}): targets are 0 … L−1 and each "
        "prediction line holds L probabilities.",
    )
    allow_ensembles = models.BooleanField(
        default=True,
        help_text=f"Prediction lines may hold M·L numbers, M = 2 … {MAX_MEMBERS} ensemble "
        "members' probabilities (averaged; their total, data and model uncertainty are "
        "reported).",
    )
    # Regression (spec §8): every row read at these levels, scored by wis, the coverage of
    # each central interval reported. Null: no levels, no wis.
    quantile_levels = models.JSONField(
        null=True,
        blank=True,
        validators=[validate_quantile_levels],
        help_text=f"Quantile levels strictly increasing in (0, 1), at most {MAX_LEVELS}, e.g. "
        "0.05, 0.25, 0.5, 0.75, 0.95: adds the weighted interval score (wis) and the coverage "
        "of every central interval (two levels summing to 1). Empty: none.",
    )
    ranking_loss = models.CharField(
        max_length=32,  # a loss name (spec §9: up to 32 characters)
        blank=True,
        help_text="Loss that ranks submissions; empty = the task's default (nlp for "
        "classification and multiclass, nlpd for regression).",
    )
    # The losses the leaderboard shows (shown_losses): names of the task's losses, plug-ins'
    # included (spec §9); empty = every loss of the task that applies.
    losses = models.JSONField(
        default=list,
        blank=True,
        help_text="Losses the leaderboard shows, e.g. nlp, brier; empty = every loss of the "
        "task. The ranking loss must be one of them.",
    )
    # Which test examples form the public part (scoring.ladder.public_mask with the
    # challenge's fraction): drawn when test targets are first stored, kept when they are
    # replaced, never shown to anyone.
    test_parts_seed = models.BigIntegerField(null=True, blank=True, editable=False)
    # Bumped (F() + 1, in the same transaction) whenever the dataset's listed scores may
    # change: caches of its plots and leaderboard fragments carry it in their keys
    # (challenge_site.leaderboard.generation), so invalidating them costs one UPDATE.
    generation = GenerationField(default=0, editable=False)

    class Meta:
        ordering = ["position", "name"]
        constraints = [
            # Also the index behind the dataset page and zip lookups by (challenge, name).
            models.UniqueConstraint(fields=["challenge", "name"], name="dataset_unique_name"),
            models.CheckConstraint(
                condition=Q(log_base__gt=0) & ~Q(log_base=1),
                name="dataset_log_base_valid",
                violation_error_message="log_base must be a positive number other than 1.",
            ),
            models.CheckConstraint(
                condition=Q(min_quantile_gap__gte=0),
                name="dataset_min_quantile_gap_nonnegative",
                violation_error_message="min_quantile_gap must be 0 or more.",
            ),
            models.CheckConstraint(
                condition=Q(classes__isnull=True) | Q(classes__gte=2, classes__lte=MAX_CLASSES),
                name="dataset_classes_range",
                violation_error_message=f"classes must be between 2 and {MAX_CLASSES}.",
            ),
            models.CheckConstraint(
                condition=Q(classes__isnull=False) | ~Q(task__in=CLASS_COUNT_TASKS),
                name="dataset_classes_required",
                violation_error_message="A dataset of this task needs its number of classes.",
            ),
        ]

    def __str__(self):
        return f"{self.challenge.slug}/{self.name}"

    @property
    def log_base_label(self) -> str:
        return "e" if math.isclose(self.log_base, math.e) else f"{self.log_base:g}"

    @property
    def effective_ranking_loss(self) -> str:
        return self.ranking_loss or scoring.default_ranking_loss(self.task).name

    def shown_losses(self) -> list[scoring.Loss]:
        """The dataset's losses, as every page, export and API shows them: the task's
        losses that apply under the dataset's options (scoring.losses_for), in the
        registry's order, those named in ``losses`` only when it names any. The one
        source of the columns: slices (LOSS@SLICE) are built from it."""
        losses = scoring.losses_for(self.task, self.scoring_options)
        if not self.losses:
            return losses
        chosen = set(self.losses)
        return [loss for loss in losses if loss.name in chosen]

    @property
    def task_spec(self) -> scoring.TaskSpec:
        """Everything that differs between tasks (scoring.tasks): ask it, never the name."""
        return scoring.get_task(self.task)

    @property
    def scoring_options(self) -> scoring.ScoringOptions:
        """The options scoring takes; the number of classes only where the task has it (a
        dataset whose task changed may keep an old one)."""
        return scoring.ScoringOptions(
            log_base=self.log_base,
            allow_samples=self.allow_samples,
            min_quantile_gap=self.min_quantile_gap,
            nmse_normaliser=self.nmse_normaliser,
            classes=self.classes if self.task in CLASS_COUNT_TASKS else None,
            allow_ensembles=self.allow_ensembles,
            quantile_levels=(
                self.quantile_levels or None if self.task in QUANTILE_LEVEL_TASKS else None
            ),
        )

    @property
    def settings_template(self) -> str:
        """The task's own part of the dataset page's scoring facts (one template a task,
        named after it: templates/datasets/settings/)."""
        return f"datasets/settings/{self.task}.html"


class DatasetFile(models.Model):
    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="files")
    split = models.CharField(max_length=8, choices=Split)
    kind = models.CharField(max_length=8, choices=Kind)
    storage_alias = models.CharField(max_length=16, choices=StorageAlias)
    path = models.CharField(max_length=255, help_text="Name of the file in its storage.")
    size = models.PositiveBigIntegerField(help_text="Bytes.")
    rows = models.PositiveIntegerField()
    columns = models.PositiveIntegerField(help_text="Numbers per row (1 for targets).")
    sha256 = models.CharField(max_length=64)
    uploaded = models.DateTimeField()

    class Meta:
        constraints = [
            # Also the index behind fetching a dataset's files (the dataset page, the zip).
            models.UniqueConstraint(
                fields=["dataset", "split", "kind"], name="datasetfile_unique_split_kind"
            ),
        ]

    def __str__(self):
        return self.filename

    @property
    def filename(self) -> str:
        return f"{self.dataset.name}_{self.split}_{self.kind}.txt"
