"""Gather and scatter along the first dim: what a layer on edge lists needs from the library.

A graph stored as an edge list has one row per edge. `gather_rows` copies node rows out to
the edges (the list index of chapter 3, with a tensor of indices of any shape), `index_reduce`
folds edge rows back into node rows (`index_add` sums them, `index_amax` keeps the largest),
and `segment_softmax` is a softmax over the edges of each node, built from both. These are
exercises of notebook 06_gatv2.

    >>> table = tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    >>> gather_rows(table, tensor([2, 0, 2])).tolist()
    [[5.0, 6.0], [1.0, 2.0], [5.0, 6.0]]
    >>> index_add(zeros(2, 2), tensor([1, 0, 1]), table).tolist()
    [[3.0, 4.0], [6.0, 8.0]]
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from typing import Any

from .core import Tenxor
from .creation import full, zeros
from .storage import int32, int64, promote

INDEX_DTYPES = (int64, int32)


def index_values(index: Tenxor, rows: int) -> list[int]:
    """The elements of an integer index tensor (row-major), each checked to pick one of
    `rows` rows; negative indices count from the end, as in a list index."""
    if index.dtype not in INDEX_DTYPES:
        raise TypeError(f"an index tensor must hold int64 or int32, got {index.dtype.name}")
    picks = index.values()
    for i in picks:
        if not -rows <= i < rows:
            raise IndexError(f"index {i} is out of range for {rows} rows")
    return picks


def row_width(t: Tenxor) -> int:
    """How many elements one row (one index of the first dim) of `t` holds."""
    return math.prod(t.shape[1:])


def larger(a: Any, b: Any) -> Any:
    """The larger of two numbers, NaN if either is NaN (as torch.maximum)."""
    if a != a or b != b:
        return math.nan
    return a if a >= b else b


# ---------------------------------------------------------------------------------------------
# Exercises
# ---------------------------------------------------------------------------------------------


def gather_rows(t: Tenxor, index: Tenxor) -> Tenxor:
    """The rows of `t` that `index` names: result[k...] = t[index[k...]], a copy of shape
    index.shape + t.shape[1:] (duplicates allowed).

    `t` has at least one dim; `index` holds int64 or int32 of any shape, each between
    -rows and rows - 1 (negative ones count from the end). Raises ValueError for a 0-d `t`,
    naming its shape; TypeError for an index of another dtype, naming it; IndexError for an
    index out of range, naming the index and the number of rows.
    """
    # BEGIN SOLUTION 6.8
    if t.ndim == 0:
        raise ValueError(f"gather_rows needs a tensor with rows, got shape {t.shape}")
    rows, width = t.shape[0], row_width(t)
    values = t.values()
    starts = [(i % rows) * width for i in index_values(index, rows)]
    picked = [v for start in starts for v in values[start : start + width]]
    return Tenxor.from_values(picked, index.shape + t.shape[1:], t.dtype)
    # END SOLUTION 6.8


def index_reduce(
    t: Tenxor, index: Tenxor, source: Tenxor, fold: Callable[[Any, Any], Any]
) -> Tenxor:
    """A copy of `t` with every row of `source` folded into the row of `t` that `index` names:
    for k = 0, 1, ... in order, result[index[k]] = fold(result[index[k]], source[k]),
    element by element.

    `t` is [R, ...]; `index` is 1-D [K], int64 or int32, each between -R and R - 1; `source`
    is [K, ...] with the same trailing shape as `t`. The result has t's shape and the dtype
    that holds both t's and source's. Raises ValueError when the shapes do not fit, naming
    them; TypeError for an index of another dtype; IndexError for an index out of range,
    naming the index and R.
    """
    # BEGIN SOLUTION 6.9
    fits = t.ndim >= 1 and index.ndim == 1 and source.shape == index.shape + t.shape[1:]
    if not fits:
        raise ValueError(
            f"index_reduce needs t [R, ...], index [K] and source [K, ...] with t's trailing "
            f"shape; got t {t.shape}, index {index.shape}, source {source.shape}"
        )
    rows, width = t.shape[0], row_width(t)
    result = list(t.values())  # a copy: values() may be the storage itself
    incoming = source.values()
    for k, i in enumerate(index_values(index, rows)):
        start = (i % rows) * width
        row = incoming[k * width : (k + 1) * width]
        result[start : start + width] = map(fold, result[start : start + width], row)
    return Tenxor.from_values(result, t.shape, promote(t.dtype, source.dtype))
    # END SOLUTION 6.9


def segment_softmax(logits: Tenxor, segment: Tenxor, segments: int) -> Tenxor:
    """A softmax of `logits` [K, ...] over the rows of each segment: the rows k with the same
    segment[k] share one softmax, separately for every trailing position. The result has the
    logits' shape; a segment's weights sum to 1. Large logits must not overflow.

    `segment` is 1-D [K], int64 or int32, each between 0 and segments - 1.
    """
    # BEGIN SOLUTION 6.10
    rows = (segments,) + logits.shape[1:]
    peak = index_amax(full(rows, -math.inf, logits.dtype), segment, logits)
    weights = (logits - gather_rows(peak, segment)).exp()
    total = index_add(zeros(rows, dtype=logits.dtype), segment, weights)
    return weights / gather_rows(total, segment)
    # END SOLUTION 6.10


# ---------------------------------------------------------------------------------------------
# Provided: index_reduce with its two folds
# ---------------------------------------------------------------------------------------------


def index_add(t: Tenxor, index: Tenxor, source: Tenxor) -> Tenxor:
    """A copy of `t` with each row source[k] added to row index[k] (torch's index_add)."""
    return index_reduce(t, index, source, operator.add)


def index_amax(t: Tenxor, index: Tenxor, source: Tenxor) -> Tenxor:
    """A copy of `t` where row index[k] keeps the larger of itself and source[k], element by
    element (torch's index_reduce with "amax"); NaN wins."""
    return index_reduce(t, index, source, larger)
