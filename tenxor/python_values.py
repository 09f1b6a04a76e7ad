"""Python values as tensor elements: provided, not an exercise.

A tensor is made from Python values: numbers, nested lists, NumPy arrays, and shapes given as
separate sizes or as one sequence. This module reads them: which dtype a value asks for, how
an element converts to a dtype, and nested lists read in row-major order (and back). Both the
Tenxor class (tenxor/core.py), whose operators take numbers and lists, and the constructors
(tenxor/creation.py) use it, so it sits below them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from .storage import DTYPES, DType, Number, as_dtype, bool_, float64, int64, promote
from .strides import Shape

# ---------------------------------------------------------------------------------------------
# Dtypes of Python values
# ---------------------------------------------------------------------------------------------


def dtype_of_number(value: Number) -> DType:
    """The dtype a Python number asks for: bool, int64 or float64."""
    if isinstance(value, bool):
        return bool_
    if isinstance(value, int):
        return int64
    return float64


def common_dtype(dtypes: Iterable[DType]) -> DType:
    """The dtype that holds every dtype in `dtypes` (float64 for none)."""
    result: DType | None = None
    for dtype in dtypes:
        result = dtype if result is None else promote(result, dtype)
    return float64 if result is None else result


def numpy_dtype(dtype: Any) -> DType:
    """The tenxor dtype for a NumPy dtype: the same name where tenxor has it, else by kind."""
    if dtype.name in DTYPES:
        return DTYPES[dtype.name]
    kinds = {"b": bool_, "i": int64, "u": int64, "f": float64}
    if dtype.kind not in kinds:
        raise TypeError(f"tensor() cannot hold NumPy dtype {dtype.name}")
    return kinds[dtype.kind]


def converter(dtype: DType) -> Callable[[Any], Number]:
    """The function that turns one element into a value `dtype` holds (floats to ints
    truncate toward zero)."""
    if dtype.kind == "float":
        return float
    if dtype.kind == "bool":
        return bool

    def to_int(value: Number) -> int:
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"cannot convert {value} to {dtype.name}")
        return int(value)

    return to_int


# ---------------------------------------------------------------------------------------------
# Nested lists and arrays
# ---------------------------------------------------------------------------------------------


def flatten_nested(data: Any) -> tuple[list[Any], Shape]:
    """The numbers of nested lists in row-major order, and the shape they form."""
    if isinstance(data, int | float):
        return [data], ()
    if not isinstance(data, list | tuple):
        raise TypeError(f"tensor() takes numbers or nested lists of numbers, got {data!r}")
    if not data:
        return [], (0,)
    parts = [flatten_nested(item) for item in data]
    inner = parts[0][1]
    for i, (_, shape) in enumerate(parts):
        if shape != inner:
            raise ValueError(
                f"ragged nested list: item {i} has shape {shape} but item 0 has shape {inner}"
            )
    return [v for values, _ in parts for v in values], (len(data),) + inner


def nest(values: Sequence[Number], shape: Sequence[int]) -> Any:
    """Flat row-major `values` as nested lists of `shape` (a plain number for shape ())."""
    if not shape:
        return values[0]
    if len(shape) == 1:
        return list(values)
    step = math.prod(shape[1:])
    return [nest(values[i * step : (i + 1) * step], shape[1:]) for i in range(shape[0])]


def read_data(data: Any, dtype: DType | str | None = None) -> tuple[list[Number], Shape, DType]:
    """The elements of `data` (a number, nested lists, or anything with a `tolist()` method
    such as a NumPy array) in row-major order as `dtype` holds them, their shape, and `dtype`.

    Without `dtype`: a NumPy array's own; else bool if every value is a bool, int64 if every
    value is an int, else float64.
    """
    if hasattr(data, "shape") and hasattr(data, "tolist"):  # a NumPy array
        values, shape = data.reshape(-1).tolist(), tuple(data.shape)
        asked = numpy_dtype(data.dtype)
    else:
        values, shape = flatten_nested(data)
        asked = common_dtype(dtype_of_number(v) for v in values)
    chosen = as_dtype(asked if dtype is None else dtype)
    return [converter(chosen)(v) for v in values], shape, chosen


# ---------------------------------------------------------------------------------------------
# Shapes and dims given as arguments
# ---------------------------------------------------------------------------------------------


def int_args(args: tuple[Any, ...], what: str) -> tuple[int, ...]:
    """Ints given separately or as one sequence, as a tuple; a TypeError names anything else."""
    if len(args) == 1 and isinstance(args[0], list | tuple):
        args = tuple(args[0])
    for value in args:
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{what} must be ints, got {args!r}")
    return args


def shape_args(args: tuple[Any, ...], allow_minus_one: bool = False) -> Shape:
    """A shape given as separate sizes or as one sequence, checked: ints, none negative
    (but -1 where `allow_minus_one`)."""
    shape = int_args(args, "sizes in a shape")
    lowest = -1 if allow_minus_one else 0
    for size in shape:
        if size < lowest:
            raise ValueError(f"shape {shape} has a negative size {size}")
    return shape
