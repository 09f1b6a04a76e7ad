"""Row-major order, as the provided code needs it from the first cell of the course.

Creating a tensor lays its values out in row-major order; printing, listing and copying one
reads its elements back in that order. These must work before you have written chapter 2's
strides or chapter 4's reader, so the course provides its own small versions here. They
answer exercises 2.1, 2.6 and 4.4 in a way of their own: do those exercises before you read
this file. Your own functions take over where the notebooks say so.

>>> row_major_strides((2, 3, 4))
(12, 4, 1)
>>> row_major_values(list(range(6)), Layout((3, 2), (1, 3)))
[0, 3, 1, 4, 2, 5]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .strides import Layout


def row_major_strides(shape: Sequence[int]) -> tuple[int, ...]:
    """The strides of a contiguous row-major tensor of `shape` (a size-0 dim counts as 1)."""
    strides: tuple[int, ...] = ()
    step = 1
    for size in shape[::-1]:
        strides = (step, *strides)
        step *= max(size, 1)
    return strides


def is_row_major(layout: Layout) -> bool:
    """Whether the layout reads consecutive offsets in row-major order (size-1 dims and empty
    layouts always do)."""
    moving = [(size, stride) for size, stride in zip(layout.shape, layout.strides) if size != 1]
    shape = [size for size, _ in moving]
    return 0 in shape or [stride for _, stride in moving] == list(row_major_strides(shape))


def read_row(data: Sequence[Any], start: int, size: int, stride: int) -> Sequence[Any]:
    """The `size` elements at offsets start, start + stride, start + 2*stride, ..."""
    if size == 0:
        return []
    if stride == 0:
        return [data[start]] * size
    stop = start + size * stride
    return data[start : stop if stop >= 0 else None : stride]


def row_starts(layout: Layout) -> list[int]:
    """The offset where each innermost row of a layout of one or more dims starts, in order."""
    starts = [layout.offset]
    for size, stride in zip(layout.shape[:-1], layout.strides[:-1]):
        starts = [start + i * stride for start in starts for i in range(size)]
    return starts


def row_major_values(data: Sequence[Any], layout: Layout) -> list[Any]:
    """The elements the layout reads from `data`, in row-major order of their indices."""
    if layout.ndim == 0:
        return [data[layout.offset]]
    size, stride = layout.shape[-1], layout.strides[-1]
    values: list[Any] = []
    for start in row_starts(layout):
        values.extend(read_row(data, start, size, stride))
    return values
