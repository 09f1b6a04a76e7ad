"""Chapter 4: broadcasting and the elementwise kernels.

Broadcasting lets tensors of different shapes combine element by element: shapes are lined
up from the right and every dim of size 1 is stretched to match, by giving it stride 0. The
kernels here are the only code that loops over elements; everything else in tenxor is built
from them and from views. These are the exercises of notebook 04_broadcasting.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from .row_major import read_row
from .strides import Layout, Shape

Values = Sequence[Any]  # a storage's elements, readable by offset


# ---------------------------------------------------------------------------------------------
# Exercises
# ---------------------------------------------------------------------------------------------


def broadcast_shapes(*shapes: Sequence[int]) -> Shape:
    """The shape that all `shapes` broadcast to.

    Line the shapes up from the right; in each position the sizes must be equal or 1, and the
    result takes the size that is not 1. A missing dim counts as size 1.

    Raises ValueError when two sizes that are not 1 differ; the message names every shape (as
    tuples) and the two sizes, for example:
    `shapes (2, 3), (3,), (4, 1) cannot be broadcast: sizes 2 and 4 meet at dim -2`. Raises
    ValueError for a negative size, naming it; for example: `shape (2, -1) has a negative size -1`.
    """
    # BEGIN SOLUTION 4.1
    ndim = max((len(shape) for shape in shapes), default=0)
    result = []
    for position in range(-ndim, 0):
        size = 1
        for shape in shapes:
            if -position > len(shape) or shape[position] == 1:
                continue
            if shape[position] < 0:
                raise ValueError(f"shape {tuple(shape)} has a negative size {shape[position]}")
            if size not in (1, shape[position]):
                raise ValueError(
                    f"shapes {', '.join(str(tuple(s)) for s in shapes)} cannot be broadcast: "
                    f"sizes {size} and {shape[position]} meet at dim {position}"
                )
            size = shape[position]
        result.append(size)
    return tuple(result)
    # END SOLUTION 4.1


def expand_layout(layout: Layout, shape: Sequence[int]) -> Layout:
    """The layout stretched to `shape` without copying: new dims are added on the left, and
    dims of size 1 grow to the target size with stride 0.

    Raises ValueError if the target has fewer dims; the message names the layout's shape and
    the target shape, for example: `cannot expand shape (2, 3) to (3,): the target has fewer
    dims`. Raises ValueError if a dim's size is neither 1 nor its target size, or its target
    size is negative; the message names both shapes, the dim (counted in the layout's own dims)
    and its size, for example:
    `cannot expand shape (2, 3) to (4, 3): dim 0 has size 2, which is neither 4 nor 1`.
    """
    # BEGIN SOLUTION 4.2
    shape = tuple(shape)
    extra = len(shape) - layout.ndim
    if extra < 0:
        raise ValueError(
            f"cannot expand shape {layout.shape} to {shape}: the target has fewer dims"
        )
    strides = [0] * extra
    for dim, (size, stride) in enumerate(zip(layout.shape, layout.strides)):
        target = shape[extra + dim]
        if size == target:
            strides.append(stride)
        elif size == 1 and target >= 0:
            strides.append(0)
        else:
            raise ValueError(
                f"cannot expand shape {layout.shape} to {shape}: dim {dim} has size {size}, "
                f"which is neither {target} nor 1"
            )
    return Layout(shape, tuple(strides), layout.offset)
    # END SOLUTION 4.2


def walk_offsets(layout: Layout) -> Iterator[int]:
    """Every offset the layout reads, in row-major order of the indices.

    Walks like an odometer but carries the offset along: a step in a dim adds its stride, and
    wrapping a dim back to 0 subtracts what that dim had added.
    """
    # BEGIN SOLUTION 4.3
    shape, strides = layout.shape, layout.strides
    if 0 in shape:
        return
    index = [0] * len(shape)
    offset = layout.offset
    while True:
        yield offset
        dim = len(shape) - 1
        while dim >= 0 and index[dim] == shape[dim] - 1:
            offset -= index[dim] * strides[dim]
            index[dim] = 0
            dim -= 1
        if dim < 0:
            return
        index[dim] += 1
        offset += strides[dim]
    # END SOLUTION 4.3


def read_values(data: Values, layout: Layout) -> list[Any]:
    """The elements a layout reads from `data`, in row-major order of their indices.

    Each innermost row is one slice of `data` (a stride-0 row repeats one element), and the
    offsets where rows start are walked with walk_offsets over the outer dims.
    """
    # BEGIN SOLUTION 4.4
    if layout.ndim == 0:
        return [data[layout.offset]]
    size, stride = layout.shape[-1], layout.strides[-1]
    rows = Layout(layout.shape[:-1], layout.strides[:-1], layout.offset)
    values: list[Any] = []
    for start in walk_offsets(rows):
        values.extend(read_row(data, start, size, stride))
    return values
    # END SOLUTION 4.4


def map_values(fn: Callable[[Any], Any], data: Values, layout: Layout) -> list[Any]:
    """`fn` applied to every element the layout reads, in row-major order.

    Raises whatever `fn` raises, unchanged.
    """
    # BEGIN SOLUTION 4.5
    return list(map(fn, read_values(data, layout)))
    # END SOLUTION 4.5


def zip_values(
    fn: Callable[[Any, Any], Any],
    data_a: Values,
    layout_a: Layout,
    data_b: Values,
    layout_b: Layout,
) -> tuple[Shape, list[Any]]:
    """The broadcast shape of the two layouts and `fn(a, b)` for every pair of elements that
    meet in it, in row-major order.

    Raises ValueError, as broadcast_shapes does, if the shapes do not broadcast; the message
    names both shapes and the two sizes that differ, for example:
    `shapes (2, 3), (2,) cannot be broadcast: sizes 3 and 2 meet at dim -1`. Raises whatever
    `fn` raises, unchanged.
    """
    # BEGIN SOLUTION 4.6
    shape = broadcast_shapes(layout_a.shape, layout_b.shape)
    a = read_values(data_a, expand_layout(layout_a, shape))
    b = read_values(data_b, expand_layout(layout_b, shape))
    return shape, list(map(fn, a, b))
    # END SOLUTION 4.6


# ---------------------------------------------------------------------------------------------
# Provided
# ---------------------------------------------------------------------------------------------


def where_values(
    condition: Values,
    layout_c: Layout,
    data_a: Values,
    layout_a: Layout,
    data_b: Values,
    layout_b: Layout,
) -> tuple[Shape, list[Any]]:
    """The broadcast shape and, in row-major order, the element of `a` where the condition
    holds and the element of `b` where it does not."""
    shape = broadcast_shapes(layout_c.shape, layout_a.shape, layout_b.shape)
    picks = read_values(condition, expand_layout(layout_c, shape))
    a = read_values(data_a, expand_layout(layout_a, shape))
    b = read_values(data_b, expand_layout(layout_b, shape))
    return shape, [x if pick else y for pick, x, y in zip(picks, a, b)]


# Scalar functions with NumPy's answers where plain Python would raise.


def divide(x: float, y: float) -> float:
    """x / y, with inf or nan for a zero divisor as in IEEE arithmetic."""
    if y != 0:
        return x / y
    if x == 0 or x != x:
        return math.nan
    return math.copysign(math.inf, x) * math.copysign(1.0, y)


def power(x: Any, y: Any) -> Any:
    """x ** y, with inf or nan where a float result overflows or is not real."""
    if isinstance(x, int) and isinstance(y, int):
        if y < 0:
            raise ValueError(f"integers cannot be raised to a negative power ({x} ** {y})")
        return x**y
    try:
        return math.pow(x, y)
    except OverflowError:
        odd = float(y).is_integer() and int(y) % 2 == 1
        return -math.inf if odd and x < 0 else math.inf
    except ValueError:
        return math.inf if x == 0 else math.nan


def exp(x: float) -> float:
    """e ** x, inf when it overflows."""
    try:
        return math.exp(x)
    except OverflowError:
        return math.inf


def log(x: float) -> float:
    """The natural logarithm: -inf at 0 and nan below it."""
    if x > 0:
        return math.log(x)
    return -math.inf if x == 0 else math.nan


def relu(x: float) -> float:
    """x where it is positive, 0 elsewhere."""
    return x if x > 0 else x * 0


def leaky_relu_fn(slope: float) -> Callable[[float], float]:
    """The function x -> x where positive, slope * x elsewhere."""
    return lambda x: x if x > 0 else slope * x
