"""The stride diagrams: a layout over its storage, views, a gather, a reduction.

Each function returns a Picture. Which storage cell a tensor cell points at is always
computed from the layout (offset + index . strides), never placed by hand.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tenxor.core import Tenxor
from tenxor.row_major import row_major_strides
from tenxor.strides import Layout

from .layouts import (
    MAX_CELLS,
    Index,
    chosen_arrows,
    format_value,
    indices,
    offset_colours,
    offset_of,
    palette,
    require_readable,
    storage_slots,
)
from .parts import (
    Block,
    caption,
    caption_width,
    links,
    picture_of,
    stack,
    storage_block,
    tensor_block,
    titled,
)
from .render import Picture, render
from .shapes import FAINT, UNREACHED

Arrows = str | Sequence[Index] | None
SLICE_HINT = "Draw a slice of it, such as t[:2, :4], or pass a larger max_cells."


def layout_words(shape: Sequence[int], strides: Sequence[int], offset: int) -> str:
    """A layout written out: "shape (3, 4), strides (4, 1), offset 0"."""
    return f"shape {tuple(shape)}, strides {tuple(strides)}, offset {offset}"


def reads(shape: Sequence[int], strides: Sequence[int], offset: int) -> dict[Index, int]:
    """The storage offset each index of a layout reads."""
    return {index: offset_of(index, strides, offset) for index in indices(shape)}


def check_layout(reached: dict[Index, int], storage_size: int, words: str) -> None:
    """Refuse a layout that reads outside its storage."""
    outside = sorted({o for o in reached.values() if not 0 <= o < storage_size})
    if outside:
        raise ValueError(
            f"a tensor with {words} reads offsets {outside[:5]} outside its storage of "
            f"{storage_size} elements"
        )


def cell_values(
    read: dict[Index, int], storage_values: Sequence[Any] | None
) -> dict[Index, str] | None:
    """Each cell's value as text, read from storage, or None when values are not drawn."""
    if storage_values is None:
        return None
    return {index: format_value(storage_values[o]) for index, o in read.items()}


def tensor_cells(
    shape: Sequence[int],
    read: dict[Index, int],
    colours: dict[int, str],
    storage_values: Sequence[Any] | None,
    arrows_out: bool,
) -> Block:
    """The tensor's grid: each cell in the colour of the offset it reads, with its value
    when values are drawn, and room for arrows to leave it when `arrows_out`."""
    return tensor_block(
        "tensor",
        shape,
        {i: colours[o] for i, o in read.items()},
        cell_values(read, storage_values),
        "out" if arrows_out else None,
    )


@dataclass(frozen=True)
class Drawable:
    """A layout checked for drawing: its shape and strides, its words, the offset each index
    reads and the size of the storage drawn under it."""

    shape: tuple[int, ...]
    strides: tuple[int, ...]
    words: str
    read: dict[Index, int]
    storage_size: int


def drawable(
    shape: Sequence[int],
    strides: Sequence[int],
    offset: int,
    storage_size: int | None,
    max_cells: int,
) -> Drawable:
    """A layout ready to draw (storage just big enough unless `storage_size` is given), or the
    error that says why it cannot be drawn: shape and strides that disagree, too many cells,
    offsets outside the storage."""
    layout = Layout(tuple(shape), tuple(strides), offset)  # checks that shape and strides agree
    words = layout_words(layout.shape, layout.strides, offset)
    cells = len(indices(layout.shape))
    require_readable(cells, max_cells, f"a tensor of shape {layout.shape}", SLICE_HINT)
    read = reads(layout.shape, layout.strides, offset)
    if storage_size is None:
        storage_size = max(read.values(), default=offset) + 1
    check_layout(read, storage_size, words)
    return Drawable(layout.shape, layout.strides, words, read, storage_size)


def storage_texts(storage_values: Sequence[Any] | None) -> list[str] | None:
    """Each storage element's value as text."""
    return None if storage_values is None else [format_value(v) for v in storage_values]


