"""The sandbox worker: the one process that runs a submission's code, for the judge.

A launcher (instructor.sandbox.launcher) starts it for the judge (whose side is
instructor.sandbox.judge_side), with a configuration and two pipes to the judge. In order:

1. It waits for the launcher's "go" (by then the kernel counts it, and all it will start,
   in the worker's group). While only the course's own code runs, it imports what the library
   needs and confines itself: it takes its own steps (STEPS) of the protections its mode
   turns on (instructor.sandbox.protections), in their order. In the isolated mode it starts inside
   bubblewrap (instructor.sandbox.allowlist), whose file system holds only what it needs, read-only,
   and a /tmp of its own, in namespaces of its own: it becomes a user of its own with no
   groups and no way back to a privilege, and caps its memory, processes, open files and
   file size. Without namespaces it copies the package it will run into a folder of its own
   before it gives up root. It then tells the judge "ready".
2. It imports the submission (from here on the submission's code runs in this process) and
   tells the judge whether that worked.
3. It answers calls, until its input closes. Between calls the judge may bind exercise
   functions: from then on each of them calls the judge's function numbered in the message
   (a function of the judge, as a stand-in is), wherever the package holds it:
       judge:  ["bind", [[module, name, ["F", number]], ...]]   (no answer)
   Calls:
       judge:  ["call", module, name, args, kwargs, stand-ins]
       worker: ["ret", value, changes]   or   ["raise", error]   or   ["limit", why]
   or a batch of calls, each answered in turn, all answers in one message:
       judge:  ["batch", [call, call, ...]]
       worker: ["batch", [answer, answer, ...]]
   While it runs a call, it may call a function of the judge, ["cb", number, args, kwargs],
   and the judge may call it again before it answers: each side serves the other's calls
   while it waits. An iterator among a call back's arguments is lent ("I", its number): the
   judge asks for its items, ["next", number], and the worker answers ["item", value],
   ["stop"] or ["raise", error], making each item only when it is asked for. A function
   among them is lent too ("P", its number): the judge calls it, ["fn", number, args,
   kwargs], and the worker answers as it answers a call.

Everything it sends is plain data (instructor.sandbox.plain_data), which the judge decodes as data
only: no function, module or class is taken from it, and no figure it could report (its CPU
time, its memory) is asked for: the judge reads those from the kernel.
"""

from __future__ import annotations

