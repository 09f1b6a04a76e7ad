"""Pytest plugin for the tooling's test runs (check, grade, verify), loaded with
`-p tenxor.course.runner` in a separate process.

It writes one JSON line per event to the `--results` file, flushed at once, so the parent
process keeps every finished result even if the run is killed: `collected` (the tests to run),
`start` and `end` of each test (with its outcome and the first failure in plain words),
`collect-error` for a test file that cannot be imported, and `finished`. It also enforces a
per-test time limit, runs only the node ids listed in `--only`, and records which exercise
regions each test reaches (see `reach`).
"""

from __future__ import annotations

import gc
import json
import re
import signal
import sys
import time
import traceback
from pathlib import Path
from typing import IO, Any

import pytest

from .catalog import BY_ID, stub_message
from .markers import exercise_of

UNFINISHED = re.compile(r"^Exercise (?P<id>\d+\.\d+):")
MESSAGE_LINES, MESSAGE_CHARS = 6, 600
# pytest explains an assertion with "+  where" lines, nesting deeper ones further right.
NESTED_DETAIL = re.compile(r"^\s*\+ {4,}\S")
# How hypothesis introduces the smallest input that fails (the wording changed over versions).
EXAMPLE_NOTES = ("Falsifying example", "Failing test case")


class TimeLimitExceeded(BaseException):
    """Raised inside a test that ran past the per-test time limit (a BaseException so that
    `except Exception` in the code under test, or hypothesis, does not swallow it)."""


# Set by the plugin around each test: the exercises stubbed for this test, and the exercises
# whose solution regions the test has reached so far.
STUBBED: set[str] = set()
REACHED: set[str] = set()


def reach(exercise_id: str) -> None:
    """Called at the top of every solution region in a probe tree (see verify): notes that the
    running test reached the region, and raises the exercise's stub error if it is stubbed."""
    REACHED.add(exercise_id)
    if exercise_id in STUBBED:
        raise NotImplementedError(stub_message(BY_ID[exercise_id]))


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("tenxor runner")
    group.addoption("--results", metavar="FILE", help="write JSON lines of test events here")
    group.addoption("--only", metavar="FILE", help="run only the node ids listed in FILE")
    group.addoption(
        "--test-timeout", type=float, default=0.0, metavar="S", help="time limit per test"
    )
    group.addoption(
        "--stub-own",
        action="store_true",
        help="run each test with its own exercise stubbed (needs a probe tree)",
    )


def first_lines(text: str) -> str:
    """At most a few lines and a few hundred characters of `text`."""
    lines = text.strip().splitlines()
    short = "\n".join(lines[:MESSAGE_LINES]) + ("\n..." if len(lines) > MESSAGE_LINES else "")
    return short if len(short) <= MESSAGE_CHARS else short[:MESSAGE_CHARS] + " ..."


def without_nested_detail(message: str) -> str:
    """An assertion message keeping pytest's first level of "+  where" explanations only."""
    return "\n".join(line for line in message.splitlines() if not NESTED_DETAIL.match(line))


def leaves(error: BaseException) -> list[BaseException]:
    """The exceptions inside an exception group (hypothesis reports several failures as one
    group), or the exception itself."""
    inner = getattr(error, "exceptions", None)
    if isinstance(inner, (tuple, list)) and inner:
        return [leaf for member in inner for leaf in leaves(member)]
    return [error]


def unfinished_exercise(error: BaseException) -> str | None:
    """The exercise whose stub raised `error`, if it is such a NotImplementedError."""
    match = UNFINISHED.match(str(error)) if isinstance(error, NotImplementedError) else None
    return match["id"] if match else None


def where_in_package(error: BaseException, root: Path) -> str | None:
    """The last line of the package (not its tooling) that the error passed through."""
    package, tooling, where = root / "tenxor", root / "tenxor" / "course", None
    for frame, line in traceback.walk_tb(error.__traceback__):  # no source read: cheap
        path = Path(frame.f_code.co_filename)
        if path.is_relative_to(package) and not path.is_relative_to(tooling):
            where = f"{path.relative_to(root).as_posix()}:{line} in {frame.f_code.co_name}"
    return where


