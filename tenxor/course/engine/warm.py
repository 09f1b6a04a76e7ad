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
import hashlib
import json
import os
import select
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..catalog import CATALOG
from .in_process import IN_BROWSER, run_in_this_process
from .running import (
    FORGET_EDITABLE_INSTALLS,
    NAMED_PLUGINS,
    ONLY_NAMED_PLUGINS,
    PLUGIN_OPTIONS,
    SEED_OPTION,
    Limits,
    PytestProcess,
    Result,
    Run,
    child_environment,
    exit_in_words,
    record_not_run,
    run_tests,
    tail,
)

WORKER_FILE = Path(__file__).with_name("worker.py")
# The worker runs as a script, so that it never imports the tenxor package itself.
START = (
    FORGET_EDITABLE_INSTALLS + "import runpy\nrunpy.run_path(sys.argv.pop(1), run_name='__main__')"
)
SHARED_IDLE_SECONDS = 900.0  # the shell's worker ends after this long without a check
STARTUP_SECONDS = 120.0  # how long the first check waits for the worker to get ready
GRACE_SECONDS = 2.0  # how long a child past its time limit has to stop by itself
PYTEST_COULD_NOT_RUN = {2: "interrupted", 3: "an internal error", 4: "a usage error"}
# What a check never shows: log records and the warnings summary (warnings still reach the
# child's output); leaving their plugins out spares every test their set-up.
UNSHOWN_PLUGINS = ("-p", "no:logging", "-p", "no:warnings")


@dataclass(frozen=True)
class Ending:
    """How a child ended: its exit code (negative: the signal that ended it), whether it was
    killed for running past its time limit, when it was forked and the CPU seconds it used."""

    code: int
    killed: bool
    forked: float
    cpu: float
    worker: int = 0  # the worker that forked it


class WorkerDied(RuntimeError):
    """The worker process ended or stopped answering."""


class Answers:
    """Reads a worker's JSON-line answers from one descriptor, and runs a child through them."""

    def __init__(self) -> None:
        self.pending = b""

    def descriptor(self) -> int:
        raise NotImplementedError

    def problem(self) -> str:
        raise NotImplementedError

    def message(self, seconds: float) -> dict[str, Any] | None:
        """The worker's next message, or None if none came within `seconds`."""
        deadline = time.monotonic() + seconds
        while b"\n" not in self.pending:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([self.descriptor()], [], [], left)
            if ready:
                chunk = os.read(self.descriptor(), 65536)
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

    def ending(self, seconds: float) -> Ending:
        """Wait for the child of the request just sent; kill it after `seconds`."""
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
        worker = int(started.get("worker", 0))
        return Ending(ended["code"], killed, started["forked"], ended["cpu"], worker)


def worker_command(root: Path, *options: str) -> list[str]:
    return [sys.executable, "-c", START, str(WORKER_FILE), str(root), *options]


class Worker(Answers):
    """The notebook's warm worker process, and the pipes to it: it dies with the notebook."""

    def __init__(self, root: Path) -> None:
        super().__init__()
        self.log = tempfile.TemporaryFile()  # noqa: SIM115 - closed in stop()
        self.process = subprocess.Popen(
            worker_command(root),
            cwd=root,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            env={**child_environment("check"), **ONLY_NAMED_PLUGINS},
            start_new_session=True,
        )

    def descriptor(self) -> int:
        assert self.process.stdout is not None
        return self.process.stdout.fileno()

    def alive(self) -> bool:
        return self.process.poll() is None

    def problem(self) -> str:
        """Why the worker ended: its exit and the last lines it printed."""
        self.log.seek(0)
        printed = self.log.read().decode("utf-8", errors="replace").strip()[-2000:]
        code = self.process.poll()
        ended = f"it ended ({exit_in_words(code)})" if code is not None else "it stopped answering"
        return f"{ended}{': ' + printed if printed else ''}"

    def run(self, request: dict[str, Any], seconds: float) -> Ending:
        """Run one child and say how it ended."""
        stream = self.process.stdin
        assert stream is not None
        try:
            stream.write((json.dumps(request) + "\n").encode("utf-8"))
            stream.flush()
        except (BrokenPipeError, ValueError):
            raise WorkerDied(self.problem()) from None
        return self.ending(seconds)

    def stop(self) -> None:
        """End the worker (and any child it runs)."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()
        for stream in (self.process.stdin, self.process.stdout, self.log):
            with contextlib.suppress(OSError):
                stream.close()


def private_folder() -> Path:
    """This user's folder for the shell's workers' sockets, which no other user may enter."""
    folder = Path(tempfile.gettempdir()) / f"tenxor-{os.getuid()}"
    with contextlib.suppress(FileExistsError):
        folder.mkdir(mode=0o700)
    found = folder.lstat()
    if not stat.S_ISDIR(found.st_mode) or found.st_uid != os.getuid() or found.st_mode & 0o077:
        raise WorkerDied(f"{folder} is not a folder of this user's alone")
    return folder


