"""The fold-walk diagram: which cells of broadcast operands meet at one output element of the
fused kernel (combine_fold_values), and in which order the kernel reads them.

The operands broadcast to one shape. An output index fixes the kept dims; the kernel walks the
reduced dims in row-major order from where the group starts in each operand, a row at a time
along the last reduced dim, and, at each step, combines one element of every operand and folds
the result into one accumulator. An operand reads index 0 along a dim it lacks or has
size 1 in (stride 0), so one of its cells may count at several steps. Which cell and offset
each operand reads at each step is computed here from the layouts, never by the exercises.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from tenxor.core import Tenxor
from tenxor.strides import normalize_dims

from .alignment import column_size, verdict
from .figures import SLICE_HINT, reads, storage_texts
from .layouts import (
    CELL,
    MAX_CELLS,
    Index,
    cell_centres,
    index_label,
    indices,
    offset_of,
    require_readable,
    storage_slots,
)
from .parts import (
    CAPTION_SIZE,
    SMALL_SIZE,
    SUBTLE,
    Block,
    arrow_room,
    block_of,
    cell,
    fitted_size,
    links,
    stack,
    storage_block,
    tensor_block,
    widened,
)
from .render import Picture, render
from .shapes import FAINT, INK, UNREACHED, WHITE, Diagram, box, concat, label, text_width

HIGHLIGHT = "#ffd08a"  # the cells, offsets and output cell of the walk
BADGE = "#8a4b00"  # the step numbers, written white on it
BADGE_HEIGHT = 0.36
VARIABLES = "klmpqrst"  # the names of the reduced dims' indices in the captions
COLUMN_GAP = 1.8  # between the operands' columns
ROW_WIDTH = 34.0  # operands wrap onto a further row beyond this width
ROW_GAP = 1.2  # between rows of operands
STORAGE_DROP = 2.0  # from the bottom of the tallest operand's cells to the storage rows
LISTED_STEPS = 4  # a cell lists up to this many step numbers, else a range or a count
LISTED_OFFSETS = 8  # an operand's caption lists up to this many offsets
GROUP_HINT = "Fold fewer or smaller dims, or pass a larger max_cells."
TUPLES = {1: ("element", "elements"), 2: ("pair", "pairs"), 3: ("triple", "triples")}


@dataclass(frozen=True)
class Walk:
    """One output element of the fused kernel: the broadcast shape, the reduced dims, the
    output shape and index, the broadcast index of each step and, per operand, the index it
    reads at each step."""

    shape: tuple[int, ...]
    reduced: tuple[int, ...]
    out_shape: tuple[int, ...]
    index: Index
    fixed: dict[int, int]  # the index along each kept dim of the broadcast shape
    steps: list[Index]
    reads: list[list[Index]]


def broadcast_of(shapes: Sequence[tuple[int, ...]], names: Sequence[str]) -> tuple[int, ...]:
    """The shape `shapes` broadcast to, or a ValueError naming the operands and the dim."""
    ndim = max(len(shape) for shape in shapes)
    padded = [(None,) * (ndim - len(shape)) + shape for shape in shapes]
    results = [column_size([row[c] for row in padded]) for c in range(ndim)]
    if None in results:
        listed = and_list([f"{n} {s}" for n, s in zip(names, shapes)])
        raise ValueError(f"operands {listed} {verdict(padded, results)}")
    return tuple(size for size in results if size is not None)


def operand_index(full: Index, shape: Sequence[int]) -> Index:
    """The index an operand of `shape` reads at broadcast index `full`: aligned right, and 0
    along a dim of size 1 (stretched, stride 0)."""
    lead = len(full) - len(shape)
    return tuple(0 if size == 1 else full[lead + d] for d, size in enumerate(shape))


def checked_index(index: Sequence[int], out_shape: tuple[int, ...], walk_words: str) -> Index:
    """`index` as a tuple, or an IndexError saying how it does not fit the output shape."""
    index = tuple(index)
    if any(not isinstance(i, int) or isinstance(i, bool) for i in index):
        raise TypeError(f"index must hold ints, got {index!r}")
    if len(index) != len(out_shape):
        raise IndexError(
            f"index {index} has {len(index)} entries, but the output of shape {out_shape} "
            f"has {len(out_shape)} dims ({walk_words})"
        )
    outside = [d for d, (i, size) in enumerate(zip(index, out_shape)) if not 0 <= i < size]
    if outside:
        d = outside[0]
        raise IndexError(
            f"index {index} does not fit the output shape {out_shape}: entry {d} is "
            f"{index[d]}, expected 0 to {out_shape[d] - 1} ({walk_words})"
        )
    return index


def walk_of(
    shapes: Sequence[tuple[int, ...]], names: Sequence[str], dims: int | Sequence[int] | None,
    index: Sequence[int], keepdim: bool, max_cells: int,
) -> Walk:  # fmt: skip
    """Which index each operand reads at each step of the output element at `index`; an
    output or a group of more than `max_cells` cells is refused before the walk is made."""
    shape = broadcast_of(shapes, names)
    try:
        reduced = normalize_dims(dims, len(shape))
    except IndexError as error:
        raise IndexError(f"{error}; the operands broadcast to shape {shape}") from None
    if keepdim:
        out_shape = tuple(1 if d in reduced else size for d, size in enumerate(shape))
    else:
        out_shape = tuple(size for d, size in enumerate(shape) if d not in reduced)
    words = f"the operands broadcast to {shape}, {dims_words(reduced)} folded"
    index = checked_index(index, out_shape, words + (" and kept as 1" if keepdim else ""))
    require_readable(math.prod(out_shape), max_cells, f"the output of shape {out_shape}",
                     SLICE_HINT)  # fmt: skip
    group = f"the group of {out_words(index)} (dims {reduced} of {shape})"
    require_readable(math.prod(shape[d] for d in reduced), max_cells, group, GROUP_HINT)
    kept = [d for d in range(len(shape)) if d not in reduced]
    fixed = dict(zip(kept, [index[d] for d in kept] if keepdim else index))
    steps = []
    for inner in indices([shape[d] for d in reduced]):  # row-major over the reduced dims
        walked = dict(zip(reduced, inner))
        steps.append(tuple(fixed[d] if d in fixed else walked[d] for d in range(len(shape))))
    read = [[operand_index(full, s) for full in steps] for s in shapes]
    return Walk(shape, reduced, out_shape, index, fixed, steps, read)


def steps_text(numbers: Sequence[int]) -> str:
    """The step numbers written on a cell: "2", "1,2,3", "1–6", or "×6" for many that are
    not consecutive."""
    if len(numbers) <= LISTED_STEPS:
        return ",".join(map(str, numbers))
    if list(numbers) == list(range(numbers[0], numbers[0] + len(numbers))):
        return f"{numbers[0]}–{numbers[-1]}"
    return f"×{len(numbers)}"


def badge(words: str) -> Diagram:
    """The step numbers of a cell, white on a dark pill, centred on the origin."""
    size = min(0.24, 0.8 * CELL / (0.62 * max(len(words), 1)))
    width = min(0.92 * CELL, 0.62 * size * len(words) + 0.2)
    return box(width, BADGE_HEIGHT, BADGE, line=BADGE) + label(words, size, WHITE)


def operand_block(role: str, shape: Sequence[int], steps_of: dict[Index, list[int]]) -> Block:
    """An operand's cells as a grid (of grids), labelled with their index; the cells the walk
    reads are highlighted and carry their step numbers (named "step/<name>/<index>"); its
    columns stand apart, leaving room for the arrows from the cells to storage."""
    gap, room = arrow_room(shape, "out")
    centres = cell_centres(shape, gap)
    if not centres:
        return tensor_block(role, shape, {})
    name = role.split("/", 1)[1]
    pieces = []
    for index, (x, y) in centres.items():
        title = index_label(index)
        if index not in steps_of:
            pieces.append(cell(f"{role}/{title}", UNREACHED, title).translate(x, y))
            continue
        outline = box(CELL, CELL, HIGHLIGHT)
        written = label(title, fitted_size(title, SMALL_SIZE), SUBTLE).translate(0, -0.25)
        pieces.append((outline + written).named(f"{role}/{title}").translate(x, y))
        number = badge(steps_text(steps_of[index])).named(f"step/{name}/{title}")
        pieces.append(number.translate(x, y + 0.17))
    return widened(block_of(concat(pieces), centres), room)


def listed(values: Sequence[int], limit: int = LISTED_OFFSETS, unit: str = "steps") -> str:
    """Values separated by commas, the middle left out when there are more than `limit`."""
    if len(values) <= limit:
        return ", ".join(map(str, values))
    shown = [*values[: limit - 2], "…", *values[-2:]]
    return ", ".join(map(str, shown)) + f" ({len(values)} {unit})"


def expression(name: str, shape: Sequence[int], walk: Walk) -> str:
    """What an operand reads, written with the reduced dims' variables: "b[0, 1, k]"."""
    lead = len(walk.shape) - len(shape)
    entries = []
    for d, size in enumerate(shape):
        full = lead + d
        if size == 1:
            entries.append("0")
        elif full in walk.reduced:
            entries.append(variable(walk, full))
        else:
            entries.append(str(walk.fixed[full]))
    return f"{name}[{', '.join(entries)}]" if entries else name


