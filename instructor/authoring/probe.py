"""Pytest plugin for verify's probe trees, loaded with `-p instructor.authoring.probe`: which
solution regions each test reaches, and each test run with its own exercise stubbed.

A probe tree (see release.probed_source) calls `reach(id)` at the top of every solution
region. The regions a test reached go into its `user_properties` as ("reached", [ids]),
which the runner plugin writes with the test's result. With `--stub-own`, a region of the
running test's own exercise raises that exercise's stub error instead of running.
"""

from __future__ import annotations

import pytest

from tenxor.course.catalog import BY_ID, stub_message
from tenxor.course.markers import exercise_of

STUBBED: set[str] = set()  # the exercises stubbed for the running test
REACHED: set[str] = set()  # the exercises whose regions the running test has reached


def reach(exercise_id: str) -> None:
    """Note that the running test reached the exercise's region; raise the exercise's stub
    error if it is stubbed."""
    REACHED.add(exercise_id)
    if exercise_id in STUBBED:
        raise NotImplementedError(stub_message(BY_ID[exercise_id]))


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.getgroup("tenxor probe").addoption(
        "--stub-own", action="store_true", help="run each test with its own exercise stubbed"
    )


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):
    REACHED.clear()
    STUBBED.clear()
    if item.config.getoption("--stub-own"):
        STUBBED.add(exercise_of(item))
    yield
    STUBBED.clear()


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item: pytest.Item) -> None:
    item.user_properties.append(("reached", sorted(REACHED)))
