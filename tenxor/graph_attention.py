"""Chapter 6: a batched GATv2 graph-attention layer, built only from tensors and their operations.

A batch holds B graphs padded to N nodes each. `node_mask[b, i]` says whether node i of graph
b is real; `adjacency[b, i, j]` says whether node i receives a message from node j. For every
real node i and every head h, attention weights alpha[b, i, j, h] are a softmax over i itself
and its neighbours j of a_h . LeakyReLU(theta_source x_i + theta_target x_j); the new features
of node i are the mean over heads of alpha_iih theta_source x_i plus the sum over neighbours
j != i of alpha_ijh theta_target x_j. Padding nodes get zeros. No loop here touches an element:
every step is a view, a broadcast, a reduction or a matmul of the earlier chapters. These are
the exercises of notebook 06_gatv2.
"""

from __future__ import annotations

from dataclasses import dataclass

from .storage import DType, float64
from .tensor import Tenxor, arange, rand, where

LEAKY_SLOPE = 0.01


def self_loops(nodes: int) -> Tenxor:
    """The [nodes, nodes] bool tensor that is true exactly on the diagonal (i == j)."""
    numbers = arange(nodes)
    return numbers.unsqueeze(1) == numbers.unsqueeze(0)


def check_shapes(x: Tenxor, adjacency: Tenxor, node_mask: Tenxor, theta_source: Tenxor,
                 theta_target: Tenxor, attention: Tenxor) -> None:  # fmt: skip
    """Raise ValueError, naming every shape, unless the inputs of a GATv2 layer fit together:
    x [B, N, DI], adjacency [B, N, N], node_mask [B, N], theta_source and theta_target
    [DI, DA], attention [DA, H]."""
    shapes = {
        "x": x.shape,
        "adjacency": adjacency.shape,
        "node_mask": node_mask.shape,
        "theta_source": theta_source.shape,
        "theta_target": theta_target.shape,
        "attention": attention.shape,
    }
    fits = x.ndim == 3 and theta_source.ndim == 2 and attention.ndim == 2
    if fits:
        (b, n, di), (_, da) = x.shape, theta_source.shape
        fits = (
            adjacency.shape == (b, n, n)
            and node_mask.shape == (b, n)
            and theta_source.shape == theta_target.shape == (di, da)
            and attention.shape[0] == da
        )
    if not fits:
        listed = ", ".join(f"{name} {shape}" for name, shape in shapes.items())
        raise ValueError(
            "GATv2 inputs must be x [B, N, DI], adjacency [B, N, N], node_mask [B, N], "
            f"theta_source and theta_target [DI, DA], attention [DA, H]; got {listed}"
        )


# ---------------------------------------------------------------------------------------------
# Exercises
# ---------------------------------------------------------------------------------------------


def edge_mask(node_mask: Tenxor) -> Tenxor:
    """The [B, N, N] bool tensor that is true where both nodes i and j of graph b are real.

    `node_mask` is [B, N], bool or numbers (nonzero means real).
    """
    # BEGIN SOLUTION 6.1
    real = node_mask != 0
    return real.unsqueeze(2) * real.unsqueeze(1)
    # END SOLUTION 6.1


def neighbours(adjacency: Tenxor, node_mask: Tenxor) -> Tenxor:
    """The [B, N, N] bool tensor that is true where node i receives from a different real node
    j: the adjacency's edges between real nodes, self loops removed.

    `adjacency` is [B, N, N] and `node_mask` [B, N], bool or numbers (nonzero means true).
    """
    # BEGIN SOLUTION 6.2
    edges = (adjacency != 0) * edge_mask(node_mask)
    return where(self_loops(adjacency.shape[-1]), False, edges)
    # END SOLUTION 6.2


def neighbours_and_self(neighbour: Tenxor, node_mask: Tenxor) -> Tenxor:
    """The [B, N, N] bool tensor of who node i attends to: its neighbours and, for a real node,
    i itself, exactly once.

    `neighbour` is [B, N, N] bool, as `neighbours` gives it (no self loops); `node_mask` [B, N].
    """
    # BEGIN SOLUTION 6.3
    own = edge_mask(node_mask)  # on the diagonal: whether node i is real
    return where(self_loops(neighbour.shape[-1]), own, neighbour)
    # END SOLUTION 6.3


def attention_logits(
    x_source: Tenxor, x_target: Tenxor, attention: Tenxor, slope: float = LEAKY_SLOPE
) -> Tenxor:
    """The [B, N, N, H] logits a_h . LeakyReLU(x_source[b, i] + x_target[b, j]).

    `x_source` and `x_target` are [B, N, DA] (node features times theta_source and
    theta_target), `attention` is [DA, H]; LeakyReLU multiplies negative values by `slope`.
    """
    # BEGIN SOLUTION 6.4
    pairs = x_source.unsqueeze(2) + x_target.unsqueeze(1)  # [B, N, N, DA]
    return pairs.leaky_relu(slope) @ attention
    # END SOLUTION 6.4