def variable(walk: Walk, dim: int) -> str:
    """The name of the index that runs along reduced dim `dim`."""
    k = walk.reduced.index(dim)
    return VARIABLES[k] if len(walk.reduced) <= len(VARIABLES) else f"k{k}"


def ranges(walk: Walk) -> str:
    """The ranges the reduced dims' variables run through: "k = 0..2, l = 0"."""
    parts = []
    for d in walk.reduced:
        size = walk.shape[d]
        span = "0" if size == 1 else f"0..{size - 1}" if size else "nothing (size 0)"
        parts.append(f"{variable(walk, d)} = {span}")
    return ", ".join(parts) + (" in row-major order" if len(walk.reduced) > 1 else "")


def dims_words(reduced: Sequence[int]) -> str:
    """The reduced dims in words: "dim 2", "dims 0 and 2", "no dim"."""
    if not reduced:
        return "no dim"
    if len(reduced) == 1:
        return f"dim {reduced[0]}"
    return f"dims {and_list([str(d) for d in reduced])}"


def and_list(items: Sequence[str]) -> str:
    """The items joined as in "a", "a and b", "a, b and c"."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def out_words(index: Index) -> str:
    """The output element: "out[0, 1]", or "out" for a 0-d output."""
    return f"out[{', '.join(map(str, index))}]" if index else "out"


def walk_captions(
    walk: Walk, names: Sequence[str], shapes: Sequence[tuple[int, ...]]
) -> tuple[str, str]:
    """What happens, in words: the fold of combined elements, and how many there are."""
    combined = ", ".join(expression(n, s, walk) for n, s in zip(names, shapes))
    first = f"{out_words(walk.index)} = fold of combine({combined})"
    if walk.reduced:
        first += f" for {ranges(walk)}"
    count = len(walk.steps)
    one, many = TUPLES.get(len(names), (f"{len(names)}-tuple", f"{len(names)}-tuples"))
    if count == 0:
        return first, "no step: fold is given an empty group"
    second = (
        f"{count} {one if count == 1 else many}, combined one at a time into one accumulator: "
        "the combined tensor never exists"
    )
    return first, second


def rows_text(offsets: Sequence[int], row: int) -> str:
    """Where an operand's group starts and the rows of `row` elements (along the last reduced
    dim) the kernel reads it in: "group starts at 6: 2 rows of 3, step 1, at 6, 9"."""
    count = len(offsets) // row
    if count == 1 and row == 1:
        return f"group starts at {offsets[0]}: one element"
    text = f"group starts at {offsets[0]}: {count} row{'' if count == 1 else 's'} of {row}"
    if row > 1:
        text += f", step {offsets[1] - offsets[0]}"
    return text + (f", at {listed(offsets[::row], unit='rows')}" if count > 1 else "")


def reads_lines(offsets: Sequence[int], cells: int, row: int) -> list[str]:
    """An operand's offsets in the order the walk reads them, where its group starts and the
    rows of `row` elements it is read in, how often each of its `cells` counts when a
    stretched dim makes the walk read it again, and whether several cells read one offset
    (the operand's own stride 0)."""
    if not offsets:
        return ["reads nothing"]
    lines = [f"reads offsets {listed(offsets)}", rows_text(offsets, row)]
    if len(offsets) > cells:
        who = "its one cell counts" if cells == 1 else "each cell counts"
        lines.append(f"{who} {len(offsets) // cells} times (stretched: stride 0)")
    if len(set(offsets)) < cells:
        lines.append("several cells read one offset (stride 0)")
    return lines


def line_of(text: str, colour: str = INK, size: float = CAPTION_SIZE) -> Block:
    """A line of text, centred on the origin, in a block as wide as the text (so columns of
    them are placed apart by their real width)."""
    half = text_width(text, size) / 2
    return Block(label(text, size, colour), {}, -half, -0.25, half, 0.25)


def grid_height(shape: Sequence[int]) -> float:
    """How tall an operand's grid of cells is drawn."""
    ys = [y for _, y in cell_centres(shape).values()]
    return max(ys) - min(ys) + CELL if ys else CELL


@dataclass(frozen=True)
class Column:
    """An operand's blocks, placed top to bottom: its layout in two lines, its cells, its
    storage and the offsets it reads; and which storage cell each highlighted cell reads."""

    blocks: list[Block]
    pairs: list[tuple[Index, int]]

    @property
    def left(self) -> float:
        return min(block.left for block in self.blocks)

    @property
    def right(self) -> float:
        return max(block.right for block in self.blocks)

    @property
    def bottom(self) -> float:
        return max(block.bottom for block in self.blocks)

    def moved(self, dx: float, dy: float) -> Column:
        return Column([block.moved(dx, dy) for block in self.blocks], self.pairs)


def operand_column(t: Tenxor, name: str, steps: list[Index], drop: float, row: int) -> Column:
    """An operand's column: its layout, its cells (those the walk reads at `steps` highlighted
    and numbered) and its storage (the offsets the walk reads highlighted, read in rows of
    `row`), the storage row starting `drop` below the top of the cells, so the storage rows
    of all operands line up."""
    steps_of: dict[Index, list[int]] = {}
    for number, index in enumerate(steps, start=1):
        steps_of.setdefault(index, []).append(number)
    offsets = [offset_of(index, t.strides, t.offset) for index in steps]
    data = t.storage.data
    slots = storage_slots(set(reads(t.shape, t.strides, t.offset).values()), len(data))
    cells = operand_block(f"cell/{name}", t.shape, steps_of)
    storage = storage_block(f"storage/{name}", slots, dict.fromkeys(offsets, HIGHLIGHT),
                            storage_texts(data))  # fmt: skip
    below = [line_of(line, FAINT) for line in reads_lines(offsets, len(steps_of), row)]
    blocks = stack(
        [
            line_of(f"{name}: shape {tuple(t.shape)}"),
            line_of(f"strides {tuple(t.strides)}, offset {t.offset}", FAINT),
            cells,
            storage,
            *below,
        ],
        gaps=[0.2, 0.5, drop - (cells.bottom - cells.top), 0.45] + [0.1] * (len(below) - 1),
    )
    pairs = [(index, offset_of(index, t.strides, t.offset)) for index in steps_of]
    return Column(blocks, pairs)


def in_rows(columns: list[Column], top: float) -> tuple[list[Column], float]:
    """The columns side by side, wrapping onto further rows beyond ROW_WIDTH, each row centred
    on x = 0, the first starting at `top`; and the bottom of the last row."""
    rows: list[list[Column]] = [[]]
    width = 0.0
    for column in columns:
        span = column.right - column.left
        if rows[-1] and width + COLUMN_GAP + span > ROW_WIDTH:
            rows.append([])
            width = 0.0
        rows[-1].append(column)
        width += (COLUMN_GAP if width else 0.0) + span
    placed: list[Column] = []
    y = top
    for row in rows:
        x, moved = 0.0, []
        for column in row:
            moved.append(column.moved(x - column.left, y))
            x = moved[-1].right + COLUMN_GAP
        middle = (x - COLUMN_GAP) / 2
        placed += [column.moved(-middle, 0.0) for column in moved]
        y = max(column.bottom for column in placed) + ROW_GAP
    return placed, y - ROW_GAP


def fold_walk_diagram(
    operands: Sequence[Tenxor],
    dims: int | Sequence[int] | None,
    index: Sequence[int],
    names: Sequence[str] | None = None,
    keepdim: bool = False,
    max_cells: int = MAX_CELLS,
) -> Picture:
    """The fused kernel's walk for one output element: which cells of the broadcast operands
    meet at `index` of the output, and in which order the kernel combines and folds them.

    Each operand is drawn over its storage. The cells the kernel reads for this output element,
    and their offsets, are highlighted; each cell carries the numbers of the steps that read it
    (1, 2, 3, ... in row-major order of the reduced `dims`; None: every dim), so a cell
    stretched along a reduced dim (stride 0) carries several. Under each storage: where the
    operand's group starts and the rows along the last reduced dim it is read in. Below: the
    output (the broadcast shape without the reduced dims, or with them as 1 when `keepdim`)
    with the cell at `index` highlighted, and the fold in words. `names` default to a, b, c,
    ...; an operand, the output or the group of more than `max_cells` cells is refused.
    """
    operands = list(operands)
    if not operands:
        raise ValueError("fold_walk_diagram needs at least one operand, got 0")
    bad = [type(t).__name__ for t in operands if not isinstance(t, Tenxor)]
    if bad:
        raise TypeError(f"operands must be tensors, got {', '.join(bad)}")
    names = list(names) if names is not None else [chr(ord("a") + k) for k in range(len(operands))]
    if len(names) != len(operands):
        raise ValueError(f"{len(names)} names for {len(operands)} operands")
    if len(set(names)) != len(names):
        raise ValueError(f"the operands' names must differ, got {names}")
    shapes = [tuple(t.shape) for t in operands]
    for name, shape in zip(names, shapes):
        require_readable(math.prod(shape), max_cells, f"operand {name} of shape {shape}",
                         SLICE_HINT)  # fmt: skip
    walk = walk_of(shapes, names, dims, index, keepdim, max_cells)

    drop = max(grid_height(shape) for shape in shapes) + STORAGE_DROP
    row = walk.shape[walk.reduced[-1]] if walk.reduced else 1  # along the last reduced dim
    columns = [operand_column(t, name, steps, drop, row)
               for t, name, steps in zip(operands, names, walk.reads)]  # fmt: skip
    header = stack(
        [
            line_of(and_list([f"{n} {s}" for n, s in zip(names, shapes)])
                    + f" broadcast to {walk.shape}; the kernel folds {dims_words(walk.reduced)}"),
            line_of(f"highlighted: what the kernel reads for {out_words(walk.index)}; "
                    "the number on a cell: the step that reads it", FAINT),
        ],
        gaps=[0.25],
    )  # fmt: skip
    columns, bottom = in_rows(columns, header[-1].bottom + 0.9)
    first, second = walk_captions(walk, names, shapes)
    kept_as = "kept as 1" if keepdim else "removed"
    out_colours = {i: HIGHLIGHT if i == walk.index else UNREACHED for i in indices(walk.out_shape)}
    result = stack(
        [
            line_of(f"out: shape {walk.out_shape}, the broadcast shape with "
                    f"{dims_words(walk.reduced)} {kept_as}"),
            tensor_block("output", walk.out_shape, out_colours),
            line_of(first),
            line_of(second, FAINT),
        ],
        gaps=[0.5, 0.7, 0.3],
    )  # fmt: skip
    result = [block.moved(0.0, bottom + 1.3) for block in result]
    arrows = [
        links(f"arrow/{name}", column.blocks[2], column.blocks[3], column.pairs,
              dict.fromkeys((i for i, _ in column.pairs), HIGHLIGHT))
        for name, column in zip(names, columns)
    ]  # fmt: skip
    blocks = [*header, *(block for column in columns for block in column.blocks), *result]
    drawn = concat([*arrows, *(block.diagram for block in blocks)])  # arrows under the cells
    return render(drawn, f"{first}: {second}")
