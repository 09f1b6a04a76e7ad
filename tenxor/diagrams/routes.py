"""Where an arrow runs from a cell of one block to a cell of another, so that it never runs
through a cell and never covers a label.

Blocks are stacked, so an arrow leaves its block by the edge that faces the other block. A
cell in the row on that edge (the facing row) sends its arrow straight from the middle of its
facing side. Any other cell has a cell in the way, so its arrow leaves by the side of the cell
into a gutter (the gap between two columns, or the space left or right of the block), runs along
the gutter past the block's edge, and only then turns towards its target. An arrow enters its
target cell the same way: into a cell of the facing row from the middle of its facing side, into
any other from a gutter, by its side.

Each arrow in a gutter has its own lane, and the lanes are ordered so that an arrow turning
into or out of a gutter crosses no lane of the same gutter: the nearer a cell is to the block's
edge, the nearer its lane is to its column. Arrows into one target cell share its lane.
Nothing here draws; it only computes points.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

from .layouts import CELL, Point

LANE_PITCH = 0.14  # between neighbouring lanes of one gutter
HEAD_ROOM = 0.24  # from a cell's side to the nearest lane of an arrow that enters it sideways
CLEARANCE = 0.25  # how far past its block's edge an arrow runs along its gutter before turning
HEAD_LENGTH = 0.2  # of an arrow's head, which must fit between a lane and the cell it enters
HEAD_WIDTH = 0.22


@dataclass(frozen=True)
class Lattice:
    """The columns and rows a block's cells sit in: the distinct x and y of their centres."""

    xs: tuple[float, ...]
    ys: tuple[float, ...]

    def column(self, x: float) -> int:
        """Which column a cell centred at `x` is in."""
        return min(range(len(self.xs)), key=lambda k: abs(self.xs[k] - x))

    def row(self, y: float) -> int:
        """Which row a cell centred at `y` is in."""
        return min(range(len(self.ys)), key=lambda k: abs(self.ys[k] - y))


def lattice_of(centres: Mapping[Hashable, Point]) -> Lattice:
    """The lattice of the cells centred at `centres`."""
    xs = sorted({round(x, 6) for x, _ in centres.values()})
    ys = sorted({round(y, 6) for _, y in centres.values()})
    return Lattice(tuple(xs), tuple(ys))


def gutter_lanes(rows: int) -> int:
    """How many lanes a gutter of a block with `rows` rows may need: one for each cell of a
    column but the one in the facing row."""
    return max(rows - 1, 0)


def gutter_width(lanes: int, entering: bool) -> float:
    """How wide the gap between two columns must be for `lanes` lanes (0: no gutter is needed);
    a gutter arrows enter cells from keeps room for their heads on both sides."""
    if lanes == 0:
        return 0.0
    room = HEAD_ROOM if entering else LANE_PITCH
    return 2 * room + (lanes - 1) * LANE_PITCH


def outer_room(lanes: int, entering: bool) -> float:
    """How far the lanes left and right of a block reach beyond its outermost cells."""
    if lanes == 0:
        return 0.0
    room = HEAD_ROOM if entering else LANE_PITCH
    return room + (lanes - 1) * LANE_PITCH + 0.1


@dataclass(frozen=True)
class Passage:
    """How an arrow passes through its block at one end: the cell's centre, whether the cell is
    in the facing row, and otherwise the side (-1 left, +1 right) of the gutter it takes, which
    gutter (0 is left of the first column), how many rows the cell is from the facing row, and
    what it shares its lane with (an arrow into one cell shares the lane of every other)."""

    centre: Point
    facing: bool
    side: int = 0
    gutter: int = 0
    depth: int = 0
    lane_key: Hashable = None


def passage(centre: Point, lattice: Lattice, facing_row: int, toward_x: float,
            lane_key: Hashable) -> Passage:  # fmt: skip
    """How an arrow passes out of (or into) the cell centred at `centre`: straight through the
    facing side in the facing row, else through the gutter on the side of its half of the block
    (the middle column takes the side towards `toward_x`, where the arrow's other end is)."""
    x, y = centre
    row = lattice.row(y)
    if row == facing_row:
        return Passage(centre, True)
    column, middle = lattice.column(x), (len(lattice.xs) - 1) / 2
    towards = toward_x - x if column == middle else column - middle  # the middle column
    side = -1 if towards < 0 else 1  # goes the way of the arrow's other end
    gutter = column if side < 0 else column + 1
    return Passage(centre, False, side, gutter, abs(row - facing_row), lane_key)


