"""The graph diagram: one graph's nodes and edges, and the attention weights of one head.

Nodes sit on a circle, node 0 at the top and the others clockwise. An edge is drawn as an
arrow from j to i when node i receives from node j (adjacency[i][j] is nonzero), so arrows
point the way messages travel. With weights, each arrow is as wide as its weight and
labelled with it, and each node's weight on itself is written beside the node; a weight on a
pair that is not an edge is drawn dashed in red, because it should not be there.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from .layouts import Point, palette
from .parts import CAPTION_SIZE, Block, caption, darker, stack
from .render import Picture, render
from .shapes import FAINT, INK, WHITE, Diagram, arrow, box, concat, disc, label, text_width

NODE_RADIUS = 0.45
NODE_SPACING = 4.2  # between neighbouring nodes along the circle
EDGE_SHIFT = 0.14  # each arrow sits to the right of the line between its nodes, so that
# j -> i and i -> j are drawn side by side
THINNEST, WIDEST = 0.04, 0.45  # line widths for weight 0 and weight 1 (chalk's units)
LINE_ROOM = 0.1  # half the widest line, and a little white, between a line and a label
LABEL_PLACES = (0.5, 0.38, 0.62, 0.28, 0.72, 0.2, 0.8)  # how far along an arrow a label goes
LABEL_STEPS = (0.0, 0.12)  # and how much further aside than the nearest it may go
MORE_PLACES = tuple(k / 20 for k in range(3, 18))  # where else, when those are all taken
NEARER = 0.15  # how much nearer its own arrow than any other a label's centre must be
MISPLACED = "#d62728"  # a weight where there is no edge

Matrix = list[list[float]]
Box = tuple[float, float, float, float]  # left, top, right, bottom
Segment = tuple[Point, Point]


def as_rows(values: Any, name: str) -> Matrix:
    """A square matrix (nested lists, NumPy array or tensor) as lists of floats."""
    rows = values.tolist() if hasattr(values, "tolist") else values
    rows = [[float(v) for v in row] for row in rows]
    if any(len(row) != len(rows) for row in rows):
        shape = (len(rows), *sorted({len(row) for row in rows}))
        raise ValueError(f"{name} must be square [N, N] for one graph, got rows of sizes {shape}")
    return rows


def as_mask(node_mask: Any, nodes: int) -> list[bool]:
    """The node mask as one bool per node (all real when it is None)."""
    if node_mask is None:
        return [True] * nodes
    mask = node_mask.tolist() if hasattr(node_mask, "tolist") else list(node_mask)
    if len(mask) != nodes or any(isinstance(v, (list, tuple)) for v in mask):
        raise ValueError(
            f"node_mask must have one entry per node: adjacency is [{nodes}, {nodes}], "
            f"node_mask has {len(mask)} entries"
        )
    return [bool(v) for v in mask]


def node_centres(real: Sequence[int]) -> dict[int, Point]:
    """Each real node's centre on a circle: the first at the top, the rest clockwise."""
    count = len(real)
    radius = max(1.4, count * NODE_SPACING / (2 * math.pi)) if count > 1 else 0.0
    turns = {node: 2 * math.pi * k / count for k, node in enumerate(real)}
    return {node: (radius * math.sin(a), -radius * math.cos(a)) for node, a in turns.items()}


def edge_ends(start: Point, end: Point) -> tuple[Point, Point, Point]:
    """Where the arrow from node centre `start` to node centre `end` begins and ends (on the
    node outlines, shifted to its right), and the unit vector to its right."""
    (x0, y0), (x1, y1) = start, end
    length = math.hypot(x1 - x0, y1 - y0)
    ux, uy = (x1 - x0) / length, (y1 - y0) / length
    rx, ry = -uy, ux  # right of the direction of travel, with y pointing down
    along = math.sqrt(NODE_RADIUS**2 - EDGE_SHIFT**2)
    begin = (x0 + ux * along + rx * EDGE_SHIFT, y0 + uy * along + ry * EDGE_SHIFT)
    finish = (x1 - ux * along + rx * EDGE_SHIFT, y1 - uy * along + ry * EDGE_SHIFT)
    return begin, finish, (rx, ry)


