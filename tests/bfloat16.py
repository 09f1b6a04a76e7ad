"""bfloat16 for the tests, in NumPy alone: the bit pattern of the bfloat16 nearest to a
number, and the number a bit pattern stands for.

NumPy has no bfloat16 dtype (the ml_dtypes package adds one, but not everywhere the tests
run, a browser for one). The tests hold bfloat16 values in float32 arrays instead: a bfloat16
is the upper half of a float32 (sign, 8 exponent bits, 7 fraction bits), so every bfloat16
value is a float32 value, held exactly.

These functions round as ml_dtypes does, bit for bit (tests/tooling/test_bfloat16_oracle.py
compares them on every upper half). They never call the course's own functions, and they
find the nearest bfloat16 by searching a table of all of them, not by working on the bits
as exercise 1.2 does: the oracle says what the answer is, never how to compute it.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

QUIET_NAN = 0x7FC0  # the bfloat16 NaN that ml_dtypes gives for any NaN, with its sign
SIGN = 0x8000
# Every bfloat16 magnitude, from pattern 0x0000 (zero) to 0x7f80 (infinity), in the order of
# their patterns, which is their order as numbers too. Infinity stands at 2**128, where the
# next binade would begin, so that a number past the largest finite bfloat16 rounds to
# infinity exactly when infinity is its nearer neighbour.
MAGNITUDES = (np.arange(0x7F81, dtype=np.uint32) << 16).view(np.float32).astype(np.float64)
MAGNITUDES[-1] = 2.0**128


def float32_bits(values: ArrayLike) -> np.ndarray:
    """The float32 bit patterns (uint32) of `values`, each rounded to float32 first as NumPy
    rounds it (too large for float32: infinity)."""
    with np.errstate(over="ignore", invalid="ignore"):
        return np.asarray(values, dtype=np.float32).view(np.uint32)


def nearest_magnitudes(magnitudes: np.ndarray) -> np.ndarray:
    """The patterns of the bfloat16 magnitudes nearest to `magnitudes` (float64, none of
    them NaN): of two equally near, the one with the even pattern."""
    above = np.minimum(np.searchsorted(MAGNITUDES, magnitudes), len(MAGNITUDES) - 1)
    below = np.maximum(above - 1, 0)
    to_below, to_above = magnitudes - MAGNITUDES[below], MAGNITUDES[above] - magnitudes
    take_above = (to_above < to_below) | ((to_above == to_below) & (above % 2 == 0))
    return np.where(take_above, above, below)


def bfloat16_bits_of_float32_bits(bits32: ArrayLike) -> np.ndarray:
    """The bfloat16 patterns (uint16) nearest to the float32 patterns `bits32`: round to
    nearest, ties to the even pattern (the largest float32 values give infinity); a NaN
    gives the quiet NaN 0x7fc0 with its sign, as ml_dtypes."""
    bits32 = np.asarray(bits32, dtype=np.uint32)
    with np.errstate(invalid="ignore"):  # a signalling NaN stays a NaN, quietly
        values = bits32.view(np.float32).astype(np.float64)  # each exactly
    nan, sign = np.isnan(values), (bits32 >> 16) & SIGN
    nearest = nearest_magnitudes(np.where(nan, 0.0, np.abs(values)))
    return np.where(nan, sign | QUIET_NAN, sign | nearest).astype(np.uint16)


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
