"""Creating tensors: tensor, zeros, ones, full, arange, seeded rand, where.

Each function makes a new tensor with its own contiguous, row-major storage. This module is
provided; it builds on the Tenxor class (tenxor/core.py) and on tenxor/python_values.py, which
reads numbers, nested lists and NumPy arrays.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from typing import Any

from .core import Operand, Tenxor, as_tensor
from .python_values import common_dtype, converter, dtype_of_number, read_data, shape_args
from .storage import DType, Number, as_dtype, float64


def tensor(data: Any, dtype: DType | str | None = None) -> Tenxor:
    """A new tensor holding a copy of `data` (a number, nested lists, a Tenxor, or anything with
    a `tolist()` method such as a NumPy array).

    Without `dtype`: bool if every value is a bool, int64 if every value is an int, else float64
    (a Tenxor or a NumPy array keeps its own).
    """
    if isinstance(data, Tenxor):
        dtype = as_dtype(data.dtype if dtype is None else dtype)
        values, shape = [converter(dtype)(v) for v in data.values()], data.shape
    else:
        values, shape, dtype = read_data(data, dtype)
    return Tenxor.from_values(values, shape, dtype)


def full(shape: Sequence[int], value: Number, dtype: DType | str | None = None) -> Tenxor:
    """A new tensor of `shape` with every element equal to `value`."""
    shape = shape_args((shape,))
    dtype = dtype_of_number(value) if dtype is None else as_dtype(dtype)
    return Tenxor.from_values([converter(dtype)(value)] * math.prod(shape), shape, dtype)


def zeros(*shape: int | Sequence[int], dtype: DType | str = float64) -> Tenxor:
    """A new tensor of `shape` filled with 0."""
    return full(shape_args(shape), 0, dtype)


def ones(*shape: int | Sequence[int], dtype: DType | str = float64) -> Tenxor:
    """A new tensor of `shape` filled with 1."""
    return full(shape_args(shape), 1, dtype)


def arange(
    start: Number, end: Number | None = None, step: Number = 1, dtype: DType | str | None = None
) -> Tenxor:
    """The numbers start, start + step, ... up to but not including `end` (one argument: 0 up
    to it). int64 when all arguments are ints, float64 otherwise."""
    if end is None:
        start, end = 0, start
    if step == 0:
        raise ValueError("arange step must not be 0")
    if not all(math.isfinite(v) for v in (start, end, step)):
        raise ValueError(f"arange needs finite numbers, got start={start}, end={end}, step={step}")
    count = max(0, math.ceil((end - start) / step))
    if dtype is None:
        dtype = common_dtype(dtype_of_number(v) for v in (start, end, step))
    values = [start + i * step for i in range(count)]
    return Tenxor.from_values([converter(as_dtype(dtype))(v) for v in values], (count,), dtype)


_generator = random.Random(0)


def manual_seed(seed: int) -> None:
    """Restart the generator behind `rand` calls that give no seed of their own."""
    _generator.seed(seed)


def rand(
    *shape: int | Sequence[int],
    seed: int | None = None,
    low: float = 0.0,
    high: float = 1.0,
    dtype: DType | str = float64,
) -> Tenxor:
    """A new tensor of `shape` with numbers drawn uniformly from [low, high).

    With `seed` the numbers depend only on the seed; without it they come from the shared
    generator (see manual_seed).
    """
    shape = shape_args(shape)
    if not low < high:
        raise ValueError(f"rand needs low < high, got low={low} and high={high}")
    generator = _generator if seed is None else random.Random(seed)
    values = [low + (high - low) * generator.random() for _ in range(math.prod(shape))]
    return Tenxor.from_values(values, shape, dtype)


def where(condition: Operand, a: Operand, b: Operand) -> Tenxor:
    """Elements of `a` where `condition` holds and of `b` elsewhere, all three broadcast (see
    Tenxor.where)."""
    if not isinstance(a, Tenxor) and isinstance(b, Tenxor):
        a = as_tensor(a, like=b)
    return as_tensor(a).where(condition, b)
