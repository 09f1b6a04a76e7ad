"""Gradescope's results of one submission: a test entry per exercise's public and hidden
tests, and a summary of what was graded, how the submission was confined and its limits."""

from __future__ import annotations

import platform
from importlib import metadata
from typing import Any

from instructor.sandbox.interface import SandboxLimits, SandboxMode, protections_in_words
from tenxor.course.catalog import BY_ID, CATALOG, Exercise, is_hidden_test
from tenxor.course.engine import Result, Run, short_name
from tenxor.course.failure import Failure
from tenxor.course.failure_words import record_in_words

from .credit import DEFAULT_CREDIT, Credit, part_scores, scored_in_words
from .intake import Assembly

ENTRY_OUTPUT_CHARS = 3000
OUTCOME_FIELD_CHARS = 1000  # a text field of a failure record in extra_data["outcomes"]


def reason(result: Result | None, problem: str | None = None) -> str:
    """Why a test did not pass, in one line; `problem`: why the module of its exercise was
    not graded, if it was not (then its stub ran, which says nothing of what was written)."""
    if problem:
        return f"not graded: {problem}"
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
    failing: int,
    problem: str | None,
    failed: list[tuple[str, str]] = (),
    explained: list[tuple[str, Failure]] = (),
    scored: str = "",
) -> str:
    """The text of one Gradescope test entry: module problem, counts, how the credit rule
    `scored` them, the first failure's record in full (the call, what came back, what was
    expected), then the failing tests (a hidden entry gives counts alone)."""
    lines = [problem + "; its exercises score 0."] if problem else []
    lines.append(f"{passed} of {passed + failing} tests passed.")
    lines += [scored] if scored else []
    for name, record in explained[:1]:
        lines += [f"First failure, {name}:", *(f"  {line}" for line in record_in_words(record))]
        lines.append("")
    lines += [f"FAIL {name}: {why}" for name, why in failed[:8]]
    if len(failed) > 8:
        lines.append(f"... and {len(failed) - 8} more failing tests")
    text = "\n".join(lines)
    return text if len(text) <= ENTRY_OUTPUT_CHARS else text[:ENTRY_OUTPUT_CHARS] + "\n..."


def exercise_entries(
    item: Exercise,
    tests: list[str],
    run: Run,
    assembly: Assembly,
    credit: Credit = DEFAULT_CREDIT,
) -> list[dict[str, Any]]:
    """The Gradescope test entries of one exercise: its public tests and its hidden tests,
    scored by the `credit` rule; their scores add up to what the exercise earns."""
    entries, problem = [], assembly.problem_of(item.path)
    parts = [[test for test in tests if is_hidden_test(test) == hidden] for hidden in (False, True)]
    outcomes = [{test: is_pass(run.results.get(test)) for test in part} for part in parts]
    scores = part_scores(credit, item.points, outcomes)
    every_test_passed = all(all(part.values()) for part in outcomes)
    for hidden, part, passes, (score, maximum) in zip((False, True), parts, outcomes, scores):
        if not part:
            continue
        results = [run.results.get(test) for test in part]
        passed = sum(passes.values())
        failed = [
            (short_name(test), reason(result, problem))
            for test, result in zip(part, results)
            if not is_pass(result)
        ]
        records = [
            (short_name(test), r.failure)
            for test, r in zip(part, results)
            if r is not None and not r.passed and r.failure and not r.failure.unfinished
        ]
        scored = scored_in_words(credit, passes, every_test_passed)
        if hidden:  # counts only: nothing of what a hidden test checks, called or found
            failed, records = [], []
        entries.append(
            {
                "name": f"{item.id} {item.title} ({'hidden' if hidden else 'public'} tests)",
                "number": item.id,
                "score": round(score, 4),
                "max_score": round(maximum, 4),
                "status": "passed" if passed == len(part) else "failed",
                "output": entry_output(
                    passed, len(part) - passed, problem, failed, records[:1], scored
                ),
                "visibility": "after_published" if hidden else "visible",
                "tags": [f"chapter {item.chapter.number}"],
            }
        )
    return entries


def is_pass(result: Result | None) -> bool:
    """Whether a test's result is a pass (a test without a result never ran)."""
    return result is not None and result.passed


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


def capped(record: Failure, limit: int = OUTCOME_FIELD_CHARS) -> dict[str, Any]:
    """A failure record as JSON-ready data, each text field cut to `limit` characters."""
    return {
        key: value[:limit] + " ..." if isinstance(value, str) and len(value) > limit else value
        for key, value in record.to_dict().items()
    }


def outcomes_of(
    expected: dict[str, str], run: Run, problems: dict[str, str]
) -> dict[str, dict[str, Any]]:
    """Per expected test: its exercise, whether it passed, whether it is hidden, why it did
    not pass in one line, and either the exercise whose stub it ran into or, for a public
    test, the failure record (the class report and each student's report.html read these).
    `problems`: why an exercise's module was not graded, by exercise (its tests then failed
    for that alone)."""
    found = {}
    for test, exercise_id in expected.items():
        result = run.results.get(test)
        passed = result is not None and result.passed
        problem = problems.get(exercise_id)
        outcome = {
            "exercise": exercise_id,
            "passed": passed,
            "hidden": is_hidden_test(test),
            "reason": "" if passed else reason(result, problem),
        }
        if not passed and problem:
            outcome["problem"] = problem
        elif not passed and result is not None and result.unfinished:
            outcome["unfinished"] = result.unfinished
        elif not passed and not outcome["hidden"] and result is not None and result.failure:
            outcome["failure"] = capped(result.failure)
        found[test] = outcome
    return found


def module_problems(exercise_ids: list[str], assembly: Assembly) -> dict[str, str]:
    """Per exercise whose module was not graded (missing, broken), why not."""
    problems = {
        exercise_id: assembly.problem_of(BY_ID[exercise_id].path) for exercise_id in exercise_ids
    }
    return {exercise_id: why for exercise_id, why in problems.items() if why}


def results_json(
    expected: dict[str, str],
    run: Run,
    assembly: Assembly,
    limits: SandboxLimits,
    mode: SandboxMode,
    seconds: float,
    credit: Credit = DEFAULT_CREDIT,
) -> dict[str, Any]:
    """The Gradescope results of one submission, scored against the `expected` tests by the
    `credit` rule."""
    tests, per_exercise = [], {}
    for item in CATALOG:
        mine = [test for test, owner in expected.items() if owner == item.id]
        if mine:
            entries = exercise_entries(item, mine, run, assembly, credit)
            tests += entries
            per_exercise[item.id] = round(sum(entry["score"] for entry in entries), 4)
    max_score = sum(BY_ID[exercise_id].points for exercise_id in per_exercise)
    problems = module_problems(list(per_exercise), assembly)
    return {
        "score": round(sum(per_exercise.values()), 2),
        "execution_time": round(seconds, 2),
        "output": summary_output(assembly, run, limits, mode)
        + f"\nPartial credit ({credit}): {credit.rule}.",
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
            "credit": credit.value,
            "outcomes": outcomes_of(
                {test: owner for test, owner in expected.items() if owner in per_exercise},
                run,
                problems,
            ),
            "problems": problems,
        },
    }
