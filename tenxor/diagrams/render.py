"""Turning a chalk diagram into a Picture: SVG text, a notebook display and files.

Every shape that stands for something (a tensor cell, a storage cell, an arrow) is drawn with
a chalk name such as "tensor/1,2" or "storage/5"; the SVG writer below keeps that name as a
`data-name` attribute, so a test (or a curious learner) can find each part in the SVG.
"""

from __future__ import annotations

import base64
import html
import re
import warnings
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import svgwrite
from chalk.backend.svg import ToSVGShape

from .shapes import WHITE, ApplyName, BaseElement, Diagram, LeftText, Style, Text, ToSVG, box

PIXELS_PER_UNIT = 44  # one tensor cell is one unit wide
LINE_SCALE = 500  # chalk's reference size for line widths and arrow heads: fixed, so a
# big diagram does not get thicker lines than a small one
MARGIN = 0.4  # units of white space around a picture
NUMBER = re.compile(r"(?<![#\w.])-?\d+(?:\.\d+)?(?:e[-+]?\d+)?")
ROUNDED_ATTRIBUTES = ("transform", "d", "style", "points", "width", "height", "viewBox")
PNG_HELP = (
    "PNG output needs CairoSVG and the cairo library: pip install 'tenxor[png]', and on "
    "Debian or Ubuntu `apt-get install libcairo2` (Homebrew: `brew install cairo`)"
)


# Pictures in a row stay in one row: when they are wider together than the page, each shrinks
# by the same factor (flex-shrink weighs each by its width), and none grows past its own size.
ROW_STYLE = "display: flex; flex-wrap: nowrap; gap: 1em; align-items: flex-start"
ROW_IMAGE_STYLE = "flex: 1 1 {width}px; min-width: 0; max-width: {width}px; height: auto"
SVG_WIDTH = re.compile(r'<svg\b[^>]*?\swidth="([\d.]+)"')


class PngUnavailable(RuntimeError):
    """PNG output was asked for, but CairoSVG or the cairo library is missing."""


@dataclass(frozen=True)
class Picture:
    """A finished diagram: its SVG text and a one-line description of what it shows.

    In a notebook it displays as an image; its text repr is the description, so stored
    notebook outputs never change between runs.
    """

    svg: str
    description: str

    def __repr__(self) -> str:
        return f"<diagram: {self.description}>"

    def _repr_html_(self) -> str:
        return self.image_html("max-width: 100%")

    @property
    def width(self) -> float:
        """How wide the picture is drawn, in pixels."""
        found = SVG_WIDTH.search(self.svg)
        return float(found.group(1)) if found else 0.0

    def image_html(self, style: str) -> str:
        """The picture as an <img> with an SVG data URI and the CSS `style`."""
        data = base64.b64encode(self.svg.encode()).decode("ascii")
        return (
            f'<img src="data:image/svg+xml;base64,{data}" '
            f'alt="{html.escape(self.description)}" style="{style}">'
        )

    def png(self) -> bytes:
        """The picture as PNG bytes (needs CairoSVG and the cairo library)."""
        return svg_to_png(self.svg)

    def save(self, path: str | Path) -> Path:
        """Write the picture to `path`: SVG, or PNG when the name ends in .png."""
        path = Path(path)
        if path.suffix.lower() == ".png":
            path.write_bytes(self.png())
        elif path.suffix.lower() == ".svg":
            path.write_text(self.svg, encoding="utf-8")
        else:
            raise ValueError(f"cannot save a diagram as {path.name!r}: use a .svg or .png name")
        return path


@dataclass(frozen=True)
class Row:
    """Pictures shown next to each other in a notebook, in one row: when the page is narrower
    than all of them, each is shrunk by the same factor."""

    pictures: tuple[Picture, ...]

    def __repr__(self) -> str:
        return "\n".join(repr(picture) for picture in self.pictures)

    def _repr_html_(self) -> str:
        images = "".join(
            picture.image_html(ROW_IMAGE_STYLE.format(width=round(picture.width)))
            for picture in self.pictures
        )
        return f'<div style="{ROW_STYLE}">{images}</div>'


def side_by_side(*pictures: Picture) -> Row:
    """The pictures in one row, to compare layouts at a glance."""
    return Row(pictures)


