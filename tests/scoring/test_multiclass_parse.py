"""scoring.multiclass_parse: the validating reader of multiclass predictions (spec §1, §7).

Every problem as ``PATH:LINE: message``, saying what was expected and what was found;
whole-file hints for the usual mistakes; the same values and messages on both paths
(the C parser and numpy's); nothing returned for a file with problems.
"""

import contextlib
import math
import tracemalloc
from fractions import Fraction

import numpy as np
import pytest

from scoring import ScoringError, ScoringOptions, errors
from scoring.errors import MAX_REPORTED, Problems
from scoring.multiclass_parse import check_multiclass, first_count, read_multiclass
from scoring.rows import RowReader

from .util import lines_of, matlab, problems_of, small_blocks

PATH = "p.txt"


def read(rows, classes=3, n=None, **options):
    data = lines_of(rows) if isinstance(rows, list) else rows
    n = len(data.splitlines()) if n is None else n
    return read_multiclass(
        data, path=PATH, n_expected=n, options=ScoringOptions(classes=classes, **options)
    )


def errors_of(rows, classes=3, n=None, **options) -> list[str]:
    data = lines_of(rows) if isinstance(rows, list) else rows
    n = len(data.splitlines()) if n is None else n
    err = problems_of(
        read_multiclass,
        data,
        path=PATH,
        n_expected=n,
        options=ScoringOptions(classes=classes, **options),
    )
    return err.lines


def entropy(q) -> float:
    return -sum(x * math.log(x) for x in q if x)


# --- valid files ------------------------------------------------------------------------


def test_each_row_is_divided_by_its_own_sum():
    r = read(["0.7 0.2 0.1", "0.5 0.5 0.005", "0.3 0.3 0.395"])
    assert r.probs[0].tolist() == [0.7, 0.2, 0.1]  # (a sum of exactly 1 changes nothing)
    assert r.probs[1] == pytest.approx([0.5 / 1.005, 0.5 / 1.005, 0.005 / 1.005], rel=1e-15)
    assert r.probs[2] == pytest.approx([0.3 / 0.995, 0.3 / 0.995, 0.395 / 0.995], rel=1e-15)
    assert r.members.tolist() == [1, 1, 1] and np.isnan(r.member_entropy).all()
    assert not r.has_ensembles


def test_ensemble_members_are_normalised_then_averaged():
    r = read(["0.6 0.4 0 0.2 0.8 0", "0.1 0.1 0.8", "0.5 0.5 0 0.3 0.3 0.4 0.2 0.4 0.4"])
    assert r.probs[0] == pytest.approx([0.4, 0.6, 0.0], rel=1e-15)
    assert r.probs[1].tolist() == [0.1, 0.1, 0.8]
    assert r.probs[2] == pytest.approx([1 / 3, 0.4, 0.8 / 3], rel=1e-15)
    assert r.members.tolist() == [2, 1, 3] and r.has_ensembles
    assert r.member_entropy[0] == pytest.approx((entropy([0.6, 0.4]) + entropy([0.2, 0.8])) / 2)
    want = (entropy([0.5, 0.5]) + entropy([0.3, 0.3, 0.4]) + entropy([0.2, 0.4, 0.4])) / 3
    assert r.member_entropy[2] == pytest.approx(want, rel=1e-14)
    assert math.isnan(r.member_entropy[1])
    # Each member by its own sum, before the mean: not the mean divided by its sum.
    # Each p is the exact value of the doubles' arithmetic, rounded once (spec §7).
    r = read(["0.5 0.5 0.496 0.499"], classes=2)
    half, a, b = Fraction(0.5), Fraction(0.496), Fraction(0.499)
    want = [(half + a / (a + b)) / 2, (half + b / (a + b)) / 2]
    assert r.probs[0].tolist() == [float(w) for w in want]
    sides = [float((w - Fraction(float(w))) / Fraction(float(w))) for w in want]
    assert np.sign(r.resid[0]).tolist() == np.sign(sides).tolist()


def test_two_classes_and_a_thousand():
    assert read(["1 0", "0.25 0.75"], classes=2).probs.tolist() == [[1, 0], [0.25, 0.75]]
    row = " ".join(["0.001"] * 1000)
    r = read([row, row + " " + row], classes=1000)
    assert r.probs.shape == (2, 1000) and r.members.tolist() == [1, 2]
    assert r.probs == pytest.approx(np.full((2, 1000), 0.001), rel=1e-12)


