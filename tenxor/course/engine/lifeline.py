"""How a process the engine starts bounds itself: it caps its memory, and it dies with the
process that started it, so that no test process outlives the check that wanted it.

It imports only the standard library, and the processes that use it load it by its path (see
worker.py and running.LIMITED): neither the warm worker nor a freshly started test process
may import the tenxor package before it runs the learner's code on purpose.

    limit_memory(2048)              # this process's address space: 2048 MB at most
    die_with_parent(os.getppid())   # killed when that parent ends; ends now if it has
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys

PR_SET_PDEATHSIG = 1  # prctl: the signal this process gets when its parent ends


def die_with_parent(parent: int | None = None) -> None:
    """On Linux, be killed when the process that started this one ends; given that process
    as `parent`, end at once if it has already ended."""
    if sys.platform != "linux":
        return
    ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if parent is not None and os.getppid() != parent:
        os._exit(1)


def limit_memory(megabytes: int) -> None:
    """Cap this process's address space at `megabytes`, where the system has such a limit
    (not on Windows) and allows it."""
    try:
        import resource  # POSIX only
    except ImportError:
        return
    limit = megabytes * 1024 * 1024
    with contextlib.suppress(ValueError, OSError):  # some systems refuse an address limit
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def bound_from_environment() -> None:
    """Bound this process as its starter asked in TENXOR_MEMORY_MB and TENXOR_PARENT."""
    limit_memory(int(os.environ["TENXOR_MEMORY_MB"]))
    die_with_parent(int(os.environ["TENXOR_PARENT"]))
