"""Pytest plugin for the tooling's test runs (check, grade, verify), loaded with
`-p tenxor.course.engine.runner` in a separate process.

It writes one JSON line per event to the `--results` file, flushed at once, so the parent
process keeps every finished result even if the run is killed: `collected` (the tests to run),
`start` and `end` of each test (with its outcome and, for a failure, its `Failure` record: see
failure.py), `collect-error` for a test file that cannot be imported, `finished` and `timing`.
It enforces a time limit per test and, with `--check-seconds`, for the whole run (one timer
serves both), runs only the node ids listed in `--only`, and passes on what other plugins put
in a test's `user_properties` (verify's probe: the regions a test reached). With `--explain`
(check's runs) the first failed test is run once more, watching the learner's functions, so
its record names the call that went wrong. What it reads of pytest and hypothesis beyond
their documented API is named in upstream.py.
"""

from __future__ import annotations

import contextlib
import gc
import inspect
import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import IO, Any

import pytest

from ..failure import Failure, ints_in_hex, shown
from ..markers import BIT_PATTERNS, exercise_of
from .explain import (
    UNFINISHED,
    TimeLimitExceeded,
    comparison_in_words,
    exercise_codes,
    explained,
    explained_leaf,
    first_lines,
    raised_error,
    raised_in_provided_code,
    replaying,
    watched_calls,
    with_calls,
)
from .upstream import (
    SUMMARY_CHARS,
    bound_shrinking,
    collect_error_line,
    parametrized_case,
    skip_reason,
    summary_side,
)

__all__ = ["UNFINISHED", "TimeLimitExceeded"]
FIRST_SHRINK_SECONDS = 0.5  # for the first failing example, the one a learner reads
CASE_VALUE_CHARS = 60


def case_value(value: object) -> str:
    """One value of a case as the report writes it: a function or a class by its name (they
    print as addresses), anything else by its repr."""
    if inspect.isroutine(value) or inspect.isclass(value):
        return getattr(value, "__name__", shown(value))
    return shown(value, CASE_VALUE_CHARS)


def case_in_words(item: pytest.Item) -> str | None:
    """A parametrized test's case as its values: "shape=(2, 3), dim=1", "dtype=int64"; by the
    id its test gave it where a value is a lambda, which has no name to show."""
    case = parametrized_case(item)
    if case is None:
        return None
    params, case_id = case
    if any(getattr(value, "__name__", None) == "<lambda>" for value in params.values()):
        return case_id
    return ", ".join(f"{name}={case_value(value)}" for name, value in params.items())


def summary_repr(value: object) -> str:
    """A value as pytest shows it in the first line of a failed `==` (shortened to fit; where
    pytest no longer offers its way of writing it, shortened as it does, roughly)."""
    written = summary_side(value)
    return written if written is not None else shown(value, SUMMARY_CHARS)


def on_alarm(signum: int, frame: Any) -> None:
    raise TimeLimitExceeded("the test ran longer than its time limit")


def plain_properties(item: pytest.Item) -> dict[str, Any]:
    """What other plugins put in a test's `user_properties`, the JSON-ready part."""
    found = {}
    for key, value in item.user_properties:
        with contextlib.suppress(TypeError, ValueError):
            json.dumps(value)
            found[str(key)] = value
    return found


@contextlib.contextmanager
def watched_lines(seconds: float, package: str):
    """Raise TimeLimitExceeded in the block once `seconds` have passed, found at the next
    call of a Python function or line of the package in the folder `package` (where there
    are no signals to interrupt a loop): the learner's code, where a loop may never end."""
    deadline = time.monotonic() + seconds

    def on_line(frame: Any, event: str, argument: Any) -> Any:
        if time.monotonic() > deadline:
            raise TimeLimitExceeded("the test ran longer than its time limit")
        return on_line

    def on_call(frame: Any, event: str, argument: Any) -> Any:
        on_line(frame, event, argument)
        return on_line if frame.f_code.co_filename.startswith(package) else None

    previous = sys.gettrace()
    sys.settrace(on_call)
    try:
        yield
    finally:
        sys.settrace(previous)


