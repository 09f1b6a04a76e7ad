"""The wrapper design: a tensor library whose views are objects wrapping other tensors.

Only a base tensor holds elements, in a flat row-major list. A view (permuted, reshaped or
sliced) holds the tensor it wraps and answers every element read by translating the index it is
asked for into an index of the wrapped tensor, so a chain of views pays one translation per view
on each read. Pointwise operations broadcast their operands and walk every index of the result;
reductions walk the result's indices and, for each, the reduced dim; matrix multiplication is a
broadcast product followed by a sum over the shared dim.

Only the standard library is used inside the design; NumPy appears in `convert` and `to_numpy`
alone, which move data in and out for the benchmark runner.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from typing import TypeAlias

import numpy as np

NAME = "wrapper design"

Index: TypeAlias = tuple[int, ...]
Shape: TypeAlias = tuple[int, ...]
SliceSpec: TypeAlias = "slice | list[int] | int | None"
Binary: TypeAlias = Callable[[float, float], float]


# Index arithmetic.


def normalize_dim(dim: int, rank: int) -> int:
    """`dim` as a non-negative dim of a tensor of `rank` dims."""
    if not -rank <= dim < rank:
        raise IndexError(f"dim {dim} out of range for {rank} dims")
    return dim % rank


def flat_position(index: Index, shape: Shape) -> int:
    """Where the element at `index` sits in the row-major flat list of a tensor of `shape`."""
    if len(index) != len(shape):
        raise IndexError(f"index {index} does not fit shape {shape}")
    position = 0
    stride = 1
    for k in range(len(shape) - 1, -1, -1):
        if not 0 <= index[k] < shape[k]:
            raise IndexError(f"index {index[k]} out of range for dim {k} of size {shape[k]}")
        position += stride * index[k]
        stride *= shape[k]
    return position


def unflatten(position: int, shape: Shape) -> Index:
    """The index of the element at row-major `position` in a tensor of `shape`."""
    strides = [1] * len(shape)
    for k in range(len(shape) - 1, 0, -1):
        strides[k - 1] = strides[k] * shape[k]
    index = []
    for size, stride in zip(shape, strides):
        i, position = divmod(position, stride)
        if i >= size:
            raise IndexError(f"position out of range for shape {shape}")
        index.append(i)
    return tuple(index)


def next_index(index: Index, shape: Shape) -> Index | None:
    """The index after `index` in row-major order, or None if `index` is the last one."""
    digits = list(index)
    for k in range(len(digits) - 1, -1, -1):
        digits[k] += 1
        if digits[k] < shape[k]:
            return tuple(digits)
        digits[k] = 0
    return None


def walk(shape: Shape) -> Iterator[Index]:
    """Every index of a tensor of `shape`, in row-major order."""
    if any(size == 0 for size in shape):
        return
    index: Index | None = (0,) * len(shape)
    while index is not None:
        yield index
        index = next_index(index, shape)


def resolve_shape(shape: Sequence[int], count: int) -> Shape:
    """`shape` with its one -1 (if any) replaced by the size that makes it hold `count`."""
    shape = tuple(shape)
    if shape.count(-1) > 1 or any(size < -1 for size in shape):
        raise ValueError(f"invalid shape {shape}")
    known = math.prod(size for size in shape if size != -1)
    if -1 in shape:
        if known == 0 or count % known != 0:
            raise ValueError(f"shape {shape} cannot hold {count} elements")
        shape = tuple(count // known if size == -1 else size for size in shape)
    if math.prod(shape) != count:
        raise ValueError(f"shape {shape} cannot hold {count} elements")
    return shape


def sliced_size(spec: SliceSpec, size: int) -> int:
    """How many entries `spec` takes from a dim of `size`."""
    if spec is None:
        return size
    if isinstance(spec, int):
        return 1
    if isinstance(spec, list):
        return len(spec)
    if isinstance(spec, slice):
        return len(range(*spec.indices(size)))
    raise TypeError(f"unsupported slice spec {spec!r}")


def unslice(index: Index, shape: Shape, specs: Sequence[SliceSpec]) -> Index:
    """The index, in a tensor of `shape`, of the entry at `index` of its slice by `specs`."""
    source = []
    for i, size, spec in zip(index, shape, specs):
        if not 0 <= i < sliced_size(spec, size):
            raise IndexError(f"index {i} out of range of slice {spec!r}")
        if spec is None:
            source.append(i)
        elif isinstance(spec, int):
            source.append(spec)
        elif isinstance(spec, list):
            source.append(spec[i])
        else:
            start, _, step = spec.indices(size)
            source.append(start + step * i)
    return tuple(source)


# Tensors.


class Tensor(ABC):
    """A tensor of float elements, read and written by multi-dimensional index."""

    shape: Shape

    @abstractmethod
    def get(self, index: Index) -> float:
        """The element at `index`."""

    @abstractmethod
    def set(self, index: Index, value: float) -> None:
        """Write `value` at `index`."""

    def numel(self) -> int:
        """The number of elements."""
        return math.prod(self.shape)

    def reshape(self, shape: Sequence[int]) -> Tensor:
        """A view of the elements, in row-major order, with `shape` (one size may be -1)."""
        return ReshapedView(self, resolve_shape(shape, self.numel()))

    def squeeze(self, dim: int) -> Tensor:
        """A view without `dim`, which must have size 1."""
        dim = normalize_dim(dim, len(self.shape))
        if self.shape[dim] != 1:
            raise ValueError(f"cannot squeeze dim {dim} of size {self.shape[dim]}")
        return self.reshape(self.shape[:dim] + self.shape[dim + 1 :])

    def unsqueeze(self, dim: int) -> Tensor:
        """A view with a new dim of size 1 at `dim`."""
        dim = normalize_dim(dim, len(self.shape) + 1)
        return self.reshape(self.shape[:dim] + (1,) + self.shape[dim:])

    def permute(self, *order: int) -> Tensor:
        """A view whose dim k is dim `order[k]` of this tensor."""
        return PermutedView(self, order)

    def transpose(self) -> Tensor:
        """A view with the last two dims swapped."""
        order = list(range(len(self.shape)))
        order[-1], order[-2] = order[-2], order[-1]
        return self.permute(*order)

    def __getitem__(self, key: SliceSpec | tuple[SliceSpec, ...]) -> Tensor:
        """A view of a subset of each dim (an int keeps its dim, with size 1)."""
        return SlicedView(self, key if isinstance(key, tuple) else (key,))

    def expand(self, dim: int, size: int) -> Tensor:
        """A view repeating `dim`, which must have size 1, `size` times."""
        dim = normalize_dim(dim, len(self.shape))
        if self.shape[dim] != 1:
            raise ValueError(f"cannot expand dim {dim} of size {self.shape[dim]}")
        return SlicedView(self, (None,) * dim + ([0] * size,))

    def map(self, op: Callable[[float], float]) -> BaseTensor:
        """A new tensor holding `op` of each element."""
        return BaseTensor([op(self.get(index)) for index in walk(self.shape)], self.shape)

    def copy(self) -> BaseTensor:
        """A new base tensor holding the elements in row-major order."""
        return BaseTensor([self.get(index) for index in walk(self.shape)], self.shape)


class BaseTensor(Tensor):
    """A tensor that owns its elements, as a flat list in row-major order."""

    def __init__(self, values: list[float], shape: Sequence[int]) -> None:
        self.values = values
        self.shape = tuple(shape)
        if len(values) != math.prod(self.shape):
            raise ValueError(f"{len(values)} values do not fill shape {self.shape}")

    def get(self, index: Index) -> float:
        return self.values[flat_position(index, self.shape)]

    def set(self, index: Index, value: float) -> None:
        self.values[flat_position(index, self.shape)] = value

    def reshape(self, shape: Sequence[int]) -> BaseTensor:
        """The same elements under `shape`, sharing the list."""
        return BaseTensor(self.values, resolve_shape(shape, len(self.values)))

    def map(self, op: Callable[[float], float]) -> BaseTensor:
        return BaseTensor([op(value) for value in self.values], self.shape)


class PermutedView(Tensor):
    """The wrapped tensor with its dims reordered."""

    def __init__(self, wrapped: Tensor, order: Sequence[int]) -> None:
        rank = len(wrapped.shape)
        order = tuple(normalize_dim(dim, rank) for dim in order)
        if sorted(order) != list(range(rank)):
            raise ValueError(f"{order} is not a permutation of the dims of {wrapped.shape}")
        self.wrapped = wrapped
        self.shape = tuple(wrapped.shape[dim] for dim in order)
        self.source_dims = tuple(order.index(dim) for dim in range(rank))

    def get(self, index: Index) -> float:
        return self.wrapped.get(tuple(index[k] for k in self.source_dims))

    def set(self, index: Index, value: float) -> None:
        self.wrapped.set(tuple(index[k] for k in self.source_dims), value)


class ReshapedView(Tensor):
    """The wrapped tensor's elements, in row-major order, under another shape."""

    def __init__(self, wrapped: Tensor, shape: Shape) -> None:
        self.wrapped = wrapped
        self.shape = shape

    def source(self, index: Index) -> Index:
        """The wrapped tensor's index of the element at `index`."""
        return unflatten(flat_position(index, self.shape), self.wrapped.shape)

    def get(self, index: Index) -> float:
        return self.wrapped.get(self.source(index))

    def set(self, index: Index, value: float) -> None:
        self.wrapped.set(self.source(index), value)


