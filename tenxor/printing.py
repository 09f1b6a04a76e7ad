"""The tensor printer.

The last dim runs along a row and the dim before it down the rows, so every 2-D slice prints
as a matrix. Higher slices follow one another, separated by a line that says how many dims
rolled over: `---` between matrices, `===` between cubes, `***` and `###` beyond.

`format_tensor` is what repr(t) shows: the package top, tenxor/__init__.py, hands it to the
Tenxor class (see SHOWN in tenxor/core.py), which sits below this module and never imports it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from .core import Tenxor

SEPARATORS = ("---", "===", "***", "###")
MAX_PRINTED = 1000  # a repr prints at most this many elements


def format_value(value: Any, precision: int) -> str:
    """One element as text: floats with `precision` decimals, ints and bools as they are."""
    if isinstance(value, float):
        return f"{value:.{precision}f}"
    return str(value)


def separator(matrix: int, outer_shape: Sequence[int]) -> str:
    """The line printed before matrix number `matrix` (> 0) of the higher slices."""
    level = 0
    for size in reversed(outer_shape):
        if matrix % size != 0:
            break
        matrix //= size
        level += 1
    return SEPARATORS[min(level, len(SEPARATORS) - 1)]


def format_grid(values: Sequence[Any], shape: Sequence[int], precision: int = 4) -> str:
    """Row-major `values` of `shape` laid out as rows, matrices and separated higher slices."""
    if 0 in shape:
        return "(no elements)"
    texts = [format_value(v, precision) for v in values]
    width = max(len(text) for text in texts)
    cells = [text.rjust(width) for text in texts]
    if len(shape) == 0:
        return cells[0]
    row_length = shape[-1]
    rows_per_matrix = shape[-2] if len(shape) >= 2 else 1
    outer_shape = shape[:-2]
    lines = []
    for row in range(len(cells) // row_length):
        matrix, within = divmod(row, rows_per_matrix)
        if within == 0 and matrix > 0:
            lines.append(separator(matrix, outer_shape))
        lines.append("  ".join(cells[row * row_length : (row + 1) * row_length]))
    return "\n".join(lines)


def format_tensor(t: Tenxor, precision: int = 4) -> str:
    """A tensor's repr: a heading with its shape and dtype, then its elements as a grid."""
    heading = f"Tenxor of shape {t.shape}, dtype {t.dtype.name}"
    count = math.prod(t.shape)
    if count > MAX_PRINTED:
        return f"{heading}\n({count} elements: print a slice of it with tprint)"
    return f"{heading}\n{format_grid(t.values(), t.shape, precision)}"


def tensor_to_string(
    t: Tenxor, dims: Sequence[int | None] | None = None, precision: int = 4
) -> str:
    """The elements of `t` as a grid; `dims` picks a slice, one entry per dim: None keeps the
    whole dim and an int keeps only that position (so (3, None, None) prints t[3, :, :])."""
    if dims is not None:
        if len(dims) != t.ndim:
            raise ValueError(
                f"dims {tuple(dims)} has {len(dims)} entries but the tensor has {t.ndim} dims"
            )
        t = t[tuple(slice(None) if d is None else d for d in dims)]
    return format_grid(t.values(), t.shape, precision)


def tprint(t: Tenxor, dims: Sequence[int | None] | None = None, precision: int = 4) -> None:
    """Print the elements of `t` (or the slice that `dims` picks) as a grid."""
    print(tensor_to_string(t, dims, precision))