def shared_address(root: Path) -> Path:
    """The socket of the shell's worker for the course at `root`."""
    return private_folder() / f"{hashlib.sha256(str(root).encode()).hexdigest()[:16]}.sock"


class SharedWorker(Answers):
    """The shell's warm worker: it outlives the `tenxor check` that started it, so the next
    one is answered at once, and ends after SHARED_IDLE_SECONDS without a request."""

    def __init__(self, root: Path) -> None:
        super().__init__()
        self.root, self.address = root, shared_address(root)
        self.connection: socket.socket | None = None

    def descriptor(self) -> int:
        assert self.connection is not None
        return self.connection.fileno()

    def problem(self) -> str:
        return f"the worker at {self.address} stopped answering"

    def connect(self) -> socket.socket | None:
        """A connection to the running worker, or None if none listens."""
        connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            connection.connect(str(self.address))
        except OSError:
            connection.close()
            return None
        return connection

    def start(self) -> socket.socket:
        """Start the worker (one at a time: a lock file guards the start) and connect."""
        import fcntl  # POSIX only, as the shell's worker is: `check` still imports on Windows

        with open(self.address.with_suffix(".lock"), "w") as lock:  # noqa: PTH123
            fcntl.flock(lock, fcntl.LOCK_EX)
            connection = self.connect()
            if connection is not None:
                return connection
            process = subprocess.Popen(
                worker_command(self.root, "--socket", str(self.address), str(SHARED_IDLE_SECONDS)),
                cwd=self.root,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                env={**child_environment("check"), **ONLY_NAMED_PLUGINS},
                start_new_session=True,
            )
            deadline = time.monotonic() + STARTUP_SECONDS
            while time.monotonic() < deadline and process.poll() is None:
                connection = self.connect()
                if connection is not None:
                    return connection
                time.sleep(0.02)
        raise WorkerDied(f"the worker did not start ({exit_in_words(process.poll() or 0)})")

    def run(self, request: dict[str, Any], seconds: float) -> Ending:
        """Run one child on a new connection and say how it ended."""
        self.connection = self.connect() or self.start()
        try:
            self.connection.sendall((json.dumps(request) + "\n").encode("utf-8"))
            return self.ending(seconds)
        except OSError:
            raise WorkerDied(self.problem()) from None
        finally:
            self.connection.close()
            self.pending = b""

    def stop(self) -> None:
        """Ask the worker to end, if one runs."""
        connection = self.connect()
        if connection is not None:
            with connection:
                connection.sendall(b'{"stop": true}\n')


class WorkerKeeper:
    """The warm worker that a process's checks use, and the lock that lets one check at a time
    talk to it: the notebook's own worker (started by the first check, replaced when it has
    died, ended with the process) or, in a shell, the shell's, which outlives the process."""

    def __init__(self) -> None:
        self.worker: Worker | SharedWorker | None = None
        self.in_a_shell = False  # whether checks use the shell's worker
        self.lock = threading.Lock()

    def use_the_shells_worker(self) -> None:
        """Let the checks use (or start) the shell's worker for their course, which stays warm
        for the next command (the `tenxor check` command does this)."""
        self.in_a_shell = True

    def worker_for(self, root: Path) -> Worker | SharedWorker:
        """The running worker, started if there is none (or it died); in a shell, the shell's
        worker of the course at `root`."""
        if self.in_a_shell:
            self.worker = SharedWorker(root)
        elif self.worker is None or not self.worker.alive():
            self.stop()
            self.worker = Worker(root)
        return self.worker

    def stop(self) -> None:
        """End the worker, if one runs; the next check starts a new one."""
        if self.worker is not None:
            self.worker.stop()
            self.worker = None

    def stop_the_notebooks_worker(self) -> None:
        """At exit: end the process's own worker (the shell's stays warm for the next check)."""
        if isinstance(self.worker, Worker):
            self.stop()