def weight_text(weight: float) -> str:
    """A weight as it is written on the picture: two decimals."""
    return f"{weight:.2f}"


def weight_width(weight: float) -> float:
    """The line width of an arrow of weight `weight`: from THINNEST at 0 to WIDEST at 1."""
    if not math.isfinite(weight):
        return WIDEST
    return THINNEST + (WIDEST - THINNEST) * min(max(weight, 0.0), 1.0)


def tag(words: str, colour: str) -> Diagram:
    """A label's text on a white patch."""
    width, height = tag_size(words)
    return box(width, height, WHITE, line=WHITE) + label(words, CAPTION_SIZE, colour)


def tag_size(words: str) -> Point:
    """The width and height of a tag."""
    return text_width(words, CAPTION_SIZE) + 0.08, CAPTION_SIZE * 1.25


def tag_box(centre: Point, words: str) -> Box:
    """The box (left, top, right, bottom) a tag centred on `centre` covers."""
    (x, y), (width, height) = centre, tag_size(words)
    return x - width / 2, y - height / 2, x + width / 2, y + height / 2


def overlap(a: Box, b: Box) -> float:
    """The area two boxes share."""
    width = min(a[2], b[2]) - max(a[0], b[0])
    height = min(a[3], b[3]) - max(a[1], b[1])
    return max(width, 0.0) * max(height, 0.0)


def edge_arrow(i: int, j: int, centres: dict[int, Point], colour: str, weight: float | None,
               is_edge: bool) -> Diagram:  # fmt: skip
    """The arrow j -> i, named "edge/i,j": as wide as its weight, red and dashed when it is
    not an edge or its weight is not a number."""
    begin, finish, _ = edge_ends(centres[j], centres[i])
    width = None if weight is None else weight_width(weight)
    stray = not is_edge or (weight is not None and not math.isfinite(weight))
    shaft = arrow(begin, finish, MISPLACED if stray else colour, width, dashed=stray)
    return shaft.named(f"edge/{i},{j}")


def segment_distance(point: Point, segment: Segment) -> float:
    """The distance from `point` to a segment."""
    (px, py), ((x0, y0), (x1, y1)) = point, segment
    dx, dy = x1 - x0, y1 - y0
    length = dx * dx + dy * dy
    t = 0.0 if length == 0 else max(0.0, min(1.0, ((px - x0) * dx + (py - y0) * dy) / length))
    return math.hypot(px - (x0 + t * dx), py - (y0 + t * dy))


def cuts(segment: Segment, area: Box) -> bool:
    """Whether a segment passes through a box (clipped to the box, it keeps a length)."""
    ((x0, y0), (x1, y1)), low, high = segment, 0.0, 1.0
    for delta, origin, lower, upper in ((x1 - x0, x0, area[0], area[2]),
                                         (y1 - y0, y0, area[1], area[3])):  # fmt: skip
        if abs(delta) < 1e-12:
            if not lower < origin < upper:
                return False
            continue
        a, b = (lower - origin) / delta, (upper - origin) / delta
        low, high = max(low, min(a, b)), min(high, max(a, b))
    return high - low > 1e-9


def grown(area: Box, by: float) -> Box:
    """A box with each side moved `by` outwards."""
    return area[0] - by, area[1] - by, area[2] + by, area[3] + by


def label_faults(centre: Point, words: str, own: Segment, others: Sequence[Segment],
                 taken: Sequence[Box]) -> float:  # fmt: skip
    """How badly a label of `words` at `centre` sits: 0 when it covers no other label or node,
    no line runs through it, and it is clearly nearer its own arrow `own` than any other."""
    area = tag_box(centre, words)
    faults = 100 * sum(overlap(area, other) > 0 for other in taken)  # never cover a label
    faults += 5 * sum(cuts(segment, grown(area, LINE_ROOM)) for segment in [own, *others])
    nearest_other = min((segment_distance(centre, s) for s in others), default=math.inf)
    faults += 3 * max(0.0, segment_distance(centre, own) + NEARER - nearest_other)
    return faults


