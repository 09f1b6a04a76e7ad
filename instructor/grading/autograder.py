"""Gradescope's autograder for the course, in one zip.

The zip holds `setup.sh` and `run_autograder` at its top, the course as grading needs it (the
package, the instructor's tooling, the public and hidden tests), `install/`: what `setup.sh`
installs, the release's package (every exercise a stub) with the tooling, and `wheels/`:
every package the grader installs, so that `setup.sh` needs no package index. Nothing a
worker could reach holds a solution: the installed package has none, and `setup.sh` leaves
the course readable by root alone. Gradescope unpacks the zip
into /autograder/source, runs `setup.sh` once when it builds the image, then `run_autograder`
for each submission, which grades /autograder/submission into /autograder/results.
"""

from __future__ import annotations

import itertools
import stat
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from packaging.requirements import Requirement

from instructor.authoring.release import LOCAL_ONLY, course_files, write_tree
from instructor.grading.wheels import (
    IncompleteWheels,
    Target,
    applies,
    marker_environment,
    missing_requirements,
    pip_options,
    without_marker,
)
from tenxor.course.catalog import TOOLING_TESTS

# What grading does not need: the notebooks, pictures, benchmarks and CI of the course.
NOT_NEEDED_FOR_GRADING = (
    *LOCAL_ONLY,
    ".ci",
    TOOLING_TESTS,
    "notebooks",
    "diagrams",
    "benchmarks",
)
# The packages that build the course itself from its pyproject.toml.
BUILD_REQUIREMENTS = ("setuptools>=70.1",)

SETUP = """\
#!/usr/bin/env bash
# Run once by Gradescope when it builds the autograder: a virtual environment with the grader
# installed from the wheels beside this script, without a package index. What it installs
# is the student release's package (every exercise a stub) with the instructor's tooling:
# the reference solutions and the hidden tests stay in source/, which only root may read
# (grading copies them into the judges' tree).
set -euo pipefail
root="${AUTOGRADER_ROOT:-/autograder}"
python3 -m venv "$root/venv"
"$root/venv/bin/python" -m pip install --quiet --no-index \\
    --find-links "$root/source/wheels" "$root/source/install[grading]"
chmod 700 "$root/source"
"""

RUN_AUTOGRADER = """\
#!/usr/bin/env bash
# Run by Gradescope for every submission: grade it with the course's public and hidden tests
# into results/results.json (TENXOR_EXAMPLES: examples per property test, 100 by default).
# --single: the upload is one student's, even if it holds copies of the package in several
# folders (the shallowest copy of each module is graded).
set -euo pipefail
root="${AUTOGRADER_ROOT:-/autograder}"
mkdir -p "$root/results"
cd "$root/source"
"$root/venv/bin/tenxor-instructor" grade "$root/submission" --single \\
    --out "$root/results" --course "$root/source" --examples "${TENXOR_EXAMPLES:-100}"
"""


def requirements(course: Path) -> list[str]:
    """What the grader installs: the course's dependencies, its `grading` extra and what
    builds it, as pip requirement strings."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    project = tomllib.loads((course / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return [*project["dependencies"], *project["optional-dependencies"]["grading"]] + list(
        BUILD_REQUIREMENTS
    )


def download_wheels(wanted: list[str], folder: Path, target: Target) -> list[Path]:
    """Download a wheel for `target` of every requirement in `wanted` (and of what pip finds
    they need) into `folder`; the wheels."""
    command = [sys.executable, "-m", "pip", "download", "--quiet", "--only-binary=:all:"]
    command += ["--dest", str(folder), *pip_options(target), *wanted]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise OSError(f"pip could not download the wheels: {done.stderr.strip()[-2000:]}")
    return sorted(folder.glob("*.whl"))


def target_wheels(course: Path, scratch: Path, target: Target) -> list[Path]:
    """A wheel for `target` of every requirement of the course and of all they need there,
    downloaded into a folder of `scratch`; IncompleteWheels when pip leaves one out.

    pip evaluates the markers of what the wheels require for the Python running it: what
    the target needs beyond that is asked of pip by name, until the set is complete."""
    environment = marker_environment(target)
    wanted = [text for text in requirements(course) if applies(Requirement(text), environment)]
    asked = [without_marker(Requirement(text)) for text in wanted]
    for attempt in itertools.count():
        wheels = download_wheels(asked, scratch / f"wheels-{attempt}", target)
        missing = missing_requirements(wheels, wanted, environment)
        more = {without_marker(Requirement(item.requirement)) for item in missing} - set(asked)
        if not more:
            break
        asked += sorted(more)
    if missing:
        raise IncompleteWheels(missing, target)
    return wheels


def add_script(archive: zipfile.ZipFile, name: str, text: str) -> None:
    """Add an executable script to the zip."""
    info = zipfile.ZipInfo(name, date_time=(2024, 1, 1, 0, 0, 0))
    info.external_attr = (stat.S_IFREG | 0o755) << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    archive.writestr(info, text)


THIS_PYTHON = Target()  # wheels for the Python and platform that build the zip


def write_autograder(course: Path, out: Path, target: Target = THIS_PYTHON) -> list[str]:
    """Write Gradescope's autograder zip for the course at `course` to `out`, its wheels for
    `target` (by default this Python and platform); the names in it."""
    course, out = course.resolve(), out.resolve()
    with tempfile.TemporaryDirectory(prefix="tenxor-autograder-") as scratch:
        wheels = target_wheels(course, Path(scratch), target)
        install = Path(scratch) / "install"  # what setup.sh installs: no solution in it
        written = write_tree(course, install, (*NOT_NEEDED_FOR_GRADING, "tests"))
        out.parent.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
            add_script(archive, "setup.sh", SETUP)
            add_script(archive, "run_autograder", RUN_AUTOGRADER)
            for relative in course_files(course, NOT_NEEDED_FOR_GRADING):
                if course / relative != out:
                    archive.write(course / relative, relative.as_posix())
            for relative in written:
                archive.write(install / relative, f"install/{relative.as_posix()}")
            for wheel in wheels:  # a wheel is a zip already: stored, not compressed again
                archive.write(wheel, f"wheels/{wheel.name}", compress_type=zipfile.ZIP_STORED)
            return archive.namelist()
