"""A one-node Slurm cluster on localhost for the tests: Debian's slurmctld, slurmd and munge,
started in a folder of their own (their configuration, keys, sockets, state and logs), on free
ports, as root, and stopped afterwards.

    with one_node_cluster() as cluster:
        done = cluster.sbatch_wait(["grade.sh"], folder, cluster.environment)

Under CI (CI=true; `python3 -m instructor.ci` installs the packages there) a missing Slurm
fails the tests that need it; elsewhere they are skipped with a message saying how to
install it.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

COMMANDS = ("slurmctld", "slurmd", "sbatch", "squeue", "sinfo", "scontrol", "munged", "mungekey")
MISSING = (
    "the Slurm test needs Debian's Slurm and munge, and root: `sudo apt-get install slurmctld "
    "slurmd slurm-client munge` (`python3 -m instructor.ci` installs them when CI=true)"
)
SEARCHED = f"{os.environ.get('PATH', '')}:/usr/sbin:/sbin"
STARTUP_SECONDS = 120  # for the node to report idle: generous, for a busy machine
JOB_SECONDS = 900  # for a job to end


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


LOGS = ("slurmctld.log", "slurmd.log", "munge/munged.log")


@dataclass(frozen=True)
class Cluster:
    """A running one-node cluster: the folder it keeps everything in, the commands, and the
    environment they need (SLURM_CONF)."""

    folder: Path
    commands: dict[str, str]
    environment: dict[str, str]

    def logs(self) -> str:
        """The end of each daemon's log, to say why something did not work."""
        found = [self.folder / log for log in LOGS if (self.folder / log).exists()]
        return "\n".join(f"--- {log.name}\n{log.read_text()[-3000:]}" for log in found)

    def node_state(self) -> str:
        done = subprocess.run([self.commands["sinfo"], "--noheader", "--format=%T"],
                              env=self.environment, capture_output=True, text=True)  # fmt: skip
        return done.stdout.strip()

    def held(self) -> str:
        """Why Slurm holds the jobs it holds (it holds a job it could not launch)."""
        done = subprocess.run([self.commands["squeue"], "--noheader", "--format=%i %r"],
                              env=self.environment, capture_output=True, text=True)  # fmt: skip
        return "\n".join(line for line in done.stdout.splitlines() if "held" in line)

    def wait_until_idle(self) -> None:
        """Return once the node reports idle; fail with the daemons' logs if it never does."""
        deadline, state = time.monotonic() + STARTUP_SECONDS, ""
        while time.monotonic() < deadline:
            state = self.node_state()
            if state == "idle":
                return
            time.sleep(0.5)
        pytest.fail(f"the Slurm node never became idle (last state {state!r}):\n{self.logs()}")

    def sbatch_wait(
        self, arguments: list[str], folder: Path, environment: dict[str, str]
    ) -> subprocess.CompletedProcess:
        """`sbatch --wait ARGUMENTS` run in `folder`, once every task has ended; a failure
        with the daemons' logs if Slurm holds a task it could not launch, or after
        JOB_SECONDS."""
        command = [self.commands["sbatch"], "--wait", *arguments]
        waiting = subprocess.Popen(command, cwd=folder, env=environment, text=True,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
        deadline = time.monotonic() + JOB_SECONDS
        while waiting.poll() is None:
            held = self.held()
            if held or time.monotonic() > deadline:
                waiting.kill()
                waiting.communicate()
                why = f"held:\n{held}" if held else f"not done within {JOB_SECONDS} s"
                pytest.fail(f"{' '.join(command)}: {why}\n{self.logs()}")
            time.sleep(1.0)
        out, err = waiting.communicate()
        return subprocess.CompletedProcess(command, waiting.returncode, out, err)


@contextmanager
def one_node_cluster() -> Iterator[Cluster]:
    """A running one-node cluster, kept in a folder of its own under /tmp (short: the
    daemons' sockets live there, and a socket's path has at most 107 bytes)."""
    found = commands()
    with tempfile.TemporaryDirectory(prefix="tenxor-slurm-") as kept:
        folder = Path(kept)
        for part in ("munge", "state", "spool"):
            (folder / part).mkdir(mode=0o700)
        key, munge = folder / "munge" / "munge.key", folder / "munge"
        subprocess.run([found["mungekey"], "--create", f"--keyfile={key}"], check=True)
        conf = folder / "slurm.conf"
        conf.write_text(configuration(folder, os.cpu_count() or 1))
        cluster = Cluster(folder, found, {**os.environ, "SLURM_CONF": str(conf)})
        subprocess.run([found["munged"], "--force", f"--key-file={key}",
                        f"--socket={munge}/munge.socket", f"--pid-file={munge}/munged.pid",
                        f"--log-file={munge}/munged.log", f"--seed-file={munge}/seed"],
                       check=True)  # fmt: skip
        try:
            for daemon in ([found["slurmctld"]], [found["slurmd"], "-N", "localhost"]):
                subprocess.run([*daemon, "-f", str(conf)], env=cluster.environment, check=True)
            cluster.wait_until_idle()
            yield cluster
        finally:
            subprocess.run([found["scontrol"], "shutdown"], env=cluster.environment,
                           capture_output=True)  # fmt: skip
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
