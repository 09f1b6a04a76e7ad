"""The judges' starter (instructor.grading.preloaded): what it forks sees what a process
`tenxor.course.engine.start` starts would see, ends as it would, holds nothing of the course,
and does not outlive the starter."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from instructor.grading.preloaded import Starter
from tenxor.course.engine import Limits, start

pytestmark = pytest.mark.provided

LIMITS = Limits(memory_mb=3000)
# Three settings of 100 kB: a request larger than a socket's buffer holds at once.
LARGE = {f"TENXOR_LARGE_{n}": "x" * 100_000 for n in range(3)}
SETTINGS = {"TENXOR_SETTING": "set for this run", "PYTHONDONTWRITEBYTECODE": "", **LARGE}
# What a process tells of itself; its first argument is the folder it writes that to.
SELF_REPORT = """\
import json, os, resource, sys
report = {
    "argv": sys.argv,
    "cwd": os.getcwd(),
    "environment": dict(os.environ),
    "leads its session": os.getsid(0) == os.getpid(),
    "parent": os.getppid(),
    "memory cap": resource.getrlimit(resource.RLIMIT_AS),
    "writes bytecode": not sys.dont_write_bytecode,
    "reads": sys.stdin.read(),
    "course modules": sorted(m for m in sys.modules if m.split(".")[0] in
                             ("tenxor", "instructor", "tests")),
    "judges' libraries": sorted(m for m in ("hypothesis", "ml_dtypes", "numpy", "pytest",
                                            "pytest_timeout") if m in sys.modules),
}
print("printed", flush=True)
print("and said", file=sys.stderr, flush=True)
with open(os.path.join(sys.argv[1], "report.json"), "w") as stream:
    json.dump(report, stream)
