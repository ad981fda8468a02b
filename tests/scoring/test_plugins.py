"""Losses from other packages (spec §9): the entry-point group, the view, the checks.

The example plug-in (plugins/floorlog, installed by requirements-test.txt) is the real
thing; the failing and clashing ones are distributions written to a temporary folder
(a ``*.dist-info`` with its ``entry_points.txt``, which importlib.metadata finds on the
path as it finds an installed one).
"""

import math
import os
import subprocess
import sys
import textwrap
from importlib import metadata
from pathlib import Path

import numpy as np
import pytest

import scoring
from scoring import ScoringOptions, evaluate, plugins
from scoring.losses import LOSSES

from .util import lines_of

ROOT = Path(__file__).resolve().parents[2]
LN_FLOOR = -math.log(1e-3)


@pytest.fixture
def registry():
    """The loss registry as it was, restored after the test (a test registers its own)."""
    losses, origins = dict(LOSSES), dict(plugins.PLUGINS)
    yield
    LOSSES.clear()
    LOSSES.update(losses)
    plugins.PLUGINS.clear()
    plugins.PLUGINS.update(origins)


def fake_distribution(folder: Path, name: str, module: str, source: str, entry: str) -> Path:
    """An installed distribution ``name`` whose module ``module`` is ``source`` and whose
    entry point in the group scoring.losses is ``entry`` ("epname = module:function")."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{module}.py").write_text(textwrap.dedent(source))
    info = folder / f"{name.replace('-', '_')}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[scoring.losses]\n{entry}\n")
    return folder


def entry_points_in(folder: Path) -> list[metadata.EntryPoint]:
    return [
        entry
        for dist in metadata.distributions(path=[str(folder)])
        for entry in dist.entry_points.select(group=plugins.GROUP)
    ]


def load_from(folder: Path, monkeypatch) -> list[scoring.Loss]:
    monkeypatch.syspath_prepend(str(folder))
    return plugins.load(entry_points_in(folder))


def run(args, *, extra_path: Path | None = None, cwd=ROOT):
    path = [str(ROOT)] + ([str(extra_path)] if extra_path else [])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path)}
    return subprocess.run(
        [sys.executable, *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=120,
    )


# --- The example plug-in, installed ----------------------------------------------------


def test_the_installed_example_registers_its_loss_for_both_classification_tasks():
    for task in ("classification", "multiclass"):
        loss = scoring.get_loss(task, "floorlog")
        assert plugins.origin_of(loss) == plugins.Origin("scoring-floorlog", "floorlog")
        assert loss.title == "Floored log score" and "Good" in loss.reference
        assert loss.probabilistic and loss.terms_key == "floorlog"
        # After every built-in loss of the task: the registry's order is the columns'.
        assert scoring.losses_for(task)[-1] is loss
    assert scoring.find_loss("regression", "floorlog") is None
    assert not plugins.is_plugin(scoring.get_loss("classification", "nlp"))


def test_a_binary_file_gets_the_floored_log_score_by_hand(tmp_path):
    p = ["0.9", "0.2", "0", "0.7", "1"]
    t = ["1", "-1", "1", "1", "-1"]
    (tmp_path / "p.txt").write_bytes(lines_of(p))
    (tmp_path / "t.txt").write_bytes(lines_of(t))
    result = evaluate(tmp_path / "p.txt", tmp_path / "t.txt")
    # −ln 0.9, −ln 0.8, then two floored zeros (ln 1000 each), −ln 0.7.
    terms = [-math.log(0.9), -math.log(0.8), LN_FLOOR, -math.log(0.7), LN_FLOOR]
    assert result.scores["floorlog"] == pytest.approx(math.fsum(terms) / 5, rel=1e-15)
    assert result.scores["nlp"] == math.inf  # the unfloored log score
    assert result.terms()["floorlog"] == pytest.approx(terms, rel=1e-15)


def test_a_multiclass_file_and_its_ensemble_rows_get_it_from_the_averaged_probabilities(tmp_path):
    # Row 2 is an ensemble of two members: (0.5, 0.5, 0) and (0.1, 0.1, 0.8) average to
    # (0.3, 0.3, 0.4); row 3 gives its true class 0.
    (tmp_path / "p.txt").write_bytes(lines_of(["0.2 0.5 0.3", "0.5 0.5 0 0.1 0.1 0.8", "1 0 0"]))
    (tmp_path / "t.txt").write_bytes(lines_of(["1", "2", "2"]))
    options = ScoringOptions(classes=3)
    result = evaluate(tmp_path / "p.txt", tmp_path / "t.txt", task="multiclass", options=options)
    want = (-math.log(0.5) - math.log(0.4) + LN_FLOOR) / 3
    assert result.scores["floorlog"] == pytest.approx(want, rel=1e-15)


def test_a_non_probabilistic_file_has_it_not_applicable(tmp_path):
    (tmp_path / "p.txt").write_bytes(lines_of(["1", "0", "1"]))
    (tmp_path / "t.txt").write_bytes(lines_of(["1", "-1", "-1"]))
    result = evaluate(tmp_path / "p.txt", tmp_path / "t.txt")
    assert result.scores["floorlog"] is None and result.scores["01l"] == pytest.approx(1 / 3)


def test_the_command_line_prints_it_like_a_built_in_loss(tmp_path):
    (tmp_path / "p.txt").write_bytes(lines_of(["0.9", "0.2", "0", "0.7"]))
    (tmp_path / "t.txt").write_bytes(lines_of(["1", "-1", "1", "1"]))
    want = (-math.log(0.9) - math.log(0.8) + LN_FLOOR - math.log(0.7)) / 4
    every = run(["-m", "scoring", "evaluate", tmp_path / "p.txt", tmp_path / "t.txt"])
    assert every.returncode == 0 and every.stderr == ""
    lines = dict(line.split(" ") for line in every.stdout.splitlines())
    assert float(lines["floorlog"]) == pytest.approx(want, rel=1e-15)
    one = run(["-m", "scoring", "evaluate", tmp_path / "p.txt", tmp_path / "t.txt", "floorlog"])
    assert one.returncode == 0 and one.stdout == lines["floorlog"] + "\n"


# --- register_loss and the view -----------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "fields", "message"),
    [
        ("Bad", {}, "a loss name matches [a-z][a-z0-9_]{0,31}, found 'Bad'"),
        ("a" * 33, {}, "a loss name matches"),
        ("x-y", {}, "a loss name matches"),
        ("fine", {"task": "ranking"}, "task must be one of classification, regression, multiclass"),
        ("fine", {"title": " "}, "loss 'fine': title must be a non-empty string"),
        ("fine", {"reference": ""}, "loss 'fine': reference must be a non-empty string"),
        ("fine", {"terms": 3}, "loss 'fine': terms must be callable, found 3"),
        ("nlp", {}, "loss 'nlp' clashes with the built-in classification loss 'nlp'"),
        ("crps", {}, "loss 'crps' clashes with the built-in regression loss 'crps'"),
        (
            "floorlog",
            {"task": "regression"},
            "with the classification loss of plug-in 'floorlog' of",
        ),
    ],
)
def test_register_loss_refuses_wrong_arguments_and_taken_names(registry, name, fields, message):
    arguments = {
        "task": "classification",
        "title": "T",
        "reference": "R",
        "terms": lambda view: view.p,
        **fields,
    }
    with pytest.raises(ValueError) as caught:
        plugins.register_loss(name, **arguments)
    assert message in str(caught.value)
    assert scoring.find_loss("classification", "fine") is None


def test_the_view_is_read_only_and_holds_the_task_s_fields_only(registry, tmp_path):
    seen = {}

    def terms(view):
        seen["targets"], seen["p"] = view.targets.copy(), view.p.copy()
        with pytest.raises(ValueError, match="read-only"):
            view.p[0] = 0.5
        with pytest.raises(ValueError, match="read-only"):
            view.targets[0] = 0.0
        with pytest.raises(AttributeError, match="a classification file has no 'probs'"):
            _ = view.probs
        with pytest.raises(AttributeError, match="no 'mean'"):
            _ = view.mean
        return np.zeros(view.n)

    plugins.register_loss("peek", task="classification", title="T", reference="R", terms=terms)
    (tmp_path / "p.txt").write_bytes(lines_of(["0.25", "0.75"]))
    (tmp_path / "t.txt").write_bytes(lines_of(["-1", "1"]))
    result = evaluate(tmp_path / "p.txt", tmp_path / "t.txt")
    assert result.scores["peek"] == 0.0
    assert seen["targets"].dtype == np.float64 and seen["targets"].tolist() == [-1.0, 1.0]
    assert seen["p"].tolist() == [0.25, 0.75]
    assert result.scores["brier"] == pytest.approx((0.25**2 + 0.25**2) / 2)  # p untouched


def test_a_regression_view_reads_the_mean_cdf_and_quantiles_of_every_row_type(registry, tmp_path):
    seen = {}

    def terms(view):
        seen["targets"] = view.targets.copy()
        seen["mean"] = view.mean.copy()
        seen["cdf"] = view.cdf(view.targets).copy()
        seen["median"] = view.quantile(0.5).copy()
        return np.abs(view.targets - view.quantile(0.5))

    plugins.register_loss("absmed", task="regression", title="T", reference="R", terms=terms)
    # A Gaussian N(1, 4); quantiles with a median of 2 (linear CDF between them); a sample
    # {0, 1, 1, 5} (the empirical CDF; the median as §8 reads a sample).
    rows = ["1 1 4", "0 0.25 1 0.5 2 0.75 3", "2 0 1 1 5"]
    (tmp_path / "p.txt").write_bytes(lines_of(rows))
    (tmp_path / "t.txt").write_bytes(lines_of(["1", "2.5", "1"]))
    result = evaluate(tmp_path / "p.txt", tmp_path / "t.txt", task="regression")
    assert seen["mean"][0] == 1.0 and seen["mean"][2] == 1.75
    assert seen["cdf"][0] == pytest.approx(0.5, rel=1e-15)
    assert seen["cdf"][1] == pytest.approx(0.625, rel=1e-12)  # halfway from 0.5 to 0.75
    assert seen["cdf"][2] == 0.75  # #{s ≤ 1}/4
    assert seen["median"].tolist() == [1.0, 2.0, 1.0]
    assert result.terms()["absmed"].tolist() == [0.0, 0.5, 0.0]
    assert result.scores["absmed"] == 0.5 / 3


def test_the_view_refuses_cdf_arguments_of_another_length_and_levels_outside_0_1(registry):
    rows = scoring.baseline(np.array([0.0, 1.0]), np.array([0.0, 1.0, 2.0]), task="regression")
    errors = []

    def terms(view):
        for call in (lambda: view.cdf(np.zeros(2)), lambda: view.quantile(1.0)):
            with pytest.raises(ValueError) as caught:
                call()
            errors.append(str(caught.value))
        return np.zeros(view.n)

    plugins.register_loss("probe", task="regression", title="T", reference="R", terms=terms)
    ctx = rows.context
    assert scoring.get_loss("regression", "probe").compute(ctx) == 0.0
    assert errors == [
        "cdf takes 3 values, one per example; got shape (2,)",
        "a quantile level is in (0, 1), found 1.0",
    ]


@pytest.mark.parametrize(
    ("returned", "message"),
    [
        (np.array([1.0, np.nan, 2.0]), "terms(view) returned nan for example 2"),
        (np.array([1.0, 2.0, -np.inf]), "terms(view) returned -inf for example 3"),
        (np.array([1.0, 2.0]), "terms(view) returned shape (2,), expected (3,)"),
        (np.ones((3, 1)), "terms(view) returned shape (3, 1), expected (3,)"),
        ("abc", "terms(view) did not return numbers"),
    ],
)
def test_wrong_terms_are_an_error_naming_the_plug_in_not_the_file(registry, returned, message):
    plugins.register_loss(
        "wrong", task="classification", title="T", reference="R", terms=lambda view: returned
    )
    source = lines_of(["0.5", "0.5", "0.25"])
    with pytest.raises(ValueError) as caught:
        evaluate(source, np.array([1.0, -1.0, 1.0]), task="classification")
    text = str(caught.value)
    assert text.startswith("loss 'wrong' (a register_loss call outside any plug-in): ")
    assert message in text


def test_plus_infinity_is_a_term_and_the_mean_is_exact_where_terms_cancel(registry):
    terms = {
        "infinite": np.array([1.0, np.inf, 0.0]),
        "cancels": np.array([1e17, 1.0, -1e17]),
        "huge": np.array([1.5e308, 1.5e308, 0.0]),
    }
    for name, values in terms.items():
        plugins.register_loss(
            name, task="classification", title="T", reference="R", terms=lambda v, t=values: t
        )
    result = evaluate(lines_of(["0.5"] * 3), np.array([1.0, -1.0, 1.0]), task="classification")
    assert result.scores["infinite"] == math.inf
    assert result.scores["cancels"] == 1 / 3  # np.mean gives 0.0
    assert result.scores["huge"] == 1e308  # the sum overflows, the mean does not
    assert result.terms()["cancels"].tolist() == [1e17, 1.0, -1e17]


# --- Loading entry points: clashes and failures stop the start ---------------------------


def test_a_plug_in_clashing_with_a_built_in_loss_is_refused_by_distribution_and_entry_point(
    registry, tmp_path, monkeypatch
):
    folder = fake_distribution(
        tmp_path,
        "acme-losses",
        "acme_losses",
        """
        import scoring

        def register():
            scoring.register_loss(
                "acme", task="classification", title="A", reference="R", terms=lambda v: v.p
            )
            scoring.register_loss(
                "nlpd", task="classification", title="B", reference="R", terms=lambda v: v.p
            )
        """,
        "acme = acme_losses:register",
    )
    with pytest.raises(plugins.PluginError) as caught:
        load_from(folder, monkeypatch)
    assert str(caught.value) == (
        "plug-in 'acme' of distribution 'acme-losses' (acme_losses:register) failed to load: "
        "ValueError: loss 'nlpd' clashes with the built-in regression loss 'nlpd'"
    )
    # The plug-in's first loss went again with it.
    assert scoring.find_loss("classification", "acme") is None


def test_two_plug_ins_with_one_name_clash_naming_both(registry, tmp_path, monkeypatch):
    folder = fake_distribution(
        tmp_path,
        "other-losses",
        "other_losses",
        """
        from scoring import register_loss

        def register():
            register_loss("floorlog", task="multiclass", title="A", reference="R",
                          terms=lambda v: v.probs[:, 0])
        """,
        "again = other_losses:register",
    )
    with pytest.raises(plugins.PluginError) as caught:
        load_from(folder, monkeypatch)
    assert str(caught.value) == (
        "plug-in 'again' of distribution 'other-losses' (other_losses:register) failed to "
        "load: ValueError: loss 'floorlog' clashes with the classification loss of plug-in "
        "'floorlog' of distribution 'scoring-floorlog'"
    )


def test_a_plug_in_that_fails_to_import_is_named(registry, tmp_path, monkeypatch):
    folder = fake_distribution(
        tmp_path,
        "broken-losses",
        "broken_losses",
        "import numpy\nraise RuntimeError('no GPU found')\n",
        "broken = broken_losses:register",
    )
    with pytest.raises(plugins.PluginError) as caught:
        load_from(folder, monkeypatch)
    assert str(caught.value) == (
        "plug-in 'broken' of distribution 'broken-losses' (broken_losses:register) failed to "
        "load: RuntimeError: no GPU found"
    )


def test_a_good_plug_in_loads_and_is_scored(registry, tmp_path, monkeypatch):
    folder = fake_distribution(
        tmp_path,
        "abs-losses",
        "abs_losses",
        """
        import numpy as np
        from scoring import register_loss

        def register():
            register_loss("absmean", task="regression", title="Absolute error of the mean",
                          reference="Laplace (1774)", terms=lambda v: np.abs(v.targets - v.mean),
                          probabilistic=False)
        """,
        "absmean = abs_losses:register",
    )
    (loss,) = load_from(folder, monkeypatch)
    assert plugins.origin_of(loss) == plugins.Origin("abs-losses", "absmean")
    result = evaluate(lines_of(["1 1 2", "1 5 1"]), np.array([0.0, 2.0]), task="regression")
    assert result.scores["absmean"] == 2.0
    point = evaluate(lines_of(["1 1 0", "1 5 0"]), np.array([0.0, 2.0]), task="regression")
    assert point.scores["absmean"] == 2.0 and point.scores["nlpd"] is None


BROKEN = """
import scoring

