"""Chapter 6: the GATv2 layer and each of its steps against NumPy.

The expected values come from the layer's equations, written here in NumPy and plain loops
(one node, one head, one neighbour at a time) and never from tenxor. Inputs are built from
NumPy arrays and results read back without calling any exercise.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

import tenxor
from tenxor.graph_attention import (
    GATv2,
    attention_logits,
    attention_weights,
    edge_mask,
    gatv2,
    neighbour_messages,
    neighbours,
    neighbours_and_self,
    self_messages,
)
from tests.support import from_numpy, to_numpy

SLOPE = 0.01
FLOAT64_TOLERANCE = 1e-9
FLOAT32_TOLERANCE = 1e-4


# The equations, one node at a time.


def leaky(v: np.ndarray) -> np.ndarray:
    return np.where(v > 0, v, SLOPE * v)


def softmax_of(z: list[float]) -> list[float]:
    """softmax of a short list of logits, its largest subtracted first."""
    top = max(z)
    e = [np.exp(v - top) for v in z]
    return [v / sum(e) for v in e]


def neighbour_list(graph: Graph, b: int, i: int) -> list[int]:
    """The real nodes j != i that node i of graph b receives from."""
    n = graph.mask.shape[1]
    return [j for j in range(n) if j != i and graph.mask[b, j] and graph.adjacency[b, i, j]]


def layer_by_the_equations(graph: Graph, w: Weights) -> np.ndarray:
    """x'_i = mean over h of alpha_iih ts x_i + sum over neighbours j of alpha_ijh tt x_j."""
    batch, nodes, _ = graph.x.shape
    heads = w.attention.shape[1]
    out = np.zeros((batch, nodes, w.theta_source.shape[1]))
    for b in range(batch):
        for i in range(nodes):
            if not graph.mask[b, i]:
                continue
            attended = [i, *neighbour_list(graph, b, i)]
            source_i = w.theta_source.T @ graph.x[b, i]
            total = np.zeros(w.theta_source.shape[1])
            for h in range(heads):
                logits = [
                    w.attention[:, h] @ leaky(source_i + w.theta_target.T @ graph.x[b, j])
                    for j in attended
                ]
                alpha = softmax_of(logits)
                total += alpha[0] * source_i
                for weight, j in zip(alpha[1:], attended[1:]):
                    total += weight * (w.theta_target.T @ graph.x[b, j])
            out[b, i] = total / heads
    return out


# Inputs.


@dataclass
class Graph:
    x: np.ndarray  # [B, N, DI]
    adjacency: np.ndarray  # [B, N, N] bool
    mask: np.ndarray  # [B, N] bool


@dataclass
class Weights:
    theta_source: np.ndarray  # [DI, DA]
    theta_target: np.ndarray  # [DI, DA]
    attention: np.ndarray  # [DA, H]


def random_graph(rng: np.random.Generator, batch: int, nodes: int, features: int) -> Graph:
    """Graphs of 1 to `nodes` real nodes (a prefix), directed edges with probability 1/2."""
    counts = rng.integers(1, nodes + 1, batch)
    mask = np.arange(nodes)[None, :] < counts[:, None]
    adjacency = rng.uniform(size=(batch, nodes, nodes)) < 0.5
    return Graph(rng.uniform(-1, 1, (batch, nodes, features)), adjacency, mask)


def random_weights(rng: np.random.Generator, features: int, attended: int, heads: int) -> Weights:
    return Weights(rng.uniform(-1, 1, (features, attended)),
                   rng.uniform(-1, 1, (features, attended)),
                   rng.uniform(-1, 1, (attended, heads)))  # fmt: skip


def random_batch(seed: int, sizes: tuple[int, int, int, int, int]) -> tuple[Graph, Weights]:
    """A random batch and layer weights of sizes (B, N, DI, DA, H), reproducible from `seed`."""
    batch, nodes, features, attended, heads = sizes
    rng = np.random.default_rng(seed)
    return random_graph(rng, batch, nodes, features), random_weights(rng, features, attended, heads)


