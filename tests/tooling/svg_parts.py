"""Reading a diagram's SVG back: every named part with its geometry on the page.

The diagrams name their parts ("tensor/1,2", "storage/5", "arrow/tensor/1,2") with a
data-name attribute. This module composes the nested SVG transforms to find where each
part's box and arrow really end up, so tests can check the picture, not the code that drew it.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

SVG = "{http://www.w3.org/2000/svg}"
Matrix = tuple[float, float, float, float, float, float]  # SVG's (a, b, c, d, e, f)
IDENTITY: Matrix = (1, 0, 0, 1, 0, 0)
NUMBERS = re.compile(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?")


@dataclass
class Part:
    """A named group: its boxes (x0, y0, x1, y1, fill), its lines and its texts, on the page."""

    boxes: list[tuple[float, float, float, float, str | None]] = field(default_factory=list)
    lines: list[tuple[tuple[float, float], tuple[float, float]]] = field(default_factory=list)
    strokes: list[tuple[str | None, float | None]] = field(default_factory=list)  # per line
    texts: list[str] = field(default_factory=list)

    @property
    def box(self) -> tuple[float, float, float, float]:
        """The first (outer) box of the part."""
        return self.boxes[0][:4]

    @property
    def fill(self) -> str | None:
        return self.boxes[0][4]

    @property
    def arrow(self) -> tuple[tuple[float, float], tuple[float, float]]:
        """Start and end of the arrow's shaft."""
        return self.lines[0]


def multiply(m: Matrix, n: Matrix) -> Matrix:
    """The transform that applies n, then m."""
    a, b, c, d, e, f = m
    p, q, r, s, t, u = n
    return (a * p + c * q, b * p + d * q, a * r + c * s, b * r + d * s,
            a * t + c * u + e, b * t + d * u + f)  # fmt: skip


def parse_transform(text: str | None) -> Matrix:
    """An SVG transform attribute (matrix, translate, scale; possibly several) as a matrix."""
    result = IDENTITY
    for kind, arguments in re.findall(r"(\w+)\(([^)]*)\)", text or ""):
        values = [float(v) for v in NUMBERS.findall(arguments)]
        if kind == "matrix":
            step = tuple(values)
        elif kind == "translate":
            step = (1, 0, 0, 1, values[0], values[1] if len(values) > 1 else 0)
        elif kind == "scale":
            step = (values[0], 0, 0, values[-1], 0, 0)
        else:
            raise ValueError(f"unexpected transform {kind}")
        result = multiply(result, step)
    return result


def apply(m: Matrix, x: float, y: float) -> tuple[float, float]:
    a, b, c, d, e, f = m
    return a * x + c * y + e, b * x + d * y + f


def path_points(d: str) -> tuple[list[tuple[float, float]], bool]:
    """The points a path passes through (segment and arc ends), and whether it is closed.

    A circle is drawn as four quarter arcs whose ends are its leftmost, topmost, rightmost and
    bottommost points, so its points span its box exactly.
    """
    points = []
    for command, arguments in re.findall(r"([MLAZ])([^MLAZ]*)", d.strip()):
        values = [float(v) for v in NUMBERS.findall(arguments)]
        if command == "A":  # rx ry rotation large-arc sweep x y: only the end is a point
            values = [v for k, v in enumerate(values) if k % 7 >= 5]
        points += list(zip(values[::2], values[1::2]))
    return points, d.strip().endswith("Z")


def fill_of(style: str | None) -> str | None:
    match = re.search(r"fill:\s*(#[0-9a-f]{6})", style or "")
    return match.group(1) if match else None


def stroke_of(style: str | None) -> tuple[str | None, float | None]:
    """The stroke colour and width a style sets (None for what it leaves unset)."""
    colour = re.search(r"stroke:\s*(#[0-9a-f]{6})", style or "")
    width = re.search(r"stroke-width:\s*([-\d.e]+)", style or "")
    return (colour.group(1) if colour else None, float(width.group(1)) if width else None)


def parts(svg: str) -> dict[str, Part]:
    """Every named part of a diagram, by name."""
    found: dict[str, Part] = {}

    def walk(element: ET.Element, matrix: Matrix, fill: str | None, stroke: tuple,
             owners: list[Part]) -> None:  # fmt: skip
        matrix = multiply(matrix, parse_transform(element.get("transform")))
        fill = fill_of(element.get("style")) or fill
        colour, width = stroke_of(element.get("style"))
        stroke = (colour or stroke[0], stroke[1] if width is None else width)
        name = element.get("data-name")
        if name is not None:
            found[name] = Part()
            owners = [*owners, found[name]]
        tag = element.tag.removeprefix(SVG)
        if tag == "path" and owners:
            points, closed = path_points(element.get("d", ""))
            placed = [apply(matrix, x, y) for x, y in points]
            for owner in owners:
                if closed:
                    xs, ys = [p[0] for p in placed], [p[1] for p in placed]
                    owner.boxes.append((min(xs), min(ys), max(xs), max(ys), fill))
                elif len(placed) == 2:
                    owner.lines.append((placed[0], placed[1]))
                    owner.strokes.append(stroke)
        if tag == "text" and owners:
            for owner in owners:
                owner.texts.append(element.text or "")
        for child in element:
            walk(child, matrix, fill, stroke, owners)

    walk(ET.fromstring(svg), IDENTITY, None, (None, None), [])
    return found


def inside(point: tuple[float, float], box: tuple[float, float, float, float], slack: float = 1.0):
    """Whether `point` lies in `box` (grown by `slack` pixels)."""
    x, y = point
    x0, y0, x1, y1 = box
    return x0 - slack <= x <= x1 + slack and y0 - slack <= y <= y1 + slack


def named(found: dict[str, Part], role: str) -> dict[str, Part]:
    """The parts whose name is "<role>/<key>", by key."""
    prefix = role + "/"
    return {name[len(prefix) :]: part for name, part in found.items() if name.startswith(prefix)}


def target_of(point: tuple[float, float], cells: dict[str, Part]) -> list[str]:
    """The keys of the cells whose box holds `point`."""
    return [key for key, part in cells.items() if inside(point, part.box)]
