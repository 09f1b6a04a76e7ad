"""The instructor's test run, what CI runs: `python3 -m instructor.ci` in the instructor's tree.

It sets up `.venv` with the learner's `course.py` (the `dev` extra, installed by uv, or by pip
where uv cannot), compiles the course once for the run's many processes, lints with ruff,
then runs `tenxor-instructor verify` (whose first gate runs every test, public and hidden,
and whose last runs every notebook under nbval) beside the tests of the course tooling,
which run side by side a file at a time; verify's report follows theirs. The tests make
their files in memory (a folder of /dev/shm), where the machine has room. Under CI
(CI=true) it first installs the Debian packages some tests need (SYSTEM_PACKAGES). It needs
only the standard library: it runs before anything is installed.

    python3 -m instructor.ci                 # everything, as CI runs it
    python3 -m instructor.ci --set-up        # only set up .venv, and say what to run next
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from unittest import mock

import course  # the learner's bootstrap, course.py, at the top of the tree (the current folder)
from instructor.entry_points import CI, CLI

ROOT = Path(course.__file__).resolve().parent

# One test process per core and two more: many tests wait (on the Gradescope grader held to
# half a CPU, on Slurm's scheduling, on a browser), and a process waiting would leave its
# core idle. On 2 cores the tooling tests alone took 7:01 with 4 processes (the cores idle
# 20 s in all), 7:16 with 3 (idle 37 s).
TOOLING_PROCESSES = (os.cpu_count() or 1) + 2
EXTRA = "dev"  # the instructor's run also lints, grades and checks notebooks
# Debian's packages that tests need, each with the commands that show it is installed:
# Chromium for the browser tests, Slurm and munge for the test of grading as a job array.
SYSTEM_PACKAGES = {
    "chromium": ("chromium", "chromium-browser", "google-chrome"),
    "slurmctld": ("slurmctld",),
    "slurmd": ("slurmd",),
    "slurm-client": ("sbatch",),
    "munge": ("munged",),
}


def missing_packages() -> list[str]:
    """Those of SYSTEM_PACKAGES none of whose commands this machine has."""
    where = f"{os.environ.get('PATH', '')}:/usr/sbin:/sbin"
    return [package for package, commands in SYSTEM_PACKAGES.items()
            if not any(shutil.which(command, path=where) for command in commands)]  # fmt: skip


def packages_for_ci(log: Path) -> subprocess.Popen | None:
    """Under CI (CI=true), start installing the missing SYSTEM_PACKAGES, with their output
    into `log`; the installing process, if one started."""
    missing = missing_packages()
    if os.environ.get("CI") != "true" or not missing:
        return None
    if not shutil.which("apt-get"):
        print(f"CI=true, but there is no apt-get to install {', '.join(missing)}: "
              "the tests that need them will fail.")  # fmt: skip
        return None
    print(f"Installing {', '.join(missing)} from Debian's packages for the tests ...", flush=True)
    apt = "apt-get" if os.geteuid() == 0 else "sudo -n apt-get"
    install = f"{apt} install -y -qq --no-install-recommends {' '.join(missing)}"
    environment = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    with log.open("wb") as output:
        return subprocess.Popen(["sh", "-c", f"{apt} update -qq && {install}"], stdout=output,
                                stderr=output, env=environment)  # fmt: skip


def packages_installed(installing: subprocess.Popen | None, log: Path) -> None:
    """Wait until the packages are installed; show the end of its `log` if that failed."""
    if installing is not None and installing.wait() != 0:
        sys.stdout.buffer.write(log.read_bytes()[-4000:])
        print("Installing the packages failed (see above): the tests that need them will fail.",
              flush=True)  # fmt: skip


# What installs the `dev` extra: uv resolves, fetches and unpacks its hundred-odd packages
# side by side, in a fraction of pip's time. (The learner's course.py keeps pip, which
# comes with Python.)
UV = "uv>=0.9,<1"


def uv_install(extra: str) -> int:
    """Install tenxor with `extra` into .venv as course.py does, with uv (which pip installs
    there first); pip installs it instead where uv cannot (uv reads no pip configuration, so
    a package mirror that only pip is told of is unknown to it). The exit code."""
    python = course.venv_python()
    with_uv = ["-m", "uv", "pip", "install", "--quiet", "--python", python, "-e", f".[{extra}]"]
    fetched = course.run(python, "-m", "pip", "install", "--quiet", UV) == 0
    if fetched and course.run(python, *with_uv) == 0:
        return 0
    print("uv could not install it (see above); pip installs it instead.", flush=True)
    return course.pip_install(extra)


def set_up() -> None:
    """.venv with the `dev` extra, while the system packages install beside it."""
    with tempfile.TemporaryDirectory() as folder:
        log = Path(folder) / "apt-get.log"
        installing = packages_for_ci(log)
        course.set_up(EXTRA, uv_install)
        packages_installed(installing, log)


# What of the installed packages the run never imports: their own tests and the copies of
# other projects they vendor.
NEVER_IMPORTED = r"/(tests|_vendored)/"
# Compiles the installed packages but those, on every CPU: set-up installs them uncompiled.
COMPILE_INSTALLED = (
    "import compileall, re, sysconfig; "
    "compileall.compile_dir(sysconfig.get_paths()['purelib'], quiet=2, workers=0, "
    f"rx=re.compile({NEVER_IMPORTED!r}))"
)


def compile_course() -> None:
    """Compile the course's modules, the installed packages, and pytest's rewriting of the
    course's test modules, once: the run's many processes then load that bytecode instead of
    compiling the sources again each (they write none where PYTHONDONTWRITEBYTECODE is set,
    as on many CI machines; each notebook's kernel would compile IPython anew). The packages
    and the rewriting run side by side, once the course's modules (which the rewriting
    imports) are compiled."""
    environment = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    python = str(course.venv_python())
    compiling = [python, "-m", "compileall", "-q", "tenxor", "instructor", "benchmarks"]
    installed = [python, "-c", COMPILE_INSTALLED]
    rewriting = [python, "-m", "pytest", "-p", "no:nbval", "--collect-only", "-q", "tests"]
    subprocess.run(compiling, cwd=ROOT, env=environment, stdout=subprocess.DEVNULL)
    beside = [subprocess.Popen(command, cwd=ROOT, env=environment, stdout=subprocess.DEVNULL)
              for command in (installed, rewriting)]  # fmt: skip
    for process in beside:
        process.wait()


def lint() -> int:
    """ruff's check and its formatting check; their exit code, with what to do."""
    python = course.venv_python()
    if course.run(python, "-m", "ruff", "check", ".") != 0:
        print("ruff found problems (see above); fix them or run `ruff check --fix .`")
        return 1
    if course.run(python, "-m", "ruff", "format", "--check", ".") != 0:
        print("ruff would reformat the files above; run `ruff format .`")
        return 1
    return 0


