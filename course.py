#!/usr/bin/env python3
"""Set up the tenxor course and start it.

    python3 course.py lab     set up, then open the course in JupyterLab
    python3 course.py test    set up, then run every exercise's tests and show your progress
    python3 course.py bench   set up, then run the benchmarks (benchmarks/README.md)

Each creates a virtual environment in .venv on first use and reinstalls only when
pyproject.toml changes. Work through the notebooks in notebooks/ in order. In a notebook,
check("2.1") runs the tests of exercise 2.1 and explains the first failure,
check("2.1", hint=True) shows its next hint and check() your progress; in a shell,
`tenxor check 2.1` does the same (from .venv/bin). `test` runs the tests of every exercise
and ends with how many you have done; an exercise you have not started fails its tests with
NotImplementedError. Arguments after `test` go to pytest instead (e.g.
`python3 course.py test --exercise 2.1`, or `python3 course.py test -k strides`).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
EXTRAS = {"lab": "course", "test": "tests", "bench": "dev"}  # "tests": "course" without JupyterLab


def venv_python() -> Path:
    """The virtual environment's Python interpreter."""
    scripts = "Scripts" if os.name == "nt" else "bin"
    return VENV / scripts / ("python.exe" if os.name == "nt" else "python")


def run(*args: str | Path) -> int:
    """Run a command in the project folder; its exit code."""
    return subprocess.call([str(a) for a in args], cwd=ROOT)


def set_up(extra: str) -> None:
    """Create .venv if needed and install tenxor with `extra` whenever pyproject.toml changed."""
    if sys.version_info < (3, 10):  # noqa: UP036 - explain instead of failing obscurely
        sys.exit(f"tenxor needs Python 3.10 or newer; this is {sys.version.split()[0]}")
    if not venv_python().exists():
        print("Creating the virtual environment in .venv ...", flush=True)
        venv.create(VENV, with_pip=True)
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    stamp = VENV / f"installed-{extra}.sha256"
    if stamp.exists() and stamp.read_text() == digest:
        return
    print(f"Installing tenxor[{extra}] into .venv ...", flush=True)
    if run(venv_python(), "-m", "pip", "install", "--quiet", "-e", f".[{extra}]") != 0:
        sys.exit("Installing failed; see the messages above.")
    stamp.write_text(digest)


