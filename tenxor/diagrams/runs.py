"""The runs diagram: which dims of a layout step through storage together.

Neighbouring dims d and d + 1 read like one longer dim, a run, when one step along d lands
exactly where a full pass along d + 1 would continue: strides[d] == shape[d + 1] *
strides[d + 1]. A run has the product of its dims' sizes as its size and the stride of its
innermost dim as its stride. Dims of size 1 never move and belong to no run; a layout with no
elements has the one run (0, 1). The diagram draws the dims with a band over each run, the
tensor over its storage, and under the storage the offsets each run walks through.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .figures import (
    Arrows,
    drawable,
    storage_texts,
    tensor_cells,
)
from .layouts import (
    MAX_CELLS,
    STORAGE_PER_LINE,
    chosen_arrows,
    offset_colours,
    storage_slots,
)
from .parts import (
    CAPTION_SIZE,
    Block,
    caption,
    caption_width,
    darker,
    links,
    picture_of,
    stack,
    storage_block,
)
from .render import Picture, render
from .shapes import FAINT, INK, WHITE, Diagram, box, concat, disc, label, text_width

DIM_WIDTH = 4.0  # of one dim's box
DIM_HEIGHT = 1.0
DIM_PITCH = DIM_WIDTH + 0.3
BAND_HEIGHT = 1.0
BAND_RISE = 1.25  # from a dim's centre up to the centre of the band of its run
TAG_DROP = 1.05  # from a dim's centre down to its "no run" tag
WALK_WORDS = 0.75  # from the bottom of the storage row down to a run's words, and from the
WALK_DOTS = 0.5  # words down to its dots
WALK_PITCH = 1.25  # from one run's walk to the next
RUN_FILLS = ("#8fb8de", "#f2a65a", "#8cc98c", "#c39bd3", "#e98a8a", "#d6c25a")


@dataclass(frozen=True)
class Run:
    """Neighbouring dims that step through storage as one: their total size, the stride of
    the innermost one, and which dims they are."""

    size: int
    stride: int
    dims: tuple[int, ...]

    def words(self) -> str:
        """The run written out: "size 6, stride 4"."""
        return f"size {self.size}, stride {self.stride}"


def find_runs(shape: Sequence[int], strides: Sequence[int]) -> list[Run]:
    """The runs of a layout, outermost first (the module docstring says what a run is)."""
    moving = [dim for dim, size in enumerate(shape) if size != 1]
    if 0 in shape:
        return [Run(0, 1, tuple(moving))]
    runs: list[Run] = []
    for dim in moving:
        size, stride = shape[dim], strides[dim]
        if runs and runs[-1].stride == size * stride:
            last = runs[-1]
            runs[-1] = Run(last.size * size, stride, last.dims + (dim,))
        else:
            runs.append(Run(size, stride, (dim,)))
    return runs


def run_fill(k: int) -> str:
    """The colour of run k's band and walk."""
    return RUN_FILLS[k % len(RUN_FILLS)]


def two_lines(name: str, width: float, fill: str, first: str, second: str,
              dashed: bool = False) -> Diagram:  # fmt: skip
    """A box named `name` holding two lines of text, centred on the origin."""
    ink = FAINT if dashed else INK
    outline = box(width, DIM_HEIGHT, fill, line=FAINT if dashed else INK, dashed=dashed)
    longest = max(first, second, key=len)
    size = min(CAPTION_SIZE, 0.92 * width / text_width(longest, 1.0))
    words = label(first, size, ink).translate(0, -0.2) + label(second, size, ink).translate(0, 0.22)
    return (outline + words).named(name)


def dims_block(shape: Sequence[int], strides: Sequence[int], runs: Sequence[Run]) -> Block:
    """One box per dim (size and stride), a band over the dims of each run, and a "no run" tag
    under each dim of size 1."""
    pieces, centres = [], {}
    for dim, (size, stride) in enumerate(zip(shape, strides)):
        centres[dim] = (dim * DIM_PITCH, 0.0)
        in_no_run = size == 1
        fill = WHITE if in_no_run else "#f4f4f4"
        pieces.append(two_lines(f"dim/{dim}", DIM_WIDTH, fill, f"dim {dim}",
                                f"size {size}, stride {stride}", dashed=in_no_run)
                      .translate(*centres[dim]))  # fmt: skip
        if in_no_run:
            tag = box(DIM_WIDTH * 0.5, 0.55, WHITE, line=FAINT, dashed=True)
            tag = (tag + label("no run", CAPTION_SIZE, FAINT)).named(f"norun/{dim}")
            pieces.append(tag.translate(dim * DIM_PITCH, TAG_DROP))
    for k, run in enumerate(runs):
        if not run.dims:
            continue
        first, last = run.dims[0] * DIM_PITCH, run.dims[-1] * DIM_PITCH
        width = last - first + DIM_WIDTH
        band = two_lines(f"run/{k}", width, run_fill(k), f"run {k}:", run.words())
        pieces.append(band.translate((first + last) / 2, -BAND_RISE))
    right = max(len(shape) - 1, 0) * DIM_PITCH + DIM_WIDTH / 2
    top = -BAND_RISE - BAND_HEIGHT / 2
    bottom = TAG_DROP + 0.3 if 1 in shape else DIM_HEIGHT / 2
    return Block(concat(pieces), centres, -DIM_WIDTH / 2, top, right, bottom)


