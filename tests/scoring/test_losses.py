"""scoring.losses: the registry the site builds its columns from, and the n/a rules."""

import dataclasses
import math

import numpy as np
import pytest

from scoring import (
    LOSSES,
    Context,
    Loss,
    ScoringOptions,
    Task,
    by_legacy_number,
    default_ranking_loss,
    evaluate,
    find_loss,
    get_loss,
    get_task,
    loss_names,
    losses_for,
    register,
)
from scoring.losses import compute_scores, compute_terms, format_value
from scoring.plugins import is_plugin

from .util import arr, lines_of


def test_the_registered_losses_in_display_order():
    # (Plug-ins installed in this environment, e.g. plugins/floorlog, come after these.)
    assert [loss.name for loss in losses_for("classification") if not is_plugin(loss)] == [
        "nlp",
        "01l",
        "lift",
        "brier",
        "ece",
        "rauc",
        "aurc",
    ]
    regression = ["nlpd", "nmse", "crps", "rauc", "wis"]
    assert [loss.name for loss in losses_for(Task.REGRESSION) if not is_plugin(loss)] == regression
    names = ["nlp", "01l", "lift", "brier", "ece", "rauc", "aurc", "nlpd", "nmse", "crps"]
    assert loss_names()[: len(names)] == names  # the binary task first, then regression


def test_the_registry_is_keyed_by_task_and_name():
    for (task, name), loss in LOSSES.items():
        assert (task, name) == (loss.task, loss.name)
        assert get_loss(task, name) is loss and find_loss(task, name) is loss
    assert get_loss(Task.CLASSIFICATION, "nlp") is LOSSES[("classification", "nlp")]
    assert set(loss_names()) == {name for _, name in LOSSES}
    assert len(loss_names()) == len(set(loss_names()))


def test_a_loss_of_another_task_is_not_found():
    assert find_loss("regression", "nlp") is None
    assert find_loss("classification", "crps") is None
    message = r"the regression task has no loss 'nlp'; its losses are nlpd, nmse, crps"
    with pytest.raises(ValueError, match=message):
        get_loss("regression", "nlp")
    with pytest.raises(ValueError, match="'ranking' is not a task"):
        find_loss("ranking", "nlp")


def test_point_losses_and_probabilistic_losses():
    for task, expected in (("classification", ["01l"]), ("regression", ["nmse"])):
        assert [loss.name for loss in losses_for(task) if not loss.probabilistic] == expected


def test_legacy_numbers_of_the_2006_evaluate_py():
    assert [by_legacy_number(k).name for k in (1, 2, 3, 4)] == ["nlpd", "nmse", "nlp", "01l"]
    assert by_legacy_number(0) is None and by_legacy_number(5) is None


def test_every_loss_describes_itself():
    for loss in LOSSES.values():
        assert loss.title and loss.reference and loss.description
        assert get_task(loss.task).name == loss.task


def test_registering_twice_is_refused():
    nlp = get_loss("classification", "nlp")
    with pytest.raises(ValueError, match="the classification task already has a loss named 'nlp'"):
        register(**{f.name: getattr(nlp, f.name) for f in dataclasses.fields(Loss)})
    assert get_loss("classification", "nlp") is nlp


def test_the_same_name_may_serve_two_tasks():
    # A regression "brier" beside the binary one: a different loss under the same name.
    loss = register(
        name="brier",
        title="Brier of a regression",
        task=Task.REGRESSION,
        probabilistic=True,
        compute=lambda c: 0.0,
    )
    try:
        assert get_loss("regression", "brier") is loss
        assert get_loss("classification", "brier") is not loss
        assert loss_names().count("brier") == 1
    finally:
        del LOSSES[("regression", "brier")]
    assert find_loss("regression", "brier") is None


def test_losses_are_registered_with_keywords_only():
    with pytest.raises(TypeError):
        register(get_loss("classification", "nlp"))
    with pytest.raises(TypeError):
        Loss("mae", "Mean absolute error", Task.REGRESSION, False, lambda c: 0.0)


@pytest.mark.parametrize(
    "fields, message",
    [
        ({"legacy_number": 3}, "legacy number 3"),
        ({"default_ranking": True}, "default ranking loss"),
        ({"terms": lambda c: c.p, "terms_key": "brier"}, "terms named 'brier'"),
    ],
)
def test_a_loss_that_would_clash_is_refused(fields, message):
    with pytest.raises(ValueError, match=message):
        register(
            name="other",
            title="Other",
            task=Task.CLASSIFICATION,
            probabilistic=True,
            compute=lambda c: 0.0,
            **fields,
        )
    assert find_loss("classification", "other") is None