KEEPER = WorkerKeeper()  # the one of this process: every check in it goes through it
atexit.register(KEEPER.stop_the_notebooks_worker)
# What the rest of the course calls (see engine/__init__.py).
worker_for = KEEPER.worker_for
stop_worker = KEEPER.stop
use_the_shells_worker = KEEPER.use_the_shells_worker


def finish(run: Run, pytest_process: PytestProcess, ending: Ending, seconds: float) -> Run:
    """Fill in the test that was running when the child ended early, and the tests it never
    reached."""
    code, killed = ending.code, ending.killed
    run.notes.append({"event": "child", **asdict(ending)})
    if not pytest_process.finished:
        if killed:
            run.problem = f"stopped after {seconds:g} s, the time a check may take"
        else:
            run.problem = f"the test process ended early ({exit_in_words(code)})"
        if pytest_process.current is not None:
            test = pytest_process.current[0]
            exercise = run.collected.get(test, "?")
            run.results[test] = Result(test, exercise, "failed", run.problem, timed_out=killed)
    elif any(result.timed_out for result in run.results.values()):
        run.problem = f"stopped after {seconds:g} s, the time a check may take"
    elif code in PYTEST_COULD_NOT_RUN:
        run.problem = f"pytest could not run them ({PYTEST_COULD_NOT_RUN[code]})"
    record_not_run(run, "the run stopped before it")
    run.output = tail(pytest_process.output_path)
    return run


def in_a_new_process(
    root: Path, pytest_args: list[str], seconds: float, memory_mb: int, profile: str
) -> Run:
    """Run the tests the slow way, in a new Python process, when there is no worker."""
    limits = Limits(test_seconds=seconds, run_seconds=seconds * 2, memory_mb=memory_mb)
    return run_tests(root, pytest_args, limits, profile)


def run_checked(
    root: Path,
    pytest_args: list[str],
    seconds: float,
    memory_mb: int,
    profile: str = "check",
    explain: bool = True,
) -> Run:
    """Run pytest on the tree at `root` (explaining its first failure, when `explain`) in a
    fresh child of the warm worker, stopped after `seconds`; every test's result. Without a
    working worker the tests run in a new process instead, which is slower but gives the same
    results."""
    root = root.resolve()
    named = [
        *(["--explain"] if explain else []),
        SEED_OPTION,
        f"--check-seconds={seconds}",
        f"--check-memory-mb={memory_mb}",
    ]
    named += pytest_args
    if IN_BROWSER:  # no processes: the kernel runs the tests itself
        return run_in_this_process(root, named, seconds, profile)
    if not hasattr(os, "fork"):
        return in_a_new_process(root, named, seconds, memory_mb, profile)
    started = time.monotonic()
    with KEEPER.lock, tempfile.TemporaryDirectory(prefix="tenxor-check-") as scratch:
        pytest_process = PytestProcess(root, Path(scratch), 1)
        request = {
            "root": str(root),
            "args": [
                *PLUGIN_OPTIONS,
                *NAMED_PLUGINS,
                *UNSHOWN_PLUGINS,
                f"--results={pytest_process.events_path}",
                *named,
            ],
            "output": str(pytest_process.output_path),
            "memory_mb": memory_mb,
            "environment": {"TENXOR_HYPOTHESIS_PROFILE": profile},
            "fresh_modules": sorted({item.module for item in CATALOG}),
        }
        for attempt in range(2):
            try:
                ending = KEEPER.worker_for(root).run(request, seconds)
                break
            except WorkerDied:
                KEEPER.stop()
                if attempt == 1:
                    return in_a_new_process(root, named, seconds, memory_mb, profile)
                for path in (pytest_process.events_path, pytest_process.output_path):
                    path.unlink(missing_ok=True)
            except BaseException:
                # An interrupted check (the kernel's stop button): the worker's next answers
                # would belong to this check, so a new worker serves the next one.
                KEEPER.stop()
                raise
        run = Run()
        pytest_process.take(run)
        finish(run, pytest_process, ending, seconds)
    run.seconds = time.monotonic() - started
    return run
