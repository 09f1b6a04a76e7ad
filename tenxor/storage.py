"""Chapter 1: storage.

A tensor keeps all of its elements in one flat, typed buffer: its storage. The shape only
says how to read that buffer as a grid. This module defines the data types a storage can
hold, the storage itself, and the exercises of notebook 01_storage.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

Number = float | int | bool


@dataclass(frozen=True)
class DType:
    """A data type: its name, how many bytes one element takes, and what kind of number it is."""

    name: str
    itemsize: int
    kind: str  # "float", "int" or "bool"
    typecode: str  # the `array` typecode of the buffer that stores it

    def __repr__(self) -> str:
        return f"tenxor.{self.name}"


float64 = DType("float64", 8, "float", "d")
float32 = DType("float32", 4, "float", "f")
bfloat16 = DType("bfloat16", 2, "float", "H")  # stored as 16-bit patterns
int64 = DType("int64", 8, "int", "q")
int32 = DType("int32", 4, "int", "i")
bool_ = DType("bool", 1, "bool", "B")

DTYPES: dict[str, DType] = {d.name: d for d in (float64, float32, bfloat16, int64, int32, bool_)}

# From the narrowest to the widest: the result of mixing two dtypes is the later one.
PROMOTION_ORDER: tuple[DType, ...] = (bool_, int32, int64, bfloat16, float32, float64)


def as_dtype(dtype: DType | str) -> DType:
    """The DType named by `dtype` (a DType or one of the names in DTYPES)."""
    if isinstance(dtype, DType):
        return dtype
    if isinstance(dtype, str) and dtype in DTYPES:
        return DTYPES[dtype]
    raise TypeError(f"unknown dtype {dtype!r}; expected one of {', '.join(DTYPES)}")


def promote(a: DType, b: DType) -> DType:
    """The dtype that can hold the result of combining an `a` and a `b` element."""
    return max(a, b, key=PROMOTION_ORDER.index)


# ---------------------------------------------------------------------------------------------
# Exercises
# ---------------------------------------------------------------------------------------------


def numel(shape: Sequence[int]) -> int:
    """The number of elements a tensor of this shape holds (1 for the 0-d shape `()`).

    Raises ValueError if a size is negative (even when another size is 0); the message names
    the shape and the negative size, for example: `shape (2, -3) has a negative size -3`.
    """
    # BEGIN SOLUTION 1.1
    count = 1
    for size in shape:
        if size < 0:
            raise ValueError(f"shape {tuple(shape)} has a negative size {size}")
        count *= size
    return count
    # END SOLUTION 1.1


def round_to_bfloat16(bits32: int) -> int:
    """The bfloat16 bit pattern nearest to the float32 with bit pattern `bits32`, as an int.

    bfloat16 keeps the top 16 bits of a float32 (sign, 8 exponent bits, 7 fraction bits): the
    same range as float32 in half the bytes. The 16 bits it drops round to nearest, ties to the
    even pattern, as ml_dtypes rounds, so that rounding errors do not all lean one way; a carry
    into the exponent is right (the largest float32 values become infinity). A NaN gives a
    bfloat16 NaN (exponent bits all ones, fraction not 0), never infinity; any NaN pattern will
    do.

    Raises ValueError if `bits32` is not a 32-bit pattern (0 to 2**32 - 1); the message names
    `bits32` in decimal, for example: `4294967296 is not a 32-bit pattern`.
    """
    # BEGIN SOLUTION 1.2
    if not 0 <= bits32 < 2**32:
        raise ValueError(f"{bits32} is not a 32-bit pattern (expected 0 to {2**32 - 1})")
    exponent = (bits32 >> 23) & 0xFF
    mantissa = bits32 & 0x7FFFFF
    if exponent == 0xFF and mantissa != 0:
        return (bits32 >> 16) | 0x0040  # a quiet NaN with the same sign
    upper = bits32 >> 16
    lower = bits32 & 0xFFFF
    if lower > 0x8000 or (lower == 0x8000 and upper & 1):
        upper += 1  # a carry into the exponent is right: it rounds up to the next binade or inf
    return upper
    # END SOLUTION 1.2


def byte_strides(strides: Sequence[int], itemsize: int) -> tuple[int, ...]:
    """Strides measured in bytes (as NumPy reports them) from strides measured in elements.

    Raises ValueError if `itemsize` is not positive; the message names its value, for example:
    `itemsize must be positive, got 0`.
    """
    # BEGIN SOLUTION 1.3
    if itemsize <= 0:
        raise ValueError(f"itemsize must be positive, got {itemsize}")
    return tuple(stride * itemsize for stride in strides)
    # END SOLUTION 1.3


# ---------------------------------------------------------------------------------------------
# Bit patterns
# ---------------------------------------------------------------------------------------------


def float32_bits(values: Sequence[float]) -> list[int]:
    """The 32-bit patterns of `values` rounded to float32 (too large becomes infinity)."""
    return array("I", array("f", values).tobytes()).tolist()


def bfloat16_to_float(patterns: Sequence[int]) -> list[float]:
    """The numbers that bfloat16 bit patterns stand for."""
    widened = array("I", [pattern << 16 for pattern in patterns])
    return array("f", widened.tobytes()).tolist()


# ---------------------------------------------------------------------------------------------
# Storage
# ---------------------------------------------------------------------------------------------


def _typed_buffer(values: list[Number], dtype: DType) -> array:
    """`values` packed into a typed buffer of `dtype`; a clear error for values it cannot hold."""
    if dtype.kind == "int":
        _reject_floats(values, dtype)
    try:
        if dtype is bfloat16:
            return array("H", [round_to_bfloat16(b) for b in float32_bits(values)])
        if dtype is bool_:
            return array("B", [bool(v) for v in values])
        return array(dtype.typecode, values)
    except OverflowError:
        worst = max(values, key=abs)
        raise OverflowError(f"value {worst} does not fit in {dtype.name}") from None
    except TypeError:
        bad = next((v for v in values if not isinstance(v, int | float)), values)
        raise TypeError(
            f"{dtype.name} storage cannot hold {bad!r} ({type(bad).__name__})"
        ) from None


def _unpack(buffer: array, dtype: DType) -> list[Number]:
    """The Python numbers a typed buffer of `dtype` holds."""
    if dtype is bfloat16:
        return bfloat16_to_float(buffer)
    if dtype is bool_:
        return [bool(v) for v in buffer]
    return buffer.tolist()


def as_stored(values: Iterable[Number], dtype: DType) -> list[Number]:
    """`values` as `dtype` stores them (float32 rounded, bfloat16 rounded, ints range-checked),
    in a list of their own."""
    stored = list(values)
    if dtype is float64 and set(map(type, stored)) == {float}:
        return stored  # Python floats are float64 already: packing them would change nothing
    return _unpack(_typed_buffer(stored, dtype), dtype)


def to_bytes(values: list[Number], dtype: DType) -> bytes:
    """The raw bytes of `values` in `dtype`, in the machine's byte order."""
    return _typed_buffer(values, dtype).tobytes()