def layout_diagram(
    shape: Sequence[int],
    strides: Sequence[int],
    offset: int = 0,
    storage_size: int | None = None,
    storage_values: Sequence[Any] | None = None,
    arrows: Arrows = None,
    name: str = "t",
    max_cells: int = MAX_CELLS,
) -> Picture:
    """A tensor's cells above its storage row, coloured and joined by arrows by offset.

    `storage_size` defaults to just enough storage for the layout; `arrows` is "all",
    "none", "strides" (index 0 and one step along each dim), a list of indices, or None
    for all arrows of a small tensor and the stride steps of a bigger one.
    """
    drawn = drawable(shape, strides, offset, storage_size, max_cells)
    shape, words, read, storage_size = drawn.shape, drawn.words, drawn.read, drawn.storage_size
    reached = set(read.values())
    colours = offset_colours(reached)
    pairs = [(index, read[index]) for index in chosen_arrows(shape, arrows)]
    cells = tensor_cells(shape, read, colours, storage_values, bool(pairs))
    offsets = storage_block("storage", storage_slots(reached, storage_size), colours,
                            storage_texts(storage_values))  # fmt: skip
    width = caption_width(cells, offsets)
    top, tensor, storage, bottom = stack(
        [
            caption(f"{name}: {words}", width=width),
            cells,
            offsets,
            caption(f"storage: {storage_size} elements, offsets 0 to {storage_size - 1}", FAINT,
                    width),
        ],
        gaps=[0.5, 2.2, 0.45],
    )  # fmt: skip
    shown = links("arrow/tensor", tensor, storage, pairs, {i: colours[read[i]] for i in read})
    description = f"{name}: {words}, over a storage of {storage_size} elements"
    return render(picture_of([top, tensor, storage, bottom], [shown]), description)


def tensor_diagram(
    t: Tenxor, arrows: Arrows = None, values: bool = True, name: str = "t",
    max_cells: int = MAX_CELLS,
) -> Picture:  # fmt: skip
    """The diagram of any tensor: its cells (with their values) over its storage."""
    storage_values = t.storage.data if values else None
    return layout_diagram(
        t.shape, t.strides, t.offset, len(t.storage.data), storage_values, arrows, name,
        max_cells,
    )  # fmt: skip


def view_diagram(
    base: Tenxor, view: Tenxor, base_name: str = "x", view_name: str = "view",
    arrows: Arrows = None,
) -> Picture:  # fmt: skip
    """A tensor above its storage and a view of it below, both reading the same storage.

    Storage the view does not reach is grey, and so are the tensor's cells that read it.
    """
    if view.storage is not base.storage:
        raise ValueError(
            f"{view_name} does not share storage with {base_name}: it is a copy, not a view "
            "(draw a copy with gather_diagram)"
        )
    for who, t in ((base_name, base), (view_name, view)):
        require_readable(math.prod(t.shape), MAX_CELLS, who, SLICE_HINT)
    base_read = reads(base.shape, base.strides, base.offset)
    view_read = reads(view.shape, view.strides, view.offset)
    colours = offset_colours(set(view_read.values()))
    values = base.storage.data
    size = len(values)
    base_colours = {i: colours.get(o, UNREACHED) for i, o in base_read.items()}
    view_colours = {i: colours[o] for i, o in view_read.items()}
    slots = storage_slots(set(base_read.values()) | set(view_read.values()), size)
    pairs = [(index, view_read[index]) for index in chosen_arrows(view.shape, arrows)]
    middle = [
        tensor_block("base", base.shape, base_colours, cell_values(base_read, values)),
        titled(storage_block("storage", slots, colours, storage_texts(values)), "storage",
               above=True),
        tensor_block("view", view.shape, view_colours, cell_values(view_read, values),
                     "out" if pairs else None),
    ]  # fmt: skip
    width = caption_width(*middle)
    blocks = stack(
        [
            caption(f"{base_name}: {layout_words(base.shape, base.strides, base.offset)}",
                    width=width),
            *middle,
            caption(f"{view_name}: {layout_words(view.shape, view.strides, view.offset)}",
                    width=width),
        ],
        gaps=[0.5, 1.4, 2.2, 0.5],
    )  # fmt: skip
    _, _, storage, view_block, _ = blocks
    shown = links("arrow/view", view_block, storage, pairs, view_colours)
    description = (
        f"{view_name} is a view of {base_name}: "
        f"{layout_words(view.shape, view.strides, view.offset)}, sharing {size} storage elements"
    )
    return render(picture_of(blocks, [shown]), description)


