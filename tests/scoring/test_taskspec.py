"""scoring.taskspec: the task interface and its registry.

A task added by registering one object is read, checked, inferred (or not), scored,
subset, baselined and upload-checked by the same code as the built-in ones, with no
change anywhere else: the shape the spec's multiclass task (§7) takes.
"""

import math

import numpy as np
import pytest

import scoring
from scoring import LOSSES, Context, ScoringError, Task, evaluate, read_inputs, read_targets
from scoring.errors import fmt
from scoring.probing import rows_off_mode
from scoring.tasks import TASKS, Inference, TaskSpec, all_settings, get_task, inferable, text
from scoring.upload_check import check_file

from .util import arr, lines_of


class Classes(TaskSpec):
    """A small multiclass task: class labels 0..L−1, L probabilities per line."""

    name = "classes"
    label = "Classes"
    settings = ("allow_samples",)  # (one another task uses too: shown once)
    readme_targets = "a class label 0, 1, …"

    def target_error(self, targets, options):
        bad = (targets < 0) | (targets != np.floor(targets))
        return (
            f"class labels are whole numbers from 0, found {targets[bad][0]}" if bad.any() else None
        )

    def check_target_lines(self, lines, ok, values, problems, options):
        wrong = ok & ((values < 0) | (values != np.floor(values)))
        found = values[wrong]
        problems.add_lines(lines[wrong], lambda i: f"expected a class label, found {fmt(found[i])}")

    def read(self, source, *, path, targets, options, reader):
        probs = read_inputs(source, path=path)
        return probs

    def check(self, source, *, path, options, n_expected, reader):
        read_inputs(source, path=path)

    def context(self, targets, options, train_targets, prediction):
        return Context(self.name, targets, options, train_targets, p=prediction)

    def baseline(self, train_targets, targets, options):
        counts = np.bincount(train_targets.astype(int), minlength=int(targets.max()) + 1)
        p = np.tile(counts / counts.sum(), (targets.size, 1))
        return Context(self.name, targets, options, train_targets, p=p)

    def is_point(self, ctx):
        return bool(np.isin(ctx.p, (0.0, 1.0)).all())

    def certain(self, ctx):
        return int(np.count_nonzero((ctx.p == 0).any(axis=1)))

    def subset(self, ctx, mask):
        return Context(ctx.task, ctx.targets[mask], ctx.options, ctx.train_targets, p=ctx.p[mask])

    def plot_data(self, ctx):
        return {"mean_probabilities": ctx.p.mean(axis=0).tolist()}

    def probe_values(self, ctx):
        return ctx.p

    def format_help(self, options):
        return [text.heading("Predictions (classes)"), text.wrap("L probabilities per line.")]


def _nlp_terms(ctx):
    return -np.log(ctx.p[np.arange(ctx.targets.size), ctx.targets.astype(int)])


@pytest.fixture
def classes():
    spec = scoring.register_task(Classes())
    scoring.register(
        name="classes_nlp",
        title="Negative log probability of the class",
        task="classes",
        probabilistic=True,
        compute=lambda c: float(np.mean(_nlp_terms(c))),
        terms=_nlp_terms,
    )
    yield spec
    del LOSSES[("classes", "classes_nlp")]
    del TASKS["classes"]


PREDICTIONS = lines_of(["0.7 0.2 0.1", "0.1 0.8 0.1", "0.25 0.25 0.5", "0.7 0.2 0.1"])
TARGETS = lines_of(["0", "2", "2", "1"])


