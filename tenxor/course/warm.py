"""Run a check's tests in the warm worker (`worker.py`), from the notebook's own process.

The first check starts the worker, which then lives as long as this process. Every check
forks a fresh child from it, so an edit counts at the next check, and a check costs a
fraction of a second instead of the second a new Python process takes to import pytest,
hypothesis and NumPy. The time limit is kept from here: a child still running after it is
killed. A worker that died is replaced by the next check.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from .catalog import CATALOG
from .running import (
    PLUGIN_OPTIONS,
    Limits,
    Result,
    Round,
    Run,
    child_environment,
    exit_in_words,
    record_not_run,
    run_tests,
    tail,
)

WORKER_FILE = Path(__file__).with_name("worker.py")
# The worker runs as a script, so that it never imports the tenxor package itself.
START = "import runpy, sys; runpy.run_path(sys.argv.pop(1), run_name='__main__')"
STARTUP_SECONDS = 120.0  # how long the first check waits for the worker to get ready
GRACE_SECONDS = 2.0  # how long a child past its time limit has to stop by itself
PYTEST_COULD_NOT_RUN = {2: "interrupted", 3: "an internal error", 4: "a usage error"}
FEEDBACK_OPTIONS = ("-p", "tenxor.course.feedback")
# In the worker, pytest loads the plugins it is given, and does not look through every
# installed package for others at each check.
ONLY_NAMED_PLUGINS = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
NAMED_PLUGINS = ("-p", "_hypothesis_pytestplugin")


@dataclass(frozen=True)
class Ending:
    """How a child ended: its exit code (negative: the signal that ended it), whether it was
    killed for running past its time limit, when it was forked and the CPU seconds it used."""

    code: int
    killed: bool
    forked: float
    cpu: float


class WorkerDied(RuntimeError):
    """The worker process ended or stopped answering."""


class Worker:
    """The warm worker process, and the pipes to it."""

    def __init__(self, root: Path) -> None:
        self.log = tempfile.TemporaryFile()  # noqa: SIM115 - closed in stop()
        self.process = subprocess.Popen(
            [sys.executable, "-c", START, str(WORKER_FILE), str(root)],
            cwd=root,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            env={**child_environment("check"), **ONLY_NAMED_PLUGINS},
            start_new_session=True,
        )
        self.pending = b""

    def alive(self) -> bool:
        return self.process.poll() is None

    def problem(self) -> str:
        """Why the worker ended: its exit and the last lines it printed."""
        self.log.seek(0)
        printed = self.log.read().decode("utf-8", errors="replace").strip()[-2000:]
        code = self.process.poll()
        ended = f"it ended ({exit_in_words(code)})" if code is not None else "it stopped answering"
        return f"{ended}{': ' + printed if printed else ''}"

    def message(self, seconds: float) -> dict[str, Any] | None:
        """The worker's next message, or None if none came within `seconds`."""
        deadline = time.monotonic() + seconds
        stream = self.process.stdout
        assert stream is not None
        while b"\n" not in self.pending:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([stream], [], [], left)
            if ready:
                chunk = os.read(stream.fileno(), 65536)
                if not chunk:
                    raise WorkerDied(self.problem())
                self.pending += chunk
        line, self.pending = self.pending.split(b"\n", 1)
        return json.loads(line)

    def next_with(self, key: str, seconds: float) -> dict[str, Any] | None:
        """The next message holding `key` (skipping the worker's "ready"), or None."""
        deadline = time.monotonic() + seconds
        while True:
            found = self.message(max(0.0, deadline - time.monotonic()))
            if found is None or key in found:
                return found

    def run(self, request: dict[str, Any], seconds: float) -> Ending:
        """Run one child and say how it ended."""
        stream = self.process.stdin
        assert stream is not None
        try:
            stream.write((json.dumps(request) + "\n").encode("utf-8"))
            stream.flush()
        except (BrokenPipeError, ValueError):
            raise WorkerDied(self.problem()) from None
        started = self.next_with("child", STARTUP_SECONDS)
        if started is None:
            raise WorkerDied(self.problem())
        ended = self.next_with("ended", seconds + GRACE_SECONDS)
        killed = ended is None
        if killed:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(started["child"], signal.SIGKILL)
            ended = self.next_with("ended", 10.0)
            if ended is None:
                raise WorkerDied(self.problem())
        return Ending(ended["code"], killed, started["forked"], ended["cpu"])

    def stop(self) -> None:
        """End the worker (and any child it runs)."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()
        for stream in (self.process.stdin, self.process.stdout, self.log):
            with contextlib.suppress(OSError):
                stream.close()


_worker: Worker | None = None
_lock = threading.Lock()


def stop_worker() -> None:
    """End the worker, if one runs; the next check starts a new one."""
    global _worker
    if _worker is not None:
        _worker.stop()
        _worker = None


atexit.register(stop_worker)


def worker_for(root: Path) -> Worker:
    """The running worker, started if there is none (or it died)."""
    global _worker
    if _worker is None or not _worker.alive():
        stop_worker()
        _worker = Worker(root)
    return _worker


def finish(run: Run, round_: Round, ending: Ending, seconds: float) -> Run:
    """Fill in the test that was running when the child ended early, and the tests it never
    reached."""
    code, killed = ending.code, ending.killed
    run.notes.append({"event": "child", **asdict(ending)})
    if not round_.finished:
        if killed:
            run.problem = f"stopped after {seconds:g} s, the time a check may take"
        else:
            run.problem = f"the test process ended early ({exit_in_words(code)})"
        if round_.current is not None:
            test = round_.current[0]
            exercise = run.collected.get(test, "?")
            run.results[test] = Result(test, exercise, "failed", run.problem, timed_out=killed)
    elif any(result.timed_out for result in run.results.values()):
        run.problem = f"stopped after {seconds:g} s, the time a check may take"
    elif code in PYTEST_COULD_NOT_RUN:
        run.problem = f"pytest could not run them ({PYTEST_COULD_NOT_RUN[code]})"
    record_not_run(run, "the run stopped before it")
    run.output = tail(round_.output_path)
    return run


def in_a_new_process(
    root: Path, pytest_args: list[str], seconds: float, memory_mb: int, profile: str
) -> Run:
    """Run the tests the slow way, in a new Python process, when there is no worker."""
    limits = Limits(test_seconds=seconds, run_seconds=seconds * 2, memory_mb=memory_mb)
    return run_tests(root, pytest_args, limits, profile)


def run_checked(
    root: Path, pytest_args: list[str], seconds: float, memory_mb: int, profile: str = "check"
) -> Run:
    """Run pytest with the feedback plugin on the tree at `root`, in a fresh child of the
    warm worker, stopped after `seconds`; every test's result. Without a working worker the
    tests run in a new process instead, which is slower but gives the same results."""
    root = root.resolve()
    named = [*FEEDBACK_OPTIONS, f"--check-memory-mb={memory_mb}", *pytest_args]
    if not hasattr(os, "fork"):
        return in_a_new_process(root, named, seconds, memory_mb, profile)
    started = time.monotonic()
    with _lock, tempfile.TemporaryDirectory(prefix="tenxor-check-") as scratch:
        round_ = Round(root, Path(scratch), 1)
        request = {
            "root": str(root),
            "args": [
                *PLUGIN_OPTIONS,
                *NAMED_PLUGINS,
                f"--results={round_.events_path}",
                f"--check-seconds={seconds}",
                *named,
            ],
            "output": str(round_.output_path),
            "memory_mb": memory_mb,
            "environment": {"TENXOR_HYPOTHESIS_PROFILE": profile},
            "fresh_modules": sorted({item.module for item in CATALOG}),
        }
        for attempt in range(2):
            try:
                ending = worker_for(root).run(request, seconds)
                break
            except WorkerDied:
                stop_worker()
                if attempt == 1:
                    return in_a_new_process(root, named, seconds, memory_mb, profile)
                for path in (round_.events_path, round_.output_path):
                    path.unlink(missing_ok=True)
            except BaseException:
                # An interrupted check (the kernel's stop button): the worker's next answers
                # would belong to this check, so a new worker serves the next one.
                stop_worker()
                raise
        run = Run()
        round_.take(run)
        finish(run, round_, ending, seconds)
    run.seconds = time.monotonic() - started
    return run
