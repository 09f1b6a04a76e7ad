"""Reading a diagram's SVG back: every named part with its geometry on the page.

The diagrams name their parts ("tensor/1,2", "storage/5", "arrow/tensor/1,2") with a
data-name attribute. This module composes the nested SVG transforms to find where each
part's box, arrow and text really end up, so tests can check the picture, not the code that
drew it. Text is measured with the font a browser on this machine draws it in (the system's
bold sans-serif, found with fontconfig and measured with Pillow), or estimated when that font
is missing.
"""

from __future__ import annotations

import functools
import math
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

SVG = "{http://www.w3.org/2000/svg}"
Matrix = tuple[float, float, float, float, float, float]  # SVG's (a, b, c, d, e, f)
IDENTITY: Matrix = (1, 0, 0, 1, 0, 0)
NUMBERS = re.compile(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?")
Point = tuple[float, float]
Box = tuple[float, float, float, float]  # left, top, right, bottom
ESTIMATED_WIDTH = 0.7  # of the font size per character, when no font can be measured


@dataclass(frozen=True)
class Label:
    """A text as drawn on the page: its words, the box it covers, its size in pixels and the
    names of the parts it belongs to (innermost last)."""

    words: str
    box: Box
    pixels: float
    owners: tuple[str, ...]


@dataclass
class Part:
    """A named group: its boxes (x0, y0, x1, y1, fill), its lines and its texts, on the page.

    `routes` holds every open path as the points it passes through (an arrow's shaft, bends
    and all); `lines` the first and last point of each, with its stroke in `strokes`."""

    boxes: list[tuple[float, float, float, float, str | None]] = field(default_factory=list)
    lines: list[tuple[tuple[float, float], tuple[float, float]]] = field(default_factory=list)
    strokes: list[tuple[str | None, float | None]] = field(default_factory=list)  # per line
    texts: list[str] = field(default_factory=list)
    routes: list[list[Point]] = field(default_factory=list)
    labels: list[Label] = field(default_factory=list)

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

    @property
    def route(self) -> list[Point]:
        """The points the arrow's shaft passes through, from its start to its tip."""
        return self.routes[0]


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
    return read(svg)[0]


def whole(svg: str) -> Part:
    """Everything a diagram draws, named or not, as one part."""
    return read(svg)[1]


def read(svg: str) -> tuple[dict[str, Part], Part]:
    """Every named part of a diagram by name, and everything it draws as one part."""
    found: dict[str, Part] = {}
    everything = Part()

    def walk(element: ET.Element, matrix: Matrix, fill: str | None, stroke: tuple,
             owners: list[tuple[str, Part]]) -> None:  # fmt: skip
        matrix = multiply(matrix, parse_transform(element.get("transform")))
        fill = fill_of(element.get("style")) or fill
        colour, width = stroke_of(element.get("style"))
        stroke = (colour or stroke[0], stroke[1] if width is None else width)
        name = element.get("data-name")
        if name is not None:
            found[name] = Part()
            owners = [*owners, (name, found[name])]
        tag = element.tag.removeprefix(SVG)
        if tag == "path":
            points, closed = path_points(element.get("d", ""))
            placed = [apply(matrix, x, y) for x, y in points]
            for _, owner in owners:
                if closed:
                    xs, ys = [p[0] for p in placed], [p[1] for p in placed]
                    owner.boxes.append((min(xs), min(ys), max(xs), max(ys), fill))
                elif len(placed) >= 2:
                    owner.lines.append((placed[0], placed[-1]))
                    owner.strokes.append(stroke)
                    owner.routes.append(placed)
        if tag == "text":
            drawn = placed_label(element, matrix, tuple(n for n, _ in owners[1:]))
            for _, owner in owners:
                owner.texts.append(element.text or "")
                owner.labels.append(drawn)
        for child in element:
            walk(child, matrix, fill, stroke, owners)

    walk(ET.fromstring(svg), IDENTITY, None, (None, None), [("", everything)])
    return found, everything


def placed_label(element: ET.Element, matrix: Matrix, owners: tuple[str, ...]) -> Label:
    """Where a <text> element's words end up on the page, and how big they are drawn."""
    style = element.get("style") or ""
    size = re.search(r"font-size:\s*([-\d.e]+)", style)
    scale = math.sqrt(abs(matrix[0] * matrix[3] - matrix[1] * matrix[2]))
    pixels = (float(size.group(1)) if size else 16.0) * scale
    words = element.text or ""
    x, y = apply(matrix, 0.0, 0.0)
    width = text_pixels(words, pixels)
    left = x if "text-anchor:start" in style.replace(" ", "") else x - width / 2
    return Label(words, (left, y - pixels / 2, left + width, y + pixels / 2), pixels, owners)


@functools.cache
def bold_font_file() -> str | None:
    """The file of the bold sans-serif font this machine draws text in, or None."""
    if shutil.which("fc-match") is None:
        return None
    done = subprocess.run(["fc-match", "-f", "%{file}", "sans-serif:bold"],
                          capture_output=True, text=True)  # fmt: skip
    return done.stdout.strip() or None


@functools.cache
def text_pixels(words: str, pixels: float) -> float:
    """How wide `words` are drawn at a font size of `pixels`."""
    path = bold_font_file()
    if path is not None:
        try:
            from PIL import ImageFont

            return ImageFont.truetype(path, 100).getlength(words) * pixels / 100
        except (ImportError, OSError):
            pass
    return ESTIMATED_WIDTH * pixels * len(words)


def page_width(svg: str) -> float:
    """The width the picture asks to be shown at, in pixels."""
    return float(ET.fromstring(svg).get("width"))


def segment_distance(point: Point, start: Point, end: Point) -> float:
    """The distance from `point` to the segment from `start` to `end`."""
    (px, py), (x0, y0), (x1, y1) = point, start, end
    dx, dy = x1 - x0, y1 - y0
    length = dx * dx + dy * dy
    t = 0.0 if length == 0 else max(0.0, min(1.0, ((px - x0) * dx + (py - y0) * dy) / length))
    return math.hypot(px - (x0 + t * dx), py - (y0 + t * dy))


def route_distance(point: Point, route: list[Point]) -> float:
    """The distance from `point` to the nearest segment of `route`."""
    return min(segment_distance(point, a, b) for a, b in zip(route, route[1:]))


def crosses_box(start: Point, end: Point, box: Box) -> bool:
    """Whether the segment from `start` to `end` passes through the inside of `box` (touching
    its outline does not count): a point of it lies inside, or it cuts a side of the box
    between that side's ends and goes on inside. Computed apart from the drawing code."""
    inside = lambda x, y: box[0] < x < box[2] and box[1] < y < box[3]  # noqa: E731
    if inside(*start) or inside(*end):
        return True
    middle = ((start[0] + end[0]) / 2, (start[1] + end[1]) / 2)
    corners = [(box[0], box[1]), (box[2], box[1]), (box[2], box[3]), (box[0], box[3])]
    crossings = [
        point
        for a, b in zip(corners, corners[1:] + corners[:1])
        if (point := meeting(start, end, a, b)) is not None
    ]
    # Two distinct crossings of the outline: the segment between them runs inside.
    return inside(*middle) or any(
        math.dist(p, q) > 1e-9 and inside((p[0] + q[0]) / 2, (p[1] + q[1]) / 2)
        for p in crossings
        for q in crossings
    )


def meeting(p: Point, q: Point, a: Point, b: Point) -> Point | None:
    """Where segment p-q meets segment a-b, if they meet at one point."""
    (rx, ry), (sx, sy) = (q[0] - p[0], q[1] - p[1]), (b[0] - a[0], b[1] - a[1])
    across = rx * sy - ry * sx
    if abs(across) < 1e-12:
        return None
    t = ((a[0] - p[0]) * sy - (a[1] - p[1]) * sx) / across
    u = ((a[0] - p[0]) * ry - (a[1] - p[1]) * rx) / across
    if -1e-12 <= t <= 1 + 1e-12 and -1e-12 <= u <= 1 + 1e-12:
        return (p[0] + t * rx, p[1] + t * ry)
    return None


def crosses_disc(start: Point, end: Point, centre: Point, radius: float) -> bool:
    """Whether the segment from `start` to `end` passes through the inside of a circle."""
    return segment_distance(centre, start, end) < radius


def shrunk(box: Box, by: float) -> Box:
    """`box` with each side moved `by` pixels inwards (outwards when `by` is negative)."""
    return box[0] + by, box[1] + by, box[2] - by, box[3] - by


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
