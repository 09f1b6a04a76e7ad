"""Chapter 6: the GATv2 layer, each of its steps, and the layer on edge lists, against NumPy.

Expected values come from the layer's equations written here again, in NumPy with plain loops
over graph, node, head and neighbour (or an einsum for a single product), never from tenxor.
For node i, head h and each j among the real nodes i receives from and i itself:

    e[i, j, h] = attention[h] . LeakyReLU(R_h x_i + S_h x_j)
    alpha[i, j, h] = softmax over those j of e[i, j, h]
    out[i, h] = sum over those j of alpha[i, j, h] * S_h x_j

with R_h x = x @ theta_receiver[:, h, :] + bias_receiver[h] and S_h x the same with the
sender's weights; the heads are then concatenated (head 0 first) or averaged, and the output
bias added. Inputs are built from NumPy arrays and results read back without calling any
exercise, so each exercise's tests need only that exercise and the ones it builds on.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
import pytest

import tenxor
from tenxor.core import Tenxor
from tenxor.graph_attention import (
    SLOPE,
    GATv2,
    aggregate,
    attends,
    attention_logits,
    attention_weights,
    combine_heads,
    edge_list,
    gatv2,
    gatv2_edges,
    project,
    with_self_loops,
)
from tests.support import Mismatch, expect, from_numpy, to_numpy, view_case

FLOAT64_TOLERANCE = 1e-9
FLOAT32_TOLERANCE = 1e-4

# The words a failure uses for each dim of a result, and the rules it cites.
LAYER_AXES = ("graph", "node", "feature")  # gatv2's output [B, N, width]
PAIR_AXES = ("graph", "receiver", "sender", "head")  # logits and weights [B, N, N, H]
EDGE_AXES = ("node", "feature")  # gatv2_edges' output [V, width]
LAYER_RULE = "GATv2's equations over the real nodes, each self loop counted once"
EDGES_RULE = (
    "PyTorch Geometric's GATv2Conv: each node's softmax runs over the edges that reach it, its "
    "one self loop among them"
)
FLOAT32_RULE = "float32 arithmetic, within 1e-4 of float64's"
OVERFLOW_RULE = "the largest logit subtracted before exp, so nothing overflows"

# ---------------------------------------------------------------------------------------------
# The witness: the equations in NumPy, one graph, node, head and neighbour at a time
# ---------------------------------------------------------------------------------------------


@dataclass
class Weights:
    """A GATv2 layer as NumPy arrays, with the shapes GATv2 documents."""

    theta_receiver: np.ndarray  # [DI, H, DA]
    theta_sender: np.ndarray  # [DI, H, DA]
    attention: np.ndarray  # [H, DA]
    bias_receiver: np.ndarray | None  # [H, DA]
    bias_sender: np.ndarray | None  # [H, DA]
    bias: np.ndarray | None  # [H * DA] concatenated, [DA] averaged
    concat: bool = True
    slope: float = 0.2

    @property
    def heads(self) -> int:
        return self.attention.shape[0]

    @property
    def width(self) -> int:
        """How many features the layer gives each node."""
        heads, features = self.attention.shape
        return heads * features if self.concat else features


def leaky(v: np.ndarray, slope: float) -> np.ndarray:
    """LeakyReLU: negative values times `slope`."""
    return np.where(v > 0, v, slope * v)


def softmax_of(logits: list[float]) -> list[float]:
    """The softmax of a short list of logits, its largest subtracted first."""
    top = max(logits)
    e = [np.exp(z - top) for z in logits]
    return [v / sum(e) for v in e]


def receiver_of(w: Weights, features: np.ndarray, h: int) -> np.ndarray:
    """R_h x: head h's receiver projection of one node's features."""
    bias = 0.0 if w.bias_receiver is None else w.bias_receiver[h]
    return features @ w.theta_receiver[:, h, :] + bias


def sender_of(w: Weights, features: np.ndarray, h: int) -> np.ndarray:
    """S_h x: head h's sender projection of one node's features."""
    bias = 0.0 if w.bias_sender is None else w.bias_sender[h]
    return features @ w.theta_sender[:, h, :] + bias


def node_output(w: Weights, x: np.ndarray, i: int, senders: list[int]) -> np.ndarray:
    """The layer's output for node i of a graph with features x [V, DI], receiving from every
    node in `senders` (i itself included)."""
    heads = []
    for h in range(w.heads):
        receiver = receiver_of(w, x[i], h)
        messages = [sender_of(w, x[j], h) for j in senders]
        logits = [w.attention[h] @ leaky(receiver + m, w.slope) for m in messages]
        alpha = softmax_of(logits)
        heads.append(sum(a * m for a, m in zip(alpha, messages)))
    combined = np.concatenate(heads) if w.concat else np.mean(heads, axis=0)
    return combined + (0.0 if w.bias is None else w.bias)


def senders_in_batch(adjacency: np.ndarray, mask: np.ndarray, b: int, i: int) -> list[int]:
    """Whom node i of graph b receives from: its real neighbours j != i, then itself."""
    nodes = mask.shape[1]
    neighbours = [j for j in range(nodes) if j != i and mask[b, j] and adjacency[b, i, j]]
    return neighbours + [i]


def dense_by_the_equations(
    x: np.ndarray, adjacency: np.ndarray, mask: np.ndarray, w: Weights
) -> np.ndarray:
    """The layer on a padded batch: [B, N, width], zeros for padding nodes."""
    batch, nodes, _ = x.shape
    out = np.zeros((batch, nodes, w.width))
    for b in range(batch):
        for i in range(nodes):
            if mask[b, i]:
                out[b, i] = node_output(w, x[b], i, senders_in_batch(adjacency, mask, b, i))
    return out


def edges_by_the_equations(
    x: np.ndarray, sources: np.ndarray, targets: np.ndarray, w: Weights
) -> np.ndarray:
    """The layer on one graph given as edges sources[k] -> targets[k]: [V, width]."""
    out = np.zeros((x.shape[0], w.width))
    for i in range(x.shape[0]):
        senders = [int(j) for j, t in zip(sources, targets) if t == i and j != i]
        out[i] = node_output(w, x, i, senders + [i])
    return out


def edges_grouped_by_source(
    x: np.ndarray, sources: np.ndarray, targets: np.ndarray, w: Weights
) -> np.ndarray:
    """What the layer gives when each softmax runs over the edges that leave a node rather
    than those that reach it (a slip that sums to 1 the wrong way): [V, width]."""
    nodes = x.shape[0]
    edges = [(int(j), int(i)) for j, i in zip(sources, targets) if j != i]
    edges += [(v, v) for v in range(nodes)]
    heads = []
    for h in range(w.heads):
        messages = [sender_of(w, x[j], h) for j, _ in edges]
        logits = [
            w.attention[h] @ leaky(receiver_of(w, x[i], h) + m, w.slope)
            for (_, i), m in zip(edges, messages)
        ]
        alpha = np.zeros(len(edges))
        for source in range(nodes):
            leaving = [k for k, (j, _) in enumerate(edges) if j == source]
            alpha[leaving] = softmax_of([logits[k] for k in leaving])
        received = np.zeros((nodes, w.attention.shape[1]))
        for k, (_, i) in enumerate(edges):
            received[i] += alpha[k] * messages[k]
        heads.append(received)
    combined = np.concatenate(heads, axis=1) if w.concat else np.mean(heads, axis=0)
    return combined + (0.0 if w.bias is None else w.bias)


def edges_with_self_loops_kept(
    x: np.ndarray, sources: np.ndarray, targets: np.ndarray, w: Weights
) -> np.ndarray:
    """What the layer gives when a self loop of the input is kept beside the one every node
    gets, so that it counts twice: [V, width]."""
    out = np.zeros((x.shape[0], w.width))
    for i in range(x.shape[0]):
        senders = [int(j) for j, t in zip(sources, targets) if t == i]
        out[i] = node_output(w, x, i, senders + [i])
    return out


# The slips of gatv2_edges a wrong output is compared with, and the rule each one breaks.
EDGE_SLIPS: tuple[tuple[Callable[..., np.ndarray], str], ...] = (
    (edges_grouped_by_source, "each node's softmax runs over the edges that reach it (grouped "
     "by target), not over those that leave it: a node's weights sum to 1"),
    (edges_with_self_loops_kept, "a self loop given in the input is replaced by the one every "
     "node gets: each self loop counted once"),
)  # fmt: skip


def edges_rule(got: object, x: np.ndarray, sources, targets, w: Weights, rule: str) -> str:
    """The rule of the step where a wrong output of gatv2_edges went off: the rule a slip
    breaks when the output is that slip's, else `rule`."""
    if not isinstance(got, Tenxor):
        return rule
    actual = to_numpy(got).astype(np.float64)
    for slip, broken in EDGE_SLIPS:
        wrong = slip(x, sources, targets, w)
        if wrong.shape == actual.shape and np.allclose(actual, wrong, rtol=1e-9, atol=1e-9):
            return broken
    return rule


