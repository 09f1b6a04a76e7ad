"""Larger cases of chapter 6: more graphs, nodes, heads and edges than the public tests, and
random index tensors for gather and scatter, all against the NumPy witness of the public tests
(tests/test_graph_attention.py and tests/test_scatter.py), which never calls tenxor."""

from __future__ import annotations

import operator

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from tenxor.graph_attention import edge_list, gatv2, gatv2_edges
from tenxor.scatter import gather_rows, index_reduce, segment_softmax
from tests.support import (
    assert_rows_close,
    assert_same,
    at_most_examples,
    from_numpy,
    to_numpy,
)
from tests.test_graph_attention import (
    EDGES_RULE,
    LAYER_RULE,
    as_layer,
    assert_close,
    assert_layer,
    edges_by_the_equations,
    ints,
    random_batch,
    random_edges,
    random_weights,
)
from tests.test_scatter import (
    ADD_RULE,
    GATHER_RULE,
    SOFTMAX_RULE,
    folded_by_numpy,
    softmax_per_segment,
)


@pytest.mark.exercise("6.7")
@pytest.mark.parametrize("concat, shared, bias", [(True, False, True), (False, True, False)])
def test_gatv2_on_a_larger_batch(concat, shared, bias):
    batch = random_batch(40, 4, 8, 5)
    batch.adjacency &= np.random.default_rng(41).random(batch.adjacency.shape) < 0.6
    w = random_weights(40, 5, 3, 3, concat=concat, shared=shared, bias=bias, slope=0.1)
    assert_layer(gatv2(*batch.tensors(), as_layer(w)), batch, batch.expected(w), LAYER_RULE)


@pytest.mark.exercise("6.11")
@pytest.mark.parametrize("concat", [True, False])
def test_gatv2_edges_on_a_larger_graph(concat):
    x = np.random.default_rng(42).uniform(-1, 1, (12, 4))
    sources, targets = random_edges(42, 12, 40)
    w = random_weights(42, 4, 3, 4, concat=concat)
    got = gatv2_edges(from_numpy(x), ints(sources), ints(targets), as_layer(w))
    expected = edges_by_the_equations(x, sources, targets, w)
    assert_close(got, expected, "output of gatv2_edges", EDGES_RULE, ("node", "feature"))


@pytest.mark.exercise("6.11")
def test_gatv2_edges_on_a_larger_padded_batch_gives_the_dense_equations():
    batch = random_batch(43, 5, 6, 3)
    batch.mask[2] = False
    w = random_weights(43, 3, 2, 3, shared=True)
    edges = edge_list(*batch.tensors()[1:])
    nodes = to_numpy(edges.nodes)
    features = from_numpy(batch.x.reshape(-1, 3)[nodes])
    got = gatv2_edges(features, edges.sources, edges.targets, as_layer(w))
    expected = batch.expected(w).reshape(-1, w.width)[nodes]
    assert_close(got, expected, "output of gatv2_edges", LAYER_RULE, ("node", "feature"))


@st.composite
def tables_and_indices(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray]:
    """A float table of 1 to 6 rows of any trailing shape and an int64 index of up to 3 dims
    whose entries pick rows, negative ones too."""
    count = draw(st.integers(1, 6), label="rows")
    trailing = tuple(draw(st.lists(st.integers(0, 3), max_size=2), label="trailing"))
    shape = tuple(draw(st.lists(st.integers(0, 3), max_size=3), label="index shape"))
    size = int(np.prod(shape, dtype=int))
    entries = st.lists(st.integers(-count, count - 1), min_size=size, max_size=size)
    picks = draw(entries, label="index entries")
    table = np.arange(count * int(np.prod(trailing, dtype=int)), dtype=np.float64)
    return table.reshape(count, *trailing), np.array(picks, dtype=np.int64).reshape(shape)


@pytest.mark.exercise("6.8")
@at_most_examples(60)
@given(case=tables_and_indices())
@example(case=(np.arange(12.0).reshape(4, 3), np.array([[2, -1], [0, 2]], dtype=np.int64)))
def test_gather_rows_matches_numpy_indexing(case):
    table, picks = case
    got = gather_rows(from_numpy(table), from_numpy(picks))
    assert_same(got, table[picks], what="rows gathered", rule=GATHER_RULE)


@pytest.mark.exercise("6.9")
@at_most_examples(40)
@given(case=tables_and_indices(), seed=st.integers(0, 1000))
@example(case=(np.arange(8.0).reshape(4, 2), np.array([1, 3, 1, -1, 0], dtype=np.int64)), seed=7)
def test_index_reduce_keeps_the_largest_like_np_maximum_at(case, seed):
    table, picks = case
    picks = picks.reshape(-1)
    source = np.random.default_rng(seed).uniform(-50, 50, (len(picks), *table.shape[1:]))
    got = index_reduce(from_numpy(table), from_numpy(picks), from_numpy(source), max)
    rule = "every source[k] folded into row index[k] by max, as np.maximum.at"
    expected = folded_by_numpy(table, picks, source, np.maximum)
    assert_rows_close(got, expected, "the rows folded by max", rule, rtol=0, atol=0)  # exact
    added = index_reduce(from_numpy(table), from_numpy(picks), from_numpy(source), operator.add)
    expected = folded_by_numpy(table, picks, source, np.add)
    assert_rows_close(added, expected, "the rows folded by +", ADD_RULE, rtol=1e-12, atol=0)


@pytest.mark.exercise("6.10")
@at_most_examples(40)
@given(
    segment=st.lists(st.integers(0, 5), max_size=12),
    heads=st.integers(1, 3),
    scale=st.sampled_from([1.0, 1000.0]),
    seed=st.integers(0, 1000),
)
@example(segment=[0, 2, 0, 5, 2, 2], heads=2, scale=1.0, seed=3)
def test_segment_softmax_matches_a_softmax_per_segment(segment, heads, scale, seed):
    segment = np.array(segment, dtype=np.int64)
    logits = np.random.default_rng(seed).normal(size=(len(segment), heads)) * scale
    got = segment_softmax(from_numpy(logits), from_numpy(segment), 6)
    expected = softmax_per_segment(logits, segment, 6)

    def row_words(k: int) -> str:
        return f"row {k} (segment {segment[k]})"

    assert_rows_close(got, expected, "the weights", SOFTMAX_RULE, 1e-9, 1e-12, row_words)
