"""What the kernel counts of a sandbox worker and of every process it started.

A worker may fork, and it chooses every byte it sends, so its own figures are never
believed: its CPU time and memory are read from the kernel for the whole group of processes
it heads, and stopping it kills the whole group.

    group = worker_group(name, memory_mb)   # before the worker starts
    group.adopt(pid)                        # the worker, before it runs a submission
                                            # (or it writes its ID to group.procs() itself)
    reading = meter(group.meter_spec())     # anyone may read (the judge does)
    reading.cpu_seconds()                   # CPU of the worker and all it started, so far
    group.close()                           # kill every process of the group

Where the machine lets this process make cgroups, each worker gets a cgroup v2 of its own
(CPU time from its cpu.stat, `cgroup.kill` to end it) and, where the memory controller is
there, a cap on the memory of the whole group. Elsewhere the group is everything below this
process, which becomes a subreaper so that nothing the worker started can leave the tree:
CPU time is summed over /proc, and stopping kills every descendant.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import time
from pathlib import Path

from instructor.sandbox.os_calls import become_subreaper

SCAN_SECONDS = 1.0  # how stale the /proc sum of the other processes may be
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
NAMES = itertools.count()


def own_cgroup(controller: str) -> Path | None:
    """This process's cgroup folder: of the unified (v2) hierarchy for controller "", else of
    the v1 hierarchy of `controller`; None where there is none."""
    mounts = Path("/proc/self/mounts").read_text().splitlines()
    places = Path("/proc/self/cgroup").read_text().splitlines()
    for line in places:
        _, controllers, path = line.split(":", 2)
        if controllers.split(",") != [controller] and controllers != controller:
            continue
        for mount in mounts:
            _, point, kind, options, *_ = mount.split()
            unified = controller == "" and kind == "cgroup2"
            if unified or (kind == "cgroup" and controller in options.split(",")):
                folder = Path(point) / path.lstrip("/")
                return folder if folder.is_dir() else None
    return None


def read_number(path: Path, key: str) -> int:
    """The number after `key` in a flat-keyed cgroup file (0 when it is not there)."""
    for line in path.read_text().splitlines():
        name, _, value = line.partition(" ")
        if name == key:
            return int(value)
    return 0


class CgroupGroup:
    """A worker's own cgroup: the kernel counts its CPU time and memory, and ends it whole."""

    def __init__(self, cpu: Path, memory: Path | None, memory_mb: int) -> None:
        self.cpu, self.memory = cpu, memory
        if memory is not None:
            limit = str(memory_mb * 1024 * 1024)
            (memory / "memory.limit_in_bytes").write_text(limit)
            with contextlib.suppress(OSError):  # only where swap is counted too
                (memory / "memory.memsw.limit_in_bytes").write_text(limit)

    def adopt(self, pid: int) -> None:
        for folder in (self.cpu, self.memory):
            if folder is not None:
                (folder / "cgroup.procs").write_text(str(pid))

    def procs(self) -> list[str]:
        """The files a process writes its ID to, to enter the group itself."""
        return [str(folder / "cgroup.procs") for folder in (self.cpu, self.memory) if folder]

    def entered(self, pid: int) -> None:
        """The worker `pid` is in the group: it entered it itself (see procs)."""

    def meter_spec(self) -> list:
        return ["cgroup", str(self.cpu / "cpu.stat")]

    def over_memory(self) -> bool:
        """Whether the group reached its memory cap (the kernel then ends a process of it)."""
        if self.memory is None:
            return False
        return read_number(self.memory / "memory.oom_control", "oom_kill") > 0

    def close(self) -> None:
        kill_cgroup(self.cpu)
        for folder in (self.cpu, self.memory):
            if folder is not None:
                remove_cgroup(folder)


def kill_cgroup(folder: Path) -> None:
    """Kill every process of a cgroup v2 and wait until it is empty."""
    if (folder / "cgroup.kill").exists():
        (folder / "cgroup.kill").write_text("1")
    for _ in range(1000):
        pids = [int(p) for p in (folder / "cgroup.procs").read_text().split()]
        if not pids:
            return
        for pid in pids:  # a kernel without cgroup.kill, or a fork that raced it
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.005)


def remove_cgroup(folder: Path) -> None:
    """Remove an emptied cgroup (its last processes may take a moment to be gone)."""
    for _ in range(200):
        try:
            folder.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.005)


def process_stat(pid: int | str) -> list[str] | None:
    """The fields of /proc/PID/stat after the command name, or None if it has ended."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def cpu_of(fields: list[str], children: bool = True) -> float:
    """CPU seconds in a stat's fields: the process's, and its reaped children's."""
    used = int(fields[11]) + int(fields[12])
    if children:
        used += int(fields[13]) + int(fields[14])
    return used / CLOCK_TICKS


