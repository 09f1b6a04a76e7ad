"""`check("2.1")`: run one exercise's public tests and say, in plain words, how it went.
`check()`: a progress table of every exercise.

The tests run in a separate process, so edits to the package count at once, without
restarting the notebook's kernel.
"""

from __future__ import annotations

import re
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from .catalog import BY_ID, CATALOG, Exercise, exercise
from .release import INSTRUCTOR_ONLY, is_excluded, stub_message
from .running import Limits, Result, Run, run_tests, short_name

CHECK_LIMITS = Limits(test_seconds=20.0, run_seconds=600.0)
DONE, FAILING, NOT_STARTED = "done", "failing", "not started"
FAILED_CASES_NAMED = 3
LINE_WIDTH = 90  # explanations wrap to fit a notebook's output area


@dataclass(frozen=True)
class Status:
    """Where one exercise stands: done, failing or not started, and its test counts."""

    exercise: Exercise
    state: str
    passed: int
    total: int
    waits_for: tuple[str, ...] = ()


def course_root() -> Path:
    """The folder holding the tenxor package and its tests."""
    root = Path(__file__).resolve().parents[2]
    if not (root / "tests").is_dir():
        raise FileNotFoundError(
            f"check() needs the course's tests folder next to the tenxor package: "
            f"{root / 'tests'} does not exist"
        )
    return root


def public_test_options(root: Path) -> list[str]:
    """pytest options that keep a run to the public exercise tests."""
    ignored = [f"--ignore={root / folder}" for folder in INSTRUCTOR_ONLY if folder[0] != "."]
    return [*ignored, "-m", "not provided", "-q"]


def test_files_naming(root: Path, exercise_id: str) -> list[str]:
    """The public test files that mention the exercise id (as a quoted string)."""
    pattern = re.compile(rf"[\"']{re.escape(exercise_id)}[\"']")
    files = [
        path
        for path in sorted((root / "tests").rglob("test_*.py"))
        if not is_excluded(path.relative_to(root), INSTRUCTOR_ONLY)
        and pattern.search(path.read_text(encoding="utf-8"))
    ]
    return [str(path.relative_to(root)) for path in files]


def is_started(root: Path, item: Exercise) -> bool:
    """Whether the exercise's stub line is gone from its module."""
    path = root / item.path
    return not path.exists() or stub_message(item) not in path.read_text(encoding="utf-8")


def status_of(root: Path, item: Exercise, results: list[Result]) -> Status:
    """An exercise's status from the results of its tests."""
    passed = sum(result.passed for result in results)
    waits_for = sorted(
        {r.unfinished for r in results if r.unfinished and r.unfinished != item.id},
        key=list(BY_ID).index,
    )
    if not is_started(root, item):
        state = NOT_STARTED
    elif results and passed == len(results):
        state = DONE
    else:
        state = FAILING
    return Status(item, state, passed, len(results), tuple(waits_for))


def failure_in_words(result: Result) -> list[str]:
    """The lines that explain one failed test to a learner."""
    if result.unfinished and result.unfinished != result.exercise:
        needed = BY_ID[result.unfinished]
        return textwrap.wrap(
            f"This test needs exercise {needed.id} ({needed.title}, {needed.path}: "
            f"{needed.function}), which is not finished yet. Do that one first, then check again.",
            width=LINE_WIDTH,
        )
    if result.unfinished:
        mine = BY_ID[result.unfinished]
        return [
            f"Not started: {mine.function} in {mine.path} still raises NotImplementedError.",
            "Replace that raise with your code, save the file, then check again.",
        ]
    lines = result.message.splitlines() or [result.outcome]
    if result.where:
        lines.append(f"raised at {result.where}")
    if result.example:
        lines += result.example.splitlines()
    return lines


def cases_by_test(results: list[Result]) -> dict[str, list[Result]]:
    """Results grouped by test function: the cases of one parametrized test share a key."""
    groups: dict[str, list[Result]] = {}
    for result in results:
        groups.setdefault(short_name(result.test).split("[", 1)[0], []).append(result)
    return groups


