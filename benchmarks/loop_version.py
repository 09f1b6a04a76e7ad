"""Contender: a plain Python loop over flat lists, written directly for each workload.

The interpreter's floor: one loop iteration per element, the index arithmetic spelled out,
no library in between. A tensor here is a pair (flat row-major list, shape).
"""

from __future__ import annotations

import math

import numpy as np

NAME = "plain loop"

Flat = tuple[list[float], tuple[int, ...]]


def convert(array: np.ndarray) -> Flat:
    return array.reshape(-1).tolist(), tuple(array.shape)


def to_numpy(result: Flat) -> np.ndarray:
    values, shape = result
    return np.array(values, dtype=float).reshape(shape)


transposed_view = None  # flat lists have no views: a transposed read is a copy


def broadcast_add(a: Flat, b: Flat) -> Flat:
    (x, (n0, _, n2)), (y, (_, n1, _)) = a, b
    out = []
    for i in range(n0):
        for j in range(n1):
            for k in range(n2):
                out.append(x[i * n2 + k] + y[j * n2 + k])
    return out, (n0, n1, n2)


def transpose_contiguous(a: Flat) -> Flat:
    x, (rows, cols) = a
    out = []
    for j in range(cols):
        for i in range(rows):
            out.append(x[i * cols + j])
    return out, (cols, rows)


def sum_each_dim(a: Flat) -> tuple[Flat, Flat, Flat]:
    x, (n0, n1, n2) = a
    over0, over1, over2 = [0.0] * (n1 * n2), [0.0] * (n0 * n2), [0.0] * (n0 * n1)
    for i in range(n0):
        for j in range(n1):
            for k in range(n2):
                v = x[(i * n1 + j) * n2 + k]
                over0[j * n2 + k] += v
                over1[i * n2 + k] += v
                over2[i * n1 + j] += v
    return (over0, (n1, n2)), (over1, (n0, n2)), (over2, (n0, n1))


def batched_matmul(a: Flat, b: Flat) -> Flat:
    (x, (batch, n, k)), (y, (_, _, m)) = a, b
    out = []
    for p in range(batch):
        for i in range(n):
            for j in range(m):
                total = 0.0
                for q in range(k):
                    total += x[(p * n + i) * k + q] * y[(p * k + q) * m + j]
                out.append(total)
    return out, (batch, n, m)


def softmax(a: Flat) -> Flat:
    x, (rows, cols) = a
    out = []
    for i in range(rows):
        top = x[i * cols]
        for j in range(cols):
            top = max(top, x[i * cols + j])
        row = [math.exp(x[i * cols + j] - top) for j in range(cols)]
        total = 0.0
        for v in row:
            total += v
        for v in row:
            out.append(v / total)
    return out, (rows, cols)


def view_chain(a: Flat) -> Flat:
    """NumPy's view_chain with the five views worked out as one index formula."""
    x, (n0, n1, n2) = a
    half, inner = (n0 + 1) // 2, n1 - 1
    out = []
    for i in range(n2):
        for _ in range(3):
            for j in range(half):
                for k in range(inner):
                    out.append(x[(2 * j * n1 + k + 1) * n2 + (n2 - 1 - i)] * 2.0)
    return out, (n2, 3, half, inner)


def gatv2(x: Flat, adjacency: Flat, node_mask: Flat, theta_source: Flat, theta_target: Flat,
          attention: Flat, slope: float = 0.01) -> Flat:  # fmt: skip
    """The GATv2 layer, one graph, node, neighbour and head at a time."""
    (xs_in, (batch, nodes, di)), (adj, _), (mask, _) = x, adjacency, node_mask
    (ts, (_, da)), (tt, _), (att, (_, heads)) = theta_source, theta_target, attention

    def project(theta: list[float], b: int, i: int) -> list[float]:
        row = (b * nodes + i) * di
        return [sum(xs_in[row + p] * theta[p * da + d] for p in range(di)) for d in range(da)]

    out = [0.0] * (batch * nodes * da)
    for b in range(batch):
        source = [project(ts, b, i) for i in range(nodes)]
        target = [project(tt, b, j) for j in range(nodes)]
        for i in range(nodes):
            if not mask[b * nodes + i]:
                continue
            heard = [j for j in range(nodes) if j != i and mask[b * nodes + j]
                     and adj[(b * nodes + i) * nodes + j]]  # fmt: skip
            attended = [i, *heard]
            for h in range(heads):
                logits = []
                for j in attended:
                    score = 0.0
                    for d in range(da):
                        z = source[i][d] + target[j][d]
                        score += att[d * heads + h] * (z if z > 0 else slope * z)
                    logits.append(score)
                top = max(logits)
                weights = [math.exp(v - top) for v in logits]
                total = sum(weights)
                for position, j in enumerate(attended):
                    features = source[i] if j == i else target[j]
                    alpha = weights[position] / total / heads
                    for d in range(da):
                        out[(b * nodes + i) * da + d] += alpha * features[d]
    return out, (batch, nodes, da)


IMPLEMENTATIONS = {
    "broadcast add": broadcast_add,
    "transpose, contiguous": transpose_contiguous,
    "sum over each dim": sum_each_dim,
    "batched matmul": batched_matmul,
    "softmax": softmax,
    "five views, one op": view_chain,
    "GATv2 forward": gatv2,
}