def test_log_scale_and_default_ranking_losses():
    for task, expected in (("classification", "nlp"), ("regression", "nlpd")):
        assert [loss.name for loss in losses_for(task) if loss.log_scale] == [expected]
        assert default_ranking_loss(task) is get_loss(task, expected)
    assert get_loss("regression", "nmse").terms_key == "se"
    assert get_loss("regression", "crps").terms_key == "crps"
    lift = get_loss("classification", "lift")
    assert lift.terms is None and lift.terms_key == ""


def test_a_new_loss_is_computed_with_no_other_change():
    loss = register(
        name="max_abs_error",
        title="Largest absolute error",
        task=Task.REGRESSION,
        probabilistic=False,
        compute=lambda c: float(np.max(np.abs(c.rows.stats.mean - c.targets))),
    )
    assert LOSSES[("regression", "max_abs_error")] is loss and loss.task is Task.REGRESSION
    try:
        result = evaluate(lines_of(["1 1 1", "1 5 2"]), arr(0.0, 1.0))
        assert result.scores["max_abs_error"] == 4.0
        assert list(result.scores) == ["nlpd", "nmse", "crps", "rauc", "max_abs_error"]
    finally:
        del LOSSES[("regression", "max_abs_error")]
    assert "max_abs_error" not in evaluate(lines_of(["1 1 1"]), arr(0.0)).scores


def test_compute_scores_blanks_probabilistic_losses_of_a_point_file():
    ctx = Context(Task.CLASSIFICATION, arr(1, -1, 1), ScoringOptions(), p=arr(1, 0, 0))
    assert compute_scores(ctx) == {
        "nlp": None,
        "01l": pytest.approx(1 / 3),
        "lift": None,
        "brier": None,
        "ece": None,
        "rauc": None,
        "aurc": None,
        "floorlog": None,  # the example plug-in's (plugins/floorlog), probabilistic
    }
    # One p strictly between 0 and 1 makes the file probabilistic: every loss is reported.
    ctx = Context(Task.CLASSIFICATION, arr(1, -1, 1), ScoringOptions(), p=arr(0, 0, 0.5))
    scores = compute_scores(ctx)
    assert scores["nlp"] == math.inf and scores["brier"] == pytest.approx(1.25 / 3)
    assert None not in scores.values()


def test_format_value():
    assert format_value(None) == "n/a"
    assert format_value(math.inf) == "inf"
    assert format_value(-math.inf) == "-inf"
    assert format_value(0.1 + 0.2) == "0.30000000000000004"
    assert format_value(np.float64(1.0)) == "1.0"
    assert float(format_value(1 / 3)) == 1 / 3
    assert format_value(-0.0) == format_value(np.float64(-0.0)) == format_value(0.0) == "0.0"


# --- Losses that apply only under some options (Loss.applies; spec §8's wis) -------------

LEVELS = ScoringOptions(quantile_levels=(0.1, 0.5, 0.9))


def test_losses_for_without_options_lists_every_loss_and_with_options_those_that_apply():
    every = [loss.name for loss in losses_for("regression")]
    plain = [loss.name for loss in losses_for("regression", ScoringOptions())]
    levelled = [loss.name for loss in losses_for("regression", LEVELS)]
    assert "wis" in every and "wis" in levelled and "wis" not in plain
    assert [name for name in every if name != "wis"] == plain
    assert levelled == every  # (in the registry's order either way)
    assert get_loss("regression", "wis").applies_under(None)
    assert not get_loss("regression", "wis").applies_under(ScoringOptions())
    assert get_loss("regression", "nlpd").applies_under(ScoringOptions())


def test_a_loss_that_does_not_apply_is_neither_scored_nor_given_terms():
    pred, target = b"1 0 1\n1 1 4\n", b"0.5\n1\n"
    plain = evaluate(pred, target, task="regression")
    assert "wis" not in plain.scores and "wis" not in plain.terms() and plain.reported == {}
    levelled = evaluate(pred, target, task="regression", options=LEVELS)
    assert "wis" in levelled.scores and "wis" in levelled.terms()
    assert set(levelled.reported) == {"cov80"}
    assert compute_scores(levelled.context) == levelled.scores
    assert np.mean(compute_terms(levelled.context)["wis"]) == levelled.scores["wis"]


