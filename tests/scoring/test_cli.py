"""``python -m scoring evaluate PRED TARGETS [LOSS]`` (spec §4), run as participants run it."""

import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from scoring import ScoringOptions, evaluate
from scoring.cli import main

from .util import lines_of

ROOT = Path(__file__).resolve().parents[2]


def run(*args, cwd=None):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "scoring", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd or ROOT,
        env=env,
        timeout=60,
    )


@pytest.fixture
def files(tmp_path):
    def write(name, rows):
        path = tmp_path / name
        path.write_bytes(lines_of(rows) if isinstance(rows, list) else rows)
        return path

    return write


def parse_output(stdout):
    out = {}
    for line in stdout.splitlines():
        name, value = line.split(" ")
        out[name] = value
    return out


def test_all_losses_of_a_classification_file(files):
    pred = files("p.txt", ["0.9", "0.2", "0.5", "0"])
    targ = files("t.txt", ["1", "-1", "-1", "-1"])
    proc = run("evaluate", pred, targ)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    shown = parse_output(proc.stdout)
    # floorlog: the example plug-in's loss (plugins/floorlog, spec §9), after the built-ins.
    assert list(shown) == ["nlp", "01l", "lift", "brier", "ece", "rauc", "aurc", "floorlog"]
    want = evaluate(pred, targ).scores
    # repr precision: the printed text reads back to the very same float.
    assert {k: float(v) for k, v in shown.items()} == want
    assert shown["nlp"] == repr(want["nlp"])
    assert shown["01l"] == "0.25"


def test_regression_file_with_inf_and_na(files):
    pred = files("p.txt", ["1 0 0", "2 1 2 3", "0 0.2 -2 0.3 -1 0.8 1 0.9 3"])
    targ = files("t.txt", ["0.5", "1", "0"])
    proc = run("evaluate", pred, targ)
    assert proc.returncode == 0, proc.stderr
    shown = parse_output(proc.stdout)
    assert shown["nlpd"] == "n/a"  # a sample row
    assert float(shown["crps"]) == evaluate(pred, targ).scores["crps"]
    proc = run("evaluate", files("q.txt", ["1 0 0", "1 1 1"]), files("u.txt", ["0.5", "1"]))
    assert parse_output(proc.stdout)["nlpd"] == "inf"
    proc = run("evaluate", files("c.txt", ["0", "0.5"]), files("d.txt", ["1", "1"]))
    # rauc, aurc: the sure p = 0 is wrong, E = 1, 1.
    assert proc.stdout.splitlines() == [
        *("nlp inf", "01l 0.5", "lift n/a", "brier 0.625", "ece 0.75"),
        *("rauc 0.5", "aurc 0.75"),
        f"floorlog {(math.log(1000) + math.log(2)) / 2!r}",  # the sure 0 floored at 0.001
    ]


@pytest.mark.parametrize(
    "loss, name",
    [
        ("1", "nlpd"),
        ("2", "nmse"),
        ("3", "nlp"),
        ("4", "01l"),
        ("crps", "crps"),
        ("nmse", "nmse"),
        ("ece", "ece"),
    ],
)
def test_one_loss_by_name_or_number_prints_only_its_value(files, loss, name):
    if name in ("nlp", "01l", "ece"):
        pred, targ = files("p.txt", ["0.9", "0.3", "0.6"]), files("t.txt", ["1", "-1", "-1"])
    else:
        pred, targ = (
            files("p.txt", ["1 0.5 2", "1 -1 0.5", "0 0.1 0 0.9 3"]),
            files("t.txt", ["0", "1", "2.5"]),
        )
    code = main(["evaluate", str(pred), str(targ), loss])
    assert code == 0
    proc = run("evaluate", pred, targ, loss)
    assert proc.returncode == 0 and proc.stderr == ""
    assert proc.stdout == repr(evaluate(pred, targ).scores[name]) + "\n"


def test_loss_number_prints_n_a(files):
    proc = run("evaluate", files("p.txt", ["1", "0"]), files("t.txt", ["1", "1"]), "3")
    assert proc.stdout == "n/a\n"
    proc = run("evaluate", files("p.txt", ["1", "0"]), files("t.txt", ["1", "1"]), "4")
    assert proc.stdout == "0.5\n"