def attention_weights(logits: Tenxor, attends: Tenxor) -> Tenxor:
    """The [B, N, N, H] weights alpha: for each b, i and head h, a softmax of the logits over
    the nodes j where `attends[b, i, j]` holds, 0 elsewhere (all 0 where i attends to none).

    `logits` is [B, N, N, H], `attends` [B, N, N] bool. Large logits must not overflow.
    """
    # BEGIN SOLUTION 6.5
    return logits.masked_softmax(attends.unsqueeze(-1), dim=2)
    # END SOLUTION 6.5


def neighbour_messages(alpha: Tenxor, x_target: Tenxor, neighbour: Tenxor) -> Tenxor:
    """The [B, N, H, DA] sum over neighbours j of alpha[b, i, j, h] * x_target[b, j].

    `alpha` is [B, N, N, H], `x_target` [B, N, DA], `neighbour` [B, N, N] bool (who is a
    neighbour, self loops excluded).
    """
    # BEGIN SOLUTION 6.6
    weights = alpha * neighbour.unsqueeze(-1)  # [B, N, N, H]
    return weights.permute(0, 1, 3, 2) @ x_target.unsqueeze(1)  # [B, N, H, N] @ [B, 1, N, DA]
    # END SOLUTION 6.6


def self_messages(alpha: Tenxor, x_source: Tenxor) -> Tenxor:
    """The [B, N, H, DA] messages alpha[b, i, i, h] * x_source[b, i] of each node to itself.

    `alpha` is [B, N, N, H], `x_source` [B, N, DA].
    """
    # BEGIN SOLUTION 6.7
    diagonal = (alpha * self_loops(alpha.shape[1]).unsqueeze(-1)).sum(dim=2)  # [B, N, H]
    return diagonal.unsqueeze(-1) * x_source.unsqueeze(2)
    # END SOLUTION 6.7


def gatv2(
    x: Tenxor,
    adjacency: Tenxor,
    node_mask: Tenxor,
    theta_source: Tenxor,
    theta_target: Tenxor,
    attention: Tenxor,
    slope: float = LEAKY_SLOPE,
) -> Tenxor:
    """The [B, N, DA] output of a GATv2 layer: for every real node, the mean over heads of its
    self message and its neighbour messages; zeros for padding nodes.

    x [B, N, DI], adjacency [B, N, N], node_mask [B, N], theta_source and theta_target
    [DI, DA], attention [DA, H]. Raises ValueError naming every shape when they do not fit.
    """
    check_shapes(x, adjacency, node_mask, theta_source, theta_target, attention)
    # BEGIN SOLUTION 6.8
    x_source, x_target = x @ theta_source, x @ theta_target
    neighbour = neighbours(adjacency, node_mask)
    logits = attention_logits(x_source, x_target, attention, slope)
    alpha = attention_weights(logits, neighbours_and_self(neighbour, node_mask))
    messages = self_messages(alpha, x_source) + neighbour_messages(alpha, x_target, neighbour)
    return messages.mean(dim=2)
    # END SOLUTION 6.8


# ---------------------------------------------------------------------------------------------
# The layer object (provided)
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GATv2:
    """A GATv2 layer holding its weights: call it on (x, adjacency, node_mask)."""

    theta_source: Tenxor  # [DI, DA]
    theta_target: Tenxor  # [DI, DA]
    attention: Tenxor  # [DA, H]
    slope: float = LEAKY_SLOPE

    @classmethod
    def random(
        cls, features_in: int, features_out: int, heads: int, seed: int, dtype: DType = float64
    ) -> GATv2:
        """A layer with weights drawn uniformly from [-1, 1), reproducible from `seed`."""
        shapes = [(features_in, features_out), (features_in, features_out), (features_out, heads)]
        weights = [
            rand(*shape, seed=seed + k, low=-1.0, high=1.0, dtype=dtype)
            for k, shape in enumerate(shapes)
        ]
        return cls(*weights)

    def __call__(self, x: Tenxor, adjacency: Tenxor, node_mask: Tenxor) -> Tenxor:
        """The layer's output [B, N, DA] for node features x [B, N, DI]."""
        return gatv2(x, adjacency, node_mask, self.theta_source, self.theta_target,
                     self.attention, self.slope)  # fmt: skip

    def attention_weights(self, x: Tenxor, adjacency: Tenxor, node_mask: Tenxor) -> Tenxor:
        """The weights alpha [B, N, N, H] the layer gives each node's neighbours and itself, to
        look at or draw (the layer's output does not need them from outside)."""
        check_shapes(x, adjacency, node_mask, self.theta_source, self.theta_target,
                     self.attention)  # fmt: skip
        attends = neighbours_and_self(neighbours(adjacency, node_mask), node_mask)
        logits = attention_logits(x @ self.theta_source, x @ self.theta_target, self.attention,
                                  self.slope)  # fmt: skip
        return attention_weights(logits, attends)
