"""The sandbox worker: the one process that runs a submission's code, for the judge.

A launcher (instructor.launcher) starts it for the judge (instructor.sandbox), with a
configuration and two pipes to the judge. In order:

1. It waits for the launcher's "go" (by then the kernel counts it, and all it will start,
   in the worker's group). While only the course's own code runs, it imports what the library
   needs, reads the package it will run (the release's provided modules and the
   submission's exercise modules) and confines itself: it takes its own steps (STEPS) of the
   protections its mode turns on (instructor.protections), in their order. As root and with
   namespaces allowed that means: a mount namespace in which the course, the submissions
   and the output are empty read-only file systems and /tmp is a fresh one of its own, a
   network namespace with no network, a user ID of its own with no groups, limits on
   memory, processes, open files and file size, and death with its launcher. It then tells
   the judge "ready".
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
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from instructor import plain_data, reachable
from instructor.leftovers import SHARED_TEMPS
from instructor.plain_data import HEADER, SCALARS, Call, Decoder, Encoder, Kinds, error_data
from instructor.protections import (
    DIES_WITH_LAUNCHER,
    HIDDEN_FOLDERS,
    LIMITS,
    NO_NETWORK,
    OWN_IPC,
    OWN_TMP,
    OWN_USER,
    PROCESS_CAP,
    PROTECTIONS,
    WorkerSettings,
)

# What the provided library and a typical submission import, loaded before the submission.
PRELOADED = (
    "abc", "array", "bisect", "cmath", "collections", "collections.abc", "contextlib", "copy",
    "dataclasses", "decimal", "enum", "fractions", "functools", "heapq", "inspect",
    "itertools", "math", "numbers", "operator", "random", "re", "statistics", "string",
    "struct", "textwrap", "traceback", "types", "typing", "warnings", "weakref",
    "encodings.idna", "encodings.latin_1", "encodings.ascii",
)  # fmt: skip
CLONE_NEWNS, CLONE_NEWNET, CLONE_NEWIPC = 0x00020000, 0x40000000, 0x08000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_REC, MS_PRIVATE = 1, 2, 4, 0x4000, 0x40000
PR_SET_PDEATHSIG = 1
PYTHON_FOLDERS = Path("/tmp/tenxor-python")  # with a /tmp of its own: where imports look
WORKER_HOME = "/tmp/tenxor-worker"  # with a /tmp of its own: its home there
OPEN_FILES = 256
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


def become(uid: int, gid: int) -> None:
    """Drop every privilege: user `uid`, group `gid`, no supplementary groups."""
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)


def die_with(parent: int) -> None:
    """Be killed when the process that started this one ends (a change of user clears
    that, so after it); end now if it already has."""
    libc_call("prctl", PR_SET_PDEATHSIG, int(signal.SIGKILL))
    if os.getppid() != parent:
        os._exit(1)


@dataclass
class Confinement:
    """A worker confining itself: its settings, the package it will run, and what its steps
    have done so far."""

    settings: WorkerSettings
    files: dict[str, bytes]  # the package to run, read before anything is hidden
    folders: list[str]  # where imports come from (never the judge's tree)
    handles: dict[str, int] | None = None  # on `folders`, taken before anything is hidden
    in_namespace: bool = False
    rerouted: bool = False
    made_home: Path | None = None

    def enter_mount_namespace(self) -> None:
        """A mount namespace of this worker's own, whose mounts nobody else sees."""
        if not self.in_namespace:
            libc_call("unshare", CLONE_NEWNS)
            libc_call("mount", None, b"/", None, MS_REC | MS_PRIVATE, None)
            self.in_namespace = True

    def held(self) -> dict[str, int]:
        """A handle on each import folder, taken the first time it is asked for."""
        if self.handles is None:
            self.handles = reachable.hold(self.folders)
        return self.handles

    def home(self) -> Path:
        """The worker's home, made the first time it is asked for: `package/` (a copy of the
        package to run, read-only to the worker) and `scratch/` (its own). In its own /tmp
        where it has one, else the folder the launcher made, which only its user may enter."""
        if self.made_home is None:
            if OWN_TMP.is_on(self.settings.mode):
                home = Path(WORKER_HOME)
                home.mkdir(mode=0o700)
            else:
                home = Path(self.settings.home)  # made by the launcher, which removes it
            write_package(self.files, home / "package")
            (home / "scratch").mkdir()
            self.made_home = home
        return self.made_home


def hide_folders(confinement: Confinement) -> None:
    """With a mount namespace of its own, each hidden folder an empty, read-only file system
    that no user but root may enter. (Without one, grading has closed them to other users.)"""
    if not confinement.settings.mode.namespaces:
        return
    confinement.enter_mount_namespace()
    confinement.held()  # in this namespace, before anything is hidden
    for path in confinement.settings.hidden:
        if os.path.isdir(path):
            mount_empty(path, "size=4k,mode=0", MS_RDONLY | MS_NOSUID | MS_NODEV)