def test_log_base(files):
    pred, targ = files("p.txt", ["0.5"] * 4), files("t.txt", ["1", "-1", "1", "-1"])
    assert float(run("evaluate", pred, targ, "nlp", "--log-base", "10").stdout) == pytest.approx(
        math.log10(2), rel=1e-15
    )
    assert run("evaluate", pred, targ, "nlp", "--log-base", "2").stdout == "1.0\n"
    bad = run("evaluate", pred, targ, "--log-base", "1")
    assert bad.returncode != 0 and "log base" in bad.stderr and bad.stdout == ""


def test_task_inference_and_override(capsys, files):
    targ = files("t.txt", ["1", "-1"])
    pred = files("p.txt", ["1 0.5 1", "1 -0.5 1"])
    assert main(["evaluate", str(pred), str(targ)]) == 0
    assert [line.split()[0] for line in capsys.readouterr().out.splitlines()] == [
        "nlpd",
        "nmse",
        "crps",
        "rauc",
    ]
    single = files("s.txt", ["0.5", "0.25"])
    assert main(["evaluate", str(single), str(targ)]) == 0
    assert capsys.readouterr().out.splitlines()[0].startswith("nlp ")
    # --task regression: the single numbers are now bad rows.
    assert main(["evaluate", str(single), str(targ), "--task", "regression"]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.splitlines()[0].startswith(f"{single}:1: expected a row type flag")
    # A loss of the other task is refused.
    assert main(["evaluate", str(single), str(targ), "nlpd"]) == 2
    assert "regression loss" in capsys.readouterr().err


def test_options_reach_the_validator(capsys, files):
    targ = files("t.txt", ["0", "1"])
    pred = files("p.txt", ["0 0.1 0.1 0.5 0.3 0.9 0.5", "2 1 2"])
    assert main(["evaluate", str(pred), str(targ)]) == 0
    capsys.readouterr()
    assert (
        main(["evaluate", str(pred), str(targ), "--min-quantile-gap", "0.25", "--no-samples"]) == 1
    )
    err = capsys.readouterr().err.splitlines()
    assert err[0] == f"{pred}:1: quantile values must be at least 0.25 apart, found 0.1 then 0.3"
    assert err[1].startswith(f"{pred}:2: sample rows ('2 s1 ... sK') are not allowed")
    # As doubles 0.3 − 0.1 is a rounding error short of 0.2 (spec §1 compares exactly).
    assert main(["evaluate", str(pred), str(targ), "--min-quantile-gap", "0.2"]) == 1
    err = capsys.readouterr().err
    assert "(as doubles 0.3 − 0.1 = 0.19999999999999998, below 0.2;" in err
    assert main(["evaluate", str(pred), str(targ), "--min-quantile-gap", "0.19"]) == 0


def test_a_bad_file_lists_every_problem_on_stderr_and_nothing_on_stdout(files):
    pred = files("pred.txt", ["0.5", "0.2,0.3", "nan", "", "1.5", "0.5"])
    targ = files("targ.txt", ["1", "-1", "1", "1", "-1", "1", "1"])
    proc = run("evaluate", pred, targ, cwd=pred.parent)
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert "Traceback" not in proc.stderr
    assert proc.stderr.splitlines() == [
        f"{pred}:2: expected numbers separated by spaces or tabs, found '0.2,0.3'",
        f"{pred}:3: expected a finite number, found 'nan'",
        f"{pred}:4: blank line before the last example; every line must hold an example "
        "(a blank line would shift the rows after it)",
        f"{pred}:5: expected a probability between 0 and 1, found 1.5",
        f"{pred}:7: expected 7 rows, one per target, found 5",  # the blank line is no row
    ]
    # Relative paths are reported as given.
    proc = run("evaluate", "pred.txt", "targ.txt", "nlp", cwd=pred.parent)
    assert proc.returncode == 1 and proc.stdout == ""
    assert (
        proc.stderr.splitlines()[0]
        == "pred.txt:2: expected numbers separated by spaces or tabs, found '0.2,0.3'"
    )


def test_a_bad_targets_file_and_binary_garbage(files):
    targ = files("t.txt", b"\x00\xff\xfe garbage")
    proc = run("evaluate", files("p.txt", ["0.5"]), targ, "--task", "classification")
    assert proc.returncode == 1 and proc.stdout == "" and "Traceback" not in proc.stderr
    assert (
        proc.stderr == f"{targ}:1: unexpected byte 0xff at column 2; expected plain ASCII numbers\n"
    )


def test_the_cap_on_stderr(files):
    pred = files("p.txt", ["7"] * 130)
    targ = files("t.txt", ["1"] * 130)
    proc = run("evaluate", pred, targ)
    lines = proc.stderr.splitlines()
    assert proc.returncode == 1 and proc.stdout == ""
    # The hint that says the fix once leads; then the 100 lines and the count of the rest.
    assert len(lines) == 102 and lines[-1] == "... and 30 more problems"
    assert lines[0].startswith(f"{pred}: values above 1 on 130 lines, and every value lies")
    assert lines[100] == f"{pred}:100: expected a probability between 0 and 1, found 7"


def test_missing_file(tmp_path, files):
    targ = files("t.txt", ["1"])
    proc = run("evaluate", tmp_path / "nope.txt", targ)
    assert proc.returncode == 1 and proc.stdout == "" and "Traceback" not in proc.stderr
    assert str(tmp_path / "nope.txt") in proc.stderr


def test_help_explains_the_formats():
    proc = run("evaluate", "--help")
    assert proc.returncode == 0
    text = proc.stdout
    for words in (
        "p(y = +1 | x)",
        "1 m v",
        "0 a1 q1 ... aN qN",
        "2 s1 ... sK",
        "save -ascii",
        "1=nlpd",
        "--log-base",
        "--task",
    ):
        assert words in text, words
    top = run("--help")
    assert top.returncode == 0 and "1 m v" in top.stdout and "evaluate" in top.stdout


def test_bad_loss_arguments():
    proc = run("evaluate", "p.txt", "t.txt", "7")
    assert proc.returncode == 2 and "1 to 4" in proc.stderr and proc.stdout == ""
    proc = run("evaluate", "p.txt", "t.txt", "mse")
    assert proc.returncode == 2 and "unknown loss 'mse'" in proc.stderr


def test_cli_agrees_with_the_library_on_random_regression_files(capsys, files):
    rng = np.random.default_rng(130)
    rows, targets = [], []
    for _ in range(50):
        kind = rng.integers(0, 2)
        if kind == 1:
            rows.append(f"1 {rng.normal()!r} {rng.uniform(0.1, 2)!r}")
        else:
            a = np.sort(rng.uniform(0.05, 0.95, 4))
            q = np.sort(rng.normal(0, 2, 4))
            rows.append(
                "0 " + " ".join(f"{float(x)!r} {float(y)!r}" for x, y in zip(a, q, strict=True))
            )
        targets.append(repr(float(rng.normal(0, 2))))
    pred, targ = files("p.txt", rows), files("t.txt", targets)
    assert main(["evaluate", str(pred), str(targ), "--log-base", "10"]) == 0
    shown = parse_output(capsys.readouterr().out)
    want = evaluate(pred, targ, options=ScoringOptions(log_base=10)).scores
    assert {k: float(v) for k, v in shown.items()} == want


# --- spec §4: options anywhere, --log-base e, the problems of both files -----------------------


def test_options_may_come_before_or_after_the_loss(files):
    pred, targ = files("p.txt", ["0.5"] * 4), files("t.txt", ["1", "-1", "1", "-1"])
    for args in (
        [pred, targ, "--log-base", "2", "3"],
        [pred, targ, "3", "--log-base", "2"],
        [pred, targ, "nlp", "--log-base", "2"],
        ["--log-base", "2", pred, targ, "nlp"],
        [pred, "--log-base", "2", targ, "--task", "classification", "3"],
    ):
        proc = run("evaluate", *args)
        assert (proc.returncode, proc.stdout, proc.stderr) == (0, "1.0\n", ""), args
    proc = run("evaluate", pred, targ, "--task", "classification", "4", "--log-base", "10")
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "0.5\n", "")
    # A loss after the options still has to be a loss.
    proc = run("evaluate", pred, targ, "--log-base", "2", "mse")
    assert proc.returncode == 2 and "unknown loss 'mse'" in proc.stderr and proc.stdout == ""


