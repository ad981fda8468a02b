"""The demo challenges: shapes from the papers, the quirks they describe, importable."""

import tomllib

import numpy as np
import pytest

from challenge_site.challenges.models import Challenge
from datasets.demo import covshift, epuc
from datasets.demo.generate import main
from datasets.importing import import_challenge

EPUC_SHAPES = {  # name: (task, dim, train, val, test) from Table 1 of the 2004 paper
    "catalysis": ("classification", 617, 873, 300, 700),
    "gatineau": ("classification", 1092, 3000, 2176, 3000),
    "stereopsis": ("regression", 4, 192, 300, 500),
    "gaze": ("regression", 12, 150, 300, 427),
    "outaouais": ("regression", 37, 20000, 9000, 20000),
}


@pytest.fixture(scope="session")
def generated(tmp_path_factory):
    out = tmp_path_factory.mktemp("demo")
    assert main([str(out)]) == 0
    return out


def _load(folder, name, split, kind):
    return np.loadtxt(
        folder / name / f"{name}_{split}_{kind}.txt", ndmin=2 if kind == "inputs" else 1
    )


def test_epuc_challenge_toml_has_the_2004_dates_and_bases(generated):
    config = tomllib.loads((generated / "epuc" / "challenge.toml").read_text())
    assert config["start"].isoformat() == "2004-11-10T00:00:00+00:00"
    assert config["test_start"].isoformat() == "2004-12-03T00:00:00+00:00"
    assert config["deadline"].isoformat() == "2004-12-10T23:59:59+00:00"
    assert list(config["datasets"]) == list(EPUC_SHAPES)
    assert (
        config["datasets"]["catalysis"]["log_base"]
        == config["datasets"]["gatineau"]["log_base"]
        == 10
    )
    assert "log_base" not in config["datasets"]["gaze"]  # regression in nats


@pytest.mark.django_db
def test_both_demo_challenges_import_with_the_published_shapes(generated):
    import_challenge(generated / "epuc")
    import_challenge(generated / "covshift")
    epuc_challenge = Challenge.objects.get(slug="epuc")
    shapes = {
        d.name: (d.task, d.input_dim, d.n_train, d.n_val, d.n_test)
        for d in epuc_challenge.datasets.all()
    }
    assert shapes == EPUC_SHAPES
    covshift_challenge = Challenge.objects.get(slug="covshift")
    datasets = {d.name: d for d in covshift_challenge.datasets.all()}
    assert list(datasets) == ["udon", "maki", "wheat", "barley", "schnitzel"]
    assert (
        datasets["wheat"].input_dim,
        datasets["wheat"].n_train,
        datasets["wheat"].n_val,
        datasets["wheat"].n_test,
    ) == (5, 400, 50, 1000)
    assert (datasets["barley"].input_dim, datasets["barley"].n_test) == (5, 1000)
    assert (
        datasets["schnitzel"].input_dim,
        datasets["schnitzel"].n_train,
        datasets["schnitzel"].n_val,
        datasets["schnitzel"].n_test,
    ) == (3, 280, 40, 185)
    assert (datasets["udon"].input_dim, datasets["maki"].input_dim) == (1, 4)
    assert all(d.nmse_normaliser == "training" for d in datasets.values() if d.task == "regression")
    assert covshift_challenge.test_start.isoformat() == "2006-11-10T00:00:00+00:00"


def test_epuc_quirks(generated):
    folder = generated / "epuc"
    catalysis = np.concatenate(
        [_load(folder, "catalysis", s, "targets") for s in ("train", "val", "test")]
    )
    assert abs((catalysis == 1).mean() - 0.5) < 0.01
    gatineau = np.concatenate(
        [_load(folder, "gatineau", s, "targets") for s in ("train", "val", "test")]
    )
    assert 0.08 < (gatineau == 1).mean() < 0.10
    stereo = np.concatenate(
        [_load(folder, "stereopsis", s, "targets") for s in ("train", "val", "test")]
    )
    gaps = np.diff(np.sort(stereo))
    assert (gaps > 5).sum() == 9  # ten clusters of depths
    gaze = _load(folder, "gaze", "train", "targets")
    assert np.array_equal(gaze, np.round(gaze))
    gaze_inputs = _load(folder, "gaze", "val", "inputs")
    centred = np.abs(gaze_inputs - np.median(gaze_inputs, axis=0))
    robust_z = (centred / np.median(centred, axis=0)).max(axis=1)
    assert 0.01 < (robust_z > 10).mean() < 0.1  # a few severe outliers
    outaouais = _load(folder, "outaouais", "train", "inputs")
    assert len(np.unique(outaouais[:, :12], axis=0)) <= 60  # inputs come from a few clusters


def test_covshift_test_inputs_are_shifted_from_training_inputs(generated):
    folder = generated / "covshift"
    for name in ("udon", "wheat", "barley", "schnitzel"):
        train, test = _load(folder, name, "train", "inputs"), _load(folder, name, "test", "inputs")
        shift = np.abs(train.mean(axis=0) - test.mean(axis=0)) / train.std(axis=0)
        assert shift.max() > 0.5, name

    # Maki: training points lie on 4 of the 10 depth planes, test points on all of them,
    # which shows in the disparity between the two cameras' x coordinates.
    def planes(split):
        inputs = _load(folder, "maki", split, "inputs")
        disparity = np.sort(inputs[:, 0] - inputs[:, 2])
        return 1 + int((np.diff(disparity) > 3).sum())

    assert (planes("train"), planes("test")) == (4, 10)
    maki_train = set(_load(folder, "maki", "train", "targets"))
    assert maki_train == {1, 4, 7, 10} and maki_train < set(
        _load(folder, "maki", "test", "targets")
    )


def test_generation_is_seeded():
    first, again = epuc.gaze(7), epuc.gaze(7)
    for split in ("train", "val", "test"):
        assert all(
            np.array_equal(a, b)
            for a, b in zip(first.splits[split], again.splits[split], strict=True)
        )
    assert not np.array_equal(epuc.gaze(8).splits["train"][1], first.splits["train"][1])
    assert np.array_equal(covshift.udon(7).splits["test"][0], covshift.udon(7).splits["test"][0])
