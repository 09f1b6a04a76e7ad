"""The grades of a batch as a CSV that Canvas's gradebook imports.

Canvas exports its gradebook as a CSV (the roster): one row per student with the columns
Student, ID, SIS User ID, SIS Login ID and Section, then one column per assignment, and a
second row "Points Possible". It imports a file of the same shape. Canvas writes a student's
name "Last, First"; submission folders are usually named "First Last". Each graded student
(named after their submission folder) is matched to a roster row by SIS Login ID, SIS User ID,
ID or name, the first of these that matches any row deciding, with Unicode normalised (NFC,
so a folder name in macOS's decomposed form matches), case folded and spaces collapsed; a
name matches as "Last, First" and as "First Last". A graded student that matches two rows, and
two graded students that match one row, are refused; a graded student matched by no row (with
the roster row closest to it), and a roster row matched by no graded student, are both
reported, never dropped in silence.

    export = canvas_export(recorded_results(Path("grades")), read_roster(Path("roster.csv")))
"""

from __future__ import annotations

import csv
import difflib
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .spreadsheet import csv_text

IDENTITY = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
MATCHED_BY = ("SIS Login ID", "SIS User ID", "ID", "Student")  # tried in this order
POINTS_POSSIBLE = "Points Possible"
ASSIGNMENT = "tenxor"  # the column's name: a new assignment, unless named "Name (id)"


class RosterError(ValueError):
    """A roster that is not a Canvas gradebook export."""


@dataclass
class CanvasExport:
    """The CSV for Canvas, and who could not be matched either way."""

    text: str
    not_in_roster: list[str] = field(default_factory=list)  # graded, matched by no row
    closest: dict[str, str] = field(default_factory=dict)  # each of those -> the closest row
    not_graded: list[str] = field(default_factory=list)  # roster rows with no grade


def read_roster(path: Path) -> list[dict[str, str]]:
    """The student rows of a Canvas gradebook export (its "Points Possible" row left out)."""
    with path.open(encoding="utf-8-sig", newline="") as stream:
        reader = csv.DictReader(stream)
        missing = [column for column in IDENTITY if column not in (reader.fieldnames or [])]
        if missing:
            raise RosterError(
                f"{path} is not a Canvas gradebook export: it has no column {', '.join(missing)} "
                f"(its columns: {', '.join(reader.fieldnames or [])})"
            )
        rows = [row for row in reader if row["Student"].strip() != POINTS_POSSIBLE]
    return [{column: (row[column] or "").strip() for column in IDENTITY} for row in rows]


def folded(text: str) -> str:
    """`text` as names and ids are compared: NFC, case folded, spaces collapsed.

    >>> folded("  Zoe\u0308   LEE ") == folded("zoë lee")
    True
    """
    return " ".join(unicodedata.normalize("NFC", text).casefold().split())


def name_key(name: str) -> str:
    """A name in the order "First Last", folded: Canvas's "Last, First" and a folder's
    "First Last" give the same key.

    >>> name_key("Lovelace, Ada") == name_key("ada lovelace")
    True
    """
    last, comma, first = name.partition(",")
    return folded(f"{first} {last}" if comma else name)


def keys_of(row: dict[str, str], column: str) -> set[str]:
    """What a student must be named to match a roster row by one column."""
    if not row[column]:
        return set()
    if column == "Student":
        return {folded(row[column]), name_key(row[column])}
    return {folded(row[column])}


def roster_row_of(student: str, roster: list[dict[str, str]]) -> int | None:
    """The position of the roster row that names `student`, or None; RosterError when the
    first column that matches any row matches several."""
    wanted = {folded(student), name_key(student)}
    for column in MATCHED_BY:
        found = [position for position, row in enumerate(roster) if wanted & keys_of(row, column)]
        if len(found) > 1:
            rows = "; ".join(row_in_words(roster[position]) for position in found)
            raise RosterError(
                f"{student} matches {len(found)} roster rows by {column}: {rows}; rename the "
                "submission folder after the student's SIS Login ID"
            )
        if found:
            return found[0]
    return None


def row_in_words(row: dict[str, str]) -> str:
    """A roster row as a TA finds it in Canvas: its name and ids."""
    ids = ", ".join(f"{column} {row[column]}" for column in IDENTITY[1:4] if row[column])
    return f"{row['Student']!r} ({ids})" if ids else repr(row["Student"])


def closest_row(student: str, roster: list[dict[str, str]]) -> str:
    """The roster row whose name or ids are most like `student`, in words ("" for none)."""
    wanted = name_key(student)

    def likeness(row: dict[str, str]) -> float:
        keys = set().union(*(keys_of(row, column) for column in MATCHED_BY))
        return max((difflib.SequenceMatcher(None, wanted, key).ratio() for key in keys), default=0)

    best = max(roster, key=likeness, default=None)
    return row_in_words(best) if best is not None else ""


def canvas_export(
    results: dict[str, dict[str, Any]], roster: list[dict[str, str]], assignment: str = ASSIGNMENT
) -> CanvasExport:
    """The Canvas CSV of a batch's `results` (student -> results.json) over `roster`: every
    roster row in order, with the student's total score, or empty when they were not graded
    (Canvas leaves an empty cell's grade as it was)."""
    scores: dict[int, float] = {}
    owners: dict[int, str] = {}  # roster row -> the graded student matched to it
    export = CanvasExport("")
    for student in sorted(results):
        position = roster_row_of(student, roster)
        if position is None:
            export.not_in_roster.append(student)
            export.closest[student] = closest_row(student, roster)
        elif position in owners:
            raise RosterError(
                f"{owners[position]} and {student} both match the roster's row "
                f"{row_in_words(roster[position])}; rename one submission folder"
            )
        else:
            scores[position], owners[position] = results[student]["score"], student
    most = max((r["extra_data"]["max_score"] for r in results.values()), default=0)
    table = [[*IDENTITY, assignment], [POINTS_POSSIBLE, "", "", "", "", f"{most:g}"]]
    for position, row in enumerate(roster):
        score = f"{scores[position]:g}" if position in scores else ""
        table.append([*(row[column] for column in IDENTITY), score])
        if position not in scores:
            export.not_graded.append(row["Student"] or row["SIS Login ID"] or row["ID"])
    export.text = csv_text(table)  # no cell starts a formula
    return export
