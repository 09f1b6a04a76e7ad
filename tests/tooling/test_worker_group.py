"""The kernel's count of a worker and all it starts: CPU time spent in a child it forked
counts, and closing the group leaves no process behind, whichever way the machine counts."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.tooling.submissions import ROOT

pytestmark = pytest.mark.provided

# A worker that, once told to go (when it is in its group, as a launcher's worker is), burns
# 0.6 s of CPU in a forked child it waits for, leaves a setsid'd grandchild sleeping (its
# process ID printed first), then sleeps until it is killed.
WORKER = """\
import os, sys, time
sys.stdin.readline()
child = os.fork()
if child == 0:
    grandchild = os.fork()
    if grandchild == 0:
        os.setsid()
        time.sleep(600)
        os._exit(0)
    print(grandchild, flush=True)
    end = time.thread_time() + 0.6
    while time.thread_time() < end:
        pass
    os._exit(0)
os.waitpid(child, 0)
print("done", flush=True)
time.sleep(600)
"""
# Run in a process of its own (it may become a subreaper): start the worker in a group,
# read the group's CPU time, close the group; print what it measured and what is left.
GROUP = """\
import json, os, subprocess, sys, time
from instructor.sandbox.worker_group import CgroupGroup, ProcessTree, meter, worker_group
group = ProcessTree() if sys.argv[1] == "tree" else worker_group("tenxor-test", 1024)
worker = subprocess.Popen(
    [sys.executable, "-c", sys.argv[2]], stdin=subprocess.PIPE, stdout=subprocess.PIPE
)
group.adopt(worker.pid)
worker.stdin.write(b"go\\n")
worker.stdin.flush()
reading = meter(group.meter_spec())
before = reading.cpu_seconds()
grandchild = int(worker.stdout.readline())
assert worker.stdout.readline() == b"done\\n"
time.sleep(1.1)  # a process tree renews its sum of the others once a second
used = reading.cpu_seconds() - before
worker.kill()
worker.wait()
group.close()
try:
    state = open(f"/proc/{grandchild}/stat").read().rsplit(")", 1)[1].split()[0]
except OSError:
    state = "gone"
print(json.dumps({"used": used, "cgroup": isinstance(group, CgroupGroup), "left": state}))
"""


@pytest.mark.parametrize("kind", ["cgroup where allowed", "tree"])
def test_a_group_counts_a_childs_cpu_and_kills_everything(kind: str):
    done = subprocess.run(
        [sys.executable, "-c", GROUP, kind, WORKER],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["used"] >= 0.5, f"the child's 0.6 s of CPU counted as {found['used']:.2f} s"
    assert found["left"] in ("gone", "Z"), f"the setsid'd grandchild is still {found['left']}"
    if kind == "cgroup where allowed" and os.geteuid() == 0:
        assert found["cgroup"], "as root on this machine a worker gets a cgroup"


@pytest.mark.skipif(os.geteuid() != 0, reason="cgroups are made as root")
def test_a_worker_of_the_grading_user_is_in_no_blocks_cgroup(tmp_path):
    """A grading that claims a block of users clears away that block's cgroups (what its
    killed launchers left): the group of a worker that runs as the grading user is never
    named like one, whatever block its settings name."""
    from instructor.authoring.release import write_tree
    from instructor.grading.setup import RELEASE_TREE_EXCLUDED
    from instructor.sandbox.launcher import UID_BASE, Launcher, SandboxConfig, group_kind
    from instructor.sandbox.protections import SandboxMode

    write_tree(ROOT, tmp_path / "release", RELEASE_TREE_EXCLUDED)
    config = SandboxConfig(str(tmp_path / "release"), str(ROOT), SandboxMode.SAME_USER, slot=0)
    assert config.users == UID_BASE  # the first block's, by default
    launcher = Launcher(config)
    try:
        launcher.start()
        groups = launcher.group.procs()
    finally:
        launcher.stop()
    assert groups and not [g for g in groups if f"/{group_kind(UID_BASE)}-" in g], groups


@pytest.mark.skipif(os.geteuid() != 0, reason="only root starts processes as other users")
def test_clearing_a_block_of_users_kills_each_of_their_processes_and_no_one_elses():
    """What a grading left running as any user of its block ends when the block is cleared
    (in any session, as a grandchild too); a process of the next block's user, or root's,
    runs on."""
    from instructor.sandbox.launcher import BLOCK, UID_BASE, clear_users

    block = range(UID_BASE, UID_BASE + BLOCK)
    users = {"first": block.start, "middle": block.start + 33, "last": block.stop - 1}
    users |= {"next block's": block.stop, "root": 0}
    sleeping = {
        name: subprocess.Popen(
            ["sleep", "600"], user=uid, group=uid, extra_groups=[], start_new_session=True
        )
        for name, uid in users.items()
    }
    try:
        clear_users(block)
        ended = {name: process.wait(timeout=10) if users[name] in block else process.poll()
                 for name, process in sleeping.items()}  # fmt: skip
    finally:
        for process in sleeping.values():
            process.kill()
            process.wait()
    expected = {name: -9 if uid in block else None for name, uid in users.items()}
    assert ended == expected, f"exit codes (-9: killed, None: running) by user: {ended}"
