"""The gallery's pictures render in a real browser, shown the way a notebook shows them."""

from __future__ import annotations

from pathlib import Path

import pytest

from tenxor.diagrams import Picture
from tenxor.diagrams.gallery import figures

from .browser import ink, screenshot

pytestmark = pytest.mark.provided

GALLERY = Path(__file__).resolve().parents[2] / "diagrams"
TILE = (640, 520)
COLUMNS = 3


def page_of(tiles: list[str]) -> str:
    """An HTML page with each tile's HTML in a fixed box of a grid."""
    boxes = []
    for k, content in enumerate(tiles):
        left, top = (k % COLUMNS) * TILE[0], (k // COLUMNS) * TILE[1]
        boxes.append(
            f'<div style="position:absolute; left:{left}px; top:{top}px; width:{TILE[0] - 20}px;'
            f' height:{TILE[1] - 20}px; overflow:hidden">{content}</div>'
        )
    return "<html><body style='margin:0; background:white'>" + "".join(boxes) + "</body></html>"


def test_every_gallery_picture_renders_in_chromium_as_a_notebook_shows_it(tmp_path):
    from PIL import Image

    shown = [Picture((GALLERY / f.name).read_text(), f.caption)._repr_html_() for f in figures()]
    tiles = [*shown, ""]  # the last tile is empty: it must come out blank
    page = tmp_path / "gallery.html"
    page.write_text(page_of(tiles).replace("max-width: 100%", "max-width: 100%; max-height: 100%"))
    rows = -(-len(tiles) // COLUMNS)
    shot = screenshot(page, tmp_path / "gallery.png", COLUMNS * TILE[0], rows * TILE[1])
    with Image.open(shot) as image:
        measured = []
        for k in range(len(tiles)):
            left, top = (k % COLUMNS) * TILE[0], (k // COLUMNS) * TILE[1]
            measured.append(ink(image, (left, top, left + TILE[0] - 20, top + TILE[1] - 20)))
    blank_share, blank_colours = measured[-1]
    assert blank_share == 0 and blank_colours == 1  # the measure sees an empty tile as empty
    for figure, (share, colours) in zip(figures(), measured):
        assert share > 0.03 and colours > 8, f"{figure.name} looks blank in Chromium"
