"""Start and end sandbox workers: the only part of grading that keeps root.

A judge gives up root before it runs a test. Before that, it starts a launcher (when grading
as root), a small process that stays root and does four things when the judge asks: start a
worker (confined, in a group of its own that the kernel counts), send it on its way, stop
it, and kill it with everything it started. It hands the judge the two pipes to the worker
and never reads a byte of them: nothing a worker sends reaches a process with privileges.

    launcher = LauncherClient(config)      # the judge, while still root
    pid, commands, replies, spec = launcher.start()
    launcher.interrupt()                   # the call has used up its CPU time
    code, over_memory = launcher.stop()    # killed, reaped, its group closed

Without root (SandboxMode.SAME_USER, UNPROTECTED), the judge uses a `Launcher` of its own in
its process.
Of the protections (instructor.sandbox.protections), the launcher takes ONE_GROUP, NOTHING_LEFT and
OWN_ENVIRONMENT for every worker, and the judge JUDGE_USER through `give_up_root`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import json
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from instructor.entry_points import LAUNCHER, SWEEPER, WORKER, boot_script, serve_script
from instructor.sandbox import plain_data, reachable
from instructor.sandbox.allowlist import GRADING, PACKAGE, bwrap_command, view
from instructor.sandbox.leftovers import remove_leftovers
from instructor.sandbox.os_calls import STOP_SIGNAL, become, die_with, kill_every_process_of
from instructor.sandbox.protections import (
    ALLOWLIST,
    OWN_IPC,
    OWN_TMP,
    OWN_USER,
    SandboxMode,
    WorkerSettings,
    fields_of,
)
from instructor.sandbox.worker_group import remove_groups, worker_group

UID_BASE = 61000  # grading's users: UID_BASE + BLOCK * block + place in the block
BLOCK = 64  # users per grading command; each command on a machine claims a block of them
JUDGE_USERS = 32  # in a block: workers at 0..31, judges at 32..62, the judges' group at 63
BLOCKS = 1000
USERS_LOCKS = Path("/run/lock/tenxor-worker-users")
ENDING_SECONDS = 2.0  # how long a worker that ended has to be gone before it is killed


@dataclass(frozen=True)
class SandboxLimits:
    """What a submission's code may use in the worker."""

    call_cpu_seconds: float = 10.0  # one call (from the judge's test) of an exercise function
    call_wall_seconds: float = 60.0  # the same call by the clock: catches one that sleeps
    exercise_cpu_seconds: float = 60.0  # all calls of one exercise
    exercise_wall_seconds: float = 300.0
    strikes: int = 2  # calls of one exercise that crash, hang or run out of time
    memory_mb: int = 2048  # each process of the worker (its address space)
    group_memory_mb: int = 4096  # the worker and all it started, where cgroups count it
    processes: int = 32
    file_mb: int = 64
    answer_mb: int = 32  # one message of the worker


@dataclass(frozen=True)
class SandboxConfig:
    """Everything a judge needs to start workers for one submission."""

    package: str  # the folder holding the tenxor package to run: the release's, with the
    # submission's exercise modules
    tree: str  # the judge's tree, where the worker imports instructor.sandbox.worker from
    mode: SandboxMode  # how far the worker is confined
    slot: int  # which worker user and CPU this judge takes
    users: int = UID_BASE  # the first user of the block this grading claimed
    judge: int | None = None  # the user the judge becomes (None: it keeps its own)
    modules: tuple[str, ...] = ("tenxor",)  # what the worker imports, in this order
    records: tuple[str, ...] = ()  # the records that cross as themselves ("module.Class")
    limits: SandboxLimits = field(default_factory=SandboxLimits)
    system: tuple[tuple[str, ...], ...] = ()  # the workers' view but their package (allowlist)

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self))

    @classmethod
    def from_json(cls, text: str) -> SandboxConfig:
        """The configuration in `text`; ValueError naming any field missing or unknown."""
        data = fields_of(cls, json.loads(text))
        data["limits"] = SandboxLimits(**fields_of(SandboxLimits, data["limits"]))
        data["mode"] = SandboxMode(data["mode"])
        data["modules"] = tuple(data["modules"])
        data["records"] = tuple(data["records"])
        data["system"] = tuple(tuple(step) for step in data["system"])
        return cls(**data)

    @property
    def uid(self) -> int | None:
        """The worker's user (None: the judge's own)."""
        return self.users + self.slot if OWN_USER.is_on(self.mode) else None

    @property
    def judges_group(self) -> int:
        return self.users + BLOCK - 1


