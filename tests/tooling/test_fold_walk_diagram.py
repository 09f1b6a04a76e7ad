"""The fold-walk diagram, read back from its SVG and checked against the walk NumPy gives.

Each tenxor operand is built next to the same NumPy view of np.arange(n), whose values are the
storage offsets themselves. NumPy broadcasts the offset views (np.broadcast_to), the reduced
axes are moved last and the output index picks one group: its offsets, in row-major order of
the reduced dims, are the offsets the fused kernel reads, step by step. The cells come the same
way from an array of cell numbers, and values from storage planted with distinct numbers. None
of it owes anything to tenxor's layout arithmetic or to the drawing code.
"""

from __future__ import annotations

import sys
from functools import cache

import numpy as np
import pytest

import tenxor
from tenxor.course.catalog import CATALOG
from tenxor.diagrams import DiagramTooLarge, fold_walk_diagram

from .svg_parts import named, parts, target_of

pytestmark = pytest.mark.provided

HIGHLIGHT = "#ffd08a"
GREY = "#e4e4e4"


def pair(shape, start=0):
    """A tenxor tensor of `shape` over storage start, start + 1, ... and the NumPy array of the
    offsets it reads."""
    count = int(np.prod(shape))
    t = tenxor.arange(start, start + count).view(*shape)
    return t, np.arange(count).reshape(shape)


def matmul(n=2, k=3, m=2):
    """rows = a.unsqueeze(-2) [n, 1, k] and columns = b.transpose(-1, -2).unsqueeze(-3)
    [1, m, k] for a [n, k] and b [k, m], in tenxor and as NumPy offsets."""
    (a, an), (b, bn) = pair((n, k)), pair((k, m), start=10)
    return [a.unsqueeze(-2), b.transpose(-1, -2).unsqueeze(-3)], [an[:, None, :], bn.T[None]]


def stretched():
    """A column [3, 1] with a row [4]: folding dim 1, the column's one cell counts 4 times."""
    (c, cn), (r, rn) = pair((3, 1)), pair((4,), start=20)
    return [c, r], [cn, rn]


def expanded_and_reversed():
    """An expanded view (stride 0 of its own) with a reversed row (negative stride)."""
    (c, cn), (r, rn) = pair((3, 1)), pair((4,), start=20)
    return [c.expand(3, 4), r[::-1]], [np.broadcast_to(cn, (3, 4)), rn[::-1]]


def reversed_matmul():
    """The matmul operands read through negative steps: a[::-1, ::-1] and b[::-1]."""
    (a, an), (b, bn) = pair((2, 3)), pair((3, 2), start=10)
    rows, rows_n = a[::-1, ::-1].unsqueeze(-2), an[::-1, ::-1][:, None, :]
    columns, columns_n = b[::-1].transpose(-1, -2).unsqueeze(-3), bn[::-1].T[None]
    return [rows, columns], [rows_n, columns_n]


def attention_logits():
    """The GATv2 logits: receiver [2, 1, 3], sender [1, 2, 3] and attention [3] meet at [i, j]."""
    (r, rn), (s, sn), (a, an) = pair((2, 3)), pair((2, 3), start=10), pair((3,), start=30)
    return [r.unsqueeze(-2), s.unsqueeze(-3), a], [rn[:, None, :], sn[None], an]


# (name, operands, dims, index, keepdim)
CASES = [
    ("matmul out[0, 1]", matmul, -1, (0, 1), False),
    ("matmul out[1, 0]", matmul, -1, (1, 0), False),
    ("matmul keepdim", matmul, 2, (1, 1, 0), True),
    ("stride 0: one cell counts 4 times", stretched, 1, (2,), False),
    ("stride 0 along the kept dim", stretched, 0, (3,), False),
    ("expanded view and negative stride, every dim", expanded_and_reversed, None, (), False),
    ("expanded view, every dim kept as 1", expanded_and_reversed, (0, 1), (0, 0), True),
    ("negative steps", reversed_matmul, -1, (1, 0), False),
    ("three operands", attention_logits, -1, (1, 0), False),
    ("no reduced dim", attention_logits, (), (1, 0, 2), False),
]


def expected_walk(arrays, dims, index, keepdim):
    """What NumPy says each operand reads at each step of out[index]: the broadcast arrays with
    the reduced axes moved last, at the output index, flattened (row-major over the reduced)."""
    shape = np.broadcast_shapes(*(a.shape for a in arrays))
    ndim = len(shape)
    if dims is None:
        dims = tuple(range(ndim))
    reduced = sorted(d % ndim for d in ((dims,) if isinstance(dims, int) else dims))
    kept = [d for d in range(ndim) if d not in reduced]
    at = tuple(index[d] for d in kept) if keepdim else tuple(index)
    last = list(range(ndim - len(reduced), ndim))
    return [np.moveaxis(np.broadcast_to(a, shape), reduced, last)[at].ravel() for a in arrays]


