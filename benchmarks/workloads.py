"""The workloads every contender runs: their inputs (seeded NumPy arrays) and NumPy's answer.

Each workload has a full size, for the table, and a tiny size, for the test that keeps this
code working. Inputs are float64 arrays; masks and adjacency are 0.0 / 1.0. A contender gets
the inputs converted to its own form, untimed, and must return what NumPy returns here (a
tuple of arrays where NumPy returns a tuple).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

Arrays = tuple[np.ndarray, ...]


@dataclass(frozen=True)
class Workload:
    """A named computation: how to make its inputs at each size, and NumPy's result."""

    name: str
    what: str  # one line for the table
    make: Callable[[np.random.Generator, str], Arrays]
    numpy: Callable[..., np.ndarray | Arrays]


def uniform(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return rng.uniform(-1.0, 1.0, shape)


def pick(size: str, full: tuple[int, ...], tiny: tuple[int, ...]) -> tuple[int, ...]:
    return full if size == "full" else tiny


# NumPy's answers: the oracle every contender is checked against, and the NumPy contender.


def broadcast_add(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return a + b


def transpose_contiguous(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a.T)


def sum_each_dim(a: np.ndarray) -> Arrays:
    return tuple(a.sum(axis=dim) for dim in range(a.ndim))


def batched_matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return a @ b


def softmax_last(a: np.ndarray) -> np.ndarray:
    e = np.exp(a - a.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def view_chain(a: np.ndarray) -> np.ndarray:
    """Five views (permute, step slice, reversal, unsqueeze, expand), then one multiply."""
    v = a.transpose(2, 0, 1)[:, ::2, 1:][::-1][:, None]
    v = np.broadcast_to(v, (v.shape[0], 3, *v.shape[2:]))
    return v * 2.0


def gatv2(x, adjacency, node_mask, theta_source, theta_target, attention, slope=0.01):
    """The GATv2 layer of chapter 6 from its equations, vectorised."""
    nodes = node_mask.shape[1]
    real = node_mask.astype(bool)
    both = real[:, :, None] & real[:, None, :]
    neighbour = adjacency.astype(bool) & both & ~np.eye(nodes, dtype=bool)
    attends = neighbour | (np.eye(nodes, dtype=bool) & both)
    xs, xt = x @ theta_source, x @ theta_target
    z = xs[:, :, None, :] + xt[:, None, :, :]
    logits = np.einsum("bijd,dh->bijh", np.where(z > 0, z, slope * z), attention)
    logits = np.where(attends[..., None], logits, -np.inf)
    top = logits.max(axis=2, keepdims=True)
    e = np.exp(logits - np.where(np.isfinite(top), top, 0.0))
    total = e.sum(axis=2, keepdims=True)
    alpha = np.divide(e, total, out=np.zeros_like(e), where=total > 0)
    own = np.einsum("biih,bid->bihd", alpha, xs)
    heard = np.einsum("bijh,bij,bjd->bihd", alpha, neighbour, xt)
    return (own + heard).mean(axis=2)


# Inputs.


def two(full_a, full_b, tiny_a, tiny_b):
    def make(rng: np.random.Generator, size: str) -> Arrays:
        return uniform(rng, *pick(size, full_a, tiny_a)), uniform(rng, *pick(size, full_b, tiny_b))

    return make


def one(full, tiny):
    def make(rng: np.random.Generator, size: str) -> Arrays:
        return (uniform(rng, *pick(size, full, tiny)),)

    return make


def graph_batch(rng: np.random.Generator, size: str) -> Arrays:
    """x, adjacency, node_mask and the layer's weights: B=32, N=16, DI=16, DA=16, H=4."""
    b, n, di, da, h = pick(size, (32, 16, 16, 16, 4), (2, 4, 3, 2, 2))
    counts = rng.integers(1, n + 1, b)
    node_mask = (np.arange(n)[None, :] < counts[:, None]).astype(float)
    adjacency = (rng.uniform(size=(b, n, n)) < 0.3).astype(float)
    x = uniform(rng, b, n, di) * node_mask[:, :, None]
    return x, adjacency, node_mask, uniform(rng, di, da), uniform(rng, di, da), uniform(rng, da, h)


WORKLOADS = [
    Workload("broadcast add", "(64, 1, 128) + (1, 64, 128)",
             two((64, 1, 128), (1, 64, 128), (2, 1, 3), (1, 2, 3)), broadcast_add),
    Workload("transpose, contiguous", "(256, 256).T made contiguous",
             one((256, 256), (3, 4)), transpose_contiguous),
    Workload("sum over each dim", "(64, 64, 32): three sums, one per dim",
             one((64, 64, 32), (2, 3, 4)), sum_each_dim),
    Workload("batched matmul", "(8, 32, 32) @ (8, 32, 32)",
             two((8, 32, 32), (8, 32, 32), (2, 3, 4), (2, 4, 2)), batched_matmul),
    Workload("softmax", "(128, 256) along the last dim",
             one((128, 256), (3, 5)), softmax_last),
    Workload("five views, one op", "(64, 64, 64): permute, slice, flip, unsqueeze, expand; * 2",
             one((64, 64, 64), (4, 4, 3)), view_chain),
    Workload("GATv2 forward", "B=32, N=16, DI=16, DA=16, H=4", graph_batch, gatv2),
]  # fmt: skip

VIEW_SHAPE = (1000, 1000)  # the tensor whose transposed view is measured: 1,000,000 elements


def inputs(workload: Workload, size: str, seed: int = 0) -> Arrays:
    """The inputs of `workload` at `size` ("full" or "tiny"), the same for every contender."""
    return workload.make(np.random.default_rng(seed), size)
