"""The arithmetic behind every diagram: where each cell goes, which offset it reads, its colour.

Nothing here draws. Positions come from the shape (the last dim runs left to right, the one
before it top to bottom, and further dims repeat that pattern with wider gaps: grids of
grids), offsets from the layout formula, colours from the offsets. The figures only place
shapes where this module says.
"""

from __future__ import annotations

import colorsys
import itertools
from collections.abc import Sequence
from typing import Any

Index = tuple[int, ...]
Point = tuple[float, float]

CELL = 1.0  # a cell is a unit square
GAP = 0.15  # between neighbouring cells
GROUP_GAP = 0.55  # added between grids, per level of nesting
MAX_CELLS = 64  # more cells than this make an unreadable picture
MAX_STORAGE = 64  # longer storage is drawn around the offsets a layout reaches
STORAGE_PER_LINE = 32  # a longer storage row wraps onto further lines
STORAGE_LINE_GAP = 0.6


class DiagramTooLarge(ValueError):
    """A diagram would have too many cells to read."""


def indices(shape: Sequence[int]) -> list[Index]:
    """Every index of `shape`, in row-major order."""
    return list(itertools.product(*(range(size) for size in shape)))


def offset_of(index: Index, strides: Sequence[int], offset: int) -> int:
    """The storage offset the element at `index` reads: offset + sum of index * stride."""
    return offset + sum(i * stride for i, stride in zip(index, strides))


def require_readable(count: int, limit: int, what: str, hint: str) -> None:
    """Refuse a diagram of more than `limit` cells, saying how to draw a smaller one."""
    if count > limit:
        raise DiagramTooLarge(
            f"{what} has {count} cells; a diagram stays readable up to {limit}. {hint}"
        )


def dim_pitches(shape: Sequence[int], column_gap: float = GAP) -> list[Point]:
    """For each dim, how far apart (x, y) the cells of consecutive indices along it sit;
    neighbouring columns are `column_gap` apart (wider to leave room for arrows between them)."""
    width = height = CELL
    pitches: list[Point] = []
    for level, size in enumerate(reversed(shape)):
        gap = (column_gap if level % 2 == 0 else GAP) + GROUP_GAP * (level // 2)
        if level % 2 == 0:
            pitches.append((width + gap, 0.0))
            width = max(size, 1) * (width + gap) - gap
        else:
            pitches.append((0.0, height + gap))
            height = max(size, 1) * (height + gap) - gap
    return pitches[::-1]


def cell_centres(shape: Sequence[int], column_gap: float = GAP) -> dict[Index, Point]:
    """The centre of each index's cell, columns `column_gap` apart; the cell of index
    (0, ..., 0) is at the origin."""
    pitches = dim_pitches(shape, column_gap)
    return {
        index: (
            sum(i * dx for i, (dx, _) in zip(index, pitches)),
            sum(i * dy for i, (_, dy) in zip(index, pitches)),
        )
        for index in indices(shape)
    }


def storage_slots(reached: set[int], size: int) -> list[int | None]:
    """The storage offsets to draw, in order; None stands for a run of offsets left out.

    Short storage is drawn whole. In long storage only the reached offsets and their
    neighbours are drawn, and each run of other offsets becomes one gap.
    """
    if size <= MAX_STORAGE:
        return list(range(size))
    shown = {o for r in reached for o in (r - 1, r, r + 1) if 0 <= o < size}
    slots: list[int | None] = []
    for o in range(size):
        if o in shown:
            slots.append(o)
        elif slots and slots[-1] is None:
            continue
        else:
            slots.append(None)
    return slots


def rows_of(shape: Sequence[int]) -> int:
    """How many rows of cells a tensor of `shape` is drawn in (dims alternate between running
    left to right and top to bottom, starting from the last)."""
    rows = 1
    for level, size in enumerate(reversed(shape)):
        if level % 2 == 1:
            rows *= max(size, 1)
    return rows


def slot_centres(count: int) -> list[Point]:
    """The centre of each storage slot: a row that wraps after STORAGE_PER_LINE slots."""
    return [
        (
            (slot % STORAGE_PER_LINE) * (CELL + GAP),
            (slot // STORAGE_PER_LINE) * (CELL + STORAGE_LINE_GAP),
        )
        for slot in range(count)
    ]


def palette(count: int) -> list[str]:
    """`count` light colours running through the hues, far enough apart to tell neighbours."""
    return [
        "#{:02x}{:02x}{:02x}".format(
            *(round(255 * c) for c in colorsys.hls_to_rgb(0.85 * k / max(count, 1), 0.78, 0.75))
        )
        for k in range(count)
    ]


def offset_colours(offsets: set[int]) -> dict[int, str]:
    """A colour for each offset, in offset order, so a contiguous read looks like a rainbow."""
    ordered = sorted(offsets)
    return dict(zip(ordered, palette(len(ordered))))


def index_label(index: Index) -> str:
    """How an index is written on its cell: "1,2", or "()" for the one cell of a 0-d tensor."""
    return ",".join(map(str, index)) if index else "()"


def format_value(value: Any) -> str:
    """An element's value, short enough for a cell."""
    if isinstance(value, bool):
        return "T" if value else "F"
    if isinstance(value, float):
        return f"{value:.3g}"
    return str(value)


def stride_steps(shape: Sequence[int]) -> list[Index]:
    """Index (0, ..., 0) and one step along each dim: the arrows that show the strides."""
    origin = (0,) * len(shape)
    steps = [origin]
    for dim, size in enumerate(shape):
        if size > 1:
            steps.append(tuple(1 if d == dim else 0 for d in range(len(shape))))
    return steps if 0 not in shape else []


def chosen_arrows(shape: Sequence[int], arrows: str | Sequence[Index] | None) -> list[Index]:
    """The indices that get an arrow: "all", "none", "strides", a list, or None for a default
    (all of a small tensor, the stride steps of a bigger one)."""
    every = indices(shape)
    if arrows is None:
        arrows = "all" if len(every) <= 16 else "strides"
    if arrows == "all":
        return every
    if arrows == "none":
        return []
    if arrows == "strides":
        return stride_steps(shape)
    if isinstance(arrows, str):
        raise ValueError(
            f"arrows must be 'all', 'none', 'strides' or a list of indices, got {arrows!r}"
        )
    chosen = [tuple(index) for index in arrows]
    known = set(every)
    unknown = [index for index in chosen if index not in known]
    if unknown:
        raise ValueError(f"arrows name indices {unknown} that are not in shape {tuple(shape)}")
    return chosen