def test_matlab_crlf_blank_lines_at_the_end_and_any_number_syntax():
    rows = [matlab([0.7, 0.2, 0.1]), matlab([0.1, 0.1, 0.8])]
    assert read(rows).probs[1].tolist() == [0.1, 0.1, 0.8]
    crlf = lines_of(["0.7 0.2 0.1", "\t0.5  0.5 0 "], crlf=True) + b"\r\n\n"
    assert read(crlf, n=2).probs.tolist() == [[0.7, 0.2, 0.1], [0.5, 0.5, 0.0]]
    r = read(["7e-1 2.0e-01 +.1", "-0 1.0000000e+00 0"])  # -0 is a probability of 0
    assert r.probs.tolist() == [[0.7, 0.2, 0.1], [0.0, 1.0, 0.0]]


def test_rows_spread_over_many_blocks_and_mixed_kinds():
    rng = np.random.default_rng(3)
    rows, want = [], []
    for i in range(300):
        members = 1 + i % 4
        p = rng.dirichlet(np.ones(4), size=members)
        rows.append(" ".join(f"{x:.6g}" for x in p.ravel()))
        q = np.array([float(f"{x:.6g}") for x in p.ravel()]).reshape(members, 4)
        want.append((q / q.sum(axis=1, keepdims=True)).mean(axis=0))
    with small_blocks(700):
        r = read(rows, classes=4)
    assert r.probs == pytest.approx(np.array(want), rel=1e-13)
    assert r.members.tolist() == [1 + i % 4 for i in range(300)]


# --- line errors --------------------------------------------------------------------------


def test_values_beyond_the_bound_come_first():
    assert errors_of(["0.7 0.2 0.1", "1e300 0 0", "0 -1e101 0 0"]) == [
        "p.txt:2: value 1e+300 is outside ±1e100",
        "p.txt:3: value -1e+101 is outside ±1e100",
    ]


def test_probabilities_outside_zero_and_one_name_their_class_and_member():
    assert errors_of(["0.7 0.2 0.1", "0.5 0.6 -0.1", "0.5 0.5 0 0.2 1.5 -0.7"]) == [
        "p.txt:2: expected probabilities between 0 and 1, found -0.1 (class 2)",
        "p.txt:3: expected probabilities between 0 and 1, found 1.5 (member 2, class 1)",
    ]


def test_a_count_that_is_neither_l_nor_m_times_l():
    assert errors_of(["0.5 0.5", "0.25 0.25 0.25 0.25", "0.7 0.2 0.1"]) == [
        "p.txt:1: expected 3 probabilities (one per class), or M·3 for an ensemble of M "
        "members (2 ≤ M ≤ 100), found 2",
        "p.txt:2: expected 3 probabilities (one per class), or M·3 for an ensemble of M "
        "members (2 ≤ M ≤ 100), found 4",
    ]
    # 101 members: more numbers than any line may hold, rejected unread.
    assert errors_of([" ".join(["0.5 0.5"] * 101)], classes=2) == [
        "p.txt:1: expected at most 200 numbers on a line, found 202"
    ]


def test_ensemble_rows_where_the_dataset_accepts_none():
    lines = errors_of(
        ["0.7 0.2 0.1 0.7 0.2 0.1", "0.5 0.5", " ".join(["0.2 0.3 0.5"] * 3)],
        allow_ensembles=False,
    )
    assert lines == [
        "p.txt:1: expected 3 probabilities (one per class), found 6: is this a 2-member "
        "ensemble? this dataset does not accept ensembles",
        "p.txt:2: expected 3 probabilities (one per class), found 2",
        "p.txt:3: expected 3 probabilities (one per class), found 9: is this a 3-member "
        "ensemble? this dataset does not accept ensembles",
    ]


def test_sums_off_by_more_than_a_hundredth_name_the_sum():
    assert errors_of(["0.9 0.9 0.918", "0.3 0.3 0.42", "0.5 0.5 0 0.1 0.2 0.2"]) == [
        "p.txt:1: probabilities sum to 2.718, not 1: are these scores or logits? apply a softmax",
        "p.txt:2: probabilities sum to 1.02, not 1 (within 0.01): write them with more digits, "
        "or divide each by their sum",
        "p.txt:3: member 2's probabilities sum to 0.5, not 1: are these scores or logits? "
        "apply a softmax",
    ]


