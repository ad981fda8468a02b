"""scoring._native, the C block parser: correctly rounded, and it refuses rather than guesses.

Every value it returns must be the double Python's ``float()`` returns for the same
token, bit for bit; every block it cannot read exactly must come back as None so that
the numpy paths of :mod:`scoring.textfile` (and their messages) take over. Whether a
block went through C or numpy, tokenize gives the same table and the same problems.
"""

import math
import random
import struct
from decimal import Decimal, getcontext

import numpy as np
import pytest

from scoring import _build, textfile
from scoring.errors import Problems

fastparse = pytest.importorskip("scoring._native")


def parse(buf: bytes, max_numbers: int = -1):
    values = np.empty(len(buf) // 2 + 1)
    counts = np.empty(len(buf), dtype=np.int64)
    read = fastparse.parse_block(buf, values, counts, max_numbers)
    if read is None:
        return None
    return values[: read[0]], counts[: read[1]]


def bits(x: float) -> bytes:
    return struct.pack("<d", x)


def assert_same_as_float(tokens: list[str]) -> None:
    buf = ("\n".join(tokens) + "\n").encode()
    got = parse(buf)
    assert got is not None, tokens[:5]
    values, counts = got
    assert counts.tolist() == [1] * len(tokens)
    wrong = [
        (t, v) for t, v in zip(tokens, values.tolist(), strict=True) if bits(v) != bits(float(t))
    ]
    assert not wrong, wrong[:5]


@pytest.mark.parametrize(
    "fmt", ["{!r}", "{:.18e}", "{:.17g}", "{:.16e}", "{:.15g}", "{:g}", "{:16.7e}"]
)
def test_every_writer_layout_of_random_doubles(fmt):
    rng = random.Random(fmt)
    tokens = []
    while len(tokens) < 20_000:
        x = struct.unpack("<d", struct.pack("<Q", rng.getrandbits(64)))[0]
        if math.isfinite(x):
            tokens.append(fmt.format(x).strip())
    assert_same_as_float(tokens)


def test_random_digit_strings_of_every_length_and_exponent():
    rng = random.Random(11)
    tokens = []
    for _ in range(30_000):
        digits = "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 25)))
        point = rng.randint(0, len(digits))
        token = digits[:point] + "." + digits[point:] if rng.random() < 0.7 else digits
        token = rng.choice(["", "+", "-"]) + (token if token != "." else "0")
        token += rng.choice(["e", "E"]) + str(rng.randint(-360, 330))
        if math.isfinite(float(token)):  # (beyond the largest double it refuses: below)
            tokens.append(token)
    assert_same_as_float(tokens)


def test_half_way_cases_between_neighbouring_doubles():
    """The decimal exactly between two doubles, and a hair either side: ties to even."""
    getcontext().prec = 80
    rng = random.Random(5)
    tokens = []
    for _ in range(3_000):
        x = rng.uniform(0.5, 2.0) * 10.0 ** rng.randint(-300, 300)
        (n,) = struct.unpack("<Q", struct.pack("<d", x))
        y = struct.unpack("<d", struct.pack("<Q", n + 1))[0]
        middle = (Decimal(x) + Decimal(y)) / 2
        for digits in (17, 18, 19, 20, 25, 40):
            tokens.append(format(middle, f".{digits}e"))
        tokens.append(format(middle, "f") if abs(x) < 1e20 else format(middle, "e"))
    assert_same_as_float(tokens)


@pytest.mark.parametrize(
    "token",
    [
        "4.9406564584124654e-324",  # the smallest subnormal
        "2.4703282292062327e-324",  # just below half of it: 0
        "2.4703282292062328e-324",  # just above: the smallest subnormal
        "2.2250738585072011e-308",
        "2.2250738585072014e-308",  # the smallest normal
        "1.7976931348623157e308",  # the largest double
        "1.7976931348623158e308",  # rounds down to it
        "9007199254740993",  # 2**53 + 1: ties to even
        "9007199254740992.5",
        "0.000000000000000000000000000001",
        "00000000000000000000000000000123.25",
        "1e-400",
        "-0",
        "-0.0e5",
        ".5",
        "5.",
        "123456789012345678901234567890",
        "1" + "0" * 400 + "e-400",  # 401 digits: Python's own conversion decides
    ],
)
def test_edge_tokens(token):
    assert_same_as_float([token])


@pytest.mark.parametrize(
    "buf",
    [
        b"1e400\n",  # beyond the largest double
        b"-1e309\n",
        b"1_0\n",  # float() reads it; the careful path decides
        b"nan\n",
        b"inf\n",
        b"0x10\n",
        b"1,5\n",
        b"1 2\r \n",  # a CR not right before LF
        b"1\r2\n",
        b"--1\n",
        b"+-1\n",
        b"1e\n",
        b"1e+\n",
        b".\n",
        b"-.\n",
        b"1.5.\n",
        b"1.2e3.4\n",
        b"1e5e5\n",
        b"e5\n",
        b"1\x00\n",
        b"\xef\xbb\xbf1\n",
        b"1\x0b2\n",
        b"1\x0c\n",
        b"1",  # no final LF: the reader always hands over whole lines
        b"",
    ],
)
def test_anything_not_plain_is_refused(buf):
    assert parse(buf) is None


def test_lines_blanks_tabs_and_crlf():
    values, counts = parse(b" 1\t2   -3e2 \r\n\n\t.5\t5.\r\n \n")
    assert values.tolist() == [1.0, 2.0, -300.0, 0.5, 5.0]
    assert counts.tolist() == [3, 0, 2, 0]


def test_a_line_longer_than_max_numbers_is_refused_before_it_is_read():
    assert parse(b"1 2 3\n4\n", max_numbers=3) is not None
    assert parse(b"1 2 3\n4 5 6 7\n", max_numbers=3) is None


def test_the_table_of_powers_of_ten_is_exact_to_its_last_bit():
    for e in (-348, -343, -27, -1, 0, 1, 27, 55, 308, 347):
        m = _build.pow10_truncated(e)
        assert 2**127 <= m < 2**128
        exponent = math.floor(e * math.log2(10)) - 127
        # m · 2**exponent <= 10**e < (m + 1) · 2**exponent, in exact rationals.
        from fractions import Fraction

        ten = Fraction(10) ** e
        assert (
            Fraction(m) * Fraction(2) ** exponent <= ten < Fraction(m + 1) * Fraction(2) ** exponent
        )


# --- the C path and the numpy paths give the same tables and problems ------------------------


def _random_block(rng: np.random.Generator, odd: bool) -> bytes:
    """Lines as participants write them; if ``odd``, now and then a line that is not plain."""
    lines = []
    for _ in range(rng.integers(20, 200)):
        n = int(rng.integers(0, 12))
        x = rng.standard_normal(n) * 10.0 ** rng.integers(-12, 100, n)
        style = rng.integers(0, 5)
        if style == 0:
            words = [repr(float(v)) for v in x]
        elif style == 1:
            words = [f"{v:.18e}" for v in x]
        elif style == 2:
            words = [f"{v:16.7e}" for v in x]
        elif style == 3:
            words = [f"{v:g}" for v in x]
        else:
            words = [str(int(v)) if abs(v) < 1e15 else repr(float(v)) for v in x]
        sep = ["\t", " ", "  "][rng.integers(0, 3)]
        line = sep.join(words)
        roll = rng.random() if odd else 1.0
        if roll < 0.03:
            line += " abc"
        elif roll < 0.05:
            line += " 1e999"
        elif roll < 0.06:
            line += "\r "
        elif roll < 0.07:
            line = line.replace(" ", ",", 1)
        end = "\r\n" if rng.random() < 0.2 else "\n"
        lines.append(line + end)
    return "".join(lines).encode()


def _tokenize(buf: bytes, max_numbers=None):
    problems = Problems("f")
    table = textfile.tokenize(buf, 1, problems, max_numbers)
    return table, (problems.total, sorted(problems._kept))


@pytest.mark.parametrize("seed", range(40))
def test_c_and_numpy_paths_agree_on_random_blocks(seed, no_native):
    rng = np.random.default_rng(seed)
    buf = _random_block(rng, odd=seed % 2 == 1)
    max_numbers = 8 if seed % 4 == 0 else None
    if seed % 2 == 0 and max_numbers is None:
        assert parse(buf) is not None  # a plain block: C reads it, numpy checks it
    fast, fast_problems = _tokenize(buf, max_numbers)
    with no_native():
        slow, slow_problems = _tokenize(buf, max_numbers)
    assert fast_problems == slow_problems
    assert fast.counts.tolist() == slow.counts.tolist()
    assert fast.bad.tolist() == slow.bad.tolist()
    assert [bits(v) for v in fast.values.tolist()] == [bits(v) for v in slow.values.tolist()]


@pytest.mark.parametrize(
    "token",
    [
        b"0." + b"0" * 999_999 + b"1e1000000",  # 1.0: the zeros and the exponent cancel
        b"-0." + b"0" * 999_999 + b"25e1000000",  # -2.5
        b"1e-9999999999999999999999",  # 0
        b"0." + b"0" * 99_990 + b"1e1000000",  # 1e899999: beyond the largest double
        b"1e+0000000000000000000000000000000000000001",  # 10
    ],
)
def test_exponents_of_any_length_after_any_number_of_zeros(token):
    """Found by fuzzing: an exponent of seven digits or more was cut short, so that a
    million zeros after the point turned 1.0 into 0.0."""
    got = parse(token + b"\n")
    want = float(token)
    if math.isinf(want):
        assert got is None
    else:
        assert got is not None and bits(got[0][0]) == bits(want)


def test_misaligned_buffers_are_refused():
    block = b"1 2\n"
    values = memoryview(bytearray(81))[1:]
    with pytest.raises(ValueError, match="aligned"):
        fastparse.parse_block(block, values, np.empty(8, dtype=np.int64), -1)
    with pytest.raises(ValueError, match="aligned"):
        fastparse.lift_sum(memoryview(bytearray(17))[1:])


def test_a_long_zero_run_scores_as_the_numpy_path_does(no_native):
    import scoring

    token = b"0." + b"0" * 999_999 + b"1e1000000"
    pred, targets = b"0.5\n" + token + b"\n0.25\n", b"1\n1\n-1\n"
    fast = scoring.evaluate(pred, targets).scores
    with no_native():
        slow = scoring.evaluate(pred, targets).scores
    assert fast == slow
    assert fast["01l"] == 0.0