def run_layer(graph: Graph, w: Weights, dtype: tenxor.DType = tenxor.float64) -> np.ndarray:
    arrays = (graph.x, graph.adjacency, graph.mask, w.theta_source, w.theta_target, w.attention)
    tensors = [from_numpy(a) if a.dtype == np.bool_ else from_numpy(a, dtype) for a in arrays]
    return to_numpy(gatv2(*tensors))


def assert_close(actual: np.ndarray, expected: np.ndarray, tolerance: float) -> None:
    assert actual.shape == expected.shape
    assert np.all(np.isfinite(actual))
    assert np.max(np.abs(actual - expected), initial=0.0) <= tolerance * max(
        1.0, np.max(np.abs(expected), initial=0.0)
    )


SIZES = [(9, 7, 3, 4, 2), (1, 1, 1, 1, 1), (3, 5, 2, 6, 3), (2, 8, 4, 3, 4)]  # B, N, DI, DA, H


# 6.8: the whole layer.


@pytest.mark.exercise("6.8")
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("sizes", SIZES, ids=str)
def test_the_layer_matches_the_equations_on_random_directed_graphs(seed, sizes):
    graph, w = random_batch(seed, sizes)
    assert_close(run_layer(graph, w), layer_by_the_equations(graph, w), FLOAT64_TOLERANCE)


@pytest.mark.exercise("6.8")
@pytest.mark.parametrize("seed", [3, 4])
def test_a_self_loop_in_the_adjacency_is_counted_once(seed):
    graph, w = random_batch(seed, (4, 6, 3, 4, 2))
    looped = Graph(graph.x, graph.adjacency | np.eye(6, dtype=bool)[None], graph.mask)
    unlooped = Graph(graph.x, graph.adjacency & ~np.eye(6, dtype=bool)[None], graph.mask)
    expected = layer_by_the_equations(unlooped, w)
    assert_close(run_layer(looped, w), expected, FLOAT64_TOLERANCE)
    assert_close(run_layer(unlooped, w), expected, FLOAT64_TOLERANCE)


@pytest.mark.exercise("6.8")
def test_padding_in_the_middle_all_padding_and_isolated_nodes():
    rng = np.random.default_rng(5)
    graph = random_graph(rng, 3, 6, 3)
    graph.mask[0] = [True, False, True, False, True, True]  # padding between real nodes
    graph.mask[1] = False  # a graph that is all padding
    graph.mask[2] = True
    graph.adjacency[2, 3, :] = False  # node 3 of graph 2 receives from nobody
    graph.adjacency[2, :, 3] = False  # and sends to nobody
    w = random_weights(rng, 3, 5, 2)
    got = run_layer(graph, w)
    assert_close(got, layer_by_the_equations(graph, w), FLOAT64_TOLERANCE)
    assert np.all(got[0, [1, 3]] == 0) and np.all(got[1] == 0)
    source_3 = w.theta_source.T @ graph.x[2, 3]
    assert np.allclose(got[2, 3], source_3, rtol=0, atol=1e-12)  # alone: all weight on itself


@pytest.mark.exercise("6.8")
def test_large_logits_do_not_overflow():
    graph, w = random_batch(6, (3, 5, 3, 4, 2))
    w.attention *= 2000.0  # logits in the thousands: exp alone would overflow
    with np.errstate(over="ignore"):
        logits = np.einsum("bijd,dh->bijh", leaky(
            (graph.x @ w.theta_source)[:, :, None] + (graph.x @ w.theta_target)[:, None]
        ), w.attention)  # fmt: skip
        assert not np.all(np.isfinite(np.exp(logits)))
    assert_close(run_layer(graph, w), layer_by_the_equations(graph, w), FLOAT64_TOLERANCE)


@pytest.mark.exercise("6.8")
@pytest.mark.parametrize("seed", [7, 8])
def test_float32_inputs_give_a_float32_result_close_to_the_equations(seed):
    graph, w = random_batch(seed, (4, 6, 3, 4, 2))
    as32 = Graph(graph.x.astype(np.float32), graph.adjacency, graph.mask)
    weights32 = Weights(*(a.astype(np.float32) for a in vars(w).values()))
    tensors = [
        from_numpy(a) for a in (as32.x, as32.adjacency, as32.mask, *vars(weights32).values())
    ]
    result = gatv2(*tensors)
    assert result.dtype == tenxor.float32
    widened = Weights(*(a.astype(np.float64) for a in vars(weights32).values()))
    expected = layer_by_the_equations(as32, widened)
    assert_close(to_numpy(result).astype(np.float64), expected, FLOAT32_TOLERANCE)