def failure_in_words(error: BaseException, root: Path) -> dict[str, Any]:
    """The exception of a failed test as plain facts: what was raised, with which message, at
    which line of the package, and which unfinished exercise raised it, if any."""
    found = leaves(error)
    unfinished = [unfinished_exercise(leaf) for leaf in found]
    # Explain the first failure that is not an unfinished exercise, if there is one.
    leaf = next((leaf for leaf, u in zip(found, unfinished) if u is None), found[0])
    notes = [note for note in getattr(leaf, "__notes__", []) if isinstance(note, str)]
    notes += [note for note in getattr(error, "__notes__", []) if isinstance(note, str)]
    example = next((note for note in notes if note.startswith(EXAMPLE_NOTES)), None)
    return {
        "message": first_lines(without_nested_detail(f"{type(leaf).__name__}: {leaf}")),
        "example": first_lines(example) if example else None,
        "where": where_in_package(leaf, root),
        "unfinished": unfinished[0] if all(unfinished) else None,
        "timed_out": any(isinstance(leaf, TimeLimitExceeded) for leaf in found),
    }


def on_alarm(signum: int, frame: Any) -> None:
    raise TimeLimitExceeded("the test ran longer than its time limit")


class Recorder:
    """Writes the events of one run as JSON lines, one flushed line per event."""

    def __init__(self, stream: IO[str], root: Path, stub_own: bool) -> None:
        self.stream, self.root, self.stub_own = stream, root, stub_own
        self.failures: dict[str, dict[str, Any]] = {}

    def write(self, **event: Any) -> None:
        self.stream.write(json.dumps(event) + "\n")
        self.stream.flush()

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        self.write(event="collected", tests={item.nodeid: exercise_of(item) for item in items})

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            message = first_lines(str(report.longrepr).strip().splitlines()[-1])
            self.write(event="collect-error", path=report.nodeid, message=message)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None):
        self.write(event="start", test=item.nodeid, time=time.time())
        REACHED.clear()
        STUBBED.clear()
        if self.stub_own:
            STUBBED.add(exercise_of(item))
        yield
        STUBBED.clear()
        failure = self.failures.pop(item.nodeid, None)
        # pytest keeps the last failure's traceback, and every frame in it, in sys.last_*;
        # drop them so one test's memory blow-up does not starve the tests after it.
        sys.last_type = sys.last_value = sys.last_traceback = None
        if failure is not None and failure.get("message", "").startswith("MemoryError"):
            gc.collect()
        outcome = "passed" if failure is None else failure.pop("outcome", "failed")
        self.write(
            event="end",
            test=item.nodeid,
            outcome=outcome,
            reached=sorted(REACHED),
            **(failure or {}),
        )

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo):
        report = (yield).get_result()
        if item.nodeid in self.failures:
            return
        if report.failed and call.excinfo is not None:
            self.failures[item.nodeid] = failure_in_words(call.excinfo.value, self.root)
        elif report.failed:
            self.failures[item.nodeid] = {"message": first_lines(str(report.longrepr))}
        elif report.skipped:
            reason = report.longrepr[-1] if isinstance(report.longrepr, tuple) else "skipped"
            self.failures[item.nodeid] = {"outcome": "skipped", "message": str(reason)}

    def pytest_sessionfinish(self, exitstatus: int) -> None:
        self.write(event="finished", exitstatus=int(exitstatus))

    def pytest_unconfigure(self) -> None:
        self.stream.close()


def pytest_configure(config: pytest.Config) -> None:
    target = config.getoption("--results")
    if target:
        stream = open(target, "a", encoding="utf-8")  # noqa: SIM115 - closed at unconfigure
        root = Path(str(config.rootpath))
        config.pluginmanager.register(Recorder(stream, root, config.getoption("--stub-own")))


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    only = config.getoption("--only")
    if only:
        wanted = set(Path(only).read_text(encoding="utf-8").splitlines())
        config.hook.pytest_deselected(items=[i for i in items if i.nodeid not in wanted])
        items[:] = [item for item in items if item.nodeid in wanted]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item):
    limit = item.config.getoption("--test-timeout")
    if limit > 0:
        previous = signal.signal(signal.SIGALRM, on_alarm)
        signal.setitimer(signal.ITIMER_REAL, limit, 0.5)
    try:
        yield
    finally:
        if limit > 0:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