"""
SAME_ANYWHERE = ("argv", "cwd", "leads its session", "memory cap", "writes bytecode", "reads")


def self_report(how, folder: Path, *arguments: str) -> tuple[dict, str, int]:
    """What SELF_REPORT, started by `how` (start, or a starter's start) in `folder`/work,
    reports (`folder` named FOLDER in it), prints and exits with."""
    folder.mkdir()
    (folder / "work").mkdir()
    with (folder / "output").open("wb") as output:
        process = how(
            [sys.executable, "-c", SELF_REPORT, str(folder), *arguments],
            folder / "work", output, LIMITS, "ci-quick", SETTINGS,
        )  # fmt: skip
        code = process.wait(timeout=60)
    report = json.loads((folder / "report.json").read_text().replace(str(folder), "FOLDER"))
    return report, (folder / "output").read_text(), code


def test_a_forked_process_sees_what_a_started_one_sees(tmp_path):
    started, printed, code = self_report(start, tmp_path / "started", "an argument")
    with Starter(tmp_path, "ci") as starter:
        forked, forked_printed, forked_code = self_report(
            starter.start, tmp_path / "forked", "an argument"
        )
        assert forked["parent"] == starter.process.pid  # the lifeline's parent: the starter
    assert started["parent"] == os.getpid()
    assert {k: forked[k] for k in SAME_ANYWHERE} == {k: started[k] for k in SAME_ANYWHERE}
    assert started["memory cap"] == [3000 * 2**20] * 2 and started["reads"] == ""
    assert started["writes bytecode"] and started["argv"] == ["-c", "FOLDER", "an argument"]
    assert started["cwd"] == "FOLDER/work"
    environment, forked_environment = started["environment"], forked["environment"]
    assert environment.pop("TENXOR_PARENT") == str(os.getpid())
    assert forked_environment.pop("TENXOR_PARENT") == str(starter.process.pid)
    assert forked_environment == environment
    assert environment["TENXOR_SETTING"] == "set for this run"
    assert {name: environment[name] for name in LARGE} == LARGE
    assert environment["TENXOR_HYPOTHESIS_PROFILE"] == "ci-quick"
    assert forked["course modules"] == started["course modules"] == []
    # What a judge imports first is there before a fork runs, and only then.
    libraries = ["hypothesis", "ml_dtypes", "numpy", "pytest", "pytest_timeout"]
    assert (forked["judges' libraries"], started["judges' libraries"]) == (libraries, [])
    assert forked_printed == printed == "printed\nand said\n"
    assert forked_code == code == 0


ENDINGS = [
    ("raise SystemExit(3)", 3),
    ("import os\nos._exit(5)", 5),
    ("raise ValueError('the script fails')", 1),
    ("import os, signal\nos.kill(os.getpid(), signal.SIGTERM)", -signal.SIGTERM),
]


@pytest.mark.parametrize(("script", "code"), ENDINGS, ids=["exit", "os-exit", "raises", "signal"])
def test_a_forked_process_ends_with_the_code_a_started_one_ends_with(tmp_path, script, code):
    def ended(how, name: str) -> tuple[int, str]:
        with (tmp_path / name).open("wb") as output:
            process = how([sys.executable, "-c", script], tmp_path, output, LIMITS, "ci", {})
            return process.wait(timeout=60), (tmp_path / name).read_text()

    with Starter(tmp_path, "ci") as starter:
        forked, forked_output = ended(starter.start, "forked")
        assert starter.start.__self__ is starter and starter.process.poll() is None
    started, output = ended(start, "started")
    assert forked == started == code, (forked_output, output)
    assert ("ValueError: the script fails" in forked_output) == (code == 1), forked_output


def alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie that its parent has not reaped yet does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def wait_for(condition, seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"still not so after {seconds} s"
        time.sleep(0.05)


SLEEPS = "import time\ntime.sleep(600)"


@pytest.mark.parametrize("end", ["killed", "closed"])
def test_what_the_starter_forked_does_not_outlive_it(tmp_path, end):
    """Killed, the starter takes its forks along (their lifeline); closed, it kills them.
    Either way, their exit code says they were killed."""
    starter = Starter(tmp_path, "ci")
    with (tmp_path / "output").open("wb") as output:
        forked = [starter.start([sys.executable, "-c", SLEEPS], tmp_path, output, LIMITS,
                                "ci", {}) for _ in range(2)]  # fmt: skip
    assert all(alive(process.pid) for process in forked)
    with pytest.raises(subprocess.TimeoutExpired):
        forked[0].wait(timeout=0.1)
    if end == "killed":
        starter.process.send_signal(signal.SIGKILL)
    starter.close()
    wait_for(lambda: not any(alive(process.pid) for process in forked))
    assert [process.wait(timeout=10) for process in forked] == [-signal.SIGKILL] * 2


def test_a_fork_is_killed_with_its_session_as_a_started_process_is(tmp_path):
    """Grading ends a judge by its process group: the fork leads one, which holds what it
    started too."""
    script = "import subprocess, sys, time\nsubprocess.Popen(['sleep', '600'])\ntime.sleep(600)"
    with Starter(tmp_path, "ci") as starter, (tmp_path / "output").open("wb") as output:
        process = starter.start([sys.executable, "-c", script], tmp_path, output, LIMITS, "ci", {})
        wait_for(lambda: subprocess.run(["pgrep", "-s", str(process.pid), "sleep"],
                                        capture_output=True).returncode == 0)  # fmt: skip
        os.killpg(process.pid, signal.SIGTERM)
        assert process.wait(timeout=30) == -signal.SIGTERM
        wait_for(lambda: subprocess.run(["pgrep", "-s", str(process.pid)],
                                        capture_output=True).returncode == 1)  # fmt: skip


def test_the_starter_refuses_what_start_would_not_run(tmp_path):
    with Starter(tmp_path, "ci") as starter, (tmp_path / "output").open("wb") as output:
        with pytest.raises(ValueError, match="-c scripts"):
            starter.start([sys.executable, "-m", "pytest"], tmp_path, output, LIMITS, "ci", {})
        assert starter.process is None  # nothing was started for it
