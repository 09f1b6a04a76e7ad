"""The grades of a batch as a CSV that Canvas's gradebook imports.

Canvas exports its gradebook as a CSV (the roster): one row per student with the columns
Student, ID, SIS User ID, SIS Login ID and Section, then one column per assignment, and a
second row "Points Possible". It imports a file of the same shape. Each graded student (named
after their submission folder) is matched to a roster row by SIS Login ID, SIS User ID, ID or
name, in that order and ignoring case; a graded student matched by no row, and a roster row
matched by no graded student, are both reported, never dropped in silence.

    export = canvas_export(recorded_results(Path("grades")), read_roster(Path("roster.csv")))
"""

from __future__ import annotations

import csv
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


def roster_row_of(student: str, roster: list[dict[str, str]]) -> int | None:
    """The position of the roster row that names `student`, or None."""
    wanted = student.strip().casefold()
    for column in MATCHED_BY:
        for position, row in enumerate(roster):
            if row[column] and row[column].casefold() == wanted:
                return position
    return None


def canvas_export(
    results: dict[str, dict[str, Any]], roster: list[dict[str, str]], assignment: str = ASSIGNMENT
) -> CanvasExport:
    """The Canvas CSV of a batch's `results` (student -> results.json) over `roster`: every
    roster row in order, with the student's total score, or empty when they were not graded
    (Canvas leaves an empty cell's grade as it was)."""
    scores: dict[int, float] = {}
    export = CanvasExport("")
    for student in sorted(results):
        position = roster_row_of(student, roster)
        if position is None:
            export.not_in_roster.append(student)
        elif position in scores:
            raise RosterError(
                f"{student} and another graded student both match the roster's row of "
                f"{roster[position]['Student']!r}; rename one submission folder"
            )
        else:
            scores[position] = results[student]["score"]
    most = max((r["extra_data"]["max_score"] for r in results.values()), default=0)
    table = [[*IDENTITY, assignment], [POINTS_POSSIBLE, "", "", "", "", f"{most:g}"]]
    for position, row in enumerate(roster):
        score = f"{scores[position]:g}" if position in scores else ""
        table.append([*(row[column] for column in IDENTITY), score])
        if position not in scores:
            export.not_graded.append(row["Student"] or row["SIS Login ID"] or row["ID"])
    export.text = csv_text(table)  # no cell starts a formula
    return export
