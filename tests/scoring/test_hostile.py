"""Hostile files cost little (issue 10, must-have 2) and are still reported exactly.

Reading stops once a file is hopeless, a line of too many numbers is rejected unread,
and a block with a few bad lines reads its other lines at C speed (the collection of
problems, which keeps only what can be shown, is tested in test_errors.py). Wall-clock
bounds are measured by bench/hostile.py, not asserted here; memory is traced.
"""

import contextlib
import io
import tracemalloc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import scoring
from scoring import ScoringError, _accel, errors, evaluate, read_classification, textfile
from scoring.blocks import BLOCK_SIZE
from scoring.errors import MAX_REPORTED, Problems

from .util import (
    lines_of,
    matlab,
    problems_of,
    reference_numbers,
    same_floats,
    small_blocks,
    table_numbers,
)

# --- giving up on a hopeless file ------------------------------------------------------------


def test_a_hopeless_file_is_given_up_on():
    err = problems_of(evaluate, b"x\n" * 4_000_000, np.zeros(4_000_000), task="regression")
    assert not err.exact and err.total == errors.GIVE_UP
    assert [p.line for p in err.problems] == list(range(1, 101))
    assert err.lines[-1] == f"... and at least {errors.GIVE_UP - 100} more problems"
    assert not any("rows, one per target" in line for line in err.lines)  # count unknown


@pytest.mark.parametrize("line", [b"1 0 1e300", b"5", b"1 2 3 4 5", b"\xff", b"x", b"2"])
@pytest.mark.parametrize("task", ["classification", "regression"])
@pytest.mark.parametrize("block_size", [None, 4096])
def test_every_kind_of_hopeless_file_is_given_up_on(monkeypatch, line, task, block_size):
    # Unreadable lines stop the reading at once; readable ones with a wrong count, type
    # or range (found block by block, as arrays) at the end of a block.
    monkeypatch.setattr(errors, "GIVE_UP", 500)
    n = 600_000  # more than a block of 1 MB
    targets = np.ones(n) if task == "classification" else np.zeros(n)
    with small_blocks(block_size or BLOCK_SIZE):
        err = problems_of(evaluate, (line + b"\n") * n, targets, task=task)
    assert not err.exact and 500 <= err.total < n
    assert err.lines[-1] == f"... and at least {err.total - 100} more problems"
    assert [p.line for p in err.problems] == list(range(1, 101))


def test_exactly_enough_problems_to_give_up_is_still_an_exact_count(monkeypatch):
    monkeypatch.setattr(errors, "GIVE_UP", 300)
    err = problems_of(read_classification, b"x\n" * 300, path="p", n_expected=300)
    assert err.exact and err.lines[-1] == "... and 200 more problems"


def test_the_memory_of_a_hopeless_file_is_bounded():
    data = b"x\n" * 1_000_000
    tracemalloc.start()
    with pytest.raises(ScoringError):
        evaluate(data, np.zeros(10), task="regression")
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 80_000_000  # it was 400 MB: a tuple and a message per line


# --- bounded lines and messages --------------------------------------------------------------


def _too_many(found):
    return f"expected at most 1001 numbers on a line, found {found}"


@pytest.mark.parametrize("rows_before", [0, 40])
@pytest.mark.parametrize(
    "long, after",
    [
        (" ".join(["1"] * 5000), []),  # plain numbers: fromstring would read them
        ("x " + " ".join(["1"] * 4999), []),  # not even the first token is looked at
        (" ".join(["1"] * 5000), ["oops"]),  # a block sorted out line by line
    ],
)
def test_a_line_of_too_many_numbers_is_rejected_unread(rows_before, long, after):
    rows = [*["1 0 1"] * rows_before, long, *after]
    err = problems_of(evaluate, lines_of(rows), np.zeros(len(rows)), task="regression")
    assert str(err.problems[0]) == f"predictions:{rows_before + 1}: {_too_many(5000)}"


def test_fixed_width_lines_of_too_many_numbers():
    rows = [matlab([1.0] * 1002)] * 3
    err = problems_of(evaluate, lines_of(rows), np.zeros(3), task="regression")
    assert [str(p) for p in err.problems] == [
        f"predictions:{i}: {_too_many(1002)}" for i in (1, 2, 3)
    ]


