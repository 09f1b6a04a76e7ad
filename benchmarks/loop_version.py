"""Contender: a plain Python loop over flat lists, written directly for each workload.

The interpreter's floor: one loop iteration per element, the index arithmetic spelled out,
no library in between. A tensor here is a pair (flat row-major list, shape). The GATv2 layer
has one version, which visits only the edges that exist; the edge-list workloads run it too
and keep the rows of the real nodes.
"""

from __future__ import annotations

import math

import numpy as np

from .workloads import SLOPE

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


def gatv2(x: Flat, adjacency: Flat, node_mask: Flat, theta_receiver: Flat, theta_sender: Flat,
          attention: Flat, bias_receiver: Flat, bias_sender: Flat, bias: Flat,
          slope: float = SLOPE) -> Flat:  # fmt: skip
    """GATv2Conv's layer on a padded batch, heads concatenated, one graph, node and head at a
    time, over the edges that exist: [B, N, H * DA], zeros at padding nodes."""
    (features, (batch, nodes, di)), (adj, _), (mask, _) = x, adjacency, node_mask
    (receive, (_, heads, da)), (send, _), (att, _) = theta_receiver, theta_sender, attention
    (receive_bias, _), (send_bias, _), (out_bias, _) = bias_receiver, bias_sender, bias
    width = heads * da  # a projection holds head 0's DA features, then head 1's, ...

    def project(theta: list[float], offset: list[float], node: int) -> list[float]:
        row = node * di
        return [offset[c] + sum(features[row + p] * theta[p * width + c] for p in range(di))
                for c in range(width)]  # fmt: skip

    out = [0.0] * (batch * nodes * width)
    for b in range(batch):
        real = [i for i in range(nodes) if mask[b * nodes + i]]
        receiver = {i: project(receive, receive_bias, b * nodes + i) for i in real}
        sender = {j: project(send, send_bias, b * nodes + j) for j in real}
        for i in real:
            row = (b * nodes + i) * nodes
            heard = [j for j in real if j != i and adj[row + j]] + [i]  # and itself
            base = (b * nodes + i) * width
            for h in range(heads):
                columns = range(h * da, (h + 1) * da)
                logits = []
                for j in heard:
                    score = 0.0
                    for c in columns:
                        z = receiver[i][c] + sender[j][c]
                        score += att[c] * (z if z > 0 else slope * z)
                    logits.append(score)
                top = max(logits)
                weights = [math.exp(v - top) for v in logits]
                total = sum(weights)
                for weight, j in zip(weights, heard):
                    alpha = weight / total
                    for c in columns:
                        out[base + c] += alpha * sender[j][c]
            for c in range(width):
                out[base + c] += out_bias[c]
    return out, (batch, nodes, width)


def gatv2_real_nodes(x: Flat, adjacency: Flat, node_mask: Flat, *weights: Flat) -> Flat:
    """The same loop's output at the real nodes only, in batch order: [V, H * DA]."""
    values, (batch, nodes, width) = gatv2(x, adjacency, node_mask, *weights)
    mask = node_mask[0]
    rows = [p for p in range(batch * nodes) if mask[p]]
    return [v for p in rows for v in values[p * width : (p + 1) * width]], (len(rows), width)


IMPLEMENTATIONS = {
    "broadcast add": broadcast_add,
    "transpose, contiguous": transpose_contiguous,
    "sum over each dim": sum_each_dim,
    "batched matmul": batched_matmul,
    "softmax": softmax,
    "five views, one op": view_chain,
    "GATv2 dense, N=16": gatv2,
    "GATv2 edges, N=16": gatv2_real_nodes,
    "GATv2 dense, N=64": gatv2,
    "GATv2 edges, N=64": gatv2_real_nodes,
}