def summary_line(test: str, cases: list[Result]) -> str:
    """One line for a test and all its cases: PASS, or FAIL naming the first failing cases."""
    failed = [short_name(case.test)[len(test) :] for case in cases if not case.passed]
    if not failed:
        return f"PASS  {test}" + (f"  ({len(cases)} cases)" if len(cases) > 1 else "")
    if len(cases) == 1:
        return f"FAIL  {test}"
    if len(failed) == len(cases):
        return f"FAIL  {test}  (all {len(cases)} cases)"
    named = ", ".join(failed[:FAILED_CASES_NAMED]) + (
        ", ..." if len(failed) > FAILED_CASES_NAMED else ""
    )
    return f"FAIL  {test}  ({len(failed)} of {len(cases)} cases fail: {named})"


def report_exercise(item: Exercise, run: Run, root: Path, out: TextIO) -> Status:
    """Print one line per test of `item` (its cases together), then its first failure explained;
    its status."""
    results = [r for r in run.results.values() if r.exercise == item.id]
    status = status_of(root, item, results)
    out.write(f"Exercise {item.id}: {item.title} ({item.path}, {item.function})\n")
    for test, cases in cases_by_test(results).items():
        out.write(f"  {summary_line(test, cases)}\n")
    for path, message in run.collect_errors.items():
        out.write(f"  ERROR {path} could not be loaded: {message}\n")
    if run.problem:
        out.write(f"\nThe tests could not run to the end: {run.problem}. The last lines printed:\n")
        out.writelines(f"  {line}\n" for line in run.output.strip().splitlines()[-15:])
    failed = [result for result in results if not result.passed]
    if failed:
        first = failed[0]
        out.write(f"\nFirst failure, {short_name(first.test)}:\n")
        out.writelines(f"  {line}\n" for line in failure_in_words(first))
    elif not results and not run.collect_errors:
        out.write("  (no tests found for this exercise)\n")
    points = f"{item.points} point{'s' if item.points != 1 else ''}"
    out.write(f"\n{status.passed} of {status.total} tests passed: {status.state} ({points}).\n")
    return status


def check_exercise(exercise_id: str, root: Path | None = None, out: TextIO = sys.stdout) -> Status:
    """Run the public tests of one exercise and print what happened; its status."""
    item, root = exercise(exercise_id), root or course_root()
    options = [*test_files_naming(root, item.id), "--exercise", item.id]
    run = run_tests(root, options + public_test_options(root), CHECK_LIMITS, "check")
    return report_exercise(item, run, root, out)


def progress(root: Path | None = None, out: TextIO = sys.stdout) -> list[Status]:
    """Run every public test once and print a table: each exercise, its points and status."""
    root = root or course_root()
    out.write("Running every exercise's tests ...\n")
    out.flush()
    run = run_tests(root, public_test_options(root), CHECK_LIMITS, "check")
    statuses = []
    out.write(f"\n{'exercise':<9}{'title':<40}{'points':>6}  status\n")
    for item in CATALOG:
        results = [r for r in run.results.values() if r.exercise == item.id]
        status = status_of(root, item, results)
        statuses.append(status)
        note = f" ({status.passed}/{status.total} tests)" if status.state == FAILING else ""
        if status.state == FAILING and status.waits_for:
            note += f", needs {', '.join(status.waits_for)}"
        out.write(f"{item.id:<9}{item.title[:38]:<40}{item.points:>6}  {status.state}{note}\n")
    done = [s for s in statuses if s.state == DONE]
    points = sum(s.exercise.points for s in done)
    total = sum(item.points for item in CATALOG)
    out.write(f"\nDone: {len(done)} of {len(CATALOG)} exercises, {points} of {total} points.\n")
    return statuses


def check(exercise_id: str | None = None) -> None:
    """In a notebook: `check("2.1")` checks one exercise, `check()` shows your progress."""
    if exercise_id is None:
        progress()
    else:
        check_exercise(exercise_id)
