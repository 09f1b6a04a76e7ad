"""A worker that walks every folder it can open and reads every file it can, in the sandbox
a grading run would give it: the enumeration behind the trust tests.

    found = walk_in_a_worker(course, mode, needles, closed)   # in this interpreter
    python walking.py COURSE MODE NEEDLES CLOSED              # in another (the autograder's)

It starts at `/` and at each folder it holds a handle on (where it imports through them),
skips only /proc and /sys and the files the operating system's packages installed (dpkg's
lists: the same on every machine of its kind, and gigabytes), reads up to 1 MB of every other
regular file, and says which needles (lines of text) each holds as a line of its own, however
indented, and which folders it may write.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from instructor.grading.intake import assemble
from instructor.grading.setup import grading_setup
from instructor.sandbox.judge_side import Sandbox
from instructor.sandbox.launcher import Launcher, SandboxLimits
from instructor.sandbox.protections import SandboxMode
from tests.tooling.submissions import MODULES, STORAGE, Fixture, appended, stubbed

WALKING = SandboxLimits(call_cpu_seconds=600.0, call_wall_seconds=900.0, answer_mb=64)
OTHER_STUDENT = "answer = 7 * 0x3a9c  # another student's"

WALK_EVERYTHING = """
def walk_everything(needles):
    import functools, os, stat, sys
    lines = {"".join(needle.split()).encode(): number for number, needle in enumerate(needles)}
    # What the operating system's packages put there, each path in its folder's real place
    # (/lib is usr/lib where the top is merged): one realpath for each folder, not each file.
    installed, real_folder = set(), functools.cache(os.path.realpath)
    try:
        lists = [entry.path for entry in os.scandir("/var/lib/dpkg/info")
                 if entry.name.endswith(".list")]
    except OSError:
        lists = []
    for listed in lists:
        with open(listed, encoding="utf-8", errors="replace") as stream:
            for line in stream:
                folder, _, name = line.strip().rpartition("/")
                if name:
                    installed.add(os.path.join(real_folder(folder or "/"), name))
    handles = [path for path in sys.path if path.startswith("/proc/self/fd/")]
    files, found, writable = 0, [], []
    todo = ["/", *handles]
    while todo:
        folder = todo.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        if os.access(folder, os.W_OK):
            writable.append([folder, os.stat(folder).st_mode])
        for entry in entries:
            if entry.path in ("/proc", "/sys"):
                continue
            try:
                mode = entry.stat(follow_symlinks=False).st_mode
            except OSError:
                continue
            if stat.S_ISDIR(mode):
                todo.append(entry.path)
            elif stat.S_ISREG(mode) and entry.path not in installed:
                try:
                    with open(entry.path, "rb") as stream:
                        data = stream.read(1024 * 1024)
                except OSError:
                    continue
                files += 1
                held = lines.keys() & data.translate(None, b" \\t\\r").splitlines()
                if held:
                    found.append([entry.path, sorted(lines[line] for line in held)])
    return [files, found, writable]
"""


def walking_submission() -> Fixture:
    """A submission with nothing of its own but the walk."""
    not_started = tuple(stubbed(module) for module in MODULES)
    return Fixture("walks", (*not_started, appended(STORAGE, WALK_EVERYTHING)), (), "")


@contextlib.contextmanager
def readable_by(uid: int) -> Iterator[None]:
    """Another student's file in /tmp that user `uid` may read (and no other user but root)."""
    with tempfile.TemporaryDirectory(prefix="tenxor-other-") as other:
        (Path(other) / "storage.py").write_text(f"{OTHER_STUDENT}\n", encoding="utf-8")
        os.chown(other, uid, uid)
        yield


def walk_in_a_worker(
    course: Path, mode: SandboxMode, needles: list[str], closed: list[Path], other: bool
) -> dict[str, Any]:
    """Set up grading of `course` in `mode` as a batch whose submissions and output are the
    folders `closed`, and walk in one of its workers (with, if `other`, another student's
    file that its user may read in /tmp): how many files it read, where it found which
    needles, and which folders it may write (with their modes)."""
    with (
        grading_setup(course, closed, WALKING, 1, mode, profile="ci-quick") as setup,
        tempfile.TemporaryDirectory(prefix="submission-", dir=setup.scratch) as scratch,
    ):
        config = setup.config(Path(scratch) / "package", 0)
        with readable_by(config.uid or os.getuid()) if other else contextlib.nullcontext():
            submission = walking_submission().build(Path(scratch) / "s")
            assembly = assemble(setup.release_tree, submission, Path(scratch) / "package")
            config = dataclasses.replace(
                setup.config(assembly.package, 0), judge=None, limits=WALKING
            )
            sandbox = Sandbox(config, None, Launcher(config))
            try:
                started = sandbox.start()
                if started is not None:
                    raise OSError(f"the walking submission did not start: {started}")
                target = ("tenxor.storage", "walk_everything")
                files, found, writable = sandbox.call("1.1", target, (needles,), {}, [])
            finally:
                sandbox.close()
    return {"files": files, "found": found, "writable": writable, "mode": setup.mode.value}


if __name__ == "__main__":
    course, mode, needles, closed = sys.argv[1:]
    needles = json.loads(Path(needles).read_text())
    walked = walk_in_a_worker(Path(course), SandboxMode(mode), needles, [Path(closed)], False)
    print(json.dumps(walked))