def descendants(root: int) -> dict[int, list[str]]:
    """Every process below `root` (not root itself), with its stat fields."""
    stats = {int(p.name): process_stat(p.name) for p in Path("/proc").iterdir() if p.name.isdigit()}
    children: dict[int, list[int]] = {}
    for pid, fields in stats.items():
        if fields is not None:
            children.setdefault(int(fields[1]), []).append(pid)
    found, todo = {}, list(children.get(root, []))
    while todo:
        pid = todo.pop()
        if pid not in found and stats.get(pid) is not None:
            found[pid] = stats[pid]
            todo += children.get(pid, [])
    return found


class CgroupMeter:
    """The CPU time of a cgroup, from its cpu.stat (readable by every user)."""

    def __init__(self, stat: str) -> None:
        self.stat = os.open(stat, os.O_RDONLY)
        self.last = 0.0

    def cpu_seconds(self) -> float:
        """The group's CPU time so far (its last figure once the group is gone)."""
        try:
            text = os.pread(self.stat, 4096, 0).decode()
        except OSError:
            return self.last
        for line in text.splitlines():
            if line.startswith("usage_usec "):
                self.last = int(line.split()[1]) / 1e6
        return self.last

    def close(self) -> None:
        os.close(self.stat)


class TreeMeter:
    """The CPU time of everything below `root` and of the children it reaped, from /proc:
    the worker's own figure read afresh each time, the sum of all others once a second."""

    def __init__(self, root: int, pid: int) -> None:
        self.root, self.pid = root, pid
        self.others = self.scanned = self.last = 0.0
        self.start = self.total()

    def own(self) -> float:
        fields = process_stat(self.pid)
        return 0.0 if fields is None else cpu_of(fields)

    def total(self) -> float:
        mine = process_stat(self.root) or ["0"] * 15
        reaped = cpu_of(mine) - cpu_of(mine, children=False)
        return reaped + sum(cpu_of(fields) for fields in descendants(self.root).values())

    def cpu_seconds(self) -> float:
        now, own = time.monotonic(), self.own()
        if now - self.scanned >= SCAN_SECONDS:
            self.scanned, self.others = now, self.total() - own
        self.last = max(self.last, own + self.others - self.start)
        return self.last

    def close(self) -> None:
        pass


def meter(spec: list) -> CgroupMeter | TreeMeter:
    """What reads a group's CPU time, from the group's `meter_spec()`."""
    if spec[0] == "cgroup":
        return CgroupMeter(spec[1])
    return TreeMeter(spec[1], spec[2])


class ProcessTree:
    """Without cgroups: everything below this process, which becomes a subreaper so that what
    a worker started (and orphaned) stays below it."""

    def __init__(self) -> None:
        become_subreaper()
        self.pid = 0

    def adopt(self, pid: int) -> None:
        self.pid = pid

    def procs(self) -> list[str]:
        return []  # everything below this process is in the group already

    def entered(self, pid: int) -> None:
        self.pid = pid

    def meter_spec(self) -> list:
        return ["tree", os.getpid(), self.pid]

    def over_memory(self) -> bool:
        return False  # each process has its own address-space limit, and there is no total

    def close(self) -> None:
        """Kill everything below this process and reap what it adopted (the worker itself
        is reaped by its Popen first)."""
        for _ in range(1000):
            below = descendants(os.getpid())
            for pid, fields in below.items():
                if fields[0] == "Z" and int(fields[1]) == os.getpid():
                    with contextlib.suppress(ChildProcessError):
                        os.waitpid(pid, os.WNOHANG)
                elif fields[0] != "Z":
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.kill(pid, signal.SIGKILL)
            if not below:
                return
            time.sleep(0.005)


def remove_groups(kind: str) -> None:
    """Kill and remove every cgroup of `kind` (what launchers killed before they could close
    their groups left)."""
    for controller in ("", "memory"):
        root = own_cgroup(controller) if os.geteuid() == 0 else None
        for folder in sorted(root.glob(f"{kind}-*")) if root is not None else []:
            with contextlib.suppress(OSError):
                kill_cgroup(folder)
                remove_cgroup(folder)


def worker_group(kind: str, memory_mb: int) -> CgroupGroup | ProcessTree:
    """A new group for one worker: a cgroup where this process may make one, else the tree
    below this process. `kind` names the cgroup ("tenxor-worker-...")."""
    name = f"{kind}-{os.getpid()}-{next(NAMES)}"
    unified = own_cgroup("") if os.geteuid() == 0 else None
    if unified is not None:
        try:
            (unified / name).mkdir()
        except OSError:
            unified = None
    if unified is None:
        return ProcessTree()
    memory = own_cgroup("memory")
    if memory is not None:
        try:
            (memory / name).mkdir()
            memory = memory / name
        except OSError:
            memory = None
    try:
        return CgroupGroup(unified / name, memory, memory_mb)
    except OSError:
        for folder in (unified / name, memory):
            if folder is not None:
                remove_cgroup(folder)
        return ProcessTree()
