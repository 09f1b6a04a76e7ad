"""The pieces figures are made of: rows of cells, captions, and arrows between rows.

A Block is a drawn piece together with the centre of each of its cells, so a figure can
stack blocks and then join cells of different blocks with arrows.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

from .layouts import CELL, GAP, Index, Point, cell_centres, index_label, rows_of, slot_centres
from .routes import HEAD_LENGTH, HEAD_WIDTH, gutter_lanes, gutter_width, outer_room, routes
from .shapes import (
    FAINT,
    INK,
    UNREACHED,
    WHITE,
    Diagram,
    box,
    concat,
    label,
    route_arrow,
    text_width,
)

ROW_GAP = 1.6  # between stacked blocks: room for arrows
CAPTION_SIZE = 0.34  # every text outside a cell: 15 px, still 11 px in a figure of about
# 1360 px that a notebook shrinks to its 1000 px
MAIN_SIZE = 0.3  # a cell's value
SMALL_SIZE = 0.22  # a cell's index or offset, above its value
SUBTLE = "#4a4a4a"  # an index or offset above a value
LINE_PITCH = 0.46  # between the lines of a caption
NARROWEST_CAPTION = 8.0  # a caption is broken into lines only beyond this width


@dataclass(frozen=True)
class Block:
    """A drawn piece, the centre of each of its named cells, and its bounding box."""

    diagram: Diagram
    centres: Mapping[Hashable, Point]
    left: float
    top: float
    right: float
    bottom: float

    def moved(self, dx: float, dy: float) -> Block:
        """The same block shifted by (dx, dy)."""
        return Block(
            self.diagram.translate(dx, dy),
            {key: (x + dx, y + dy) for key, (x, y) in self.centres.items()},
            self.left + dx,
            self.top + dy,
            self.right + dx,
            self.bottom + dy,
        )


def block_of(diagram: Diagram, centres: Mapping[Hashable, Point], extra: float = 0.0) -> Block:
    """A block whose box holds unit cells at `centres` (plus `extra` on each side)."""
    if not centres:
        return Block(diagram, {}, -0.5, -0.5, 0.5, 0.5)
    xs = [x for x, _ in centres.values()]
    ys = [y for _, y in centres.values()]
    half = CELL / 2 + extra
    return Block(diagram, centres, min(xs) - half, min(ys) - half, max(xs) + half, max(ys) + half)


def fitted_size(words: str, size: float = MAIN_SIZE) -> float:
    """A font size at which `words` fit inside a cell."""
    return min(size, 0.95 * CELL / text_width(words or " ", 1.0))


def cell(
    name: str, fill: str, title: str, value: str | None = None, dashed: bool = False
) -> Diagram:
    """One unit cell named `name`: its title (an index or an offset) and, below, its value."""
    ink = FAINT if fill == UNREACHED else INK
    outline = box(CELL, CELL, fill, line=FAINT if dashed else INK, dashed=dashed)
    if value is None:
        words = label(title, fitted_size(title), ink)
    else:
        words = label(title, fitted_size(title, SMALL_SIZE), SUBTLE).translate(0, -0.27)
        words = words + label(value, fitted_size(value), ink).translate(0, 0.1)
    return (outline + words).named(name)


def tensor_block(
    role: str,
    shape: Sequence[int],
    colours: Mapping[Index, str],
    values: Mapping[Index, str] | None = None,
    arrows: str | None = None,
) -> Block:
    """A tensor's cells as a grid (of grids), each labelled with its index.

    With `arrows` "out" or "in", the columns stand apart, and the block reaches beyond its
    outermost columns, far enough for the arrows that leave (or enter) its cells through the
    gutters between them (see routes)."""
    gap, room = arrow_room(shape, arrows)
    centres = cell_centres(shape, gap)
    cells = [
        cell(
            f"{role}/{index_label(index)}",
            colours[index],
            index_label(index),
            None if values is None else values[index],
        ).translate(x, y)
        for index, (x, y) in centres.items()
    ]
    if not cells:
        empty = label(f"no elements: shape {tuple(shape)}", CAPTION_SIZE, FAINT)
        return block_of(empty, {}, extra=1.5)
    return widened(block_of(concat(cells), centres), room)


def arrow_room(shape: Sequence[int], arrows: str | None) -> tuple[float, float]:
    """The gap between the columns of a block of `shape`, and the room it keeps beyond its
    outermost columns, for the arrows that leave ("out") or enter ("in") its cells through
    gutters (None: no arrows, no room)."""
    lanes = 0 if arrows is None else gutter_lanes(rows_of(shape))
    entering = arrows == "in"
    return max(GAP, gutter_width(lanes, entering)), outer_room(lanes, entering)


def widened(block: Block, room: float) -> Block:
    """`block` reaching `room` further left and right."""
    return Block(block.diagram, block.centres, block.left - room, block.top, block.right + room,
                 block.bottom)  # fmt: skip


def storage_block(
    role: str,
    slots: Sequence[int | None],
    colours: Mapping[int, str],
    values: Sequence[object] | None = None,
) -> Block:
    """Storage cells in offset order, labelled with their offsets; None slots are gaps."""
    centres: dict[Hashable, Point] = {}
    cells = []
    for slot, (x, y) in zip(slots, slot_centres(len(slots))):
        if slot is None:
            cells.append(label("…", CAPTION_SIZE, FAINT).translate(x, y))
            continue
        value = None if values is None else values[slot]
        fill = colours.get(slot, UNREACHED)
        cells.append(cell(f"{role}/{slot}", fill, str(slot), value).translate(x, y))
        centres[slot] = (x, y)
    return block_of(concat(cells), centres)


def caption(words: str, colour: str = INK, width: float | None = None) -> Block:
    """A line of text; with `width`, as many lines as it takes to stay within `width` (see
    wrapped)."""
    lines = [words] if width is None else wrapped(words, width)
    pieces = [label(line, CAPTION_SIZE, colour).translate(0, k * LINE_PITCH)
              for k, line in enumerate(lines)]  # fmt: skip
    half = max(text_width(line, CAPTION_SIZE) for line in lines) / 2
    return Block(concat(pieces), {}, -half, -0.25, half, (len(lines) - 1) * LINE_PITCH + 0.25)


def wrapped(words: str, width: float) -> list[str]:
    """`words` broken into lines no wider than `width` (at CAPTION_SIZE), after a ": ", ", "
    or "; " that stands outside brackets, so that "shape (2, 3)" is never torn apart; a piece
    wider than `width` keeps a line of its own."""
    pieces, depth, start = [], 0, 0
    for k, character in enumerate(words):
        depth += (character in "([") - (character in ")]")
        if character in ":,;" and depth == 0 and words[k + 1 : k + 2] == " ":
            pieces.append(words[start : k + 1])
            start = k + 2
    pieces.append(words[start:])
    lines: list[str] = []
    for piece in pieces:
        joined = f"{lines[-1]} {piece}" if lines else piece
        if lines and text_width(joined, CAPTION_SIZE) <= width:
            lines[-1] = joined
        else:
            lines.append(piece)
    return lines


def caption_width(*blocks: Block) -> float:
    """How wide the captions of a figure may be: as wide as its widest block of cells, and
    never narrower than NARROWEST_CAPTION."""
    return max(NARROWEST_CAPTION, *(block.right - block.left for block in blocks))


def titled(block: Block, words: str, colour: str = FAINT, above: bool = False) -> Block:
    """`block` with `words` written to its left, or above its left end (which keeps a figure
    narrow)."""
    width = text_width(words, CAPTION_SIZE)
    if above:
        words_shape = label(words, CAPTION_SIZE, colour, "left").translate(
            block.left, block.top - CAPTION_SIZE
        )
        return Block(block.diagram + words_shape, block.centres, block.left,
                     block.top - 1.5 * CAPTION_SIZE, max(block.right, block.left + width),
                     block.bottom)  # fmt: skip
    y = (block.top + block.bottom) / 2
    words_shape = label(words, CAPTION_SIZE, colour, "left").translate(block.left - width - 0.5, y)
    return Block(block.diagram + words_shape, block.centres, block.left - width - 0.5,
                 block.top, block.right, block.bottom)  # fmt: skip


def stack(blocks: Sequence[Block], gaps: Sequence[float] | None = None) -> list[Block]:
    """The blocks placed top to bottom, centred on x = 0, `gaps` apart (default ROW_GAP)."""
    gaps = [ROW_GAP] * len(blocks) if gaps is None else list(gaps)
    placed = []
    y = 0.0
    for block, gap in zip(blocks, [0.0, *gaps]):
        y += gap
        dx = -(block.left + block.right) / 2
        placed.append(block.moved(dx, y - block.top))
        y = placed[-1].bottom
    return placed


def links(
    role: str,
    source: Block,
    target: Block,
    pairs: Sequence[tuple[Hashable, Hashable]],
    colour_of: Mapping[Hashable, str] | None = None,
) -> Diagram:
    """Arrows named "<role>/<source key>" from cells of `source` to cells of `target`.

    An arrow leaves its cell by the side facing `target` and enters its target cell by the side
    facing `source`, through the gutters between columns where a cell stands in the way (see
    routes): it runs through no other cell and covers no label.
    """
    drawn = []
    for (start_key, _), points in zip(pairs, routes(source.centres, target.centres, pairs)):
        colour = INK if colour_of is None else darker(colour_of[start_key])
        name = f"{role}/{key_label(start_key)}"
        drawn.append(route_arrow(points, colour, HEAD_LENGTH, HEAD_WIDTH).named(name))
    return concat(drawn)


def key_label(key: Hashable) -> str:
    """How a cell's key appears in a name: an index as "1,2", an offset as "5"."""
    return index_label(key) if isinstance(key, tuple) else str(key)


def darker(colour: str) -> str:
    """A darker shade of a "#rrggbb" colour, for arrows that must stand out from cells."""
    if colour in (WHITE, UNREACHED):
        return FAINT
    red, green, blue = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
    return "#{:02x}{:02x}{:02x}".format(*(round(c * 0.55) for c in (red, green, blue)))


def picture_of(blocks: Sequence[Block], arrows: Sequence[Diagram] = ()) -> Diagram:
    """All blocks and arrows as one diagram, arrows drawn on top."""
    return concat([block.diagram for block in blocks] + list(arrows))