def test_applies_is_asked_of_the_options_a_context_holds():
    asked = []

    def applies(options):
        asked.append(options)
        return options.log_base == 2

    loss = register(
        name="only_bits",
        title="Only in bits",
        task="classification",
        probabilistic=False,
        compute=lambda c: 1.0,
        applies=applies,
    )
    try:
        nats = evaluate(b"0.5\n", b"1\n", task="classification")
        bits = evaluate(b"0.5\n", b"1\n", task="classification", options=ScoringOptions(log_base=2))
        assert "only_bits" not in nats.scores and bits.scores["only_bits"] == 1.0
        assert asked and all(isinstance(o, ScoringOptions) for o in asked)
        assert loss in losses_for("classification") and loss not in losses_for(
            "classification", ScoringOptions()
        )
    finally:
        del LOSSES[(loss.task, loss.name)]


def _large_multiclass_evaluation(seed: int = 3, n: int = 120_000, classes: int = 10):
    rng = np.random.default_rng(seed)
    logits = rng.normal(0, 2.0, (n, classes))
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    y = rng.integers(0, classes, n)
    text = "\n".join(" ".join(f"{x:.6g}" for x in row) for row in p).encode() + b"\n"
    targets = "\n".join(map(str, y)).encode() + b"\n"
    return evaluate(text, targets, task="multiclass", options=ScoringOptions(classes=classes))


def test_a_large_multiclass_file_s_retention_is_computed_ahead_with_the_same_scores(
    monkeypatch,
):
    import threading

    from scoring import selective
    from scoring.tasks.multiclass import MulticlassClassification

    threads = []
    original = selective.retention_of

    def spy(ctx):
        threads.append(threading.current_thread())
        return original(ctx)

    monkeypatch.setattr(selective, "retention_of", spy)
    ahead = _large_multiclass_evaluation()
    # The steps started ahead ran off the calling thread, and the losses that needed them
    # took their value (once: a memo computed by one thread is waited for by the other).
    assert threads and threads[0] is not threading.main_thread()
    monkeypatch.setattr(MulticlassClassification, "ahead", lambda self, ctx: [])
    threads.clear()
    inline = _large_multiclass_evaluation()
    assert threads == [threading.main_thread()] * len(threads)
    assert ahead.scores == inline.scores
    assert not math.isnan(ahead.scores["rauc"])


def test_a_plug_in_s_terms_join_the_work_ahead_of_a_large_file(monkeypatch):
    import threading

    from scoring import plugins

    seen = []

    def terms(view):
        seen.append(threading.current_thread())
        p_true = view.probs[np.arange(view.targets.size), view.targets.astype(np.intp)]
        return -np.log(np.maximum(p_true, 0.5))

    saved = dict(LOSSES), dict(plugins.PLUGINS)
    try:
        plugins.register_loss(
            "halflog", task="multiclass", title="Half log", reference="a test", terms=terms
        )
        ahead = _large_multiclass_evaluation()
        assert len(seen) == 1 and seen[0] is not threading.main_thread()
        small = _large_multiclass_evaluation(n=2_000)  # (too small to work ahead)
        assert seen[1:] == [threading.main_thread()]
    finally:
        LOSSES.clear()
        LOSSES.update(saved[0])
        plugins.PLUGINS.clear()
        plugins.PLUGINS.update(saved[1])
    rows = ahead.context.multiclass
    expected = -np.log(
        np.maximum(rows.probs[np.arange(rows.n), ahead.context.targets.astype(int)], 0.5)
    )
    assert ahead.scores["halflog"] == pytest.approx(expected.mean(), rel=1e-12)
    assert "halflog" in small.scores


def test_memo_computes_once_across_threads_and_again_after_an_error():
    import threading
    import time

    ctx = Context("classification", np.array([1.0]), ScoringOptions(), p=np.array([0.5]))
    calls = []

    def slow():
        calls.append(1)
        time.sleep(0.05)
        return len(calls)

    results = []
    workers = [
        threading.Thread(target=lambda: results.append(ctx.memo("k", slow))) for _ in range(4)
    ]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert results == [1, 1, 1, 1] and calls == [1]

    attempts = []

    def flaky():
        attempts.append(1)
        if len(attempts) == 1:
            raise RuntimeError("first time")
        return "second"

    with pytest.raises(RuntimeError):
        ctx.memo("f", flaky)
    assert ctx.memo("f", flaky) == "second" and len(attempts) == 2


def test_a_step_run_ahead_that_fails_is_raised_only_where_a_loss_needs_it(monkeypatch):
    from scoring import losses

    ran = []

    def failing():
        ran.append(1)
        raise ValueError("not needed")

    with losses._ahead([failing]):
        pass
    assert ran == [1]  # (run, waited for, its error dropped: no loss asked for it)