def test_log_base_e(files):
    pred, targ = files("p.txt", ["0.5"] * 4), files("t.txt", ["1", "-1", "1", "-1"])
    proc = run("evaluate", pred, targ, "nlp", "--log-base", "e")
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, f"{math.log(2)!r}\n", "")
    proc = run("evaluate", pred, targ, "--log-base", "e")
    assert proc.returncode == 0 and proc.stderr == ""
    assert proc.stdout.splitlines() == [
        f"nlp {math.log(2)!r}",
        "01l 0.5",
        "lift 1.0",
        "brier 0.25",
        "ece 0.0",
        "rauc 0.3125",  # every p tied: E(k) = k/2
        "aurc 0.5",
        f"floorlog {math.log(2)!r}",  # the example plug-in's, in nats whatever the base
    ]
    assert proc.stdout == run("evaluate", pred, targ).stdout  # e is the default
    for bad in ("x", "1", "-2", "ee"):
        proc = run("evaluate", pred, targ, "--log-base", bad)
        assert proc.returncode == 2 and proc.stdout == ""
        assert f"expected a log base: a positive number other than 1, or e, got {bad!r}" in (
            proc.stderr
        )


def test_problems_of_both_files_targets_first(files):
    pred = files("p.txt", ["0.5", "abc", "2"])
    targ = files("t.txt", ["1", "x", "-1", "", "1"])
    proc = run("evaluate", pred, targ)
    assert (proc.returncode, proc.stdout) == (1, "")
    assert proc.stderr.splitlines() == [
        f"{targ}:2: expected a number, found 'x'",
        f"{targ}:4: blank line before the last example; every line must hold an example "
        "(a blank line would shift the rows after it)",
        f"{pred}:2: expected a number, found 'abc'",
        f"{pred}:3: expected a probability between 0 and 1, found 2",
    ]  # (and no row count: the targets' count is unknown)
    # Regression predictions, known by their lines.
    pred = files("r.txt", ["1 0 1", "1 0 -1", "0 0.5 1 0.5 2"])
    proc = run("evaluate", pred, targ, "nmse")
    assert (proc.returncode, proc.stdout) == (1, "")
    assert proc.stderr.splitlines()[2:] == [
        f"{pred}:2: expected a variance of at least 0, found -1",
        f"{pred}:3: quantile levels must increase strictly (0.5 after 0.5)",
    ]
    # --task says how to read the predictions.
    pred = files("s.txt", ["0.5", "0.25"])
    proc = run("evaluate", pred, targ, "--task", "regression")
    assert (proc.returncode, proc.stdout) == (1, "")
    assert proc.stderr.splitlines()[2:] == [
        f"{pred}:{k}: expected a row type flag of 0 (quantiles), 1 (Gaussian) or 2 (sample) "
        f"first, found {v}"
        for k, v in ((1, "0.5"), (2, "0.25"))
    ]


