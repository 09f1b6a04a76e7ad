"""The operating system's calls that the root side (the launcher, the judge) and the worker
both make: becoming another user, dying with a parent, killing what a user left running,
and the C library's process controls.

It imports only the standard library: the worker loads it before it confines itself, when
nothing of the course or of a submission may run yet; run as a script (the sweeper), it
kills every process of the users it is given.

    die_with(os.getppid())          # killed (SIGKILL) when the process that started it ends
    become(61000, 61000)            # that user and group for good, no supplementary groups
    kill_every_process_of(61000)    # as root: whatever that user runs, in any session
"""

from __future__ import annotations

import ctypes
import os
import signal
from typing import Any

PR_SET_PDEATHSIG = 1  # prctl: the signal this process gets when its parent ends
PR_SET_CHILD_SUBREAPER = 36  # prctl: orphans below this process become its children
PR_SET_NO_NEW_PRIVS = 38  # prctl: no program it runs gains a privilege (setuid, capabilities)
STOP_SIGNAL = signal.SIGUSR1  # what the judge sends when a call has used up its CPU time


def libc_call(name: str, *arguments: Any) -> None:
    """Call a C library function that returns -1 on failure; OSError if it fails."""
    function = getattr(ctypes.CDLL(None, use_errno=True), name)
    if function(*arguments) != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"{name}: {os.strerror(error)}")


def become(uid: int, gid: int) -> None:
    """Drop every privilege: user `uid`, group `gid`, no supplementary groups."""
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)


def kill_every_process_of(uid: int) -> None:
    """Kill every process of user `uid`, in any session: a child becomes that user and
    signals every process it may, which are that user's alone (never itself)."""
    child = os.fork()
    if child == 0:  # only system calls here: no lock another thread may hold is needed
        try:
            become(uid, uid)
            os.kill(-1, signal.SIGKILL)
        except OSError:
            pass  # ESRCH: nothing of that user's is running
        finally:
            os._exit(0)
    os.waitpid(child, 0)


def main(*uids: str) -> None:
    """Kill every process of each user in `uids`: run as root, in a small process of its own
    (see instructor.sandbox.launcher.sweep_block)."""
    for uid in uids:
        kill_every_process_of(int(uid))


def die_with(parent: int, ending: signal.Signals = signal.SIGKILL) -> None:
    """Get the signal `ending` when the process `parent`, which started this one, ends (a
    change of user clears that, so after it); end now if it already has."""
    libc_call("prctl", PR_SET_PDEATHSIG, int(ending))
    if os.getppid() != parent:
        os._exit(1)


def no_new_privileges() -> None:
    """Let no program this process runs gain a privilege, for good."""
    libc_call("prctl", PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)


def become_subreaper() -> None:
    """Adopt the orphans of every process below this one, so none leaves the tree."""
    libc_call("prctl", PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
