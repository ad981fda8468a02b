"""datasets.demo.epuc: the 2004 challenge's shapes, dates and quirks, synthetic."""

import tomllib

import numpy as np

from .helpers import EPUC_SHAPES
from .helpers import load as _load


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
