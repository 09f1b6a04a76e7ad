"""The sandbox worker: the one process that runs a submission's code, for the judge.

A launcher (instructor.launcher) starts it for the judge (instructor.sandbox), with a
configuration and two pipes to the judge. In order:

1. It waits for the launcher's "go" (by then the kernel counts it, and all it will start,
   in the worker's group). While only the course's own code runs, it imports what the library
   needs, reads the package it will run (the release's provided modules and the
   submission's exercise modules) and confines itself. As root that means: a mount
   namespace in which the course, the submissions and the output are empty read-only file
   systems and /tmp is a fresh one of its own, a network namespace with no network, limits
   on memory, processes, open files and file size, and a user ID of its own with no
   groups. It then tells the judge "ready".
2. It imports the submission (from here on the submission's code runs in this process) and
   tells the judge whether that worked.
3. It answers calls, until its input closes:
       judge:  ["call", module, name, args, kwargs, stand-ins]
       worker: ["ret", value, changes]   or   ["raise", error]   or   ["limit", why]
   While it runs a call, it may call a function of the judge, ["cb", number, args, kwargs],
   and the judge may call it again before it answers: each side serves the other's calls
   while it waits.

Everything it sends is plain data (instructor.plain_data), which the judge decodes as data
only: no function, module or class is taken from it, and no figure it could report (its CPU
time, its memory) is asked for: the judge reads those from the kernel.
"""

from __future__ import annotations

import ctypes
import importlib
import json
import os
import resource
import signal
import sys
from pathlib import Path
from typing import Any

from instructor import plain_data, reachable
from instructor.plain_data import HEADER, SCALARS, Call, Decoder, Encoder, Kinds, error_data

# What the provided library and a typical submission import, loaded before the submission.
PRELOADED = (
    "abc", "array", "bisect", "cmath", "collections", "collections.abc", "contextlib", "copy",
    "dataclasses", "decimal", "enum", "fractions", "functools", "heapq", "inspect",
    "itertools", "math", "numbers", "operator", "random", "re", "statistics", "string",
    "struct", "textwrap", "traceback", "types", "typing", "warnings", "weakref",
    "encodings.idna", "encodings.latin_1", "encodings.ascii",
)  # fmt: skip
CLONE_NEWNS, CLONE_NEWNET = 0x00020000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_REC, MS_PRIVATE = 1, 2, 4, 0x4000, 0x40000
PR_SET_PDEATHSIG = 1
SCRATCH_TEMPS = ("/tmp", "/var/tmp", "/dev/shm", "/run/lock")
PYTHON_FOLDERS = Path("/tmp/tenxor-python")  # isolated: where imports find their folders
STOP_SIGNAL = signal.SIGUSR1  # what the judge sends when a call has used up its CPU time


class CallLimit(BaseException):
    """Raised inside a call that used up its CPU time."""


class Channel:
    """Length-prefixed messages over two pipes (blocking: the judge keeps the clock)."""

    def __init__(self, reading: int, writing: int) -> None:
        self.reading, self.writing = reading, writing
        self.buffer = b""

    def send(self, data: Any) -> None:
        message = plain_data.dumps(data)
        while message:
            message = message[os.write(self.writing, message) :]

    def fill(self, size: int) -> None:
        while len(self.buffer) < size:
            chunk = os.read(self.reading, 1 << 20)
            if not chunk:
                os._exit(0)  # the judge has gone
            self.buffer += chunk

    def receive(self) -> Any:
        self.fill(HEADER)
        end = HEADER + int.from_bytes(self.buffer[:HEADER], "big")
        self.fill(end)
        payload, self.buffer = self.buffer[HEADER:end], self.buffer[end:]
        return json.loads(payload)


def libc_call(name: str, *arguments: Any) -> None:
    """Call a C library function that returns -1 on failure; OSError if it fails."""
    function = getattr(ctypes.CDLL(None, use_errno=True), name)
    if function(*arguments) != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"{name}: {os.strerror(error)}")


def mount_empty(path: str, options: str, flags: int) -> None:
    """Mount a new tmpfs over `path`, hiding what was there (in this mount namespace)."""
    libc_call("mount", b"tmpfs", path.encode(), b"tmpfs", flags, options.encode())


def mount_call(source: str | None, target: str, flags: int) -> None:
    libc_call("mount", source and source.encode(), target.encode(), None, flags, None)


