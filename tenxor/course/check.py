"""`check("2.1")`: run one exercise's public tests and say, in plain words, how it went.
`check("2.1", hint=True)`: the next hint for the exercise. `check()`: a progress table.

The tests run apart from the notebook's kernel, in a fresh child of a warm worker process
(see `engine/warm.py`), so edits to the package count at once, without restarting the
kernel, a loop that never ends is stopped, and an answer comes in a fraction of a second.
A failure is put into words by failure_words.py, and hints are shown by hints_shown.py.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from .broken import broken_module
from .catalog import (
    BY_ID,
    CATALOG,
    HIDDEN_TESTS,
    TOOLING_TESTS,
    Exercise,
    exercise,
    stub_message,
    tests_of,
)
from .engine import Limits, Result, Run, function_of, run_checked, short_name, tree_to_read
from .failure_words import failure_in_words, wrapped
from .hints_shown import hints_so_far, show_hint
from .remembered import fingerprints, recalled, remember

CHECK_LIMITS = Limits(test_seconds=20.0, run_seconds=20.0, memory_mb=2048)
PROGRESS_SECONDS = 300.0  # every exercise's tests, for the progress table
MOST_PROCESSES = 4  # that share the progress table's tests
DONE, FAILING, NOT_STARTED = "done", "failing", "not started"
NOT_RUN = "not run"  # the outcome of a test the run stopped before
FAILED_CASES_NAMED = 3


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
    """pytest options that keep a run to the public exercise tests (in the instructor's tree,
    the hidden tests and the tests of the tooling sit beside them)."""
    ignored = [f"--ignore={root / folder}" for folder in (HIDDEN_TESTS, TOOLING_TESTS)]
    return [*ignored, "-m", "not provided", "-q"]


def ordered_test_files(root: Path, item: Exercise) -> list[str]:
    """The public test files of an exercise that the course holds: its chapter's first, then
    those that span the chapters (the order in which their results are shown)."""
    return [path for path in tests_of(item) if (root / path).is_file()]


def results_of(run: Run, item: Exercise) -> list[Result]:
    """The results of an exercise's tests in a run."""
    return [result for result in run.results.values() if result.exercise == item.id]


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


def test_of(result: Result) -> str:
    """A result's test function, without its case: test_strides.py::test_x."""
    return function_of(short_name(result.test))


def cases_by_test(results: list[Result]) -> dict[str, list[Result]]:
    """Results grouped by test function: the cases of one parametrized test share a key."""
    groups: dict[str, list[Result]] = {}
    for result in results:
        groups.setdefault(test_of(result), []).append(result)
    return groups


def case_name(case: Result, position: int) -> str:
    """A case named by its values ("shape=(2, 3)"), or by its position when they are unknown."""
    return (case.failure and case.failure.case) or f"case {position}"


def summary_line(test: str, cases: list[Result]) -> str:
    """One line for a test and all its cases: PASS, or FAIL naming the first failing cases by
    their values."""
    failed = [
        case_name(case, position) for position, case in enumerate(cases, start=1) if not case.passed
    ]
    if all(case.outcome == NOT_RUN for case in cases):
        return f"----  {test}  (not run)"
    if not failed:
        return f"PASS  {test}" + (f"  ({len(cases)} cases)" if len(cases) > 1 else "")
    if len(cases) == 1:
        return f"FAIL  {test}"
    if len(failed) == len(cases):
        return f"FAIL  {test}  (all {len(cases)} cases)"
    named = "; ".join(failed[:FAILED_CASES_NAMED]) + (
        "; ..." if len(failed) > FAILED_CASES_NAMED else ""
    )
    return f"FAIL  {test}  ({len(failed)} of {len(cases)} cases fail: {named})"


def problem_in_words(item: Exercise, run: Run) -> list[str]:
    """Why the run of an exercise's tests ended early, and what was running then."""
    running = [r for r in run.results.values() if r.timed_out or r.message == run.problem]
    during = ""
    if running:
        case = running[0].failure and running[0].failure.case
        during = f" while {test_of(running[0])}{f' ({case})' if case else ''} was running"
    if run.problem and run.problem.startswith("stopped"):
        return wrapped(
            f"The tests of exercise {item.id} were {run.problem},{during}. Is there a loop "
            "that never ends, or code far slower than it needs to be?"
        )
    lines = wrapped(
        f"The tests of exercise {item.id} could not run to the end: {run.problem}{during}. "
        f"It may have run out of memory (a check may use {CHECK_LIMITS.memory_mb} MB) or "
        "crashed. The last lines printed:"
    )
    return lines + [f"  {line}" for line in run.output.strip().splitlines()[-15:]]


def report_exercise(item: Exercise, run: Run, root: Path, out: TextIO) -> Status:
    """Print one line per test of `item` (its cases together), then its first failure explained;
    its status."""
    results = results_of(run, item)
    status = status_of(root, item, results)
    out.write(f"Exercise {item.id}: {item.title} ({item.path}, {item.function})\n")
    for test, cases in cases_by_test(results).items():
        out.write(f"  {summary_line(test, cases)}\n")
    for path, message in run.collect_errors.items():
        out.write(f"  ERROR {path} could not be loaded: {message}\n")
    if run.problem:
        out.write("\n")
        out.write("".join(f"{line}\n" for line in problem_in_words(item, run)))
    failed = [result for result in results if not result.passed]
    if failed:
        first = failed[0]
        out.write(f"\nFirst failure, {test_of(first)}:\n")
        out.write("".join(f"  {line}\n" for line in failure_in_words(first)))
    elif not results and not run.collect_errors:
        out.write("  (no tests found for this exercise)\n")
    points = f"{item.points} point{'s' if item.points != 1 else ''}"
    out.write(f"\n{status.passed} of {status.total} tests passed: {status.state} ({points}).\n")
    return status


