"""The broadcasting diagram: shapes aligned to the right, padded with 1s, stretched, combined.

Each column is one dim, counted from the right. A column broadcasts when all its sizes that
are not 1 agree; a size-1 (or padded) entry is then stretched to that size with stride 0.
"""

from __future__ import annotations

from collections.abc import Sequence

from .parts import CAPTION_SIZE, MAIN_SIZE, Block, block_of, caption, stack
from .render import Picture, render
from .shapes import FAINT, INK, WHITE, Diagram, box, concat, label, text_width

WIDTH = 1.9  # of one size box
HEIGHT = 0.9
PITCH = (WIDTH + 0.2, HEIGHT + 0.25)
KINDS = {  # kind of entry: (fill, legend)
    "size": ("#dbe9f6", "size kept"),
    "padded": (WHITE, "missing dim, padded with 1"),
    "stretched": ("#ffd08a", "size 1 stretched (stride 0)"),
    "clash": ("#f4a6a6", "sizes clash: neither is 1"),
    "result": ("#cfeccf", "result size"),
}


def column_size(sizes: Sequence[int | None]) -> int | None:
    """The broadcast size of one column of sizes (None = padded), or None if they clash."""
    others = {size for size in sizes if size not in (None, 1)}
    if len(others) > 1:
        return None
    return others.pop() if others else 1


def entry_kind(size: int | None, result: int | None) -> str:
    """How one operand's size in a column is drawn."""
    if result is None:
        return "clash"
    if size is None:
        return "padded"
    return "stretched" if size == 1 and result != 1 else "size"


def entry_text(size: int | None, result: int | None) -> str:
    """What one operand's entry says: its size, and what it becomes when it changes."""
    shown = "1" if size is None else str(size)
    changed = result is not None and (size is None or size != result)
    return f"{shown} → {result}" if changed else shown


def entry(name: str, kind: str, words: str) -> Diagram:
    """One size box of `kind`, named `name`."""
    fill = KINDS[kind][0]
    outline = box(WIDTH, HEIGHT, fill, line=FAINT if kind == "padded" else INK,
                  dashed=kind == "padded")  # fmt: skip
    return (outline + label(words, MAIN_SIZE, FAINT if kind == "padded" else INK)).named(name)


def dim_name(column: int, ndim: int) -> str:
    """A column's dim counted from the right: "-1" is the last dim."""
    return str(column - ndim)


def table(names: Sequence[str], padded: Sequence[Sequence[int | None]],
          results: Sequence[int | None]) -> Block:  # fmt: skip
    """The aligned shapes, one row per operand and a last row for the result."""
    ndim = len(results)
    parts, centres = [], {}
    for row, (name, sizes) in enumerate(zip(names, padded)):
        for column, (size, result) in enumerate(zip(sizes, results)):
            kind = entry_kind(size, result)
            key = f"{kind}/{name}/{dim_name(column, ndim)}"
            centres[key] = (column * PITCH[0], row * PITCH[1])
            parts.append(entry(key, kind, entry_text(size, result)).translate(*centres[key]))
    row = len(names)
    for column, result in enumerate(results):
        kind = "result" if result is not None else "clash"
        key = f"{kind}/result/{dim_name(column, ndim)}"
        centres[key] = (column * PITCH[0], row * PITCH[1])
        words = "?" if result is None else str(result)
        parts.append(entry(key, kind, words).translate(*centres[key]))
    for column in range(ndim):
        header = label(f"dim {dim_name(column, ndim)}", CAPTION_SIZE, FAINT)
        parts.append(header.translate(column * PITCH[0], -0.8))
    for row, name in enumerate([*names, "result"]):
        parts.append(label(name, CAPTION_SIZE, INK).translate(-WIDTH, row * PITCH[1]))
    block = block_of(concat(parts), centres, extra=0.5)
    return Block(block.diagram, block.centres, block.left - WIDTH, block.top - 0.5,
                 block.right, block.bottom)  # fmt: skip


def legend(kinds: Sequence[str]) -> Block:
    """A swatch and its meaning for each kind of entry that appears."""
    parts = []
    for row, kind in enumerate(kinds):
        fill, words = KINDS[kind]
        swatch = box(0.5, 0.4, fill, line=FAINT if kind == "padded" else INK,
                     dashed=kind == "padded")  # fmt: skip
        parts.append((swatch + label(words, CAPTION_SIZE, INK, "left").translate(0.45, 0))
                     .translate(0, row * 0.55))  # fmt: skip
    width = 0.45 + max(text_width(KINDS[kind][1], CAPTION_SIZE) for kind in kinds)
    return Block(concat(parts), {}, -0.25, -0.2, width, 0.55 * len(kinds) - 0.35)


def verdict(padded: Sequence[Sequence[int | None]], results: Sequence[int | None]) -> str:
    """The result shape, or which dim cannot broadcast and why."""
    ndim = len(results)
    for column in reversed(range(ndim)):
        if results[column] is None:
            sizes = sorted({row[column] for row in padded if row[column] not in (None, 1)})
            listed = " and ".join(map(str, sizes))
            return (
                f"cannot broadcast: dim {dim_name(column, ndim)} has sizes {listed}, "
                "and only a size of 1 can stretch"
            )
    return f"result shape {tuple(results)}"


def broadcast_diagram(*shapes: Sequence[int], names: Sequence[str] | None = None) -> Picture:
    """How `shapes` broadcast: aligned right, padded, stretched, and the result or the clash."""
    if len(shapes) < 2:
        raise ValueError(f"broadcasting needs at least two shapes, got {len(shapes)}")
    shapes = tuple(tuple(shape) for shape in shapes)
    names = list(names) if names is not None else [chr(ord("a") + k) for k in range(len(shapes))]
    if len(names) != len(shapes):
        raise ValueError(f"{len(names)} names for {len(shapes)} shapes")
    ndim = max(len(shape) for shape in shapes)
    padded = [(None,) * (ndim - len(shape)) + shape for shape in shapes]
    results = [column_size([row[c] for row in padded]) for c in range(ndim)]
    kinds = {entry_kind(size, result) for row in padded for size, result in zip(row, results)}
    if any(result is not None for result in results):
        kinds.add("result")
    shown = [kind for kind in KINDS if kind in kinds]
    words = verdict(padded, results)
    title = caption(" with ".join(f"{n} {s}" for n, s in zip(names, shapes)))
    blocks = stack([title, table(names, padded, results), caption(words), legend(shown)],
                   gaps=[0.6, 0.6, 0.5])  # fmt: skip
    description = f"broadcasting {' and '.join(map(str, shapes))}: {words}"
    return render(concat([block.diagram for block in blocks]), description)