def test_valid_predictions_with_bad_targets_report_the_targets_alone(files):
    targ = files("t.txt", ["1", "-1", "one", "1"])
    for rows in (["0.5", "0.25"], ["1 0 1", "2 0.5 1", "0 0.2 -1 0.8 1"]):
        proc = run("evaluate", files("p.txt", rows), targ)
        assert (proc.returncode, proc.stdout) == (1, "")
        assert proc.stderr == f"{targ}:3: expected a number, found 'one'\n"
    # Fewer prediction rows than target lines: with bad targets, no count is checked.
    proc = run("evaluate", files("p.txt", ["0.5"]), targ, "--task", "classification")
    assert (proc.returncode, proc.stdout) == (1, "")
    assert proc.stderr == f"{targ}:3: expected a number, found 'one'\n"


def test_bad_targets_and_unreadable_predictions(tmp_path, files):
    targ = files("t.txt", ["1", "x"])
    proc = run("evaluate", tmp_path / "nope.txt", targ)
    assert (proc.returncode, proc.stdout) == (1, "")
    assert proc.stderr.splitlines() == [
        f"{targ}:2: expected a number, found 'x'",
        f"{tmp_path / 'nope.txt'}: cannot read the file: No such file or directory",
    ]


def test_each_file_keeps_its_own_cap(files):
    pred = files("p.txt", ["7"] * 130)
    targ = files("t.txt", ["y"] * 120)
    proc = run("evaluate", pred, targ)
    lines = proc.stderr.splitlines()
    assert (proc.returncode, proc.stdout, len(lines)) == (1, "", 204)
    assert lines[0].startswith(f"{targ}: 120 lines hold text that is not a number")
    assert lines[100] == f"{targ}:100: expected a number, found 'y'"
    assert lines[101] == "... and 20 more problems"
    assert lines[102].startswith(f"{pred}: values above 1 on 130 lines")
    assert lines[103] == f"{pred}:1: expected a probability between 0 and 1, found 7"
    assert lines[-1] == "... and 30 more problems"