def worker_environment() -> dict[str, str]:
    """The few variables a worker gets (OWN_ENVIRONMENT): nothing of the judge's leaks to it."""
    keep = ("PATH", "LANG", "LC_ALL", "SYSTEMROOT")
    environment = {name: os.environ[name] for name in keep if name in os.environ}
    environment.update(PYTHONDONTWRITEBYTECODE="1", OPENBLAS_NUM_THREADS="1")
    return environment


@contextlib.contextmanager
def grading_users() -> Iterator[int]:
    """Claim a block of BLOCK users for as long as the block runs: the first of them. Each
    grading command on the machine gets a block of its own (held by a file lock, which the
    system releases if the command dies), so none sweeps away another's processes."""
    locks = users_locks()
    for block in range(BLOCKS):
        handle = os.open(locks / f"block-{block}", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(handle)
            continue
        try:
            first = UID_BASE + BLOCK * block
            clear_users(range(first, first + BLOCK))  # what a grading that died may have left
            yield first
            clear_users(range(first, first + BLOCK))
        finally:
            os.close(handle)
        return
    raise OSError(f"all {BLOCKS} blocks of grading users are in use")


def group_kind(users: int) -> str:
    """How the cgroups of the workers of the block of users from `users` are named."""
    return f"tenxor-worker-{users}"


# How the cgroups of workers that run as the grading user are named: never a block's kind,
# which a grading that claims that block clears away.
GRADING_USERS_KIND = "tenxor-worker-of-the-grading-user"


def clear_users(uids: range) -> None:
    """End every process of a block of grading's users, then remove what they left: files,
    IPC objects, and the cgroups of its workers."""
    sweep_block(uids)
    if os.geteuid() == 0:
        remove_leftovers(set(uids))
        remove_groups(group_kind(uids.start))


def users_locks() -> Path:
    """The folder of the locks on the blocks of users: root's own, or grading refuses (a
    folder another user made in world-writable /run/lock would let them hold every block,
    or hand two gradings the same one)."""
    USERS_LOCKS.mkdir(mode=0o700, parents=True, exist_ok=True)
    status = os.lstat(USERS_LOCKS)
    folder, mode = stat.S_ISDIR(status.st_mode), stat.S_IMODE(status.st_mode)
    if not folder or status.st_uid != os.geteuid() or mode & 0o077:
        kind = "a folder" if folder else "not a folder"
        raise OSError(
            f"{USERS_LOCKS} is not grading's own folder ({kind}, owner {status.st_uid}, mode "
            f"{mode:o}): remove it, and grading makes it again"
        )
    return USERS_LOCKS


def sweep(uid: int | None) -> None:
    """Kill every process of a user of grading's (what was left running, in any session)."""
    if uid is not None and os.geteuid() == 0:
        kill_every_process_of(uid)


# Sweeps a block's users from a small process of its own: a fork of the grading process for
# each of them would copy its whole memory map (a large one's, in a long test run) 64 times.
SWEEP_BLOCK = serve_script(SWEEPER)
TREE = Path(__file__).resolve().parents[2]  # the tree this module is in, instructor/ at its top


def sweep_block(uids: range) -> None:
    """sweep() every user of `uids`."""
    if os.geteuid() != 0:
        return
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", SWEEP_BLOCK, *map(str, uids)], cwd=TREE,
        capture_output=True, text=True,
    )  # fmt: skip
    if done.returncode != 0:
        raise OSError(f"sweeping users {uids.start}-{uids.stop - 1} failed: {done.stderr[-500:]}")


