"""datasets.forms: the dataset's admin form: the options of its task, log bases as
written, and the field that takes its files."""

import pytest
from django.forms import modelform_factory
from django.urls import reverse

from datasets.forms import DatasetRankingForm, LogBaseField
from datasets.models import Dataset
from tests.console.helpers import client_of, two_challenges
from tests.factories import make_dataset


@pytest.fixture
def two(db):
    return two_challenges()


def test_the_dataset_page_shows_the_options_of_its_task_and_log_bases_as_written(two):
    client = client_of(two["me"])
    mine = two["mine"]
    regression = mine.datasets.get()
    classification = make_dataset(mine, "tiny", task="classification")
    page = client.get(reverse("admin:datasets_dataset_change", args=[classification.pk]))
    html = page.content.decode()
    assert 'name="nmse_normaliser"' not in html and 'name="allow_samples"' not in html
    assert 'name="log_base" value="e"' in html
    html = client.get(reverse("admin:datasets_dataset_change", args=[regression.pk])).content
    assert b'name="nmse_normaliser"' in html
    # the challenge page's inline has no regression-only column either
    html = client.get(reverse("admin:challenges_challenge_change", args=[mine.pk])).content
    assert b"nmse_normaliser" not in html and b"allow_samples" not in html

    field = LogBaseField()
    assert field.clean("e") == pytest.approx(2.718281828459045)
    assert (field.clean(" 2 "), field.clean("10"), field.clean("1.5")) == (2.0, 10.0, 1.5)
    for bad in ("1", "0", "-2", "nats", "inf", "nan"):
        with pytest.raises(Exception, match="Enter e, 2, 10"):
            field.clean(bad)


def test_a_form_without_the_classes_field_says_where_to_give_them(challenge):
    """The challenge page's inline has the columns every task has: a multiclass dataset
    added there is refused on its task, with where to add it instead."""
    inline_form = modelform_factory(
        Dataset,
        form=DatasetRankingForm,
        fields=["challenge", "name", "task", "position", "log_base", "ranking_loss"],
    )
    data = {"challenge": challenge.pk, "name": "cifar", "task": "multiclass", "position": "0"}
    form = inline_form(data={**data, "log_base": "e", "ranking_loss": ""})
    assert not form.is_valid()
    assert form.errors == {
        "task": [
            "A multiclass dataset needs its number of classes (2 to 1000). Add the dataset "
            "on its own admin page, which asks for it."
        ]
    }
    form = inline_form(data={**data, "task": "classification", "log_base": "e", "ranking_loss": ""})
    assert form.is_valid(), form.errors


def test_quantile_levels_are_read_as_written_and_kept_by_a_form_without_them(challenge):
    from datasets.forms import QuantileLevelsField

    field = QuantileLevelsField()
    assert field.clean("0.05, 0.25 0.5,0.75, 0.95") == [0.05, 0.25, 0.5, 0.75, 0.95]
    assert field.clean("  ") is None and field.prepare_value([0.1, 0.9]) == "0.1, 0.9"
    for bad, message in (("0.9 0.1", "increase strictly"), ("0.1 x", "expected numbers")):
        with pytest.raises(Exception, match=message):
            field.clean(bad)
    # The challenge page's inline has no such column: the stored levels stay, and so may
    # a ranking loss that needs them.
    dataset = make_dataset(challenge, quantile_levels=[0.1, 0.9], ranking_loss="wis")
    inline_form = modelform_factory(
        Dataset,
        form=DatasetRankingForm,
        fields=["challenge", "name", "task", "position", "log_base", "ranking_loss"],
    )
    data = {"challenge": challenge.pk, "name": "gaze", "task": "regression", "position": "0"}
    form = inline_form({**data, "log_base": "e", "ranking_loss": "wis"}, instance=dataset)
    assert "quantile_levels" not in form.fields
    assert form.is_valid(), form.errors
    assert form.save().quantile_levels == [0.1, 0.9]


def test_the_losses_shown_are_written_as_names_and_checked_against_the_task(challenge):
    dataset = make_dataset(challenge, "tiny", task="classification")
    fields = ["challenge", "name", "task", "position", "log_base", "ranking_loss", "losses"]
    form_class = modelform_factory(Dataset, form=DatasetRankingForm, fields=fields)
    data = {"challenge": challenge.pk, "name": "tiny", "task": "classification", "position": "0"}
    data |= {"log_base": "e", "ranking_loss": ""}
    form = form_class(data={**data, "losses": "nlp, brier floorlog"}, instance=dataset)
    assert form.is_valid(), form.errors
    assert form.cleaned_data["losses"] == ["nlp", "brier", "floorlog"]
    assert "losses" in form.changed_data
    assert form.save().losses == ["nlp", "brier", "floorlog"]
    assert form_class(instance=dataset)["losses"].value() == "nlp, brier, floorlog"

    form = form_class(data={**data, "losses": "brier, crps"}, instance=dataset)
    assert not form.is_valid()
    assert form.errors["losses"][0].startswith(
        "unknown loss 'crps' for this classification dataset; its losses are nlp, 01l, "
    )
    assert form.errors["losses"][1] == (
        "the ranking loss 'nlp' must be one of the losses shown (the task's default, as "
        "ranking_loss is empty)"
    )
    # The challenge page's inline has no losses field: a ranking loss it sets is checked
    # against the stored list.
    inline = modelform_factory(Dataset, form=DatasetRankingForm, fields=fields[:-1])
    form = inline(data={**data, "ranking_loss": "01l"}, instance=dataset)
    assert not form.is_valid()
    assert form.errors["ranking_loss"] == ["the ranking loss '01l' must be one of the losses shown"]