def isolate(config: dict[str, Any], folders: list[str]) -> None:
    """New mount and network namespaces: each hidden folder an empty, read-only file system
    that no user but root may enter, a fresh /tmp (and the other shared temporary folders),
    no network; the `folders` Python imports from bound read-only into the fresh /tmp, where
    imports then find them."""
    libc_call("unshare", CLONE_NEWNS | CLONE_NEWNET)
    libc_call("mount", None, b"/", None, MS_REC | MS_PRIVATE, None)
    handles = reachable.hold(folders)  # in this namespace, before anything is hidden
    for path in config["hidden"]:
        if os.path.isdir(path):
            mount_empty(path, "size=4k,mode=0", MS_RDONLY | MS_NOSUID | MS_NODEV)
    fresh = [path for path in SCRATCH_TEMPS if os.path.isdir(path)]
    for path in fresh:
        mount_empty(path, f"size={config['file_mb']}m,mode=1777", MS_NOSUID | MS_NODEV)
    for path in config["hidden"]:  # one inside a fresh folder: there too, but closed
        if any(Path(path).is_relative_to(folder) for folder in fresh):
            Path(path).parent.mkdir(mode=0o755, parents=True, exist_ok=True)
            Path(path).mkdir(mode=0, exist_ok=True)
    reachable.reroute(reachable.through_bind_mounts(handles, PYTHON_FOLDERS, mount_call))


def read_package(folder: Path) -> dict[str, bytes]:
    """Every file of the package to run, relative to `folder`."""
    return {
        path.relative_to(folder).as_posix(): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts
    }


def write_package(files: dict[str, bytes], folder: Path) -> None:
    for relative, data in files.items():
        target = folder / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


def limit(config: dict[str, Any]) -> None:
    """Cap memory, processes, open files and file size; no core files."""
    megabyte = 1024 * 1024
    caps = {
        resource.RLIMIT_AS: config["memory_mb"] * megabyte,
        resource.RLIMIT_FSIZE: config["file_mb"] * megabyte,
        resource.RLIMIT_CORE: 0,
        resource.RLIMIT_NOFILE: 256,
    }
    if config["uid"] is not None:  # a count per user: only meaningful for a user of its own
        caps[resource.RLIMIT_NPROC] = config["processes"]
    for kind, value in caps.items():
        resource.setrlimit(kind, (value, value))


def become(uid: int) -> None:
    """Drop every privilege: user and group `uid`, no supplementary groups."""
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)


def confine(config: dict[str, Any]) -> Path:
    """Confine this process as the configuration says; its home folder, which holds
    `package/` (a copy of the package to run, read-only to it) and `scratch/` (its own).
    Isolated, the home is in the fresh /tmp of its mount namespace; otherwise the folder
    the launcher made for it, which only its user may enter."""
    files = read_package(Path(config["package"]))
    tree = os.path.abspath(config["tree"])  # the judge's: never reachable from here
    folders = [f for f in reachable.import_folders() if not Path(f).is_relative_to(tree)]
    if config["mode"] == "isolated":
        isolate(config, folders)
        home = Path("/tmp/tenxor-worker")
        home.mkdir(mode=0o700)
    else:
        if config["uid"] is not None:
            reachable.reroute(reachable.through_descriptors(reachable.hold(folders)))
        home = Path(config["home"])  # made by the launcher, which removes it
    write_package(files, home / "package")
    (home / "scratch").mkdir()
    limit(config)
    if config["uid"] is not None:
        for folder in (home, home / "scratch"):
            os.chown(folder, config["uid"], config["uid"])
        become(config["uid"])
    libc_call("prctl", PR_SET_PDEATHSIG, int(signal.SIGKILL))  # after the change of user
    if os.getppid() != config["parent"]:
        os._exit(1)
    os.chdir(home / "scratch")
    os.environ.update(HOME=str(home / "scratch"), TMPDIR=str(home / "scratch"))
    return home


