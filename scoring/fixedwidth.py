"""Fixed-width fields in scientific notation, read as integer arithmetic on whole columns.

MATLAB's ``save -ascii`` writes every value as ``%16.7e`` (``   6.7125064e-01``);
other programs write other widths of the same right-aligned ``d.ddde+XX`` layout.
A block of such lines is checked and converted column by column, without looking
at a token at a time; Clinger's fast path (an exact mantissa below 2**53 scaled by
an exact power of ten) keeps every value correctly rounded. Every function returns
None as soon as anything is unusual: the caller then reads the block another way.
"""

from __future__ import annotations

import re

import numpy as np

_P10 = 10.0 ** np.arange(23)
_SCI = re.compile(rb"([+-]?)(\d)\.(\d+)[eE]([+-])(\d+)$")


# MATLAB's save -ascii field: "   d.ddddddde+XX" (16 bytes: sign or blank at byte 2).
_MATLAB = (16, 13, 7, 2)


def _bytes_mask(pairs: dict[int, int]) -> np.uint64:
    return np.uint64(sum(v << (8 * k) for k, v in pairs.items()))


# Little-endian words: byte k of the field is bits 8k..8k+7 of word k // 8.
_W0_MASK = _bytes_mask({0: 0xFF, 1: 0xFF, 3: 0xF0, 4: 0xFF, 5: 0xF0, 6: 0xF0, 7: 0xF0})
_W0_WANT = _bytes_mask({0: 0x20, 1: 0x20, 3: 0x30, 4: 0x2E, 5: 0x30, 6: 0x30, 7: 0x30})
_W0_SIX = _bytes_mask({3: 6, 5: 6, 6: 6, 7: 6})
_W0_DIGITS = _bytes_mask({3: 0xF0, 5: 0xF0, 6: 0xF0, 7: 0xF0})
_W0_DIGITS_WANT = _bytes_mask({3: 0x30, 5: 0x30, 6: 0x30, 7: 0x30})
_W1_MASK = _bytes_mask({0: 0xF0, 1: 0xF0, 2: 0xF0, 3: 0xF0, 4: 0xDF, 6: 0xF0, 7: 0xF0})
_W1_WANT = _bytes_mask({0: 0x30, 1: 0x30, 2: 0x30, 3: 0x30, 4: 0x45, 6: 0x30, 7: 0x30})
_W1_SIX = _bytes_mask({0: 6, 1: 6, 2: 6, 3: 6, 6: 6, 7: 6})
_W1_DIGITS = _bytes_mask({0: 0xF0, 1: 0xF0, 2: 0xF0, 3: 0xF0, 6: 0xF0, 7: 0xF0})
_W1_DIGITS_WANT = _bytes_mask({0: 0x30, 1: 0x30, 2: 0x30, 3: 0x30, 6: 0x30, 7: 0x30})
_U = np.uint64


def _matlab16(x: np.ndarray) -> np.ndarray | None:
    """MATLAB fields, eight bytes at a time: layout checks and digits as integer arithmetic.

    A byte is a digit when its high nibble is 3 and adding 6 keeps it so; a
    carry out of a non-digit byte can only make a check fail, never pass.
    """
    w = x.view("<u8")
    w0, w1 = w[:, 0], w[:, 1]
    sign = (w0 >> _U(16)) & _U(0xFF)
    esign = (w1 >> _U(40)) & _U(0xFF)
    if not (
        ((w0 & _W0_MASK) == _W0_WANT).all()
        and (((w0 + _W0_SIX) & _W0_DIGITS) == _W0_DIGITS_WANT).all()
        and ((w1 & _W1_MASK) == _W1_WANT).all()
        and (((w1 + _W1_SIX) & _W1_DIGITS) == _W1_DIGITS_WANT).all()
        and ((sign == _U(0x20)) | (sign == _U(0x2D)) | (sign == _U(0x2B))).all()
        and ((esign == _U(0x2B)) | (esign == _U(0x2D))).all()
    ):
        return None
    f = _U(0xF)
    low = w1 & _U(0x0F0F0F0F)  # four digits, first one in the lowest byte
    low = (low * _U(10) + (low >> _U(8))) & _U(0x00FF00FF)
    low = (low * _U(100) + (low >> _U(16))) & _U(0xFFFF)
    mantissa = (
        ((w0 >> _U(24)) & f) * _U(10_000_000)
        + ((w0 >> _U(40)) & f) * _U(1000_000)
        + ((w0 >> _U(48)) & f) * _U(100_000)
        + ((w0 >> _U(56)) & f) * _U(10_000)
        + low
    ).astype(np.float64)
    exponent = (((w1 >> _U(48)) & f) * _U(10) + ((w1 >> _U(56)) & f)).astype(np.int64)
    return _scale(
        mantissa, np.where(esign == _U(0x2D), -exponent, exponent) - 7, sign == _U(0x2D), x
    )


def _scale(mantissa, power, negative, x) -> np.ndarray | None:
    """mantissa · 10**power, correctly rounded (Clinger's fast path, |power| <= 22)."""
    clipped = np.abs(np.clip(power, -22, 22))
    values = np.where(power >= 0, mantissa * _P10[clipped], mantissa / _P10[clipped])
    exact = np.abs(power) <= 22
    if not exact.all():
        # The text carries its own sign; the sign is applied below.
        values[~exact] = np.abs(np.fromstring(x[~exact].tobytes(), dtype=np.float64, sep=" "))
    values = np.where(negative, -values, values)
    return values if np.isfinite(values).all() else None


def _columns(x: np.ndarray, field: int, sci: int, frac: int, exp: int) -> np.ndarray | None:
    """Any right-aligned d.ddde+XX layout, one byte column at a time."""
    lead = field - sci
    sign = x[:, lead - 1]
    if not (
        # Every field starts with a blank, or "1.0e+00-2.0e+00" would read as two numbers.
        (x[:, : lead - 1] == 32).all()
        and (x[:, 0] == 32).all()
        and ((sign == 32) | (sign == 45) | (sign == 43)).all()
        and (x[:, lead + 1] == 46).all()
        and ((x[:, field - exp - 2] | 32) == 101).all()
        and ((x[:, field - exp - 1] == 43) | (x[:, field - exp - 1] == 45)).all()
    ):
        return None
    digit_cols = np.r_[lead, lead + 2 : lead + 2 + frac, field - exp : field]
    digits = x[:, digit_cols] - np.uint8(48)
    if not (digits < 10).all():
        return None
    digits = digits.astype(np.float64)
    mantissa = np.einsum("ij,j->i", digits[:, : frac + 1], _P10[frac::-1])  # no BLAS
    exponent = np.einsum("ij,j->i", digits[:, frac + 1 :], _P10[exp - 1 :: -1]).astype(np.int64)
    power = np.where(x[:, field - exp - 1] == 45, -exponent, exponent) - frac
    return _scale(mantissa, power, sign == 45, x)


def _field_layout(line: bytes) -> tuple[int, int, int, int] | None:
    """(field width, unsigned token length, fraction digits, exponent digits) of line's first field."""
    stripped = line.lstrip(b" ")
    if not stripped or len(stripped) == len(line):
        return None
    end = stripped.find(b" ")
    token = stripped if end < 0 else stripped[:end]
    match = _SCI.match(token)
    if match is None:
        return None
    frac, exp = len(match.group(3)), len(match.group(5))
    if frac > 14:
        return None  # mantissa would not be exact in a double
    field = len(line) - len(stripped) + len(token)
    return field, 4 + frac + exp, frac, exp