class SlicedView(Tensor):
    """A subset of each dim of the wrapped tensor: all of it, one entry, a list or a slice."""

    def __init__(self, wrapped: Tensor, specs: Sequence[SliceSpec]) -> None:
        rank = len(wrapped.shape)
        if len(specs) > rank:
            raise IndexError(f"{len(specs)} slice specs for {rank} dims")
        self.wrapped = wrapped
        self.specs = tuple(specs) + (None,) * (rank - len(specs))
        self.shape = tuple(sliced_size(spec, size) for spec, size in zip(self.specs, wrapped.shape))

    def get(self, index: Index) -> float:
        return self.wrapped.get(unslice(index, self.wrapped.shape, self.specs))

    def set(self, index: Index, value: float) -> None:
        self.wrapped.set(unslice(index, self.wrapped.shape, self.specs), value)


# Operations.


def broadcast_shapes(a: Shape, b: Shape) -> tuple[Shape, Shape, Shape]:
    """Both shapes padded with leading 1s to the same rank, and the broadcast shape."""
    rank = max(len(a), len(b))
    a = (1,) * (rank - len(a)) + a
    b = (1,) * (rank - len(b)) + b
    shape = []
    for k, (m, n) in enumerate(zip(a, b)):
        if m != n and m != 1 and n != 1:
            raise ValueError(f"shapes {a} and {b} do not broadcast at dim {k}")
        shape.append(n if m == 1 else m)
    return a, b, tuple(shape)