def cell_walk(arrays, dims, index, keepdim):
    """The cell (as "i,j,k") each operand reads at each step, from arrays of cell numbers."""
    numbers = [np.arange(a.size).reshape(a.shape) for a in arrays]
    walks = expected_walk(numbers, dims, index, keepdim)
    return [
        [",".join(map(str, np.unravel_index(n, a.shape))) if a.ndim else "()" for n in walk]
        for a, walk in zip(arrays, walks)
    ]


def label(index) -> str:
    return ",".join(map(str, index)) if index else "()"


@cache
def drawn(name: str):
    """Case `name`'s operands, their NumPy offset arrays, its picture and the picture's parts
    (each case is drawn once for all the tests that read it)."""
    _, make, dims, index, keepdim = next(case for case in CASES if case[0] == name)
    operands, arrays = make()
    picture = fold_walk_diagram(operands, dims, index, keepdim=keepdim)
    return operands, arrays, picture, parts(picture.svg)


def listed(offsets) -> str:
    """Offsets as an operand's caption lists them: all of up to 8, else the first 6, "…" and
    the last 2, with the count."""
    shown = [str(o) for o in offsets]
    if len(shown) > 8:
        return ", ".join([*shown[:6], "…", *shown[-2:]]) + f" ({len(shown)} steps)"
    return ", ".join(shown)


@pytest.mark.parametrize("name, make, dims, index, keepdim", CASES, ids=[c[0] for c in CASES])
def test_the_numbered_cells_are_the_cells_numpy_says_meet(name, make, dims, index, keepdim):
    operands, arrays, _, found = drawn(name)
    names = [chr(ord("a") + k) for k in range(len(operands))]
    for who, t, cells_read in zip(names, operands, cell_walk(arrays, dims, index, keepdim)):
        steps_of: dict[str, list[int]] = {}
        for step, key in enumerate(cells_read, start=1):
            steps_of.setdefault(key, []).append(step)
        badges, cells = named(found, f"step/{who}"), named(found, f"cell/{who}")
        assert sorted(badges) == sorted(steps_of), who
        for key, steps in steps_of.items():
            assert badges[key].texts == [",".join(map(str, steps))], (who, key)
            assert inside_box(badges[key].box, cells[key].box), (who, key)
        assert len(cells) == t.numel()
        for key, cell in cells.items():
            assert cell.fill == (HIGHLIGHT if key in steps_of else GREY), (who, key)
            assert cell.texts[0] == key


@pytest.mark.parametrize("name, make, dims, index, keepdim", CASES, ids=[c[0] for c in CASES])
def test_each_read_cell_points_at_the_storage_offset_numpy_gives(name, make, dims, index, keepdim):
    operands, arrays, picture, found = drawn(name)
    names = [chr(ord("a") + k) for k in range(len(operands))]
    offsets = expected_walk(arrays, dims, index, keepdim)
    cells_read = cell_walk(arrays, dims, index, keepdim)
    for who, walk, keys in zip(names, offsets, cells_read):
        cells, storage = named(found, f"cell/{who}"), named(found, f"storage/{who}")
        arrows = named(found, f"arrow/{who}")
        assert sorted(arrows) == sorted(set(keys))
        for key, offset in zip(keys, walk):
            start, end = arrows[key].arrow
            assert target_of(start, cells) == [key]
            assert target_of(end, storage) == [str(offset)], (who, key)
        lit = {key for key, part in storage.items() if part.fill == HIGHLIGHT}
        assert lit == {str(o) for o in walk}, who
        assert f"reads offsets {listed(walk)}" in picture.svg, who


@pytest.mark.parametrize("name, make, dims, index, keepdim", CASES, ids=[c[0] for c in CASES])
def test_each_operand_says_where_its_group_starts_and_its_rows(name, make, dims, index, keepdim):
    """The group starts at the first offset NumPy's walk reads; its rows run along the last
    reduced dim (one element when no dim is reduced), each a step apart."""
    operands, arrays, picture, _ = drawn(name)
    shape = np.broadcast_shapes(*(a.shape for a in arrays))
    axes = range(len(shape)) if dims is None else [dims] if isinstance(dims, int) else dims
    reduced = sorted(d % len(shape) for d in axes)
    row = shape[reduced[-1]] if reduced else 1
    for walk in expected_walk(arrays, dims, index, keepdim):
        rows = walk.reshape(-1, row)
        if rows.size == 1:
            assert f"group starts at {walk[0]}: one element" in picture.svg
            continue
        count = "1 row" if len(rows) == 1 else f"{len(rows)} rows"
        text = f"group starts at {walk[0]}: {count} of {row}"
        if row > 1:
            text += f", step {walk[1] - walk[0]}"
        if len(rows) > 1:
            text += f", at {listed(rows[:, 0]).replace('steps', 'rows')}"
        assert text in picture.svg, (name, text)