# --- multiclass (spec §7) -----------------------------------------------------------------

MC = ["--task", "multiclass"]


def test_multiclass_prints_the_seven_losses_then_the_ensembles_values(files):
    pred = files("p.txt", ["0.7 0.2 0.1", "0.6 0.4 0 0.2 0.8 0", "0.25 0.25 0.5"])
    targ = files("t.txt", ["0", "1", "2"])
    proc = run("evaluate", pred, targ, *MC, "--classes", "3")
    assert (proc.returncode, proc.stderr) == (0, "")
    shown = parse_output(proc.stdout)
    assert list(shown) == [
        *("nlp", "brier", "01l", "ece", "rmsce", "sce", "ace", "rauc", "aurc", "floorlog"),
        *("tu", "du", "mi"),
    ]
    want = evaluate(pred, targ, task="multiclass", options=ScoringOptions(classes=3))
    assert {k: float(v) for k, v in shown.items()} == {**want.scores, **want.reported}
    # Without ensemble rows: the losses alone; without --classes: L from the first line.
    single = files("s.txt", ["0.7 0.2 0.1", "0.1 0.8 0.1", "0.25 0.25 0.5"])
    proc = run("evaluate", single, targ, *MC)
    assert (proc.returncode, proc.stderr) == (0, "")
    assert list(parse_output(proc.stdout)) == [
        *("nlp", "brier", "01l", "ece", "rmsce", "sce", "ace", "rauc", "aurc", "floorlog")
    ]
    rmsce = evaluate(single, targ, task="multiclass").scores["rmsce"]
    assert run("evaluate", single, targ, "rmsce", *MC).stdout == f"{rmsce!r}\n"
    proc = run("evaluate", single, targ, "lift", *MC)
    assert proc.returncode == 2 and proc.stderr == (
        f"scoring: lift is a classification loss, but {single} was scored as multiclass "
        "(use --task to say otherwise)\n"
    )


def test_multiclass_files_as_tools_write_them(files):
    rows = [[0.7, 0.2, 0.1], [0.1, 0.1, 0.8], [0.25, 0.5, 0.25]]
    targ = files("t.txt", ["0", "2", "1"])
    plain = files("plain.txt", [" ".join(map(str, r)) for r in rows])
    crlf = files("crlf.txt", lines_of([" ".join(map(str, r)) for r in rows], crlf=True))
    mat = files("m.txt", ["".join(f"{v:16.7e}" for v in r) for r in rows])
    mat_targets = files("mt.txt", [f"{v:16.7e}" for v in (0, 2, 1)])
    outputs = [
        run("evaluate", p, t, *MC) for p, t in [(plain, targ), (crlf, targ), (mat, mat_targets)]
    ]
    assert all(proc.returncode == 0 and proc.stderr == "" for proc in outputs)
    assert len({proc.stdout for proc in outputs}) == 1