def pointwise(a: Tensor, b: Tensor, op: Binary) -> BaseTensor:
    """`op` of the elements of `a` and `b` at each index of their broadcast shape."""
    shape_a, shape_b, shape = broadcast_shapes(a.shape, b.shape)
    if shape_a != a.shape:
        a = a.reshape(shape_a)
    if shape_b != b.shape:
        b = b.reshape(shape_b)
    result = BaseTensor([0.0] * math.prod(shape), shape)
    for index in walk(shape):
        index_a = tuple(i if n > 1 else 0 for i, n in zip(index, shape_a))
        index_b = tuple(i if n > 1 else 0 for i, n in zip(index, shape_b))
        result.set(index, op(a.get(index_a), b.get(index_b)))
    return result


def add(a: Tensor, b: Tensor) -> BaseTensor:
    """Elementwise a + b, broadcast."""
    return pointwise(a, b, lambda x, y: x + y)


def subtract(a: Tensor, b: Tensor) -> BaseTensor:
    """Elementwise a - b, broadcast."""
    return pointwise(a, b, lambda x, y: x - y)


def multiply(a: Tensor, b: Tensor) -> BaseTensor:
    """Elementwise a * b, broadcast."""
    return pointwise(a, b, lambda x, y: x * y)


def divide(a: Tensor, b: Tensor) -> BaseTensor:
    """Elementwise a / b, broadcast."""
    return pointwise(a, b, lambda x, y: x / y)


def reduce_dim(t: Tensor, dim: int, start: float, op: Binary) -> BaseTensor:
    """The elements along `dim` folded with `op` from `start`; `dim` is removed."""
    dim = normalize_dim(dim, len(t.shape))
    shape = t.shape[:dim] + (1,) + t.shape[dim + 1 :]
    result = BaseTensor([start] * math.prod(shape), shape)
    for index in walk(shape):
        total = start
        for i in range(t.shape[dim]):
            total = op(total, t.get(index[:dim] + (i,) + index[dim + 1 :]))
        result.set(index, total)
    return result.squeeze(dim)


def sum_dim(t: Tensor, dim: int) -> BaseTensor:
    """The sum along `dim`."""
    return reduce_dim(t, dim, 0.0, lambda x, y: x + y)


def max_dim(t: Tensor, dim: int) -> BaseTensor:
    """The maximum along `dim` (-inf where every element is -inf)."""
    return reduce_dim(t, dim, -math.inf, max)


def matmul(a: Tensor, b: Tensor) -> BaseTensor:
    """The matrix product over the last two dims, broadcast over the leading ones."""
    return sum_dim(multiply(a.unsqueeze(-1), b.unsqueeze(-3)), -2)


def softmax(t: Tensor, dim: int) -> BaseTensor:
    """The softmax along `dim`."""
    top = max_dim(t, dim).unsqueeze(dim)
    exps = subtract(t, top).map(math.exp)
    return divide(exps, sum_dim(exps, dim).unsqueeze(dim))