def label_places(own: Segment, words: str) -> list[Point]:
    """Where a label may go beside its arrow, best first: at LABEL_PLACES along it, to its
    right (away from an arrow the other way, which is drawn to its left) just clear of the line,
    then further out, then the same to its left; then the same at MORE_PLACES."""
    (x0, y0), (x1, y1) = own
    length = math.hypot(x1 - x0, y1 - y0) or 1.0
    rx, ry = -(y1 - y0) / length, (x1 - x0) / length  # right of the direction of travel
    width, height = tag_size(words)
    clear = abs(rx) * width / 2 + abs(ry) * height / 2 + LINE_ROOM
    return [
        (x0 + (x1 - x0) * at + side * rx * (clear + step),
         y0 + (y1 - y0) * at + side * ry * (clear + step))
        for places in (LABEL_PLACES, MORE_PLACES)
        for side in (1, -1)
        for step in LABEL_STEPS
        for at in places
    ]  # fmt: skip


def label_place(own: Segment, others: Sequence[Segment], words: str, taken: list[Box]) -> Point:
    """Where the label of the arrow `own` goes: the first of its places where it sits well (see
    label_faults), or the place where it sits least badly."""
    places = label_places(own, words)
    return min(places, key=lambda place: label_faults(place, words, own, others, taken))


def self_place(centre: Point, words: str) -> Point:
    """Where a node's self weight goes: just outside the node, away from the circle's centre."""
    x, y = centre
    distance = math.hypot(x, y)
    out_x, out_y = (x / distance, y / distance) if distance else (0.0, -1.0)
    half_width, half_height = (size / 2 for size in tag_size(words))
    reach = NODE_RADIUS + 0.1 + abs(out_x) * half_width + abs(out_y) * half_height
    return x + out_x * reach, y + out_y * reach


def node_shape(node: int, centre: Point, fill: str) -> Diagram:
    """Node `node` as a circle with its number, named "node/<node>"."""
    return (
        (disc(NODE_RADIUS, fill) + label(str(node), 0.34)).named(f"node/{node}").translate(*centre)
    )


def weight_tags(
    alpha: Matrix, pairs: Sequence[tuple[int, int]], centres: dict[int, Point],
    colours: dict[int, str],
) -> list[Diagram]:  # fmt: skip
    """The weight of each drawn pair (i, j), named "weight/i,j", beside its own arrow and
    nearer it than any other, and each node's weight on itself, named "self/i", outside the
    node; no label covers another, a node or a line."""
    tags, taken = [], []
    for node, centre in centres.items():
        x, y = centre
        taken.append((x - NODE_RADIUS, y - NODE_RADIUS, x + NODE_RADIUS, y + NODE_RADIUS))
        words = f"self {weight_text(alpha[node][node])}"
        place = self_place(centre, words)
        taken.append(tag_box(place, words))
        tags.append(tag(words, darker(colours[node])).named(f"self/{node}").translate(*place))
    segments = {(i, j): edge_ends(centres[j], centres[i])[:2] for i, j in pairs}
    others = {pair: [s for other, s in segments.items() if other != pair] for pair in pairs}
    words_of = {(i, j): weight_text(alpha[i][j]) for i, j in pairs}

    def room(pair: tuple[int, int]) -> int:
        """How many places suit the label of `pair` among the nodes and self weights alone."""
        places = label_places(segments[pair], words_of[pair])
        return sum(label_faults(p, words_of[pair], segments[pair], others[pair], taken) == 0
                   for p in places)  # fmt: skip

    for i, j in sorted(pairs, key=room):  # the label with the least room chooses first
        words = words_of[i, j]
        place = label_place(segments[i, j], others[i, j], words, taken)
        taken.append(tag_box(place, words))
        colour = darker(colours[i]) if math.isfinite(alpha[i][j]) else MISPLACED
        tags.append(tag(words, colour).named(f"weight/{i},{j}").translate(*place))
    return tags


