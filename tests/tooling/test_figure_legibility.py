"""Every figure of the course, read back from its SVG and checked for what a learner sees at the
width a notebook shows it: arrows that leave a cell from its edge and never run through another
cell or over a label, captions big enough to read, each attention weight beside its own arrow,
and figures meant to be compared shown side by side.

The figures are those of the gallery and every diagram the notebooks show, taken from the
notebooks' stored outputs (which nbval holds to what a fresh run draws): a figure a notebook
adds is checked without being listed here.
"""

from __future__ import annotations

import base64
import json
import math
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

from tenxor.diagrams.gallery import figures

from .browser import DevTools
from .svg_parts import (
    Part,
    crosses_box,
    crosses_disc,
    page_width,
    read,
    route_distance,
    shrunk,
)

pytestmark = pytest.mark.provided

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
SHOWN_WIDTH = 1000  # px: how wide a notebook's output area shows a figure
READABLE = 11.0  # px: the smallest text a learner reads without zooming
SLACK = 1.5  # px: how far a line may stray into a shape it only touches
# Parts whose texts are the labels of a cell (an index, an offset, a value, a step number):
# they are as big as a cell allows. Every other text is a caption and must be readable.
CELL_ROLES = {"tensor", "storage", "base", "view", "input", "output", "copy", "result", "cell",
              "step", "byte", "bit", "node"}  # fmt: skip
ARROW_ROLES = ("arrow/", "edge/")
IMAGE = re.compile(r'src="data:image/svg\+xml;base64,([^"]+)"')


@dataclass(frozen=True)
class Shown:
    """One output of a figure: where it comes from, its pictures' SVG and, for pictures shown
    in one row, the HTML of the row."""

    where: str
    svgs: tuple[str, ...]
    row: str | None = None


def arrows_of(found: dict[str, Part]) -> dict[str, Part]:
    """The arrows of a figure, by name."""
    return {name: part for name, part in found.items() if name.startswith(ARROW_ROLES)}


def shapes_of(found: dict[str, Part]) -> dict[str, Part]:
    """Every drawn shape that is not an arrow: cells, nodes, boxes, tags, bars."""
    return {name: part for name, part in found.items()
            if part.boxes and not name.startswith(ARROW_ROLES)}  # fmt: skip


def is_disc(name: str) -> bool:
    """Whether the part is drawn as a circle (a node of a graph)."""
    return name.startswith("node/")


def disc_of(part: Part) -> tuple[tuple[float, float], float]:
    """The centre and radius of a circle part."""
    x0, y0, x1, y1 = part.box
    return ((x0 + x1) / 2, (y0 + y1) / 2), (x1 - x0) / 2


def enters(start, end, name: str, part: Part, width: float) -> bool:
    """Whether a segment of line width `width` runs through the inside of a shape."""
    if is_disc(name):
        centre, radius = disc_of(part)
        return crosses_disc(start, end, centre, radius - SLACK - width / 2)
    return crosses_box(start, end, shrunk(part.box, SLACK + width / 2))


def on_outline(point, name: str, part: Part) -> bool:
    """Whether `point` lies on a shape's outline, neither inside it nor away from it."""
    x, y = point
    if is_disc(name):
        (cx, cy), radius = disc_of(part)
        return abs(math.hypot(x - cx, y - cy) - radius) <= SLACK
    outer, inner = shrunk(part.box, -SLACK), shrunk(part.box, SLACK)
    within = outer[0] <= x <= outer[2] and outer[1] <= y <= outer[3]
    deep = inner[0] < x < inner[2] and inner[1] < y < inner[3]
    return within and not deep


def stroke_width(part: Part) -> float:
    """The width in pixels of an arrow's shaft."""
    width = part.strokes[0][1] if part.strokes else None
    return 1.5 if width is None else width


def wrong_arrows(svg: str) -> list[str]:
    """What is wrong with the arrows of one picture, one line per fault."""
    found, everything = read(svg)
    shapes = shapes_of(found)
    faults = []
    for name, arrow in arrows_of(found).items():
        route, width = arrow.route, stroke_width(arrow)
        for end, point in (("starts", route[0]), ("ends", route[-1])):
            edges = [other for other, part in shapes.items() if on_outline(point, other, part)]
            inside = [other for other, part in shapes.items()
                      if enters(point, point, other, part, 0.0)]  # fmt: skip
            if inside or not edges:
                where = f"inside {', '.join(inside)}" if inside else "on no shape's edge"
                faults.append(f"{name} {end} at {rounded(point)}, {where}")
        for start, stop in zip(route, route[1:]):
            for other, part in shapes.items():
                if enters(start, stop, other, part, width):
                    faults.append(f"{name} runs through {other} from {rounded(start)} to "
                                  f"{rounded(stop)}")  # fmt: skip
            for label in everything.labels:
                if crosses_box(start, stop, shrunk(label.box, -width / 2)):
                    faults.append(f"{name} runs over the label {label.words!r} "
                                  f"({', '.join(label.owners) or 'a caption'})")  # fmt: skip
    return faults