def register():
    scoring.register_loss("nlp", task="multiclass", title="T", reference="R", terms=len)
"""


def test_the_command_line_stops_naming_the_plug_in(tmp_path):
    folder = fake_distribution(
        tmp_path / "site", "clash-losses", "clash_losses", BROKEN, "dup = clash_losses:register"
    )
    (tmp_path / "p.txt").write_bytes(lines_of(["0.5"]))
    (tmp_path / "t.txt").write_bytes(lines_of(["1"]))
    proc = run(
        ["-m", "scoring", "evaluate", tmp_path / "p.txt", tmp_path / "t.txt"], extra_path=folder
    )
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr == (
        "scoring: plug-in 'dup' of distribution 'clash-losses' (clash_losses:register) failed "
        "to load: ValueError: loss 'nlp' clashes with the built-in classification loss 'nlp'\n"
    )


def test_the_site_does_not_start_with_a_failing_plug_in(tmp_path):
    folder = fake_distribution(
        tmp_path / "site", "clash-losses", "clash_losses", BROKEN, "dup = clash_losses:register"
    )
    proc = run([ROOT / "manage.py", "check"], extra_path=folder)
    assert proc.returncode == 1
    assert proc.stderr.endswith(
        "scoring: plug-in 'dup' of distribution 'clash-losses' (clash_losses:register) failed "
        "to load: ValueError: loss 'nlp' clashes with the built-in classification loss 'nlp'\n"
    )
    assert "Traceback" not in proc.stderr
