"""A batch: every student's submission graded into output/<student>/results.json and one
output/gradebook.csv, with a progress bar, resuming where an interrupted batch stopped."""

from __future__ import annotations

import copy
import json
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from instructor.authoring.release import stubbed_source
from instructor.sandbox.interface import SandboxLimits, SandboxMode, protections_in_brief
from tenxor.course.catalog import BY_ID, CATALOG
from tenxor.course.engine import Run, record_not_run
from tenxor.course.files import partial_files, write_atomically

from .credit import DEFAULT_CREDIT, Credit
from .fingerprints import (
    COURSE_PARTS,
    Fingerprint,
    course_fingerprint,
    exercise_fingerprints,
    exercise_tests,
    module_needs,
    text_digest,
)
from .gradescope import results_json
from .intake import (
    EXERCISE_MODULES,
    Assembly,
    assemble,
    module_digests,
    modules_digest,
    work_of,
)
from .judge_run import (
    Judges,
    JudgesStopped,
    record_examples,
    reference_tests,
    run_judge,
    run_judges,
    set_aside_broken,
)
from .setup import GRADING_LIMITS, GradingSetup, grading_setup
from .shards import Shard, timed
from .spreadsheet import csv_text
from .student_report import report_html

RECORD = ".grading-record.json"  # what grading wrote, to resume only from its own results
SHARD_RECORD = ".shard.json"  # which share of which batch a shard's output holds
MERGE_RECORD = ".merge.json"  # what a partial merge of shards lacked of the batch
GRADEBOOK = "gradebook.csv"
RESULTS = "results.json"
REPORT = "report.html"  # the student's own page, beside their results.json
CLASS_REPORT = "class-report.html"  # tenxor-instructor report's page, in the output folder
CANVAS = "canvas.csv"  # tenxor-instructor export's Canvas import, in the output folder
OUTPUT_FILES = frozenset(
    {GRADEBOOK, RESULTS, RECORD, SHARD_RECORD, MERGE_RECORD, REPORT, CLASS_REPORT, CANVAS}
)
GROUP_LARGEST = 16  # students one judge grades in turn (collecting the tests once for all)


def unfinished_writes(output: Path) -> list[Path]:
    """The temporary files of writes that were cut short (grading killed between writing one
    and putting it in place), in the output folder and its students' folders."""
    folders = [output, *(path for path in output.glob("*") if path.is_dir())]
    return sorted(path for folder in folders for name in OUTPUT_FILES
                  for path in partial_files(folder, name))  # fmt: skip


def gradebook_csv(rows: dict[str, dict[str, Any]], selection: list[str]) -> str:
    """The gradebook: one row per student, one column per exercise, total and max (no cell
    starts a formula, whatever a student named their folder)."""
    table = [["student", *selection, "total", "max", "graded_at", "fingerprint"]]
    for student in sorted(rows):
        results = rows[student]
        extra = results["extra_data"]
        cells = [f"{extra['exercises'].get(exercise_id, 0):g}" for exercise_id in selection]
        graded = [extra.get("graded_at", ""), extra.get("fingerprint", {}).get("short", "")]
        table.append([shown(student), *cells, f"{results['score']:g}", extra["max_score"], *graded])
    return csv_text(table)


class UnrecordedResults(ValueError):
    """An output folder whose results grading did not record writing."""


def recorded_text(path: Path, digest: str | None) -> str | None:
    """The text of a results file if it is exactly what grading recorded writing (`digest`),
    else None."""
    text = path.read_text(encoding="utf-8") if path.is_file() else None
    return text if text is not None and text_digest(text) == digest else None


