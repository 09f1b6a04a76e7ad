"""The drawing vocabulary of the diagrams: boxes, labels and arrows, on chalk-diagrams.

chalk is imported here and only here. Importing it reconfigures the global loguru logger
(removing every handler and printing to stdout); that side effect is suppressed, and so are
the warnings its imports raise, so drawing a diagram never changes a learner's logging.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from unittest import mock


def _import_chalk_quietly() -> None:
    """Import chalk without letting it touch loguru's handlers or raise warnings."""
    from loguru import logger

    with (
        warnings.catch_warnings(),
        mock.patch.object(logger, "remove"),
        mock.patch.object(logger, "add"),
    ):
        warnings.simplefilter("ignore")
        import chalk  # noqa: F401


_import_chalk_quietly()

from chalk import P2, ArrowOpts, circle, concat, make_path, rectangle, strut, text  # noqa: E402
from chalk.arrow import arrow_between  # noqa: E402
from chalk.backend.svg import ToSVG  # noqa: E402
from chalk.core import ApplyName, Primitive  # noqa: E402
from chalk.shapes.text import Text  # noqa: E402
from chalk.style import Style, WidthType  # noqa: E402
from chalk.types import Diagram  # noqa: E402
from colour import Color  # noqa: E402
from svgwrite.base import BaseElement  # noqa: E402

WHITE = "#ffffff"
INK = "#222222"  # lines and main labels
FAINT = "#8a8a8a"  # secondary labels
UNREACHED = "#e4e4e4"  # storage a layout never reads
CHARACTER_WIDTH = 0.62  # of the font size: an estimate for sans-serif bold text

__all__ = [
    "FAINT", "INK", "UNREACHED", "WHITE", "ApplyName", "BaseElement", "Diagram", "LeftText",
    "Style", "Text", "ToSVG", "text_width",
    "arrow", "box", "concat", "disc", "label", "nothing", "route_arrow",
]  # fmt: skip


def box(width: float, height: float, fill: str, line: str = INK, dashed: bool = False) -> Diagram:
    """A filled rectangle centred on the origin."""
    shape = rectangle(width, height).fill_color(Color(fill)).line_color(Color(line))
    return shape.dashing([4, 3], 0) if dashed else shape


def disc(radius: float, fill: str, line: str = INK) -> Diagram:
    """A filled circle centred on the origin."""
    return circle(radius).fill_color(Color(fill)).line_color(Color(line))


def text_width(words: str, size: float) -> float:
    """The estimated width of `words` at font size `size`."""
    return CHARACTER_WIDTH * size * len(words)


class LeftText(Text):
    """Text that starts at its origin instead of being centred on it."""


def label(words: str, size: float, colour: str = INK, align: str = "centre") -> Diagram:
    """Text centred on the origin (or starting there, with align="left").

    chalk gives text no extent, so an invisible strut of the estimated width is added: a
    picture is then sized to hold its labels.
    """
    width = text_width(words, size)
    if align == "left":
        shape = Primitive.from_shape(LeftText(words, font_size=size))
        space = strut(width, size).translate(width / 2, 0)
    else:
        shape, space = text(words, size), strut(width, size)
    return shape.fill_color(Color(colour)).line_width(0) + space


def arrow(
    start: tuple[float, float],
    end: tuple[float, float],
    colour: str = INK,
    width: float | None = None,
    dashed: bool = False,
) -> Diagram:
    """An arrow from `start` to `end`, its head touching `end`; `width` sets the shaft's line
    width (chalk's normalised units, 0.1 by default) and `dashed` dashes it."""
    shaft = Style(
        line_color_=Color(colour),
        line_width_=None if width is None else (WidthType.NORMALIZED, width),
        dashing_=([5, 4], 0) if dashed else None,
    )
    style = ArrowOpts(
        shaft_style=shaft,
        head_style=Style(fill_color_=Color(colour), line_color_=Color(colour)),
    )
    return arrow_between(P2(*start), P2(*end), style)


def route_arrow(
    points: Sequence[tuple[float, float]],
    colour: str = INK,
    head_length: float = 0.2,
    head_width: float = 0.22,
) -> Diagram:
    """An arrow along the line through `points`, bends and all, its head touching the last."""
    (x0, y0), (x1, y1) = points[-2], points[-1]
    length = math.hypot(x1 - x0, y1 - y0) or 1.0
    ux, uy = (x1 - x0) / length, (y1 - y0) / length
    base_x, base_y = x1 - ux * head_length, y1 - uy * head_length
    half = head_width / 2
    head = make_path(
        [(x1, y1), (base_x - uy * half, base_y + ux * half),
         (base_x + uy * half, base_y - ux * half)],
        closed=True,
    ).fill_color(Color(colour)).line_color(Color(colour)).line_width(0)  # fmt: skip
    shaft = make_path([tuple(point) for point in points]).line_color(Color(colour))
    return shaft + head


def nothing() -> Diagram:
    """The empty diagram."""
    return concat([])
