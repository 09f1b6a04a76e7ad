"""The tests' bfloat16 oracle (tests/bfloat16.py, NumPy alone) gives what ml_dtypes gives, bit
for bit: on every upper half of a float32 with the lower halves around a tie, on random float32
and float64 values, and on infinities, zeros, subnormals and NaNs. The exercises' tests use the
oracle, so that they run where ml_dtypes does not (a browser); this test holds it to ml_dtypes.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from tests.bfloat16 import (
    bfloat16_bits,
    bfloat16_bits_of_float32_bits,
    bfloat16_values,
    values_of_bits,
)

pytestmark = pytest.mark.provided

SEED = 20240611
LOWER_HALVES = (0x0000, 0x0001, 0x7FFF, 0x8000, 0x8001, 0xFFFF)  # around zero and the tie
FLOAT32_SPECIALS = (
    0x7F800000, 0xFF800000,  # inf, -inf
    0x00000000, 0x80000000,  # 0.0, -0.0
    0x00000001, 0x80000001, 0x00008000, 0x00018000, 0x007FFFFF, 0x807FFFFF,  # subnormals
    0x00010000, 0x007F8000, 0x00800000,  # bfloat16's smallest subnormal, largest, normal
    0x7F7FFFFF, 0xFF7FFFFF, 0x7F7F8000, 0x7F7F7FFF,  # near overflow to infinity
    0x7FC00000, 0xFFC00000, 0x7F800001, 0xFF800001, 0x7F808000,  # NaNs: quiet, lower payload
    0x7FFFFFFF, 0xFFFFFFFF, 0x7FA5A5A5, 0xFF81FFFF, 0x7FBFFFFF,  # NaNs: signalling, all ones
)  # fmt: skip
FLOAT64_SPECIALS = (
    0x7FF0000000000000, 0xFFF0000000000000,  # inf, -inf
    0x0000000000000000, 0x8000000000000000,  # 0.0, -0.0
    0x0000000000000001, 0x800FFFFFFFFFFFFF,  # float64 subnormals: zero in float32
    0x36A0000000000000, 0x3690000000000000,  # float32's smallest subnormal, and half of it
    0x47EFFFFFE0000000, 0x47EFFFFFF0000000,  # float32's largest, and beyond: infinity
    0x7FF8000000000000, 0xFFF8000000000000,  # NaNs: quiet, both signs
    0x7FF0000000000001, 0xFFF4000000000000, 0x7FFFFFFFFFFFFFFF,  # NaNs: signalling, payloads
)  # fmt: skip


def ml_dtypes_bits(values: np.ndarray) -> np.ndarray:
    """ml_dtypes' bfloat16 patterns (uint16) of a float32 or float64 array."""
    with np.errstate(over="ignore", invalid="ignore"):
        return values.astype(ml_dtypes.bfloat16).view(np.uint16)


def bits_of(values: np.ndarray) -> np.ndarray:
    """The bit patterns of a float32 or float64 array (uint32 or uint64)."""
    return values.view(np.uint32 if values.dtype == np.float32 else np.uint64)


def hex_of(patterns: np.ndarray, i: int) -> str:
    """Element `i` of an array of bit patterns in hex, two digits per byte (0x3f80)."""
    return f"{int(patterns[i]):#0{2 + 2 * patterns.itemsize}x}"


def assert_same_bits(what: str, inputs: np.ndarray, ours: np.ndarray, theirs: np.ndarray) -> None:
    """The oracle's patterns `ours` equal ml_dtypes' `theirs`, element by element; else the
    message names the first input that differs by its bits, and both answers."""
    wrong = np.flatnonzero(ours != theirs)
    i = wrong[0] if wrong.size else 0
    assert not wrong.size, (
        f"{what} of input bits {hex_of(inputs, i)}: the oracle gives {hex_of(ours, i)}, "
        f"ml_dtypes {hex_of(theirs, i)} ({wrong.size} inputs differ)"
    )


