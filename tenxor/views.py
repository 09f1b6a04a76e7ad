"""Chapter 3: views.

A view is a new tensor over the same storage. Every view operation here is a pure function
from a Layout (plus its arguments) to a new Layout: no element is read, moved or copied.
These are the exercises of notebook 03_views.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any

from .row_major import row_major_strides
from .strides import Layout, Shape, normalize_dim, normalize_dims

IndexKey = Any  # an int, slice, None, Ellipsis, or a tuple of them


# ---------------------------------------------------------------------------------------------
# Exercises
# ---------------------------------------------------------------------------------------------


def infer_shape(shape: Sequence[int], numel: int) -> Shape:
    """`shape` with its one `-1` (if any) replaced by the size that makes it hold `numel`
    elements.

    Raises ValueError in each of these cases; every message names the shape (as a tuple):
    - two `-1`s, for example: `shape (-1, -1) has more than one -1`;
    - a `-1` that cannot be inferred because the other sizes hold 0 elements, for example:
      `cannot infer the -1 in shape (0, -1)`;
    - any other negative size, also naming that size, for example:
      `shape (2, -2) has a negative size -2`;
    - no size for the `-1` makes the shape hold `numel` elements, also naming `numel`, for
      example: `shape (4, -1) cannot hold 6 elements`;
    - a shape without `-1` does not hold exactly `numel` elements, also naming how many it
      holds and `numel`, for example: `shape (4, 2) holds 8 elements but the tensor has 6`.
    """
    # BEGIN SOLUTION 3.1
    shape = tuple(shape)
    if shape.count(-1) > 1:
        raise ValueError(f"shape {shape} has more than one -1")
    for size in shape:
        if size < -1:
            raise ValueError(f"shape {shape} has a negative size {size}")
    known = 1
    for size in shape:
        if size != -1:
            known *= size
    if -1 not in shape:
        if known != numel:
            raise ValueError(f"shape {shape} holds {known} elements but the tensor has {numel}")
        return shape
    if known == 0:
        raise ValueError(f"cannot infer the -1 in shape {shape}: the other sizes hold 0 elements")
    if numel % known != 0:
        raise ValueError(
            f"shape {shape} cannot hold {numel} elements: {numel} is not a multiple of {known}"
        )
    return tuple(numel // known if size == -1 else size for size in shape)
    # END SOLUTION 3.1


def squeeze_layout(layout: Layout, dim: int | Sequence[int] | None = None) -> Layout:
    """The layout without dim `dim` (or without each of several dims), which must have size 1.
    With `dim=None`, every dim of size 1 is removed.

    Raises IndexError for a dim out of range; the message names the dim as given and the number
    of dims, for example: `dim 3 is out of range for a tensor with 3 dims`. Raises ValueError for
    a dim whose size is not 1; the message names the dim, its size and the shape, for example:
    `cannot squeeze dim 0 of size 2 in shape (2, 1, 3)`. Raises TypeError for a dim that is not
    an int, naming it; for example: `dim must be an int, got 1.5`. (normalize_dims raises the
    IndexError and the TypeError for you.)
    """
    # BEGIN SOLUTION 3.2
    if dim is None:
        drop = {d for d, size in enumerate(layout.shape) if size == 1}
    else:
        drop = set(normalize_dims(dim, layout.ndim))
        for d in sorted(drop):
            if layout.shape[d] != 1:
                raise ValueError(
                    f"cannot squeeze dim {d} of size {layout.shape[d]} in shape "
                    f"{layout.shape}: only dims of size 1 can be squeezed"
                )
    keep = [d for d in range(layout.ndim) if d not in drop]
    return Layout(
        tuple(layout.shape[d] for d in keep),
        tuple(layout.strides[d] for d in keep),
        layout.offset,
    )
    # END SOLUTION 3.2


def unsqueeze_layout(layout: Layout, dim: int) -> Layout:
    """The layout with a new dim of size 1 inserted at position `dim` (-1 appends it).

    Raises IndexError unless -(ndim + 1) <= dim <= ndim; the message names the dim and the
    shape, for example: `dim 4 is out of range for unsqueeze on shape (2, 1, 3)`. Raises
    TypeError for a dim that is not an int, naming it; for example: `dim must be an int, got 1.5`.
    """
    # BEGIN SOLUTION 3.3
    ndim = layout.ndim
    if not isinstance(dim, int):
        raise TypeError(f"dim must be an int, got {dim!r}")
    if not -(ndim + 1) <= dim <= ndim:
        raise IndexError(
            f"dim {dim} is out of range for unsqueeze on shape {layout.shape} "
            f"(expected {-(ndim + 1)} to {ndim})"
        )
    dim = dim % (ndim + 1)
    stride = layout.strides[dim] * layout.shape[dim] if dim < ndim else 1
    return Layout(
        layout.shape[:dim] + (1,) + layout.shape[dim:],
        layout.strides[:dim] + (stride,) + layout.strides[dim:],
        layout.offset,
    )
    # END SOLUTION 3.3


def permute_layout(layout: Layout, dims: Sequence[int]) -> Layout:
    """The layout whose dim k is dim `dims[k]` of the input: the same elements, reordered dims.

    Raises ValueError if `dims` has the wrong length; the message names `dims` as given (as a
    tuple), its length, the shape and its number of dims, for example:
    `permutation (0, 1) has 2 entries but shape (2, 1, 3) has 3 dims`. Raises ValueError if
    `dims` names a dim twice (also as -1 and its positive twin), naming `dims` as given; for
    example: `permutation (0, 0, 1) names a dim twice`. Raises IndexError for a dim out of
    range; the message names the dim as given and the number of dims, for example:
    `dim 3 is out of range for a tensor with 3 dims` (normalize_dim raises it for you).
    """
    # BEGIN SOLUTION 3.4
    dims = tuple(dims)
    if len(dims) != layout.ndim:
        raise ValueError(
            f"permutation {dims} has {len(dims)} entries but shape {layout.shape} "
            f"has {layout.ndim} dims"
        )
    order = [normalize_dim(d, layout.ndim) for d in dims]
    if len(set(order)) != len(order):
        raise ValueError(f"permutation {dims} names a dim twice")
    return Layout(
        tuple(layout.shape[d] for d in order),
        tuple(layout.strides[d] for d in order),
        layout.offset,
    )
    # END SOLUTION 3.4


def index_layout(layout: Layout, key: IndexKey) -> Layout:
    """The view that `t[key]` selects, for a key made of ints, slices (any step), None and at
    most one `...`.

    An int picks one position and drops its dim; a slice keeps the dim with fewer elements
    and a larger stride; None inserts a new dim of size 1; `...` stands for as many full
    slices as needed.

    Raises IndexError for an int out of range; the message names the int as given, its dim
    (counted in `layout`, so a None does not count) and that dim's size, for example:
    `index -4 is out of range for dim 1 of size 3`. Raises IndexError for too many indices; the
    message names how many there are and the shape, for example:
    `too many indices: 3 given for shape (2, 3)`. Raises IndexError for two `...`, naming the
    key as repr() shows it; for example:
    `an index can hold at most one '...', got (Ellipsis, 0, Ellipsis)`. Raises TypeError for
    anything else in the key (a float, a bool, a string), naming the item as repr() shows it and
    its type; for example: `an index must be an int, a slice, None or '...', got 1.5 (float)`
    (_as_int_index raises it for you). Raises ValueError for a slice step of 0 (slice.indices
    raises it for you).
    """
    # BEGIN SOLUTION 3.5
    items = key if isinstance(key, tuple) else (key,)
    if sum(item is Ellipsis for item in items) > 1:
        raise IndexError(f"an index can hold at most one '...', got {key!r}")
    used = sum(item is not None and item is not Ellipsis for item in items)
    if used > layout.ndim:
        raise IndexError(
            f"too many indices: {used} given for shape {layout.shape} with {layout.ndim} dims"
        )
    if Ellipsis in items:
        at = items.index(Ellipsis)
        items = items[:at] + (slice(None),) * (layout.ndim - used) + items[at + 1 :]
    else:
        items = items + (slice(None),) * (layout.ndim - used)

    shape, strides, offset, dim = [], [], layout.offset, 0
    for item in items:
        if item is None:
            shape.append(1)
            strides.append(0)
            continue
        size, stride = layout.shape[dim], layout.strides[dim]
        if isinstance(item, slice):
            start, stop, step = item.indices(size)
            count = len(range(start, stop, step))
            if count > 0:
                offset += start * stride
            shape.append(count)
            strides.append(stride * step)
        else:
            i = _as_int_index(item)
            if not -size <= i < size:
                raise IndexError(f"index {i} is out of range for dim {dim} of size {size}")
            offset += (i % size) * stride
        dim += 1
    return Layout(tuple(shape), tuple(strides), offset)
    # END SOLUTION 3.5


def layout_runs(layout: Layout) -> list[tuple[int, int]]:
    """The runs of a layout, outermost first, each as `(size, stride)`.

    A run is a stretch of neighbouring dims that steps through storage as if it were one dim:
    dims d and d + 1 join when `stride[d] == size[d + 1] * stride[d + 1]`. Dims of size 1
    belong to no run (they never move), so a layout with one element has no runs, `[]`. A
    layout with no elements has the one run `(0, 1)`. A dim of stride 0 (from expand) is a run
    of its own unless it joins by the rule.

    For example, a row-major (2, 3, 4) layout is one run of 24 elements with stride 1, and
    the same layout with its last two dims swapped, shape (2, 4, 3) and strides (12, 1, 4),
    has the runs [(2, 12), (4, 1), (3, 4)].
    """
    # BEGIN SOLUTION 3.6
    if 0 in layout.shape:
        return [(0, 1)]
    runs: list[tuple[int, int]] = []
    for size, stride in zip(layout.shape, layout.strides):
        if size == 1:
            continue
        if runs and runs[-1][1] == size * stride:
            runs[-1] = (runs[-1][0] * size, stride)
        else:
            runs.append((size, stride))
    return runs
    # END SOLUTION 3.6


def cut_runs(runs: Sequence[tuple[int, int]], shape: Sequence[int]) -> tuple[int, ...] | None:
    """Strides for `shape` that read the elements of `runs` (as layout_runs gives them) in the
    same order, or None when a dim of the new shape would have to span two runs (then only a
    copy can have that shape). The runs hold two or more elements: view_layout handles the
    layouts of at most one element itself.

    Work from the innermost new dim outwards: each dim takes its elements from the run being
    cut, and its stride is that run's stride times the elements the dims inside it took. A new
    dim of size 1 gets the stride a dim of its place would get, as in PyTorch, where
    `torch.empty(6).view(2, 1, 3).stride() == (3, 3, 1)`.

    Raises ValueError if `shape` does not hold as many elements as the runs; the message names
    the shape and how many elements the runs hold, for example:
    `shape (4, 2) holds 8 elements but the runs hold 6`.
    """
    # BEGIN SOLUTION 3.7
    shape = tuple(shape)
    held = 1
    for size, _ in runs:
        held *= size
    wanted = 1
    for size in shape:
        wanted *= size
    if wanted != held:
        raise ValueError(f"shape {shape} holds {wanted} elements but the runs hold {held}")
    pending = list(runs)
    left, step = pending.pop()  # elements left in the run being cut, stride of the next dim
    strides = [0] * len(shape)
    for dim in reversed(range(len(shape))):
        size = shape[dim]
        if left == 1 and size != 1 and pending:
            left, step = pending.pop()
        if left % size != 0:
            return None
        strides[dim] = step
        left //= size
        step *= size
    return tuple(strides)
    # END SOLUTION 3.7


# ---------------------------------------------------------------------------------------------
# Built from the exercises
# ---------------------------------------------------------------------------------------------


def view_layout(layout: Layout, shape: Sequence[int]) -> Layout | None:
    """A layout of the new `shape` (one `-1` allowed) that reads the same elements in the same
    row-major order without moving them, from the same storage offset, or None when the
    strides cannot express it (then only a copy can have that shape).

    Raises ValueError, as infer_shape does, if `shape` cannot hold the layout's elements.
    """
    count = math.prod(layout.shape)
    shape = infer_shape(shape, count)
    if count <= 1:  # nothing moves: any strides read the same, so take the row-major ones
        return Layout(shape, row_major_strides(shape), layout.offset)
    strides = cut_runs(layout_runs(layout), shape)
    return None if strides is None else Layout(shape, strides, layout.offset)


def _as_int_index(item: Any) -> int:
    """`item` as an int index, or a TypeError naming what was given."""
    if isinstance(item, bool):
        raise TypeError(f"a bool cannot be an index, got {item!r}")
    try:
        return operator.index(item)
    except TypeError:
        raise TypeError(
            f"an index must be an int, a slice, None or '...', got {item!r} ({type(item).__name__})"
        ) from None


def transpose_layout(layout: Layout, dim0: int, dim1: int) -> Layout:
    """The layout with dims `dim0` and `dim1` swapped."""
    order = list(range(layout.ndim))
    a, b = normalize_dim(dim0, layout.ndim), normalize_dim(dim1, layout.ndim)
    order[a], order[b] = order[b], order[a]
    return permute_layout(layout, order)


def movedim_layout(layout: Layout, source: int, destination: int) -> Layout:
    """The layout with dim `source` moved to position `destination`, the others in order."""
    order = list(range(layout.ndim))
    moved = order.pop(normalize_dim(source, layout.ndim))
    order.insert(normalize_dim(destination, layout.ndim), moved)
    return permute_layout(layout, order)