class NamedSVG(ToSVG):
    """chalk's SVG writer, keeping each diagram name as a data-name attribute."""

    def __init__(self, drawing: svgwrite.Drawing) -> None:
        super().__init__(drawing)
        self.shape_renderer = NamedShapeSVG(drawing)

    def visit_apply_name(self, diagram: ApplyName, style: Style | None = None) -> BaseElement:
        group = self.dwg.g(**{"data-name": str(diagram.dname)})
        group.add(diagram.diagram.accept(self, style))
        return group


class NamedShapeSVG(ToSVGShape):
    """chalk's SVG writer for shapes, which also writes left-aligned text."""

    def visit_text(self, shape: Text, style: Style | None = None) -> BaseElement:
        element = super().visit_text(shape, style)
        if isinstance(shape, LeftText):
            element.attribs["transform"] = "translate(0, 0)"
            element.attribs["style"] = element.attribs["style"].replace(
                "text-anchor:middle", "text-anchor:start"
            )
        return element


def render(diagram: Diagram, description: str) -> Picture:
    """A Picture of `diagram` at a fixed scale of PIXELS_PER_UNIT, on a white background."""
    envelope = diagram.get_envelope()
    width = envelope.width + 2 * MARGIN
    height = envelope.height + 2 * MARGIN
    framed = box(width, height, fill=WHITE, line=WHITE) + diagram.center_xy()
    placed = framed.scale(PIXELS_PER_UNIT).translate(
        PIXELS_PER_UNIT * width / 2, PIXELS_PER_UNIT * height / 2
    )
    size = (round(PIXELS_PER_UNIT * width), round(PIXELS_PER_UNIT * height))
    drawing = svgwrite.Drawing(size=size, debug=False)
    drawing.set_desc(title=description)
    drawing.add(placed.accept(NamedSVG(drawing), Style.root(output_size=LINE_SCALE)))
    return Picture(tidy(drawing.tostring()), description)


def tidy(svg: str) -> str:
    """`svg` with its geometry rounded to 3 decimals, so output is short and reproducible."""
    root = ET.fromstring(svg)
    for element in root.iter():
        for name in ROUNDED_ATTRIBUTES:
            if name in element.attrib:
                element.attrib[name] = NUMBER.sub(round_number, element.attrib[name])
            if name == "style" and name in element.attrib:
                element.attrib[name] = " ".join(element.attrib[name].split())
    ET.register_namespace("", "http://www.w3.org/2000/svg")
    return ET.tostring(root, encoding="unicode") + "\n"


def round_number(match: re.Match[str]) -> str:
    """A number in an SVG attribute, rounded to 3 decimals without trailing zeros."""
    text = f"{float(match.group()):.3f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def svg_to_png(svg: str) -> bytes:
    """PNG bytes of `svg`, or PngUnavailable saying what to install."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import cairosvg
    except (ImportError, OSError) as error:
        raise PngUnavailable(f"{PNG_HELP} ({error})") from None
    return cairosvg.svg2png(bytestring=fixed_strokes(svg).encode("utf-8"))


STROKE = re.compile(r"stroke-width:\s*([-\d.e]+)")


def fixed_strokes(svg: str) -> str:
    """`svg` with stroke widths divided by the scale they are drawn at.

    Lines are drawn with `vector-effect: non-scaling-stroke`, which browsers honour and
    CairoSVG ignores; without this, a 1.5 px line inside a group scaled 44 times would come
    out 66 px wide.
    """
    root = ET.fromstring(svg)

    def walk(element: ET.Element, scale: float) -> None:
        scale *= transform_scale(element.get("transform", ""))
        style = element.get("style")
        if style:
            style = style.replace("vector-effect: non-scaling-stroke;", "")
            element.set(
                "style", STROKE.sub(lambda m: f"stroke-width: {float(m[1]) / scale:.4g}", style)
            )
        for child in element:
            walk(child, scale)

    walk(root, 1.0)
    return ET.tostring(root, encoding="unicode")


def transform_scale(transform: str) -> float:
    """How much a transform attribute scales lengths (the square root of its determinant)."""
    scale = 1.0
    for kind, arguments in re.findall(r"(\w+)\(([^)]*)\)", transform):
        values = [float(v) for v in NUMBER.findall(arguments)]
        if kind == "matrix":
            scale *= abs(values[0] * values[3] - values[1] * values[2]) ** 0.5
        elif kind == "scale":
            scale *= abs(values[0] * values[-1]) ** 0.5
    return scale or 1.0