def test_the_tolerance_is_decided_on_the_exact_sum_of_the_doubles():
    # double(0.01) is above 0.01, so these sum to just over 1.01; the second's third
    # value is the double below 0.01: exactly just under 1.01, though the sum computed in
    # doubles rounds to the same double as the first's.
    assert errors_of(["0.5 0.5 0.01"]) == [
        "p.txt:1: probabilities sum to 1.0100000000000000089, not 1 (within 0.01): write them "
        "with more digits, or divide each by their sum"
    ]
    assert read(["0.5 0.5 0.0099999999999999985"]).n == 1
    assert errors_of(["0.5 0.49 0"])[0].startswith("p.txt:1: probabilities sum to 0.98999")
    assert read(["0.5 0.49000000000000005 0"]).n == 1


def test_rows_blank_lines_and_unreadable_lines():
    assert errors_of(["0.7 0.2 0.1"], n=3) == ["p.txt:2: expected 3 rows, one per target, found 1"]
    assert errors_of(["0.7 0.2 0.1", "", "0.7 0.2 0.1"], n=2) == [
        "p.txt:2: blank line before the last example; every line must hold an example "
        "(a blank line would shift the rows after it)"
    ]
    assert errors_of(b"", n=1) == ["p.txt:1: the file is empty; expected one example per line"]
    assert errors_of(["0.7,0.2,0.1", "0.5 0.5 nan"]) == [
        "p.txt:1: expected numbers separated by spaces or tabs, found '0.7,0.2,0.1'",
        "p.txt:2: expected a finite number, found 'nan'",
    ]


def test_every_problem_of_a_file_in_one_report_and_nothing_returned():
    lines = errors_of(["1e200 0 0", "0.5 0.5", "0.5 0.6 -0.1", "0.9 0.9 0.9", "x"], n=6)
    assert [line.split(":")[1] for line in lines] == ["1", "2", "3", "4", "5", "6"]
    assert lines[-1] == "p.txt:6: expected 6 rows, one per target, found 5"


# --- whole-file hints -----------------------------------------------------------------------


def test_logits_are_told_to_go_through_a_softmax():
    lines = errors_of(["2.1 -0.3 0.5", "-1 0.2 3.3", "0.1 0.8 0.1", "0 0 1.5"])
    assert lines[0] == (
        "p.txt: values outside [0, 1] on 3 lines: if these are logits or unnormalised scores, "
        "apply a softmax to each row (p_k = exp(z_k) / Σ_j exp(z_j)), so that each is a "
        "probability and each line sums to 1"
    )
    assert lines[1] == "p.txt:1: expected probabilities between 0 and 1, found 2.1 (class 0)"


def test_percentages_are_told_to_be_divided_by_100():
    lines = errors_of(["70 20 10", "33.3 33.3 33.4", "0 100 0"])
    assert lines[0] == (
        "p.txt: values above 1 on 3 lines, and every value lies between 0 and 100 with the "
        "lines summing to 100: if these are percentages, divide them by 100 (each class "
        "probability lies between 0 and 1)"
    )


@pytest.mark.parametrize(
    ("labels", "hint"),
    [
        (["0", "2", "1", "2"], "a whole number from 0 to 2: these look like class labels, not"),
        (
            ["1", "3", "3", "2"],
            "a whole number from 1 to 3: these look like class labels numbered from 1, not",
        ),
    ],
)
def test_class_labels_in_place_of_probabilities(labels, hint):
    lines = errors_of(labels)
    assert lines[0] == (
        f"p.txt: every line holds one number, {hint} probabilities; give one line of 3 class "
        "probabilities per example (for a label k alone: 1 for class k, 0 for the others)"
    )
    assert lines[1].startswith("p.txt:1: expected 3 probabilities (one per class), or M·3")


def test_the_wrong_number_of_classes():
    lines = errors_of(["0.2 0.2 0.2 0.2 0.2"] * 3, classes=10)
    assert lines[0] == (
        "p.txt: this dataset has 10 classes; your lines have 5 numbers (all 3 lines): write one "
        "probability per class, 10 numbers on each line, classes 0 to 9 in order"
    )
    assert "; is there an index or label column?:" in errors_of(["0 0.5 0.5 0"] * 2)[0]
    assert "; is a class left out?:" in errors_of(["0.5 0.5"] * 2)[0]
    # A binary classification file for a multiclass dataset: one probability per line.
    assert errors_of(["0.25", "0.5"])[0].startswith(
        "p.txt: this dataset has 3 classes; your lines have 1 numbers (all 2 lines)"
    )


