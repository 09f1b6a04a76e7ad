"""Run a course tree's tests in a separate, limited process and collect every result.

The child is pytest with the `tenxor.course.engine.runner` plugin. The parent watches its
event file: a test that runs past its time limit and cannot be interrupted, a run that prints
too much or outlives its wall-clock limit is killed, and a test that ends the process
(`os._exit`, a crash, the memory limit) is recorded as failed. The run then resumes with the
tests not yet run, so one bad test never costs the others their result.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, Any

from ..failure import Failure
from .upstream import EDITABLE_FINDER_MARK, HYPOTHESIS_PLUGIN

# The first lines of every child process: an editable install of tenxor elsewhere must not
# shadow the package of the tree the child runs in, so the child forgets its finders.
FORGET_EDITABLE_INSTALLS = f"""\
import sys
sys.meta_path[:] = [
    f for f in sys.meta_path if {EDITABLE_FINDER_MARK!r} not in str(getattr(f, "__module__", ""))
]
"""
# ... and puts the tree given as its first argument on the path.
ISOLATE = FORGET_EDITABLE_INSTALLS + "sys.path.insert(0, sys.argv.pop(1))\n"
BOOTSTRAP = ISOLATE + "import pytest\nraise SystemExit(pytest.main(sys.argv[1:]))\n"
# What a child started by start() runs first: cap its own address space, and make sure it
# dies with the process that started it (if that one is already gone, stop at once).
LIFELINE = Path(__file__).with_name("lifeline.py")
LIMITED = f"__import__('runpy').run_path({str(LIFELINE)!r})['bound_from_environment']()\n"
SEED_OPTION = "--hypothesis-seed=0"  # check's runs: the same examples every time
PLUGIN_OPTIONS = (
    *("-p", "tenxor.course.engine.runner", "-p", "no:nbval", "-p", "no:cacheprovider"),
    *("-W", "ignore::pytest.PytestAssertRewriteWarning", "--tb=no"),
)
# A test process loads the plugins it is named and no other installed one: looking through
# every installed package for plugins costs time at each start, and pytest rewrites the
# asserts of every module of a package it finds a plugin in (all of hypothesis's), again in
# each process that may not keep the bytecode it rewrote.
ONLY_NAMED_PLUGINS = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
NAMED_PLUGINS = ("-p", HYPOTHESIS_PLUGIN)
POLL_SECONDS = 0.05
CRASHES_PER_EXERCISE = 2  # then the exercise's other tests fail without running


@dataclass(frozen=True)
class Limits:
    """What one run may use: seconds per test, wall-clock seconds in all, memory, output."""

    test_seconds: float = 20.0
    run_seconds: float = 900.0
    memory_mb: int = 4096
    output_mb: float = 8.0

    @property
    def kill_after(self) -> float:
        """When a test that ignores its time limit is killed from outside."""
        return self.test_seconds + max(2.0, self.test_seconds / 2)


@dataclass
class Result:
    """The outcome of one test: passed, failed, skipped or not run, and why (for a failure
    the test process recorded, its `Failure` record)."""

    test: str
    exercise: str
    outcome: str
    message: str = ""
    unfinished: str | None = None
    timed_out: bool = False
    failure: Failure | None = None
    properties: dict[str, Any] = field(default_factory=dict)  # other plugins' findings

    @property
    def passed(self) -> bool:
        return self.outcome == "passed"

    @classmethod
    def of_record(cls, test: str, exercise: str, outcome: str, failure: Failure) -> Result:
        """A failed test's result from its record."""
        return cls(
            test,
            exercise,
            outcome,
            failure.message,
            failure.unfinished,
            failure.timed_out,
            failure=failure,
        )


def result_of(test: str, exercise: str, event: dict[str, Any]) -> Result:
    """A test's result from the `end` event the runner plugin wrote (keys it does not know
    are ignored, so a newer plugin's events still read)."""
    outcome = str(event.get("outcome", "failed"))
    found = event.get("properties")
    properties = found if isinstance(found, dict) else {}
    if isinstance(event.get("failure"), dict):
        failure = Failure.from_dict(event["failure"])
        return replace(Result.of_record(test, exercise, outcome, failure), properties=properties)
    return Result(test, exercise, outcome, str(event.get("message", "")), properties=properties)


@dataclass
class Run:
    """Everything one run found out."""

    collected: dict[str, str] = field(default_factory=dict)  # test -> exercise
    results: dict[str, Result] = field(default_factory=dict)
    collect_errors: dict[str, str] = field(default_factory=dict)  # test file -> message
    output: str = ""
    seconds: float = 0.0
    problem: str | None = None  # why the run ended early, if it did
    notes: list[dict[str, Any]] = field(default_factory=list)  # events of other plugins