@pytest.mark.exercise("6.8")
def test_the_layer_object_holds_its_weights_calls_the_layer_and_shows_its_weights():
    layer = GATv2.random(3, 4, 2, seed=11)
    again = GATv2.random(3, 4, 2, seed=11)
    weights = Weights(*(to_numpy(t) for t in (layer.theta_source, layer.theta_target,
                                              layer.attention)))  # fmt: skip
    assert [a.shape for a in vars(weights).values()] == [(3, 4), (3, 4), (4, 2)]
    for name in ("theta_source", "theta_target", "attention"):
        assert np.array_equal(to_numpy(getattr(layer, name)), to_numpy(getattr(again, name)))
    assert np.all(np.abs(weights.attention) <= 1)
    graph = random_graph(np.random.default_rng(12), 2, 5, 3)
    inputs = [from_numpy(a) for a in (graph.x, graph.adjacency, graph.mask)]
    assert_close(to_numpy(layer(*inputs)), layer_by_the_equations(graph, weights),
                 FLOAT64_TOLERANCE)  # fmt: skip
    source, target = projected(graph, weights)
    logits = np.einsum("bijd,dh->bijh", leaky(source[:, :, None] + target[:, None]),
                       weights.attention)  # fmt: skip
    expected = weights_by_the_equations(logits, expected_attended(graph))
    assert_close(to_numpy(layer.attention_weights(*inputs)), expected, FLOAT64_TOLERANCE)


# 6.1 to 6.7: each step.


def small_batch(seed: int) -> tuple[Graph, Weights]:
    graph, w = random_batch(seed, (3, 5, 3, 4, 2))
    graph.mask[0, 1] = False  # padding in the middle
    graph.adjacency[1] |= np.eye(5, dtype=bool)  # self loops in the input
    return graph, w


def expected_edges(graph: Graph) -> np.ndarray:
    return graph.mask[:, :, None] & graph.mask[:, None, :]


def expected_neighbours(graph: Graph) -> np.ndarray:
    return graph.adjacency & expected_edges(graph) & ~np.eye(graph.mask.shape[1], dtype=bool)


def expected_attended(graph: Graph) -> np.ndarray:
    return expected_neighbours(graph) | (
        np.eye(graph.mask.shape[1], dtype=bool) & graph.mask[:, :, None]
    )


@pytest.mark.exercise("6.1")
@pytest.mark.parametrize("seed", [0, 1])
def test_edge_mask_is_true_where_both_nodes_are_real(seed):
    graph, _ = small_batch(seed)
    for mask in (graph.mask, graph.mask.astype(np.float64)):
        got = to_numpy(edge_mask(from_numpy(mask)))
        assert got.dtype == np.bool_ and np.array_equal(got, expected_edges(graph))


@pytest.mark.exercise("6.2")
@pytest.mark.parametrize("seed", [0, 1])
def test_neighbours_drop_self_loops_and_padding(seed):
    graph, _ = small_batch(seed)
    for adjacency in (graph.adjacency, graph.adjacency.astype(np.float64)):
        got = to_numpy(neighbours(from_numpy(adjacency), from_numpy(graph.mask)))
        assert got.dtype == np.bool_ and np.array_equal(got, expected_neighbours(graph))


@pytest.mark.exercise("6.3")
@pytest.mark.parametrize("seed", [0, 1])
def test_each_real_node_attends_to_itself_once_and_to_its_neighbours(seed):
    graph, _ = small_batch(seed)
    neighbour = from_numpy(expected_neighbours(graph))
    got = to_numpy(neighbours_and_self(neighbour, from_numpy(graph.mask)))
    assert got.dtype == np.bool_ and np.array_equal(got, expected_attended(graph))


def projected(graph: Graph, w: Weights) -> tuple[np.ndarray, np.ndarray]:
    return graph.x @ w.theta_source, graph.x @ w.theta_target


