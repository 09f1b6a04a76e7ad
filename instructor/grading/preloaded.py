"""Judges forked from a process that has imported their libraries once for the whole batch.

A judge, a recorder, an import check and the batch's collecting run each start as
`python -c SCRIPT ...` and spend a good part of their start importing pytest, its plugins,
hypothesis and NumPy. A batch starts several of them; grading a class, hundreds. The starter
is one process per batch that imports those libraries (nothing of the course: no tenxor, no
instructor, no tests) and forks each of them from itself:

    with Starter(scratch, profile) as starter:
        process = starter.start(command, tree, output, limits, profile, settings)
        process.wait()

What it forks is what `tenxor.course.engine.start` would have started with the same
arguments: the same script after the same lifeline (its memory capped, dying with the
starter, which dies with grading), in a session of its own, in `tree`, reading nothing,
writing into `output`, with the environment start() gives. It runs only the course's code, as
a judge always does: no sandbox worker is ever forked from the starter (a worker starts from
nothing, so nothing of one submission can reach another). The starter's command line names
the batch's scratch folder, and the processes it forks keep that command line, so a look for
the batch's processes finds them.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import IO

from tenxor.course.engine import Limits
from tenxor.course.engine.running import LIMITED, child_environment, started_environment

# What a judge imports before it reads a test, and hypothesis, which the tests' conftest
# imports first (after its pytest plugin, as in any pytest run): imported once, by the starter.
PRELOADED = (
    "numpy",
    "ml_dtypes",
    "pytest",
    "_hypothesis_pytestplugin",
    "hypothesis",
    "pytest_timeout",
    "_pytest.config",
)
SIZE_BYTES = 8  # a request's size, and a pid sent back, each as so many bytes, big-endian

# The starter's script. It imports PRELOADED and pytest's own plugins, then serves the
# requests that come on its standard input (a socket: each request its size, with the
# output's and the exit pipe's descriptors, then its JSON): it forks a process for each,
# sends back its pid, and once that process has ended writes its exit code to the pipe that
# came with the request. Its input closed, it kills what it forked and still runs, and ends.
# A forked process leaves the loop with its request and runs the request's script instead.
SERVE = f"""\
import contextlib, gc, importlib, json, os, select, signal, socket, sys
for name in {PRELOADED!r}:
    with contextlib.suppress(ImportError):
        importlib.import_module(name)
for name in getattr(sys.modules.get("_pytest.config"), "default_plugins", ()):
    with contextlib.suppress(ImportError):
        importlib.import_module("_pytest." + name)
gc.freeze()  # what it imported stays out of every collection, and unwritten, in each fork
requests = socket.socket(fileno=0)
woken, wake = os.pipe()
os.set_blocking(wake, False)
signal.set_wakeup_fd(wake)
signal.signal(signal.SIGCHLD, lambda *_: None)
exits, request = {{}}, None


def end():  # the batch is over: what still runs goes with the starter
    for pid in exits:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGKILL)
    os._exit(0)


def received(size, data):  # data and what follows it on the socket: size bytes
    while len(data) < size:
        more = requests.recv(size - len(data))
        if not more:
            end()
        data += more
    return data


while request is None:
    ready = select.select([requests, woken], [], [])[0]
    if woken in ready:
        os.read(woken, 4096)
    while exits:
        pid, status = os.waitpid(-1, os.WNOHANG)
        if pid == 0:
            break
        with contextlib.suppress(BrokenPipeError):  # its requester is gone: no one to tell
            os.write(exits[pid], str(os.waitstatus_to_exitcode(status)).encode())
        os.close(exits.pop(pid))
    if requests not in ready:
        continue
    size, descriptors, _, _ = socket.recv_fds(requests, {SIZE_BYTES}, 2)
    if not size:
        end()
    size = received({SIZE_BYTES}, size)
    output, exit_pipe = descriptors
    message = received(int.from_bytes(size, "big"), b"")
    pid = os.fork()
    if pid:
        os.close(output)
        exits[pid] = exit_pipe
        requests.sendall(pid.to_bytes({SIZE_BYTES}, "big"))
        continue
    request = json.loads(message)
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    requests.detach()  # descriptor 0: the process reads nothing instead
    for descriptor in (woken, wake, exit_pipe, *exits.values()):
        os.close(descriptor)
    os.setsid()
    os.chdir(request["cwd"])
    nothing = os.open(os.devnull, os.O_RDONLY)
    for descriptor, standard in ((nothing, 0), (output, 1), (output, 2)):
        os.dup2(descriptor, standard)
    os.close(nothing)
    os.close(output)
