"""Stride diagrams checked against layout math: the SVG is read back and compared with NumPy.

Each tenxor tensor is built next to the same NumPy view of np.arange(n). Because the NumPy
base holds 0, 1, 2, ..., the value of the NumPy view at an index *is* the storage offset that
index reads: an oracle that owes nothing to tenxor or to the drawing code.
"""

from __future__ import annotations

import base64
import re
import subprocess
import sys
from decimal import Decimal

import numpy as np
import pytest

import tenxor
from tenxor.diagrams import (
    DiagramTooLarge,
    broadcast_diagram,
    bytes_diagram,
    gather_diagram,
    layout_diagram,
    reduction_diagram,
    view_diagram,
)
from tenxor.diagrams.render import Picture, PngUnavailable, side_by_side

from .svg_parts import inside, named, parts, target_of, whole

pytestmark = pytest.mark.provided

# (name, shape of the base, how to make the view in tenxor, the same in NumPy)
LAYOUTS = [
    ("row-major", (3, 4), lambda x: x, lambda a: a),
    ("transpose", (3, 4), lambda x: x.T, lambda a: a.T),
    ("permute 3-d", (2, 3, 4), lambda x: x.permute(2, 0, 1), lambda a: a.transpose(2, 0, 1)),
    ("step slice", (3, 4), lambda x: x[:, ::2], lambda a: a[:, ::2]),
    ("negative step", (6,), lambda x: x[::-1], lambda a: a[::-1]),
    ("negative step 2-d", (3, 4), lambda x: x[::-1, 1::2], lambda a: a[::-1, 1::2]),
    ("storage offset", (3, 4), lambda x: x[1:, 1:3], lambda a: a[1:, 1:3]),
    ("stride 0", (3, 1), lambda x: x.expand(3, 4), lambda a: np.broadcast_to(a, (3, 4))),
    ("stride 0 in front", (4,), lambda x: x.expand(2, 3, 4),
     lambda a: np.broadcast_to(a, (2, 3, 4))),
    ("four dims", (2, 2, 2, 3), lambda x: x, lambda a: a),
    ("0-d", (5,), lambda x: x[3], lambda a: a[3]),
]  # fmt: skip


def pair(shape, make, make_numpy):
    """The tenxor tensor and the NumPy array of offsets it should read."""
    count = int(np.prod(shape))
    return make(tenxor.arange(count).view(*shape)), make_numpy(np.arange(count).reshape(shape))


def label(index) -> str:
    return ",".join(map(str, index)) if index else "()"


@pytest.mark.parametrize("name, shape, make, make_numpy", LAYOUTS, ids=[c[0] for c in LAYOUTS])
def test_every_cell_points_at_the_storage_cell_of_its_offset(name, shape, make, make_numpy):
    t, offsets = pair(shape, make, make_numpy)
    found = parts(t.draw(arrows="all").svg)
    cells, storage, arrows = (named(found, r) for r in ("tensor", "storage", "arrow/tensor"))
    assert len(cells) == offsets.size == len(arrows)
    assert len(storage) == int(np.prod(shape))  # the whole (short) storage is drawn
    for index in np.ndindex(offsets.shape):
        key = label(index)
        start, end = arrows[key].arrow
        assert target_of(start, cells) == [key], f"arrow of {key} does not leave its cell"
        assert target_of(end, storage) == [str(offsets[index])], f"arrow of {key} misses"
        assert cells[key].fill == storage[str(offsets[index])].fill
        assert cells[key].texts[0] == key
        assert storage[str(offsets[index])].texts[0] == str(offsets[index])


@pytest.mark.parametrize("name, shape, make, make_numpy", LAYOUTS, ids=[c[0] for c in LAYOUTS])
def test_colours_tell_offsets_apart_and_unreached_storage_is_grey(name, shape, make, make_numpy):
    t, offsets = pair(shape, make, make_numpy)
    storage = named(parts(t.draw().svg), "storage")
    reached = {str(o) for o in offsets.flat}
    colours = {key: part.fill for key, part in storage.items()}
    assert len({colours[key] for key in reached}) == len(reached)
    assert {colours[key] for key in storage if key not in reached} <= {"#e4e4e4"}