class Timer:
    """The one alarm of a test process: it stops a test at its own limit or at the end of
    the whole run, whichever comes first (0: no limit)."""

    def __init__(self, test_seconds: float, run_seconds: float, package: str = "") -> None:
        self.package = package  # the folder whose lines are watched where there are no signals
        self.test_seconds = test_seconds
        self.deadline = time.monotonic() + run_seconds if run_seconds else None

    def seconds_left(self) -> float:
        """How long the next test may run (0.0: no limit)."""
        limits = [self.test_seconds] if self.test_seconds else []
        if self.deadline is not None:
            limits.append(max(0.001, self.deadline - time.monotonic()))
        return min(limits, default=0.0)

    @contextlib.contextmanager
    def armed(self):
        """Raise TimeLimitExceeded in the block when its time is up."""
        seconds = self.seconds_left()
        if not seconds:
            yield
            return
        if not hasattr(signal, "setitimer"):  # no signals (the browser): watch each line
            with watched_lines(seconds, self.package):
                yield
            return
        previous = signal.signal(signal.SIGALRM, on_alarm)
        signal.setitimer(signal.ITIMER_REAL, seconds, 0.5)
        try:
            yield
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)


class Recorder:
    """Writes the events of one run as JSON lines, one flushed line per event, and keeps the
    run's one timer."""

    def __init__(self, config: pytest.Config, stream: IO[str]) -> None:
        self.stream, self.root = stream, Path(str(config.rootpath))
        self.explain = config.getoption("--explain")
        self.seconds = config.getoption("--check-seconds")
        self.memory_mb = config.getoption("--check-memory-mb")
        package = str(self.root / "tenxor") + os.sep
        self.timer = Timer(config.getoption("--test-timeout"), self.seconds, package)
        self.failures: dict[str, Failure | str] = {}  # test -> its record, or why it skipped
        self.times = {"started": time.time()}
        self.explained_one = False  # only the first failure is run again and watched
        self.shrinking_before: float | None = None  # hypothesis's bound, given back at the end

    def write(self, **event: Any) -> None:
        self.stream.write(json.dumps(event) + "\n")
        self.stream.flush()

    def pytest_sessionstart(self) -> None:
        if self.explain:
            self.shrinking_before = bound_shrinking(FIRST_SHRINK_SECONDS)

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        self.write(event="collected", tests={item.nodeid: exercise_of(item) for item in items})

    def pytest_collection_finish(self) -> None:
        self.times["collected"] = time.time()
        # What is loaded by now (pytest, hypothesis, the tests) lives as long as the run: the
        # collector then only looks at what the tests make, and the run's end at nothing.
        gc.freeze()

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            message = first_lines(collect_error_line(report))
            self.write(event="collect-error", path=report.nodeid, message=message)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None):
        self.write(event="start", test=item.nodeid, time=time.time())
        yield
        failure = self.failures.pop(item.nodeid, None)
        # pytest keeps the last failure's traceback, and every frame in it, in sys.last_*;
        # drop them so one test's memory blow-up does not starve the tests after it.
        sys.last_type = sys.last_value = sys.last_traceback = None
        event: dict[str, Any] = {"outcome": "passed"}
        if isinstance(failure, str):
            event = {"outcome": "skipped", "message": failure}
        elif failure is not None:
            event = {"outcome": "failed", "failure": failure.to_dict()}
            if failure.message.startswith("MemoryError"):
                gc.collect()
        properties = plain_properties(item)
        self.write(event="end", test=item.nodeid, properties=properties, **event)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item: pytest.Item):
        with self.timer.armed():
            yield

    @pytest.hookimpl(tryfirst=True)
    def pytest_assertrepr_compare(self, op: str, left: object, right: object) -> list[str] | None:
        """Leave a comparison to pytest, unless pytest would print its two sides the same."""
        if op != "==" or summary_repr(left) != summary_repr(right):
            return None
        return comparison_in_words(left, right)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo):
        report = (yield).get_result()
        if item.nodeid in self.failures:
            return
        if report.failed and call.excinfo is not None:
            self.failures[item.nodeid] = self.record(item, call.excinfo.value)
        elif report.failed:
            self.failures[item.nodeid] = Failure(first_lines(str(report.longrepr)))
        elif report.skipped:
            self.failures[item.nodeid] = skip_reason(report)

    def record(self, item: pytest.Item, error: BaseException) -> Failure:
        """The record of a failed test; the first one of an `--explain` run is run again,
        watching the learner's functions, to name the call that went wrong."""
        with ints_in_hex(item.get_closest_marker(BIT_PATTERNS) is not None):
            return self.explained_record(item, error)

    def explained_record(self, item: pytest.Item, error: BaseException) -> Failure:
        exercise = exercise_of(item)
        found = explained(
            error, self.root, exercise, self.seconds, self.memory_mb, case_in_words(item)
        )
        if found.timed_out and self.timer.deadline and time.monotonic() >= self.timer.deadline:
            item.session.shouldstop = "the check reached its time limit"
        if not self.explain or self.explained_one or found.unfinished or found.timed_out:
            return found
        self.explained_one = True
        bound_shrinking(0.0)  # later failures' examples need not be the smallest
        rerun = replaying(getattr(item, "obj", None), item.runtest, error)
        with self.timer.armed():
            calls = watched_calls(rerun, exercise_codes())
        provided = raised_in_provided_code(raised_error(explained_leaf(error)), self.root)
        return with_calls(found, exercise, calls, provided)

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, exitstatus: int) -> None:
        self.write(event="finished", exitstatus=int(exitstatus))
        self.write(event="timing", **self.times, finished=time.time())
        if self.shrinking_before is not None:  # a check in a kernel leaves hypothesis as it was
            bound_shrinking(self.shrinking_before)

    def pytest_unconfigure(self) -> None:
        self.stream.close()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("tenxor runner")
    group.addoption("--results", metavar="FILE", help="write JSON lines of test events here")
    group.addoption("--only", metavar="FILE", help="run only the node ids listed in FILE")
    group.addoption(
        "--test-timeout", type=float, default=0.0, metavar="S", help="time limit per test"
    )
    group.addoption(
        "--check-seconds", type=float, default=0.0, metavar="S", help="stop the run after S s"
    )
    group.addoption(
        "--check-memory-mb", type=int, default=0, metavar="MB", help="the memory limit, to name"
    )
    group.addoption(
        "--split",
        type=int,
        default=1,
        metavar="N",
        help="run the collected tests in N processes forked after collection (one per CPU)",
    )
    group.addoption(
        "--explain",
        action="store_true",
        help="run the first failed test again to name the learner's call that went wrong",
    )


