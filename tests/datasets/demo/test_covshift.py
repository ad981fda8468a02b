"""datasets.demo.covshift: the 2006 covariate-shift challenge, synthetic: test inputs
shifted from the training inputs."""

import numpy as np

from .helpers import load as _load


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