def test_multiclass_problems_on_stderr(files):
    pred = files("p.txt", ["0.7 0.2 0.1 0.7 0.2 0.1", "0.9 0.9 0.918", "-0.5 1 0.5", "0.5 0.5"])
    targ = files("t.txt", ["0", "1", "3", "1"])
    proc = run("evaluate", pred, targ, *MC, "--classes", "3", "--no-ensembles")
    assert (proc.returncode, proc.stdout) == (1, "")
    assert proc.stderr.splitlines() == [
        f"{targ}:3: class label 3 is outside 0..2",
        f"{pred}:1: expected 3 probabilities (one per class), found 6: is this a 2-member "
        "ensemble? this dataset does not accept ensembles",
        f"{pred}:2: probabilities sum to 2.718, not 1: are these scores or logits? apply a softmax",
        f"{pred}:3: expected probabilities between 0 and 1, found -0.5 (class 0)",
        f"{pred}:4: expected 3 probabilities (one per class), found 2",
    ]
    proc = run("evaluate", pred, files("u.txt", ["0"] * 4), *MC, "--classes", "3")
    assert proc.stderr.splitlines()[0] == (
        f"{pred}:2: probabilities sum to 2.718, not 1: are these scores or logits? apply a softmax"
    )
    for bad in ("1", "1001", "x"):
        proc = run("evaluate", pred, targ, *MC, "--classes", bad)
        assert proc.returncode == 2
        assert f"expected a number of classes from 2 to 1000, got '{bad}'" in proc.stderr


def test_check_a_multiclass_zip(tmp_path):
    good = _zip(tmp_path / "g.zip", {"cifar_val_predict.txt": b"0.5 0.5 0\n0 0 1\n"})
    args = ["--dataset", "cifar", "--task", "multiclass", "--rows", "val=2", "--classes", "3"]
    proc = run("check", good, *args)
    assert (proc.returncode, proc.stderr) == (0, "")
    twice = _zip(tmp_path / "e.zip", {"cifar_val_predict.txt": b"0.5 0.5 0 0 0 1\n0 0 1\n"})
    assert run("check", twice, *args).returncode == 0
    proc = run("check", twice, *args, "--no-ensembles")
    assert (proc.returncode, proc.stdout) == (1, "")
    assert proc.stderr == (
        "cifar_val_predict.txt:1: expected 3 probabilities (one per class), found 6: is this a "
        "2-member ensemble? this dataset does not accept ensembles\n"
    )


# --- python -m scoring check ZIP: a submission zip as the site checks it ----------------


