"""What sandbox this machine allows: namespaces for bubblewrap's allowlisted view, root for
users of the workers' own, and a scratch folder the judges' users can reach."""

from __future__ import annotations

import math
import os
import sys
import tempfile
from pathlib import Path

from instructor.sandbox.allowlist import bubblewrap_refusal
from instructor.sandbox.launcher import TREE
from instructor.sandbox.protections import JUDGE_USER, SandboxMode


def namespaces_refusal(own_user: bool = True) -> str | None:
    """Why workers cannot run in bubblewrap's allowlisted view here (None where they can):
    under users of their `own_user`, that needs root; as this process's user, bubblewrap
    needs unprivileged user namespaces."""
    if not sys.platform.startswith("linux"):
        return "it needs Linux"
    if own_user and os.geteuid() != 0:
        return "it needs root"
    return bubblewrap_refusal(str(TREE), own_user)


def namespaces_allowed() -> bool:
    """Whether workers can run in bubblewrap's allowlisted view, under users of their own."""
    return namespaces_refusal() is None


def sandbox_mode(requested: SandboxMode | None = None) -> SandboxMode:
    """The strongest sandbox this machine allows (when None is `requested`), or the weaker
    one `requested`; OSError when the one requested needs what this machine refuses."""
    if requested is None:
        if os.geteuid() == 0:
            return SandboxMode.ISOLATED if namespaces_allowed() else SandboxMode.SEPARATE_USER
        refused = namespaces_refusal(own_user=False)
        return SandboxMode.UNPROTECTED if refused else SandboxMode.SAME_USER
    requested = SandboxMode(requested)
    if requested.other_users and os.geteuid() != 0:
        raise OSError(f"the {requested} sandbox needs root")
    why = namespaces_refusal(requested.other_users) if requested.namespaces else None
    if why:
        raise OSError(f"the {requested} sandbox needs bubblewrap's namespaces: {why}")
    return requested


def usable_cpus() -> int:
    """The CPUs this process may keep busy: those it may run on, fewer where its cgroup's
    CPU quota allows less (in Gradescope's default container, 0.5 CPU: 1)."""
    has_affinity = hasattr(os, "sched_getaffinity")
    cpus = len(os.sched_getaffinity(0)) if has_affinity else os.cpu_count() or 1
    quota = cpu_quota()  # a positive share of CPUs, or None
    return min(cpus, math.ceil(quota)) if quota else cpus


def cpu_quota() -> float | None:
    """The CPUs' worth of time this process's cgroups allow it (the least of its own cgroup
    and those above, in the v1 cpu hierarchy and the unified one), None without a limit."""
    if not sys.platform.startswith("linux"):
        return None
    mounts = [line.split() for line in Path("/proc/self/mounts").read_text().splitlines()]
    quotas = []
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        unified = controllers == ""
        if not unified and "cpu" not in controllers.split(","):
            continue
        for _, point, kind, options, *_ in mounts:
            v1_cpu = kind == "cgroup" and "cpu" in options.split(",")
            if (kind == "cgroup2") if unified else v1_cpu:
                folder = Path(point) / path.lstrip("/")
                above = [p for p in folder.parents if p.is_relative_to(point)]
                quotas += [q for q in map(folder_quota, [folder, *above]) if q]
                break
    return min(quotas, default=None)


def folder_quota(folder: Path) -> float | None:
    """The CPUs' worth of time a cgroup folder allows: its cpu.max (unified), else its
    cpu.cfs_quota_us over cpu.cfs_period_us (v1); None without a limit or such a file."""
    try:
        if (folder / "cpu.max").is_file():
            limit, period = (folder / "cpu.max").read_text().split()
            return None if limit == "max" else int(limit) / int(period)
        quota = int((folder / "cpu.cfs_quota_us").read_text())
        return None if quota < 0 else quota / int((folder / "cpu.cfs_period_us").read_text())
    except (OSError, ValueError):
        return None


def scratch_base(mode: SandboxMode) -> str:
    """Where grading makes its scratch folder: the temporary folder, unless a judge's user
    could not reach it (a TMPDIR below a private home folder), then /tmp."""
    base = Path(tempfile.gettempdir()).resolve()
    if not JUDGE_USER.is_on(mode) or all(p.stat().st_mode & 0o001 for p in (base, *base.parents)):
        return str(base)
    return "/tmp"