@pytest.mark.parametrize("name, make, dims, index, keepdim", CASES, ids=[c[0] for c in CASES])
def test_the_output_has_the_reduced_shape_and_one_cell_highlighted(name, make, dims, index,
                                                                    keepdim):  # fmt: skip
    _, arrays, picture, found = drawn(name)
    shape = np.broadcast_shapes(*(a.shape for a in arrays))
    axis = tuple(range(len(shape))) if dims is None else dims
    out_shape = np.zeros(shape).sum(axis=axis, keepdims=keepdim).shape
    outputs = named(found, "output")
    assert sorted(outputs) == sorted(label(i) for i in np.ndindex(out_shape))
    lit = [key for key, part in outputs.items() if part.fill == HIGHLIGHT]
    assert lit == [label(index)]
    assert f"out: shape {out_shape}" in picture.svg


def test_storage_planted_with_distinct_values_gives_back_the_values_that_meet():
    values = [[0.5, -1.25, 2.0], [3.5, 4.0, -6.0]]
    a = tenxor.tensor(values)
    b = tenxor.tensor([[7.0, 8.0], [9.0, 10.5], [11.0, -12.0]])
    picture = fold_walk_diagram([a.unsqueeze(-2), b.transpose(-1, -2).unsqueeze(-3)], -1, (1, 0))
    found = parts(picture.svg)
    expected = {"a": np.array(values)[1, :], "b": np.array(b.tolist())[:, 0]}
    for who, walk in expected.items():
        storage, arrows = named(found, f"storage/{who}"), named(found, f"arrow/{who}")
        read = {}
        for key, arrow in arrows.items():
            (offset,) = target_of(arrow.arrow[1], storage)
            read[named(found, f"step/{who}")[key].texts[0]] = float(storage[offset].texts[-1])
        assert [read[str(step)] for step in range(1, 4)] == list(walk), who


def test_the_caption_says_what_the_kernel_does():
    operands, _ = matmul()
    svg = fold_walk_diagram(operands, -1, (0, 1), names=["rows", "columns"]).svg
    assert "out[0, 1] = fold of combine(rows[0, 0, k], columns[0, 1, k]) for k = 0..2" in svg
    assert "3 pairs, combined one at a time into one accumulator" in svg
    operands, _ = attention_logits()
    svg = fold_walk_diagram(operands, -1, (1, 0), names=["receiver", "sender", "attention"]).svg
    assert "combine(receiver[1, 0, k], sender[0, 0, k], attention[k]) for k = 0..2" in svg
    assert "3 triples" in svg
    operands, _ = stretched()
    svg = fold_walk_diagram(operands, 1, (2,)).svg
    assert "out[2] = fold of combine(a[2, 0], b[k]) for k = 0..3" in svg
    assert "its one cell counts 4 times" in svg
    operands, _ = expanded_and_reversed()
    svg = fold_walk_diagram(operands, None, ()).svg
    assert "out = fold of combine(a[k, l], b[l]) for k = 0..2, l = 0..3 in row-major order" in svg
    assert "several cells read one offset" in svg and "each cell counts 3 times" in svg


def test_many_steps_on_one_cell_are_written_as_a_range_or_a_count():
    (c, _), (r, _) = pair((1, 1)), pair((2, 6))
    badges = named(parts(fold_walk_diagram([c, r], None, ()).svg), "step/a")
    assert badges["0,0"].texts == ["1–12"]
    (c, _), (r, _) = pair((5, 1)), pair((6,))
    badges = named(parts(fold_walk_diagram([c, r], None, ()).svg), "step/b")
    assert badges["0"].texts == ["×5"]  # steps 1, 7, 13, 19 and 25
    (c, _), (r, _) = pair((2, 1)), pair((6,))
    assert named(parts(fold_walk_diagram([r, c], 0, (0,)).svg), "step/a")["0"].texts == ["1,2"]


