"""tenxor: a tensor library built from scratch, one chapter at a time.

The chapter modules hold the exercises: storage (1), strides (2), views (3), broadcasting
(4), reductions (5), graph attention with gather and scatter (6). The Tenxor class is in
`tenxor.core`, the constructors in `tenxor.creation`; `tenxor.course` holds the provided
course tooling.

This module is the top of the library's layers: the one that imports every layer below it
and connects them. Here the Tenxor class learns how it is shown (see SHOWN in
tenxor/core.py): as text by the printer, and as a diagram by tenxor.diagrams, which is
imported only when a first diagram is drawn.
"""

from __future__ import annotations

import builtins
from typing import Any

from . import core
from .broadcasting import broadcast_shapes
from .core import Tenxor
from .creation import arange, full, manual_seed, ones, rand, tensor, where, zeros
from .graph_attention import GATv2, gatv2, gatv2_edges
from .printing import format_tensor, tensor_to_string, tprint
from .scatter import gather_rows, index_add, index_amax, index_reduce, segment_softmax
from .storage import DTYPES, DType, Storage, bfloat16, float32, float64, int32, int64
from .storage import bool_ as bool  # noqa: A001 - tenxor.bool, as torch.bool
from .strides import Layout

__all__ = [
    "DTYPES", "DType", "GATv2", "Layout", "Storage", "Tenxor",
    "arange", "argmax", "bfloat16", "bool", "broadcast_shapes", "broadcast_to", "combine_fold",
    "exp",
    "float32", "float64", "full", "gather_rows", "gatv2", "gatv2_edges", "index_add",
    "index_amax", "index_reduce", "int32", "int64", "leaky_relu", "log", "manual_seed",
    "masked_softmax", "matmul", "max", "mean", "min", "ones", "rand", "relu", "segment_softmax",
    "softmax", "sum", "tensor", "tensor_to_string", "tprint", "where", "zeros",
]  # fmt: skip


def _draw_tensor(
    t: Tenxor, arrows: Any = None, values: bool = True, name: str = "t", max_cells: int = 64
) -> Any:
    """A stride diagram of `t` (see Tenxor.draw), drawn by tenxor.diagrams."""
    from .diagrams import tensor_diagram

    return tensor_diagram(t, arrows, values, name, max_cells)


core.SHOWN.text = format_tensor
core.SHOWN.drawing = _draw_tensor


def matmul(a: Tenxor, b: Tenxor) -> Tenxor:
    """The matrix product of `a` and `b` with NumPy's rules (see Tenxor.matmul)."""
    return a.matmul(b)


def combine_fold(
    combine: Any,
    first: Any,
    *others: Any,
    fold: Any = builtins.sum,
    dim: Any = None,
    keepdim: bool = False,
    dtype: DType | None = None,
) -> Tenxor:
    """`fold` of `combine` over the broadcast operands along `dim`, without holding the
    combined tensor (see Tenxor.combine_fold): combine_fold(operator.mul, a, b, dim=-1) is
    (a * b).sum(-1). Numbers and nested lists are operands too."""
    return core.as_tensor(first).combine_fold(
        combine, *others, fold=fold, dim=dim, keepdim=keepdim, dtype=dtype
    )


def softmax(t: Tenxor, dim: int) -> Tenxor:
    """Numerically stable softmax along `dim`."""
    return t.softmax(dim)


def masked_softmax(t: Tenxor, mask: Any, dim: int) -> Tenxor:
    """Softmax along `dim` over the elements where `mask` holds; fully masked groups give 0."""
    return t.masked_softmax(mask, dim)


def broadcast_to(t: Tenxor, shape: tuple[int, ...]) -> Tenxor:
    """A view of `t` stretched to `shape` with stride 0 (see Tenxor.expand)."""
    return t.broadcast_to(shape)


def exp(t: Tenxor) -> Tenxor:
    return t.exp()


def log(t: Tenxor) -> Tenxor:
    return t.log()


def relu(t: Tenxor) -> Tenxor:
    return t.relu()


def leaky_relu(t: Tenxor, slope: float = 0.01) -> Tenxor:
    return t.leaky_relu(slope)


def sum(t: Tenxor, dim: Any = None, keepdim: bool = False) -> Tenxor:  # noqa: A001
    return t.sum(dim, keepdim)


def mean(t: Tenxor, dim: Any = None, keepdim: bool = False) -> Tenxor:
    return t.mean(dim, keepdim)


def max(t: Tenxor, dim: Any = None, keepdim: bool = False) -> Tenxor:  # noqa: A001
    return t.max(dim, keepdim)


def min(t: Tenxor, dim: Any = None, keepdim: bool = False) -> Tenxor:  # noqa: A001
    return t.min(dim, keepdim)


def argmax(t: Tenxor, dim: int | None = None, keepdim: bool = False) -> Tenxor:
    return t.argmax(dim, keepdim)
