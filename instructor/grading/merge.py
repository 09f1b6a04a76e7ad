"""Join the output folders of a batch graded in shards into one: every student's files, one
record, one gradebook, as if the batch had been graded in one run.

    merge_shards([Path("grades-1"), Path("grades-2"), Path("grades-3")], Path("grades"))

Only results that grading recorded writing are taken, each from the shard whose share the
student is in; shards that are not shares of one deal of one batch (one given twice, shards
of different numbers of shares or dealt from batches that differ), or graded against another
course, other settings or other exercises, are refused. So is a set that lacks part of the
batch (a shard, or students of a shard's share it holds no results for) unless the merge is
partial, which writes down what it lacks (MERGE_RECORD) for the class report to say.
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tenxor.course.catalog import BY_ID
from tenxor.course.files import write_atomically

from .batch import (
    GRADEBOOK,
    MERGE_RECORD,
    RECORD,
    RESULTS,
    SHARD_RECORD,
    UnrecordedResults,
    gradebook_csv,
    recorded_results,
    shown,
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


def one_deal(shards: list[Path], records: list[dict[str, Any]]) -> list[Shard]:
    """The shards of the deal that `shards` (with their `records`) come from that none of
    them holds; MergeError for shards of different deals: a different number of shares, one
    share given twice, different batches, or shares that overlap."""
    given = [(shard, record["shard"]) for shard, record in zip(shards, records)]
    if len({of.count for _, of in given}) > 1:
        said = ", ".join(f"{shard} is shard {of}" for shard, of in given)
        raise MergeError(f"the shards split the batch into different numbers of shares: {said}")
    count, held = given[0][1].count, Counter(of for _, of in given)
    twice = [
        f"shard {of} is given {times} times: {', '.join(str(s) for s, k in given if k == of)}"
        for of, times in sorted(held.items(), key=lambda item: item[0].index)
        if times > 1
    ]
    if twice:
        raise MergeError(f"merge takes each shard once: {'; '.join(twice)}")
    batches = {tuple(record["batch"]) for record in records}
    if len(batches) > 1:
        seen = [set(batch) for batch in batches]
        differ = sorted(set.union(*seen) - set.intersection(*seen))
        raise MergeError(
            "the shards were dealt from different batches (a submission came or went between "
            f"them): {', '.join(differ[:10])}; grade every shard again with the same batch"
        )
    missing = [Shard(k, count) for k in range(1, count + 1) if Shard(k, count) not in held]
    dealt = Counter(student for record in records for student in record["share"])
    astray = {s for s, times in dealt.items() if times > 1}
    if not missing:  # every share given: each student of the batch is in one
        astray |= set(records[0]["batch"]) - set(dealt)
    if astray:
        raise MergeError(
            "the shards' shares are not one deal of the batch (students in two shares or in "
            f"none): {', '.join(sorted(astray)[:10])}; grade every shard with the same "
            "--times-from"
        )
    return missing


@dataclass(frozen=True)
class Joined:
    """The students of a set of shards, each with the shard that graded them and their
    results, and what the set lacks of its batch (`missing`: one line each; `not_merged`:
    the students of the batch without results)."""

    students: dict[str, tuple[Path, dict[str, Any]]]
    missing: list[str]
    not_merged: list[str]


def joined(shards: list[Path]) -> Joined:
    """Every student of the shards' shares with the shard that graded them and their
    results (students a shard's output holds from another share are left out), and the
    shards and students of the batch that are not there."""
    records = [shard_record(shard) for shard in shards]
    missing = [f"shard {of} is missing" for of in one_deal(shards, records)]
    students: dict[str, tuple[Path, dict[str, Any]]] = {}
    for shard, record in zip(shards, records):
        try:
            found = recorded_results(shard)
        except UnrecordedResults as error:
            raise MergeError(str(error)) from None
        students.update({s: (shard, found[s]) for s in record["share"] if s in found})
        ungraded = [student for student in record["share"] if student not in found]
        if ungraded:
            missing.append(
                f"{shard} (shard {record['shard']}) holds no results for {len(ungraded)} of "
                f"the students of its share (grading stopped before them, or refused them): "
                f"{listed(ungraded)}"
            )
    courses = {course_of(results) for _, results in students.values()}
    if len(courses) > 1:
        raise MergeError(
            "the shards were graded against different tests, reference, settings or exercises; "
            "grade them again with the same course and options"
        )
    batch = records[0]["batch"]
    return Joined(students, missing, [student for student in batch if student not in students])


def listed(students: list[str], most: int = 10) -> str:
    """Students named, the first `most` of them and how many more."""
    more = f" and {len(students) - most} more" if len(students) > most else ""
    return ", ".join(map(shown, students[:most])) + more


def merge_shards(shards: list[Path], output: Path, partial: bool = False) -> Joined:
    """Write the students of `shards` into `output`: their files, the record and the
    gradebook; what was merged. A set of shards that lacks part of its batch (a shard, or
    students of a shard's share it holds no results for) is refused unless `partial`, and
    then what it lacks is written down in output/MERGE_RECORD."""
    merged = joined(shards)
    if merged.missing and not partial:
        raise MergeError(
            f"the shards do not hold the whole batch: {'; '.join(merged.missing)}. Grade what "
            "is missing and merge again, or merge --partial to merge what there is"
        )
    if output.exists() and any(output.iterdir()):
        raise MergeError(f"{output} is not empty: merge writes into a new folder")
    record, rows = {}, {}
    for student, (shard, results) in sorted(merged.students.items()):
        shutil.copytree(shard / student, output / student)
        record[student] = text_digest((shard / student / RESULTS).read_text(encoding="utf-8"))
        rows[student] = results
    write_atomically(output / RECORD, json.dumps(record, indent=1))
    if merged.missing:
        lacking = {"missing": merged.missing, "not_merged": merged.not_merged}
        write_atomically(output / MERGE_RECORD, json.dumps(lacking, indent=1))
    graded = sorted({e for r in rows.values() for e in r["extra_data"]["exercises"]},
                    key=list(BY_ID).index)  # fmt: skip
    write_atomically(output / GRADEBOOK, gradebook_csv(rows, graded))
    return merged


def partial_merge(output: Path, graded: Collection[str]) -> list[str]:
    """What a partial merge into `output` lacked that is still missing, one line each (none
    for an output that is no partial merge, or whose missing students have been `graded`
    since)."""
    try:
        lacking = json.loads((output / MERGE_RECORD).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return []
    except (OSError, ValueError) as error:
        return [f"{output / MERGE_RECORD} cannot be read: {error}"]
    absent = [student for student in lacking["not_merged"] if student not in graded]
    if not absent:
        return []
    return [*lacking["missing"], f"{len(absent)} students of the batch: {listed(absent)}"]
