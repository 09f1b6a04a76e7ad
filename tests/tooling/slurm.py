"""A one-node Slurm cluster on localhost for the tests: Debian's slurmctld, slurmd and munge,
started in a folder of the test's own (their configuration, keys, sockets, state and logs),
on free ports, as root, and stopped afterwards.

    with one_node_cluster(tmp_path / "slurm") as environment:
        subprocess.run(["sbatch", "--wait", "grade.sh"], env=environment, check=True)

Under CI (CI=true; `python3 course.py test` installs the packages there) a missing Slurm
fails the tests that need it; elsewhere they are skipped with a message saying how to
install it.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

COMMANDS = ("slurmctld", "slurmd", "sbatch", "sinfo", "scontrol", "munged", "mungekey")
MISSING = (
    "the Slurm test needs Debian's Slurm and munge, and root: `sudo apt-get install slurmctld "
    "slurmd slurm-client munge` (`python3 course.py test` installs them when CI=true)"
)
SEARCHED = f"{os.environ.get('PATH', '')}:/usr/sbin:/sbin"
STARTUP_SECONDS = 120  # for the node to report idle: generous, for a busy machine


def commands() -> dict[str, str]:
    """Where each of COMMANDS is; or a skip (a failure under CI) saying how to install them."""
    found = {name: shutil.which(name, path=SEARCHED) for name in COMMANDS}
    missing = [name for name, path in found.items() if path is None]
    problem = f"{', '.join(missing)} not found" if missing else None
    if os.geteuid() != 0:
        problem = "not root"
    if problem is None:
        return {name: str(path) for name, path in found.items()}
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true but {problem}: {MISSING}")
    pytest.skip(f"{problem}: {MISSING}")


def free_port() -> int:
    """A TCP port on localhost that nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def configuration(folder: Path, cpus: int) -> str:
    """slurm.conf for one node, localhost, with `cpus` CPUs, everything kept in `folder`."""
    return f"""\
ClusterName=tenxor
SlurmctldHost=localhost
SlurmctldPort={free_port()}
SlurmdPort={free_port()}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={folder}/munge/munge.socket
StateSaveLocation={folder}/state
SlurmdSpoolDir={folder}/spool
SlurmctldPidFile={folder}/slurmctld.pid
SlurmdPidFile={folder}/slurmd.pid
SlurmctldLogFile={folder}/slurmctld.log
SlurmdLogFile={folder}/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
MpiDefault=none
ReturnToService=2
NodeName=localhost NodeHostname=localhost CPUs={cpus} State=UNKNOWN
PartitionName=grading Nodes=ALL Default=YES MaxTime=INFINITE State=UP
"""


def wait_until_idle(sinfo: str, environment: dict[str, str], logs: list[Path]) -> None:
    """Return once the node reports idle; fail with the daemons' logs if it never does."""
    deadline = time.monotonic() + STARTUP_SECONDS
    state = ""
    while time.monotonic() < deadline:
        done = subprocess.run([sinfo, "--noheader", "--format=%T"], env=environment,
                              capture_output=True, text=True)  # fmt: skip
        state = done.stdout.strip()
        if state == "idle":
            return
        time.sleep(0.5)
    said = "\n".join(f"--- {log.name}\n{log.read_text()[-2000:]}" for log in logs if log.exists())
    pytest.fail(f"the Slurm node never became idle (last state {state!r}):\n{said}")


@contextmanager
def one_node_cluster(folder: Path) -> Iterator[dict[str, str]]:
    """A running one-node cluster kept in `folder`; the environment its commands need."""
    found = commands()
    for part in ("munge", "state", "spool"):
        (folder / part).mkdir(parents=True, mode=0o700)
    key = folder / "munge" / "munge.key"
    subprocess.run([found["mungekey"], "--create", f"--keyfile={key}"], check=True)
    kept = folder / "munge"
    munge = [found["munged"], "--force", f"--key-file={key}", f"--socket={kept}/munge.socket",
             f"--pid-file={kept}/munged.pid", f"--log-file={kept}/munged.log",
             f"--seed-file={kept}/seed"]  # fmt: skip
    conf = folder / "slurm.conf"
    conf.write_text(configuration(folder, os.cpu_count() or 1))
    environment = {**os.environ, "SLURM_CONF": str(conf)}
    subprocess.run(munge, check=True)
    try:
        subprocess.run([found["slurmctld"], "-f", str(conf)], env=environment, check=True)
        subprocess.run([found["slurmd"], "-f", str(conf), "-N", "localhost"], env=environment,
                       check=True)  # fmt: skip
        logs = [folder / "slurmctld.log", folder / "slurmd.log", folder / "munge/munged.log"]
        wait_until_idle(found["sinfo"], environment, logs)
        yield environment
    finally:
        subprocess.run([found["scontrol"], "shutdown"], env=environment, capture_output=True)
        for pid_file in ("slurmd.pid", "slurmctld.pid", "munge/munged.pid"):
            stopped(folder / pid_file)


def stopped(pid_file: Path) -> None:
    """End the daemon whose process id `pid_file` holds, if it still runs."""
    try:
        pid = int(pid_file.read_text())
    except (OSError, ValueError):
        return
    deadline = time.monotonic() + 30
    while running(pid):
        os.kill(pid, signal.SIGTERM if time.monotonic() < deadline else signal.SIGKILL)
        time.sleep(0.2)


def running(pid: int) -> bool:
    """Whether process `pid` exists and has not ended (a zombie has)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False