def gather_diagram(base: Tenxor, dim: int, chosen: Sequence[int], base_name: str = "x") -> Picture:
    """Picking positions `chosen` along `dim` (a list index): a copy into new storage.

    Each element of the result is copied from the storage cell of the element it picks;
    the new storage cells keep the colour of the cells they were copied from.
    """
    if not 0 <= dim < base.ndim:
        raise ValueError(f"dim {dim} is out of range for a tensor of {base.ndim} dims")
    size = base.shape[dim]
    bad = [i for i in chosen if not 0 <= i < size]
    if bad:
        raise ValueError(f"positions {bad} are out of range for dim {dim} of size {size}")
    shape = base.shape[:dim] + (len(chosen),) + base.shape[dim + 1 :]
    for who, cells in ((base_name, math.prod(base.shape)), ("the result", len(indices(shape)))):
        require_readable(cells, MAX_CELLS, who, SLICE_HINT)
    base_read = reads(base.shape, base.strides, base.offset)
    source = {  # result index -> the base offset its value is copied from
        index: base_read[index[:dim] + (chosen[index[dim]],) + index[dim + 1 :]]
        for index in indices(shape)
    }
    copied = {index: k for k, index in enumerate(indices(shape))}  # new, contiguous storage
    colours = offset_colours(set(base_read.values()))
    values = base.storage.data
    new_colours = {k: colours[source[index]] for index, k in copied.items()}
    new_values = [format_value(values[source[index]]) for index in copied]
    expression = f"{base_name}[{', '.join([':'] * dim + [str(list(chosen))])}]"
    middle = [
        tensor_block("base", base.shape, {i: colours[o] for i, o in base_read.items()},
                     cell_values(base_read, values)),
        titled(storage_block("storage", storage_slots(set(base_read.values()), len(values)),
                             colours, storage_texts(values)), "storage"),
        titled(storage_block("copy", list(range(len(copied))), new_colours, new_values),
               "new storage"),
        tensor_block("result", shape, {i: new_colours[k] for i, k in copied.items()},
                     {i: new_values[k] for i, k in copied.items()}, "out"),
    ]  # fmt: skip
    width = caption_width(*middle)
    blocks = stack(
        [
            caption(f"{base_name}: {layout_words(base.shape, base.strides, base.offset)}",
                    width=width),
            *middle,
            caption(f"{expression}: a copy, {layout_words(shape, row_major_strides(shape), 0)}",
                    width=width),
        ],
        gaps=[0.5, 1.4, 1.8, 1.8, 0.5],
    )  # fmt: skip
    _, _, storage, new_storage, result, _ = blocks
    copies = links(
        "arrow/copy", storage, new_storage,
        [(source[index], k) for index, k in copied.items()], colours,
    )  # fmt: skip
    result_arrows = links(
        "arrow/result", result, new_storage, list(copied.items()),
        {i: new_colours[k] for i, k in copied.items()},
    )  # fmt: skip
    description = f"{expression} copies {len(copied)} elements of {base_name} into new storage"
    return render(picture_of(blocks, [copies, result_arrows]), description)


FOLDS = {"sum": sum, "max": max, "min": min, "mean": lambda group: sum(group) / len(group)}


def reduction_diagram(
    shape: Sequence[int], dim: int, values: Sequence[Any] | None = None, op: str = "sum",
    keepdim: bool = False, name: str = "x",
) -> Picture:  # fmt: skip
    """Reducing along `dim`: the input cells that fold into each output cell share its colour
    and point at it. `values` (row-major) are folded with `op` when given."""
    shape = tuple(shape)
    if not -len(shape) <= dim < len(shape):
        raise ValueError(f"dim {dim} is out of range for shape {shape} ({len(shape)} dims)")
    if op not in FOLDS:
        raise ValueError(f"op must be one of {sorted(FOLDS)}, got {op!r}")
    dim %= len(shape)
    require_readable(len(indices(shape)), MAX_CELLS, f"shape {shape}", SLICE_HINT)
    kept = shape[:dim] + ((1,) if keepdim else ()) + shape[dim + 1 :]
    outputs = indices(kept)
    colour_of_output = dict(zip(outputs, palette(len(outputs))))

    def target(index: Index) -> Index:
        """The output cell that input cell `index` folds into."""
        return index[:dim] + ((0,) if keepdim else ()) + index[dim + 1 :]

    inputs = indices(shape)
    input_values = output_values = None
    if values is not None:
        if len(values) != len(inputs):
            raise ValueError(f"{len(values)} values cannot fill shape {shape}")
        by_index = dict(zip(inputs, values))
        input_values = {i: format_value(v) for i, v in by_index.items()}
        runs = {out: [by_index[i] for i in inputs if target(i) == out] for out in outputs}
        output_values = {out: format_value(FOLDS[op](run)) for out, run in runs.items()}
    expression = f"{name}.{op}(dim={dim}{', keepdim=True' if keepdim else ''})"
    middle = [
        tensor_block("input", shape, {i: colour_of_output[target(i)] for i in inputs},
                     input_values, "out"),
        tensor_block("output", kept, colour_of_output, output_values, "in"),
    ]  # fmt: skip
    width = caption_width(*middle)
    blocks = stack(
        [
            caption(f"{name}: shape {shape}; {op} along dim {dim} (size {shape[dim]})",
                    width=width),
            *middle,
            caption(f"{expression}: shape {kept}", width=width),
        ],
        gaps=[0.5, 2.4, 0.5],
    )  # fmt: skip
    _, source, result, _ = blocks
    folds = links(
        "arrow/fold", source, result, [(i, target(i)) for i in inputs],
        {i: colour_of_output[target(i)] for i in inputs},
    )  # fmt: skip
    description = f"{expression} folds {len(inputs)} cells of shape {shape} into shape {kept}"
    return render(picture_of(blocks, [folds]), description)