def rounded(point) -> tuple[float, float]:
    return round(point[0], 1), round(point[1], 1)


def small_captions(svg: str, scale: float) -> list[str]:
    """The captions of a picture shown at `scale` that come out smaller than READABLE."""
    _, everything = read(svg)
    small = []
    for label in everything.labels:
        if any(owner.split("/")[0] in CELL_ROLES for owner in label.owners):
            continue
        shown = label.pixels * scale
        if shown < READABLE and label.words.strip():
            small.append(f"{label.words!r} at {shown:.1f} px")
    return small


def stray_weights(svg: str) -> list[str]:
    """The weight labels of a graph that are nearer another arrow than their own, far from
    their own, or over another label."""
    found, _ = read(svg)
    edges = {name.removeprefix("edge/"): part for name, part in found.items()
             if name.startswith("edge/")}  # fmt: skip
    tags = {name: part for name, part in found.items() if name.startswith(("weight/", "self/"))}
    faults = []
    for name, tag in tags.items():
        if not name.startswith("weight/"):
            continue
        key = name.removeprefix("weight/")
        x0, y0, x1, y1 = tag.labels[0].box
        centre = ((x0 + x1) / 2, (y0 + y1) / 2)
        own = route_distance(centre, edges[key].route)
        reach = math.hypot(x1 - x0, y1 - y0) / 2 + 12
        if own > reach:
            faults.append(f"{name} ({tag.texts[0]}) is {own:.0f} px from its arrow")
        for other, edge in edges.items():
            if other != key and route_distance(centre, edge.route) <= own:
                faults.append(f"{name} ({tag.texts[0]}) is as near edge/{other} as its own")
    boxes = {name: tag.labels[0].box for name, tag in tags.items()}
    names = sorted(boxes)
    for k, first in enumerate(names):
        for second in names[k + 1 :]:
            a, b = boxes[first], boxes[second]
            if min(a[2], b[2]) > max(a[0], b[0]) and min(a[3], b[3]) > max(a[1], b[1]):
                faults.append(f"{first} and {second} overlap")
    return faults


@cache
def gallery() -> dict[str, str]:
    """Each gallery figure's SVG, drawn afresh, by file name."""
    return {figure.name: figure.draw().svg for figure in figures()}


GALLERY = [figure.name for figure in figures()]


@pytest.fixture(scope="module")
def shown_in_notebooks() -> dict[str, list[Shown]]:
    """Every figure the notebooks show, by notebook, as their stored outputs hold it: the
    notebooks' nbval run compares every stored output, SVG figures included, with the output
    of the notebook run afresh, so these are the figures a learner's run draws."""
    return {path.stem: figures_shown(path) for path in NOTEBOOKS}


def figures_shown(path: Path) -> list[Shown]:
    """The figures a notebook shows, cell by cell."""
    shown = []
    cells = json.loads(path.read_text())["cells"]
    for number, cell in enumerate(cells):
        for output in cell.get("outputs", []):
            html = output.get("data", {}).get("text/html", "")
            html = "".join(html) if isinstance(html, list) else html
            svgs = tuple(base64.b64decode(data).decode() for data in IMAGE.findall(html))
            if svgs:
                row = html if html.startswith("<div") else None
                shown.append(Shown(f"{path.stem} cell {number}", svgs, row))
    return shown


def pictures(shown: list[Shown]) -> list[tuple[str, str]]:
    """Each picture of a notebook's figures, with where it is shown."""
    return [(f"{figure.where}, picture {k + 1}", svg) for figure in shown
            for k, svg in enumerate(figure.svgs)]  # fmt: skip


def shown_scale(svg: str) -> float:
    """How much a figure shown alone is shrunk to fit the notebook's width."""
    return min(1.0, SHOWN_WIDTH / page_width(svg))


@pytest.mark.parametrize("name", GALLERY)
def test_arrows_leave_and_reach_cells_at_their_edges_and_cross_no_cell_or_label(name):
    faults = wrong_arrows(gallery()[name])
    assert not faults, f"{name}:\n" + "\n".join(faults)


@pytest.mark.parametrize("name", GALLERY)
def test_captions_are_readable_at_the_width_a_notebook_shows_the_figure(name):
    svg = gallery()[name]
    small = small_captions(svg, shown_scale(svg))
    assert not small, (
        f"{name}, {page_width(svg):.0f} px wide, shown at {SHOWN_WIDTH} px: captions under "
        f"{READABLE} px: " + "; ".join(small)
    )


@pytest.mark.parametrize("name", GALLERY)
def test_each_attention_weight_sits_beside_its_own_arrow(name):
    faults = stray_weights(gallery()[name])
    assert not faults, f"{name}:\n" + "\n".join(faults)