def walked_offsets(run: Run, offset: int) -> list[int]:
    """The offsets a run reads while every other run stays at index 0, in order."""
    return [offset + i * run.stride for i in range(run.size)]


def walk_words(k: int, run: Run, offset: int) -> str:
    """What a run's walk through storage says in words."""
    if run.size == 0:
        return f"run {k}: no elements, no offset is read"
    if run.stride == 0:
        return f"run {k}: offset {offset}, read {run.size} times"
    end = offset + (run.size - 1) * run.stride
    return f"run {k}: offsets {offset} to {end}, step {run.stride}"


def with_walks(storage: Block, runs: Sequence[Run], offset: int, drawn: bool) -> Block:
    """The storage row with, under it, each run's walk: its words, and under them a dot under
    each storage cell the run walks through (joined by a bar). With `drawn` False only the
    words."""
    pieces: list[Diagram] = [storage.diagram]
    right = storage.right
    for k, run in enumerate(runs):
        top = storage.bottom + WALK_PITCH * k + WALK_WORDS
        words = walk_words(k, run, offset)
        pieces.append(label(words, CAPTION_SIZE, INK, "left").translate(storage.left, top))
        right = max(right, storage.left + text_width(words, CAPTION_SIZE))
        y = top + WALK_DOTS
        steps = sorted(set(walked_offsets(run, offset))) if drawn and run.size else []
        xs = [storage.centres[o][0] for o in steps]
        colour = darker(run_fill(k))
        if xs:
            bar = box(max(xs) - min(xs) + 0.16, 0.12, colour, line=colour)
            pieces.append(bar.named(f"span/{k}").translate((min(xs) + max(xs)) / 2, y))
            pieces += [
                disc(0.13, run_fill(k), line=colour).named(f"span/{k}/{o}").translate(x, y)
                for o, x in zip(steps, xs)
            ]
    bottom = storage.bottom + WALK_PITCH * len(runs) + 0.1
    return Block(concat(pieces), storage.centres, storage.left, storage.top, right, bottom)


def runs_caption(runs: Sequence[Run]) -> str:
    """All runs in one line, "runs (size, stride): (2, 1), (6, 4)", or why there are none."""
    if not runs:
        return "no runs: one element, no step to take"
    listed = ", ".join(f"({run.size}, {run.stride})" for run in runs)
    return f"{'run' if len(runs) == 1 else 'runs'} (size, stride): {listed}"


def runs_diagram(
    shape: Sequence[int],
    strides: Sequence[int],
    offset: int = 0,
    storage_size: int | None = None,
    storage_values: Sequence[Any] | None = None,
    arrows: Arrows = None,
    name: str = "t",
    max_cells: int = MAX_CELLS,
) -> Picture:
    """A layout's dims grouped into runs, above its cells and its storage; under the storage,
    the offsets each run walks through while the other runs stay at index 0.

    The arguments are those of layout_diagram.
    """
    drawn = drawable(shape, strides, offset, storage_size, max_cells)
    shape, strides, words = drawn.shape, drawn.strides, drawn.words
    read, storage_size = drawn.read, drawn.storage_size
    runs = find_runs(shape, strides)
    colours = offset_colours(set(read.values()))
    slots = storage_slots(set(read.values()), storage_size)
    storage = storage_block("storage", slots, colours, storage_texts(storage_values))
    pairs = [(index, read[index]) for index in chosen_arrows(shape, arrows)]
    dims = dims_block(shape, strides, runs)
    cells = tensor_cells(shape, read, colours, storage_values, bool(pairs))
    walks = with_walks(storage, runs, offset, drawn=len(slots) <= STORAGE_PER_LINE)
    width = caption_width(dims, cells, walks)
    blocks = stack(
        [
            caption(f"{name}: {words}", width=width),
            dims,
            caption(runs_caption(runs), FAINT, width),
            cells,
            walks,
            caption(f"storage: {storage_size} elements, offsets 0 to {storage_size - 1}", FAINT,
                    width),
        ],
        gaps=[0.6, 0.5, 0.9, 2.2, 0.45],
    )  # fmt: skip
    _, _, _, tensor, placed_storage, _ = blocks
    shown = links("arrow/tensor", tensor, placed_storage, pairs,
                  {i: colours[read[i]] for i in read})  # fmt: skip
    description = f"the runs of {name}: {words}; {runs_caption(runs)}"
    return render(picture_of(blocks, [shown]), description)