def recorded_results(output: Path) -> dict[str, dict[str, Any]]:
    """The results of each student of a batch's output folder, as grading recorded writing
    them; UnrecordedResults if the record is missing or a results file differs from it."""
    try:
        record = json.loads((output / RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise UnrecordedResults(f"{output} holds no grading record ({RECORD}): {error}") from None
    found = {}
    for student, digest in sorted(record.items()):
        path = output / student / RESULTS
        text = recorded_text(path, digest)
        if text is None:
            raise UnrecordedResults(f"{path} is not the results file grading wrote for {student}")
        found[student] = json.loads(text)
    return found


class ProgressBar:
    """A one-line progress bar on stderr (one line per step when not on a terminal), with an
    estimate of the time left."""

    def __init__(self, total: int, stream: Any = None) -> None:
        self.total, self.done, self.stream = total, 0, stream or sys.stderr
        self.started = time.monotonic()

    def step(self, label: str) -> None:
        self.done += 1
        width = 30
        filled = width * self.done // max(self.total, 1)
        elapsed = time.monotonic() - self.started
        bar = "#" * filled + "." * (width - filled)
        left = time_left(elapsed, self.done, self.total)
        line = f"[{bar}] {self.done}/{self.total} {elapsed:5.0f} s, {left}  {label}"
        if self.stream.isatty():
            end = "\n" if self.done == self.total else ""
            self.stream.write("\r" + line[:120].ljust(120) + end)
        else:
            self.stream.write(line + "\n")
        self.stream.flush()


def time_left(elapsed: float, done: int, total: int) -> str:
    """The time left, in words, at the pace so far: `done` of `total` took `elapsed` s."""
    if done >= total:
        return "done"
    seconds = elapsed / max(done, 1) * (total - done)
    return f"about {seconds / 60:.0f} min left" if seconds >= 90 else f"about {seconds:.0f} s left"


def summary(
    graded: dict[str, dict[str, Any]], kept: int, refused: dict[str, str], slowest: int = 3
) -> list[str]:
    """What a batch did, for the instructor: how many students it graded (and their mean
    score), kept from before and refused (with why), and whose grading took longest."""
    lines = [f"Graded {len(graded)} students, kept {kept} graded before, refused {len(refused)}."]
    if graded:
        mean = sum(r["score"] for r in graded.values()) / len(graded)
        lines.append(f"Mean score of those graded: {mean:.1f}.")
    lines += [f"Refused: {shown(student)}: {why}." for student, why in sorted(refused.items())]
    seconds = {student: results.get("execution_time", 0) for student, results in graded.items()}
    longest = sorted(seconds, key=lambda student: -seconds[student])[:slowest]
    if longest:
        named = ", ".join(f"{shown(student)} {seconds[student]:.0f} s" for student in longest)
        lines.append(f"Slowest: {named}.")
    return lines


def students_in(folder: Path) -> dict[str, Path]:
    """The submissions of a batch: each sub-folder is one student, named after it (a link
    to a folder too, which the batch then refuses to grade)."""
    return {
        path.name: path
        for path in sorted(folder.iterdir())
        if path.is_dir() and not path.name.startswith(".")
    }


def shown(name: str) -> str:
    """A student's name as text every output can hold: the bytes of a folder name that are
    not UTF-8 written as escapes (b"ad\\xffa" is shown as "ad\\\\xffa")."""
    try:
        data = name.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a lone surrogate that no file name decodes to
        data = name.encode("utf-8", "surrogatepass")
    return data.decode("utf-8", "backslashreplace")


def failed_run(expected: dict[str, str], error: Exception) -> Run:
    """The run of a submission whose grading failed with `error` (none of its tests ran)."""
    run = Run(collected=dict(expected), problem=f"grading it failed: {error!r}"[:500])
    record_not_run(run, "grading this submission failed")
    return run


OnGraded = Callable[[str, dict[str, Any]], None]  # called with each student's results as they come


def grade_group(
    setup: GradingSetup,
    folders: dict[str, Path],
    expected: dict[str, str],
    on_graded: OnGraded,
    credit: Credit = DEFAULT_CREDIT,
) -> None:
    """Grade the submission folders of some students against the `expected` tests, in one
    judge, partial credit by the `credit` rule; hand each student's Gradescope results to
    `on_graded` as soon as they are known."""
    slot = setup.slots.get()
    assemblies = {student: Assembly(folder) for student, folder in folders.items()}
    kept: set[str] = set()

    def settle(student: str, run: Run) -> None:
        assembly = assemblies[student]
        kept.add(student)
        limits, mode = setup.limits, setup.mode
        on_graded(student, results_json(expected, run, assembly, limits, mode, run.seconds, credit))

    try:
        with tempfile.TemporaryDirectory(prefix="submissions-", dir=setup.scratch) as scratch:
            graded, broken = [], []
            for number, (student, folder) in enumerate(folders.items()):
                try:
                    package = Path(scratch) / str(number) / "package"
                    assemblies[student] = assemble(setup.release_tree, folder, package)
                    graded.append(student)
                except Exception as error:  # noqa: BLE001 - this student's result alone
                    settle(student, failed_run(expected, error))

            def judged(index: int, run: Run, imported: bool) -> None:
                student = graded[index]
                if not imported and assemblies[student].sources:
                    broken.append(student)  # graded again once this judge has ended
                else:
                    settle(student, run)

            packages = [assemblies[student].package for student in graded]
            run_judges(setup, packages, slot, expected, judged)
            for student in broken:  # again, without the modules that break it
                set_aside_broken(setup, assemblies[student], slot)
                settle(student, run_judge(setup, assemblies[student].package, slot, expected)[0])
    except JudgesStopped:
        raise  # the batch was interrupted: these students are graded when it runs again
    except Exception as error:  # noqa: BLE001 - these students' results, never the batch's end
        for student in [s for s in folders if s not in kept]:
            settle(student, failed_run(expected, error))
    finally:
        setup.slots.put(slot)


def groups_of(pending: dict[str, Path], lanes: int, largest: int) -> list[dict[str, Path]]:
    """The students to grade, in groups that one judge grades in turn: as few groups as keep
    each `lanes` busy and none larger than `largest`, their sizes within one of each other."""
    students = list(pending)
    count = max(1, lanes) * -(-len(students) // (max(1, lanes) * largest)) if students else 0
    count = min(count, len(students))
    return [{s: pending[s] for s in students[start::count]} for start in range(count)]


def part_of(expected: dict[str, str], exercises: tuple[str, ...]) -> dict[str, str]:
    """The tests of `expected` (test -> exercise) of the `exercises` only."""
    return {test: owner for test, owner in expected.items() if owner in exercises}


def merged_results(
    earlier: dict[str, Any], graded: dict[str, Any], selection: list[str]
) -> dict[str, Any]:
    """A student's results when only some exercises of the `selection` were graded again
    (`graded`): theirs from `graded`, every other one's kept from the `earlier` results, and
    the totals over all; `extra_data.regraded` names those graded again."""
    results, before = copy.deepcopy(graded), earlier["extra_data"]
    extra = results["extra_data"]
    again = [exercise_id for exercise_id in selection if exercise_id in extra["exercises"]]
    scores = {**before["exercises"], **extra["exercises"]}
    extra["exercises"] = {exercise_id: scores[exercise_id] for exercise_id in selection}
    kept = [entry for entry in earlier["tests"] if entry.get("number") not in again]
    order = {exercise_id: position for position, exercise_id in enumerate(selection)}
    results["tests"] = sorted([*kept, *results["tests"]], key=lambda entry: order[entry["number"]])
    outcomes = {**before["outcomes"], **extra["outcomes"]}
    extra["outcomes"] = {t: o for t, o in outcomes.items() if o.get("exercise") in order}
    problems = {**before.get("problems", {}), **extra["problems"]}
    extra["problems"] = {e: why for e, why in problems.items() if e in order}
    extra["max_score"] = sum(BY_ID[exercise_id].points for exercise_id in selection)
    extra["regraded"] = again
    results["score"] = round(sum(extra["exercises"].values()), 2)
    return results


class Batch:
    """The students of one grading command and its output folder: each student's results
    file, grading's record of the files it wrote (to resume from), and the gradebook."""

    def __init__(
        self,
        submissions: dict[str, Path],
        output: Path,
        single: bool = False,
        report: Callable[[str], None] | None = None,
        course: dict[str, str] | None = None,
        regrade: bool = False,
        root: Path | None = None,
    ) -> None:
        """`single`: one submission, whose results go to output/results.json (as Gradescope
        expects); `report` is told what the instructor should know; `course`: the parts of
        the fingerprint that come from the course and the settings (course_fingerprint);
        `regrade`: grade every student again, whatever changed; `root`: the course, whose
        tests and package decide what each exercise's grade depends on (none: every change
        grades a student's every exercise again)."""
        self.output, self.single, self.report = output, single, report or (lambda line: None)
        self.course = course or dict.fromkeys(COURSE_PARTS, "")  # none: writing results only
        self.regrade, self.root = regrade, root
        self.tests: dict[str, str] = {}  # exercise -> digest of its tests (exercise_tests)
        self.needs = module_needs(root) if root else {}  # exercise module -> modules it needs
        self.stale: dict[str, list[str]] = {}  # student -> the exercises to grade again
        self.earlier: dict[str, dict[str, Any]] = {}  # student -> results graded in part again
        self.refused: dict[str, str] = {}  # student -> why grading did not take their folder
        self.submissions = self.accepted(submissions)
        self.record = self.read_record()
        self.rows: dict[str, dict[str, Any]] = {}  # student -> the results written
        self.others: dict[str, dict[str, Any]] = {}  # graded into the output before, not now
        self.graded: list[str] = []  # the exercises graded, in the catalog's order

    def accepted(self, submissions: dict[str, Path]) -> dict[str, Path]:
        """The submissions but those of students whose folder name is that of a file grading
        writes beside their results (their results would overwrite it, or it theirs), and
        those whose folder is a link (to whatever folder it names)."""
        refused = {}
        for student, folder in submissions.items():
            if student in OUTPUT_FILES:
                refused[student] = f"grading writes a file of that name into {self.output}"
            elif not self.single and folder.is_symlink():
                refused[student] = "the folder is a symbolic link; submit the folder itself"
        for student, why in refused.items():
            self.report(f"Not graded: {shown(student)}: {why}.")
        self.refused.update(refused)
        return {name: folder for name, folder in submissions.items() if name not in refused}

    def closed_to_workers(self) -> list[Path]:
        """The folders a worker must not be able to open: of a batch, the output and those
        holding the submissions (a single submission is its own)."""
        return [] if self.single else [self.output, *{f.parent for f in self.submissions.values()}]

    def results_path(self, student: str) -> Path:
        return self.output / RESULTS if self.single else self.output / student / RESULTS

    def read_record(self) -> dict[str, str]:
        """Grading's own record of the results files it wrote: student -> digest of the text."""
        try:
            record = json.loads((self.output / RECORD).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return record if isinstance(record, dict) else {}

    def resume(self, expected: dict[str, str]) -> dict[str, Path]:
        """Take the results already written for the same submitted modules and the same
        exercises, exactly as grading recorded writing them, and remove the writes a killed
        run cut short; the submissions still to grade."""
        self.graded = sorted(set(expected.values()), key=list(BY_ID).index)
        self.tests = exercise_tests(self.root, expected) if self.root else {}
        self.others = {} if self.single else self.graded_before_elsewhere()
        for leftover in unfinished_writes(self.output):
            leftover.unlink()
        pending, changes = {}, Counter()
        for student, folder in self.submissions.items():
            results = self.earlier_results(student)
            whole, each = self.fingerprints(folder) if results is not None else (None, {})
            changed = self.changed_since(results, whole) if results is not None else []
            stale = self.stale_exercises(results, each, changed)
            if not stale:
                self.rows[student] = results
                self.write_missing_report(student, results)
                continue
            pending[student], self.stale[student] = folder, stale
            if results is not None and stale != self.graded:
                self.earlier[student] = results
                changes[f"exercises {', '.join(stale)} only"] += 1
            else:
                changes.update(changed if results is not None else ["never graded"])
        if self.rows or changes:
            why = ", ".join(f"{count} {part}" for part, count in sorted(changes.items()))
            why = "--regrade" if self.regrade else why
            self.report(
                f"{len(self.rows)} students graded before and unchanged; grading {len(pending)}"
                + (f" ({why})." if pending and why else ".")
            )
        return pending

    def graded_before_elsewhere(self) -> dict[str, dict[str, Any]]:
        """The results of the students graded into the output before who are not in this
        batch (the class, when a late submission is graded alone), as grading recorded writing
        them, for the gradebook; those graded on other exercises, or whose results file
        changed since, are said and left out."""
        kept, left_out = {}, []
        for student in sorted(set(self.record) - set(self.submissions) - set(self.refused)):
            results = self.earlier_results(student) or {}
            exercises = results.get("extra_data", {}).get("exercises", {})
            if sorted(exercises) == sorted(self.graded):
                kept[student] = results
            else:
                left_out.append(shown(student))
        if left_out:
            self.report(
                f"Left out of the gradebook: {', '.join(left_out)}, graded into {self.output} "
                "before on other exercises, or whose results file changed since."
            )
        return kept

    def earlier_results(self, student: str) -> dict[str, Any] | None:
        """The results file of a student as grading recorded writing it, if there is one."""
        text = recorded_text(self.results_path(student), self.record.get(student))
        return None if text is None else json.loads(text)

    def stale_exercises(
        self, results: dict[str, Any] | None, now: dict[str, str], changed: list[str]
    ) -> list[str]:
        """The exercises of a student to grade (again): none when their earlier `results`
        still hold; those whose own fingerprint changed (`now`: each one's) when the earlier
        results graded the same exercises; else every one."""
        if results is None or self.regrade or "exercises" in changed or "settings" in changed:
            return list(self.graded)
        if not changed:
            return []
        earlier = results.get("extra_data", {}).get("fingerprint", {}).get("exercises")
        if not isinstance(earlier, dict) or not self.tests:
            return list(self.graded)
        return [exercise for exercise in self.graded if earlier.get(exercise) != now[exercise]]

    def fingerprints(self, folder: Path) -> tuple[Fingerprint, dict[str, str]]:
        """What grading the submission in `folder` now depends on: in all, and per exercise
        graded (none when the batch has no course to read the tests of)."""
        modules = module_digests(folder)
        whole = Fingerprint(submission=modules_digest(modules), **self.course)
        return whole, exercise_fingerprints(modules, self.needs, self.tests, self.course)

    def changed_since(self, results: dict[str, Any], fingerprint: Fingerprint) -> list[str]:
        """What changed since earlier results were graded: the parts of the `fingerprint`
        that differ ("submission", "tests", "reference", "settings") and "exercises" when
        another selection was graded; [] when they still hold."""
        extra = results.get("extra_data", {})
        changed = fingerprint.changed_since(extra.get("fingerprint"))
        if sorted(extra.get("exercises", ())) != sorted(self.graded):
            changed.append("exercises")
        return changed

    def stamp(self, results: dict[str, Any], folder: Path) -> None:
        """Mark results with when they were graded and against which fingerprint."""
        fingerprint, each = self.fingerprints(folder)
        prints = {"exercises": each} if self.tests else {}
        results["extra_data"]["fingerprint"] = {
            **asdict(fingerprint),
            "short": fingerprint.short,
            **prints,
        }
        results["extra_data"]["graded_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())

    def write_results(self, student: str, results: dict[str, Any]) -> None:
        """Write a student's results and report.html, and the gradebook so far; the record
        first and the results last, so that a student whose writing was cut short is graded
        again."""
        text = json.dumps(results, indent=1)
        self.record[student] = text_digest(text)
        write_atomically(self.output / RECORD, json.dumps(self.record, indent=1))
        path = self.results_path(student)
        write_atomically(path.with_name(REPORT), report_html(results, shown(student)))
        write_atomically(path, text)
        self.rows[student] = results
        self.write_gradebook()

    def write_missing_report(self, student: str, results: dict[str, Any]) -> None:
        """Write a student's report.html where their kept results have none (an output
        folder graded before grading wrote reports)."""
        report = self.results_path(student).with_name(REPORT)
        if not report.exists():
            write_atomically(report, report_html(results, shown(student)))

    def write_gradebook(self) -> Path:
        """The gradebook of the students of the batch and of those graded into the output
        before (export and the class report read them all too)."""
        gradebook = self.output / GRADEBOOK
        write_atomically(gradebook, gradebook_csv({**self.others, **self.rows}, self.graded))
        return gradebook

    def grade(
        self,
        setup: GradingSetup,
        expected: dict[str, str],
        credit: Credit = DEFAULT_CREDIT,
    ) -> None:
        """Grade every student not graded yet against the `expected` tests, in groups that
        one judge grades in turn, one on each of the set-up's slots at a time, partial credit
        by the `credit` rule, with a progress bar."""
        pending = self.resume(expected)
        kept, bar = len(self.rows), ProgressBar(len(pending))
        Judges.allow()
        lanes, writing = setup.slots.qsize(), threading.Lock()

        def on_graded(student: str, results: dict[str, Any]) -> None:
            with writing:
                if not Judges.stopping:  # interrupted: what a judge cut short is not a grade
                    self.write_graded(student, results, pending[student], bar)

        alike: dict[tuple[str, ...], dict[str, Path]] = {}  # the same exercises to grade
        for student, folder in pending.items():
            alike.setdefault(tuple(self.stale[student]), {})[student] = folder
        groups = [
            (part_of(expected, stale), group)
            for stale, students in alike.items()
            for group in groups_of(students, lanes, GROUP_LARGEST)
        ]
        every_test = {t: e for tests, _ in groups for t, e in tests.items()}
        if setup.records_for(len(groups), len(every_test)):
            record_examples(setup, every_test)
        with ThreadPoolExecutor(max_workers=max(1, lanes)) as pool:
            futures = [
                pool.submit(grade_group, setup, group, tests, on_graded, credit)
                for tests, group in groups
            ]
            try:
                for future in as_completed(futures):
                    future.result()
            except BaseException:  # interrupted: end the judges at work, start no other
                for future in futures:
                    future.cancel()
                Judges.stop_all()
                raise
        graded = {student: self.rows[student] for student in pending if student in self.rows}
        for line in summary(graded, kept, self.refused):
            self.report(line)

    def write_graded(
        self, student: str, results: dict[str, Any], folder: Path, bar: ProgressBar
    ) -> None:
        """Write a student's results as soon as they are graded."""
        try:
            if student in self.earlier:
                results = merged_results(self.earlier[student], results, self.graded)
            self.stamp(results, folder)
            self.write_results(student, results)
        except OSError as error:  # this student's, never the batch's end
            self.report(f"Not written: {shown(student)}: {error}.")
            return
        bar.step(f"{shown(student)}: {results['score']:g}/{results['extra_data']['max_score']}")


def share_of(
    course: Path,
    submissions: dict[str, Path],
    shard: Shard,
    output: Path,
    times_from: Path | None = None,
) -> dict[str, Path]:
    """The submissions `shard` grades, its share of the work of the batch (weighed by the
    grading times of the earlier output `times_from`, where given); written down in
    output/SHARD_RECORD with the whole batch, for merge to check the shards against."""
    stubs = {module: len(stubbed_source(course / module).encode()) for module in EXERCISE_MODULES}
    work = {student: work_of(folder, stubs) for student, folder in submissions.items()}
    if times_from is not None and not times_from.is_dir():
        raise NotADirectoryError(f"no earlier output to take grading times from at {times_from}")
    share = shard.share(timed(work, grading_times(times_from)) if times_from else work)
    record = {"shard": str(shard), "batch": sorted(submissions), "share": share}
    output.mkdir(mode=0o700, parents=True, exist_ok=True)
    write_atomically(output / SHARD_RECORD, json.dumps(record, indent=1))
    return {student: submissions[student] for student in share}


def grading_times(output: Path) -> dict[str, float]:
    """The seconds grading took for each student of an earlier output folder (a batch's, or
    merged shards'), from the results grading recorded writing there (UnrecordedResults if
    it recorded none)."""
    times = {}
    for student, results in recorded_results(output).items():
        seconds = results.get("execution_time")
        if type(seconds) in (int, float) and seconds >= 0:
            times[student] = float(seconds)
    return times


@dataclass(frozen=True)
class GradingOptions:
    """How a batch is graded: which exercises, in which sandbox with what limits, how many at
    once, with which examples and partial-credit rule, and which share of the students.

    `sandbox` is the mode to confine submitted code in (None: the strongest this machine
    allows). `profile` is the tests' hypothesis profile (EXAMPLES): "ci" (100 examples a
    property), "ci-quick" (10) or "ci-thorough" (1000), each the same examples on every run.
    `credit` is the partial-credit rule (instructor.grading.credit: "cases", "functions",
    "all-or-nothing"). Where no sandbox can hide anything from the workers
    (SandboxMode.UNPROTECTED), a batch is graded only when `unprotected` says so
    (GradingRefused otherwise); one `single` submission is its owner's own business.
    `regrade` grades every student again, whatever their fingerprint says. `shard` grades
    only its share of the students (instructor.grading.shards), dealt by the grading times
    of the earlier output `times_from` where given.
    """

    selection: list[str] | None = None  # exercise ids; None: every exercise
    limits: SandboxLimits = GRADING_LIMITS
    jobs: int = 1
    single: bool = False
    sandbox: SandboxMode | None = None
    profile: str = "ci"
    regrade: bool = False
    shard: Shard | None = None
    credit: Credit | str = DEFAULT_CREDIT
    unprotected: bool = False
    times_from: Path | None = None


def grade_batch(
    course: Path,
    submissions: dict[str, Path],
    output: Path,
    options: GradingOptions = GradingOptions(),
    report: Callable[[str], None] | None = None,
) -> Path:
    """Grade every submission into output/<student>/results.json (output/results.json for a
    `single` submission, as Gradescope expects) and output/gradebook.csv, as `options` say.

    A student whose results.json grading recorded writing is graded again only when their
    submission, the course's tests, its reference or the settings changed since (their
    fingerprint), or when `options.regrade` is set; so an interrupted batch resumes where it
    stopped, and a batch run again after a fix grades again exactly whom the fix concerns. A
    student folder named like a file of the output is refused (`report` says so). Returns
    the gradebook's path.
    """
    o = options
    if o.shard is not None:
        submissions = share_of(course, submissions, o.shard, output, o.times_from)
    credit = Credit(o.credit)
    settings = {"profile": o.profile, "limits": asdict(o.limits), "credit": credit.value}
    course_parts = course_fingerprint(course, settings)
    batch = Batch(submissions, output, o.single, report, course_parts, o.regrade, course)
    selection = o.selection or [item.id for item in CATALOG]
    if not o.single:  # made closed to every other user: workers are such users
        output.mkdir(mode=0o700, parents=True, exist_ok=True)
    allowed, grouped = o.unprotected or o.single, not o.single
    with grading_setup(
        course, batch.closed_to_workers(), o.limits, o.jobs, o.sandbox, o.profile, allowed, grouped
    ) as setup:
        batch.report(protections_in_brief(setup.mode))
        batch.grade(setup, reference_tests(setup.judge_tree, selection, setup.starts), credit)
    return batch.write_gradebook()
