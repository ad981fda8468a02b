"""Slice files and per-slice scores (spec §8): reading, checking, order, the CLI."""

import io

import numpy as np
import pytest

import scoring
from scoring import ScoringError, evaluate, read_slices
from scoring.cli import main
from scoring.slices import first_appearance


def problems_of(data: bytes, n=None, path="d_test_slices.txt") -> list[str]:
    with pytest.raises(ScoringError) as info:
        read_slices(data, path=path, n=n)
    return info.value.lines


def test_names_in_file_order_as_strings():
    names = read_slices(b"in\nshifted\nin\n", path="p", n=3)
    assert names.tolist() == ["in", "shifted", "in"]
    assert names.dtype.kind == "U"


def test_crlf_blanks_around_names_and_trailing_blank_lines_are_fine():
    data = b"  in\t\r\nshifted \r\na-b_9\n\n \r\n"
    assert read_slices(data, path="p", n=3).tolist() == ["in", "shifted", "a-b_9"]


def test_paths_streams_and_bytes_read_alike(tmp_path):
    path = tmp_path / "s.txt"
    path.write_bytes(b"x\ny\n")
    assert read_slices(str(path), path="s.txt").tolist() == ["x", "y"]
    assert read_slices(io.BytesIO(b"x\ny"), path="s.txt").tolist() == ["x", "y"]


def test_every_bad_line_is_named():
    data = b"in\nIn\nshifted domain\n" + b"a" * 33 + b"\n\xff\n0.5\rx\nok\n"
    assert problems_of(data) == [
        "d_test_slices.txt:2: expected a slice name of 1 to 32 characters from a-z, 0-9, "
        "_ and -, found 'In'",
        "d_test_slices.txt:3: expected a slice name of 1 to 32 characters from a-z, 0-9, "
        "_ and -, found 'shifted domain'",
        "d_test_slices.txt:4: slice name of 33 characters; a name is at most 32: found "
        f"'{'a' * 33}'",
        "d_test_slices.txt:5: expected a slice name of 1 to 32 characters from a-z, 0-9, "
        "_ and -, found '\\\\xff'",
        "d_test_slices.txt:6: unexpected carriage return (CR) at column 4; expected one "
        "slice name, each line ending in LF or CR LF",
    ]


def test_a_blank_line_before_the_last_name_is_an_error():
    assert problems_of(b"in\n\n \nin\n") == [
        "d_test_slices.txt:2: blank line before the last name; every line must hold a slice name",
        "d_test_slices.txt:3: blank line before the last name; every line must hold a slice name",
    ]


def test_an_empty_file_is_an_error():
    assert problems_of(b"", n=2) == [
        "d_test_slices.txt:1: the file is empty; expected one slice name per line"
    ]
    assert problems_of(b"\n\n") == [
        "d_test_slices.txt:1: the file is empty; expected one slice name per line"
    ]


def test_a_count_other_than_the_targets_names_both_counts_and_the_line():
    # Too few: the line where the next name should have been.
    assert problems_of(b"in\nin\n\n", n=3) == [
        "d_test_slices.txt:3: expected 3 slice names, one per target, found 2"
    ]
    # Too many: the first name too many (also when the block is read in one piece).
    assert problems_of(b"in\nin\nshifted\nin\n", n=2) == [
        "d_test_slices.txt:3: expected 2 slice names, one per target, found 4"
    ]
    assert problems_of(b"in\n x\nshifted\n", n=1) == [
        "d_test_slices.txt:2: expected 1 slice names, one per target, found 3"
    ]


def test_a_line_over_one_mebibyte_is_a_line_error():
    lines = problems_of(b"in\n" + b"a" * (1 << 20 | 1) + b"\nin\n")
    assert lines == [
        f"d_test_slices.txt:2: a line of {(1 << 20) + 1} bytes; a line is at most 1048576 "
        "bytes (one slice name)"
    ]


def test_many_bad_lines_are_capped_and_summarised():
    lines = problems_of(b"A\n" * 500)
    assert lines[0].startswith("d_test_slices.txt: 500 lines are not slice names")
    assert lines[1].startswith("d_test_slices.txt:1: expected a slice name")
    assert lines[-1] == "... and 400 more problems"


def test_first_appearance_order():
    assert first_appearance(np.array(["s", "in", "s", "a"])) == ["s", "in", "a"]


