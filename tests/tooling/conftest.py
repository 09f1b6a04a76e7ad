"""The tooling's test files run side by side, one per process (pytest-xdist's loadfile): the
slowest start first, so that the run does not end waiting on one of them alone. (xdist hands
out the files in the order collected here only with --no-loadscope-reorder, which instructor.ci
passes; by default it starts with the files that hold the most tests.)"""

from __future__ import annotations

import gc
import os
from pathlib import Path

import pytest

COURSE = Path(__file__).resolve().parents[2]

# The test files that take longest (each half a minute or more of one process), slowest first.
SLOWEST_FIRST = (
    "test_autograder.py",
    "test_grading_runs.py",
    "test_trust.py",
    "test_after_grading.py",
    "test_grading.py",
    "test_new_chapter.py",
    "test_browser_site.py",
    "test_autograder_targets.py",
    "test_check.py",
    "test_each_exercise_alone.py",
    "test_jupyterlab.py",
    "test_benchmarks.py",
    "test_intake.py",
    "test_verify.py",
    "test_planted_answers.py",
)


def start_rank(item: pytest.Item) -> int:
    """Where a test's file stands in SLOWEST_FIRST; every other file after them."""
    name = item.path.name
    return SLOWEST_FIRST.index(name) if name in SLOWEST_FIRST else len(SLOWEST_FIRST)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The slowest files first, the rest in their usual order (the sort is stable)."""
    items.sort(key=start_rank)


def pytest_collection_finish() -> None:
    """What a test process has loaded by now lives as long as it does: Python's collector
    then only looks at what the tests make."""
    gc.freeze()


def pytest_configure(config: pytest.Config) -> None:
    """The checkout closed to other users, as grading without namespaces asks of a course
    (its workers are other users, and grading refuses to start where they could read it):
    a clone is often readable by everyone. Only root grades as other users."""
    if os.geteuid() == 0:
        COURSE.chmod(COURSE.stat().st_mode & ~0o007)