def assert_rounds_like_ml_dtypes(values: np.ndarray) -> None:
    """bfloat16_bits of a float32 or float64 array, and of its values as a list of Python
    floats, are ml_dtypes' patterns for it; bfloat16_values are ml_dtypes' values (as
    float32), bit for bit."""
    inputs, theirs = bits_of(values), ml_dtypes_bits(values)
    what = f"bfloat16 pattern of {values.dtype}"
    assert_same_bits(what, inputs, bfloat16_bits(values), theirs)
    with np.errstate(over="ignore", invalid="ignore"):
        listed = np.array(values.tolist(), dtype=ml_dtypes.bfloat16).view(np.uint16)
    assert_same_bits(f"{what} given as a list", inputs, bfloat16_bits(values.tolist()), listed)
    with np.errstate(over="ignore", invalid="ignore"):
        kept = values.astype(ml_dtypes.bfloat16).astype(np.float32).view(np.uint32)
    ours = bfloat16_values(values).view(np.uint32)
    assert_same_bits(f"bfloat16 value of {values.dtype} (float32 bits)", inputs, ours, kept)


def float32_of_bits(bits32: np.ndarray) -> np.ndarray:
    """The float32 values with these bit patterns."""
    return np.asarray(bits32, dtype=np.uint32).view(np.float32)


def float64_of_bits(bits64: np.ndarray) -> np.ndarray:
    """The float64 values with these bit patterns."""
    return np.asarray(bits64, dtype=np.uint64).view(np.float64)


@pytest.mark.parametrize("lower", LOWER_HALVES, ids=lambda lower: f"{lower:#06x}")
def test_every_upper_half_rounds_like_ml_dtypes(lower):
    """All 65536 upper halves with this lower half: the same pattern as ml_dtypes, NaNs
    included."""
    bits32 = (np.arange(2**16, dtype=np.uint32) << 16) | np.uint32(lower)
    theirs = ml_dtypes_bits(float32_of_bits(bits32))
    ours = bfloat16_bits_of_float32_bits(bits32)
    assert_same_bits("bfloat16 pattern of float32", bits32, ours, theirs)
    assert_rounds_like_ml_dtypes(float32_of_bits(bits32))


def test_random_float32_values_round_like_ml_dtypes():
    """Random bit patterns (any sign, exponent, NaN payload) and random values near 1."""
    rng = np.random.default_rng(SEED)
    patterns = float32_of_bits(rng.integers(0, 2**32, 4000, dtype=np.uint32))
    near_one = rng.standard_normal(2000).astype(np.float32)
    assert_rounds_like_ml_dtypes(patterns)
    assert_rounds_like_ml_dtypes(near_one)


def test_random_float64_values_round_like_ml_dtypes():
    """Random float64 values of any exponent float32 has, random bit patterns (mostly zero or
    infinite in float32), and float32 ties nudged in float64: rounded to float32 first, they
    are ties again, as ml_dtypes rounds them."""
    rng = np.random.default_rng(SEED + 1)
    scaled = rng.standard_normal(3000) * 2.0 ** rng.integers(-150, 129, 3000)
    patterns = float64_of_bits(rng.integers(0, 2**64, 2000, dtype=np.uint64))
    upper = rng.integers(0, 0x7F7F, 1000, dtype=np.uint32)
    ties = float32_of_bits((upper << 16) | np.uint32(0x8000)).astype(np.float64)
    nudged = np.concatenate([ties * (1 + 2.0**-40), ties * (1 - 2.0**-40)])
    for values in (scaled, patterns, nudged):
        assert_rounds_like_ml_dtypes(values)


def test_special_values_round_like_ml_dtypes():
    """Infinities, zeros of both signs, subnormals, values near overflow and NaNs of both
    signs and many payloads, as float32 and as float64: the pattern ml_dtypes gives."""
    assert_rounds_like_ml_dtypes(float32_of_bits(np.array(FLOAT32_SPECIALS)))
    assert_rounds_like_ml_dtypes(float64_of_bits(np.array(FLOAT64_SPECIALS, dtype=np.uint64)))


def test_values_of_every_pattern_are_ml_dtypes_values():
    """values_of_bits of every bfloat16 pattern is ml_dtypes' float32 of it, bit for bit
    (NaN payloads too)."""
    bits16 = np.arange(2**16, dtype=np.uint32).astype(np.uint16)
    theirs = bits16.view(ml_dtypes.bfloat16).astype(np.float32).view(np.uint32)
    ours = values_of_bits(bits16).view(np.uint32)
    assert_same_bits("float32 value of bfloat16", bits16, ours, theirs)