def test_a_view_diagram_shares_one_storage_and_greys_what_the_view_skips():
    x, a = tenxor.arange(12).view(3, 4), np.arange(12).reshape(3, 4)
    found = parts(view_diagram(x, x[1:, 1:3], "x", "x[1:, 1:3]").svg)
    base, view, storage = (named(found, r) for r in ("base", "view", "storage"))
    arrows = named(found, "arrow/view")
    expected = a[1:, 1:3]
    assert len(base) == 12 and len(view) == expected.size == len(arrows)
    for index in np.ndindex(expected.shape):
        start, end = arrows[label(index)].arrow
        assert target_of(start, view) == [label(index)]
        assert target_of(end, storage) == [str(expected[index])]
    grey = {key for key, part in storage.items() if part.fill == "#e4e4e4"}
    assert grey == {str(o) for o in range(12)} - {str(o) for o in expected.flat}
    for index in np.ndindex(a.shape):
        assert base[label(index)].fill == storage[str(a[index])].fill


def test_a_view_diagram_refuses_a_copy():
    x = tenxor.arange(6).view(2, 3)
    with pytest.raises(ValueError, match="is a copy, not a view"):
        view_diagram(x, x.T.contiguous(), "x", "x.T.contiguous()")


def test_a_gather_copies_into_new_storage_in_the_colours_of_its_sources():
    x, a = tenxor.arange(12).view(3, 4), np.arange(12).reshape(3, 4)
    picked = a[:, [3, 0, 3]]
    found = parts(gather_diagram(x, 1, [3, 0, 3]).svg)
    storage, copy, result = (named(found, r) for r in ("storage", "copy", "result"))
    copies, reads = named(found, "arrow/copy"), named(found, "arrow/result")
    assert len(copy) == len(result) == picked.size
    for k, index in enumerate(np.ndindex(picked.shape)):
        source = str(picked[index])
        assert copy[str(k)].fill == storage[source].fill == result[label(index)].fill
        assert copy[str(k)].texts[-1] == source  # the copied value
        start, end = reads[label(index)].arrow
        assert target_of(start, result) == [label(index)] and target_of(end, copy) == [str(k)]
    for source, arrow in copies.items():  # one arrow per source cell that is read
        assert target_of(arrow.arrow[0], storage) == [source]
    assert set(copies) == {str(o) for o in picked.flat}


REDUCTIONS = [((3, 4), 1, False), ((3, 4), 0, False), ((2, 3, 4), 0, True), ((2, 3, 2), -1, False)]


@pytest.mark.parametrize("shape, dim, keepdim", REDUCTIONS)
def test_a_reduction_folds_each_input_cell_into_its_output_cell(shape, dim, keepdim):
    values = np.arange(int(np.prod(shape))).reshape(shape) * 1.5
    found = parts(reduction_diagram(shape, dim, list(values.flat), keepdim=keepdim).svg)
    inputs, outputs, folds = (named(found, r) for r in ("input", "output", "arrow/fold"))
    expected = values.sum(axis=dim, keepdims=keepdim)
    assert len(inputs) == values.size == len(folds) and len(outputs) == expected.size
    for index in np.ndindex(values.shape):
        target = list(index)
        if keepdim:
            target[dim] = 0
        else:
            del target[dim]
        start, end = folds[label(index)].arrow
        assert target_of(start, inputs) == [label(index)]
        assert target_of(end, outputs) == [label(tuple(target))]
        assert inputs[label(index)].fill == outputs[label(tuple(target))].fill
    for index in np.ndindex(expected.shape):
        assert float(outputs[label(index)].texts[-1]) == pytest.approx(expected[index], rel=1e-3)


@pytest.mark.parametrize("shapes", [((4, 3, 2), (3, 1)), ((8, 1, 6, 1), (7, 1, 5)),
                                    ((3, 1), (2,)), ((5,), (1,), (2, 1))])  # fmt: skip
