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
SLOPE = 0.2  # LeakyReLU's slope in the GATv2 layer, as in GATv2Conv
NEIGHBOURS = 3  # how many other nodes each node of a graph receives from


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


def leaky_relu(z: np.ndarray, slope: float) -> np.ndarray:
    return np.where(z > 0, z, slope * z)


def gatv2(x, adjacency, node_mask, theta_receiver, theta_sender, attention, bias_receiver,
          bias_sender, bias, slope=SLOPE):  # fmt: skip
    """The GATv2 layer on a padded batch as GATv2Conv computes it, heads concatenated:
    [B, N, H * DA], zeros at padding nodes."""
    batch, nodes, _ = x.shape
    real = node_mask.astype(bool)
    both = real[:, :, None] & real[:, None, :]
    diagonal = np.eye(nodes, dtype=bool)
    attends = np.where(diagonal, both, adjacency.astype(bool) & both)  # [B, N (i), N (j)]
    receiver = np.einsum("bnd,dhk->bnhk", x, theta_receiver) + bias_receiver  # [B, N, H, DA]
    sender = np.einsum("bnd,dhk->bnhk", x, theta_sender) + bias_sender
    pairs = receiver[:, :, None] + sender[:, None, :]  # [B, N (i), N (j), H, DA]
    logits = np.einsum("bijhk,hk->bijh", leaky_relu(pairs, slope), attention)
    logits = np.where(attends[..., None], logits, -np.inf)
    top = logits.max(axis=2, keepdims=True)
    e = np.exp(logits - np.where(np.isfinite(top), top, 0.0))
    total = e.sum(axis=2, keepdims=True)
    alpha = np.divide(e, total, out=np.zeros_like(e), where=total > 0)  # [B, N, N, H]
    received = np.einsum("bijh,bjhk->bihk", alpha, sender)
    out = received.reshape(batch, nodes, -1) + bias
    return np.where(real[..., None], out, 0.0)


def gatv2_real_nodes(x, adjacency, node_mask, *weights) -> np.ndarray:
    """The same layer's output at the real nodes only, in batch order: [V, H * DA], what the
    layer on the batch's edge list computes."""
    out = gatv2(x, adjacency, node_mask, *weights)
    return out.reshape(-1, out.shape[-1])[node_mask.reshape(-1) != 0]


# Inputs.


def two(full_a, full_b, tiny_a, tiny_b):
    def make(rng: np.random.Generator, size: str) -> Arrays:
        return uniform(rng, *pick(size, full_a, tiny_a)), uniform(rng, *pick(size, full_b, tiny_b))

    return make


def one(full, tiny):
    def make(rng: np.random.Generator, size: str) -> Arrays:
        return (uniform(rng, *pick(size, full, tiny)),)

    return make


def graph_batch(full_nodes: int) -> Callable[[np.random.Generator, str], Arrays]:
    """Padded batches of graphs, N = `full_nodes` at full size: x, adjacency, node_mask and a
    layer's weights (theta_receiver, theta_sender, attention, bias_receiver, bias_sender,
    bias), B=32, DI=16, DA=16, H=4. Graph b has N - (b mod (N/4 + 1)) real nodes, the rest is
    padding; each real node receives from NEIGHBOURS other real nodes drawn at random, and no
    node from itself."""

    def make(rng: np.random.Generator, size: str) -> Arrays:
        b, n, di, da, h = pick(size, (32, full_nodes, 16, 16, 4), (2, 5, 3, 2, 2))
        counts = n - np.arange(b) % (n // 4 + 1)  # N, N - 1, ..., N - N/4 real nodes, then N again
        node_mask = (np.arange(n)[None, :] < counts[:, None]).astype(float)
        adjacency = np.zeros((b, n, n))
        for graph, count in enumerate(counts):
            for i in range(count):
                others = [j for j in range(count) if j != i]
                adjacency[graph, i, rng.choice(others, NEIGHBOURS, replace=False)] = 1.0
        x = uniform(rng, b, n, di) * node_mask[:, :, None]
        thetas = uniform(rng, di, h, da), uniform(rng, di, h, da)
        biases = uniform(rng, h, da), uniform(rng, h, da), uniform(rng, h * da)
        return x, adjacency, node_mask, *thetas, uniform(rng, h, da), *biases

    return make


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
    Workload("GATv2 dense, N=16", "B=32, N=16, DI=16, DA=16, H=4, 3 neighbours; padded batch",
             graph_batch(16), gatv2),
    Workload("GATv2 edges, N=16", "the same graphs as one edge list; real nodes only",
             graph_batch(16), gatv2_real_nodes),
    Workload("GATv2 dense, N=64", "B=32, N=64, DI=16, DA=16, H=4, 3 neighbours; padded batch",
             graph_batch(64), gatv2),
    Workload("GATv2 edges, N=64", "the same graphs as one edge list; real nodes only",
             graph_batch(64), gatv2_real_nodes),
]  # fmt: skip

VIEW_SHAPE = (1000, 1000)  # the tensor whose transposed view is measured: 1,000,000 elements


def inputs(workload: Workload, size: str, seed: int = 0) -> Arrays:
    """The inputs of `workload` at `size` ("full" or "tiny"), the same for every contender."""
    return workload.make(np.random.default_rng(seed), size)
