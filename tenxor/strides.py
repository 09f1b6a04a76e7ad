"""Chapter 2: strides.

A layout `(shape, strides, offset)` says where each element of a tensor lives in its storage:
the element at index `(i, j, k)` sits at offset `offset + i*strides[0] + j*strides[1] +
k*strides[2]`. This module defines the Layout value and the exercises of notebook 02_strides.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

Index = tuple[int, ...]
Shape = tuple[int, ...]


@dataclass(frozen=True)
class Layout:
    """Where a tensor's elements live in storage: shape, strides (in elements), storage offset.

    A Layout is an immutable value; every view operation makes a new one.
    """

    shape: Shape
    strides: tuple[int, ...]
    offset: int = 0

    def __post_init__(self) -> None:
        shape = _int_tuple(self.shape, "shape")
        strides = _int_tuple(self.strides, "strides")
        if any(size < 0 for size in shape):
            raise ValueError(f"shape {shape} has a negative size")
        if len(shape) != len(strides):
            raise ValueError(
                f"shape {shape} has {len(shape)} dims but strides {strides} has {len(strides)}"
            )
        offset = _as_int(self.offset)
        if offset is None or offset < 0:
            raise ValueError(f"storage offset must be a non-negative int, got {self.offset!r}")
        object.__setattr__(self, "shape", shape)
        object.__setattr__(self, "strides", strides)
        object.__setattr__(self, "offset", offset)

    @property
    def ndim(self) -> int:
        """The number of dims."""
        return len(self.shape)


def _as_int(value: object) -> int | None:
    """`value` as a Python int if it is an integer of any kind but a bool (a NumPy integer
    too, as NumPy and PyTorch take them), else None.

    >>> _as_int(7), _as_int(3.0), _as_int(True)  # numpy.int64(7) gives 7 as well
    (7, None, None)
    """
    if isinstance(value, bool):
        return None
    try:
        return operator.index(value)
    except TypeError:
        return None


def _int_tuple(values: Iterable[int], what: str) -> tuple[int, ...]:
    """`values` as a tuple of Python ints, or a TypeError naming `what`."""
    given = tuple(values)
    result = tuple(_as_int(v) for v in given)
    if None in result:
        raise TypeError(f"{what} must hold ints, got {given!r}")
    return result


def offset_range(layout: Layout) -> tuple[int, int]:
    """The lowest and highest offsets a non-empty layout reaches."""
    low = high = layout.offset
    for size, stride in zip(layout.shape, layout.strides):
        reach = (size - 1) * stride
        low, high = (low + reach, high) if reach < 0 else (low, high + reach)
    return low, high


def normalize_dim(dim: int, ndim: int) -> int:
    """`dim` counted from the front (so -1 is the last dim).

    Raises IndexError for a dim outside -ndim to ndim - 1, naming the dim and `ndim`; raises
    TypeError for a dim that is not an int, naming it.
    """
    if not isinstance(dim, int) or isinstance(dim, bool):
        raise TypeError(f"dim must be an int, got {dim!r}")
    if not -ndim <= dim < ndim:
        raise IndexError(
            f"dim {dim} is out of range for a tensor with {ndim} dims "
            f"(expected {-ndim} to {ndim - 1})"
        )
    return dim % ndim


def normalize_dims(dims: int | Sequence[int] | None, ndim: int) -> tuple[int, ...]:
    """Distinct dims counted from the front, sorted; None means every dim.

    Raises as normalize_dim does for each dim, and ValueError for a dim named twice (also as
    -1 and its positive twin), naming `dims` as given (as a tuple).
    """
    if dims is None:
        return tuple(range(ndim))
    if isinstance(dims, int):
        dims = (dims,)
    if not isinstance(dims, list | tuple):
        raise TypeError(f"dims must be an int, a sequence of ints or None, got {dims!r}")
    result = tuple(normalize_dim(d, ndim) for d in dims)
    if len(set(result)) != len(result):
        raise ValueError(f"dims {tuple(dims)} name the same dim twice")
    return tuple(sorted(result))


# ---------------------------------------------------------------------------------------------
# Exercises
# ---------------------------------------------------------------------------------------------


def contiguous_strides(shape: Sequence[int]) -> tuple[int, ...]:
    """Row-major (C) strides for `shape`: the last dim moves by 1, each earlier dim by the
    product of the sizes after it."""
    # BEGIN SOLUTION 2.1
    strides = []
    step = 1
    for size in reversed(shape):
        strides.append(step)
        step *= max(size, 1)
    return tuple(reversed(strides))
    # END SOLUTION 2.1


def column_major_strides(shape: Sequence[int]) -> tuple[int, ...]:
    """Column-major (Fortran) strides for `shape`: the first dim moves by 1, each later dim by
    the product of the sizes before it."""
    # BEGIN SOLUTION 2.2
    strides = []
    step = 1
    for size in shape:
        strides.append(step)
        step *= max(size, 1)
    return tuple(strides)
    # END SOLUTION 2.2


def index_to_offset(index: Sequence[int], layout: Layout) -> int:
    """The storage offset of the element at `index` (one int per dim, each in range).

    Raises IndexError if `index` has the wrong number of entries; the message names the index
    (as a tuple), its number of entries, the shape (as a tuple) and its number of dims, for
    example: `index (1,) has 1 entries but shape (2, 3) has 2 dims`. Raises IndexError if an
    entry is outside 0 to size - 1 (negative entries included); the message names the entry,
    its dim and that dim's size, for example: `index 3 is out of range for dim 1 of size 3`.
    """
    # BEGIN SOLUTION 2.3
    if len(index) != layout.ndim:
        raise IndexError(
            f"index {tuple(index)} has {len(index)} entries but shape {layout.shape} "
            f"has {layout.ndim} dims"
        )
    offset = layout.offset
    for dim, (i, size, stride) in enumerate(zip(index, layout.shape, layout.strides)):
        if not 0 <= i < size:
            raise IndexError(f"index {i} is out of range for dim {dim} of size {size}")
        offset += i * stride
    return offset
    # END SOLUTION 2.3


def offset_to_index(offset: int, shape: Sequence[int]) -> Index:
    """The index (a tuple) of the element at `offset` in a contiguous row-major tensor of
    `shape` whose storage offset is 0: the inverse of index_to_offset for such a tensor, which
    says which element a place in storage holds. The 0-d shape () holds one element, at offset
    0, and its index is ().

    Raises IndexError if `offset` is not in 0 to numel - 1 (a shape with a size-0 dim holds no
    element, so it refuses every offset); the message names the offset and the shape (as a
    tuple), for example: `offset 6 is out of range for shape (2, 3)`.
    """
    # BEGIN SOLUTION 2.4
    count = 1
    for size in shape:
        count *= size
    if not 0 <= offset < count:
        raise IndexError(
            f"offset {offset} is out of range for shape {tuple(shape)} (expected 0 to {count - 1})"
        )
    index = []
    for size in reversed(shape):
        offset, i = divmod(offset, size)
        index.append(i)
    return tuple(reversed(index))
    # END SOLUTION 2.4


def next_index(index: Sequence[int], shape: Sequence[int]) -> Index | None:
    """The index after `index` in row-major order, or None after the last one.

    Like an odometer: the last dim counts up; when it passes its size it wraps to 0 and the
    dim before it counts up by one.

    Raises IndexError if `index` has the wrong number of entries; the message names the index
    (as a tuple), its number of entries, the shape (as a tuple) and its number of dims, for
    example: `index (0,) has 1 entries but shape (2, 3) has 2 dims`. Raises IndexError if an
    entry is outside 0 to size - 1 (negative entries included); the message names the entry,
    its dim and that dim's size, for example: `index 3 is out of range for dim 1 of size 3`.
    """
    # BEGIN SOLUTION 2.5
    if len(index) != len(shape):
        raise IndexError(
            f"index {tuple(index)} has {len(index)} entries but shape {tuple(shape)} "
            f"has {len(shape)} dims"
        )
    for dim, (i, size) in enumerate(zip(index, shape)):
        if not 0 <= i < size:
            raise IndexError(f"index {i} is out of range for dim {dim} of size {size}")
    result = list(index)
    for dim in reversed(range(len(shape))):
        if result[dim] + 1 < shape[dim]:
            result[dim] += 1
            return tuple(result)
        result[dim] = 0
    return None
    # END SOLUTION 2.5


def is_contiguous(layout: Layout) -> bool:
    """True when the layout reads its elements in row-major order from consecutive offsets (its
    storage offset, the next offset, and so on), False otherwise: such a tensor can be run
    through, or handed on, as one block of storage.

    Dims of size 1 never move, so their strides do not matter; a tensor with no elements is
    contiguous, whatever its strides. The storage offset does not matter either.
    """
    # BEGIN SOLUTION 2.6
    if 0 in layout.shape:
        return True
    expected = 1
    for size, stride in zip(reversed(layout.shape), reversed(layout.strides)):
        if size != 1 and stride != expected:
            return False
        expected *= size
    return True
    # END SOLUTION 2.6