def test_with_no_class_count_the_first_line_gives_it():
    r = read(["0.5 0.25 0.25 0", "0.1 0.2 0.3 0.4"], classes=None)
    assert r.classes == 4
    lines = errors_of(["0.5 0.5 0.25 0.75", "0.5 0.5"], classes=None)
    assert lines[0] == (
        "p.txt:1: probabilities sum to 2, not 1: are these scores or logits? apply a softmax; "
        "is this line an ensemble of 2 members of 2 classes? then give the number of classes "
        "(without it, this line's count, 4, is taken for it)"
    )
    lines = errors_of(["2", "0", "1"], classes=None)
    assert lines == [
        "p.txt: every line holds one number, a whole number from 0 to 2: these look like class "
        "labels, not probabilities; give one line of L class probabilities per example (for a "
        "label k alone: 1 for class k, 0 for the others)",
        "p.txt:1: expected the probabilities of 2 to 1000 classes on the first line, found 1 "
        "number: the number of classes is not given, so the first line gives it",
    ]
    assert errors_of(["x", " ".join(["0.0005"] * 2000)], classes=None)[1] == (
        "p.txt:2: expected the probabilities of 2 to 1000 classes on the first line, found 2000 "
        "numbers (an ensemble row? then give the number of classes): the number of classes is "
        "not given, so the first line gives it"
    )


def test_many_overlong_lines_are_summed_up_in_the_tasks_words():
    lines = errors_of([" ".join(["0.5"] * (5 + i % 2 * 2)) for i in range(12)], classes=2)
    assert lines[0] == (
        "p.txt: 12 lines hold neither 2 numbers nor a multiple of 2: each line holds the 2 "
        "class probabilities (an ensemble row: its members' 2 probabilities, one member "
        "after the other)"
    )
    lines = errors_of([" ".join(["0.1"] * 250)] * 12, classes=2)
    assert lines[0] == (
        "p.txt: 12 lines are too long: a line holds the 2 class probabilities of one example, "
        "or an ensemble's M·2 with at most 100 members"
    )


# --- both paths, checking without targets, hostile files --------------------------------------

CASES = [
    ["0.7 0.2 0.1", "0.1 0.8 0.1", "0.3 0.3 0.4"],
    ["0.6 0.4 0 0.2 0.8 0", "0.1 0.1 0.8", "0.5 0.5 0 0.3 0.3 0.4 0.2 0.4 0.4", "-0 1 0"],
    [matlab([0.7, 0.2, 0.1])] * 20,
    ["2.1 -0.3 0.5", "0.5 0.5", "1e300 0 0", "0.9 0.9 0.918", "x", "", "0.2 0.3 0.5"],
    ["70 20 10"] * 30 + ["0 1 0"],
    ["1", "2", "0"] * 7,
]


@pytest.mark.parametrize("rows", CASES)
def test_the_numpy_path_gives_the_same_values_and_messages(rows, no_native):
    def outcome():
        try:
            r = read(rows, n=len(rows))
        except ScoringError as err:
            return err.lines
        return [r.probs.tobytes(), r.members.tobytes(), r.member_entropy.tobytes()]

    for size in (None, 40):
        if size is None:
            fast = outcome()
            with no_native():
                slow = outcome()
        else:
            with small_blocks(size):
                fast = outcome()
                with no_native():
                    slow = outcome()
        assert fast == slow


def test_checking_without_targets_reports_the_same_lines():
    rows = lines_of(["0.7 0.2 0.1", "0.5 0.5", "0.9 0.9 0.918"])
    options = ScoringOptions(classes=3)
    with pytest.raises(ScoringError) as checked:
        check_multiclass(rows, path=PATH, options=options)
    assert checked.value.lines == errors_of(rows)
    assert "expected 5 rows" not in "\n".join(checked.value.lines)
    with pytest.raises(ScoringError, match=r"p.txt:4: expected 5 rows, one per target, found 3"):
        check_multiclass(rows, path=PATH, options=options, n_expected=5)
    check_multiclass(lines_of(["0.7 0.2 0.1"]), path=PATH, options=options, n_expected=1)


def test_a_given_reader_collects_the_problems():
    reader = RowReader(b"0.5 0.5\n", PATH)
    with pytest.raises(ScoringError):
        check_multiclass(b"0.5 0.5\n", path=PATH, options=ScoringOptions(classes=3), reader=reader)
    assert reader.problems.total == 1  # (the upload check reports what was found in time)