def test_broadcasting_aligns_right_pads_and_marks_stretched_dims(shapes):
    found = parts(broadcast_diagram(*shapes).svg)
    result = np.broadcast_shapes(*shapes)
    ndim = len(result)
    names = [chr(ord("a") + k) for k in range(len(shapes))]
    for name, shape in zip(names, shapes):
        for dim in range(-ndim, 0):
            size = shape[dim] if -dim <= len(shape) else None
            kind = "padded" if size is None else "stretched" if size == 1 != result[dim] else "size"
            assert f"{kind}/{name}/{dim}" in found, (shape, dim, kind)
    texts = [found[f"result/result/{dim}"].texts[0] for dim in range(-ndim, 0)]
    assert tuple(int(t) for t in texts) == result
    assert not any(name.startswith("clash/") for name in found)
    assert "result size" in broadcast_diagram(*shapes).svg  # in the legend


def test_a_broadcasting_error_highlights_the_offending_dim():
    with pytest.raises(ValueError):
        np.broadcast_shapes((3, 2), (2, 3))
    picture = broadcast_diagram((3, 2), (2, 3))
    found = parts(picture.svg)
    clashes = {name for name in found if name.startswith("clash/")}
    assert clashes == {"clash/a/-1", "clash/b/-1", "clash/result/-1", "clash/a/-2",
                       "clash/b/-2", "clash/result/-2"}  # fmt: skip
    assert len({found[name].fill for name in clashes}) == 1
    assert "cannot broadcast: dim -1 has sizes 2 and 3" in picture.svg
    assert "result size" not in picture.svg  # no dim has a result, so the legend omits it


def bfloat16_bits(value: float) -> int:
    """The bfloat16 pattern of a float32 value, rounded to nearest even, computed here."""
    bits = int(np.array(value, dtype=np.float32).view(np.uint32))
    rounding = 0x7FFF + ((bits >> 16) & 1)
    return (bits + rounding) >> 16


def test_the_bytes_diagram_shows_each_dtypes_little_endian_bytes_and_bits():
    values = (1.0, 3.14159, -2.5)
    found = parts(bytes_diagram(values, ("float32", "bfloat16"), chosen=1).svg)
    float32 = np.array(values, dtype="<f4").tobytes()
    bfloat16 = b"".join(bfloat16_bits(v).to_bytes(2, "little") for v in values)
    for dtype, raw in (("float32", float32), ("bfloat16", bfloat16)):
        drawn = named(found, f"byte/{dtype}")
        assert [drawn[str(k)].texts[0] for k in range(len(drawn))] == [f"{b:02x}" for b in raw]
        size = len(raw) // 3
        bits = named(found, f"bit/{dtype}")
        expected = format(int.from_bytes(raw[size : 2 * size], "little"), f"0{8 * size}b")
        assert "".join(bits[str(k)].texts[0] for k in range(len(bits))) == expected
        assert bits["0"].fill != bits["1"].fill != bits["9"].fill  # sign, exponent, fraction


def bfloat16_value(bits: int) -> float:
    """The value a bfloat16 pattern holds: the float32 with the same top 16 bits."""
    return float(np.array(bits << 16, dtype=np.uint32).view(np.float32))


@pytest.mark.parametrize("values", [(1.0, 3.14159, -2.5), (0.1, 65519.0, -1e-3)])
def test_each_element_of_the_bytes_diagram_is_labelled_with_the_value_its_bytes_hold(values):
    """A label names the value the drawn bytes hold: exactly when it takes 8 significant digits
    or fewer, else a decimal that is stored as those very bytes."""
    svg = bytes_diagram(values, ("float32", "bfloat16"), chosen=1).svg
    labels = [re.fullmatch(r"(?:▲ )?\[(\d+)\] (\S+)", label.words) for label in whole(svg).labels]
    shown = [(int(found[1]), found[2]) for found in labels if found]
    assert [k for k, _ in shown] == [0, 1, 2, 0, 1, 2]
    kept = {
        "float32": [float(v) for v in np.array(values, dtype="<f4")],
        "bfloat16": [bfloat16_value(bfloat16_bits(v)) for v in values],
    }
    for (dtype, held), labelled in zip(kept.items(), (shown[:3], shown[3:])):
        for k, ((_, text), value) in enumerate(zip(labelled, held)):
            call = f"bytes_diagram({values}): element {k} as {dtype}"
            if dtype == "float32":
                back = float(np.array(float(text), dtype="<f4"))
            else:
                back = bfloat16_value(bfloat16_bits(float(text)))
            assert back == value, (
                f"{call} is labelled {text}, which is stored as {back!r}, but its bytes hold "
                f"{value!r}: a label names the value of the bytes drawn above it"
            )
            exact = Decimal(value).normalize()
            if len(exact.as_tuple().digits) <= 8:
                assert Decimal(text) == exact, (
                    f"{call} is labelled {text}, but its bytes hold exactly {exact}: a value of "
                    "8 significant digits or fewer is written exactly"
                )


