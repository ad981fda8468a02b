"""scoring.tasks.demo: what the demo leaderboard's methods share: the entries a dataset's
options allow, standardised inputs, nearest neighbours and prediction lines."""

import numpy as np

from scoring import ScoringOptions
from scoring.tasks.demo import KNN_TRAINING_CAP, Data, Demo, Method, lines, nearest, standardise


def constant(data: Data) -> bytes:
    return lines([0.5] for _ in data.query)


def test_methods_that_need_an_option_go_only_where_it_is_set():
    plain = Method("Plain", "Always allowed.", constant)
    samples = Method("Samples", "Needs sample rows.", constant, requires="allow_samples")
    demo = Demo(entries=(("demo-ada", plain), ("demo-bob", samples)), after=("demo-ada", plain))
    assert demo.chosen(ScoringOptions()) == [("demo-ada", plain), ("demo-bob", samples)]
    assert demo.chosen(ScoringOptions(allow_samples=False)) == [("demo-ada", plain)]
    assert demo.targets(np.array([1.0, -1.0])).tolist() == [1.0, -1.0]  # as given


def test_inputs_are_standardised_by_the_training_inputs():
    x = np.array([[1.0, 5.0], [3.0, 5.0]])
    scaled, query = standardise(x, np.array([[2.0, 6.0]]))
    assert scaled.tolist() == [[-1.0, 0.0], [1.0, 0.0]]  # a constant column keeps scale 1
    assert query.tolist() == [[0.0, 1.0]]


def test_nearest_neighbours_in_standardised_inputs():
    x = np.array([[0.0], [1.0], [2.0], [10.0]])
    data = Data(x, np.zeros(4), np.array([[0.9], [9.0]]), np.random.default_rng(0))
    found = nearest(data, 2)
    assert [sorted(row) for row in found.tolist()] == [[0, 1], [2, 3]]
    assert nearest(data, 10).shape == (2, 4)  # k is capped at the training points


def test_a_large_training_set_is_searched_in_a_capped_sample():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(KNN_TRAINING_CAP + 500, 2))
    query = rng.normal(size=(5, 2))
    found = nearest(Data(x, np.zeros(len(x)), query, rng), 3)
    assert found.shape == (5, 3)
    # The indices are the training set's (not the sample's): they name near points.
    for point, neighbours in zip(query, found, strict=True):
        distances = np.linalg.norm(x - point, axis=1)
        assert distances[neighbours].max() < np.quantile(distances, 0.01)


def test_prediction_lines_have_seven_significant_digits():
    assert lines([(1, 0.123456789, 2.0), (0.5,)]) == b"1 0.1234568 2\n0.5\n"


def test_a_fit_is_made_once_per_training_data_and_options():
    from scoring.tasks import demo

    demo._FITS.clear()
    made = []

    def fit():
        made.append(1)
        return np.array([len(made)])

    x, y = np.arange(6.0).reshape(3, 2), np.array([0.0, 1.0, 1.0])
    first = demo.fitted("m", fit, x, y, l2=0.1)
    assert demo.fitted("m", fit, x.copy(), y.copy(), l2=0.1) is first  # same bytes
    assert demo.fitted("m", fit, x, y, l2=0.2)[0] == 2  # other options: fitted again
    assert demo.fitted("m", fit, x + 1, y, l2=0.1)[0] == 3  # other data: fitted again
    assert demo.fitted("m", fit, x.astype(np.float32), y, l2=0.1)[0] == 4  # other dtype
    assert len(made) == 4