def test_the_first_count():
    assert first_count(b"\n x\n 0.5 0.5\n1\n", PATH) == 2  # (a blank then unreadable line first)
    assert first_count(b"", PATH) is None


def test_a_million_bad_lines_are_given_up_on_in_bounded_memory():
    data = b"0.5 0.6 0.7\n" * 1_000_000
    tracemalloc.start()
    err = problems_of(
        read_multiclass, data, path=PATH, n_expected=10**6, options=ScoringOptions(classes=3)
    )
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert not err.exact and err.total >= errors.GIVE_UP
    assert len(err.problems) == MAX_REPORTED
    assert err.lines[-1].startswith("... and at least ")
    assert peak < 60_000_000  # not the n × L result, nor a message per line


def test_a_line_over_a_mebibyte_is_a_line_error_read_past():
    long = b"0" * (1 << 20) + b"1"
    data = b"0.5 0.5 0\n" + long + b"\n0.5 0.5 0\n"
    assert errors_of(data) == [
        "p.txt:2: a line of 1048577 bytes; a line is at most 1048576 bytes "
        "(numbers separated by spaces or tabs)"
    ]
    data = b"0.5 0.5 0\n" + b"0 " * 600_000 + b"\n"
    assert errors_of(data) == ["p.txt:2: expected at most 300 numbers on a line, found 600000"]


def test_problems_keep_their_own_cap():
    lines = errors_of(["0.5 0.5"] * 150)
    assert len(lines) == 1 + MAX_REPORTED + 1 and lines[-1] == "... and 50 more problems"
    assert Problems(PATH).total == 0


def _large_file_rows() -> list[str]:
    """Single rows, then two-member rows (the block between them mixed), one row with a
    value below 2^-900 (taken exactly): 3000 rows of 4 classes."""
    rng = np.random.default_rng(26)
    rows = []
    for i in range(3000):
        p = rng.dirichlet(np.ones(4), size=1 if i < 1500 else 2)
        rows.append(" ".join(f"{x:.6g}" for x in p.ravel()))
    rows[700] = "1e-300 0.25 0.5 0.25"
    return rows


@pytest.mark.parametrize(
    ("start_fails", "numpy_path"), [(False, False), (True, False), (False, True)]
)
def test_blocks_normalised_on_a_second_thread_give_the_same_rows(
    monkeypatch, no_native, start_fails, numpy_path
):
    """A large file's blocks are normalised on a second thread while the next is parsed:
    the same probs, sides and exact rows as one after the other (C kernel or numpy); and
    where no thread can start (RuntimeError near a worker's limits), one after the other."""
    with no_native() if numpy_path else contextlib.nullcontext():
        _same_rows_on_two_threads(monkeypatch, start_fails=start_fails)


def _same_rows_on_two_threads(monkeypatch, *, start_fails: bool) -> None:
    from scoring import multiclass_parse

    data = lines_of(_large_file_rows())
    with small_blocks(4000):
        alone = read(data, classes=4)
    submitted = []

    class Pool(multiclass_parse.ThreadPoolExecutor):
        def submit(self, fn, /, *args, **kwargs):
            if start_fails:
                raise RuntimeError("can't start new thread")
            submitted.append(args[1])
            return super().submit(fn, *args, **kwargs)

    monkeypatch.setattr(multiclass_parse, "THREADED_SIZE", 1000)
    monkeypatch.setattr(multiclass_parse, "_cpus", lambda: 2)
    monkeypatch.setattr(multiclass_parse, "ThreadPoolExecutor", Pool)
    with small_blocks(4000):
        threaded = read(data, classes=4)
    assert not submitted if start_fails else len(submitted) > 10
    assert np.array_equal(threaded.probs, alone.probs)
    assert np.array_equal(threaded.resid, alone.resid)
    assert np.array_equal(threaded.members, alone.members)
    assert np.array_equal(threaded.member_entropy, alone.member_entropy, equal_nan=True)
    assert list(threaded.exact) == list(alone.exact) == [700]
    assert threaded.exact[700] == alone.exact[700]
    tiny = Fraction(1e-300)
    assert threaded.exact[700][0] == tiny / (1 + tiny)  # (over the row's exact sum)
    assert alone.members[1500:].tolist() == [2] * 1500
