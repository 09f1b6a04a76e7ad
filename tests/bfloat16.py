"""bfloat16 for the tests, in NumPy alone: the bit pattern of the bfloat16 nearest to a
number, and the number a bit pattern stands for.

NumPy has no bfloat16 dtype (the ml_dtypes package adds one, but not everywhere the tests
run, a browser for one). The tests hold bfloat16 values in float32 arrays instead: a bfloat16
is the upper half of a float32 (sign, 8 exponent bits, 7 fraction bits), so every bfloat16
value is a float32 value, held exactly.

These functions round as ml_dtypes does, bit for bit (tests/tooling/test_bfloat16_oracle.py
compares them on every upper half). They never call the course's own functions.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

TIE = 0x8000  # a lower half of exactly half the last kept bit
QUIET_NAN = 0x7FC0  # the bfloat16 NaN that ml_dtypes gives for any NaN, with its sign
SIGN = 0x8000


def float32_bits(values: ArrayLike) -> np.ndarray:
    """The float32 bit patterns (uint32) of `values`, each rounded to float32 first as NumPy
    rounds it (too large for float32: infinity)."""
    with np.errstate(over="ignore", invalid="ignore"):
        return np.asarray(values, dtype=np.float32).view(np.uint32)


def bfloat16_bits_of_float32_bits(bits32: ArrayLike) -> np.ndarray:
    """The bfloat16 patterns (uint16) nearest to the float32 patterns `bits32`: round to
    nearest, ties to the even pattern (a carry may reach the exponent: the largest float32
    values give infinity); a NaN gives the quiet NaN 0x7fc0 with its sign, as ml_dtypes."""
    bits32 = np.asarray(bits32, dtype=np.uint32)
    upper, lower = bits32 >> 16, bits32 & 0xFFFF  # the kept half and the dropped half
    odd = (upper & 1) == 1
    round_up = (lower > TIE) | ((lower == TIE) & odd)
    rounded = upper + round_up
    nan = (bits32 & 0x7FFFFFFF) > 0x7F800000  # exponent all ones and a fraction that is not 0
    return np.where(nan, (upper & SIGN) | QUIET_NAN, rounded).astype(np.uint16)


def bfloat16_bits(values: ArrayLike) -> np.ndarray:
    """The bfloat16 patterns (uint16) of `values` as ml_dtypes stores them: each value rounded
    to float32 first, then to the nearest bfloat16, ties to even (a NaN: 0x7fc0 with its
    sign)."""
    return bfloat16_bits_of_float32_bits(float32_bits(values))


def values_of_bits(bits16: ArrayLike) -> np.ndarray:
    """The numbers that the bfloat16 patterns `bits16` stand for, as float32 (exactly)."""
    bits16 = np.asarray(bits16, dtype=np.uint16)
    return (bits16.astype(np.uint32) << 16).view(np.float32)


def bfloat16_values(values: ArrayLike) -> np.ndarray:
    """`values` rounded to bfloat16, as float32 (exactly): NumPy's
    `.astype(ml_dtypes.bfloat16)` without ml_dtypes."""
    return values_of_bits(bfloat16_bits(values))