def own_temporary_folders(confinement: Confinement) -> None:
    """A fresh /tmp (and the other shared temporary folders); a hidden folder inside one
    there too, but closed; the folders imports come from bound read-only into the fresh
    /tmp, where imports then find them."""
    confinement.enter_mount_namespace()
    handles = confinement.held()
    settings = confinement.settings
    fresh = [path for path in SHARED_TEMPS if os.path.isdir(path)]
    for path in fresh:
        mount_empty(path, f"size={settings.file_mb}m,mode=1777", MS_NOSUID | MS_NODEV)
    for path in settings.hidden:
        if any(Path(path).is_relative_to(folder) for folder in fresh):
            Path(path).parent.mkdir(mode=0o755, parents=True, exist_ok=True)
            Path(path).mkdir(mode=0, exist_ok=True)
    reachable.reroute(reachable.through_bind_mounts(handles, PYTHON_FOLDERS, mount_call))
    confinement.rerouted = True


def cut_off_network(confinement: Confinement) -> None:
    """A network namespace of its own, with no network in it."""
    libc_call("unshare", CLONE_NEWNET)


def own_ipc(confinement: Confinement) -> None:
    """An IPC namespace of its own: its System V IPC objects end with it."""
    libc_call("unshare", CLONE_NEWIPC)


def own_user(confinement: Confinement) -> None:
    """Become the worker's user, with no groups, owning its home and its scratch folder;
    imports keep working through handles on the folders they come from."""
    uid = confinement.settings.uid
    if not confinement.rerouted:
        reachable.reroute(reachable.through_descriptors(confinement.held()))
        confinement.rerouted = True
    home = confinement.home()
    for folder in (home, home / "scratch"):
        os.chown(folder, uid, uid)
    become(uid, uid)


def set_limits(confinement: Confinement) -> None:
    """Cap memory, open files and file size; no core files."""
    megabyte = 1024 * 1024
    cap(resource.RLIMIT_AS, confinement.settings.memory_mb * megabyte)
    cap(resource.RLIMIT_FSIZE, confinement.settings.file_mb * megabyte)
    cap(resource.RLIMIT_CORE, 0)
    cap(resource.RLIMIT_NOFILE, OPEN_FILES)


def cap_processes(confinement: Confinement) -> None:
    """Cap the processes of the worker's user."""
    cap(resource.RLIMIT_NPROC, confinement.settings.processes)


def cap(kind: int, value: int) -> None:
    resource.setrlimit(kind, (value, value))


def die_with_launcher(confinement: Confinement) -> None:
    die_with(confinement.settings.parent)


# The steps a worker takes itself, by the names of the protections they are.
STEPS: dict[str, Callable[[Confinement], None]] = {
    HIDDEN_FOLDERS.name: hide_folders,
    OWN_TMP.name: own_temporary_folders,
    NO_NETWORK.name: cut_off_network,
    OWN_IPC.name: own_ipc,
    OWN_USER.name: own_user,
    LIMITS.name: set_limits,
    PROCESS_CAP.name: cap_processes,
    DIES_WITH_LAUNCHER.name: die_with_launcher,
}


def confine(settings: WorkerSettings) -> Path:
    """Take the worker's steps of the protections its mode turns on, in order; its home."""
    folders = reachable.import_folders(outside=settings.tree)
    confinement = Confinement(settings, read_package(Path(settings.package)), folders)
    for step in PROTECTIONS:
        if step.name in STEPS and step.is_on(settings.mode):
            STEPS[step.name](confinement)
    home = confinement.home()
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


def main(settings_json: str) -> None:
    """The worker's life: wait for "go", confine itself, import the submission, answer."""
    settings = WorkerSettings.from_json(settings_json)
    channel = Channel(settings.commands, settings.replies)
    if channel.receive() != ["go"]:
        os._exit(1)
    for module in PRELOADED:
        __import__(module)
    home = confine(settings)
    channel.send(["ready"])
    global WORKER
    worker = WORKER = Worker(channel, settings.call_cpu_seconds)
    signal.signal(STOP_SIGNAL, on_stop_signal)
    try:
        worker.load(home / "package", list(settings.modules), settings.tree)
    except BaseException as error:  # noqa: BLE001 - reported to the judge, whatever it is
        channel.send(["imported", error_data(error)])
        os._exit(1)
    channel.send(["imported", None])
    while True:
        worker.answer(channel.receive())


# How the launcher starts a worker, its settings (WorkerSettings) as its first argument:
# with the judge's tree (for this module) first on the path.
BOOT = """\
import json, sys
sys.path.insert(0, json.loads(sys.argv[1])["tree"])
from instructor.sandbox_worker import main
main(sys.argv[1])
"""