def graph_diagram(
    adjacency: Any, node_mask: Any = None, weights: Any = None, name: str = "graph"
) -> Picture:
    """One graph: its real nodes, an arrow j -> i for each edge where i receives from j (self
    loops aside), and, when `weights` [N, N] are given, each edge's weight as its width and
    label and each node's weight on itself.

    `adjacency` is [N, N], `node_mask` [N] (None: every node is real); each may be nested
    lists, a NumPy array or a tensor. Padding nodes are left out and named in the caption. A
    nonzero weight where there is no edge is drawn in red (listed in red for padding nodes).
    """
    edges = as_rows(adjacency, "adjacency")
    real_mask = as_mask(node_mask, len(edges))
    alpha = None if weights is None else as_rows(weights, "weights")
    if alpha is not None and len(alpha) != len(edges):
        raise ValueError(
            f"weights must have the adjacency's shape [{len(edges)}, {len(edges)}], "
            f"got [{len(alpha)}, {len(alpha)}]"
        )
    real = [node for node, is_real in enumerate(real_mask) if is_real]
    centres = node_centres(real)
    colours = dict(zip(real, palette(len(real))))
    edge_pairs = [(i, j) for i in real for j in real if i != j and edges[i][j] != 0]
    stray = [] if alpha is None else stray_weights(alpha, edge_pairs, real)
    pairs = edge_pairs + [(i, j) for i, j in stray if i in centres and j in centres]
    weight_of = (lambda i, j: None) if alpha is None else (lambda i, j: alpha[i][j])
    drawn = [
        edge_arrow(i, j, centres, darker(colours[i]), weight_of(i, j), (i, j) in edge_pairs)
        for i, j in pairs
    ]
    drawn += [node_shape(node, centres[node], colours[node]) for node in real]
    drawn += [] if alpha is None else weight_tags(alpha, pairs, centres, colours)
    graph = concat(drawn) if real else label("no real nodes", 0.34, FAINT)
    header = graph_caption(name, real_mask, alpha is not None, stray)
    placed = stack([header, block_around(graph)], [0.6])
    description = f"{name}: {len(real)} real nodes, {len(edge_pairs)} edges" + (
        ", with attention weights" if alpha is not None else ""
    )
    return render(concat([block.diagram for block in placed]), description)


def stray_weights(
    alpha: Matrix, edge_pairs: Sequence[tuple[int, int]], real: Sequence[int]
) -> list[tuple[int, int]]:
    """The pairs (i, j) with a nonzero (or not finite) weight that no edge explains: not an
    edge, not a real node on itself."""
    explained = set(edge_pairs) | {(node, node) for node in real}
    return [
        (i, j)
        for i, row in enumerate(alpha)
        for j, weight in enumerate(row)
        if (i, j) not in explained and (weight != 0 or not math.isfinite(weight))
    ]


def graph_caption(
    name: str, real_mask: Sequence[bool], weighted: bool, stray: Sequence[tuple[int, int]]
) -> Block:
    """The lines above the graph: what an arrow means, what the numbers are, what is left out,
    and which weights should not be there."""
    lines = [(f"{name}: an arrow j → i means node i receives from node j", INK)]
    if weighted:
        lines.append(("width and label: the weight of j in i's softmax", FAINT))
        lines.append(("self: i's weight on itself", FAINT))
    padding = [node for node, is_real in enumerate(real_mask) if not is_real]
    if padding:
        listed = ", ".join(map(str, padding))
        words = f"padding nodes {listed} are" if len(padding) > 1 else f"padding node {listed} is"
        lines.append((f"{words} not drawn", FAINT))
    if stray:
        listed = ", ".join(f"[{i}, {j}]" for i, j in stray[:6]) + (" …" if len(stray) > 6 else "")
        lines.append((f"weights where there is no edge: {listed}", MISPLACED))
    blocks = [caption(words, colour) for words, colour in lines]
    return block_around(concat([block.diagram for block in stack(blocks, [0.15] * len(lines))]))


def block_around(diagram: Diagram) -> Block:
    """A Block spanning `diagram`'s extent, so it can be stacked with others."""
    envelope = diagram.get_envelope()
    centre_x, centre_y = envelope.center.x, envelope.center.y
    half_width, half_height = envelope.width / 2, envelope.height / 2
    return Block(diagram, {}, centre_x - half_width, centre_y - half_height,
                 centre_x + half_width, centre_y + half_height)  # fmt: skip