class Launcher:
    """Starts and ends the workers of one judge process, one at a time."""

    def __init__(self, config: SandboxConfig) -> None:
        self.config = config
        self.process: subprocess.Popen | None = None  # the worker, or the bubblewrap it is in
        self.worker = 0  # the worker's process ID
        self.group = None
        self.home: str | None = None  # the worker's folder, when it has no /tmp of its own

    def start(self) -> tuple[int, int, int, list[Any]]:
        """Start a worker, in a group of its own: its process ID, the judge's ends of its
        pipes (for commands, for replies) and how to read the group's CPU time."""
        self.stop()
        commands, worker_in = os.pipe()
        worker_out, replies = os.pipe()
        limits = self.config.limits
        kind = group_kind(self.config.users) if self.config.mode.other_users else GRADING_USERS_KIND
        self.group = worker_group(kind, limits.group_memory_mb)
        try:
            if ALLOWLIST.is_on(self.config.mode):
                self.worker = self.start_in_view(commands, replies)
            else:
                self.worker = self.start_here(commands, replies)
        finally:
            os.close(commands)
            os.close(replies)
        os.write(worker_in, plain_data.dumps(["go"]))  # only once the kernel counts it all
        return self.worker, worker_in, worker_out, self.group.meter_spec()

    def start_here(self, commands: int, replies: int) -> int:
        """Start the worker as a child of this process, and put it in its group; its ID."""
        self.home = tempfile.mkdtemp(prefix="tenxor-worker-")  # only its user may enter it
        settings = self.worker_settings(self.config.package, self.config.tree, commands, replies)
        self.process = subprocess.Popen(
            [sys.executable, "-I", "-c", boot_script(WORKER), settings.to_json()],
            pass_fds=(commands, replies),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd=self.config.package,
            env=worker_environment(),
            start_new_session=True,
        )
        self.group.adopt(self.process.pid)
        return self.process.pid

    def start_in_view(self, commands: int, replies: int) -> int:
        """Start the worker in bubblewrap's allowlisted view (instructor.sandbox.allowlist), from a
        process that first enters the worker's group, so that bubblewrap and all it starts
        are counted from their first instruction; the worker's ID, as bubblewrap tells it."""
        settings = self.worker_settings(str(PACKAGE), str(GRADING), commands, replies)
        seen = view(self.config.package, self.config.tree, self.config.system)
        command = [sys.executable, "-I", "-c", ENTER_GROUP, json.dumps(self.group.procs())]
        info, told = os.pipe()
        own_user = OWN_USER.is_on(self.config.mode)
        command += bwrap_command(seen, self.config.limits.file_mb, told, own_user)
        command += [seen.interpreter, "-I", "-c", boot_script(WORKER), settings.to_json()]
        # What bubblewrap says if it fails (the worker, once started, may write its own
        # file-size limit's worth there too: the file has no name and goes with it).
        with tempfile.TemporaryFile() as complaints:
            try:
                self.process = subprocess.Popen(
                    command,
                    pass_fds=(commands, replies, told),
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=complaints,
                    env=worker_environment(),
                    start_new_session=True,
                )
            except BaseException:
                os.close(info)
                raise
            finally:
                os.close(told)
            with os.fdopen(info, "rb") as stream:  # bubblewrap's word, before the worker runs
                said = stream.read(4096)
            try:
                worker = json.loads(said)["child-pid"]
            except (ValueError, KeyError, TypeError):
                why = not_started(complaints)
                raise OSError(f"bubblewrap did not start the worker: {why}") from None
        self.group.entered(worker)
        return worker

    def worker_settings(
        self, package: str, tree: str, commands: int, replies: int
    ) -> WorkerSettings:
        """What the next worker is told: where its package and its own modules are, and the
        ends of its pipes (`commands` and `replies`)."""
        config, limits = self.config, self.config.limits
        return WorkerSettings(
            package=package,
            tree=tree,
            mode=config.mode,
            modules=config.modules,
            records=config.records,
            uid=config.uid,
            home=self.home,
            parent=os.getpid(),
            commands=commands,
            replies=replies,
            memory_mb=limits.memory_mb,
            file_mb=limits.file_mb,
            processes=limits.processes,
            call_cpu_seconds=limits.call_cpu_seconds,
        )

    def interrupt(self) -> None:
        """Ask the worker to end the call it runs (it has used up its CPU time)."""
        if self.process is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.worker, STOP_SIGNAL)

    def stop(self, ended: bool = False) -> tuple[int | None, bool]:
        """Kill the worker and everything it started: its exit code (None if there was no
        worker) and whether its group went over its memory limit. A worker that `ended`
        (it closed its pipes) is given a moment to be gone, and bubblewrap with it, so that
        its own exit code is the one told."""
        if self.process is None:
            return None, False
        if ended:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=ENDING_SECONDS)
        if self.process.returncode is None:  # killed before reaped: its ID is still its own
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.process.pid, signal.SIGKILL)
        code, self.process = self.process.wait(), None
        over_memory = self.group.over_memory()
        self.group.close()
        sweep(self.config.uid)
        if self.config.uid is not None:  # NOTHING_LEFT: the next worker starts from nothing
            mode = self.config.mode
            remove_leftovers(
                {self.config.uid}, ipc=not OWN_IPC.is_on(mode), files=not OWN_TMP.is_on(mode)
            )
        if self.home:
            shutil.rmtree(self.home, ignore_errors=True)
            self.home = None
        return code, over_memory

    def close(self) -> None:
        self.stop()


