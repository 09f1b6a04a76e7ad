"""Chapter 1: storage. Element counts, bfloat16 rounding, byte strides and the Storage buffer,
checked against NumPy (for bfloat16, against tests/bfloat16.py, which rounds as ml_dtypes
does, and whose values NumPy holds as float32)."""

from __future__ import annotations

import struct
from array import array

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from numpy.lib.stride_tricks import as_strided

import tenxor
from tenxor.core import Tenxor
from tenxor.storage import Storage, bfloat16_to_float, byte_strides, numel, round_to_bfloat16
from tenxor.strides import Layout
from tests.bfloat16 import (
    bfloat16_bits,
    bfloat16_bits_of_float32_bits,
    bfloat16_values,
    values_of_bits,
)
from tests.support import (
    Case,
    Mismatch,
    cases,
    expect,
    layouts,
    numpy_dtype,
    raises_naming,
    row_major_strides,
    strided,
)

FLOAT_DTYPES = (np.dtype(np.float64), np.dtype(np.float32))  # bfloat16 values are float32
ALL_DTYPES = [
    tenxor.float64,
    tenxor.float32,
    tenxor.bfloat16,
    tenxor.int64,
    tenxor.int32,
    tenxor.bool,
]


def read_as(data: bytes, dtype: tenxor.DType) -> list:
    """The numbers `data` holds when its bytes are read with `dtype`'s typecode."""
    items = array(dtype.typecode, data).tolist()
    if dtype is tenxor.bfloat16:
        return bfloat16_to_float(items)
    if dtype is tenxor.bool:
        return [bool(item) for item in items]
    return items


def assert_equal_arrays(what: str, actual: np.ndarray, expected: np.ndarray, rule: str) -> None:
    """Equal elements, NaN equal to NaN (bfloat16 values are compared as float32); otherwise
    the failure shows the first element that differs, where it is, and NumPy's element."""
    expect(f"shape of {what}", actual.shape, expected.shape, rule)
    same = actual == expected
    if expected.dtype.kind == "f":
        same |= np.isnan(actual) & np.isnan(expected)
    if not same.all():
        at = tuple(int(i) for i in np.argwhere(~same)[0])
        place = f"offset {at[0]}" if actual.ndim == 1 else f"index {at}"
        got, due = actual[at].item(), expected[at].item()
        raise Mismatch(f"{what}, the element at {place}", got, due, rule)


class Bytes(bytes):
    """Bytes that print in hex, one pair of digits per byte (cd 3d)."""

    def __repr__(self) -> str:
        return self.hex(" ")


def expect_type(what: str, value: object, expected: type) -> None:
    """`value` is of exactly the type `expected` (a subclass, a list for a tuple, fails)."""
    if type(value) is not expected:
        raise Mismatch(f"type of {what}", type(value).__name__, expected.__name__)


AS_NUMPY = "as NumPy stores them"
NUMPY_STRIDES = "NumPy's .strides of the same view: each stride times the item size"


def stored_dtype(dtype: tenxor.DType) -> np.dtype:
    """The NumPy dtype of `dtype`'s elements as they lie in memory, with its item size:
    bfloat16's bit patterns as uint16, any other dtype as numpy_dtype gives it."""
    return np.dtype(np.uint16) if dtype is tenxor.bfloat16 else numpy_dtype(dtype)


def as_stored(values: np.ndarray, dtype: tenxor.DType) -> np.ndarray:
    """NumPy's elements of `dtype` as they lie in memory (its `.tobytes()` are the bytes):
    bfloat16 values as their uint16 bit patterns, the others unchanged."""
    return bfloat16_bits(values) if dtype is tenxor.bfloat16 else values


def stored_as(raw: np.ndarray, dtype: tenxor.DType) -> np.ndarray:
    """The values of `dtype` that the elements of `raw` (of `stored_dtype(dtype)`) hold:
    bfloat16 patterns read as float32, the others unchanged."""
    return values_of_bits(raw) if dtype is tenxor.bfloat16 else raw


def stored_values(storage: Storage, dtype: np.dtype) -> np.ndarray:
    """The elements of a Storage, in offset order, as a NumPy array of `dtype`."""
    return np.array(list(storage.values()), dtype=dtype)


