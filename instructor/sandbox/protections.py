"""The sandbox's modes, the protections each mode turns on, and a worker's settings.

A mode is how far grading can confine submitted code on this machine. Each protection is one
named step that says what it does: the sandbox worker (instructor.sandbox.worker) applies the
ones it owns, in the order of PROTECTIONS, by their names; the launcher and grading apply the
others; and what a student and the instructor are told about a grading is made of the same
steps' words. The sandbox worker imports this module before it confines itself, so it needs
nothing beyond the standard library.
"""

from __future__ import annotations

import dataclasses
import enum
import json
from dataclasses import dataclass
from typing import Any


class SandboxMode(str, enum.Enum):
    """How far a sandbox worker is confined, strongest first."""

    ISOLATED = "isolated"  # users of their own, in bubblewrap's allowlisted view
    SEPARATE_USER = "separate user"  # users of their own; no namespaces allowed
    SAME_USER = "same user"  # the grading user's own processes, in the allowlisted view
    UNPROTECTED = "unprotected"  # the grading user's own processes, nothing hidden

    __str__ = str.__str__
    __format__ = str.__format__

    @property
    def other_users(self) -> bool:
        """Whether the worker and the judge run under users of their own."""
        return self in (SandboxMode.ISOLATED, SandboxMode.SEPARATE_USER)

    @property
    def namespaces(self) -> bool:
        """Whether the worker runs in bubblewrap, with namespaces of every kind of its own."""
        return self in (SandboxMode.ISOLATED, SandboxMode.SAME_USER)

    @property
    def why_weaker(self) -> str | None:
        """Why protections are off in this mode, if any is."""
        if self is SandboxMode.SEPARATE_USER:
            return "bubblewrap cannot make namespaces here"
        if self is SandboxMode.SAME_USER:
            return "grading did not run as root, or was told not to change users"
        if self is SandboxMode.UNPROTECTED:
            return (
                "grading did not run as root and bubblewrap cannot make namespaces here, or "
                "grading was told to run unprotected"
            )
        return None


EVERY_MODE = frozenset(SandboxMode)
WITH_OTHER_USERS = frozenset(mode for mode in SandboxMode if mode.other_users)
WITH_NAMESPACES = frozenset(mode for mode in SandboxMode if mode.namespaces)
PROTECTED = EVERY_MODE - {SandboxMode.UNPROTECTED}


@dataclass(frozen=True)
class Protection:
    """One step of confining submitted code: what it does, the modes that turn it on, and
    what its absence allows where a mode turns it off."""

    name: str
    description: str
    modes_on: frozenset[SandboxMode]
    when_off: str = ""

    def is_on(self, mode: SandboxMode) -> bool:
        """Whether this step is taken in `mode`."""
        return mode in self.modes_on

    def describe(self, mode: SandboxMode) -> str:
        """One line on this step in `mode`: on and what it did, or off and what that allowed."""
        if self.is_on(mode):
            return f"On: {self.name}: {self.description}."
        return f"Off here: {self.name}" + (f" ({self.when_off})." if self.when_off else ".")