@pytest.mark.exercise("6.4")
@pytest.mark.parametrize("seed", [0, 1])
def test_attention_logits_pair_every_source_with_every_target(seed):
    graph, w = small_batch(seed)
    source, target = projected(graph, w)
    got = to_numpy(attention_logits(from_numpy(source), from_numpy(target),
                                    from_numpy(w.attention)))  # fmt: skip
    batch, nodes, _ = source.shape
    expected = np.array([[[[w.attention[:, h] @ leaky(source[b, i] + target[b, j])
                            for h in range(w.attention.shape[1])] for j in range(nodes)]
                          for i in range(nodes)] for b in range(batch)])  # fmt: skip
    assert_close(got, expected, FLOAT64_TOLERANCE)


@pytest.mark.exercise("6.4")
def test_attention_logits_use_the_given_slope():
    source, target = np.full((1, 1, 2), -1.0), np.full((1, 1, 2), -1.0)
    got = attention_logits(from_numpy(source), from_numpy(target), from_numpy(np.ones((2, 1))),
                           slope=0.5)  # fmt: skip
    assert to_numpy(got).tolist() == [[[[-2.0]]]]  # each of the 2 entries: 0.5 * -2


def weights_by_the_equations(logits: np.ndarray, attends: np.ndarray) -> np.ndarray:
    expected = np.zeros_like(logits)
    batch, nodes, _, heads = logits.shape
    for b in range(batch):
        for i in range(nodes):
            chosen = [j for j in range(nodes) if attends[b, i, j]]
            for h in range(heads):
                if chosen:
                    expected[b, i, chosen, h] = softmax_of([logits[b, i, j, h] for j in chosen])
    return expected


@pytest.mark.exercise("6.5")
@pytest.mark.parametrize("scale", [1.0, 5000.0])
def test_attention_weights_are_a_softmax_over_the_attended_nodes(scale):
    graph, _ = small_batch(2)
    logits = np.random.default_rng(3).normal(size=(3, 5, 5, 2)) * scale
    attends = expected_attended(graph)
    got = to_numpy(attention_weights(from_numpy(logits), from_numpy(attends)))
    assert_close(got, weights_by_the_equations(logits, attends), FLOAT64_TOLERANCE)
    rows = got.sum(axis=2)
    real = graph.mask
    assert np.allclose(rows[real], 1.0) and np.all(rows[~real] == 0)


def random_alpha(seed: int, graph: Graph) -> np.ndarray:
    logits = np.random.default_rng(seed).normal(size=(*graph.adjacency.shape, 2))
    return weights_by_the_equations(logits, expected_attended(graph))


@pytest.mark.exercise("6.6")
@pytest.mark.parametrize("seed", [0, 1])
def test_neighbour_messages_sum_weighted_target_features_over_neighbours(seed):
    graph, w = small_batch(seed)
    alpha = random_alpha(seed, graph)
    _, target = projected(graph, w)
    nb = expected_neighbours(graph)
    got = to_numpy(neighbour_messages(from_numpy(alpha), from_numpy(target), from_numpy(nb)))
    batch, nodes, _ = target.shape
    expected = np.zeros((batch, nodes, 2, target.shape[2]))
    for b in range(batch):
        for i in range(nodes):
            for h in range(2):
                for j in range(nodes):
                    if nb[b, i, j]:
                        expected[b, i, h] += alpha[b, i, j, h] * target[b, j]
    assert_close(got, expected, FLOAT64_TOLERANCE)


@pytest.mark.exercise("6.7")
@pytest.mark.parametrize("seed", [0, 1])
def test_self_messages_weight_each_node_by_its_own_attention(seed):
    graph, w = small_batch(seed)
    alpha = random_alpha(seed, graph)
    source, _ = projected(graph, w)
    got = to_numpy(self_messages(from_numpy(alpha), from_numpy(source)))
    batch, nodes, _ = source.shape
    expected = np.array([[[alpha[b, i, i, h] * source[b, i] for h in range(2)]
                          for i in range(nodes)] for b in range(batch)])  # fmt: skip
    assert_close(got, expected, FLOAT64_TOLERANCE)