def function_of(test: str) -> str:
    """The test function a collected test belongs to: its node id without its case, e.g.
    tests/test_strides.py::test_x for tests/test_strides.py::test_x[shape0]."""
    return test.split("[", 1)[0]


def short_name(test: str) -> str:
    """A test's node id without its folder: test_strides.py::test_x[case]."""
    path, _, name = test.partition("::")
    return f"{path.rsplit('/', 1)[-1]}::{name}" if name else path.rsplit("/", 1)[-1]


def child_environment(profile: str) -> dict[str, str]:
    """The environment of a test process: no bytecode files, one BLAS thread, fixed hypothesis
    profile, and nothing that would put another tenxor on the path."""
    environment = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    environment.update(
        PYTHONDONTWRITEBYTECODE="1",
        OPENBLAS_NUM_THREADS="1",
        OMP_NUM_THREADS="1",
        TENXOR_HYPOTHESIS_PROFILE=profile,
    )
    return environment


def started_environment(
    limits: Limits, profile: str, settings: dict[str, str] | None, parent: int
) -> dict[str, str]:
    """The environment of a child that start() starts: a test process's, the memory cap of
    `limits`, the process it dies with (`parent`), and `settings` added."""
    environment = child_environment(profile)
    environment.update(TENXOR_MEMORY_MB=str(limits.memory_mb), TENXOR_PARENT=str(parent))
    environment.update(settings or {})
    return environment


def start(
    command: list[str],
    root: Path,
    output: IO[bytes],
    limits: Limits,
    profile: str,
    settings: dict[str, str] | None = None,
):
    """Start a limited child process in its own session, its output going to `output`, with
    `settings` added to its environment.

    `command` is `[python, "-c", script, ...]`; the child runs LIMITED before the script, so
    it caps its own memory and dies with this process (no preexec_fn, which Python documents
    as unsafe in a process with threads, such as a batch graded by several at once)."""
    python, flag, script, *arguments = command
    if flag != "-c":
        raise ValueError(f"start() runs a Python script given with -c, not {command[:2]}")
    environment = started_environment(limits, profile, settings, os.getpid())
    return subprocess.Popen(
        [python, "-c", LIMITED + script, *arguments],
        cwd=root,
        stdin=subprocess.DEVNULL,
        stdout=output,
        stderr=subprocess.STDOUT,
        env=environment,
        start_new_session=True,
    )


def read_events(path: Path, offset: int) -> tuple[list[dict[str, Any]], int]:
    """The complete JSON lines written to `path` after `offset`, and the new offset."""
    if not path.exists():
        return [], offset
    with path.open("rb") as stream:
        stream.seek(offset)
        chunk = stream.read()
    complete = chunk[: chunk.rfind(b"\n") + 1]
    events = [json.loads(line) for line in complete.decode("utf-8").splitlines() if line]
    return events, offset + len(complete)


def tail(path: Path, limit: int = 4000) -> str:
    """The last `limit` characters a process printed."""
    if not path.exists():
        return ""
    with path.open("rb") as stream:
        stream.seek(max(0, path.stat().st_size - limit))
        return stream.read().decode("utf-8", errors="replace")


def exit_in_words(code: int) -> str:
    """A process exit code as words: "exit code 0", "signal SIGKILL"."""
    if code < 0:
        return f"signal {signal.Signals(-code).name}"
    return f"exit code {code}"


