"""The graph diagram, read back from its SVG: which nodes and arrows it draws, where each arrow
starts and ends, and what its width and label say about the weights it was given."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tenxor
from tenxor.diagrams import graph_diagram

from .svg_parts import Part, inside, named, parts

pytestmark = pytest.mark.provided

MISPLACED = "#d62728"


def random_graph(seed: int, nodes: int = 7) -> tuple[np.ndarray, np.ndarray]:
    """A directed adjacency (self loops included at random) and a node mask with padding."""
    rng = np.random.default_rng(seed)
    adjacency = rng.uniform(size=(nodes, nodes)) < 0.4
    mask = np.arange(nodes) < rng.integers(3, nodes + 1)
    mask[1] = False  # padding in the middle too
    return adjacency, mask


def softmax_weights(seed: int, adjacency: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Weights of each real node over its neighbours and itself, as one head would give."""
    nodes = len(mask)
    attends = (adjacency | np.eye(nodes, dtype=bool)) & mask[:, None] & mask[None, :]
    logits = np.random.default_rng(seed + 100).normal(size=(nodes, nodes))
    weights = np.where(attends, np.exp(logits - logits.max(axis=1, keepdims=True)), 0.0)
    totals = weights.sum(axis=1, keepdims=True)
    return np.divide(weights, totals, out=np.zeros_like(weights), where=totals > 0)


def drawn_edges(adjacency: np.ndarray, mask: np.ndarray) -> set[str]:
    """The arrows the picture must hold, as "i,j": edges between different real nodes."""
    nodes = len(mask)
    return {f"{i},{j}" for i in range(nodes) for j in range(nodes)
            if i != j and adjacency[i, j] and mask[i] and mask[j]}  # fmt: skip


def head_box(part: Part) -> tuple[float, float, float, float]:
    """The box around an arrow's head (its only closed shape)."""
    return part.box


def centre(box: tuple[float, float, float, float]) -> tuple[float, float]:
    return (box[0] + box[2]) / 2, (box[1] + box[3]) / 2


def touches(box: tuple[float, float, float, float], circle: tuple[float, float, float, float]):
    """Whether `box` reaches into the circle inscribed in `circle` (a few pixels of slack)."""
    (cx, cy), radius = centre(circle), (circle[2] - circle[0]) / 2
    nearest_x = min(max(cx, box[0]), box[2])
    nearest_y = min(max(cy, box[1]), box[3])
    return math.hypot(nearest_x - cx, nearest_y - cy) <= radius + 2


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_every_edge_is_an_arrow_from_the_sender_to_the_receiver(seed):
    adjacency, mask = random_graph(seed)
    found = parts(graph_diagram(adjacency, mask).svg)
    nodes, edges = named(found, "node"), named(found, "edge")
    assert set(nodes) == {str(i) for i in np.flatnonzero(mask)}
    assert set(edges) == drawn_edges(adjacency, mask)
    for key, part in edges.items():
        receiver, sender = key.split(",")
        start, _ = part.arrow
        assert inside(start, nodes[sender].box, slack=2)  # leaves the sender's outline
        assert touches(head_box(part), nodes[receiver].box)  # its head reaches the receiver
        assert not touches(head_box(part), nodes[sender].box)


def overlap(a: tuple[float, ...], b: tuple[float, ...]) -> float:
    """The area two boxes (left, top, right, bottom) share."""
    width = min(a[2], b[2]) - max(a[0], b[0])
    height = min(a[3], b[3]) - max(a[1], b[1])
    return max(width, 0.0) * max(height, 0.0)


@pytest.mark.parametrize("seed", [0, 1, 2, 7, 8])
def test_weights_label_each_arrow_and_node_and_set_the_arrow_widths(seed):
    adjacency, mask = random_graph(seed)
    weights = softmax_weights(seed, adjacency, mask)
    found = parts(graph_diagram(adjacency, mask, weights).svg)
    edges, labels, selves = named(found, "edge"), named(found, "weight"), named(found, "self")
    assert set(labels) == set(edges) == drawn_edges(adjacency, mask)
    for key, part in labels.items():
        i, j = map(int, key.split(","))
        assert part.texts == [f"{weights[i, j]:.2f}"]
    assert {key: part.texts for key, part in selves.items()} == {
        str(i): [f"self {weights[i, i]:.2f}"] for i in np.flatnonzero(mask)
    }
    by_weight = sorted(edges, key=lambda key: weights[tuple(map(int, key.split(",")))])
    widths = [edges[key].strokes[0][1] for key in by_weight]
    assert widths == sorted(widths) and widths[0] < widths[-1]
    assert all(edges[key].strokes[0][0] != MISPLACED for key in edges)
    tags = [part.box for part in [*labels.values(), *selves.values()]]
    assert not [(a, b) for k, a in enumerate(tags) for b in tags[k + 1 :] if overlap(a, b) > 0]


def test_a_weight_where_there_is_no_edge_is_drawn_red_and_named():
    adjacency = np.array([[0, 1, 0], [0, 0, 0], [0, 0, 0]], dtype=bool)
    mask = np.array([True, True, False])
    weights = np.array([[0.5, 0.5, 0.0], [0.25, 0.75, 0.0], [0.0, 0.125, 0.0]])
    picture = graph_diagram(adjacency, mask, weights)
    found = parts(picture.svg)
    edges = named(found, "edge")
    assert set(edges) == {"0,1", "1,0"}
    assert edges["1,0"].strokes[0][0] == MISPLACED  # 1 has no edge from 0
    assert edges["0,1"].strokes[0][0] != MISPLACED
    assert "weights where there is no edge: [1, 0], [2, 1]" in picture.svg  # 2 is padding


def test_self_loops_are_not_arrows_and_padding_is_named():
    adjacency = np.ones((4, 4), dtype=bool)
    picture = graph_diagram(adjacency, [1, 1, 1, 0])
    edges = named(parts(picture.svg), "edge")
    assert set(edges) == {f"{i},{j}" for i in range(3) for j in range(3) if i != j}
    assert "padding node 3 is not drawn" in picture.svg
    assert repr(picture) == "<diagram: graph: 3 real nodes, 6 edges>"


def test_tensors_numpy_arrays_and_lists_draw_the_same_picture():
    adjacency, mask = random_graph(4, nodes=5)
    weights = softmax_weights(4, adjacency, mask)
    from_numpy = graph_diagram(adjacency, mask, weights).svg
    from_lists = graph_diagram(adjacency.tolist(), mask.tolist(), weights.tolist()).svg
    from_tensors = graph_diagram(tenxor.tensor(adjacency.tolist()), tenxor.tensor(mask.tolist()),
                                 tenxor.tensor(weights.tolist())).svg  # fmt: skip
    assert from_numpy == from_lists == from_tensors


@pytest.mark.parametrize(
    "arguments, message",
    [
        (([[0, 1], [1, 0, 0]],), r"adjacency must be square \[N, N\].*sizes \(2, 2, 3\)"),
        ((np.zeros((3, 3)), [1, 1]), r"adjacency is \[3, 3\], node_mask has 2 entries"),
        ((np.zeros((3, 3)), None, np.zeros((2, 2))), r"adjacency's shape \[3, 3\], got \[2, 2\]"),
    ],
)
def test_bad_shapes_are_refused_naming_them(arguments, message):
    with pytest.raises(ValueError, match=message):
        graph_diagram(*arguments)


def test_a_graph_of_padding_only_says_so():
    picture = graph_diagram(np.zeros((2, 2)), [0, 0])
    assert "no real nodes" in picture.svg and named(parts(picture.svg), "node") == {}
