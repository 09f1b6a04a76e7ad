"""What a user of grading's leaves behind once its processes are gone: System V IPC objects
(shared memory, semaphores, message queues) and files in the shared temporary folders.

A worker user serves one worker after another: the public tests' and the hidden tests' of a
student, then the next student's. So when a worker stops, grading (as root) removes what its
user left (protection NOTHING_LEFT), and the next worker starts from nothing:

    remove_leftovers({61000}, ipc=True, files=True)

Only the standard library: the launcher, which keeps root, calls this.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path

SHARED_TEMPS = ("/tmp", "/var/tmp", "/dev/shm", "/run/lock")  # every user may write there
IPC_RMID = 0
IPC_KINDS = ("shm", "sem", "msg")


def ipc_objects_of(uids: set[int]) -> Iterator[tuple[str, int]]:
    """(kind, id) of each System V IPC object that a user of `uids` owns or made, as
    /proc/sysvipc lists them (for this IPC namespace)."""
    for kind in IPC_KINDS:
        try:
            lines = Path(f"/proc/sysvipc/{kind}").read_text().splitlines()
        except OSError:
            continue
        header = lines[0].split() if lines else []
        for line in lines[1:]:
            fields = dict(zip(header, line.split()))
            if {int(fields["uid"]), int(fields["cuid"])} & uids:
                yield kind, int(fields[header[1]])  # shmid, semid or msqid


def remove_ipc_object(kind: str, number: int) -> None:
    """Remove one System V IPC object (gone already is fine)."""
    libc = ctypes.CDLL(None, use_errno=True)
    if kind == "sem":
        libc.semctl(number, 0, IPC_RMID)
    else:
        getattr(libc, f"{kind}ctl")(number, IPC_RMID, None)


def remove_files_of(uids: set[int], folder: str) -> None:
    """Remove every entry below `folder` that a user of `uids` owns (a folder with all it
    holds), looking only into folders every user may write to: nowhere else could they
    have made one. Links are removed, never followed."""
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        try:
            status = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        is_folder = stat.S_ISDIR(status.st_mode)
        if status.st_uid in uids:
            if is_folder:
                shutil.rmtree(entry.path, ignore_errors=True)
            else:
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)
        elif is_folder and status.st_mode & stat.S_IWOTH:
            remove_files_of(uids, entry.path)


def remove_leftovers(uids: set[int], ipc: bool = True, files: bool = True) -> None:
    """Remove the System V IPC objects (`ipc`) and the files in the shared temporary
    folders (`files`) of the users `uids`, whose processes have ended."""
    if ipc:
        for kind, number in list(ipc_objects_of(uids)):
            remove_ipc_object(kind, number)
    if files:
        for folder in SHARED_TEMPS:
            remove_files_of(uids, folder)