def pytest_configure(config: pytest.Config) -> None:
    target = config.getoption("--results")
    if target:
        stream = open(target, "a", encoding="utf-8")  # noqa: SIM115 - closed at unconfigure
        config.pluginmanager.register(Recorder(config, stream), "tenxor-recorder")


def run_share(session: pytest.Session, share: list[pytest.Item]) -> None:
    """Run some of the collected tests, in order, as pytest's own loop runs them."""
    for position, item in enumerate(share):
        following = share[position + 1] if position + 1 < len(share) else None
        item.config.hook.pytest_runtest_protocol(item=item, nextitem=following)
        if session.shouldfail or session.shouldstop:
            return


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session: pytest.Session) -> bool | None:
    """With `--split N`, fork N - 1 processes once the tests are collected, and let each of
    the N run every N-th test; their events go to the same file, line by line. The forked
    processes end without the session's end, which this process writes once they are done."""
    shares = session.config.getoption("--split")
    no_processes = not hasattr(os, "fork") or sys.platform == "emscripten"  # the browser's
    if shares < 2 or no_processes or session.config.option.collectonly:
        return None
    items, forked = list(session.items), []
    for share in range(1, min(shares, len(items))):
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                run_share(session, items[share::shares])
            except BaseException:  # noqa: BLE001 - the parent records what is missing
                code = 1
            finally:
                with contextlib.suppress(BaseException):
                    sys.stdout.flush()
                    sys.stderr.flush()
                os._exit(code)
        forked.append(pid)
    run_share(session, items[0::shares])
    for pid in forked:
        os.waitpid(pid, 0)
    return True


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    only = config.getoption("--only")
    if only:
        wanted = set(Path(only).read_text(encoding="utf-8").splitlines())
        config.hook.pytest_deselected(items=[i for i in items if i.nodeid not in wanted])
        items[:] = [item for item in items if item.nodeid in wanted]