def identity(size: int) -> BaseTensor:
    """The `size` x `size` identity matrix."""
    return BaseTensor([float(i == j) for i in range(size) for j in range(size)], (size, size))


# The workloads of benchmarks/workloads.py.


def broadcast_add(a: Tensor, b: Tensor) -> Tensor:
    """a + b, broadcast."""
    return add(a, b)


def transpose_contiguous(a: Tensor) -> Tensor:
    """A new base tensor holding the transpose of `a`."""
    return a.transpose().copy()


def sum_each_dim(a: Tensor) -> tuple[Tensor, ...]:
    """The sum along each dim, one tensor per dim."""
    return tuple(sum_dim(a, dim) for dim in range(len(a.shape)))


def batched_matmul(a: Tensor, b: Tensor) -> Tensor:
    """a @ b."""
    return matmul(a, b)


def softmax_last(a: Tensor) -> Tensor:
    """The softmax along the last dim."""
    return softmax(a, -1)


def view_chain(a: Tensor) -> Tensor:
    """Five views (permute, step slice, reversal, unsqueeze, expand), then one multiply."""
    v = a.permute(2, 0, 1)[:, ::2, 1:][::-1].unsqueeze(1)
    v = v.expand(1, 3)
    return multiply(v, BaseTensor([2.0], (1,)))


def gatv2(
    x: Tensor,
    adjacency: Tensor,
    node_mask: Tensor,
    theta_receiver: Tensor,
    theta_sender: Tensor,
    attention: Tensor,
    bias_receiver: Tensor,
    bias_sender: Tensor,
    bias: Tensor,
    slope: float = 0.2,
) -> Tensor:
    """GATv2Conv's layer over a padded batch of graphs, heads concatenated: [B, N, DI]
    features to [B, N, H * DA], zeros at padding nodes. Every pair of nodes is computed."""
    batch, nodes, features_in = x.shape
    _, heads, features = theta_receiver.shape
    eye = identity(nodes)  # [N, N]
    real_pair = multiply(node_mask.unsqueeze(2), node_mask.unsqueeze(1))  # [B, N, N]
    neighbour = multiply(multiply(adjacency, real_pair), eye.map(lambda v: 1.0 - v))
    attends = add(neighbour, multiply(eye, real_pair))  # neighbours and the node itself

    def project(theta: Tensor, offset: Tensor) -> Tensor:  # [B, N, H, DA]
        flat = matmul(x, theta.reshape((features_in, heads * features)))
        return add(flat.reshape((batch, nodes, heads, features)), offset)

    receiver = project(theta_receiver, bias_receiver)
    sender = project(theta_sender, bias_sender)
    pairs = add(receiver.unsqueeze(2), sender.unsqueeze(1))  # [B, N (i), N (j), H, DA]
    leaky = pairs.map(lambda v: v if v > 0 else slope * v)
    logits = sum_dim(multiply(leaky, attention), -1)  # [B, N, N, H]

    masked = pointwise(logits, attends.unsqueeze(-1), lambda v, m: v if m else -math.inf)
    top = max_dim(masked, 2).map(lambda v: v if math.isfinite(v) else 0.0)  # [B, N, H]
    exps = subtract(masked, top.unsqueeze(2)).map(math.exp)
    totals = sum_dim(exps, 2).unsqueeze(2)
    alpha = pointwise(exps, totals, lambda e, s: e / s if s > 0 else 0.0)  # [B, N, N, H]

    received = sum_dim(multiply(alpha.unsqueeze(-1), sender.unsqueeze(1)), 2)  # [B, N, H, DA]
    out = add(received.reshape((batch, nodes, heads * features)), bias)
    return multiply(out, node_mask.unsqueeze(-1))


# The interface of the benchmark runner.


def convert(array: np.ndarray) -> Tensor:
    """A base tensor holding `array`'s elements."""
    array = np.asarray(array, dtype=np.float64)
    return BaseTensor([float(v) for v in array.ravel().tolist()], array.shape)


def to_numpy(result: Tensor) -> np.ndarray:
    """`result` as a NumPy array of its shape."""
    values = [result.get(index) for index in walk(result.shape)]
    return np.array(values, dtype=np.float64).reshape(result.shape)


def transposed_view(t: Tensor) -> Tensor:
    """A view of the 2-D `t` with its dims swapped, sharing its elements."""
    return t.transpose()


IMPLEMENTATIONS: dict[str, Callable[..., object]] = {
    "broadcast add": broadcast_add,
    "transpose, contiguous": transpose_contiguous,
    "sum over each dim": sum_each_dim,
    "batched matmul": batched_matmul,
    "softmax": softmax_last,
    "five views, one op": view_chain,
    "GATv2 dense, N=16": gatv2,  # the edge-list form and N=64 are left out: see the README
}
