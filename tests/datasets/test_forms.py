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
