"""Chapter 5: reductions, matmul and softmax.

A reduction folds each group of elements along some dims (the elements that make one output
element) into one value. With views to move the reduced dims last and the kernels of chapter 4
to read them, one `reduce` gives sum, mean, max, min and argmax. The fused kernel goes one step
further: it walks several broadcast operands at once, combines the elements that meet at each
index and folds each group as it goes, so matmul folds its products without ever holding them.
A few reductions give a numerically stable softmax. These are the exercises of notebook
05_reductions.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Iterator, Sequence
from itertools import chain
from typing import Any, Protocol

from .broadcasting import Values, broadcast_shapes, expand_layout, read_values, walk_offsets
from .row_major import read_row
from .storage import DType, int64, promote
from .strides import Layout, Shape, normalize_dims
from .views import permute_layout

Dims = int | Sequence[int] | None
Fold = Callable[[list[Any]], Any]  # one group's elements, as a list -> one value
Combine = Callable[..., Any]  # one element of each operand -> one combined element
Accumulate = Callable[[Iterator[Any]], Any]  # one group's combined elements, one at a time
Operand = tuple[Values, Layout]  # a storage's elements and the layout that reads them


class Tensor(Protocol):
    """A tensor as this chapter uses it: any Tenxor (tenxor/core.py) fits. The Tenxor class
    sits a layer above this chapter and calls it, so the chapter does not import the class;
    it names what it may use of a tensor instead."""

    @property
    def shape(self) -> Shape: ...
    @property
    def ndim(self) -> int: ...
    @property
    def dtype(self) -> DType: ...

    def combine_fold(
        self,
        combine: Combine,
        *others: Any,
        fold: Accumulate = sum,
        dim: Dims = None,
        keepdim: bool = False,
        dtype: DType | None = None,
    ) -> Tensor: ...
    def sum(self, dim: Dims = None, keepdim: bool = False) -> Tensor: ...
    def max(self, dim: Dims = None, keepdim: bool = False) -> Tensor: ...
    def min(self, dim: Dims = None, keepdim: bool = False) -> Tensor: ...
    def exp(self) -> Tensor: ...
    def where(self, condition: Any, other: Any) -> Tensor: ...
    def reshape(self, *shape: int) -> Tensor: ...
    def squeeze(self, dim: Dims = None) -> Tensor: ...
    def unsqueeze(self, dim: int) -> Tensor: ...
    def permute(self, *dims: int) -> Tensor: ...
    def transpose(self, dim0: int, dim1: int) -> Tensor: ...
    def expand(self, *shape: int) -> Tensor: ...
    def __add__(self, other: Any) -> Tensor: ...
    def __sub__(self, other: Any) -> Tensor: ...
    def __mul__(self, other: Any) -> Tensor: ...
    def __truediv__(self, other: Any) -> Tensor: ...
    def __gt__(self, other: Any) -> Tensor: ...


# ---------------------------------------------------------------------------------------------
# Exercises
# ---------------------------------------------------------------------------------------------


def reduce_values(
    fold: Fold, data: Values, layout: Layout, dims: Dims = None, keepdim: bool = False
) -> tuple[Shape, list[Any]]:
    """Fold each group of elements along `dims` (None: all dims) into one value: the
    elements whose indices differ only in the reduced dims form one group.

    Returns the result's shape (reduced dims removed, or kept with size 1 when `keepdim`) and
    its values in row-major order. `fold` takes the list of one group's elements.

    Raises IndexError for a dim out of range; the message names the dim as given and the number
    of dims, for example: `dim 2 is out of range for a tensor with 2 dims`. Raises ValueError for
    a dim named twice, naming the dims as given (as a tuple); for example:
    `dims (0, 0) name the same dim twice`. Raises TypeError for a dim that is not an int, naming
    it; for example: `dim must be an int, got 1.0`. (normalize_dims raises all three.)
    """
    # BEGIN SOLUTION 5.1
    reduced = normalize_dims(dims, layout.ndim)
    kept = [d for d in range(layout.ndim) if d not in reduced]
    size = 1  # the elements in each group
    for d in reduced:
        size *= layout.shape[d]
    outputs = 1
    for d in kept:
        outputs *= layout.shape[d]
    values = read_values(data, permute_layout(layout, kept + list(reduced)))
    results = [fold(values[i * size : (i + 1) * size]) for i in range(outputs)]
    if keepdim:
        shape = tuple(1 if d in reduced else size for d, size in enumerate(layout.shape))
    else:
        shape = tuple(layout.shape[d] for d in kept)
    return shape, results
    # END SOLUTION 5.1


def mean(t: Tensor, dim: Dims = None, keepdim: bool = False) -> Tensor:
    """The average of the elements along `dim` (None: all of them): their sum over their count.

    Integer and bool tensors give float64 means; an empty group gives nan.

    Raises IndexError for a dim out of range; the message names the dim as given and the
    number of dims, for example: `dim 2 is out of range for a tensor with 2 dims`.
    """
    # BEGIN SOLUTION 5.2
    count = 1
    for d in normalize_dims(dim, t.ndim):
        count *= t.shape[d]
    return t.sum(dim, keepdim=keepdim) / count
    # END SOLUTION 5.2


def first_largest_position(group: list[Any]) -> int:
    """The position of the largest element of `group` (the elements one output element folds,
    at least one), the first one on a tie; a NaN counts as the largest. This is the fold
    behind argmax."""
    # BEGIN SOLUTION 5.3
    best = 0
    for position, value in enumerate(group):
        if value != value:  # NaN
            return position
        if value > group[best]:
            best = position
    return best
    # END SOLUTION 5.3


def combine_fold_values(
    combine: Combine,
    fold: Accumulate,
    operands: Sequence[Operand],
    dims: Dims = None,
    keepdim: bool = False,
) -> tuple[Shape, list[Any]]:
    """The fused kernel: broadcast the operands, combine the elements that meet at each index
    with `combine` (one element of each operand, in order), and fold each group of combined
    elements along `dims` (None: all dims of the broadcast shape) with `fold`.

    `operands` holds (data, layout) pairs, one or more. The dims split the broadcast shape in
    two: an index of the kept dims is one output element, and the reduced dims under it walk
    that element's group. The kernel walks the output elements in row-major order of the kept
    dims, and for each one:

    - its group starts, in each operand, at the offset of the element whose reduced indices
      are all 0;
    - from there the group is a series of rows along the last reduced dim, and each operand's
      row is read from its storage in one step (read_row, in tenxor/row_major.py, reads one)
      when `fold` reaches that row: never one element at a time, never a row ahead;
    - `fold` is called once with an iterator over the group's combined elements, in row-major
      order of the reduced dims, and `combine` makes each element only when `fold` takes it:
      a running fold. No list of a group is ever built (not even to hand `fold` an iterator
      over it), let alone of the broadcast shape, and a fold that stops early (`any`) leaves
      the rest of its group uncombined.

    `sum`, `max`, `min`, `any` and `math.fsum` are folds; an empty group is folded too (`sum`
    gives 0). Returns the result's shape (the broadcast shape with the reduced dims removed,
    or kept as size 1 when `keepdim`) and its values in row-major order:

    >>> a = (list(range(6)), Layout((2, 3), (3, 1)))    # [[0, 1, 2], [3, 4, 5]]
    >>> b = ([10, 20, 30], Layout((3,), (1,)))          # [10, 20, 30], broadcast over rows
    >>> combine_fold_values(operator.mul, sum, [a, b], dims=1)
    ((2,), [80, 260])

    Raises ValueError for no operands, naming the count (`combine_fold_values needs at least
    one operand, got 0`), and, as broadcast_shapes does, for shapes that do not broadcast,
    naming them all and the two sizes. Raises IndexError for a dim out of range of the
    broadcast shape, naming the dim and the number of dims, and ValueError for a dim named
    twice, as reduce_values does. Raises whatever `combine` and `fold` raise, unchanged.
    """
    # BEGIN SOLUTION 5.4
    if not operands:
        raise ValueError(f"combine_fold_values needs at least one operand, got {len(operands)}")
    shape = broadcast_shapes(*(layout.shape for _, layout in operands))
    reduced = normalize_dims(dims, len(shape))
    kept = [d for d in range(len(shape)) if d not in reduced]
    # Every operand read at the broadcast shape with its kept dims first: an index of the kept
    # dims is one output element, and the reduced dims under it walk that element's group.
    layouts = [
        permute_layout(expand_layout(layout, shape), kept + list(reduced)) for _, layout in operands
    ]
    outputs = [Layout(m.shape[: len(kept)], m.strides[: len(kept)], m.offset) for m in layouts]
    # A group is read row by row along the last reduced dim: the rows' length, each operand's
    # step along them, and where each row starts, counted from the group's start (one tuple
    # per row, one start per operand). With no reduced dim, a group is one element.
    row_size = shape[reduced[-1]] if reduced else 1
    steps = [m.strides[-1] if reduced else 0 for m in layouts]
    group_rows = [Layout(m.shape[len(kept) : -1], m.strides[len(kept) : -1], 0) for m in layouts]
    row_starts = list(zip(*map(walk_offsets, group_rows))) if reduced else [(0,) * len(layouts)]
    datas, sizes = [data for data, _ in operands], [row_size] * len(operands)

    def row(starts: Sequence[int]) -> Iterator[Any]:
        """The combined elements of the row whose operands start at `starts`, each made when
        `fold` takes it."""
        return map(combine, *map(read_row, datas, starts, sizes, steps))

    def group(starts: Sequence[int]) -> Iterator[Any]:
        """The combined elements of the group whose operands start at `starts`, row by row."""
        return chain.from_iterable(
            row([start + step for start, step in zip(starts, relative)]) for relative in row_starts
        )

    # Each output element's start in every operand, walked in row-major order of the kept dims.
    walk = zip(*map(walk_offsets, outputs))
    if len(row_starts) == 1:  # one row (one reduced dim, as in matmul), at the group's start
        values = [fold(row(starts)) for starts in walk]
    else:
        values = [fold(group(starts)) for starts in walk]
    if keepdim:
        return tuple(1 if d in reduced else size for d, size in enumerate(shape)), values
    return tuple(shape[d] for d in kept), values
    # END SOLUTION 5.4


def matmul(a: Tensor, b: Tensor) -> Tensor:
    """The matrix product with NumPy's rules: result[..., i, j] is the sum over k of
    a[..., i, k] * b[..., k, j], its products folded as they are made (never held all at once).

    The last two dims are matrices and the dims before them broadcast as batch dims; a 1-D
    `a` is a row vector and a 1-D `b` a column vector, and their added dim is removed again.
    Float operands give the promoted float dtype, int and bool operands int64 (as sum does).

    Raises ValueError for a 0-d operand; the message names both shapes, for example:
    `matmul needs at least 1 dim in each operand, got () @ (2, 3)`. Raises ValueError for inner
    dims that differ; the message names both shapes and the two inner sizes, for example:
    `matmul of shapes (2, 3) and (4, 2): inner dims 3 and 4 differ`. Raises ValueError for batch
    dims that do not broadcast; the message names both shapes and both batch shapes, for
    example: `matmul of shapes (2, 2, 3) and (3, 3, 4): batch dims (2,) and (3,) do not
    broadcast`.
    """
    # BEGIN SOLUTION 5.5
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError(f"matmul needs at least 1 dim in each operand, got {a.shape} @ {b.shape}")
    left = a.unsqueeze(0) if a.ndim == 1 else a  # [..., n, k]
    right = b.unsqueeze(-1) if b.ndim == 1 else b  # [..., k, m]
    if left.shape[-1] != right.shape[-2]:
        raise ValueError(
            f"matmul of shapes {a.shape} and {b.shape}: inner dims {left.shape[-1]} and "
            f"{right.shape[-2]} differ"
        )
    try:
        broadcast_shapes(left.shape[:-2], right.shape[:-2])
    except ValueError:
        raise ValueError(
            f"matmul of shapes {a.shape} and {b.shape}: batch dims {left.shape[:-2]} and "
            f"{right.shape[:-2]} do not broadcast"
        ) from None
    # Row i of a meets column j of b at [..., i, j, :] of [..., n, 1, k] and [..., 1, m, k];
    # the fused kernel multiplies them there and sums over k as it goes.
    rows = left.unsqueeze(-2)
    columns = right.transpose(-1, -2).unsqueeze(-3)
    dtype = promote(a.dtype, b.dtype)
    dtype = dtype if dtype.kind == "float" else int64
    result = rows.combine_fold(operator.mul, columns, dim=-1, dtype=dtype)
    if a.ndim == 1:
        result = result.squeeze(-2)
    if b.ndim == 1:
        result = result.squeeze(-1)
    return result
    # END SOLUTION 5.5


def softmax(t: Tensor, dim: int) -> Tensor:
    """The softmax along `dim`: each element's exp divided by the sum of the exps of its
    group (the elements along `dim` whose other indices agree), so the weights of every group are
    at least 0 and sum to 1. Every finite input gives a finite result, however large its values:
    no exp may overflow to inf and no weight become nan. Integer and bool tensors give float64.

    Raises IndexError for a dim out of range; the message names the dim as given and the
    number of dims, for example: `dim 2 is out of range for a tensor with 2 dims`.
    """
    # BEGIN SOLUTION 5.6
    shifted = t - t.max(dim, keepdim=True)
    weights = shifted.exp()
    return weights / weights.sum(dim, keepdim=True)
    # END SOLUTION 5.6


def masked_softmax(t: Tensor, mask: Tensor, dim: int) -> Tensor:
    """softmax along `dim` over only the elements where `mask` is true (mask broadcasts to t).

    Masked-out elements get weight 0, and a group with no element left gives all zeros.

    Raises ValueError if `mask` does not broadcast to the shape of `t` (more dims than `t`, or
    a size other than 1 or t's); the message names both shapes and the two sizes that differ,
    for example: `a mask of shape (2,) does not broadcast to shape (2, 3): sizes 2 and 3
    differ`. Raises IndexError
    for a dim out of range; the message names the dim as given and the number of dims, for
    example: `dim 2 is out of range for a tensor with 2 dims`.
    """
    # BEGIN SOLUTION 5.7
    padded = (1,) * (t.ndim - mask.ndim) + mask.shape
    clashes = [(m, n) for m, n in zip(padded, t.shape) if m not in (1, n)]
    if mask.ndim > t.ndim or clashes:
        sizes = f": sizes {clashes[0][0]} and {clashes[0][1]} differ" if clashes else ""
        raise ValueError(
            f"a mask of shape {mask.shape} does not broadcast to shape {t.shape}{sizes}"
        )
    masked = t.where(mask, -math.inf)
    peak = masked.max(dim, keepdim=True)
    peak = peak.where(peak > -math.inf, 0.0)  # a fully masked group has no peak
    weights = (masked - peak).exp()  # exp(-inf) = 0 where masked out
    total = weights.sum(dim, keepdim=True)
    return weights / total.where(total > 0, 1.0)
    # END SOLUTION 5.7


# ---------------------------------------------------------------------------------------------
# Folds for the provided reductions
# ---------------------------------------------------------------------------------------------


def _nan_or(pick: Callable[[list[Any]], Any]) -> Fold:
    """A fold giving NaN for a group that holds a NaN, and `pick(group)` otherwise."""

    def fold(group: list[Any]) -> Any:
        total = sum(group)  # NaN whenever the group holds one (and, rarely, for inf + -inf)
        if total != total and any(v != v for v in group):
            return math.nan
        return pick(group)

    return fold


largest = _nan_or(max)  # the largest element of a non-empty group, NaN if it holds one
smallest = _nan_or(min)  # the smallest element of a non-empty group, NaN if it holds one