os.environ.clear()
os.environ.update(request["env"])
sys.dont_write_bytecode = bool(os.environ.get("PYTHONDONTWRITEBYTECODE"))
sys.argv = ["-c", *request["argv"]]
script = compile(request["script"], "<string>", "exec")
del request, requests, exits, message, size, descriptors, ready, end, received
exec(script, {{"__name__": "__main__", "__builtins__": __builtins__}})
"""


class Started:
    """A process the starter forked: what grading uses of a subprocess.Popen."""

    def __init__(self, pid: int, exit_pipe: int) -> None:
        self.pid, self.exit_pipe = pid, exit_pipe
        self.returncode: int | None = None

    def ended(self, timeout: float | None) -> bool:
        """Whether it has ended, waiting `timeout` seconds at most (None: until it has)."""
        return bool(select.select([self.exit_pipe], [], [], timeout)[0])

    def wait(self, timeout: float | None = None) -> int:
        """Its exit code, as Popen.wait gives it (minus the signal that ended it)."""
        if self.returncode is None:
            if not self.ended(timeout):
                raise subprocess.TimeoutExpired(f"process {self.pid}", timeout or 0.0)
            said = os.read(self.exit_pipe, 64)
            os.close(self.exit_pipe)
            # Nothing said: the starter ended first, and took it along with SIGKILL.
            self.returncode = int(said) if said else -signal.SIGKILL
        return self.returncode

    def poll(self) -> int | None:
        return self.wait() if self.returncode is None and self.ended(0) else self.returncode

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.pid, signal.SIGKILL)


# What starts a test process of grading as engine.start does: a starter's start, or start.
Starts = Callable[..., subprocess.Popen | Started]


class Starter:
    """One batch's starter process (see the module's docstring), started at its first
    request and ended by close()."""

    def __init__(self, scratch: Path, profile: str) -> None:
        self.scratch, self.profile = scratch, profile
        self.process: subprocess.Popen | None = None
        self.requests: socket.socket | None = None
        self.lock = threading.Lock()  # the batch's slots start processes side by side

    def __enter__(self) -> Starter:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def connected(self) -> socket.socket:
        """The socket to the starter process, which starts at the first call."""
        if self.requests is None:
            ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
            environment = child_environment(self.profile)
            memory = str(Limits().memory_mb)  # a judge's cap, which each fork sets again
            environment.update(TENXOR_MEMORY_MB=memory, TENXOR_PARENT=str(os.getpid()))
            command = [sys.executable, "-c", LIMITED + SERVE, str(self.scratch)]
            with theirs:
                self.process = subprocess.Popen(
                    command, stdin=theirs, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                    env=environment, start_new_session=True,
                )  # fmt: skip
            self.requests = ours
        return self.requests

    def start(
        self,
        command: list[str],
        root: Path,
        output: IO[bytes],
        limits: Limits,
        profile: str,
        settings: dict[str, str],
    ) -> Started:
        """Fork what `tenxor.course.engine.start` would start with these arguments."""
        python, flag, script, *arguments = command
        if flag != "-c" or python != sys.executable:
            raise ValueError(f"the starter runs this Python's -c scripts, not {command[:2]}")
        request = {"script": LIMITED + script, "argv": arguments, "cwd": str(root)}
        exit_read, exit_write = os.pipe()
        try:
            with self.lock:
                requests = self.connected()
                parent = self.process.pid  # what the fork's lifeline watches: the starter
                request["env"] = started_environment(limits, profile, settings, parent)
                message = json.dumps(request).encode()
                size = len(message).to_bytes(SIZE_BYTES, "big")
                socket.send_fds(requests, [size], [output.fileno(), exit_write])
                requests.sendall(message)
                pid = requests.recv(SIZE_BYTES, socket.MSG_WAITALL)
        finally:
            os.close(exit_write)
        if len(pid) < SIZE_BYTES:
            os.close(exit_read)
            ended = self.process.wait()
            raise OSError(f"the judges' starter ended ({ended}) before it started one")
        return Started(int.from_bytes(pid, "big"), exit_read)

    def close(self) -> None:
        """End the starter, and what it forked that still runs."""
        with self.lock:
            if self.requests is not None:
                self.requests.close()
                self.requests = None
                self.process.wait()
