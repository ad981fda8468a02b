"""datasets.demo.cifar10c: a ten-class problem with clean training and validation inputs
and test inputs corrupted at five growing severities, as in CIFAR-10-C."""

import tomllib

import numpy as np
import pytest

from challenge_site.challenges.models import Challenge
from datasets.demo import cifar10c
from datasets.importing import import_challenge

from .helpers import load as _load


def test_challenge_toml_declares_a_ten_class_task_ranked_by_nlp(generated):
    config = tomllib.loads((generated / "cifar10c" / "challenge.toml").read_text())
    assert config["slug"] == "cifar10c" and config["results_published"] is True
    assert config["start"] < config["test_start"] < config["deadline"]
    table = config["datasets"]["clusters10"]
    assert (table["task"], table["classes"], table["allow_ensembles"], table["ranking_loss"]) == (
        "multiclass",
        10,
        True,
        "nlp",
    )
    # The description gives the corruption's strengths as the generator uses them.
    assert "standard deviation 0.4 s" in table["description"]
    assert "weight 0.15 s" in table["description"]
    assert "probability 0.1 s" in table["description"]


def test_the_splits_have_the_sizes_and_every_class(generated):
    folder = generated / "cifar10c"
    for split, size in zip(("train", "val", "test"), cifar10c.SIZES, strict=True):
        inputs = _load(folder, "clusters10", split, "inputs")
        targets = _load(folder, "clusters10", split, "targets")
        assert inputs.shape == (size, 20) and targets.shape == (size,)
        assert set(targets.tolist()) == set(range(10))  # labels 0…9, written as integers
    lines = (folder / "clusters10" / "clusters10_train_targets.txt").read_text().split()
    assert all(line.isdigit() for line in lines)


def test_validation_inputs_are_clean_and_test_inputs_shifted(generated):
    folder = generated / "cifar10c"
    train, val, test = (_load(folder, "clusters10", s, "inputs") for s in ("train", "val", "test"))
    # Clean validation: the training inputs' spread; corrupted test: wider at severity 5.
    assert np.allclose(val.std(axis=0), train.std(axis=0), rtol=0.1)
    noise_rows = np.arange(4000, 5000)[np.arange(1000) % 3 == 0]
    assert test[noise_rows].std() > 1.5 * train.std()
    # Dropped inputs are exact zeros, about 10 % × severity of a drop row's inputs.
    for severity in (1, 5):
        start = 1000 * (severity - 1)
        drop_rows = np.arange(start, start + 1000)[np.arange(1000) % 3 == 2]
        share = (test[drop_rows] == 0).mean()
        assert abs(share - 0.1 * severity) < 0.03
    assert (train == 0).sum() == 0


def test_a_classifier_gets_worse_with_the_severity():
    """Nearest class centre on the training inputs: right far more often on the clean
    validation inputs than on the mildest test block, and least often on the worst."""
    built = cifar10c.clusters10(2004)
    (x, y), (val, val_y), (test, test_y) = (built.splits[s] for s in ("train", "val", "test"))
    centres = np.stack([x[y == k].mean(axis=0) for k in range(10)])

    def accuracy(inputs, labels):
        distances = ((inputs[:, None, :] - centres[None]) ** 2).sum(axis=2)
        return (distances.argmin(axis=1) == labels).mean()

    by_severity = [
        accuracy(test[i * 1000 : (i + 1) * 1000], test_y[i * 1000 : (i + 1) * 1000])
        for i in range(5)
    ]
    assert accuracy(val, val_y) > 0.7
    assert accuracy(val, val_y) > by_severity[0] > by_severity[2] > by_severity[4]
    assert by_severity[4] < 0.5


def test_the_test_rows_are_five_blocks_cycling_through_the_corruptions():
    severities, kinds = cifar10c.test_layout()
    assert severities.tolist()[:1] + severities.tolist()[999:1001] + severities.tolist()[-1:] == [
        1,
        1,
        2,
        5,
    ]
    names = [cifar10c.CORRUPTIONS[k] for k in kinds[[0, 1, 2, 3, 999, 1000]]]
    assert names == ["noise", "blur", "drop", "noise", "noise", "noise"]


def test_each_corruption_at_a_known_input():
    rng = np.random.default_rng(0)
    row = np.array([[0.0, 4.0, 8.0, 0.0]])
    # Blur, severity 2: 0.7 of the input plus 0.3 of its (circular) neighbours' mean.
    blurred = cifar10c.corrupt(row, kind="blur", severity=2, rng=rng)
    assert np.allclose(blurred, 0.7 * row + 0.3 * np.array([[2.0, 4.0, 2.0, 4.0]]))
    ones = np.ones((20000, 20))
    noisy = cifar10c.corrupt(ones, kind="noise", severity=3, rng=rng)
    assert abs((noisy - 1).std() - 1.2) < 0.01
    dropped = cifar10c.corrupt(ones, kind="drop", severity=4, rng=rng)
    assert set(np.unique(dropped).tolist()) == {0.0, 1.0}
    assert abs((dropped == 0).mean() - 0.4) < 0.005
    assert (ones == 1).all()  # a copy: the clean inputs are kept
    with pytest.raises(ValueError, match="unknown corruption 'fog'; expected one of noise"):
        cifar10c.corrupt(row, kind="fog", severity=1, rng=rng)


@pytest.mark.django_db
def test_it_imports_as_a_multiclass_challenge(generated):
    import_challenge(generated / "cifar10c")
    challenge = Challenge.objects.get(slug="cifar10c")
    dataset = challenge.datasets.get()
    assert (dataset.name, dataset.task, dataset.classes, dataset.allow_ensembles) == (
        "clusters10",
        "multiclass",
        10,
        True,
    )
    assert (dataset.input_dim, dataset.n_train, dataset.n_val, dataset.n_test) == (
        20,
        5000,
        2000,
        5000,
    )
    assert dataset.ranking_loss == "nlp"
    assert dataset.scoring_options.classes == 10