def test_too_many_cells_are_refused_with_a_way_out():
    with pytest.raises(DiagramTooLarge, match=r"shape \(5, 13\) has 65 cells.*up to 64"):
        tenxor.zeros(5, 13).draw()
    assert len(named(parts(tenxor.zeros(5, 13).draw(max_cells=65).svg), "tensor")) == 65
    with pytest.raises(ValueError, match="arrows must be"):
        tenxor.zeros(2).draw(arrows="some")


def test_long_storage_is_drawn_around_the_offsets_the_layout_reads():
    found = parts(layout_diagram((2, 3), (40, 7), 5, storage_size=120).svg)
    offsets = 5 + 40 * np.arange(2)[:, None] + 7 * np.arange(3)[None, :]
    near = {o + d for o in offsets.flat for d in (-1, 0, 1)}
    assert set(named(found, "storage")) == {str(o) for o in near}
    arrows = named(found, "arrow/tensor")
    storage = named(found, "storage")
    for index in np.ndindex(offsets.shape):
        assert target_of(arrows[label(index)].arrow[1], storage) == [str(offsets[index])]


def test_a_layout_that_reads_outside_its_storage_is_refused():
    with pytest.raises(ValueError, match=r"reads offsets \[6, 7\] outside its storage of 6"):
        layout_diagram((2, 4), (4, 1), storage_size=6)


def test_chosen_arrows_only():
    t = tenxor.arange(24).view(2, 3, 4)
    assert set(named(parts(t.draw().svg), "arrow/tensor")) == {"0,0,0", "1,0,0", "0,1,0", "0,0,1"}
    assert set(named(parts(t.draw(arrows=[(1, 2, 3)]).svg), "arrow/tensor")) == {"1,2,3"}
    assert named(parts(t.draw(arrows="none").svg), "arrow/tensor") == {}


def test_a_picture_shows_as_an_img_with_a_fixed_text_repr():
    t = tenxor.arange(6).view(2, 3)
    first, second = t.draw(), t.draw()
    assert first.svg == second.svg and repr(first) == repr(second)
    assert repr(first) == "<diagram: t: shape (2, 3), strides (3, 1), offset 0, over a storage " \
        "of 6 elements>"  # fmt: skip
    html = first._repr_html_()
    assert html.startswith('<img src="data:image/svg+xml;base64,')
    encoded = html.split("base64,")[1].split('"')[0]
    assert base64.b64decode(encoded).decode() == first.svg
    assert not hasattr(first, "_repr_svg_")  # hidden in untrusted notebooks


def test_pictures_side_by_side_show_every_image_in_one_row():
    t = tenxor.arange(6).view(2, 3)
    pictures = (t.draw(name="t"), t.T.draw(name="t.T"))
    row = side_by_side(*pictures)
    assert repr(row) == f"{pictures[0]!r}\n{pictures[1]!r}"
    html = row._repr_html_()
    assert html.startswith('<div style="display: flex') and html.endswith("</div>")
    assert "nowrap" in html.split(">")[0]  # the row never breaks into a stack
    images = [base64.b64encode(p.svg.encode()).decode() for p in pictures]
    assert [html.find(image) for image in images] == sorted(html.find(i) for i in images)
    assert -1 not in [html.find(image) for image in images] and html.count("<img ") == 2