def layout_of(view: np.ndarray, base: np.ndarray) -> Layout:
    """The layout (in elements) of a NumPy view into the 1-D array `base`."""
    itemsize = view.dtype.itemsize
    start = view.__array_interface__["data"][0] - base.__array_interface__["data"][0]
    strides = tuple(s // itemsize for s in view.strides)
    return Layout(view.shape, strides, start // itemsize)


def assert_strided_tensor_matches(storage: Storage, expected: np.ndarray) -> None:
    """A non-contiguous tensor over `storage` reads NumPy's view of `expected` (12 elements)
    and reports NumPy's byte strides."""
    view = expected.reshape(3, 4)[::-1, 1::2]
    t = Tenxor(storage, layout_of(view, expected))
    expect(f"byte strides of a tensor with {t.layout}", t.byte_strides, view.strides, NUMPY_STRIDES)
    buffer = stored_values(storage, expected.dtype)
    assert_equal_arrays("the strided view", strided(buffer, t.layout), view, AS_NUMPY)


# ---------------------------------------------------------------------------------------------
# 1.1 numel
# ---------------------------------------------------------------------------------------------

NUMEL = "the product of the sizes, as NumPy's size"

shapes = st.lists(st.integers(0, 6) | st.integers(1, 3), max_size=6).map(tuple)


@pytest.mark.exercise("1.1")
@given(shapes)
@example((2, 3, 4))
def test_numel_matches_numpy_size(shape):
    """numel(shape) is the size of a NumPy array of that shape (size-0 dims give 0)."""
    expected = np.zeros(shape, dtype=np.bool_).size
    expect(f"number of elements of shape {shape}", numel(shape), expected, NUMEL)


@pytest.mark.exercise("1.1")
@pytest.mark.parametrize(
    "shape",
    [(), (0,), (1,), (7,), (2, 3), (3, 0, 4), (1, 1, 1), (2, 3, 4, 5, 6), (1000, 1000, 1000)],
)
def test_numel_of_chosen_shapes(shape):
    """The 0-d shape holds one element; any size-0 dim makes the count 0; no overflow."""
    expected = int(np.prod(shape, dtype=np.int64))
    result = numel(shape)
    expect_type("the number of elements", result, int)
    rule = "the product of the sizes: 1 for the 0-d shape, 0 with a size-0 dim"
    expect(f"number of elements of shape {shape}", result, expected, rule)


@pytest.mark.exercise("1.1")
def test_numel_accepts_a_list_and_leaves_it_alone():
    """A shape given as a list works and is not modified."""
    shape = [4, 5, 6]
    expect("number of elements of [4, 5, 6]", numel(shape), np.zeros(shape).size, NUMEL)
    expect("the shape list after the call", shape, [4, 5, 6], "the argument is not modified")


@pytest.mark.exercise("1.1")
@pytest.mark.parametrize("shape", [(-4,), (3, -4), (2, -4, 0), (0, -4), (3, 0, -4)])
def test_numel_rejects_a_negative_size(shape):
    """A negative size is a ValueError that names it (even when another dim is 0, before it
    or after it)."""
    with raises_naming(ValueError, -4):
        numel(shape)


@pytest.mark.exercise("1.1")
@given(cases())
@example(Case(np.arange(30.0), Layout((3, 4), (1, 3), 2)))
def test_tensor_numel_matches_numpy(case):
    """t.numel() of any layout (offsets, stride 0, negative strides) is NumPy's size."""
    got = case.tensor().numel()
    expect(f"t.numel() of a tensor with {case.layout}", got, case.array.size, NUMEL)


# ---------------------------------------------------------------------------------------------
# 1.2 round_to_bfloat16
# ---------------------------------------------------------------------------------------------


def bfloat16_oracle(bits32: int) -> int:
    """The bfloat16 bit pattern for the float32 with this bit pattern, as ml_dtypes gives it."""
    return int(bfloat16_bits_of_float32_bits([bits32])[0])


def is_float32_nan(bits32: int) -> bool:
    return (bits32 >> 23) & 0xFF == 0xFF and bits32 & 0x7FFFFF != 0


def is_bfloat16_nan(bits16: int) -> bool:
    return (bits16 >> 7) & 0xFF == 0xFF and bits16 & 0x7F != 0


class Bits(int):
    """A bit pattern: an int that prints in hex, 4 digits or more (0x3f81)."""

    def __repr__(self) -> str:
        return f"{int(self):#06x}"


def bits(value: object) -> object:
    """`value` printed in hex when it is an int (anything else as it is)."""
    return Bits(value) if type(value) is int else value


ROUNDING = "round to nearest, ties to even, as ml_dtypes rounds"
NAN_STAYS = "a NaN stays a NaN"


def pattern_of(bits32: int) -> str:
    """The quantity compared: the bfloat16 pattern of the float32 pattern `bits32`."""
    return f"bfloat16 pattern of float32 {bits32:#010x}"


def expect_16_bits(bits32: int, result: object) -> None:
    """`result` is an int from 0 to 0xffff."""
    if not isinstance(result, int):
        raise Mismatch(f"type of the {pattern_of(bits32)}", type(result).__name__, "int")
    if not 0 <= result < 2**16:
        raise Mismatch(pattern_of(bits32), bits(result), "a 16-bit pattern, 0 .. 0xffff")


def expect_nan(bits32: int, result: object) -> None:
    """`result` is a bfloat16 NaN pattern (exponent all ones, fraction not 0)."""
    if not is_bfloat16_nan(result):
        raise Mismatch(
            pattern_of(bits32),
            bits(result),
            "a NaN: 0x7f81 .. 0x7fff or 0xff81 .. 0xffff",
            NAN_STAYS,
        )


def assert_rounds_like_ml_dtypes(bits32: int) -> None:
    result = round_to_bfloat16(bits32)
    expect_16_bits(bits32, result)
    if is_float32_nan(bits32):
        expect_nan(bits32, result)
    else:
        expect(pattern_of(bits32), bits(result), Bits(bfloat16_oracle(bits32)), ROUNDING)


def f32(value: float) -> int:
    """The float32 bit pattern of `value`."""
    return struct.unpack("<I", struct.pack("<f", value))[0]


ROUNDING_CASES = {
    "one": 0x3F800000,
    "below_tie_rounds_down": 0x3F807FFF,
    "tie_to_even_stays_down": 0x3F808000,
    "above_tie_rounds_up": 0x3F808001,
    "tie_to_even_goes_up": 0x3F818000,
    "tie_odd_just_above": 0x3F818001,
    "lower_half_all_ones": 0x3F80FFFF,
    "negative_tie_goes_up": 0xBF818000,
    "negative_tie_stays_down": 0xBF808000,
    "negative_above_tie": 0xC0490FDB,
    "pi": f32(3.14159265),
    "one_third": f32(1 / 3),
    "carry_into_exponent": 0x3FFF8000,
    "carry_into_exponent_above_tie": 0x3FFFC000,
    "negative_carry_into_exponent": 0xBFFFFFFF,
    "largest_float32_to_inf": 0x7F7FFFFF,
    "negative_largest_float32_to_minus_inf": 0xFF7FFFFF,
    "largest_bfloat16_stays": 0x7F7F0000,
    "just_below_overflow_tie": 0x7F7F7FFF,
    "overflow_tie_to_inf": 0x7F7F8000,
    "smallest_float32_subnormal": 0x00000001,
    "subnormal_tie_to_even_zero": 0x00008000,
    "subnormal_tie_to_even_up": 0x00018000,
    "subnormal_above_tie": 0x00008001,
    "largest_subnormal_to_normal": 0x007FFFFF,
    "negative_subnormal": 0x807FFFFF,
    "zero": 0x00000000,
    "negative_zero": 0x80000000,
    "tiny_negative_to_negative_zero": 0x80000001,
    "inf": 0x7F800000,
    "minus_inf": 0xFF800000,
}

NAN_CASES = {
    "quiet_nan": 0x7FC00000,
    "negative_quiet_nan": 0xFFC00000,
    "nan_payload_only_in_lower_half": 0x7F800001,
    "negative_nan_payload_only_in_lower_half": 0xFF800001,
    "nan_lower_half_tie": 0x7F808000,
    "nan_all_ones": 0x7FFFFFFF,
    "negative_nan_all_ones": 0xFFFFFFFF,
    "nan_with_upper_payload": 0x7FA5A5A5,
}


@pytest.mark.exercise("1.2")
@pytest.mark.bit_patterns
@pytest.mark.parametrize("bits32", ROUNDING_CASES.values(), ids=ROUNDING_CASES.keys())
def test_round_to_bfloat16_matches_ml_dtypes(bits32):
    """Round to nearest, ties to even, both directions, with carries, subnormals and signs."""
    assert_rounds_like_ml_dtypes(bits32)


@pytest.mark.exercise("1.2")
@pytest.mark.bit_patterns
def test_round_to_bfloat16_is_not_truncation():
    """Dropping the lower 16 bits is wrong above a tie and on an odd tie."""
    rule = "above a tie, and on a tie after an odd pattern, round up (not truncation)"
    for bits32 in (0x3F808001, 0x3F818000, 0x3F80FFFF):
        expected = bfloat16_oracle(bits32)
        assert expected == (bits32 >> 16) + 1
        expect(pattern_of(bits32), bits(round_to_bfloat16(bits32)), Bits(expected), rule)


@pytest.mark.exercise("1.2")
@pytest.mark.bit_patterns
def test_round_to_bfloat16_ties_go_to_the_even_pattern():
    """An exact tie never rounds away from zero blindly: it lands on an even pattern."""
    for upper in (0x3F80, 0x3F81, 0x4000, 0x4001, 0xC123, 0xC124, 0x0000, 0x0001):
        bits32 = (upper << 16) | 0x8000
        expected = bfloat16_oracle(bits32)
        assert expected % 2 == 0 and expected in (upper, upper + 1)
        rule = "an exact tie rounds to the even pattern of the two nearest"
        expect(pattern_of(bits32), bits(round_to_bfloat16(bits32)), Bits(expected), rule)


@pytest.mark.exercise("1.2")
@pytest.mark.bit_patterns
def test_round_to_bfloat16_keeps_the_sign_of_zero_and_infinities():
    """-0.0 stays -0.0 and infinities stay infinities of the same sign."""
    for value in (0.0, -0.0, np.inf, -np.inf):
        bits32 = f32(value)
        expected = bfloat16_oracle(bits32)
        assert expected == bits32 >> 16
        rule = f"{value} stays {value}"
        expect(pattern_of(bits32), bits(round_to_bfloat16(bits32)), Bits(expected), rule)


@pytest.mark.exercise("1.2")
@pytest.mark.bit_patterns
def test_round_to_bfloat16_overflows_to_infinity():
    """The largest float32 rounds up to infinity (exponent carry), as ml_dtypes does."""
    expected = bfloat16_oracle(0x7F7FFFFF)
    assert np.isinf(values_of_bits([expected])[0])
    rule = "the largest float32 rounds up, carrying into the exponent: infinity"
    expect(pattern_of(0x7F7FFFFF), bits(round_to_bfloat16(0x7F7FFFFF)), Bits(expected), rule)


@pytest.mark.exercise("1.2")
@pytest.mark.bit_patterns
@pytest.mark.parametrize("bits32", NAN_CASES.values(), ids=NAN_CASES.keys())
def test_round_to_bfloat16_keeps_nan_a_nan(bits32):
    """Every NaN gives a NaN, never an infinity (truncation) or a carry into the sign."""
    assert is_float32_nan(bits32)
    result = round_to_bfloat16(bits32)
    expect_nan(bits32, result)
    expect_16_bits(bits32, result)


@pytest.mark.exercise("1.2")
@pytest.mark.bit_patterns
@given(st.integers(0, 2**32 - 1))
@example(0x40490FDB)  # pi
def test_round_to_bfloat16_of_random_bit_patterns(bits32):
    """Any 32-bit pattern rounds as ml_dtypes rounds it (NaNs stay NaN)."""
    assert_rounds_like_ml_dtypes(bits32)


@pytest.mark.exercise("1.2")
@pytest.mark.bit_patterns
@given(st.integers(0, 2**16 - 1), st.sampled_from([0x7FFF, 0x8000, 0x8001, 0x0000, 0xFFFF]))
@example(0x3F81, 0x8000)  # a tie after an odd pattern: rounds up
def test_round_to_bfloat16_near_ties_of_random_upper_halves(upper, lower):
    """Lower halves just below, at and above the tie, for any upper half."""
    assert_rounds_like_ml_dtypes((upper << 16) | lower)


@pytest.mark.exercise("1.2")
@pytest.mark.parametrize("bits32", [-1, 2**32, 2**40])
def test_round_to_bfloat16_rejects_values_that_are_not_32_bit_patterns(bits32):
    """Out-of-range input is a ValueError that names it."""
    with raises_naming(ValueError, bits32):
        round_to_bfloat16(bits32)


# ---------------------------------------------------------------------------------------------
# 1.3 byte_strides
# ---------------------------------------------------------------------------------------------

dtype_params = [pytest.param(d, marks=pytest.mark.exercise("1.3"), id=d.name) for d in ALL_DTYPES]


@pytest.mark.parametrize("dtype", dtype_params)
@given(layouts())
@example(layout_and_size=(Layout((3, 4), (1, 3), 2), 14))
def test_byte_strides_match_numpy_strides(dtype, layout_and_size):
    """byte_strides(strides, itemsize) is NumPy's .strides of the same view, for every dtype."""
    layout, size = layout_and_size
    buffer = np.zeros(size, dtype=stored_dtype(dtype))
    result = byte_strides(layout.strides, dtype.itemsize)
    what = f"byte strides of strides {layout.strides} with item size {dtype.itemsize}"
    expect_type("the byte strides", result, tuple)
    expect(what, result, strided(buffer, layout).strides, NUMPY_STRIDES)


@pytest.mark.parametrize("dtype", dtype_params)
def test_byte_strides_of_numpy_views(dtype):
    """Element strides of transposed, sliced and reversed NumPy arrays scale back to bytes."""
    np_dtype = stored_dtype(dtype)
    assert dtype.itemsize == np_dtype.itemsize
    base = np.arange(120).astype(np_dtype).reshape(2, 3, 4, 5)
    views = [
        base,
        base.transpose(3, 1, 0, 2),
        base[:, ::-1, 1::2, ::3],
        base[1, None, :, 2],
        base[..., 0],
        base[0, 0, 0, 0, ...],
        np.broadcast_to(base[:, :1], (2, 6, 4, 5)),
    ]
    for view in views:
        elements = tuple(s // np_dtype.itemsize for s in view.strides)
        what = f"byte strides of strides {elements} with item size {dtype.itemsize}"
        expect(what, byte_strides(elements, dtype.itemsize), view.strides, NUMPY_STRIDES)


@pytest.mark.exercise("1.3")
@pytest.mark.parametrize(
    ("strides", "itemsize"),
    [((12, 4, 1), 8), ((1, 3), 2), ((-5, 0, 7), 4), ((), 8), ((6,), 1)],
)
def test_byte_strides_multiply_each_stride(strides, itemsize):
    """Each stride is multiplied (not divided, not offset) by the item size, in order."""
    array = as_strided(
        np.zeros(200, dtype=f"V{itemsize}")[100:],
        shape=(2,) * len(strides),
        strides=tuple(s * itemsize for s in strides),
    )
    what = f"byte strides of strides {strides} with item size {itemsize}"
    expect(what, byte_strides(strides, itemsize), array.strides, NUMPY_STRIDES)


@pytest.mark.exercise("1.3")
def test_byte_strides_accepts_a_list():
    """Strides given as a list give a tuple."""
    expected = np.zeros((2, 3), dtype=np.int32).strides
    rule = "a tuple, also for strides given as a list"
    expect(
        "byte strides of strides [3, 1] with item size 4", byte_strides([3, 1], 4), expected, rule
    )


@pytest.mark.exercise("1.3")
@pytest.mark.parametrize("itemsize", [0, -8])
def test_byte_strides_rejects_an_itemsize_that_is_not_positive(itemsize):
    """An item size of 0 or less is a ValueError that names it."""
    with raises_naming(ValueError, itemsize):
        byte_strides((3, 1), itemsize)


@pytest.mark.exercise("1.3")
@pytest.mark.parametrize("dtype", [d for d in ALL_DTYPES if d is not tenxor.bfloat16], ids=str)
@given(layouts())
@example(layout_and_size=(Layout((3, 4), (1, 3), 2), 14))
def test_tensor_byte_strides_match_numpy(dtype, layout_and_size):
    """t.byte_strides and t.itemsize of a tensor of any dtype are NumPy's strides and itemsize.

    (A bfloat16 tensor needs 1.2 to be built; byte_strides itself is checked for it above.)
    """
    layout, size = layout_and_size
    buffer = (np.arange(size) % 2).astype(numpy_dtype(dtype))
    t = Tenxor(Storage(buffer.tolist(), dtype), layout)
    view = strided(buffer, layout)
    expect(f"itemsize of a {dtype.name} tensor", t.itemsize, view.itemsize, "NumPy's itemsize")
    expect(f"byte strides of a tensor with {layout}", t.byte_strides, view.strides, NUMPY_STRIDES)


# ---------------------------------------------------------------------------------------------
# Storage: values, bytes, item sizes, and the same bytes read as another dtype
# ---------------------------------------------------------------------------------------------


def storage_param(dtype: tenxor.DType):
    """bfloat16 storage rounds with 1.2; the others are checked together with byte strides."""
    exercise = "1.2" if dtype is tenxor.bfloat16 else "1.3"
    return pytest.param(dtype, marks=pytest.mark.exercise(exercise), id=dtype.name)


storage_params = [storage_param(d) for d in ALL_DTYPES]

FLOATS = [
    0.1, -2.5, 1 / 3, -1e40, 3.4e38, 1e-45, -1e-310, -0.0,
    float("inf"), float("nan"), 1 + 2**-8, 1 + 2**-8 + 2**-30,
]  # fmt: skip
SAMPLE_VALUES = {
    "float": FLOATS,
    "int32": [0, 1, -1, 7, 2**31 - 1, -(2**31), 123456789, -98765, 42, 3, -3, 65536],
    "int64": [0, 1, -1, 7, 2**63 - 1, -(2**63), 2**40 + 3, -(2**35), 42, 3, -3, 65536],
    "bool": [True, False, 0, 1, 5, -2, 0.5, 0.0, True, False, False, True],
}


def sample_values(dtype: tenxor.DType) -> list:
    """Twelve values that show how `dtype` stores numbers (rounding, overflow, signs)."""
    if dtype.name in SAMPLE_VALUES:
        return SAMPLE_VALUES[dtype.name]
    return SAMPLE_VALUES[dtype.kind]


def numpy_stored(values: list, dtype: tenxor.DType) -> np.ndarray:
    """The 1-D NumPy array NumPy builds from `values` with this dtype (bfloat16: the values
    ml_dtypes keeps, as float32)."""
    if dtype is tenxor.bfloat16:
        return bfloat16_values(values)
    with np.errstate(over="ignore", invalid="ignore"):
        return np.array(values, dtype=numpy_dtype(dtype))


def numpy_item(value: object, dtype: tenxor.DType) -> object:
    """`value` as an array of `dtype` takes it in NumPy's item assignment: for bfloat16, the
    value ml_dtypes keeps; for the others, `value` itself, which NumPy converts."""
    return bfloat16_values(value) if dtype is tenxor.bfloat16 else value


def expect_bytes(
    what: str, data: bytes, expected: np.ndarray, skip: np.ndarray | None = None
) -> None:
    """`data` is `expected.tobytes()`, element by element (except where `skip` is True); else
    the failure shows the bytes of the first element that differs."""
    rule = f"NumPy's tobytes(): {expected.itemsize} bytes per element, in offset order"
    expect(f"number of bytes in {what}", len(data), expected.nbytes, rule)
    size = expected.itemsize
    want = expected.tobytes()
    for offset in range(expected.size):
        got_item, want_item = (b[offset * size : (offset + 1) * size] for b in (data, want))
        if (skip is None or not skip[offset]) and got_item != want_item:
            what_item = f"bytes of the element at offset {offset} in {what}"
            raise Mismatch(what_item, Bytes(got_item), Bytes(want_item), rule)


def assert_same_bytes(data: bytes, expected: np.ndarray, dtype: tenxor.DType) -> None:
    """`data` is NumPy's bytes for `expected`, NumPy's elements of `dtype`; any NaN pattern
    may stand for a NaN."""
    stored = as_stored(expected, dtype)
    if expected.dtype not in FLOAT_DTYPES:
        expect_bytes("tobytes()", data, stored)
        return
    rule = f"NumPy's tobytes(): {stored.itemsize} bytes per element"
    expect("number of bytes in tobytes()", len(data), stored.nbytes, rule)
    got = stored_as(np.frombuffer(data, dtype=stored.dtype), dtype)
    with np.errstate(invalid="ignore"):
        nan = np.isnan(expected.astype(np.float64))
        got_nan = np.isnan(got.astype(np.float64))
    for offset in np.flatnonzero(nan & ~got_nan):
        rule = "any NaN pattern may stand for a NaN, but it must be one"
        raise Mismatch(
            f"element at offset {offset} read from tobytes()",
            float(got[offset]),
            float("nan"),
            rule,
        )
    expect_bytes("tobytes()", data, stored, skip=nan)


def value_strategy(dtype: tenxor.DType) -> st.SearchStrategy:
    if dtype.kind == "float":
        return st.floats()
    if dtype.kind == "bool":
        return st.booleans() | st.integers(-3, 3)
    bits = dtype.itemsize * 8
    return st.integers(-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)


def assert_same_elements(storage: Storage, expected: np.ndarray) -> None:
    """The storage holds exactly NumPy's elements: NaN where NumPy has NaN, the sign of zero."""
    expect("length of the storage", len(storage), expected.size, "one element per value")
    result = stored_values(storage, expected.dtype)
    assert_equal_arrays("the storage", result, expected, AS_NUMPY)
    if expected.dtype in FLOAT_DTYPES:
        numbers = ~np.isnan(expected.astype(np.float64))
        signs = np.signbit(result[numbers].astype(np.float64))
        expected_signs = np.signbit(expected[numbers].astype(np.float64))
        for offset in np.flatnonzero(numbers)[signs != expected_signs][:1]:
            got, due = float(result[offset]), float(expected[offset])
            rule = "the sign is kept, -0.0 too"
            raise Mismatch(f"the storage, the element at offset {offset}", got, due, rule)
    for offset in range(len(storage)):
        single = np.array([storage[offset]], dtype=expected.dtype)
        assert_equal_arrays(f"storage[{offset}]", single, expected[offset : offset + 1], AS_NUMPY)


@pytest.mark.parametrize("dtype", storage_params)
def test_storage_holds_values_as_numpy_stores_them(dtype):
    """Storage rounds floats to float32 or bfloat16, keeps ints to their full range and turns
    any non-zero value into True, as NumPy does; a strided tensor over it has NumPy's byte
    strides."""
    values = sample_values(dtype)
    expected = numpy_stored(values, dtype)
    storage = Storage(values, dtype)
    if storage.dtype is not dtype:
        raise Mismatch("dtype of the storage", storage.dtype, dtype, "the dtype it was made with")
    assert_same_elements(storage, expected)
    if dtype is not tenxor.bfloat16:
        assert_strided_tensor_matches(storage, expected)


@pytest.mark.parametrize("dtype", storage_params)
@given(data=st.data())
def test_storage_of_random_values_matches_numpy(dtype, data):
    """Random values (any float, any int in range) are stored exactly as NumPy stores them."""
    values = data.draw(st.lists(value_strategy(dtype), min_size=12, max_size=12), label="values")
    expected = numpy_stored(values, dtype)
    storage = Storage(values, dtype)
    assert_same_elements(storage, expected)
    assert_same_bytes(storage.tobytes(), expected, dtype)
    if dtype is not tenxor.bfloat16:
        assert_strided_tensor_matches(storage, expected)


@pytest.mark.parametrize("dtype", storage_params)
def test_storage_bytes_and_itemsize_match_numpy(dtype):
    """tobytes() is NumPy's tobytes() for the same values, itemsize bytes per element."""
    values = sample_values(dtype)
    expected = numpy_stored(values, dtype)
    storage = Storage(values, dtype)
    stored = as_stored(expected, dtype)
    expect(f"itemsize of {dtype.name}", dtype.itemsize, stored.itemsize, "NumPy's itemsize")
    expect_bytes("tobytes()", storage.tobytes(), stored)
    rule = "itemsize bytes per element"
    expect(
        "number of bytes in tobytes()", len(storage.tobytes()), len(values) * dtype.itemsize, rule
    )
    if dtype is not tenxor.bfloat16:
        view = expected.reshape(3, 2, 2).transpose(2, 0, 1)
        t = Tenxor(storage, Layout(view.shape, tuple(s // view.itemsize for s in view.strides)))
        what = f"byte strides of a tensor with {t.layout}"
        expect(what, t.byte_strides, view.strides, NUMPY_STRIDES)


@pytest.mark.parametrize("dtype", storage_params)
def test_storage_setitem_stores_as_numpy_does(dtype):
    """Writing one element converts it as NumPy's item assignment does."""
    values = sample_values(dtype)
    new_values = sample_values(dtype)[::-1]
    expected = numpy_stored(values, dtype)
    storage = Storage(values, dtype)
    for offset, value in enumerate(new_values):
        storage[offset] = value
        with np.errstate(over="ignore", invalid="ignore"):
            expected[offset] = numpy_item(value, dtype)
    assert_same_elements(storage, expected)
    expect_bytes("tobytes()", storage.tobytes(), as_stored(expected, dtype))
    if dtype is not tenxor.bfloat16:
        assert_strided_tensor_matches(storage, expected)


def reinterpret_params():
    """Every (source, target) pair; a bfloat16 storage needs 1.2, the others check 1.3."""
    params = []
    for source in ALL_DTYPES:
        for target in ALL_DTYPES:
            uses_bfloat16 = tenxor.bfloat16 in (source, target)
            params.append(
                pytest.param(
                    source,
                    target,
                    marks=pytest.mark.exercise("1.2" if uses_bfloat16 else "1.3"),
                    id=f"{source.name}-as-{target.name}",
                )
            )
    return params


@pytest.mark.parametrize(("source", "target"), reinterpret_params())
def test_same_bytes_read_as_another_dtype_match_numpy_view(source, target):
    """The bytes of a storage read as another dtype give NumPy's .view(other): the same
    elements, which a storage of that dtype holds unchanged (same bytes back), and a tensor
    over them has the byte strides of NumPy's view."""
    values = (sample_values(source) * 2)[:16]
    stored = numpy_stored(values, source).reshape(2, 8)
    storage = Storage(values, source)
    assert_same_bytes(storage.tobytes(), stored.reshape(-1), source)
    # NumPy's stored.view(target): the same bytes read as the target's elements
    expected = stored_as(as_stored(stored, source).view(stored_dtype(target)), target)
    data = storage.tobytes()
    rule = f"{target.itemsize} bytes per {target.name} element"
    expect(
        f"number of {target.name} elements in the bytes",
        len(data) // target.itemsize,
        expected.size,
        rule,
    )
    other = Storage(read_as(data, target), target)
    expect(f"length of the {target.name} storage", len(other), expected.size, rule)
    rule = f"NumPy's .view({target.name}) of the same bytes"
    got = stored_values(other, expected.dtype)
    assert_equal_arrays(f"the {target.name} storage", got, expected.reshape(-1), rule)
    if target is not tenxor.bool:
        assert_same_bytes(other.tobytes(), expected.reshape(-1), target)
    if tenxor.bfloat16 not in (source, target):
        t = Tenxor(other, Layout(expected.shape, row_major_strides(expected.shape)))
        what = f"byte strides of a tensor with {t.layout}"
        expect(what, t.byte_strides, expected.strides, NUMPY_STRIDES)