def test_a_registered_task_is_scored_like_the_built_in_ones(classes):
    result = evaluate(PREDICTIONS, TARGETS, task="classes")
    want = -(math.log(0.7) + math.log(0.1) + math.log(0.5) + math.log(0.2)) / 4
    assert result.task == "classes" and result.scores == {"classes_nlp": pytest.approx(want)}
    assert result.non_probabilistic is False and result.certain == 0
    assert result.plot_data() == {"mean_probabilities": pytest.approx([0.4375, 0.3625, 0.2])}
    assert result.terms()["classes_nlp"] == pytest.approx(-np.log([0.7, 0.1, 0.5, 0.2]))
    assert result.subset(arr(1, 0, 1, 0) == 1).scores["classes_nlp"] == pytest.approx(
        -(math.log(0.7) + math.log(0.5)) / 2
    )
    assert rows_off_mode(result) == 2  # two rows differ from the most common prediction
    base = scoring.baseline(arr(0, 0, 1, 2), arr(0, 2), task="classes")
    assert base.scores["classes_nlp"] == pytest.approx(-(math.log(0.5) + math.log(0.25)) / 2)


def test_a_registered_task_checks_its_own_lines(classes):
    with pytest.raises(ScoringError) as error:
        read_targets(lines_of(["0", "1.5", "-1"]), path="t.txt", task="classes")
    assert error.value.lines == [
        "t.txt:2: expected a class label, found 1.5",
        "t.txt:3: expected a class label, found -1",
    ]
    assert read_targets(lines_of(["0", "1.5"]), path="t.txt", task=None).tolist() == [0.0, 1.5]
    with pytest.raises(ValueError, match="targets: class labels are whole numbers"):
        evaluate(PREDICTIONS, arr(0, 1, 2, 0.5), task="classes")
    lines = check_file(lines_of(["0.5 0.5", "1"]), path="p.txt", task="classes", rows=2)
    assert lines == ["p.txt:2: expected 2 numbers (as on line 1), found 1"]


def test_a_task_without_inference_is_never_inferred(classes):
    assert [spec.name for spec in inferable()] == ["classification", "regression"]
    assert evaluate(lines_of(["0.5", "0.25"]), arr(1, -1)).task == Task.CLASSIFICATION
    assert evaluate(lines_of(["1 0 1", "1 2 1"]), arr(0, 2)).task == Task.REGRESSION


def test_the_built_in_tasks_in_their_order():
    assert list(TASKS) == ["classification", "regression", "multiclass"]
    binary, regression, multiclass = TASKS.values()
    assert multiclass.name is Task.MULTICLASS and multiclass.inference is None
    assert get_task("regression") is regression and get_task(Task.CLASSIFICATION) is binary
    assert get_task(binary) is binary and binary.name is Task.CLASSIFICATION
    assert binary.inference.max_numbers == 1 and regression.inference == Inference()
    assert binary.inference.targets(arr(1, -1, 1)) and not binary.inference.targets(arr(1, 0))
    assert regression.inference.fallback and not binary.inference.fallback
    assert all_settings() == BUILT_IN_SETTINGS


BUILT_IN_SETTINGS = (
    "allow_samples",
    "min_quantile_gap",
    "nmse_normaliser",
    "quantile_levels",
    "classes",
    "allow_ensembles",
)


def test_all_settings_names_a_shared_setting_once(classes):
    assert all_settings() == BUILT_IN_SETTINGS


def test_unknown_and_clashing_tasks_are_refused():
    with pytest.raises(
        ValueError,
        match=r"'ranking' is not a task; the tasks are classification, regression, multiclass",
    ):
        get_task("ranking")
    with pytest.raises(ValueError, match="is not a task"):
        get_task(None)
    with pytest.raises(ValueError, match="'regression' is already registered"):
        scoring.register_task(type("Again", (Classes,), {"name": "regression"})())
    fallback = type("Fallback", (Classes,), {"name": "other", "inference": Inference()})()
    with pytest.raises(ValueError, match="regression is already the task inferred"):
        scoring.register_task(fallback)
    assert list(TASKS) == ["classification", "regression", "multiclass"]


def test_a_task_reports_nothing_beside_its_losses_and_resolves_no_option_by_default(classes):
    result = evaluate(PREDICTIONS, TARGETS, task="classes")
    assert result.reported == {}
    options = scoring.ScoringOptions()
    assert classes.resolve_options(PREDICTIONS, options, path="p") is options