def _zip(path, files: dict[str, bytes]):
    import zipfile

    with zipfile.ZipFile(path, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return path


def test_check_a_valid_zip(tmp_path):
    path = _zip(tmp_path / "p.zip", {"gaze_val_predict.txt": b"1 0 1\n" * 4})
    proc = run("check", path, "--dataset", "gaze", "--task", "regression", "--rows", "val=4")
    assert (proc.returncode, proc.stderr) == (0, "")
    assert proc.stdout == f"{path}: no problems found\n"


def test_check_reports_what_the_site_would(tmp_path):
    path = _zip(
        tmp_path / "p.zip",
        {"Gaze_Train_Predictions.csv": b"0.5\n", "gaze_val_predict.txt": b"1,0,1\n" * 12},
    )
    args = ["--dataset", "gaze", "--task", "regression", "--rows", "train=6,val=4,test=5"]
    proc = run("check", path, *args)
    assert (proc.returncode, proc.stdout) == (1, "")
    assert proc.stderr.splitlines() == [
        "Gaze_Train_Predictions.csv: unexpected file name; did you mean gaze_train_predict.txt?"
    ]
    path = _zip(tmp_path / "q.zip", {"gaze_val_predict.txt": b"1,0,1\n" * 12})
    lines = run("check", path, *args).stderr.splitlines()
    assert (
        lines[0]
        == "gaze_val_predict.txt: 12 lines use commas: separate numbers with spaces or tabs"
    )
    assert (
        lines[1]
        == "gaze_val_predict.txt:1: expected numbers separated by spaces or tabs, found '1,0,1'"
    )
    assert "gaze_val_predict.txt:5: expected 4 rows, one per target, found 12" in lines
    # The phase's rules, as the site words them.
    proc = run("check", path, *args, "--phase", "test", "--test-start", "2030-02-01T00:00Z")
    assert proc.stderr == (
        "the test phase needs gaze_test_predict.txt (the zip holds gaze_val_predict.txt)\n"
    )


def test_check_options_are_checked(tmp_path, capsys):
    with pytest.raises(SystemExit):
        main(["check", "p.zip", "--dataset", "gaze", "--task", "regression", "--rows", "val=x"])
    assert "expected SPLIT=ROWS pairs such as train=6,val=4,test=5, got 'val=x'" in (
        capsys.readouterr().err
    )
    proc = run(
        "check", tmp_path / "nope.zip", "--dataset", "g", "--task", "regression", "--rows", "val=1"
    )
    assert proc.returncode == 1 and "nope.zip: cannot read the file" in proc.stderr


# --- --levels (spec §8) -----------------------------------------------------------------


def test_levels_add_wis_and_the_coverages_after_the_losses(files, capsys):
    pred = files("p.txt", ["1 0 1", "2 1 2 3 4", "0 0.1 -1 0.9 2"])
    targ = files("t.txt", ["0.3", "-1", "5"])
    assert main(["evaluate", str(pred), str(targ), "--levels", "0.05,0.25,0.5,0.75,0.95"]) == 0
    out = capsys.readouterr()
    shown = parse_output(out.out)
    options = ScoringOptions(quantile_levels=(0.05, 0.25, 0.5, 0.75, 0.95))
    want = evaluate(pred, targ, options=options)
    names = list(shown)
    assert names[: len(want.scores)] == list(want.scores) and "wis" in names
    assert names[len(want.scores) :] == ["cov50", "cov90"]  # reported, after the losses
    assert float(shown["wis"]) == want.scores["wis"]
    assert float(shown["cov90"]) == want.reported["cov90"] == 1 / 3
    # Without --levels: no wis, no coverage.
    assert main(["evaluate", str(pred), str(targ)]) == 0
    assert not {"wis", "cov50", "cov90"} & set(parse_output(capsys.readouterr().out))
    # The option may come after LOSS; LOSS wis prints its value alone.
    assert main(["evaluate", str(pred), str(targ), "wis", "--levels", "0.1,0.9"]) == 0
    alone = evaluate(pred, targ, options=ScoringOptions(quantile_levels=(0.1, 0.9)))
    assert capsys.readouterr().out == f"{alone.scores['wis']!r}\n"


@pytest.mark.parametrize(
    ("levels", "reason"),
    [
        ("0.5,0.4", "quantile levels must increase strictly (0.4 after 0.5)"),
        ("0.1,1.2", "quantile levels must lie strictly between 0 and 1, got 1.2"),
        ("0,0.5", "quantile levels must lie strictly between 0 and 1, got 0.0"),
        ("0.1;0.9", "'0.1;0.9' in '0.1;0.9' is not a number"),
        ("0.1,,0.9", "'' in '0.1,,0.9' is not a number"),
        (",".join(str(k / 101) for k in range(1, 101)), "expected 1 to 99 quantile levels"),
    ],
)
def test_bad_levels_exit_2_saying_what_was_expected(files, levels, reason):
    pred, targ = files("p.txt", ["1 0 1"]), files("t.txt", ["0"])
    proc = run("evaluate", pred, targ, "--levels", levels)
    assert (proc.returncode, proc.stdout) == (2, "")
    assert "argument --levels: expected 1 to 99 comma-separated levels" in proc.stderr
    assert reason in proc.stderr and "Traceback" not in proc.stderr


def test_wis_asked_without_levels_exits_2_naming_the_option(files, capsys):
    pred, targ = files("p.txt", ["1 0 1"]), files("t.txt", ["0"])
    assert main(["evaluate", str(pred), str(targ), "wis"]) == 2
    out = capsys.readouterr()
    assert out.out == "" and "wis is not computed" in out.err and "--levels" in out.err