@pytest.mark.parametrize("notebook", [path.stem for path in NOTEBOOKS])
def test_the_notebooks_figures_keep_their_arrows_captions_and_weights_in_order(
    notebook, shown_in_notebooks
):
    faults = []
    for where, svg in pictures(shown_in_notebooks[notebook]):
        faults += [f"{where}: {fault}" for fault in wrong_arrows(svg)]
        faults += [f"{where}: {fault}" for fault in stray_weights(svg)]
        alone = [figure for figure in shown_in_notebooks[notebook] if figure.row is None]
        if any(svg in figure.svgs for figure in alone):
            small = small_captions(svg, shown_scale(svg))
            faults += [f"{where}: caption {caption}" for caption in small]
    assert not faults, "\n".join(faults)


ROW_PAGE = """<!doctype html><html><body style="margin: 0; font-size: 14px">{rows}</body></html>"""


def test_figures_shown_side_by_side_stay_side_by_side_and_readable_at_1000_px(
    shown_in_notebooks, tmp_path
):
    rows = [figure for shown in shown_in_notebooks.values() for figure in shown
            if figure.row is not None and len(figure.svgs) > 1]  # fmt: skip
    assert rows, "no notebook shows pictures side by side"
    page = tmp_path / "rows.html"
    page.write_text(ROW_PAGE.format(rows="".join(
        f'<div class="output" style="width: {SHOWN_WIDTH}px; margin-bottom: 40px">{figure.row}'
        "</div>" for figure in rows)))  # fmt: skip
    browser = DevTools(tmp_path / "profile", width=SHOWN_WIDTH + 200, height=900)
    try:
        browser.call("Page.enable")
        browser.call("Page.navigate", url=page.as_uri())
        complete = "Array.from(document.images).every(image => image.complete)"
        assert browser.wait_for(f"document.readyState === 'complete' && {complete}", 60)
        placed = browser.evaluate(
            "Array.from(document.querySelectorAll('.output')).map(output => {"
            " const frame = output.getBoundingClientRect();"
            " return Array.from(output.querySelectorAll('img')).map(image => {"
            "  const box = image.getBoundingClientRect();"
            "  return [box.left - frame.left, box.top - frame.top, box.width,"
            "          image.naturalWidth]; }); })"
        )
    finally:
        browser.close()
    faults = []
    for figure, images in zip(rows, placed):
        tops = {round(top) for _, top, _, _ in images}
        right = max(left + width for left, _, width, _ in images)
        if len(tops) > 1 or right > SHOWN_WIDTH + 1:
            widths = " + ".join(str(natural) for *_, natural in images)
            faults.append(
                f"{figure.where}: pictures {widths} px wide are not side by side in "
                f"{SHOWN_WIDTH} px (tops at {sorted(tops)}, right edge at {right:.0f})"
            )
            continue  # fmt: skip
        for k, (svg, (_, _, width, natural)) in enumerate(zip(figure.svgs, images)):
            small = small_captions(svg, width / natural)
            faults += [f"{figure.where}, picture {k + 1} (shown at {width / natural:.2f}): "
                       f"caption {caption}" for caption in small]  # fmt: skip
    assert not faults, "\n".join(faults)


def drawn_by_the_other_diagram_tests() -> dict[str, str]:
    """The pictures the other diagram tests draw, by what they show: every layout over its
    storage and as a view of its base, its runs, every fold walk and every reduction."""
    import tenxor
    from tenxor.diagrams import (
        fold_walk_diagram,
        gather_diagram,
        reduction_diagram,
        runs_diagram,
        view_diagram,
    )

    from . import test_diagrams, test_fold_walk_diagram, test_runs_diagram

    drawn = {}
    for name, shape, make, make_numpy in test_diagrams.LAYOUTS:
        t, _ = test_diagrams.pair(shape, make, make_numpy)
        drawn[f"layout {name}"] = t.draw(arrows="all").svg
        base = tenxor.arange(len(t.storage.data)).view(*shape)
        drawn[f"view {name}"] = view_diagram(base, make(base), "x", name).svg
    for name, shape, make, make_numpy in test_runs_diagram.LAYOUTS:
        t, _ = test_runs_diagram.pair(shape, make, make_numpy)
        drawn[f"runs {name}"] = runs_diagram(t.shape, t.strides, t.offset, len(t.storage.data),
                                             t.storage.data, arrows="all").svg  # fmt: skip
    for name, make, dims, index, keepdim in test_fold_walk_diagram.CASES:
        operands, _ = make()
        drawn[f"fold walk {name}"] = fold_walk_diagram(operands, dims, index,
                                                       keepdim=keepdim).svg  # fmt: skip
    for shape, dim, keepdim in test_diagrams.REDUCTIONS:
        drawn[f"reduction {shape} {dim} {keepdim}"] = reduction_diagram(
            shape, dim, keepdim=keepdim
        ).svg
    drawn["gather"] = gather_diagram(tenxor.arange(12).view(3, 4), 1, [3, 0, 3]).svg
    return drawn


def test_the_other_diagram_tests_pictures_keep_their_arrows_off_cells_and_labels():
    faults = []
    for what, svg in drawn_by_the_other_diagram_tests().items():
        faults += [f"{what}: {fault}" for fault in wrong_arrows(svg)]
    assert not faults, "\n".join(faults)
