"""Gradescope's results of one submission: a test entry per exercise's public and hidden
tests, and a summary of what was graded, how the submission was confined and its limits."""

from __future__ import annotations

import platform
from importlib import metadata
from typing import Any

from instructor.launcher import SandboxLimits
from instructor.protections import SandboxMode, protections_in_words
from tenxor.course.catalog import BY_ID, CATALOG, Exercise, hidden_tests
from tenxor.course.check import record_in_words
from tenxor.course.engine import Result, Run, short_name
from tenxor.course.failure import Failure

from .intake import Assembly

ENTRY_OUTPUT_CHARS = 3000


def reason(result: Result | None) -> str:
    """Why a test did not pass, in one line."""
    if result is None:
        return "never ran"
    if result.unfinished and result.unfinished == result.exercise:
        return "not done: it still raises NotImplementedError"
    if result.unfinished:
        return f"needs exercise {result.unfinished}, which still raises NotImplementedError"
    if result.message.startswith("MemoryError"):
        return "MemoryError: it went over the memory limit"
    first = result.message.splitlines()[0] if result.message else result.outcome
    line = result.failure.line if result.failure else None
    return f"{first[:200]} ({line})" if line else first[:200]


def entry_output(
    passed: int,
    failed: list[tuple[str, str]],
    problem: str | None,
    explained: list[tuple[str, Failure]] = (),
) -> str:
    """The text of one Gradescope test entry: counts, module problem, the first failure's
    record in full (the call, what came back, what was expected), then the failing tests."""
    lines = [problem + "; its exercises score 0."] if problem else []
    lines.append(f"{passed} of {passed + len(failed)} tests passed.")
    for name, record in explained[:1]:
        lines += [f"First failure, {name}:", *(f"  {line}" for line in record_in_words(record))]
        lines.append("")
    lines += [f"FAIL {name}: {why}" for name, why in failed[:8]]
    if len(failed) > 8:
        lines.append(f"... and {len(failed) - 8} more failing tests")
    text = "\n".join(lines)
    return text if len(text) <= ENTRY_OUTPUT_CHARS else text[:ENTRY_OUTPUT_CHARS] + "\n..."


def exercise_entries(
    item: Exercise, tests: list[str], run: Run, assembly: Assembly
) -> list[dict[str, Any]]:
    """The Gradescope test entries of one exercise: its public tests and its hidden tests,
    each test worth an equal share of the exercise's points."""
    entries, share = [], item.points / len(tests)
    problem = assembly.problem_of(item.path)
    for hidden in (False, True):
        part = [test for test in tests if (test.split("::")[0] in hidden_tests()) == hidden]
        if not part:
            continue
        results = [run.results.get(test) for test in part]
        passed = sum(1 for result in results if result is not None and result.passed)
        failed = [
            (short_name(test), reason(result))
            for test, result in zip(part, results)
            if result is None or not result.passed
        ]
        records = [
            (short_name(test), r.failure)
            for test, r in zip(part, results)
            if r is not None and not r.passed and r.failure and not r.failure.unfinished
        ]
        entries.append(
            {
                "name": f"{item.id} {item.title} ({'hidden' if hidden else 'public'} tests)",
                "number": item.id,
                "score": round(share * passed, 4),
                "max_score": round(share * len(part), 4),
                "status": "passed" if not failed else "failed",
                "output": entry_output(passed, failed, problem, records[:1]),
                "visibility": "after_published" if hidden else "visible",
                "tags": [f"chapter {item.id.split('.')[0]}"],
            }
        )
    return entries


def tool_versions() -> dict[str, str]:
    """The versions of what graded the submission."""
    versions = {"python": platform.python_version()}
    for package in ("tenxor", "pytest", "hypothesis", "numpy"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = "not installed"
    return versions


def limits_in_words(limits: SandboxLimits) -> str:
    """The limits a submission's code ran within, for the student."""
    return (
        f"Limits: {limits.call_cpu_seconds:g} s of CPU time per call of your functions "
        f"({limits.call_wall_seconds:g} s by the clock), {limits.exercise_cpu_seconds:g} s "
        f"per exercise, {limits.memory_mb} MB of memory per process ({limits.group_memory_mb} "
        f"MB for all your processes together); after {limits.strikes} calls of an "
        "exercise that crash or hang, its other tests fail without running."
    )


def summary_output(assembly: Assembly, run: Run, limits: SandboxLimits, mode: SandboxMode) -> str:
    """What the whole submission's grading should tell the student."""
    lines = [f"Graded modules: {', '.join(assembly.taken) or 'none'}."]
    lines += [f"Not graded: {assembly.problem_of(module)}." for module in assembly.missing]
    lines += [f"Not graded: {why}." for why in assembly.broken.values()]
    if assembly.ignored:
        shown = ", ".join(assembly.ignored[:10]) + (" ..." if len(assembly.ignored) > 10 else "")
        lines.append(
            f"Ignored {len(assembly.ignored)} other files (only exercise modules are graded, "
            f"with the course's own tests): {shown}."
        )
    if run.problem:
        lines.append(f"The test run stopped early: {run.problem}.")
    lines += [
        f"Test file {path} could not be loaded: {m}" for path, m in run.collect_errors.items()
    ]
    lines += [protections_in_words(mode), limits_in_words(limits)]
    return "\n".join(lines)


def results_json(
    expected: dict[str, str],
    run: Run,
    assembly: Assembly,
    limits: SandboxLimits,
    mode: SandboxMode,
    seconds: float,
) -> dict[str, Any]:
    """The Gradescope results of one submission, scored against the `expected` tests."""
    tests, per_exercise = [], {}
    for item in CATALOG:
        mine = [test for test, owner in expected.items() if owner == item.id]
        if mine:
            entries = exercise_entries(item, mine, run, assembly)
            tests += entries
            per_exercise[item.id] = round(sum(entry["score"] for entry in entries), 4)
    max_score = sum(BY_ID[exercise_id].points for exercise_id in per_exercise)
    return {
        "score": round(sum(per_exercise.values()), 2),
        "execution_time": round(seconds, 2),
        "output": summary_output(assembly, run, limits, mode),
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": tests,
        "extra_data": {
            "max_score": max_score,
            "exercises": per_exercise,
            "versions": tool_versions(),
            "taken": assembly.taken,
            "ignored_files": len(assembly.ignored),
            "sandbox": mode.value,
        },
    }