def check_exercise(
    exercise_id: str,
    root: Path | None = None,
    out: TextIO = sys.stdout,
    limits: Limits = CHECK_LIMITS,
) -> Status:
    """Run the public tests of one exercise and print what happened; its status."""
    item, root = exercise(exercise_id), root or course_root()
    tree = tree_to_read(root)  # root, but in the browser its copy in memory
    if said_broken(tree, out):
        return Status(item, FAILING, 0, 0)
    options = [*ordered_test_files(tree, item), "--exercise", item.id]
    prints = fingerprints(tree)
    run = run_checked(
        tree, options + public_test_options(tree), limits.run_seconds, limits.memory_mb
    )
    if not run.problem and not run.collect_errors:
        remember(root, prints, {item.id: results_of(run, item)})
    elif said_broken(tree, out, imports_checked=True):
        return Status(item, FAILING, 0, 0)
    return report_exercise(item, run, tree, out)


def said_broken(root: Path, out: TextIO, imports_checked: bool = False) -> bool:
    """Whether a module of the package does not compile (or, when `imports_checked`, import),
    which is then all that is printed."""
    broken = broken_module(root, imports_checked)
    if broken:
        out.write("".join(f"{line}\n" for line in broken))
    return broken is not None


def processes() -> int:
    """How many processes share the progress table's tests: one per CPU this process may use
    (at most MOST_PROCESSES)."""
    usable = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else range(1)
    return max(1, min(MOST_PROCESSES, len(usable)))


def progress(root: Path | None = None, out: TextIO = sys.stdout) -> list[Status]:
    """Print a table: each exercise, its points and status. The tests run only for exercises
    that are started and changed since their tests last ran (see remembered.py); an exercise
    whose stub is still in place is not started, whatever its tests say."""
    root = root or course_root()
    tree = tree_to_read(root)  # root, but in the browser its copy in memory
    if said_broken(tree, out):
        return []
    prints = fingerprints(tree)
    known = recalled(root, prints)
    started = [item for item in CATALOG if is_started(tree, item)]
    stale = [item for item in started if item.id not in known]
    # Results are remembered only from runs that imported the package, and any edit of it
    # changes a fingerprint: when every started exercise's results hold, it imports as then.
    if (stale or not started) and said_broken(tree, out, imports_checked=True):
        return []
    out.write(
        f"Running the tests of {len(stale)} of the {len(started)} exercises you have started "
        "(the others are as they were when their tests last ran) ...\n"
    )
    out.flush()
    run = Run()
    if stale:
        chosen = [option for item in stale for option in ("--exercise", item.id)]
        options = [*public_test_options(tree), *chosen, f"--split={processes()}"]
        run = run_checked(
            tree, options, PROGRESS_SECONDS, CHECK_LIMITS.memory_mb, "progress", explain=False
        )
        if not run.problem and not run.collect_errors:
            remember(root, prints, {item.id: results_of(run, item) for item in stale})
    statuses = []
    out.write(f"\n{'exercise':<9}{'title':<40}{'points':>6}  status\n")
    for item in CATALOG:
        results = known.get(item.id) or results_of(run, item)
        status = status_of(tree, item, results)
        statuses.append(status)
        note = f" ({status.passed}/{status.total} tests)" if status.state == FAILING else ""
        if status.state == FAILING and status.waits_for:
            note += f", needs {', '.join(status.waits_for)}"
        out.write(f"{item.id:<9}{item.title[:38]:<40}{item.points:>6}  {status.state}{note}\n")
    if run.problem:
        out.write(f"\n(The run ended early: {run.problem}.)\n")
    done = [s for s in statuses if s.state == DONE]
    points = sum(s.exercise.points for s in done)
    total = sum(item.points for item in CATALOG)
    out.write(f"\nDone: {len(done)} of {len(CATALOG)} exercises, {points} of {total} points.\n")
    return statuses


def check(exercise_id: str | None = None, hint: bool | str = False) -> None:
    """In a notebook: `check("2.1")` checks one exercise, `check("2.1", hint=True)` shows its
    next hint, `check("2.1", hint="all")` every hint shown so far again, `check()` shows your
    progress."""
    if exercise_id is None:
        if hint:
            print('Say which exercise the hint is for, for example check("2.1", hint=True).')
            return
        progress()
        return
    try:
        exercise(exercise_id)  # an unknown id raises KeyError before anything else is done
        root = course_root()
        if hint == "all":
            print("\n".join(hints_so_far(exercise_id, root)))
        elif hint:
            show_hint(exercise_id, root)
        else:
            check_exercise(exercise_id, root)
    except KeyError as error:  # an unknown id: the message lists the known ones
        print(error.args[0])