def test_target_and_input_lines_are_not_bounded():
    from scoring import read_inputs

    assert read_inputs(lines_of([" ".join(["1"] * 3000)]), path="x").shape == (1, 3000)


def test_messages_quote_at_most_forty_characters_of_a_line():
    err = problems_of(read_classification, b"1" * 500_000 + b"\n", path="p", n_expected=1)
    assert (
        str(err.problems[0])
        == "p:1: expected a finite number, found '1111111111111111111111111111111111111...'"
    )


def _peak_bytes(read, data: bytes, **kwargs) -> tuple[int, object]:
    """Peak memory (tracemalloc) of ``read(data, **kwargs)`` beyond ``data`` itself."""
    tracemalloc.start()
    try:
        outcome = read(data, **kwargs)
    except ScoringError as error:
        outcome = error
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak, outcome


@pytest.mark.parametrize(
    ("line", "message"),
    [
        # One number of 10 MB: streamed past, never held whole.
        (b"1" * 10_000_000, "a line of 10000000 bytes; a line is at most 1048576 bytes"),
        # 5,000,000 numbers on one line (a 2.6 MB zip of it passed the ratio limit).
        (b"0 " * 5_000_000, "expected at most 1001 numbers on a line, found 5000000"),
    ],
)
def test_an_overlong_line_is_counted_not_kept(line, message):
    data = b"0.5\n" + line + b"\n0.5\n"
    peak, err = _peak_bytes(read_classification, data, path="p", n_expected=3)
    assert isinstance(err, ScoringError) and err.total == 1
    assert str(err.problems[0]).startswith(f"p:2: {message}")
    assert peak < 8 * textfile.MAX_LINE_BYTES  # a few blocks, not the line (10 MB)


def test_rows_past_the_expected_count_are_counted_not_read():
    """130,000,000 rows of "0" in a 2.9 MB zip cost 1.45 GB and 39 s when every row was
    read; past the expected count they are only counted, at the cost of one block."""
    peaks = []
    for rows in (1_000_000, 8_000_000):
        data = b"0.5\n" * 3 + b"0\n" * rows + b"\n" * 10
        peak, err = _peak_bytes(read_classification, data, path="p", n_expected=3)
        assert [str(p) for p in err.problems] == [
            f"p:4: expected 3 rows, one per target, found {rows + 3}"
        ]
        peaks.append(peak)
    assert peaks[1] < 1.2 * peaks[0] + 1_000_000, peaks  # 16 MB of rows cost what 2 MB do
    with pytest.raises(ScoringError, match="p:3: expected 2 rows, one per target, found 3"):
        read_classification(b"1\n1\n1\n\n", path="p", n_expected=2)


def test_blank_lines_cost_no_memory_per_line():
    """260,000,000 blank lines kept one int64 each (2.5 GB); now a run is two numbers."""
    peaks = []
    for blank in (1_000_000, 8_000_000):
        trailing = b"0.5\n" * 3 + b"\n" * blank
        peak, p = _peak_bytes(read_classification, trailing, path="p", n_expected=3)
        assert list(p) == [0.5, 0.5, 0.5]
        inner = b"0.5\n" + b"\n" * blank + b"0.5\n0.5\n"
        peak_inner, err = _peak_bytes(read_classification, inner, path="p", n_expected=3)
        assert err.total == blank
        assert [p.line for p in err.problems] == list(range(2, 2 + MAX_REPORTED))
        assert "blank line before the last example" in err.problems[0].message
        peaks.append(max(peak, peak_inner))
    assert peaks[1] < 1.2 * peaks[0] + 1_000_000, peaks


# --- a few bad lines do not send a block through Python -------------------------------------

ALPHABET = list("0123456789+-.eE") + [" ", "\t", "\r", "x", "_", ",", "\x00", "\xff", "1e999"]
GOOD = ["1", "-2.5", "3e5", ".5", "5.", "+1", "1e-3", "7E+2", "0", "-0.0", "1e-400"]


