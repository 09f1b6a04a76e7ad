"""CSV that every spreadsheet opens as data: no cell grading writes can start a formula.

A student chooses their folder's name, and a roster's names come from wherever Canvas got
them. Excel, LibreOffice and Google Sheets run a cell that starts with `=`, `+`, `-` or `@`
(or a tab or carriage return before one) as a formula, `=HYPERLINK(...)` included. Such a
cell gets a leading apostrophe, OWASP's rule for CSV injection: the spreadsheet shows it as
text, apostrophe included, and runs nothing:

    >>> csv_text([["student", "total"], ["=HYPERLINK(\\"x\\")", "3"], ["ada", "2.5"]])
    'student,total\\r\\n"\\'=HYPERLINK(""x"")",3\\r\\nada,2.5\\r\\n'

Lines end in CRLF, as RFC 4180 and Excel have them: so a cell holding a carriage return or a
line feed is quoted, and every reader finds the same cells.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(value: object) -> str:
    """The text of a cell, with an apostrophe before it when it would start a formula."""
    text = str(value)
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def csv_text(rows: Iterable[Iterable[object]]) -> str:
    """The rows as CSV, every cell a safe_cell."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerows([safe_cell(cell) for cell in row] for row in rows)
    return buffer.getvalue()