class Worker:
    """Runs calls of the submission's functions, calling back into the judge when asked."""

    def __init__(self, channel: Channel, cpu_seconds: float) -> None:
        self.channel, self.cpu_seconds = channel, cpu_seconds
        self.kinds: Kinds | None = None
        self.depth = 0

    def load(self, package: Path, modules: list[str], tree: str) -> None:
        """Import the submission's package and every module of the catalog's chapters, and
        learn its tensor classes and the records the catalog names."""
        sys.path[:] = [str(package), *[p for p in sys.path if p not in ("", tree)]]
        for module in modules:
            __import__(module)
        catalog = importlib.import_module("tenxor.course.catalog")
        for module in catalog.EXERCISE_MODULES:
            importlib.import_module(module)
        self.kinds = plain_data.tensor_kinds(
            sys.modules["tenxor"],
            records=catalog.RECORDS,
            exercise=lambda module, name: getattr(sys.modules[module], name),
            callback=self.stand_in,
        )

    def stand_in(self, number: int) -> Any:
        """A function that calls the judge's function `number`."""

        def call_judge(*args: Any, **kwargs: Any) -> Any:
            encoder = Encoder(self.kinds, Call(), lenient=True)
            self.channel.send(["cb", number, encoder.encode(args), encoder.encode(kwargs)])
            return self.wait()

        return call_judge

    def wait(self) -> Any:
        """Serve the judge's calls until it answers the call this side made."""
        while True:
            message = self.channel.receive()
            if message[0] == "ret":
                return Decoder(self.kinds, Call(), register=False).decode(message[1])
            if message[0] == "raise":
                raise plain_data.raised(message[1])
            self.answer(message)

    def answer(self, message: list[Any]) -> None:
        """Run one call of the judge and send its outcome."""
        _, module, name, args, kwargs, stand_ins = message
        call = Call()
        replaced: list[tuple[Any, str, Any]] = []
        self.depth += 1
        try:
            function = getattr(sys.modules[module], name)  # the submission's, not a stand-in
            decoder = Decoder(self.kinds, call, register=True)
            args, kwargs = decoder.decode(args), decoder.decode_kwargs(kwargs)
            for where, attribute, stand_in in stand_ins:
                owner = sys.modules[where]
                replaced.append((owner, attribute, getattr(owner, attribute)))
                setattr(owner, attribute, decoder.decode(stand_in))
            before = [snapshot(value) for value in call.objects]
            result = function(*args, **kwargs)
            if type(result) in SCALARS and not call.objects:
                outcome = ["ret", result, []]
            else:
                encoder = Encoder(self.kinds, call, lenient=True, refer=True)
                changes = [
                    [place, encoded(encoder, item, contents=True)]
                    for place, (item, old) in enumerate(zip(call.objects, before))
                    if snapshot(item) != old
                ]
                outcome = ["ret", encoded(encoder, result), changes]
        except CallLimit:
            outcome = ["limit", f"the call used more than {self.cpu_seconds:g} s of CPU time"]
        except BaseException as error:  # noqa: BLE001 - every error of the submission is data
            outcome = ["raise", error_data(error)]
        finally:
            self.depth -= 1
            for owner, attribute, original in reversed(replaced):
                setattr(owner, attribute, original)
        self.channel.send(outcome)


def snapshot(value: Any) -> Any:
    """A copy of what a list, dict or Storage holds now, to tell whether the call changed it
    (a value replaced by an equal one counts as unchanged)."""
    if isinstance(value, list):
        return list(value)
    if isinstance(value, dict):
        return dict(value)
    return list(value.data)


def encoded(encoder: Encoder, value: Any, contents: bool = False) -> Any:
    """`value` as plain data, or "?" when even the lenient encoder cannot send it."""
    try:
        return encoder.contents(value, 0) if contents else encoder.encode(value)
    except BaseException as error:  # noqa: BLE001 - an unreadable value is a wrong answer
        return ["?", f"value that cannot be sent ({type(error).__name__})"]


WORKER: Worker | None = None


def on_stop_signal(signum: int, frame: Any) -> None:
    """The judge says the running call has used up its CPU time: end it."""
    if WORKER is not None and WORKER.depth > 0:
        raise CallLimit()


def main(config: dict[str, Any]) -> None:
    channel = Channel(*config["fds"])
    if channel.receive() != ["go"]:
        os._exit(1)
    for module in PRELOADED:
        __import__(module)
    home = confine(config)
    channel.send(["ready"])
    global WORKER
    worker = WORKER = Worker(channel, config["call_cpu_seconds"])
    signal.signal(STOP_SIGNAL, on_stop_signal)
    try:
        worker.load(home / "package", config["modules"], config["tree"])
    except BaseException as error:  # noqa: BLE001 - reported to the judge, whatever it is
        channel.send(["imported", error_data(error)])
        os._exit(1)
    channel.send(["imported", None])
    while True:
        worker.answer(channel.receive())


# How the judge starts a worker: with the judge's tree (for this module) first on the path.
BOOT = """\
import json, sys
config = json.loads(sys.argv[1])
sys.path.insert(0, config["tree"])
from instructor.sandbox_worker import main
main(config)
"""