def lab() -> int:
    """Open the course in JupyterLab (as root, JupyterLab needs --allow-root)."""
    set_up(EXTRAS["lab"])
    start = ROOT / "notebooks"
    options = ["--allow-root"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []
    return run(venv_python(), "-m", "jupyter", "lab", *options, start if start.exists() else ROOT)


def learner_tests() -> int:
    """Run the learner's tests and end with how far they are (check() explains failures)."""
    print(
        "Running every exercise's tests. Each exercise you have not done yet fails its tests "
        'with NotImplementedError: that is where everyone starts. In a notebook, check("2.1") '
        "explains one exercise's tests in plain words.",
        flush=True,
    )
    return run(venv_python(), "-m", "pytest", "-q", "--tb=no", "-r", "N", "--progress")


def test(pytest_args: list[str]) -> int:
    """Run pytest with `pytest_args`; without any, the course's whole test run."""
    # <instructor>
    if not pytest_args and (ROOT / "instructor").exists():
        return instructor_tests()
    # </instructor>
    set_up(EXTRAS["test"])
    if pytest_args:
        return run(venv_python(), "-m", "pytest", *pytest_args)
    return learner_tests()


# <instructor>: the student release leaves out the lines from here to the closing tag
__doc__ += """
In the instructor's tree, `test` runs ruff, then the tests of the course tooling, diagrams
included, and beside them `tenxor-instructor verify` (whose first gate runs every test of the
course, public and hidden) followed by `pytest --nbval` on the notebooks (they must reproduce
their stored outputs). Under CI (CI=true) it first installs the Debian packages some tests
need (SYSTEM_PACKAGES: Chromium for the browser tests, Slurm and munge for grading as a job
array).
"""
# Debian's packages that tests need, each with the commands that show it is installed:
# Chromium for the browser tests, Slurm and munge for the test of grading as a job array.
SYSTEM_PACKAGES = {
    "chromium": ("chromium", "chromium-browser", "google-chrome"),
    "slurmctld": ("slurmctld",),
    "slurmd": ("slurmd",),
    "slurm-client": ("sbatch",),
    "munge": ("munged",),
}
EXTRAS["test"] = "dev"  # the instructor's test run also lints, grades and checks notebooks


def packages_for_ci(log: Path) -> subprocess.Popen | None:
    """Under CI (CI=true), start installing those of SYSTEM_PACKAGES that are missing, with
    their output into `log`; the installing process, if one started."""
    import shutil

    where = f"{os.environ.get('PATH', '')}:/usr/sbin:/sbin"
    missing = [package for package, commands in SYSTEM_PACKAGES.items()
               if not any(shutil.which(command, path=where) for command in commands)]  # fmt: skip
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


def compile_course() -> None:
    """Compile the course's modules, and pytest's rewriting of its test modules, once: the
    run's many processes then load that bytecode instead of compiling the sources again
    each (they write none where PYTHONDONTWRITEBYTECODE is set, as on many CI machines)."""
    environment = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    python = str(venv_python())
    compiling = [python, "-m", "compileall", "-q", "tenxor", "instructor", "benchmarks"]
    rewriting = [python, "-m", "pytest", "--collect-only", "-q", "tests"]
    for command in (compiling, rewriting):
        subprocess.run(command, cwd=ROOT, env=environment, stdout=subprocess.DEVNULL)


def instructor_tests() -> int:
    """Lint; then verify the course, and after it the notebooks under nbval, beside the
    tests of the tooling."""
    import tempfile
    import threading

    with tempfile.TemporaryDirectory() as folder:
        log = Path(folder) / "apt-get.log"
        installing = packages_for_ci(log)  # they install while .venv is set up
        set_up(EXTRAS["test"])
        packages_installed(installing, log)
    compile_course()
    lint = run(venv_python(), "-m", "ruff", "check", ".")
    if lint != 0:
        print("ruff found problems (see above); fix them or run `ruff check --fix .`")
        return lint
    lint = run(venv_python(), "-m", "ruff", "format", "--check", ".")
    if lint != 0:
        print("ruff would reformat the files above; run `ruff format .`")
        return lint
    # verify, then the notebooks under nbval (each in a fresh kernel), run beside the
    # tooling's test files, which run side by side, a file per process (a file's tests share
    # their module-wide set-ups); their reports follow the tooling's.
    print("verify and the notebooks run beside the tooling's tests; their reports follow.")
    sys.stdout.flush()
    verify = [venv_python(), "-m", "instructor.cli", "verify", "--course", ROOT]
    notebooks = [venv_python(), "-m", "pytest", "--nbval", "notebooks"]
    steps = [verify] + ([notebooks] if (ROOT / "notebooks").exists() else [])
    codes: list[int] = []
    with tempfile.TemporaryFile() as report:

        def one_after_another() -> None:
            """Run `steps` in turn, their output into `report` and their exit codes into
            `codes`."""
            for step in steps:
                command = [str(part) for part in step]
                done = subprocess.run(command, cwd=ROOT, stdout=report, stderr=subprocess.STDOUT)
                codes.append(done.returncode)

        beside = threading.Thread(target=one_after_another)
        beside.start()
        tooling = run(venv_python(), "-m", "pytest", "-n", "auto", "--dist", "loadfile",
                      "--no-loadscope-reorder", "tests/tooling")  # fmt: skip
        beside.join()
        report.seek(0)
        sys.stdout.buffer.write(report.read())
        sys.stdout.flush()
    if len(codes) < len(steps):
        return 1  # a step never ran: nothing proves the course
    return next((code for code in codes if code != 0), tooling)


# </instructor>
def bench(arguments: list[str]) -> int:
    """Time tenxor against NumPy, a plain loop and the wrapper design (arguments go along)."""
    set_up(EXTRAS["bench"])
    return run(venv_python(), "-m", "benchmarks", *arguments)


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in EXTRAS:
        print(__doc__)
        return 2
    command, arguments = argv[0], argv[1:]
    if command == "lab":
        return lab()
    return test(arguments) if command == "test" else bench(arguments)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