def test_by_slice_scores_each_slice_as_a_file_of_its_own():
    t = np.array([1.0, -1.0, -1.0, 1.0, 1.0])
    whole = evaluate(b"0.9\n0.2\n0.7\n0.4\n0.6\n", t, task="classification")
    parts = whole.by_slice(np.array(["shifted", "in", "shifted", "in", "in"]))
    assert list(parts) == ["shifted", "in"]
    # nlp on the slice "shifted" (examples 1 and 3): −(ln 0.9 + ln 0.3)/2, by hand.
    assert parts["shifted"].scores["nlp"] == pytest.approx(-(np.log(0.9) + np.log(0.3)) / 2)
    assert parts["shifted"].n == 2 and parts["in"].n == 3
    # 01l: "in" gets 0.2 → right (t = −1), 0.4 → wrong (t = +1), 0.6 → right.
    assert parts["in"].scores["01l"] == pytest.approx(1 / 3)


def test_by_slice_nmse_normalises_by_the_slice_targets():
    pred = b"1 0 1\n1 0 1\n1 10 1\n1 10 1\n"
    t = np.array([1.0, -1.0, 9.0, 12.0])
    parts = evaluate(pred, t, task="regression").by_slice(np.array(["a", "a", "b", "b"]))
    assert parts["a"].scores["nmse"] == pytest.approx(((1 + 1) / 2) / np.var([1.0, -1.0]))
    assert parts["b"].scores["nmse"] == pytest.approx(((1 + 4) / 2) / np.var([9.0, 12.0]))


def test_by_slice_wants_one_name_per_example():
    ev = evaluate(b"0.5\n0.5\n", np.array([1.0, -1.0]), task="classification")
    with pytest.raises(ValueError, match="expected 2 slice names"):
        ev.by_slice(np.array(["a"]))


@pytest.fixture
def files(tmp_path):
    (tmp_path / "p.txt").write_text("0.9\n0.2\n0.7\n0.4\n")
    (tmp_path / "t.txt").write_text("1\n-1\n-1\n1\n")
    (tmp_path / "s.txt").write_text("shifted\nin\nshifted\nin\n")
    return tmp_path


def test_cli_prints_every_loss_per_slice_after_the_whole_split(files, capsys):
    d = files
    assert main(["evaluate", str(d / "p.txt"), str(d / "t.txt"), "--slices", str(d / "s.txt")]) == 0
    out = capsys.readouterr().out.splitlines()
    losses = [loss.name for loss in scoring.losses_for("classification")]
    names = [line.split()[0] for line in out]
    assert names == [
        *losses,
        *(f"{loss}@shifted" for loss in losses),
        *(f"{loss}@in" for loss in losses),
    ]
    values = dict(line.split() for line in out)
    assert float(values["nlp@shifted"]) == pytest.approx(-(np.log(0.9) + np.log(0.3)) / 2)


def test_cli_one_loss_with_slices(files, capsys):
    d = files
    args = ["evaluate", str(d / "p.txt"), str(d / "t.txt"), "3", "--slices", str(d / "s.txt")]
    assert main(args) == 0
    out = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in out[1:]] == ["nlp@shifted", "nlp@in"]


def test_cli_bad_slices_file_exits_1_naming_the_lines(files, capsys):
    d = files
    (d / "s.txt").write_text("in\nIN\nin\n")
    assert main(["evaluate", str(d / "p.txt"), str(d / "t.txt"), "--slices", str(d / "s.txt")]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.splitlines() == [
        f"{d / 's.txt'}:2: expected a slice name of 1 to 32 characters from a-z, 0-9, _ and -, "
        "found 'IN'"
    ]


def test_cli_slices_count_differs_from_the_targets(files, capsys):
    d = files
    (d / "s.txt").write_text("in\nin\nin\n")
    assert main(["evaluate", str(d / "p.txt"), str(d / "t.txt"), "--slices", str(d / "s.txt")]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.splitlines() == [
        f"{d / 's.txt'}:4: expected 4 slice names, one per target, found 3"
    ]


def test_cli_reports_the_problems_of_every_file(files, capsys):
    d = files
    (d / "p.txt").write_text("x\n0.2\n0.7\n0.4\n")
    (d / "s.txt").write_text("in\nIN\nin\nin\n")
    assert main(["evaluate", str(d / "p.txt"), str(d / "t.txt"), "--slices", str(d / "s.txt")]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith(f"{d / 'p.txt'}:1: ")
    assert err[1].startswith(f"{d / 's.txt'}:2: ")
