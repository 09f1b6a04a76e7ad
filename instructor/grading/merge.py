"""Join the output folders of a batch graded in shards into one: every student's files, one
record, one gradebook, as if the batch had been graded in one run.

    merge_shards([Path("grades-1"), Path("grades-2"), Path("grades-3")], Path("grades"))

Only results that grading recorded writing are taken; shards graded against another course,
other settings or other exercises, and a student graded in two shards, are refused.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from tenxor.course.catalog import BY_ID

from .batch import (
    GRADEBOOK,
    RECORD,
    RESULTS,
    UnrecordedResults,
    gradebook_csv,
    recorded_results,
    write_atomically,
)
from .fingerprints import COURSE_PARTS, text_digest


class MergeError(ValueError):
    """Shard outputs that cannot be joined into one batch."""


def course_of(results: dict[str, Any]) -> tuple[Any, ...]:
    """What a student's results were graded against, apart from their own submission."""
    extra = results["extra_data"]
    fingerprint = extra.get("fingerprint", {})
    return (*(fingerprint.get(part) for part in COURSE_PARTS), *sorted(extra["exercises"]))


def joined(shards: list[Path]) -> dict[str, tuple[Path, dict[str, Any]]]:
    """Every student of the shards with the shard that graded them and their results."""
    students: dict[str, tuple[Path, dict[str, Any]]] = {}
    for shard in shards:
        try:
            found = recorded_results(shard)
        except UnrecordedResults as error:
            raise MergeError(str(error)) from None
        for student, results in found.items():
            if student in students:
                raise MergeError(
                    f"{student} was graded in two shards: {students[student][0]} and {shard}"
                )
            students[student] = (shard, results)
    courses = {course_of(results) for _, results in students.values()}
    if len(courses) > 1:
        raise MergeError(
            "the shards were graded against different tests, reference, settings or exercises; "
            "grade them again with the same course and options"
        )
    return students


def merge_shards(shards: list[Path], output: Path) -> Path:
    """Write the students of `shards` into `output`: their files, the record and the
    gradebook; the gradebook's path."""
    students = joined(shards)
    if output.exists() and any(output.iterdir()):
        raise MergeError(f"{output} is not empty: merge writes into a new folder")
    record, rows = {}, {}
    for student, (shard, results) in sorted(students.items()):
        shutil.copytree(shard / student, output / student)
        record[student] = text_digest((shard / student / RESULTS).read_text(encoding="utf-8"))
        rows[student] = results
    write_atomically(output / RECORD, json.dumps(record, indent=1))
    graded = sorted({e for r in rows.values() for e in r["extra_data"]["exercises"]},
                    key=list(BY_ID).index)  # fmt: skip
    gradebook = output / GRADEBOOK
    write_atomically(gradebook, gradebook_csv(rows, graded))
    return gradebook
