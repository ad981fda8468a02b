"""datasets.demo.covshift: the 2006 covariate-shift challenge, synthetic: test inputs
shifted from the training inputs."""

import numpy as np

from .helpers import load as _load


def _slices(folder, name):
    """The test set's slice names, "in" or "shifted" (NAME_test_slices.txt)."""
    return np.loadtxt(folder / name / f"{name}_test_slices.txt", dtype=str)


def test_covshift_test_inputs_are_shifted_from_training_inputs(generated):
    folder = generated / "covshift"
    for name in ("udon", "wheat", "barley", "schnitzel"):
        train, test = _load(folder, name, "train", "inputs"), _load(folder, name, "test", "inputs")
        test = test[_slices(folder, name) == "shifted"]  # (a fifth is drawn as training)
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


def test_covshift_test_sets_are_labelled_in_and_shifted_by_how_they_were_drawn(generated):
    """A fifth of each test set drawn as the training data (slice "in"), the rest shifted
    (scoring.md §8): the "in" examples sit with the training inputs, the others not."""
    import scoring

    folder = generated / "covshift"
    for name in ("udon", "maki", "wheat", "barley", "schnitzel"):
        test = _load(folder, name, "test", "inputs")
        test = test.reshape(len(test), -1)
        path = folder / name / f"{name}_test_slices.txt"
        names = scoring.read_slices(str(path), path=str(path), n=len(test))
        assert scoring.slices.first_appearance(names) in (["in", "shifted"], ["shifted", "in"])
        assert np.count_nonzero(names == "in") == round(0.2 * len(test)), name
        assert not (folder / name / f"{name}_val_slices.txt").exists()
        if name == "maki":
            continue  # (its shift is in the planes, checked above)
        train = _load(folder, name, "train", "inputs").reshape(-1, test.shape[1])
        centre, spread = train.mean(axis=0), train.std(axis=0)
        distance = np.abs(test - centre) / spread
        assert distance[names == "in"].mean() < distance[names == "shifted"].mean(), name
