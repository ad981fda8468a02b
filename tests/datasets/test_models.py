"""datasets.models: a save never writes an old generation back (GenerationField); the
multiclass settings and their constraints; the migrations hold the models."""

import io

import pytest
from django.core.exceptions import NON_FIELD_ERRORS, ValidationError
from django.core.management import call_command
from django.db import IntegrityError, transaction
from django.db.models import F

import scoring
from datasets.models import Dataset


def _stored(dataset) -> int:
    return Dataset.objects.values_list("generation", flat=True).get(pk=dataset.pk)


def test_an_insert_writes_the_generation_and_no_save_writes_it_again(challenge):
    dataset = Dataset(challenge=challenge, name="gaze", task="regression", generation=7)
    dataset.save()
    assert _stored(dataset) == 7
    Dataset.objects.filter(pk=dataset.pk).update(generation=F("generation") + 1)  # a bump
    dataset.generation = 0  # an old copy's number, or a careless assignment
    dataset.description = "edited"
    for update_fields in (None, ["description"], ["description", "generation"]):
        dataset.save(update_fields=update_fields)
        assert _stored(dataset) == 8, update_fields
    stored = Dataset.objects.get(pk=dataset.pk)
    assert (stored.description, stored.generation) == ("edited", 8)


# --- Multiclass settings (issue 26) ----------------------------------------------------


def test_the_task_choices_are_the_scoring_registry_s():
    choices = Dataset._meta.get_field("task").choices
    assert choices == [(str(spec.name), spec.label) for spec in scoring.TASKS.values()]
    assert "multiclass" in dict(choices)


def test_classes_lie_in_2_to_1000_and_a_multiclass_dataset_needs_them(challenge):
    """The database refuses what the forms and the import refuse first."""
    for name, fields in [
        ("one", {"task": "multiclass", "classes": 1}),
        ("many", {"task": "multiclass", "classes": 1001}),
        ("none", {"task": "multiclass"}),
        ("binary", {"task": "classification", "classes": 0}),
    ]:
        with pytest.raises(IntegrityError), transaction.atomic():
            Dataset.objects.create(challenge=challenge, name=name, **fields)
    for classes in (2, 1000):
        Dataset.objects.create(
            challenge=challenge, name=f"c{classes}", task="multiclass", classes=classes
        )
    gaze = Dataset.objects.create(challenge=challenge, name="gaze", task="regression")
    assert (gaze.classes, gaze.allow_ensembles) == (None, True)


def test_full_clean_names_the_classes_field(challenge):
    with pytest.raises(ValidationError) as raised:
        Dataset(challenge=challenge, name="cifar", task="multiclass", classes=1001).full_clean()
    assert raised.value.message_dict == {
        "classes": ["Ensure this value is less than or equal to 1000."]
    }
    with pytest.raises(ValidationError) as raised:
        Dataset(challenge=challenge, name="cifar", task="multiclass").full_clean()
    assert raised.value.message_dict == {
        NON_FIELD_ERRORS: ["A dataset of this task needs its number of classes."]
    }


def test_the_scoring_options_carry_the_multiclass_settings():
    dataset = Dataset(task="multiclass", classes=10, allow_ensembles=False, log_base=2.0)
    assert dataset.scoring_options == scoring.ScoringOptions(
        log_base=2.0, classes=10, allow_ensembles=False
    )
    assert dataset.settings_template == "datasets/settings/multiclass.html"


def test_the_losses_shown_are_the_task_s_applying_losses_named_in_its_list():
    """Dataset.shown_losses: the one source of every page's columns (spec §8, §9)."""
    regression = Dataset(task="regression")
    assert regression.shown_losses() == scoring.losses_for("regression", scoring.ScoringOptions())
    assert "wis" not in [loss.name for loss in regression.shown_losses()]  # no levels
    classification = Dataset(task="classification", losses=["floorlog", "brier", "nlp"])
    # In the registry's order, the plug-in's (spec §9) after every built-in one.
    assert [loss.name for loss in classification.shown_losses()] == ["nlp", "brier", "floorlog"]
    gone = Dataset(task="classification", losses=["nlp", "uninstalled"])
    assert [loss.name for loss in gone.shown_losses()] == ["nlp"]


def test_the_migrations_hold_every_model_change(db):
    out = io.StringIO()
    call_command("makemigrations", "datasets", "--check", "--dry-run", stdout=out)
    assert "No changes detected" in out.getvalue()


def test_quantile_levels_are_validated_and_reach_regression_s_options_only(challenge):
    levels = [0.05, 0.25, 0.5, 0.75, 0.95]
    dataset = Dataset(challenge=challenge, name="udon", task="regression", quantile_levels=levels)
    dataset.full_clean()
    assert dataset.scoring_options.quantile_levels == tuple(levels)
    assert Dataset(task="regression").scoring_options.quantile_levels is None
    # An empty list is no levels (a JSONField's empty value, as the admin's empty field).
    assert Dataset(task="regression", quantile_levels=[]).scoring_options.quantile_levels is None
    # Kept from an earlier task, as classes are: not the classification task's.
    assert Dataset(task="classification", quantile_levels=levels).scoring_options == (
        scoring.ScoringOptions()
    )
    for bad, message in (
        ([0.5, 0.5], "quantile levels must increase strictly (0.5 after 0.5)"),
        ([0.1, 1.0], "quantile levels must lie strictly between 0 and 1, got 1.0"),
        ("0.1", "quantile levels must be a list of numbers, got '0.1'"),
    ):
        dataset.quantile_levels = bad
        with pytest.raises(ValidationError) as raised:
            dataset.full_clean()
        assert raised.value.message_dict == {
            "quantile_levels": [f"{message}; e.g. [0.05, 0.25, 0.5, 0.75, 0.95]."]
        }
