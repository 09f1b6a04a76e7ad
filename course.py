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
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
# "tests": only what the tests need, "course" without JupyterLab and ml_dtypes
EXTRAS = {"lab": "course", "test": "tests", "bench": "dev"}


def venv_python() -> Path:
    """The virtual environment's Python interpreter."""
    scripts = "Scripts" if os.name == "nt" else "bin"
    return VENV / scripts / ("python.exe" if os.name == "nt" else "python")


def run(*args: str | Path) -> int:
    """Run a command in the project folder; its exit code."""
    return subprocess.call([str(a) for a in args], cwd=ROOT)


def pip_install(extra: str) -> int:
    """Install tenxor with `extra` into .venv with pip; pip's exit code."""
    # --no-compile: Python compiles a module when it is first imported; compiling every file
    # of every package at install, most never imported, costs a third of the install.
    return run(
        venv_python(), "-m", "pip", "install", "--quiet", "--no-compile", "-e", f".[{extra}]"
    )


def set_up(extra: str, install: Callable[[str], int] = pip_install) -> None:
    """Create .venv if needed and install tenxor with `extra` (by `install`, pip unless told
    otherwise) whenever pyproject.toml changed."""
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
    if install(extra) != 0:
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
    exercises = ["tests", f"--ignore={Path('tests', 'tooling')}"]  # not the tooling's tests
    return run(venv_python(), "-m", "pytest", *exercises, "-q", "--tb=no", "-r", "N", "--progress")


def test(pytest_args: list[str]) -> int:
    """Run pytest with `pytest_args`; without any, the course's whole test run."""
    set_up(EXTRAS["test"])
    if pytest_args:
        return run(venv_python(), "-m", "pytest", *pytest_args)
    return learner_tests()


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