@st.composite
def blocks(draw):
    lines = []
    for _ in range(draw(st.integers(17, 60))):
        if draw(st.booleans()):
            line = " ".join(draw(st.lists(st.sampled_from(GOOD), max_size=5)))
        else:
            line = "".join(draw(st.lists(st.sampled_from(ALPHABET), max_size=10)))
        lines.append(line)
    return ("\n".join(lines) + "\n").encode("latin-1")


@settings(max_examples=300, deadline=None)
@given(buf=blocks(), max_numbers=st.sampled_from([None, 3]))
def test_sorting_out_reads_what_float_reads(buf, max_numbers):
    b = np.frombuffer(buf, dtype=np.uint8)
    problems = Problems("f")
    table = textfile._sort_out(buf, b, np.flatnonzero(b == 10), 1, problems, max_numbers)
    want = reference_numbers(buf)
    if max_numbers is not None:
        want = [None if v is not None and len(v) > max_numbers else v for v in want]
    assert same_floats(table_numbers(table), want)
    assert {p.line for p in problems.shown(10**6)} == {
        k for k, v in enumerate(want, 1) if v is None
    }
    assert problems.total == sum(v is None for v in want)


def test_sorting_out_reads_the_plain_lines_at_c_speed(monkeypatch):
    original = textfile.read_lines
    data = b"1 0 1\n" * 20_000 + b"x\n" + b"1 0 1\n" * 20_000
    parsed = []
    monkeypatch.setattr(textfile, "read_lines", _counting(original, parsed))
    err = problems_of(evaluate, data, np.zeros(40_001), task="regression")
    assert [str(p) for p in err.problems] == ["predictions:20001: expected a number, found 'x'"]
    assert parsed == [1]  # one line read by Python, the 40,000 others by numpy


def _counting(read_lines, seen):
    def wrapper(lines, numbers, size, *args, **kwargs):
        seen.append(size)
        return read_lines(lines, numbers, size, *args, **kwargs)

    return wrapper


_MIB = 1 << 20


@pytest.mark.parametrize(
    ("name", "data", "line"),
    [
        ("leading blanks", b" " * 2_500_000 + b"0.5\n0.5\n", 1),
        ("one byte over, LF", b" " * (_MIB - 2) + b"0.5\n0.5\n", 1),
        ("one byte over, CR LF", b" " * (_MIB - 2) + b"0.5\r\n0.5\n", 1),
        ("a long blank line at the end", b"0.5\n0.5\n" + b" " * (_MIB + 1) + b"\n", 3),
        ("exactly 1 MiB, CR LF", b" " * (_MIB - 3) + b"0.5\r\n0.5\n", None),
        ("exactly 1 MiB, LF", b" " * (_MIB - 3) + b"0.5\n0.5\n", None),
    ],
    ids=lambda value: value if isinstance(value, str) else "",
)
@pytest.mark.parametrize("native", [True, False])
def test_a_line_over_1_mib_is_a_line_error_on_every_path(name, data, line, native, tmp_path):
    """Spec §1: a line longer than 1,048,576 bytes (its end of line excluded) is a line
    error however the file is read (path, bytes or stream, with or without the C parser),
    whatever it holds: a prediction, target or any other file. A 2.5 MB line of leading
    blanks was accepted from a path and refused from a stream."""
    path = tmp_path / "p.txt"
    path.write_bytes(data)
    targets = data.replace(b"0.5", b"1")
    (tmp_path / "t.txt").write_bytes(targets)
    context = contextlib.nullcontext() if native else _accel.disabled()
    with context:
        for source in (data, io.BytesIO(data), str(path)):
            try:
                scoring.evaluate(source, b"1\n-1\n", predictions_path="p.txt")
                found = None
            except ScoringError as error:
                found = error.problems[0]  # (a long blank line also counts as a row)
                assert str(found).startswith(f"p.txt:{line}: a line of "), str(found)
                assert "a line is at most 1048576 bytes" in str(found)
            assert (found is None) == (line is None), (name, type(source))
        shift = len(data) - len(targets)  # (shorter numbers: only blank lines stay too long)
        for source in (targets, io.BytesIO(targets), str(tmp_path / "t.txt")):
            if line is None or (line == 1 and shift and name != "leading blanks"):
                continue
            with pytest.raises(ScoringError, match=rf"^t:{line}: a line of "):
                scoring.read_targets(source, path="t")