def attended_by_the_equations(adjacency: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """[B, N, N] bool: attended[b, i, j] when node i of graph b receives from j (itself
    included), both real."""
    batch, nodes = mask.shape
    attended = np.zeros((batch, nodes, nodes), dtype=bool)
    for b in range(batch):
        for i in range(nodes):
            if mask[b, i]:
                attended[b, i, senders_in_batch(adjacency, mask, b, i)] = True
    return attended


def weights_by_the_equations(logits: np.ndarray, attended: np.ndarray) -> np.ndarray:
    """alpha [B, N, N, H]: a softmax of logits over the attended j of every (b, i, h)."""
    alpha = np.zeros_like(logits, dtype=np.float64)
    batch, nodes, _, heads = logits.shape
    for b, i, h in itertools.product(range(batch), range(nodes), range(heads)):
        chosen = [j for j in range(nodes) if attended[b, i, j]]
        if chosen:
            alpha[b, i, chosen, h] = softmax_of([float(logits[b, i, j, h]) for j in chosen])
    return alpha


# ---------------------------------------------------------------------------------------------
# Inputs
# ---------------------------------------------------------------------------------------------


@dataclass
class Batch:
    """A padded batch of graphs as NumPy arrays."""

    x: np.ndarray  # [B, N, DI]
    adjacency: np.ndarray  # [B, N, N], nonzero where node i receives from node j
    mask: np.ndarray  # [B, N], nonzero for real nodes

    def tensors(self, dtype: tenxor.DType = tenxor.float64) -> tuple[Tenxor, Tenxor, Tenxor]:
        """x in `dtype`, adjacency and node mask in their own dtypes."""
        return from_numpy(self.x, dtype), from_numpy(self.adjacency), from_numpy(self.mask)

    def expected(self, w: Weights) -> np.ndarray:
        return dense_by_the_equations(self.x, self.adjacency != 0, self.mask != 0, w)


def random_batch(seed: int, batch: int, nodes: int, features: int) -> Batch:
    """Directed edges with probability 1/2 (self loops among them), padding anywhere: each
    node is real with probability 3/4, and the first graph has at least one real node."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, (batch, nodes, features))
    adjacency = rng.random((batch, nodes, nodes)) < 0.5
    mask = rng.random((batch, nodes)) < 0.75
    mask[0, rng.integers(nodes)] = True
    return Batch(x, adjacency, mask)


def random_weights(
    seed: int,
    features_in: int,
    features_out: int,
    heads: int,
    concat: bool = True,
    shared: bool = False,
    bias: bool = True,
    slope: float = 0.2,
) -> Weights:
    """Weights drawn uniformly from [-1, 1), configured like GATv2.random."""
    rng = np.random.default_rng(seed)
    theta = rng.uniform(-1, 1, (features_in, heads, features_out))
    theta_sender = theta if shared else rng.uniform(-1, 1, theta.shape)
    attention = rng.uniform(-1, 1, (heads, features_out))
    biases = [rng.uniform(-1, 1, (heads, features_out)) for _ in range(2)]
    out_bias = rng.uniform(-1, 1, heads * features_out if concat else features_out)
    if shared:
        biases[1] = biases[0]
    if not bias:
        biases, out_bias = [None, None], None
    return Weights(theta, theta_sender, attention, *biases, out_bias, concat, slope)


def as_layer(w: Weights, dtype: tenxor.DType = tenxor.float64) -> GATv2:
    """The GATv2 layer holding the weights `w` as tensors of `dtype`."""

    def convert(array: np.ndarray | None) -> Tenxor | None:
        return None if array is None else from_numpy(array, dtype)

    receiver = convert(w.theta_receiver)
    bias_receiver = convert(w.bias_receiver)
    shared = w.theta_sender is w.theta_receiver
    return GATv2(
        theta_receiver=receiver,
        theta_sender=receiver if shared else convert(w.theta_sender),
        attention=convert(w.attention),
        bias_receiver=bias_receiver,
        bias_sender=bias_receiver if shared else convert(w.bias_sender),
        bias=convert(w.bias),
        concat=w.concat,
        slope=w.slope,
    )


def widened(w: Weights, dtype: type) -> Weights:
    """The same weights rounded to `dtype` and widened back to float64."""

    def cast(array: np.ndarray | None) -> np.ndarray | None:
        return None if array is None else array.astype(dtype).astype(np.float64)

    arrays = ("theta_receiver", "theta_sender", "attention", "bias_receiver", "bias_sender")
    return replace(w, **{name: cast(getattr(w, name)) for name in (*arrays, "bias")})


Rule = str | Callable[[tuple[int, ...]], str]  # a rule, or the rule at an element's index


def element_in_words(index: tuple[int, ...], axes: tuple[str, ...]) -> str:
    """Where `index` is, in the words of `axes`, which name the last dims: "graph 0, node 2,
    feature 1"; the dims before them as an index: "leading index (1, 2), head 0"."""
    named = min(len(axes), len(index))
    lead = index[: len(index) - named]
    words = [f"{name} {i}" for name, i in zip(axes[len(axes) - named :], index[len(lead) :])]
    return ", ".join(([f"leading index {lead}"] if lead else []) + words)


def padding_aware(mask: np.ndarray, rule: str) -> Rule:
    """The rule at element (b, i, ...) of a layer's output: `rule` where node i of graph b
    is real, zeros where it is padding."""

    def at(index: tuple[int, ...]) -> str:
        b, i = index[:2]
        return rule if mask[b, i] else f"node {i} of graph {b} is padding: its output is zeros"

    return at


def attended_aware(attended: np.ndarray, rule: str) -> Rule:
    """The rule at element (b, i, j, h) of the attention weights: `rule` where node i of
    graph b attends to node j, a weight of 0 where it does not."""

    def at(index: tuple[int, ...]) -> str:
        b, i, j = index[:3]
        return rule if attended[b, i, j] else f"node {i} does not attend to node {j}: weight 0"

    return at


def assert_close(
    actual: Tenxor,
    expected: np.ndarray,
    what: str,
    rule: Rule = "",
    axes: tuple[str, ...] = (),
    tolerance: float = FLOAT64_TOLERANCE,
    dtype: tenxor.DType = tenxor.float64,
) -> None:
    """The tensor has the expected dtype and shape, finite elements, and each is within
    `tolerance` of the expected one (relative to the largest expected magnitude, at least 1).
    A failure names `what` was compared, the first element that is off (in the words of
    `axes`, which name the last dims), its value and the expected one, and the `rule` (at
    that element's index, when `rule` is a function)."""
    if not isinstance(actual, Tenxor):
        raise Mismatch(f"type of {what}", type(actual).__name__, "Tenxor")
    expect(f"dtype of {what}", actual.dtype.name, dtype.name, f"{dtype.name} inputs")
    got = to_numpy(actual).astype(np.float64)
    expect(f"shape of {what}", got.shape, expected.shape)
    if got.size == 0:
        return
    bad = np.argwhere(~np.isfinite(got))
    if bad.size:
        worst = tuple(int(i) for i in bad[0])
    else:
        error = np.abs(got - expected)
        worst = tuple(int(i) for i in np.unravel_index(np.argmax(error), error.shape))
        scale = max(1.0, float(np.max(np.abs(expected))))
        if error[worst] <= tolerance * scale:
            return
    where = element_in_words(worst, axes)
    why = rule if isinstance(rule, str) else rule(worst)
    raise Mismatch(f"{what} at {where}", float(got[worst]), float(expected[worst]), why)


def logits_by_einsum(batch: Batch, w: Weights) -> np.ndarray:
    """Every logit of the layer [B, N, N, H], to see how large they get."""
    receiver = np.einsum("bni,ihd->bnhd", batch.x, w.theta_receiver)
    sender = np.einsum("bni,ihd->bnhd", batch.x, w.theta_sender)
    pairs = leaky(receiver[:, :, None] + sender[:, None], w.slope)
    return np.einsum("bijhd,hd->bijh", pairs, w.attention)


# ---------------------------------------------------------------------------------------------
# 6.1 project
# ---------------------------------------------------------------------------------------------


@pytest.mark.exercise("6.1")
@pytest.mark.parametrize("heads", [1, 2, 3, 4])
@pytest.mark.parametrize("leading", [(), (5,), (2, 3), (2, 1, 3)], ids=str)
@pytest.mark.parametrize("bias", [True, False], ids=["bias", "no-bias"])
def test_project_gives_every_head_its_projection(heads, leading, bias):
    rng = np.random.default_rng(heads + 10 * len(leading))
    x = rng.uniform(-1, 1, (*leading, 3))
    theta = rng.uniform(-1, 1, (3, heads, 2))
    expected = np.zeros((*leading, heads, 2))
    b = rng.uniform(-1, 1, (heads, 2)) if bias else None
    for index in np.ndindex(*leading):
        for h in range(heads):
            expected[index + (h,)] = x[index] @ theta[:, h, :] + (0.0 if b is None else b[h])
    got = project(from_numpy(x), from_numpy(theta), None if b is None else from_numpy(b))
    rule = "result[..., h, :] = x[...] @ theta[:, h, :]" + (" + bias[h]" if bias else "")
    assert_close(got, expected, "every head's projection", rule, ("head", "feature"))


@pytest.mark.exercise("6.1")
def test_project_of_views_one_theta_shared_by_every_head_with_stride_0():
    rng = np.random.default_rng(2)
    x_base = rng.uniform(-1, 1, (3, 4))
    x = x_base.T  # [4, 3], a transposed view
    theta_base = rng.uniform(-1, 1, (3, 1, 2))
    expected = np.stack([x @ theta_base[:, 0, :]] * 3, axis=1)
    theta = np.broadcast_to(theta_base, (3, 3, 2))  # every head the same matrix, stride 0
    got = project(view_case(x_base, x).tensor(), view_case(theta_base, theta).tensor())
    rule = "x @ theta[:, h, :] for a transposed x, every head the same theta"
    assert_close(got, expected, "every head's projection", rule, ("node", "head", "feature"))


@pytest.mark.exercise("6.1")
def test_project_keeps_float32():
    rng = np.random.default_rng(1)
    x, theta, b = (rng.uniform(-1, 1, s).astype(np.float32) for s in ((4, 3), (3, 2, 5), (2, 5)))
    expected = np.einsum("vi,ihd->vhd", x.astype(np.float64), theta.astype(np.float64)) + b
    got = project(from_numpy(x), from_numpy(theta), from_numpy(b))
    what, axes = "every head's projection", ("node", "head", "feature")
    assert_close(got, expected, what, FLOAT32_RULE, axes, FLOAT32_TOLERANCE, tenxor.float32)


# ---------------------------------------------------------------------------------------------
# 6.2 attends
# ---------------------------------------------------------------------------------------------


def why_attends(adjacency: np.ndarray, mask: np.ndarray, b: int, i: int, j: int) -> str:
    """The rule that decides whether node i of graph b attends to node j."""
    if not mask[b, i]:
        return f"node {i} is padding, and padding attends to nobody"
    if not mask[b, j]:
        return "a node never attends to padding"
    if i == j:
        return "a real node attends to itself, whatever the diagonal holds"
    value = adjacency[b, i, j].item()
    if value:
        return f"adjacency[{b}, {i}, {j}] is {value!r}: node {i} receives from node {j}"
    return f"adjacency[{b}, {i}, {j}] is {value!r}: no edge from node {j} to node {i}"


def assert_attends(adjacency: np.ndarray, mask: np.ndarray) -> None:
    got = attends(from_numpy(adjacency), from_numpy(mask))
    if not isinstance(got, Tenxor):
        raise Mismatch("type of what attends returns", type(got).__name__, "Tenxor")
    expect("dtype of what attends returns", got.dtype.name, "bool", "whether i attends to j")
    expected = attended_by_the_equations(adjacency != 0, mask != 0)
    result = to_numpy(got)
    expect("shape of what attends returns", result.shape, expected.shape, "[B, N, N]")
    wrong = np.argwhere(result != expected)
    if wrong.size:
        b, i, j = (int(k) for k in wrong[0])
        what = f"whether node {i} attends to node {j} in graph {b}"
        rule = why_attends(adjacency, mask, b, i, j)
        raise Mismatch(what, bool(result[b, i, j]), bool(expected[b, i, j]), rule)


@pytest.mark.exercise("6.2")
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_attends_to_real_neighbours_and_itself_with_padding_anywhere(seed):
    batch = random_batch(seed, 4, 5, 1)
    batch.mask[1] = False  # a graph that is all padding
    batch.mask[2, 0] = False  # padding before a real node
    batch.mask[2, 1] = True
    assert_attends(batch.adjacency, batch.mask)


@pytest.mark.exercise("6.2")
@pytest.mark.parametrize("diagonal", [True, False])
def test_attends_counts_itself_once_whatever_the_diagonal_holds(diagonal):
    batch = random_batch(3, 3, 4, 1)
    np.einsum("bii->bi", batch.adjacency)[...] = diagonal
    assert_attends(batch.adjacency, batch.mask)


@pytest.mark.exercise("6.2")
def test_attends_isolated_nodes_to_themselves_only():
    adjacency = np.zeros((2, 3, 3), dtype=bool)
    adjacency[0, 0, 1] = True  # only node 0 of graph 0 receives
    mask = np.array([[True, True, True], [True, False, True]])
    assert_attends(adjacency, mask)


@pytest.mark.exercise("6.2")
@pytest.mark.parametrize("dtype", [np.float64, np.int64], ids=["float64", "int64"])
def test_attends_reads_numbers_as_true_where_nonzero(dtype):
    rng = np.random.default_rng(4)
    adjacency = rng.choice(np.array([0, 0, 2, -3], dtype=dtype), (3, 4, 4))
    mask = rng.choice(np.array([0, 1, 5], dtype=dtype), (3, 4))
    assert_attends(adjacency, mask)


@pytest.mark.exercise("6.2")
def test_attends_in_a_graph_of_one_node():
    assert_attends(np.zeros((2, 1, 1)), np.array([[1.0], [0.0]]))


# ---------------------------------------------------------------------------------------------
# 6.3 attention_logits
# ---------------------------------------------------------------------------------------------


def logits_by_the_equations(
    receiver: np.ndarray, sender: np.ndarray, attention: np.ndarray, slope: float
) -> np.ndarray:
    batch, nodes, heads, _ = receiver.shape
    logits = np.zeros((batch, nodes, nodes, heads))
    for b, i, j, h in np.ndindex(batch, nodes, nodes, heads):
        logits[b, i, j, h] = attention[h] @ leaky(receiver[b, i, h] + sender[b, j, h], slope)
    return logits


LOGITS_RULE = "attention[h] . LeakyReLU(receiver[b, i, h] + sender[b, j, h]), slope {slope}"


@pytest.mark.exercise("6.3")
@pytest.mark.parametrize("slope", [0.2, 0.0, 0.5, 1.0])
@pytest.mark.parametrize("sizes", [(2, 4, 1, 3), (1, 3, 3, 2), (3, 1, 4, 1)], ids=str)
def test_attention_logits_pair_every_receiver_with_every_sender(slope, sizes):
    batch, nodes, heads, features = sizes
    rng = np.random.default_rng(nodes + heads)
    receiver, sender = rng.uniform(-1, 1, (2, batch, nodes, heads, features))
    attention = rng.uniform(-1, 1, (heads, features))
    tensors = (from_numpy(receiver), from_numpy(sender), from_numpy(attention))
    expected = logits_by_the_equations(receiver, sender, attention, slope)
    got = attention_logits(*tensors, slope=slope)
    assert_close(got, expected, "attention logits e", LOGITS_RULE.format(slope=slope), PAIR_AXES)


@pytest.mark.exercise("6.3")
def test_attention_logits_use_slope_0_2_unless_told():
    rng = np.random.default_rng(5)
    receiver, sender = rng.uniform(-1, 1, (2, 2, 3, 2, 4))
    attention = rng.uniform(-1, 1, (2, 4))
    expected = logits_by_the_equations(receiver, sender, attention, 0.2)
    got = attention_logits(from_numpy(receiver), from_numpy(sender), from_numpy(attention))
    rule = LOGITS_RULE.format(slope="0.2 unless told")
    assert_close(got, expected, "attention logits e", rule, PAIR_AXES)


# ---------------------------------------------------------------------------------------------
# 6.4 attention_weights
# ---------------------------------------------------------------------------------------------

WEIGHTS_RULE = "a softmax of each receiver's logits over the senders it attends to, per head"


@pytest.mark.exercise("6.4")
@pytest.mark.parametrize("scale", [1.0, 3000.0])
@pytest.mark.parametrize("heads", [1, 3])
def test_attention_weights_are_a_softmax_over_the_attended_nodes(scale, heads):
    rng = np.random.default_rng(heads)
    logits = rng.normal(size=(3, 4, 4, heads)) * scale
    attended = rng.random((3, 4, 4)) < 0.5
    attended[0, 2] = False  # a row that attends to nobody
    expected = weights_by_the_equations(logits, attended)
    got = attention_weights(from_numpy(logits), from_numpy(attended))
    rule = attended_aware(attended, WEIGHTS_RULE)
    assert_close(got, expected, "attention weights alpha", rule, PAIR_AXES)
    alpha = to_numpy(got)
    what = "attention weights of node 2 in graph 0, which attends to nobody"
    expect(what, alpha[0, 2], np.zeros_like(alpha[0, 2]), "all 0 where i attends to none")
    stray = np.argwhere((alpha != 0) & ~attended[..., None])
    if stray.size:
        b, i, j, h = (int(k) for k in stray[0])
        what = f"attention weight of head {h} that node {i} gives node {j} in graph {b}"
        rule = f"node {i} does not attend to node {j}: 0 there"
        raise Mismatch(what, float(alpha[b, i, j, h]), 0.0, rule)


@pytest.mark.exercise("6.4")
def test_attention_weights_of_logits_in_the_thousands_do_not_overflow():
    logits = np.array([[[4000.0, 3999.0, -5000.0], [-4000.0, -4001.0, 9000.0], [0.0, 0.0, 0.0]]])
    attended = np.array([[[True, True, True], [True, True, False], [False, False, False]]])
    logits = logits[..., None]  # [1, 3, 3, 1]; the masked 9000 is the largest of its row
    expected = weights_by_the_equations(logits, attended)
    got = attention_weights(from_numpy(logits), from_numpy(attended))
    rule = attended_aware(attended, OVERFLOW_RULE)
    assert_close(got, expected, "attention weights alpha", rule, PAIR_AXES)


# ---------------------------------------------------------------------------------------------
# 6.5 aggregate
# ---------------------------------------------------------------------------------------------


@pytest.mark.exercise("6.5")
@pytest.mark.parametrize("sizes", [(2, 4, 1, 3), (1, 3, 3, 2), (3, 1, 2, 1), (2, 5, 4, 2)], ids=str)
def test_aggregate_sums_the_weighted_senders(sizes):
    batch, nodes, heads, features = sizes
    rng = np.random.default_rng(nodes)
    alpha = rng.uniform(0, 1, (batch, nodes, nodes, heads))
    alpha[rng.random(alpha.shape) < 0.3] = 0.0
    expected = np.zeros((batch, nodes, heads, features))
    sender = rng.uniform(-1, 1, (batch, nodes, heads, features))
    for b, i, h, j in np.ndindex(batch, nodes, heads, nodes):
        expected[b, i, h] += alpha[b, i, j, h] * sender[b, j, h]
    got = aggregate(from_numpy(alpha), from_numpy(sender))
    rule = "result[b, i, h] = the sum over j of alpha[b, i, j, h] * sender[b, j, h]"
    assert_close(got, expected, "messages received", rule, ("graph", "node", "head", "feature"))


# ---------------------------------------------------------------------------------------------
# 6.6 combine_heads
# ---------------------------------------------------------------------------------------------


def combined_by_the_equations(received: np.ndarray, concat: bool) -> np.ndarray:
    heads = received.shape[-2]
    if concat:
        return np.concatenate([received[..., h, :] for h in range(heads)], axis=-1)
    return sum(received[..., h, :] for h in range(heads)) / heads


COMBINE_RULES = {
    True: "heads side by side, head 0's features first",
    False: "the mean of the heads",
}


@pytest.mark.exercise("6.6")
@pytest.mark.parametrize("concat", [True, False], ids=["concat", "mean"])
@pytest.mark.parametrize("leading", [(), (4,), (2, 3)], ids=str)
@pytest.mark.parametrize("heads", [1, 3])
def test_combine_heads_concatenates_head_0_first_or_averages(concat, leading, heads):
    received = np.random.default_rng(heads).uniform(-1, 1, (*leading, heads, 2))
    expected = combined_by_the_equations(received, concat)
    got = combine_heads(from_numpy(received), concat)
    assert_close(got, expected, "heads combined", COMBINE_RULES[concat], ("feature",))


@pytest.mark.exercise("6.6")
@pytest.mark.parametrize("concat", [True, False], ids=["concat", "mean"])
def test_combine_heads_of_a_permuted_view(concat):
    base = np.random.default_rng(7).uniform(-1, 1, (2, 3, 4, 2))  # [B, H, N, DA]
    view = base.transpose(0, 2, 1, 3)  # [B, N, H, DA], not contiguous
    expected = combined_by_the_equations(view, concat)
    got = combine_heads(view_case(base, view).tensor(), concat)
    assert_close(got, expected, "heads combined", COMBINE_RULES[concat], LAYER_AXES)


@pytest.mark.exercise("6.6")
def test_combine_heads_keeps_float32():
    received = np.arange(12, dtype=np.float32).reshape(2, 3, 2) / 4
    expected = received.astype(np.float64).mean(axis=1)
    got = combine_heads(from_numpy(received), concat=False)
    rule = f"{COMBINE_RULES[False]}, {FLOAT32_RULE}"
    what, axes = "heads combined", ("node", "feature")
    assert_close(got, expected, what, rule, axes, FLOAT32_TOLERANCE, tenxor.float32)


# ---------------------------------------------------------------------------------------------
# 6.7 gatv2 on a padded batch
# ---------------------------------------------------------------------------------------------

CONFIGURATIONS = [
    pytest.param(concat, shared, bias, heads, id=f"{c}-{s}-{b}-{heads}heads")
    for (concat, c), (shared, s), (bias, b) in itertools.product(
        [(True, "concat"), (False, "mean")],
        [(False, "separate"), (True, "shared")],
        [(True, "bias"), (False, "no-bias")],
    )
    for heads in (1, 2, 3, 4)
]


def assert_layer(
    got: Tenxor,
    batch: Batch,
    expected: np.ndarray,
    rule: str,
    what: str = "output of the layer",
    tolerance: float = FLOAT64_TOLERANCE,
    dtype: tenxor.DType = tenxor.float64,
) -> None:
    """assert_close for a layer's output on `batch` [B, N, width]: an element is named by
    graph, node and feature, and the rule at a padding node is that its output is zeros."""
    why = padding_aware(batch.mask != 0, rule)
    assert_close(got, expected, what, why, LAYER_AXES, tolerance, dtype)


@pytest.mark.exercise("6.7")
@pytest.mark.parametrize("concat, shared, bias, heads", CONFIGURATIONS)
def test_gatv2_matches_the_equations_in_every_configuration(concat, shared, bias, heads):
    seed = 2 * heads + concat
    batch = random_batch(seed, 3, 4, 3)
    w = random_weights(seed, 3, 2, heads, concat=concat, shared=shared, bias=bias)
    got = gatv2(*batch.tensors(), as_layer(w))
    assert_layer(got, batch, batch.expected(w), LAYER_RULE)


@pytest.mark.exercise("6.7")
@pytest.mark.parametrize("slope", [0.0, 0.01, 0.5, 1.0, 2.0])
def test_gatv2_uses_the_layers_slope(slope):
    batch = random_batch(8, 3, 5, 3)
    w = random_weights(8, 3, 4, 2, slope=slope)
    got = gatv2(*batch.tensors(), as_layer(w))
    rule = f"LeakyReLU with the layer's slope, {slope}"
    assert_layer(got, batch, batch.expected(w), rule)


@pytest.mark.exercise("6.7")
def test_gatv2_layer_slope_is_0_2_unless_told():
    batch = random_batch(9, 2, 4, 3)
    w = random_weights(9, 3, 4, 2)
    layer = as_layer(w)
    weights = (layer.theta_receiver, layer.theta_sender, layer.attention)
    default = GATv2(*weights, layer.bias_receiver, layer.bias_sender, layer.bias)
    expect("slope of a GATv2 made without one", default.slope, 0.2, "as in the paper")
    expected = batch.expected(replace(w, slope=0.2))
    got = gatv2(*batch.tensors(), default)
    assert_layer(got, batch, expected, "slope 0.2 unless told")


@pytest.mark.exercise("6.7")
@pytest.mark.parametrize("seed", [10, 11])
def test_gatv2_counts_a_self_loop_in_the_input_once(seed):
    batch = random_batch(seed, 3, 5, 3)
    w = random_weights(seed, 3, 4, 2)
    eye = np.eye(5, dtype=bool)[None]
    looped = Batch(batch.x, batch.adjacency | eye, batch.mask)
    unlooped = Batch(batch.x, batch.adjacency & ~eye, batch.mask)
    expected = unlooped.expected(w)
    rule = "each self loop counted once, whether the adjacency holds it or not"
    what = "output of the layer, every self loop in the adjacency"
    assert_layer(gatv2(*looped.tensors(), as_layer(w)), batch, expected, rule, what)
    what = "output of the layer, no self loop in the adjacency"
    assert_layer(gatv2(*unlooped.tensors(), as_layer(w)), batch, expected, rule, what)


@pytest.mark.exercise("6.7")
@pytest.mark.parametrize("garbage", [1e6, 1e308])
def test_gatv2_ignores_whatever_padding_nodes_hold_and_gives_them_zeros(garbage):
    batch = random_batch(12, 4, 5, 3)
    batch.mask[1] = False  # a graph that is all padding
    batch.mask[2] = [False, True, False, True, False]  # padding first, between and last
    batch.mask[3] = True
    rng = np.random.default_rng(13)
    padding = batch.mask == 0
    batch.x[padding] = rng.choice([-garbage, garbage], batch.x[padding].shape)
    batch.adjacency[padding] = True  # padding rows claim every node as a neighbour
    w = random_weights(12, 3, 4, 3, concat=False)
    got = gatv2(*batch.tensors(), as_layer(w))
    rule = "whatever padding holds changes nothing for real nodes"
    assert_layer(got, batch, batch.expected(w), rule)
    result = to_numpy(got)
    nonzero = np.argwhere(padding & np.any(result != 0, axis=-1))
    if nonzero.size:
        b, i = (int(k) for k in nonzero[0])
        what = f"output of padding node {i} in graph {b}"
        raise Mismatch(what, result[b, i], np.zeros_like(result[b, i]), "zeros for padding")


@pytest.mark.exercise("6.7")
def test_gatv2_reads_numbers_in_adjacency_and_mask_as_true_where_nonzero():
    batch = random_batch(14, 3, 4, 3)
    rng = np.random.default_rng(15)
    adjacency = batch.adjacency * rng.choice([2.5, -1.0], batch.adjacency.shape)
    numeric = Batch(batch.x, adjacency, batch.mask.astype(np.int64) * 3)
    w = random_weights(14, 3, 2, 2)
    got = gatv2(*numeric.tensors(), as_layer(w))
    rule = "adjacency and node_mask are true where nonzero"
    assert_layer(got, batch, batch.expected(w), rule)


@pytest.mark.exercise("6.7")
def test_gatv2_isolated_nodes_receive_only_their_own_message():
    batch = random_batch(16, 2, 5, 3)
    batch.mask[:] = True
    batch.adjacency[0, 3, :] = False  # node 3 of graph 0 receives from nobody
    batch.adjacency[0, :, 3] = False  # and sends to nobody
    batch.adjacency[1] = False  # no edges at all in graph 1
    w = random_weights(16, 3, 4, 2)
    got = gatv2(*batch.tensors(), as_layer(w))
    rule = "an isolated node attends only to itself"
    assert_layer(got, batch, batch.expected(w), rule)
    own = node_output(w, batch.x[0], 3, [3])  # softmax of one logit: all weight on itself
    result = to_numpy(got)[0, 3]
    if not np.allclose(result, own, rtol=0, atol=1e-12):
        what = "output of node 3 in graph 0, which has no edges"
        raise Mismatch(what, result, own, "an isolated node receives only its own message")


@pytest.mark.exercise("6.7")
@pytest.mark.parametrize("mask", [[[True]], [[True], [False]]], ids=["one-node", "one-padded"])
@pytest.mark.parametrize("loop", [False, True])
def test_gatv2_in_a_graph_of_one_node(mask, loop):
    mask = np.array(mask)
    x = np.random.default_rng(17).uniform(-1, 1, (len(mask), 1, 3))
    batch = Batch(x, np.full((len(mask), 1, 1), loop), mask)
    w = random_weights(17, 3, 2, 3)
    got = gatv2(*batch.tensors(), as_layer(w))
    rule = "a lone real node attends only to itself, once; padding gets zeros"
    assert_layer(got, batch, batch.expected(w), rule)


@pytest.mark.exercise("6.7")
def test_gatv2_with_logits_in_the_thousands_does_not_overflow():
    batch = random_batch(18, 3, 5, 3)
    w = random_weights(18, 3, 4, 2)
    w.attention *= 3000.0
    largest = np.max(np.abs(logits_by_einsum(batch, w)))
    assert largest > 1000, f"the case is meant to have logits in the thousands, has {largest}"
    got = gatv2(*batch.tensors(), as_layer(w))
    assert_layer(got, batch, batch.expected(w), OVERFLOW_RULE)


@pytest.mark.exercise("6.7")
@pytest.mark.parametrize("concat", [True, False], ids=["concat", "mean"])
def test_gatv2_of_float32_inputs_is_float32_and_close_to_float64(concat):
    batch = random_batch(19, 3, 5, 3)
    batch.x = batch.x.astype(np.float32)
    w = random_weights(19, 3, 4, 2, concat=concat)
    got = gatv2(*batch.tensors(tenxor.float32), as_layer(w, tenxor.float32))
    wide = Batch(batch.x.astype(np.float64), batch.adjacency, batch.mask)
    expected = wide.expected(widened(w, np.float32))
    assert_layer(
        got, batch, expected, FLOAT32_RULE, tolerance=FLOAT32_TOLERANCE, dtype=tenxor.float32
    )


@pytest.mark.exercise("6.7")
@pytest.mark.parametrize("concat, shared", [(True, False), (False, True)])
def test_a_random_layer_called_on_a_batch_matches_the_equations(concat, shared):
    layer = GATv2.random(3, 2, 3, seed=20, concat=concat, share_weights=shared)
    w = Weights(
        *(to_numpy(t) for t in (layer.theta_receiver, layer.theta_sender, layer.attention)),
        *(to_numpy(t) for t in (layer.bias_receiver, layer.bias_sender, layer.bias)),
        concat=concat,
    )
    batch = random_batch(20, 2, 4, 3)
    what = "output of a random layer called on a batch"
    rule = "GATv2's equations with the layer's own weights"
    assert_layer(layer(*batch.tensors()), batch, batch.expected(w), rule, what)


# ---------------------------------------------------------------------------------------------
# 6.11 gatv2_edges on an edge list
# ---------------------------------------------------------------------------------------------


def ints(values) -> Tenxor:
    """A 1-D int64 tensor."""
    return from_numpy(np.array(values, dtype=np.int64).reshape(-1))


def random_edges(seed: int, nodes: int, edges: int) -> tuple[np.ndarray, np.ndarray]:
    """`edges` distinct edges j -> i between `nodes` nodes, self loops possible, in a random
    order."""
    rng = np.random.default_rng(seed)
    pairs = rng.choice(nodes * nodes, size=min(edges, nodes * nodes), replace=False)
    return pairs % nodes, pairs // nodes


def assert_edges(x: np.ndarray, sources, targets, w: Weights, rule: str = EDGES_RULE) -> None:
    sources, targets = np.asarray(sources, dtype=np.int64), np.asarray(targets, dtype=np.int64)
    expected = edges_by_the_equations(x, sources, targets, w)
    got = gatv2_edges(from_numpy(x), ints(sources), ints(targets), as_layer(w))
    rule = edges_rule(got, x, sources, targets, w, rule)
    assert_close(got, expected, "output of gatv2_edges", rule, EDGE_AXES)


@pytest.mark.exercise("6.11")
@pytest.mark.parametrize("concat, shared, bias, heads", CONFIGURATIONS[::3])
def test_gatv2_edges_matches_the_equations_in_every_configuration(concat, shared, bias, heads):
    seed = 3 * heads + shared
    x = np.random.default_rng(seed).uniform(-1, 1, (6, 3))
    w = random_weights(seed, 3, 2, heads, concat=concat, shared=shared, bias=bias)
    assert_edges(x, *random_edges(seed, 6, 14), w)


@pytest.mark.exercise("6.11")
@pytest.mark.parametrize("slope", [0.0, 0.5, 1.0])
def test_gatv2_edges_uses_the_layers_slope(slope):
    x = np.random.default_rng(22).uniform(-1, 1, (5, 3))
    w = random_weights(22, 3, 4, 2, slope=slope)
    assert_edges(x, *random_edges(22, 5, 10), w, f"LeakyReLU with the layer's slope, {slope}")


@pytest.mark.exercise("6.11")
def test_gatv2_edges_replaces_self_loops_in_the_input_by_one_per_node():
    x = np.random.default_rng(23).uniform(-1, 1, (4, 3))
    w = random_weights(23, 3, 2, 2)
    expected = edges_by_the_equations(x, np.array([0, 1, 3]), np.array([1, 2, 0]), w)
    sources, targets = [0, 1, 1, 2, 3], [1, 1, 2, 2, 0]  # 1 -> 1 and 2 -> 2 given
    got = gatv2_edges(from_numpy(x), ints(sources), ints(targets), as_layer(w))
    rule = "self loops given are replaced by one per node: each self loop counted once"
    rule = edges_rule(got, x, np.array(sources), np.array(targets), w, rule)
    assert_close(got, expected, "output of gatv2_edges", rule, EDGE_AXES)


@pytest.mark.exercise("6.11")
def test_gatv2_edges_isolated_nodes_receive_only_their_own_message():
    x = np.random.default_rng(24).uniform(-1, 1, (5, 3))
    w = random_weights(24, 3, 2, 3, concat=False)
    sources, targets = [0, 1, 2, 0], [1, 0, 0, 2]  # nodes 3 and 4 in no edge
    assert_edges(x, sources, targets, w, "a node in no edge attends only to itself")
    got = to_numpy(gatv2_edges(from_numpy(x), ints(sources), ints(targets), as_layer(w)))
    own = node_output(w, x, 3, [3])
    if not np.allclose(got[3], own, rtol=0, atol=1e-12):
        what = "output of node 3, which is in no edge"
        raise Mismatch(what, got[3], own, "an isolated node receives only its own message")


@pytest.mark.exercise("6.11")
@pytest.mark.parametrize("nodes", [1, 3])
def test_gatv2_edges_with_no_edges_at_all(nodes):
    x = np.random.default_rng(25).uniform(-1, 1, (nodes, 3))
    rule = "with no edges, each node attends only to itself"
    assert_edges(x, [], [], random_weights(25, 3, 2, 2), rule)


@pytest.mark.exercise("6.11")
def test_gatv2_edges_of_a_single_node_with_its_self_loop():
    x = np.random.default_rng(26).uniform(-1, 1, (1, 4))
    rule = "the self loop given is replaced by one: counted once"
    assert_edges(x, [0], [0], random_weights(26, 4, 3, 2), rule)


@pytest.mark.exercise("6.11")
def test_gatv2_edges_with_logits_in_the_thousands_does_not_overflow():
    x = np.random.default_rng(27).uniform(-1, 1, (5, 3))
    w = random_weights(27, 3, 4, 2)
    w.attention *= 3000.0
    batch = Batch(x[None], np.ones((1, 5, 5), dtype=bool), np.ones((1, 5), dtype=bool))
    assert np.max(np.abs(logits_by_einsum(batch, w))) > 1000
    assert_edges(x, *random_edges(27, 5, 12), w, OVERFLOW_RULE)


@pytest.mark.exercise("6.11")
def test_gatv2_edges_of_float32_inputs_is_float32_and_close_to_float64():
    x = np.random.default_rng(28).uniform(-1, 1, (5, 3)).astype(np.float32)
    w = random_weights(28, 3, 4, 2)
    sources, targets = random_edges(28, 5, 9)
    got = gatv2_edges(from_numpy(x), ints(sources), ints(targets), as_layer(w, tenxor.float32))
    wide = widened(w, np.float32)
    expected = edges_by_the_equations(x.astype(np.float64), sources, targets, wide)
    what, tolerance = "output of gatv2_edges", FLOAT32_TOLERANCE
    assert_close(got, expected, what, FLOAT32_RULE, EDGE_AXES, tolerance, tenxor.float32)


@pytest.mark.exercise("6.11")
@pytest.mark.parametrize("concat", [True, False], ids=["concat", "mean"])
def test_gatv2_edges_on_a_padded_batch_gives_the_dense_equations_at_its_real_nodes(concat):
    batch = random_batch(29, 3, 4, 3)
    batch.mask[1, 0] = False
    w = random_weights(29, 3, 2, 2, concat=concat)
    edges = edge_list(*batch.tensors()[1:])
    nodes = to_numpy(edges.nodes)
    features = batch.x.reshape(-1, 3)[nodes]
    expected = batch.expected(w).reshape(-1, w.width)[nodes]
    got = gatv2_edges(from_numpy(features), edges.sources, edges.targets, as_layer(w))
    what = "output of gatv2_edges on the batch's edge list"
    rule = "the padded layer's output at the real nodes"
    assert_close(got, expected, what, rule, ("real node", "feature"))


@pytest.mark.exercise("6.11")
def test_a_layers_on_edges_matches_the_equations():
    w = random_weights(30, 3, 2, 2, shared=True)
    x = np.random.default_rng(30).uniform(-1, 1, (4, 3))
    sources, targets = random_edges(30, 4, 7)
    expected = edges_by_the_equations(x, sources, targets, w)
    got = as_layer(w).on_edges(from_numpy(x), ints(sources), ints(targets))
    assert_close(got, expected, "output of layer.on_edges", EDGES_RULE, EDGE_AXES)


# ---------------------------------------------------------------------------------------------
# Provided: the layer object and the edge-list helpers
# ---------------------------------------------------------------------------------------------


@pytest.mark.provided
@pytest.mark.parametrize("concat", [True, False])
@pytest.mark.parametrize("share_weights", [False, True])
@pytest.mark.parametrize("bias", [True, False])
def test_a_random_layer_has_the_shapes_and_settings_it_was_asked_for(concat, share_weights, bias):
    layer = GATv2.random(3, 4, 2, seed=31, concat=concat, share_weights=share_weights, bias=bias)
    expect(
        "heads, features_out, concat and slope of GATv2.random(3, 4, 2)",
        (layer.heads, layer.features_out, layer.concat, layer.slope),
        (2, 4, concat, SLOPE),
    )
    expect(
        "shapes of theta_receiver and theta_sender",
        (layer.theta_receiver.shape, layer.theta_sender.shape),
        ((3, 2, 4), (3, 2, 4)),
        "[DI, H, DA]",
    )
    expect("shape of attention", layer.attention.shape, (2, 4), "[H, DA]")
    shares = "shared weights are one tensor"
    what = "whether theta_sender is theta_receiver"
    expect(what, layer.theta_sender is layer.theta_receiver, share_weights, shares)
    biases = (layer.bias_receiver, layer.bias_sender, layer.bias)
    if bias:
        expect(
            "shapes of bias_receiver, bias_sender and bias",
            [b.shape for b in biases],
            [(2, 4), (2, 4), (8,) if concat else (4,)],
            "[H, DA], [H, DA], then [H * DA] concatenated or [DA] averaged",
        )
        what = "whether bias_sender is bias_receiver"
        expect(what, layer.bias_sender is layer.bias_receiver, share_weights, shares)
    else:
        expect("the biases of a layer without bias", biases, (None, None, None))
    for weight in (layer.theta_receiver, layer.attention, *(b for b in biases if b is not None)):
        values = to_numpy(weight)
        outside = values[~((values >= -1) & (values < 1))]
        expect("weights outside [-1, 1)", outside.tolist(), [], "drawn uniformly from [-1, 1)")


@pytest.mark.provided
def test_a_random_layer_depends_only_on_its_seed_and_keeps_its_dtype():
    one, again, other = (GATv2.random(3, 2, 2, seed=s) for s in (32, 32, 33))
    same = np.array_equal(to_numpy(one.theta_sender), to_numpy(again.theta_sender))
    expect("whether seed 32 twice gives the same theta_sender", same, True, "only the seed")
    same = np.array_equal(to_numpy(one.theta_sender), to_numpy(other.theta_sender))
    expect("whether seeds 32 and 33 give the same theta_sender", same, False, "another seed")
    narrow = GATv2.random(3, 2, 2, seed=32, dtype=tenxor.float32, slope=0.1)
    what = "dtype and slope of GATv2.random(..., dtype=float32, slope=0.1)"
    expect(what, (narrow.attention.dtype.name, narrow.slope), ("float32", 0.1))
    shared = one.shared()
    shares = "shared weights are one tensor"
    what = "whether the shared layer's theta_sender is theta_receiver"
    expect(what, shared.theta_sender is one.theta_receiver, True, shares)
    what = "whether the shared layer's bias_sender is bias_receiver"
    expect(what, shared.bias_sender is one.bias_receiver, True, shares)


@pytest.mark.provided
def test_with_self_loops_drops_given_loops_and_adds_one_per_node_in_order():
    sources, targets = with_self_loops(ints([2, 0, 1, 0]), ints([2, 1, 1, 1]), 3)
    dtypes = (sources.dtype.name, targets.dtype.name)
    expect("dtypes of sources and targets", dtypes, ("int64", "int64"))
    rule = "given loops dropped, then one per node in node order"
    expect("sources with self loops", to_numpy(sources).tolist(), [0, 0, 0, 1, 2], rule)
    expect("targets with self loops", to_numpy(targets).tolist(), [1, 1, 0, 1, 2], rule)


@pytest.mark.provided
def test_edge_list_numbers_the_real_nodes_and_keeps_edges_between_them():
    batch = random_batch(34, 3, 4, 1)
    batch.mask[0, 1] = False
    edges = edge_list(*batch.tensors()[1:])
    real = [b * 4 + i for b in range(3) for i in range(4) if batch.mask[b, i]]
    number = {position: v for v, position in enumerate(real)}
    expected = [
        (number[b * 4 + j], number[b * 4 + i])
        for b, i, j in np.ndindex(3, 4, 4)
        if batch.adjacency[b, i, j] and batch.mask[b, i] and batch.mask[b, j]
    ]
    rule = "the real nodes, in batch order"
    expect("flattened positions of the nodes", to_numpy(edges.nodes).tolist(), real, rule)
    pairs = zip(to_numpy(edges.sources).tolist(), to_numpy(edges.targets).tolist())
    rule = "the edges between real nodes, self loops as given"
    expect("edges (source, target), sorted", sorted(pairs), sorted(expected), rule)


@pytest.mark.provided  # provided code, built on exercises 6.1 to 6.4: it needs them finished
def test_the_layers_attention_weights_are_the_equations_alpha():
    batch = random_batch(21, 2, 4, 3)
    w = random_weights(21, 3, 2, 2)
    receiver = np.einsum("bni,ihd->bnhd", batch.x, w.theta_receiver) + w.bias_receiver
    sender = np.einsum("bni,ihd->bnhd", batch.x, w.theta_sender) + w.bias_sender
    logits = logits_by_the_equations(receiver, sender, w.attention, w.slope)
    attended = attended_by_the_equations(batch.adjacency, batch.mask)
    expected = weights_by_the_equations(logits, attended)
    got = as_layer(w).attention_weights(*batch.tensors())
    rule = attended_aware(attended, WEIGHTS_RULE)
    assert_close(got, expected, "the layer's attention weights", rule, PAIR_AXES)
