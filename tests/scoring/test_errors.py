"""scoring.errors: problems collected rather than raised, kept only while they can be
shown, each as ``PATH:LINE: message``; the report of one file, or of several."""

import tracemalloc

import numpy as np

from scoring import read_classification
from scoring.errors import MAX_REPORTED, Problem, Problems, ScoringError, fmt

from .util import problems_of


def test_numbers_are_written_as_a_person_writes_them():
    assert [fmt(0.7), fmt(1.0), fmt(-2.5e-08), fmt(3), fmt(1e16)] == [
        "0.7",
        "1",
        "-2.5e-08",
        "3",
        "1e+16",
    ]
    assert fmt(np.float64(0.1) + np.float64(0.2)) == "0.30000000000000004"


def test_a_report_says_how_many_problems_are_not_shown():
    shown = [Problem("p.txt", 2, "bad"), Problem("p.txt", 0, "the file is empty")]
    assert ScoringError(shown).lines == ["p.txt:2: bad", "p.txt: the file is empty"]
    assert ScoringError(shown[:1], 2).lines == ["p.txt:2: bad", "... and 1 more problem"]
    assert ScoringError(shown[:1], 12, exact=False).lines == [
        "p.txt:2: bad",
        "... and at least 11 more problems",
    ]
    stopped = ScoringError(shown[:1], 1, exact=False)
    assert stopped.lines[-1] == "... and perhaps more problems: the rest of the file was not read"
    assert str(ScoringError(shown[:1], 3)) == "p.txt:2: bad\n... and 2 more problems"


def test_the_report_of_several_files_keeps_each_files_cap_and_count():
    predictions = ScoringError([Problem("pred.txt", 4, "bad")], 7)
    targets = ScoringError([Problem("t.txt", 1, "worse")])
    both = ScoringError.combine(predictions, targets)
    assert both.lines == ["pred.txt:4: bad", "... and 6 more problems", "t.txt:1: worse"]
    assert (both.total, both.exact, str(both)) == (8, True, "\n".join(both.lines))
    assert ScoringError.combine(targets) is targets


def test_problems_keep_only_what_can_be_shown():
    problems = Problems("f")
    batch = np.arange(200_001, 400_001)
    tracemalloc.start()
    for line in range(1, 200_001):
        problems.add(line, f"bad line {line}")
    problems.add_lines(batch, lambda i: f"bad batch line {i}")
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 500_000  # keeping 200,000 tuples and messages took 30 MB
    assert problems.total == 400_000
    assert [p.line for p in problems.shown()] == list(range(1, 101))


def test_problems_added_out_of_line_order_are_shown_in_line_order():
    problems = Problems("f")
    problems.add_lines(np.arange(500, 1000), lambda i: "late batch")
    for line in range(300, 0, -1):  # descending, as no reader adds them
        problems.add(line, "single")
    problems.add_lines(np.array([50, 7]), lambda i: "batch")
    problems.add(7, "single on 7")
    shown = problems.shown()
    every = sorted([*range(500, 1000), *range(1, 301), 50, 7, 7])
    assert [p.line for p in shown] == every[:100]
    # On one line: single problems first, in the order added, then batches.
    assert [p.message for p in shown[6:9]] == ["single", "single on 7", "batch"]
    assert problems.total == 500 + 300 + 2 + 1


def test_only_the_shown_problems_are_formatted():
    formatted = []
    problems = Problems("f")
    problems.add_lines(np.arange(1, 100_001), lambda i: formatted.append(i) or "m")
    problems.add_lines(np.arange(100_001, 200_001), lambda i: formatted.append(i) or "m")
    assert len(formatted) == MAX_REPORTED


def test_long_paths_are_shortened():
    path = "d" * 60_000 + "/gaze_val_predict.txt"
    text = str(Problem(path, 12, "a message"))
    assert text == "…" + path[-119:] + ":12: a message"
    assert str(Problem("short/path.txt", 3, "m")) == "short/path.txt:3: m"
    err = problems_of(read_classification, b"x\n" * 300, path=path, n_expected=300)
    assert sum(len(line) for line in err.lines) < 101 * 200


def test_problems_count_summaries_only_for_what_they_are_told():
    problems = Problems("f")
    problems.add(3, "m", "share this")
    problems.add_lines(np.arange(10, 20), lambda i: "m", "share this")
    problems.add_range(100, 100_000, lambda i: "m", "and this")
    problems.add(5, "alone")
    assert problems.summary_counts == {"share this": 11, "and this": 99_900}
    assert [str(s) for s in problems.summaries()] == [
        "f: 99900 lines and this",
        "f: 11 lines share this",
    ]
    assert problems.total == 1 + 10 + 99_900 + 1