def lane_order(passages: Sequence[Passage]) -> list[Hashable]:
    """The lane keys of one gutter from left to right: first the arrows of the column on its
    left (its cells nearest the facing row first), then those of the column on its right (its
    cells nearest the facing row last), so that no arrow turning into its lane crosses another
    lane of the gutter."""
    left = sorted({(p.depth, str(p.lane_key), p.lane_key) for p in passages if p.side > 0},
                  key=lambda item: item[:2])  # fmt: skip
    right = sorted({(-p.depth, str(p.lane_key), p.lane_key) for p in passages if p.side < 0},
                   key=lambda item: item[:2])  # fmt: skip
    return list(dict.fromkeys(key for *_, key in left + right))


def lane_xs(gutter: int, count: int, lattice: Lattice, entering: bool) -> list[float]:
    """The x of each of `count` lanes in `gutter`, left to right: centred between two columns,
    or starting next to the outermost column for the gutters outside the block."""
    room = HEAD_ROOM if entering else LANE_PITCH
    if gutter == 0:
        nearest = lattice.xs[0] - CELL / 2 - room
        return [nearest - (count - 1 - k) * LANE_PITCH for k in range(count)]
    if gutter == len(lattice.xs):
        nearest = lattice.xs[-1] + CELL / 2 + room
        return [nearest + k * LANE_PITCH for k in range(count)]
    left, right = lattice.xs[gutter - 1] + CELL / 2, lattice.xs[gutter] - CELL / 2
    middle, space = (left + right) / 2, right - left
    if count == 1:
        return [middle]
    pitch = min(LANE_PITCH, max(space - 2 * room, 0.0) / (count - 1))
    if pitch <= 0:
        pitch = space / (count + 1)
    return [middle + (k - (count - 1) / 2) * pitch for k in range(count)]


def lanes_of(passages: Sequence[Passage], lattice: Lattice, entering: bool) -> dict:
    """The x of the lane of every passage that takes a gutter, by (gutter, lane key)."""
    by_gutter: dict[int, list[Passage]] = {}
    for p in passages:
        if not p.facing:
            by_gutter.setdefault(p.gutter, []).append(p)
    xs = {}
    for gutter, members in by_gutter.items():
        order = lane_order(members)
        for key, x in zip(order, lane_xs(gutter, len(order), lattice, entering)):
            xs[gutter, key] = x
    return xs


def way_out(p: Passage, lane_x: float | None, down: int, edge_y: float) -> list[Point]:
    """The points of an arrow from its cell to just past its block's edge at `edge_y` (`down`
    is +1 when the other block lies below, -1 when it lies above)."""
    x, y = p.centre
    if p.facing:
        return [(x, y + down * CELL / 2)]
    assert lane_x is not None
    return [(x + p.side * CELL / 2, y), (lane_x, y), (lane_x, edge_y + down * CLEARANCE)]


def way_in(p: Passage, lane_x: float | None, down: int, edge_y: float) -> list[Point]:
    """The points of an arrow from just before its target block's edge at `edge_y` into its
    target cell."""
    x, y = p.centre
    if p.facing:
        return [(x, y - down * CELL / 2)]
    assert lane_x is not None
    return [(lane_x, edge_y - down * CLEARANCE), (lane_x, y), (x + p.side * CELL / 2, y)]


def routes(
    sources: Mapping[Hashable, Point],
    targets: Mapping[Hashable, Point],
    pairs: Sequence[tuple[Hashable, Hashable]],
) -> list[list[Point]]:
    """The points each arrow of `pairs` (source key, target key) passes through, from the edge
    of its source cell to the edge of its target cell; `sources` and `targets` are the centres
    of the cells of two blocks, one stacked above the other."""
    if not pairs:
        return []
    out_lattice, in_lattice = lattice_of(sources), lattice_of(targets)
    down = 1 if in_lattice.ys[0] > out_lattice.ys[-1] else -1
    out_row = len(out_lattice.ys) - 1 if down > 0 else 0
    in_row = 0 if down > 0 else len(in_lattice.ys) - 1
    out_edge = out_lattice.ys[out_row] + down * CELL / 2
    in_edge = in_lattice.ys[in_row] - down * CELL / 2
    exits = [passage(sources[s], out_lattice, out_row, targets[t][0], (s, t)) for s, t in pairs]
    entries = [passage(targets[t], in_lattice, in_row, sources[s][0], t) for s, t in pairs]
    out_lanes = lanes_of(exits, out_lattice, entering=False)
    in_lanes = lanes_of(entries, in_lattice, entering=True)
    drawn = []
    for leaving, arriving in zip(exits, entries):
        start = way_out(leaving, out_lanes.get((leaving.gutter, leaving.lane_key)), down, out_edge)
        end = way_in(arriving, in_lanes.get((arriving.gutter, arriving.lane_key)), down, in_edge)
        drawn.append(start + end)
    return drawn