import importlib
import json
import os
import resource
import signal
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from instructor.sandbox import plain_data, reachable
from instructor.sandbox.os_calls import STOP_SIGNAL, become, die_with, no_new_privileges
from instructor.sandbox.plain_data import HEADER, SCALARS, Call, Decoder, Encoder, Kinds, error_data
from instructor.sandbox.protections import (
    ALLOWLIST,
    DIES_WITH_LAUNCHER,
    LIMITS,
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
OPEN_FILES = 256
# What one read of the judge's pipe asks for: what a pipe holds. (Asking for much more costs
# an allocation of that size on every read, several times the cost of a small call.)
READ_BYTES = 1 << 16


class CallLimit(BaseException):
    """Raised inside a call that used up its CPU time."""


class Channel:
    """Length-prefixed messages over two pipes (blocking: the judge keeps the clock)."""

    def __init__(self, reading: int, writing: int) -> None:
        self.reading, self.writing = reading, writing
        self.buffer = bytearray()

    def send(self, data: Any) -> None:
        message = plain_data.dumps(data)
        while message:
            message = message[os.write(self.writing, message) :]

    def fill(self, size: int) -> None:
        while len(self.buffer) < size:
            chunk = os.read(self.reading, READ_BYTES)
            if not chunk:
                os._exit(0)  # the judge has gone
            self.buffer += chunk

    def receive(self) -> Any:
        self.fill(HEADER)
        end = HEADER + int.from_bytes(self.buffer[:HEADER], "big")
        self.fill(end)
        payload = bytes(self.buffer[HEADER:end])
        del self.buffer[:end]
        return json.loads(payload)


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


@dataclass
class Confinement:
    """A worker confining itself: its settings, and what its steps have done so far."""

    settings: WorkerSettings
    folders: list[str]  # where imports come from (never the judges' tree)
    handles: dict[str, int] | None = None  # on `folders`, taken while still root
    made_home: tuple[Path, Path] | None = None  # the package to run, the scratch folder

    @property
    def in_view(self) -> bool:
        """Whether the worker runs in bubblewrap's allowlisted view (sandbox/allowlist.py)."""
        return ALLOWLIST.is_on(self.settings.mode)

    def held(self) -> dict[str, int]:
        """A handle on each import folder, taken the first time it is asked for."""
        if self.handles is None:
            self.handles = reachable.hold(self.folders)
        return self.handles

    def home(self) -> tuple[Path, Path]:
        """The package to run and the worker's scratch folder, made the first time they are
        asked for: in the allowlisted view, the package bound read-only and its own /tmp;
        else copies in the folder the launcher made, which only its user may enter."""
        if self.made_home is None:
            if self.in_view:
                self.made_home = Path(self.settings.package), Path("/tmp")
            else:
                home = Path(self.settings.home)  # made by the launcher, which removes it
                write_package(read_package(Path(self.settings.package)), home / "package")
                (home / "scratch").mkdir()
                self.made_home = home / "package", home / "scratch"
        return self.made_home


def own_user(confinement: Confinement) -> None:
    """Become the worker's user, with no groups, owning its scratch folder, and never to
    gain a privilege again; outside the allowlisted view imports keep working through
    handles on the folders they come from, taken as root."""
    uid = confinement.settings.uid
    if not confinement.in_view:
        reachable.reroute(reachable.through_descriptors(confinement.held()))
    package, scratch = confinement.home()
    if not confinement.in_view:  # in the view, /tmp is every user's to write
        for folder in (scratch.parent, scratch):
            os.chown(folder, uid, uid)
    become(uid, uid)
    no_new_privileges()


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
    """Die with the launcher (in the allowlisted view, bubblewrap sees to that)."""
    if not confinement.in_view:
        die_with(confinement.settings.parent)


# The steps a worker takes itself, by the names of the protections they are (bubblewrap
# takes the others, where the mode turns them on: instructor.sandbox.allowlist).
STEPS: dict[str, Callable[[Confinement], None]] = {
    OWN_USER.name: own_user,
    LIMITS.name: set_limits,
    PROCESS_CAP.name: cap_processes,
    DIES_WITH_LAUNCHER.name: die_with_launcher,
}


def confine(settings: WorkerSettings) -> Path:
    """Take the worker's steps of the protections its mode turns on, in order; where the
    package to run is."""
    in_view = ALLOWLIST.is_on(settings.mode)
    folders = [] if in_view else reachable.import_folders(outside=settings.tree)
    confinement = Confinement(settings, folders)
    for step in PROTECTIONS:
        if step.name in STEPS and step.is_on(settings.mode):
            STEPS[step.name](confinement)
    package, scratch = confinement.home()
    os.chdir(scratch)
    os.environ.update(HOME=str(scratch), TMPDIR=str(scratch))
    return package


class Worker:
    """Runs calls of the submission's functions, calling back into the judge when asked."""

    def __init__(self, channel: Channel, cpu_seconds: float) -> None:
        self.channel, self.cpu_seconds = channel, cpu_seconds
        self.kinds: Kinds | None = None
        self.depth = 0
        # The iterators and functions lent to the judge in this call, by number.
        self.lent: list[Iterator[Any] | Callable[..., Any]] = []
        self.bound: list[tuple[Any, str, Any]] = []  # (module, attribute, what it held)

    def on_stop_signal(self, signum: int, frame: Any) -> None:
        """The judge says the running call has used up its CPU time: end it."""
        if self.depth > 0:
            raise CallLimit()

    def load(self, package: Path, settings: WorkerSettings) -> None:
        """Import the submission's package and the modules `settings` names, in their order,
        and learn its tensor classes and the records `settings` names."""
        sys.path[:] = [str(package), *[p for p in sys.path if p not in ("", settings.tree)]]
        for module in settings.modules:
            importlib.import_module(module)
        self.kinds = plain_data.tensor_kinds(
            sys.modules["tenxor"],
            records=settings.records,
            exercise=lambda module, name: getattr(sys.modules[module], name),
            callback=self.stand_in,
        )

    def stand_in(self, number: int) -> Any:
        """A function that calls the judge's function `number`."""

        def call_judge(*args: Any, **kwargs: Any) -> Any:
            encoder = Encoder(self.kinds, Call(), lenient=True)
            encoder.iterators = encoder.procedures = self.lend
            self.channel.send(["cb", number, encoder.encode(args), encoder.encode(kwargs)])
            return self.wait()

        return call_judge

    def lend(self, lent: Iterator[Any] | Callable[..., Any]) -> int:
        """The number under which the judge may ask for the items of an iterator, or call a
        function."""
        self.lent.append(lent)
        return len(self.lent) - 1

    def wait(self) -> Any:
        """Serve the judge's calls (and its asks for items) until it answers the call this
        side made."""
        while True:
            message = self.channel.receive()
            if message[0] == "ret":
                return Decoder(self.kinds, Call(), register=False).decode(message[1])
            if message[0] == "raise":
                raise plain_data.raised(message[1])
            if message[0] == "next":
                self.give_next(message)
                continue
            if message[0] == "fn":
                self.channel.send(self.lent_outcome(message))
                continue
            self.answer(message)

    def give_next(self, message: list[Any]) -> None:
        """Send the next item of a lent iterator, made now (its end, or its error)."""
        number = message[1] if len(message) == 2 else None
        if type(number) is not int or not 0 <= number < len(self.lent):
            self.channel.send(["raise", ["ValueError", f"no iterator {number!r} was lent"]])
            return
        try:
            item = next(self.lent[number])
        except StopIteration:
            self.channel.send(["stop"])
            return
        except CallLimit:
            raise
        except BaseException as error:  # noqa: BLE001 - the submission's error is data
            self.channel.send(["raise", error_data(error)])
            return
        encoder = Encoder(self.kinds, Call(), lenient=True)
        self.channel.send(["item", encoded(encoder, item)])

    def bind(self, message: list[Any]) -> None:
        """Have every place of the package that holds one of the named exercise functions
        hold the judge's function instead; what the last bind put in place is undone first."""
        for owner, attribute, original in reversed(self.bound):
            setattr(owner, attribute, original)
        self.bound.clear()
        decoder = Decoder(self.kinds, Call(), register=True)
        modules = [module for name, module in list(sys.modules.items())
                   if name.partition(".")[0] == "tenxor" and module is not None]  # fmt: skip
        for where, name, function in message[1]:
            own = getattr(sys.modules.get(where), name, None)
            if own is None:
                continue
            judges = decoder.decode(function)
            for module in modules:
                for attribute, value in list(vars(module).items()):
                    if value is own:
                        self.bound.append((module, attribute, value))
                        setattr(module, attribute, judges)

    def answer(self, message: list[Any]) -> None:
        """Run one call of the judge and send its outcome."""
        self.channel.send(self.outcome_of(message))

    def answer_batch(self, message: list[Any]) -> None:
        """Run each call of a batch, in turn, and send all their outcomes in one message."""
        self.channel.send(["batch", [self.outcome_of(call) for call in message[1]]])

    def outcome_of(self, message: list[Any]) -> list[Any]:
        """Run one call of the judge: its outcome, as the message that tells it."""
        _, module, name, args, kwargs, stand_ins = message
        # The submission's function, not a stand-in:
        return self.outcome(lambda: getattr(sys.modules[module], name), args, kwargs, stand_ins)

    def lent_outcome(self, message: list[Any]) -> list[Any]:
        """Run a function this side lent the judge, as the judge asks: its outcome."""
        number = message[1] if len(message) == 4 else None

        def lent() -> Callable[..., Any]:
            if type(number) is not int or not 0 <= number < len(self.lent):
                raise ValueError(f"no function {number!r} was lent")
            return self.lent[number]

        return self.outcome(lent, *message[2:4], [])

    def outcome(
        self, find: Callable[[], Callable[..., Any]], args: Any, kwargs: Any, stand_ins: Any
    ) -> list[Any]:
        """Call the function `find` gives with the judge's `args` and `kwargs`, `stand_ins`
        in place: its outcome, as the message that tells it."""
        call = Call()
        replaced: list[tuple[Any, str, Any]] = []
        self.depth += 1
        try:
            function = find()
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
            if self.depth == 0:
                self.lent.clear()
            for owner, attribute, original in reversed(replaced):
                setattr(owner, attribute, original)
        return outcome


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


def main(settings_json: str) -> None:
    """The worker's life: wait for "go", confine itself, import the submission, answer."""
    settings = WorkerSettings.from_json(settings_json)
    channel = Channel(settings.commands, settings.replies)
    if channel.receive() != ["go"]:
        os._exit(1)
    for module in PRELOADED:
        __import__(module)
    package = confine(settings)
    channel.send(["ready"])
    worker = Worker(channel, settings.call_cpu_seconds)
    signal.signal(STOP_SIGNAL, worker.on_stop_signal)
    try:
        worker.load(package, settings)
    except BaseException as error:  # noqa: BLE001 - reported to the judge, whatever it is
        channel.send(["imported", error_data(error)])
        os._exit(1)
    channel.send(["imported", None])
    while True:
        message = channel.receive()
        if message[0] == "batch":
            worker.answer_batch(message)
        elif message[0] == "bind":
            worker.bind(message)
        else:
            worker.answer(message)
