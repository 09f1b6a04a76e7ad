"""Join the output folders of a batch graded in shards into one: every student's files, one
record, one gradebook, as if the batch had been graded in one run.

    merge_shards([Path("grades-1"), Path("grades-2"), Path("grades-3")], Path("grades"))

Only results that grading recorded writing are taken, each from the shard whose share the
student is in; a set of shards that is not each share of one batch once (one missing, one
twice, shards dealt from batches that differ), or graded against another course, other
settings or other exercises, is refused.
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

from tenxor.course.catalog import BY_ID
from tenxor.course.files import write_atomically

from .batch import (
    GRADEBOOK,
    RECORD,
    RESULTS,
    SHARD_RECORD,
    UnrecordedResults,
    gradebook_csv,
    recorded_results,
)
from .fingerprints import COURSE_PARTS, text_digest
from .shards import Shard


class MergeError(ValueError):
    """Shard outputs that cannot be joined into one batch."""


def course_of(results: dict[str, Any]) -> tuple[Any, ...]:
    """What a student's results were graded against, apart from their own submission."""
    extra = results["extra_data"]
    fingerprint = extra.get("fingerprint", {})
    return (*(fingerprint.get(part) for part in COURSE_PARTS), *sorted(extra["exercises"]))


def shard_record(shard: Path) -> dict[str, Any]:
    """What a shard's output says it holds: its K/N, the whole batch and its share."""
    try:
        record = json.loads((shard / SHARD_RECORD).read_text(encoding="utf-8"))
        shard_of = Shard.parse(record["shard"])
        return {"shard": shard_of, "batch": list(record["batch"]), "share": list(record["share"])}
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise MergeError(
            f"{shard} is not the output of a shard (grade --shard K/N), or its "
            f"{SHARD_RECORD} is damaged: {error}"
        ) from None


def whole_set(records: list[dict[str, Any]]) -> None:
    """Refuse shards that are not each share, once, of one and the same batch."""
    counts = {record["shard"].count for record in records}
    if len(counts) > 1:
        raise MergeError(f"the shards split the batch into different numbers: {sorted(counts)}")
    (count,) = counts
    given = [record["shard"].index for record in records]
    twice = sorted({k for k in given if given.count(k) > 1})
    missing = sorted(set(range(1, count + 1)) - set(given))
    problems = [f"{k}/{count} given twice" for k in twice]
    problems += [f"{k}/{count} missing" for k in missing]
    if problems:
        raise MergeError(f"merge needs each of the {count} shards once: {', '.join(problems)}")
    batches = {tuple(record["batch"]) for record in records}
    if len(batches) > 1:
        seen = [set(batch) for batch in batches]
        differ = sorted(set.union(*seen) - set.intersection(*seen))
        raise MergeError(
            "the shards were dealt from different batches (a submission came or went between "
            f"them): {', '.join(differ[:10])}; grade every shard again with the same batch"
        )
    dealt = Counter(student for record in records for student in record["share"])
    (batch,) = batches
    astray = sorted({s for s, times in dealt.items() if times > 1} | (set(batch) - set(dealt)))
    if astray:
        raise MergeError(
            "the shards' shares are not one deal of the batch (students in two shares or in "
            f"none): {', '.join(astray[:10])}; grade every shard with the same --times-from"
        )


def joined(shards: list[Path]) -> dict[str, tuple[Path, dict[str, Any]]]:
    """Every student of the shards' shares with the shard that graded them and their
    results (students a shard's output holds from another share are left out)."""
    records = [shard_record(shard) for shard in shards]
    whole_set(records)
    students: dict[str, tuple[Path, dict[str, Any]]] = {}
    for shard, record in zip(shards, records):
        try:
            found = recorded_results(shard)
        except UnrecordedResults as error:
            raise MergeError(str(error)) from None
        for student in record["share"]:
            if student in found:
                students[student] = (shard, found[student])
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