class PytestProcess:
    """One pytest process of a run, over some of the tests: its command, and its events and
    output, watched until it ends or is killed."""

    def __init__(self, root: Path, folder: Path, number: int) -> None:
        self.root, self.folder = root, folder
        self.events_path = folder / f"events-{number}.jsonl"
        self.output_path = folder / f"output-{number}.txt"
        self.only_path = folder / f"only-{number}.txt"
        self.killed: str | None = None
        self.timed_out = self.finished = False
        self.current: tuple[str, float] | None = None
        self.offset = 0

    def command(self, pytest_args: list[str], only: list[str] | None, limits: Limits) -> list:
        options = [*PLUGIN_OPTIONS, *NAMED_PLUGINS, f"--results={self.events_path}"]
        options += [f"--test-timeout={limits.test_seconds}", "--continue-on-collection-errors"]
        if only is not None:
            self.only_path.write_text("\n".join(only) + "\n", encoding="utf-8")
            options.append(f"--only={self.only_path}")
        return [sys.executable, "-c", BOOTSTRAP, str(self.root), *options, *pytest_args]

    def watch(self, process: subprocess.Popen, run: Run, limits: Limits, deadline: float):
        """Take in events until the process ends; kill it when it breaks a limit."""
        while True:
            ended = process.poll() is not None
            self.take(run)
            if ended:
                return
            now = time.monotonic()
            if self.current and now - self.current[1] > limits.kill_after:
                self.timed_out = True
                self.kill(process, f"killed after {limits.kill_after:g} s: it would not stop")
            elif self.output_path.stat().st_size > limits.output_mb * 1024 * 1024:
                # The child appends, so emptying the file caps the disk it can fill.
                os.truncate(self.output_path, 0)
            elif now > deadline:
                self.kill(process, f"killed: the run reached its {limits.run_seconds:g} s limit")
            time.sleep(POLL_SECONDS)

    def take(self, run: Run) -> None:
        events, self.offset = read_events(self.events_path, self.offset)
        for event in events:
            kind = event.pop("event")
            if kind == "collected":
                run.collected.update(event["tests"])
            elif kind == "collect-error":
                run.collect_errors[event["path"]] = event["message"]
            elif kind == "start":
                self.current = (event["test"], time.monotonic())
            elif kind == "finished":
                self.finished = True
            elif kind == "end":
                self.current = None
                test = event.pop("test")
                run.results[test] = result_of(test, run.collected.get(test, "?"), event)
            else:
                run.notes.append({"event": kind, **event})

    def kill(self, process: subprocess.Popen, reason: str) -> None:
        self.killed = reason
        with contextlib.suppress(ProcessLookupError):
            if hasattr(os, "killpg"):
                os.killpg(process.pid, signal.SIGKILL)
            else:  # no process groups (Windows): the test process alone
                process.kill()
        process.wait()


def record_not_run(run: Run, otherwise: str) -> None:
    """Record every collected test without a result as not run, because of the run's problem
    or, if it had none, `otherwise`."""
    reason = f"not run: {run.problem or otherwise}"
    for test, exercise in run.collected.items():
        run.results.setdefault(test, Result(test, exercise, "not run", reason))


def give_up_on(run: Run, exercise: str, reason: str) -> None:
    """Fail the tests of `exercise` that have not run yet: its code has ended or hung the test
    process CRASHES_PER_EXERCISE times, and restarting for each of its tests would spend the
    time of every other exercise."""
    for test, owner in run.collected.items():
        if owner == exercise and test not in run.results:
            run.results[test] = Result(
                test,
                owner,
                "failed",
                f"not run: tests of exercise {exercise} ended or hung the test process "
                f"{CRASHES_PER_EXERCISE} times ({reason})",
            )


def run_tests(
    root: Path,
    pytest_args: list[str],
    limits: Limits = Limits(),
    profile: str = "ci",
    only: list[str] | None = None,
    settings: dict[str, str] | None = None,
    starts: Callable[..., subprocess.Popen] = start,
) -> Run:
    """Run pytest on the course tree at `root` and return every test's result, resuming after
    a test that kills or hangs the process (after two such tests of one exercise, its other
    tests fail unrun); tests that never ran are recorded as "not run". `settings` are added
    to the test process's environment; `starts` starts each test process, as start() does."""
    run, started = Run(), time.monotonic()
    deadline = started + limits.run_seconds
    crashes: dict[str, int] = {}  # exercise -> tests of it that ended or hung the process
    with tempfile.TemporaryDirectory(prefix="tenxor-run-") as scratch:
        number, remaining = 0, only
        while True:
            number += 1
            pytest_process = PytestProcess(Path(root), Path(scratch), number)
            with pytest_process.output_path.open("ab") as output:
                command = pytest_process.command(pytest_args, remaining, limits)
                named = {**ONLY_NAMED_PLUGINS, **(settings or {})}
                process = starts(command, root, output, limits, profile, named)
                pytest_process.watch(process, run, limits, deadline)
            run.output = tail(pytest_process.output_path)
            if pytest_process.finished or pytest_process.current is None:
                break
            test, _ = pytest_process.current
            ended = f"the test process ended ({exit_in_words(process.returncode)})"
            reason = pytest_process.killed or ended
            owner = run.collected.get(test, "?")
            run.results[test] = Result(
                test, owner, "failed", reason, timed_out=pytest_process.timed_out
            )
            crashes[owner] = crashes.get(owner, 0) + 1
            if crashes[owner] >= CRASHES_PER_EXERCISE:
                give_up_on(run, owner, reason)
            remaining = [name for name in run.collected if name not in run.results]
            if not remaining or time.monotonic() > deadline:
                break
        if not pytest_process.finished:
            run.problem = (
                pytest_process.killed or f"it ended early ({exit_in_words(process.returncode)})"
            )
        record_not_run(run, "the run ended before it")
    run.seconds = time.monotonic() - started
    return run