ERRORS = [
    (lambda: ([tenxor.zeros(2, 3), tenxor.zeros(3, 2)], -1, (0, 0)), ValueError,
     r"operands a \(2, 3\) and b \(3, 2\) cannot broadcast: dim -1 has sizes 2 and 3"),
    (lambda: (matmul()[0], 3, (0, 0)), IndexError,
     r"dim 3 is out of range for a tensor with 3 dims.*broadcast to shape \(2, 2, 3\)"),
    (lambda: (matmul()[0], (2, -1), (0, 0)), ValueError, r"dims \(2, -1\) name the same dim"),
    (lambda: (matmul()[0], -1, (0, 2)), IndexError,
     r"index \(0, 2\) does not fit the output shape \(2, 2\): entry 1 is 2, expected 0 to 1"),
    (lambda: (matmul()[0], -1, (0,)), IndexError,
     r"index \(0,\) has 1 entries, but the output of shape \(2, 2\) has 2 dims"),
    (lambda: (matmul()[0], -1, (0, 1, 1)), IndexError, r"output of shape \(2, 2\)"),
    (lambda: ([], -1, ()), ValueError, "needs at least one operand, got 0"),
    (lambda: ([tenxor.zeros(5, 13)], None, ()), DiagramTooLarge,
     r"operand a of shape \(5, 13\) has 65 cells.*up to 64"),
    (lambda: ([tenxor.zeros(8, 1), tenxor.zeros(9)], None, ()), DiagramTooLarge,
     r"the group of out \(dims \(0, 1\) of \(8, 9\)\) has 72 cells"),
]  # fmt: skip


@pytest.mark.parametrize("make, error, message", ERRORS)
def test_bad_arguments_are_refused_naming_the_offending_values(make, error, message):
    operands, dims, index = make()
    with pytest.raises(error, match=message):
        fold_walk_diagram(operands, dims, index)


def test_an_index_that_keeps_a_reduced_dim_must_read_0_there():
    with pytest.raises(IndexError, match=r"entry 2 is 1, expected 0 to 0.*kept as 1"):
        fold_walk_diagram(matmul()[0], -1, (0, 1, 1), keepdim=True)


def test_the_diagram_calls_no_exercise(monkeypatch):
    """Provided code never leans on an unfinished exercise: with every exercise function
    replaced by one that raises, wherever a tenxor module holds it, the diagram still draws."""
    operands, _ = attention_logits()

    def unfinished(*args, **kwargs):
        raise NotImplementedError("an exercise")

    functions = {(item.module, item.function) for item in CATALOG}
    originals = {getattr(sys.modules[m], f) for m, f in functions if m in sys.modules}
    for module in [m for name, m in sys.modules.items() if name.startswith("tenxor") and m]:
        for attribute, value in list(vars(module).items()):
            if callable(value) and any(value is original for original in originals):
                monkeypatch.setattr(module, attribute, unfinished)
    found = parts(fold_walk_diagram(operands, -1, (1, 0)).svg)
    assert len(named(found, "step/a")) == 3


def test_the_picture_renders_to_svg_and_png():
    operands, _ = matmul()
    picture = fold_walk_diagram(operands, -1, (0, 1))
    assert picture.svg.startswith("<svg") and parts(picture.svg)
    assert repr(picture).startswith("<diagram: out[0, 1] = fold of combine(a[0, 0, k]")
    assert picture.svg == fold_walk_diagram(operands, -1, (0, 1)).svg  # reproducible
    pytest.importorskip("cairosvg")
    assert picture.png().startswith(b"\x89PNG")


def inside_box(inner, outer) -> bool:
    """Whether box `inner` lies within box `outer`."""
    return (
        outer[0] <= inner[0]
        and inner[2] <= outer[2]
        and outer[1] <= inner[1]
        and (inner[3] <= outer[3])
    )


def test_tenxor_draw_fold_walk_writes_the_diagram_or_says_what_is_wrong(tmp_path, capsys):
    from tenxor.course.cli import main

    out = tmp_path / "walk.svg"
    rows, columns = "arange(6).view(2, 3).unsqueeze(-2)", "arange(6).view(3, 2).T.unsqueeze(-3)"
    assert main(["draw", "--fold-walk", rows, columns, "--index", "0,1", "-o", str(out)]) == 0
    assert sorted(named(parts(out.read_text()), "step/b")) == ["0,1,0", "0,1,1", "0,1,2"]
    for arguments, message in [
        (["--index", "0,2"], r"index (0, 2) does not fit the output shape (2, 2)"),
        (["--index", "0", "--dim", "3"], "dim 3 is out of range for a tensor with 3 dims"),
        ([], "--fold-walk needs --index"),
    ]:
        capsys.readouterr()
        code = main(["draw", "--fold-walk", rows, columns, *arguments, "-o", str(out)])
        error = capsys.readouterr().err
        assert code == 2 and message in error and "Traceback" not in error
