"""Pytest plugin: every test grades exactly one catalog exercise, or is marked `provided`.

Loaded by the project's tests/conftest.py. With `--exercise-map FILE` it also writes, after
collection, a JSON object mapping each test's node id to its exercise id (or "provided");
`--exercise ID` keeps the tests of some exercises; a case's id is its values, written as
reports write them; `--progress` ends the run with one line
(progress_line) that counts the exercises whose tests all passed and their points, out of
the catalog's, and names the next exercise to do.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .catalog import BY_ID, CATALOG
from .failure import readable

CASE_ID_CHARS = 60  # a longer value keeps pytest's own id (its name and a number)
PROVIDED = "provided"
BIT_PATTERNS = "bit_patterns"  # a test whose ints are bit patterns: its report shows them in hex
EXERCISES = pytest.StashKey[dict[str, str]]()
OUTCOMES = pytest.StashKey[dict[str, bool]]()  # test -> whether every phase passed


def exercise_of(item: pytest.Item) -> str:
    """The exercise id a test grades, "provided" for a tooling test; raises on anything else."""
    exercises = [mark for mark in item.iter_markers("exercise")]
    provided = list(item.iter_markers(PROVIDED))
    if len(exercises) + len(provided) != 1:
        raise ValueError(
            f"{item.nodeid}: needs exactly one exercise(...) or provided marker, "
            f"has {len(exercises)} exercise and {len(provided)} provided"
        )
    if provided:
        return PROVIDED
    args = exercises[0].args
    if len(args) != 1 or args[0] not in BY_ID:
        raise ValueError(f"{item.nodeid}: exercise marker {args!r} names no catalog exercise")
    return args[0]


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", f"{BIT_PATTERNS}: the test's ints are bit patterns, its report shows them in hex"
    )


def pytest_make_parametrize_id(config: pytest.Config, val: object, argname: str) -> str | None:
    """A case's id says its value, as reports write it: test_x[(2, -1, 4)-24], not
    test_x[shape0-24]; a long value keeps pytest's id."""
    if hasattr(val, "shape") and hasattr(val, "tolist") and not isinstance(val, type):  # an array
        text = f"array({readable(val.tolist())})"
    elif isinstance(val, (tuple, list, slice, dict, set, frozenset)):
        text = readable(val)
    else:
        return None  # numbers, strings, None, functions and classes already read well
    return text if len(text) <= CASE_ID_CHARS else None


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--exercise-map",
        metavar="FILE",
        help="write a JSON map from test node id to exercise id after collection",
    )
    parser.addoption(
        "--exercise",
        metavar="ID",
        action="append",
        default=[],
        help="run only the tests of this exercise (repeat for several), e.g. --exercise 2.1",
    )
    parser.addoption(
        "--progress",
        action="store_true",
        help="end with a line counting the exercises done, their points, and the next one",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    problems, mapping = [], {}
    for item in items:
        try:
            mapping[item.nodeid] = exercise_of(item)
        except ValueError as problem:
            problems.append(str(problem))
    if problems:
        raise pytest.UsageError("tests without a single exercise marker:\n" + "\n".join(problems))
    target = config.getoption("--exercise-map")
    if target:
        Path(target).write_text(json.dumps(mapping, indent=1, sort_keys=True))
    wanted = config.getoption("--exercise")
    if wanted:
        unknown = [exercise_id for exercise_id in wanted if exercise_id not in BY_ID]
        if unknown:
            raise pytest.UsageError(f"no exercise {', '.join(unknown)}; known: {', '.join(BY_ID)}")
        others = [item for item in items if mapping[item.nodeid] not in wanted]
        config.hook.pytest_deselected(items=others)
        items[:] = [item for item in items if mapping[item.nodeid] in wanted]
    config.stash[EXERCISES] = {item.nodeid: mapping[item.nodeid] for item in items}


def progress_line(exercises_run: set[str], exercises_failed: set[str]) -> str:
    """How far the learner is: exercises whose tests ran and all passed, their points, and
    the first exercise of the catalog that is not done yet."""
    done = [item for item in CATALOG if item.id in exercises_run - exercises_failed]
    points = sum(item.points for item in done)
    total = sum(item.points for item in CATALOG)
    following = next((item.id for item in CATALOG if item not in done), None)
    after = f"next: {following}" if following else "every exercise is done"
    return f"{len(done)} of {len(CATALOG)} exercises done ({points} of {total} points); {after}"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    """Note, per test, that it ran and whether any of its phases failed or skipped."""
    report = yield
    outcomes = item.config.stash.setdefault(OUTCOMES, {})
    if report.failed or (report.skipped and report.when != "teardown"):
        outcomes[item.nodeid] = False
    else:
        outcomes.setdefault(item.nodeid, True)
    return report


def pytest_unconfigure(config: pytest.Config) -> None:
    """With --progress, the run's last line says how far the learner is."""
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None or not config.getoption("--progress", default=False):
        return
    exercises = config.stash.get(EXERCISES, {})
    outcomes = config.stash.get(OUTCOMES, {})
    ran = {exercises[test] for test in outcomes if test in exercises}
    failed = {exercises[test] for test, passed in outcomes.items() if not passed}
    reporter.write_line(progress_line(ran, failed))