# Where the tests make their files (pytest's tmp_path, grading's scratch, the releases, zips,
# sites and virtual environments they build): a folder of their own in memory, on a machine
# whose /dev/shm (a tmpfs) has MEMORY_ROOM free. The run makes and deletes hundreds of
# thousands of short-lived files; a disk's file system spends CPU on each (finding a free
# inode, journaling), a tmpfs next to none: 47 of the tooling tests' 807 CPU seconds.
MEMORY = Path("/dev/shm")
MEMORY_ROOM = 4 * 2**30  # a run holds at most about 1.5 GB there at once


@contextlib.contextmanager
def scratch_in_memory() -> Iterator[Path | None]:
    """While it lasts, TMPDIR (for this process and the ones it starts) is a fresh folder in
    MEMORY that every user may write to and only owners delete from, as /tmp; removed with
    all it holds afterwards. Where MEMORY has less than MEMORY_ROOM free (or is missing),
    nothing changes. The folder, or None."""
    try:
        room = shutil.disk_usage(MEMORY).free
    except OSError:
        room = 0
    if room < MEMORY_ROOM:
        yield None
        return
    made = tempfile.TemporaryDirectory(prefix="tenxor-ci-", dir=MEMORY, ignore_cleanup_errors=True)
    with made as folder, mock.patch.dict(os.environ, TMPDIR=folder):
        os.chmod(folder, 0o1777)
        tempfile.tempdir = None  # gettempdir() reads TMPDIR again
        try:
            yield Path(folder)
        finally:
            tempfile.tempdir = None


def verify_command() -> list[str]:
    """verify, whose gates run every test and every notebook (under nbval, each in a fresh
    kernel with its chapter finished)."""
    return [str(course.venv_python()), "-m", CLI, "verify", "--course", str(ROOT)]


def run_beside_the_tooling(command: list[str]) -> int:
    """Run `command` beside the tooling's test files (side by side, a file per process: a
    file's tests share their module-wide set-ups); print its report after the tooling's.
    Its exit code if it failed, else the tooling's."""
    with tempfile.TemporaryFile() as report:
        beside = subprocess.Popen(command, cwd=ROOT, stdout=report, stderr=subprocess.STDOUT)
        processes = ["-n", str(TOOLING_PROCESSES), "--dist", "loadfile", "--no-loadscope-reorder"]
        plugins = ["-p", "no:nbval"]  # its tests run nbval in processes of their own
        tooling = course.run(
            course.venv_python(), "-m", "pytest", *plugins, *processes, "tests/tooling"
        )
        code = beside.wait()
        report.seek(0)
        sys.stdout.buffer.write(report.read())
        sys.stdout.flush()
    return code or tooling


NEXT_STEPS = f"""\
The instructor's tree is set up: .venv holds tenxor with the dev extra. From this folder:
  .venv/bin/tenxor-instructor --help                    every command of the instructor's
  .venv/bin/tenxor-instructor verify                    prove every exercise is graded
  .venv/bin/tenxor-instructor release ../tenxor-course  the student release to hand out
  python3 -m {CI:<42} everything CI runs (about 9 minutes)
A term step by step is in README.md, under "A term, step by step"."""
USAGE = f"usage: python3 -m {CI} [--set-up]"


def main(argv: list[str]) -> int:
    """Set up, compile, lint, then verify beside the tooling's tests; with
    --set-up, only set up (.venv with the `dev` extra) and say what to run next."""
    if argv == ["--set-up"]:
        course.set_up(EXTRA, uv_install)
        print(NEXT_STEPS)
        return 0
    if argv:
        print(USAGE)
        return 2
    set_up()
    compile_course()
    if lint() != 0:
        return 1
    print("verify runs beside the tooling's tests; its report follows theirs.")
    sys.stdout.flush()
    with scratch_in_memory():
        return run_beside_the_tooling(verify_command())


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
