"""Chapter 6: GATv2 graph attention, built only from tensors and their operations.

The layer is the one of Brody, Alon and Yahav, "How Attentive are Graph Attention Networks?"
(ICLR 2022), computed exactly as PyTorch Geometric's `GATv2Conv` computes it. Node i receives
from its neighbours j (an edge j -> i) and from itself. For every head h:

    e[i, j, h] = a_h . LeakyReLU(R_h x_i + S_h x_j)        R: receiver, S: sender projection
    alpha[i, j, h] = softmax of e[i, ., h] over j in the neighbours of i and i itself
    out[i, h] = sum over those j of alpha[i, j, h] * S_h x_j

and the heads are concatenated (H * DA features) or averaged (DA), plus a bias. In
`GATv2Conv(DI, DA, heads=H)` the receiver projection R is `lin_r` (Θ_s in its documentation),
the sender projection S is `lin_l` (Θ_t); `share_weights=True` makes them one.

Two forms of the same layer: `gatv2` on a batch of B graphs padded to N nodes (`adjacency[b,
i, j]` says whether node i receives from node j, `node_mask[b, i]` whether node i is real),
which computes every pair of nodes; and `gatv2_edges` on an edge list (edges sources[k] ->
targets[k]), which computes only the edges that exist. These are the exercises of notebook
06_gatv2.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from .core import Tenxor
from .creation import arange, rand, tensor, where, zeros
from .scatter import gather_rows, index_add, segment_softmax
from .storage import DType, float64, int64

SLOPE = 0.2  # LeakyReLU's slope for negative values, as in the paper and GATv2Conv


@dataclass(frozen=True)
class GATv2:
    """The weights and settings of one GATv2 layer; call it on (x, adjacency, node_mask).

    theta_receiver and theta_sender are [DI, H, DA]: head h projects a node's DI features to
    DA with theta[:, h, :]. With shared weights they are one tensor (and so are their biases).
    attention is [H, DA]; bias_receiver and bias_sender are [H, DA]; the output bias is
    [H * DA] when the heads are concatenated and [DA] when they are averaged. Any bias may be
    None (GATv2Conv's bias=False).
    """

    theta_receiver: Tenxor
    theta_sender: Tenxor
    attention: Tenxor
    bias_receiver: Tenxor | None = None
    bias_sender: Tenxor | None = None
    bias: Tenxor | None = None
    concat: bool = True
    slope: float = SLOPE

    @property
    def heads(self) -> int:
        return self.attention.shape[0]

    @property
    def features_out(self) -> int:
        """DA, the features of each head."""
        return self.attention.shape[1]

    @classmethod
    def random(
        cls,
        features_in: int,
        features_out: int,
        heads: int,
        seed: int,
        concat: bool = True,
        share_weights: bool = False,
        bias: bool = True,
        slope: float = SLOPE,
        dtype: DType = float64,
    ) -> GATv2:
        """A layer with every weight drawn uniformly from [-1, 1), reproducible from `seed`,
        configured as GATv2Conv(features_in, features_out, heads, concat, slope, bias,
        share_weights)."""
        shapes = {
            "theta_receiver": (features_in, heads, features_out),
            "theta_sender": (features_in, heads, features_out),
            "attention": (heads, features_out),
            "bias_receiver": (heads, features_out),
            "bias_sender": (heads, features_out),
            "bias": (heads * features_out if concat else features_out,),
        }
        weights = {
            name: rand(*shape, seed=seed + k, low=-1.0, high=1.0, dtype=dtype)
            for k, (name, shape) in enumerate(shapes.items())
            if bias or not name.startswith("bias")
        }
        if share_weights:
            weights["theta_sender"] = weights["theta_receiver"]
            weights["bias_sender"] = weights.get("bias_receiver")
        return cls(**weights, concat=concat, slope=slope)

    def shared(self) -> GATv2:
        """The same layer with shared weights: the receiver's projection used for senders."""
        return replace(self, theta_sender=self.theta_receiver, bias_sender=self.bias_receiver)

    def __call__(self, x: Tenxor, adjacency: Tenxor, node_mask: Tenxor) -> Tenxor:
        """The layer's output for a padded batch: [B, N, H * DA], or [B, N, DA] averaged."""
        return gatv2(x, adjacency, node_mask, self)

    def on_edges(self, x: Tenxor, sources: Tenxor, targets: Tenxor) -> Tenxor:
        """The layer's output for one edge list: [V, H * DA], or [V, DA] averaged."""
        return gatv2_edges(x, sources, targets, self)

    def attention_weights(self, x: Tenxor, adjacency: Tenxor, node_mask: Tenxor) -> Tenxor:
        """The weights alpha [B, N, N, H] the layer gives each node's neighbours and itself,
        to look at or draw."""
        check_batch(x, adjacency, node_mask, self)
        receiver = project(x, self.theta_receiver, self.bias_receiver)
        sender = project(x, self.theta_sender, self.bias_sender)
        logits = attention_logits(receiver, sender, self.attention, self.slope)
        return attention_weights(logits, attends(adjacency, node_mask))


# ---------------------------------------------------------------------------------------------
# Checks and helpers (provided)
# ---------------------------------------------------------------------------------------------


def self_loops(nodes: int) -> Tenxor:
    """The [nodes, nodes] bool tensor that is true exactly on the diagonal (i == j)."""
    numbers = arange(nodes)
    return numbers.unsqueeze(1) == numbers.unsqueeze(0)


def feature_score(slope: float) -> Callable[[float, float, float], float]:
    """The function (r, s, a) -> a * LeakyReLU(r + s): what one feature adds to a logit, for a
    receiver's feature r, a sender's s and the attention weight a."""

    def score(r: float, s: float, a: float) -> float:
        z = r + s
        return a * (z if z > 0 else slope * z)

    return score


def weight_problems(layer: GATv2, features_in: int) -> list[str]:
    """The weights of a layer whose shapes do not fit nodes of `features_in` features, each
    with its shape and the shape it should have."""
    if layer.attention.ndim != 2:
        return [f"attention {layer.attention.shape} (expected [H, DA])"]
    heads, features = layer.attention.shape
    expected = {
        "theta_receiver": (layer.theta_receiver, (features_in, heads, features)),
        "theta_sender": (layer.theta_sender, (features_in, heads, features)),
        "bias_receiver": (layer.bias_receiver, (heads, features)),
        "bias_sender": (layer.bias_sender, (heads, features)),
        "bias": (layer.bias, (heads * features if layer.concat else features,)),
    }
    return [
        f"{name} {weight.shape} (expected {shape})"
        for name, (weight, shape) in expected.items()
        if weight is not None and weight.shape != shape
    ]


def check_batch(x: Tenxor, adjacency: Tenxor, node_mask: Tenxor, layer: GATv2) -> None:
    """Raise ValueError, naming the shapes, unless a padded batch fits a layer: x [B, N, DI],
    adjacency [B, N, N], node_mask [B, N], theta_receiver and theta_sender [DI, H, DA],
    attention [H, DA], the biases as GATv2 says."""
    fits = x.ndim == 3
    if fits:
        b, n, _ = x.shape
        fits = adjacency.shape == (b, n, n) and node_mask.shape == (b, n)
    problems = weight_problems(layer, x.shape[-1] if x.ndim else -1)
    if not fits or problems:
        raise ValueError(
            "GATv2 on a batch needs x [B, N, DI], adjacency [B, N, N], node_mask [B, N] and "
            f"weights for DI features; got x {x.shape}, adjacency {adjacency.shape}, "
            f"node_mask {node_mask.shape}" + "".join(f", {p}" for p in problems)
        )


def check_edges(x: Tenxor, sources: Tenxor, targets: Tenxor, layer: GATv2) -> None:
    """Raise ValueError, naming the shapes, unless an edge list fits a layer: x [V, DI],
    sources and targets [E], the weights as in check_batch."""
    fits = x.ndim == 2 and sources.ndim == 1 and sources.shape == targets.shape
    problems = weight_problems(layer, x.shape[-1] if x.ndim else -1)
    if not fits or problems:
        raise ValueError(
            "GATv2 on an edge list needs x [V, DI], sources and targets [E] and weights for "
            f"DI features; got x {x.shape}, sources {sources.shape}, targets {targets.shape}"
            + "".join(f", {p}" for p in problems)
        )


def with_self_loops(sources: Tenxor, targets: Tenxor, nodes: int) -> tuple[Tenxor, Tenxor]:
    """The edge list without its self loops, then one self loop i -> i for every node, in
    node order (what GATv2Conv's add_self_loops does)."""
    kept = [(j, i) for j, i in zip(sources.values(), targets.values()) if j != i]
    pairs = kept + [(i, i) for i in range(nodes)]
    senders = Tenxor.from_values([j for j, _ in pairs], (len(pairs),), int64)
    receivers = Tenxor.from_values([i for _, i in pairs], (len(pairs),), int64)
    return senders, receivers


@dataclass(frozen=True)
class EdgeList:
    """A padded batch as one graph of its real nodes: node v is node nodes[v] of the flattened
    batch (b * N + i), and each edge sources[k] -> targets[k] joins two of them."""

    nodes: Tenxor  # [V] int64
    sources: Tenxor  # [E] int64
    targets: Tenxor  # [E] int64


def edge_list(adjacency: Tenxor, node_mask: Tenxor) -> EdgeList:
    """The edges j -> i of a padded batch (adjacency [B, N, N] nonzero between real nodes),
    its real nodes numbered 0, 1, ... in batch order; self loops are kept as given."""
    batch, size = node_mask.shape
    real = [v != 0 for v in node_mask.values()]
    number = {p: v for v, p in enumerate(p for p in range(batch * size) if real[p])}
    edges = [
        (number[b * size + j], number[b * size + i])
        for (b, i, j), value in zip(
            ((b, i, j) for b in range(batch) for i in range(size) for j in range(size)),
            adjacency.values(),
        )
        if value != 0 and real[b * size + i] and real[b * size + j]
    ]
    return EdgeList(
        tensor(list(number), dtype=int64),
        tensor([j for j, _ in edges], dtype=int64),
        tensor([i for _, i in edges], dtype=int64),
    )


# ---------------------------------------------------------------------------------------------
# Exercises: the layer on a padded batch
# ---------------------------------------------------------------------------------------------


def project(x: Tenxor, theta: Tenxor, bias: Tenxor | None = None) -> Tenxor:
    """Every head's projection of every node: [..., DI] features to [..., H, DA], where
    result[..., h, :] = x[...] @ theta[:, h, :] (+ bias[h]).

    `theta` is [DI, H, DA]; `bias` is [H, DA] or None.
    """
    # BEGIN SOLUTION 6.1
    features_in, heads, features = theta.shape
    flat = x @ theta.reshape(features_in, heads * features)
    projected = flat.reshape(*x.shape[:-1], heads, features)
    return projected if bias is None else projected + bias
    # END SOLUTION 6.1


def attends(adjacency: Tenxor, node_mask: Tenxor) -> Tenxor:
    """The [B, N, N] bool tensor of whom node i listens to: the real nodes j != i it receives
    from (adjacency[b, i, j] nonzero), and itself if it is real, exactly once. Padding nodes
    listen to nobody and nobody listens to them.

    `adjacency` is [B, N, N] and `node_mask` [B, N], bool or numbers (nonzero means true).
    """
    # BEGIN SOLUTION 6.2
    real = node_mask != 0
    both_real = real.unsqueeze(2) * real.unsqueeze(1)  # [B, N, N]
    edges = (adjacency != 0) * both_real
    return where(self_loops(adjacency.shape[-1]), both_real, edges)
    # END SOLUTION 6.2


def attention_logits(
    receiver: Tenxor, sender: Tenxor, attention: Tenxor, slope: float = SLOPE
) -> Tenxor:
    """The [B, N, N, H] logits e[b, i, j, h] = attention[h] . LeakyReLU(receiver[b, i, h] +
    sender[b, j, h]): head h's score for node i of graph b listening to node j, for every
    pair of nodes i, j (the mask comes later, in attention_weights).

    `receiver` and `sender` are [B, N, H, DA] (the projections of the nodes), `attention` is
    [H, DA]; LeakyReLU multiplies negative values by `slope`. Only the logits need storing:
    fold over the DA features as you combine them (feature_score(slope) scores one feature),
    never holding a [B, N, N, H, DA] tensor of the pairs.
    """
    # BEGIN SOLUTION 6.3
    # [B, N, 1, H, DA], [B, 1, N, H, DA] and [H, DA] meet at [b, i, j, h, :]: the fused kernel
    # scores each feature there and sums over DA as it goes, never holding the pairs.
    return receiver.unsqueeze(2).combine_fold(
        feature_score(slope), sender.unsqueeze(1), attention, dim=-1
    )
    # END SOLUTION 6.3


def attention_weights(logits: Tenxor, attends: Tenxor) -> Tenxor:
    """The [B, N, N, H] weights alpha: for each b, i and head h, a softmax of the logits over
    the nodes j where attends[b, i, j] holds, 0 elsewhere (all 0, not nan, where i attends to
    none). They say how much of what node i receives comes from each j, and add up to 1.

    `logits` is [B, N, N, H], `attends` [B, N, N] bool, one mask for every head. Logits in the
    thousands must give finite weights, and a masked-out logit, however large, changes
    nothing.
    """
    # BEGIN SOLUTION 6.4
    return logits.masked_softmax(attends.unsqueeze(-1), dim=2)
    # END SOLUTION 6.4


def aggregate(alpha: Tenxor, sender: Tenxor) -> Tenxor:
    """The [B, N, H, DA] messages each node receives: result[b, i, h] = the sum over j of
    alpha[b, i, j, h] * sender[b, j, h].

    `alpha` is [B, N, N, H], `sender` [B, N, H, DA].
    """
    # BEGIN SOLUTION 6.5
    weights = alpha.permute(0, 3, 1, 2)  # [B, H, N (i), N (j)]
    received = weights @ sender.permute(0, 2, 1, 3)  # [B, H, N (i), DA]
    return received.permute(0, 2, 1, 3)
    # END SOLUTION 6.5


def combine_heads(received: Tenxor, concat: bool) -> Tenxor:
    """The heads of [..., H, DA] put side by side into [..., H * DA] (head 0's features
    first) when `concat`, else their mean [..., DA]."""
    # BEGIN SOLUTION 6.6
    if concat:
        return received.reshape(*received.shape[:-2], -1)
    return received.mean(dim=-2)
    # END SOLUTION 6.6


def gatv2(x: Tenxor, adjacency: Tenxor, node_mask: Tenxor, layer: GATv2) -> Tenxor:
    """The GATv2 layer on a padded batch: [B, N, H * DA] (heads concatenated) or [B, N, DA]
    (averaged), the output bias added; zeros for padding nodes, whose features (whatever
    they hold) change nothing for real nodes.

    x [B, N, DI], adjacency [B, N, N], node_mask [B, N]. Raises ValueError naming the shapes
    when they do not fit the layer.
    """
    check_batch(x, adjacency, node_mask, layer)
    # BEGIN SOLUTION 6.7
    real = (node_mask != 0).unsqueeze(-1)  # [B, N, 1]
    x = where(real, x, 0.0)
    receiver = project(x, layer.theta_receiver, layer.bias_receiver)
    sender = project(x, layer.theta_sender, layer.bias_sender)
    logits = attention_logits(receiver, sender, layer.attention, layer.slope)
    alpha = attention_weights(logits, attends(adjacency, node_mask))
    out = combine_heads(aggregate(alpha, sender), layer.concat)
    if layer.bias is not None:
        out = out + layer.bias
    return where(real, out, 0.0)
    # END SOLUTION 6.7


# ---------------------------------------------------------------------------------------------
# Exercise: the layer on an edge list
# ---------------------------------------------------------------------------------------------


def gatv2_edges(x: Tenxor, sources: Tenxor, targets: Tenxor, layer: GATv2) -> Tenxor:
    """The GATv2 layer on one graph given as an edge list, exactly as GATv2Conv computes it:
    [V, H * DA] (heads concatenated) or [V, DA] (averaged), the output bias added.

    x [V, DI]; the edges sources[k] -> targets[k] (int64 node numbers, [E] each). Self loops
    in the list are replaced by one self loop per node (with_self_loops). Raises ValueError
    naming the shapes when they do not fit the layer.
    """
    check_edges(x, sources, targets, layer)
    # BEGIN SOLUTION 6.11
    nodes = x.shape[0]
    sources, targets = with_self_loops(sources, targets, nodes)
    receiver = project(x, layer.theta_receiver, layer.bias_receiver)  # [V, H, DA]
    sender = gather_rows(project(x, layer.theta_sender, layer.bias_sender), sources)  # [E, H, DA]
    score = feature_score(layer.slope)  # folded over DA for each edge and head: [E, H]
    logits = gather_rows(receiver, targets).combine_fold(score, sender, layer.attention, dim=-1)
    alpha = segment_softmax(logits, targets, nodes)
    messages = sender * alpha.unsqueeze(-1)  # [E, H, DA]
    start = zeros(nodes, layer.heads, layer.features_out, dtype=messages.dtype)
    received = index_add(start, targets, messages)
    out = combine_heads(received, layer.concat)
    return out if layer.bias is None else out + layer.bias
    # END SOLUTION 6.11