def not_started(complaints: Any) -> str:
    """What bubblewrap wrote before it ended without starting the worker."""
    complaints.seek(0)
    said = complaints.read(2000).decode("utf-8", errors="replace").strip()
    return said or "it ended without a word"


def launcher_for(config: SandboxConfig) -> Launcher | LauncherClient:
    """What starts a judge's workers: a launcher process that keeps root when the judge will
    give root up, else a launcher in the judge's own process."""
    return Launcher(config) if config.judge is None else LauncherClient(config)


def give_up_root(config: SandboxConfig) -> None:
    """The judge's protection JUDGE_USER: become the judge's user (and the judges' group,
    which may read the judge's tree), for good, dying with the process that started it;
    imports keep working through handles on every folder they come from."""
    if config.judge is None:
        return
    folders = reachable.import_folders(outside=config.tree)  # the judges' group reads it
    reachable.reroute(reachable.through_descriptors(reachable.hold(folders)))
    parent = os.getppid()
    become(config.judge, config.judges_group)
    die_with(parent)


class LauncherClient:
    """A launcher in a process of its own that keeps root, asked over a socket."""

    def __init__(self, config: SandboxConfig) -> None:
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-I",
                "-c",
                serve_script(LAUNCHER),
                config.to_json(),
                str(theirs.fileno()),
            ],
            pass_fds=(theirs.fileno(),),
            stdin=subprocess.DEVNULL,
            cwd=config.tree,
            env=worker_environment(),
        )
        theirs.close()
        self.socket = mine

    def ask(self, request: list[Any]) -> tuple[list[Any], list[int]]:
        self.socket.send(json.dumps(request).encode())
        data, fds, _, _ = socket.recv_fds(self.socket, 65536, 2)
        if not data:
            raise OSError("the launcher has ended")
        return json.loads(data), fds

    def start(self) -> tuple[int, int, int, list[Any]]:
        reply, fds = self.ask(["start"])
        if reply[0] != "started" or len(fds) != 2:
            raise OSError(f"the launcher could not start a worker: {reply[-1]}")
        return reply[1], fds[0], fds[1], reply[2]

    def interrupt(self) -> None:
        self.socket.send(b'["interrupt"]')

    def stop(self, ended: bool = False) -> tuple[int | None, bool]:
        reply, _ = self.ask(["stop", ended])
        return reply[1], reply[2]

    def close(self) -> None:
        self.socket.close()  # the launcher stops its worker and ends
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def serve(config: SandboxConfig, connection: socket.socket) -> None:
    """The launcher's loop: do what the judge asks, until it hangs up or dies."""
    launcher = Launcher(config)
    try:
        while True:
            data = connection.recv(4096)
            if not data:
                return
            request = json.loads(data)
            if request == ["start"]:
                try:
                    pid, commands, replies, spec = launcher.start()
                except OSError as error:
                    connection.send(json.dumps(["failed", str(error)[:300]]).encode())
                    continue
                message = json.dumps(["started", pid, spec]).encode()
                socket.send_fds(connection, [message], [commands, replies])
                os.close(commands)
                os.close(replies)
            elif request == ["interrupt"]:
                launcher.interrupt()
            elif request in (["stop", False], ["stop", True]):
                connection.send(json.dumps(["stopped", *launcher.stop(request[1])]).encode())
            else:
                return
    finally:
        launcher.close()


def main(config_json: str, descriptor: str) -> None:
    """The launcher process: it ends (stopping its worker) when the judge ends."""
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    die_with(os.getppid(), signal.SIGTERM)
    connection = socket.socket(fileno=int(descriptor))
    serve(SandboxConfig.from_json(config_json), connection)


# How a worker in bubblewrap starts: a process that enters the worker's group (the cgroup
# files its first argument names) and becomes bubblewrap, the rest of its arguments.
ENTER_GROUP = """\
import json, os, sys
for procs in json.loads(sys.argv[1]):
    with open(procs, "w") as stream:
        stream.write(str(os.getpid()))
os.execv(sys.argv[2], sys.argv[2:])
"""
