"""HTML pages read as a reader and a browser see them: their text, and their elements."""

from __future__ import annotations

from html.parser import HTMLParser

UNSEEN = ("style", "script", "title")  # elements whose content is not shown as text


class PageReader(HTMLParser):
    """The text of an HTML page (no markup, no style sheet) and every element it opens,
    with its attributes."""

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self.elements: list[tuple[str, dict[str, str | None]]] = []
        self.unseen = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, dict(attrs)))
        self.unseen += tag in UNSEEN

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, dict(attrs)))

    def handle_endtag(self, tag: str) -> None:
        self.unseen -= tag in UNSEEN

    def handle_data(self, data: str) -> None:
        if not self.unseen:
            self.parts.append(data)


def read_page(html: str) -> PageReader:
    reader = PageReader()
    reader.feed(html)
    reader.close()
    return reader


def page_text(html: str) -> str:
    """The text of an HTML page, its whitespace collapsed to single spaces."""
    return " ".join(" ".join(read_page(html).parts).split())


def elements_of(html: str) -> list[tuple[str, dict[str, str | None]]]:
    """Every element an HTML page opens, with its attributes, in order."""
    return read_page(html).elements