def test_importing_the_diagrams_leaves_logging_and_warnings_alone():
    script = (
        "import sys, warnings; from loguru import logger; "
        "handler = logger.add(sys.stderr, format='MINE {message}'); "
        "import tenxor; tenxor.arange(4).draw(); "
        "logger.info('still here')"
    )
    done = subprocess.run([sys.executable, "-W", "error", "-c", script],
                          capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "MINE still here" in done.stderr and done.stdout == ""


def test_png_output_is_an_image_of_the_diagram(tmp_path):
    from PIL import Image

    t = tenxor.arange(6).view(2, 3)
    picture = t.draw()
    fills = {part.fill for part in named(parts(picture.svg), "storage").values()}
    path = picture.save(tmp_path / "t.png")
    with Image.open(path) as image:
        assert image.format == "PNG" and image.width > 100
        pixels = image.width * image.height
        colours = image.convert("RGB").getcolors(maxcolors=pixels)
    counts = {"#{:02x}{:02x}{:02x}".format(*colour): count for count, colour in colours}
    dark = sum(count for colour, count in counts.items() if int(colour[1:3], 16) < 60)
    assert dark < 0.08 * pixels  # lines stay thin: no blocks of ink
    for fill in fills:  # every cell colour fills the inside of its cells
        assert counts.get(fill, 0) > 0.005 * pixels, fill


def test_png_without_cairo_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "cairosvg", None)
    with pytest.raises(PngUnavailable, match="pip install 'tenxor\\[png\\]'.*libcairo2"):
        Picture("<svg/>", "nothing").png()


def tenxor_draw(*arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tenxor.course.cli", "draw", *arguments],
                          capture_output=True, text=True)  # fmt: skip


@pytest.mark.parametrize(
    "arguments, role, count",
    [
        (["--shape", "3,4", "--strides", "1,3"], "tensor", 12),
        (["--tensor", "arange(12).view(3, 4)", "--view", "x[:, ::-1]"], "view", 12),
        (["--broadcast", "3,1", "2"], "stretched/a", 1),
        (["--reduce", "2,3", "--dim", "0"], "input", 6),
        (["--bytes", "1,2.5"], "byte/bfloat16", 4),
    ],
)
def test_tenxor_draw_writes_one_diagram(tmp_path, arguments, role, count):
    out = tmp_path / "figure.svg"
    done = tenxor_draw(*arguments, "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert len(named(parts(out.read_text()), role)) == count


@pytest.mark.parametrize(
    "arguments, message",
    [
        (["--shape", "3,4", "--strides", "1"], "shape (3, 4) has 2 dims but strides"),
        (["--tensor", "nonsense(", "-o", "x.svg"], "cannot evaluate 'nonsense('"),
        (["--tensor", "3", "-o", "x.svg"], "gives a int, not a tensor"),
        (["--tensor", "arange(64)", "--view", "x.view(2, 32)[[0]]", "-o", "x.svg"], "a copy"),
        (["--shape", "3,4", "-o", "x.txt"], "use a .svg or .png name"),
        (["--shape", "3,4"], "-o FILE.svg"),
        (["--shape", "3,x"], "expected ints separated by commas"),
        (["--view", "x.T", "-o", "x.svg"], "one of the arguments"),
    ],
)
def test_tenxor_draw_explains_bad_arguments_in_one_line(tmp_path, arguments, message):
    if "-o" not in arguments and "--strides" in arguments:
        arguments = [*arguments, "-o", str(tmp_path / "x.svg")]
    done = tenxor_draw(*arguments)
    assert done.returncode == 2 and message in done.stderr
    assert "Traceback" not in done.stderr


def test_an_arrow_really_ends_on_its_storage_cell_not_a_neighbour():
    """The geometry check itself can fail: a storage cell's neighbours do not hold the tip."""
    found = parts(tenxor.arange(4).draw().svg)
    storage = named(found, "storage")
    tip = named(found, "arrow/tensor")["2"].arrow[1]
    assert inside(tip, storage["2"].box)
    assert not inside(tip, storage["1"].box) and not inside(tip, storage["3"].box)
