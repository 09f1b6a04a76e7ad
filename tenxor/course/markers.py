"""Pytest plugin: every test grades exactly one catalog exercise, or is marked `provided`.

Loaded by the project's tests/conftest.py. With `--exercise-map FILE` it also writes, after
collection, a JSON object mapping each test's node id to its exercise id (or "provided").
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .catalog import BY_ID

PROVIDED = "provided"


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
