from django.core.validators import MinValueValidator
from django.db import models
from django.db.models import F, Q


class Phase(models.TextChoices):
    """Where a challenge is on its clock (see services.current_phase)."""

    UPCOMING = "upcoming", "Upcoming"
    VALIDATION = "validation", "Validation phase"
    TEST = "test", "Test phase"
    POST = "post", "Post-challenge"


class TestInputsRelease(models.TextChoices):
    AT_START = "start", "From the start"
    AT_TEST_START = "test_start", "When the test phase begins"


class TestTargetsRelease(models.TextChoices):
    AFTER_PUBLICATION = "after_publication", "After the results are published"
    NEVER = "never", "Never"


class Challenge(models.Model):
    slug = models.SlugField(unique=True)
    title = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    start = models.DateTimeField(help_text="Datasets are released and validation submissions open.")
    test_start = models.DateTimeField(
        help_text="Validation targets (and test inputs, if held back) are released; "
        "the final test phase begins."
    )
    deadline = models.DateTimeField(help_text="Last moment (inclusive) of the test phase.")
    results_published = models.BooleanField(default=False)
    val_daily_limit = models.PositiveIntegerField(
        null=True,
        blank=True,
        validators=[MinValueValidator(1)],
        help_text="Validation submissions per user and dataset per UTC day; empty = unlimited.",
    )
    test_daily_limit = models.PositiveIntegerField(
        null=True,
        blank=True,
        default=5,
        validators=[MinValueValidator(1)],
        help_text="Test submissions per user and dataset per UTC day; empty = unlimited.",
    )
    test_total_limit = models.PositiveIntegerField(
        null=True,
        blank=True,
        validators=[MinValueValidator(1)],
        help_text="Test submissions per user and dataset over the whole test phase; "
        "empty = no overall limit.",
    )
    test_inputs_release = models.CharField(
        max_length=16, choices=TestInputsRelease, default=TestInputsRelease.AT_TEST_START
    )
    test_targets_release = models.CharField(
        max_length=24, choices=TestTargetsRelease, default=TestTargetsRelease.NEVER
    )
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-start", "slug"]
        constraints = [
            models.CheckConstraint(
                condition=Q(start__lte=F("test_start")) & Q(test_start__lt=F("deadline")),
                name="challenge_dates_in_order",
                violation_error_message="Dates must satisfy start ≤ test start < deadline.",
            ),
        ]
        indexes = [
            # The home page lists every challenge newest first (ordering above).
            models.Index(F("start").desc(), "slug", name="challenge_start_desc_idx"),
        ]

    def __str__(self):
        return self.title