# In the order they are taken: bubblewrap's (instructor.sandbox.allowlist), the worker's own steps
# (instructor.sandbox.worker), the launcher's and grading's, the judge's.
ALLOWLIST = Protection(
    "an allowlisted file system",
    "it ran in bubblewrap, whose file system held only the shared libraries, the interpreter "
    "with NumPy and ml_dtypes, the release's package with the submitted modules, all "
    "read-only, and a /tmp of its own: nothing of the course, its tests, other students, the "
    "output or grading",
    WITH_NAMESPACES,
    "it could read every file of the machine that its user may read",
)
HIDDEN_FOLDERS = Protection(
    "hidden folders",
    "it could open none of the course, its tests, the submissions and the output, and read "
    "no copy of a solution or a hidden test (where it had no allowlisted view, grading "
    "checked that as its user before it started, and would not have started otherwise)",
    PROTECTED,
    "it could read and write every file the grading user may",
)
OWN_PROCESSES = Protection(
    "processes of its own",
    "it ran in a PID namespace of its own: it saw and could signal no process but its own, "
    "and every one of them ended with it",
    WITH_NAMESPACES,
    "it could see the machine's other processes",
)
OWN_TMP = Protection(
    "a /tmp of its own",
    "/tmp and the other shared temporary folders were fresh ones of its own",
    WITH_NAMESPACES,
    "it shared /tmp with the machine's other processes",
)
NO_NETWORK = Protection(
    "cut off from the network",
    "it ran in a network namespace of its own, with no network",
    WITH_NAMESPACES,
    "it could reach the network",
)
OWN_IPC = Protection(
    "IPC of its own",
    "the System V shared memory, semaphores and message queues it made were seen by no other "
    "process and ended with it (an IPC namespace of its own)",
    WITH_NAMESPACES,
    "other processes of its user could see what it made there until it stopped",
)
OWN_USER = Protection(
    "a user of its own",
    "it ran under a user of its own, with no groups",
    WITH_OTHER_USERS,
    "it ran as the grading user",
)
LIMITS = Protection(
    "limits",
    "its memory, its open files and the size of each file it wrote were capped, and it "
    "wrote no core files",
    EVERY_MODE,
)
PROCESS_CAP = Protection(
    "a cap on processes",
    "its user could run only so many processes at once",
    WITH_OTHER_USERS,
    "such a cap counts all of a user's processes, and its user was the grading user",
)
DIES_WITH_LAUNCHER = Protection(
    "dies with its launcher",
    "it was killed as soon as the process that started it ended",
    EVERY_MODE,
)
# Taken by the launcher (instructor.sandbox.launcher), which starts the worker and the judge.
ONE_GROUP = Protection(
    "one group for all its processes",
    "the kernel counted the worker and every process it started together (their CPU time "
    "and memory), and they were killed together",
    EVERY_MODE,
)
NOTHING_LEFT = Protection(
    "nothing left behind",
    "when it stopped, every process, System V IPC object and file in the shared temporary "
    "folders of its user was removed, so the next worker (a hidden test's, or the next "
    "student's) started from nothing",
    PROTECTED,
    "what it left in the shared temporary folders or in System V IPC stayed there for the "
    "grading user's next processes",
)
OWN_ENVIRONMENT = Protection(
    "an environment of its own",
    "none of grading's environment variables reached it",
    EVERY_MODE,
)
JUDGE_USER = Protection(
    "a judge under a user of its own",
    "the tests ran in a judge under another user of its own, without root",
    WITH_OTHER_USERS,
    "the judge ran as the grading user too",
)
# Kept by the judge (instructor.sandbox.judge_side, instructor.sandbox.plain_data).
PLAIN_DATA = Protection(
    "plain data only",
    "the judge took only plain data from the worker: no function, module or class, and no "
    "figure the worker reported (the kernel's figures count)",
    EVERY_MODE,
)
PROTECTIONS = (
    ALLOWLIST,
    HIDDEN_FOLDERS,
    OWN_PROCESSES,
    OWN_TMP,
    NO_NETWORK,
    OWN_IPC,
    OWN_USER,
    LIMITS,
    PROCESS_CAP,
    DIES_WITH_LAUNCHER,
    ONE_GROUP,
    NOTHING_LEFT,
    OWN_ENVIRONMENT,
    JUDGE_USER,
    PLAIN_DATA,
)


def protections_in_words(mode: SandboxMode) -> str:
    """What a student is told of the sandbox their submission ran in: each step, on or off."""
    why = f" ({mode.why_weaker})" if mode.why_weaker else ""
    lines = [f"Your code ran in a sandbox worker, in the {mode} mode{why}. Its protections:"]
    return "\n".join([*lines, *(step.describe(mode) for step in PROTECTIONS)])


def protections_in_brief(mode: SandboxMode) -> str:
    """One line for the instructor: the mode, and the steps it leaves off."""
    off = [step.name for step in PROTECTIONS if not step.is_on(mode)]
    why = f" ({mode.why_weaker})" if mode.why_weaker else ""
    return f"Sandbox: {mode}{why}; off here: {', '.join(off) or 'nothing'}."


def fields_of(kind: type, data: Any) -> dict[str, Any]:
    """The fields of dataclass `kind` in `data` (a JSON object): ValueError naming any field
    that is missing or unknown."""
    if not isinstance(data, dict):
        raise ValueError(f"{kind.__name__} must be a JSON object, not {type(data).__name__}")
    names = [field.name for field in dataclasses.fields(kind)]
    missing = [name for name in names if name not in data]
    unknown = sorted(set(data) - set(names))
    if missing or unknown:
        said = [f"missing {', '.join(missing)}"] if missing else []
        said += [f"unknown {', '.join(unknown)}"] if unknown else []
        raise ValueError(f"{kind.__name__}: {'; '.join(said)}")
    return {name: data[name] for name in names}


@dataclass(frozen=True)
class WorkerSettings:
    """What a sandbox worker is told by the launcher that starts it (as JSON, its first
    argument: what its code could read anyway)."""

    package: str  # the folder holding the package to run
    tree: str  # the judge's tree, where it imports instructor.sandbox.worker from
    mode: SandboxMode
    modules: tuple[str, ...]  # what it imports: the submission
    records: tuple[str, ...]  # the records that cross as themselves ("module.Class")
    uid: int | None  # its user (None: the launcher's own)
    home: str | None  # the folder the launcher made for it (None: one in its own /tmp)
    parent: int  # the launcher's process, which it dies with
    commands: int  # the pipe it reads the judge's messages from
    replies: int  # the pipe it writes its answers to
    memory_mb: int  # its address space
    file_mb: int  # a file it writes, and its own /tmp
    processes: int  # what its user may run
    call_cpu_seconds: float  # one call of a submitted function

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self))

    @classmethod
    def from_json(cls, text: str) -> WorkerSettings:
        """The settings in `text`; ValueError naming any field missing or unknown."""
        data = fields_of(cls, json.loads(text))
        data["mode"] = SandboxMode(data["mode"])
        data["modules"] = tuple(data["modules"])
        data["records"] = tuple(data["records"])
        return cls(**data)
