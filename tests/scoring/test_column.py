"""scoring.column: files of one number per line read in one pass, or not at all.

read_column must return exactly what the careful readers return for every valid file
(bit for bit, through every source and across window boundaries), and None for every
file the careful readers reject or that it cannot read, so that their messages stay
the only ones.
"""

import io
import math

import numpy as np
import pytest

from scoring import column, parse
from scoring.errors import ScoringError
from scoring.rows import MAX_VALUE

pytest.importorskip("scoring._native")

VALID = {
    "lone digits": b"1\n-1\n0\n-0\n+1\n9\n",
    "repr": b"0.1\n0.30000000000000004\n1e-05\n5e-324\n",
    "matlab": b"   6.7125064e-01\n  -1.0000000e+00\n",
    "crlf": b"1\r\n-1\r\n0.5\r\n",
    "blanks around": b"  1  \n\t-1\t\n 0.5 \r\n",
    "no final LF": b"1\n-1\n0.25",
    "trailing blank lines": b"1\n-1\n\n \n\t\r\n",
    "long digit strings": b"0." + b"3" * 60 + b"\n1" + b"0" * 30 + b"e-30\n",
}
INVALID = {
    "two numbers": b"1\n2 3\n",
    "text": b"1\nabc\n",
    "comma": b"0,5\n",
    "blank before an example": b"1\n\n-1\n",
    "leading blank line": b"\n1\n",
    "nan": b"nan\n",
    "inf": b"1\ninf\n",
    "beyond the bound": b"1\n1e101\n",
    "cr before a blank": b"0.5\r \n",
    "lone cr": b"1\r2\n",
    "empty": b"",
    "blank only": b"\n\n",
    "non-ascii": "1\n0,5\u00e9\n".encode(),
    "nul": b"1\n\x00\n",
}


def careful_targets(data: bytes, no_native) -> np.ndarray | None:
    """The careful reader alone (the C extension, and with it the one-pass reader,
    switched off by the ``no_native`` fixture)."""
    with no_native():
        try:
            return parse.read_targets(data, path="t")
        except ScoringError:
            return None


def sources(data: bytes, tmp_path):
    path = tmp_path / "file.txt"
    path.write_bytes(data)
    return {"bytes": data, "path": str(path), "file": io.BytesIO(data), "open": path.open("rb")}


@pytest.mark.parametrize("name", VALID)
def test_valid_files_read_as_the_careful_reader_reads_them(name, tmp_path, no_native):
    data = VALID[name]
    expected = careful_targets(data, no_native)
    assert expected is not None
    for kind, source in sources(data, tmp_path).items():
        got = column.read_column(source, low=-MAX_VALUE, high=MAX_VALUE)
        assert got is not None, kind
        assert got.tobytes() == expected.tobytes(), kind  # bit for bit, -0.0 included


@pytest.mark.parametrize("name", INVALID)
def test_every_file_the_careful_reader_rejects_is_refused(name, tmp_path, no_native):
    data = INVALID[name]
    if name != "beyond the bound":
        assert careful_targets(data, no_native) is None
    for kind, source in sources(data, tmp_path).items():
        assert column.read_column(source, low=-MAX_VALUE, high=MAX_VALUE) is None, kind


def test_bounds_and_capacity_are_refusals_too():
    assert column.read_column(b"0.5\n1.5\n", low=0.0, high=1.0) is None
    assert column.read_column(b"0.5\n-0.5\n", low=0.0, high=1.0) is None
    assert column.read_column(b"0.5\n0.25\n", low=0.0, high=1.0, capacity=1) is None
    got = column.read_column(b"0.5\n0.25\n", low=0.0, high=1.0, capacity=2)
    assert got.tolist() == [0.5, 0.25]


def test_many_trailing_blank_lines_are_left_to_the_careful_reader():
    assert column.read_column(b"1\n" + b"\n" * 1000, low=-1, high=1).tolist() == [1.0]
    assert column.read_column(b"1\n" + b"\n" * 1001, low=-1, high=1) is None


def test_a_stream_without_seek_is_not_read():
    class Pipe:
        def __init__(self):
            self.reads = 0

        def readinto(self, buffer):
            self.reads += 1
            return 0

    pipe = Pipe()
    assert column.read_column(pipe, low=-1, high=1) is None
    assert pipe.reads == 0


@pytest.mark.parametrize("window", [1 << 16, 3 << 16])
@pytest.mark.parametrize("ending", [b"\n", b"", b"\r\n", b"\n\n"])
def test_lines_across_windows_and_buffers(window, ending, tmp_path, monkeypatch, no_native):
    """Small windows and buffers so that lines straddle every boundary: mapped windows of
    a path, reads of a file object, and a file whose size is a whole number of windows."""
    monkeypatch.setattr(column, "_WINDOW", window)
    monkeypatch.setattr(column, "BLOCK_SIZE", 1 << 12)
    rng = np.random.default_rng(window + len(ending))
    values = rng.uniform(-1, 1, 30_000) * 10.0 ** rng.integers(-30, 30, 30_000)
    text = "\n".join(map(repr, values.tolist())).encode()
    whole_windows = text[: text.rfind(b"\n", 0, window * 2 - len(ending)) + 1]
    whole_windows += b"9" * (window * 2 - len(ending) - len(whole_windows))
    for data in (text + ending, whole_windows + ending):
        expected = careful_targets(data, no_native)
        assert expected is not None
        for kind, source in sources(data, tmp_path).items():
            got = column.read_column(source, low=-MAX_VALUE, high=MAX_VALUE)
            assert got is not None and got.tobytes() == expected.tobytes(), (kind, len(data))


def test_a_line_longer_than_a_window_or_buffer_is_left_to_the_careful_reader(
    tmp_path, monkeypatch, no_native
):
    monkeypatch.setattr(column, "_WINDOW", 1 << 16)
    monkeypatch.setattr(column, "BLOCK_SIZE", 1 << 12)
    data = b"1\n" + b" " * (1 << 17) + b"2\n3\n"
    assert careful_targets(data, no_native).tolist() == [1.0, 2.0, 3.0]
    for kind, source in sources(data, tmp_path).items():
        got = column.read_column(source, low=-9, high=9)
        if kind == "bytes":  # already in memory: nothing to stream
            assert got.tolist() == [1.0, 2.0, 3.0]
        else:
            assert got is None, kind


def test_targets_and_classification_readers_use_it_and_keep_their_messages(tmp_path):
    path = tmp_path / "p.txt"
    path.write_bytes(b"0.5\n0.25\n")
    assert parse.read_classification(str(path), path="p", n_expected=2).tolist() == [0.5, 0.25]
    path.write_bytes(b"0.5\n1.25\n")
    with pytest.raises(ScoringError) as error:
        parse.read_classification(str(path), path="p.txt", n_expected=2)
    assert str(error.value).splitlines()[0] == (
        "p.txt:2: expected a probability between 0 and 1, found 1.25"
    )
    with pytest.raises(ScoringError, match="t.txt:2: expected a class label"):
        parse.read_targets(b"1\n0.5\n", path="t.txt", task="classification")


def test_is_labels_with_and_without_the_kernel(no_native):
    cases = [([1.0, -1.0, 1.0], True), ([1.0, 0.0], False), ([1.0, math.nan], False), ([], True)]
    for values, expected in cases:
        assert parse.is_labels(np.array(values)) is expected
    with no_native():
        for values, expected in cases:
            assert parse.is_labels(np.array(values)) is expected