def _reject_floats(values: list[Number], dtype: DType) -> None:
    """Raise if a float is about to be stored in an integer dtype."""
    for value in values:
        if isinstance(value, float):
            raise TypeError(
                f"{dtype.name} storage cannot hold the float {value!r}; convert it first"
            )


class Storage:
    """A flat typed buffer: the one place where a tensor's elements live.

    Views share a Storage; a copy gets a new one. Elements are addressed by offset. Every
    element is stored exactly as `dtype` holds it (a float32 storage rounds to float32, an
    int32 storage refuses what does not fit in 32 bits). The elements are kept as Python
    numbers, because that is what pure-Python kernels read fastest; `tobytes()` packs them
    into the dtype's bytes.
    """

    def __init__(self, values: Iterable[Number], dtype: DType | str = float64) -> None:
        self.dtype = as_dtype(dtype)
        self.data: list[Number] = as_stored(values, self.dtype)

    def __len__(self) -> int:
        return len(self.data)

    def __getitem__(self, offset: int) -> Number:
        return self.data[offset]

    def __setitem__(self, offset: int, value: Number) -> None:
        self.data[offset] = as_stored([value], self.dtype)[0]

    def values(self) -> list[Number]:
        """Every element as a Python number, in offset order."""
        return self.data

    @property
    def buffer(self) -> array:
        """The elements packed in a typed buffer (bfloat16 as 16-bit patterns)."""
        return _typed_buffer(self.data, self.dtype)

    def tobytes(self) -> bytes:
        """The raw bytes of the elements, in the machine's byte order."""
        return to_bytes(self.data, self.dtype)

    def __repr__(self) -> str:
        shown = ", ".join(str(v) for v in self.data[:8])
        more = ", ..." if len(self) > 8 else ""
        return f"Storage([{shown}{more}], dtype={self.dtype.name}, size={len(self)})"
