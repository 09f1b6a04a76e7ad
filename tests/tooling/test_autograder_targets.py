"""Gradescope's autograder zip for another Python than the one that builds it: it holds every
wheel that Python needs, markers evaluated for it, so that setup.sh installs it there without
a package index; and a set of wheels that lacks one is refused, naming what it lacks."""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from instructor import cli
from instructor.grading import autograder
from instructor.grading.wheels import Target, marker_environment, missing_requirements
from tenxor.course.catalog import CATALOG
from tests.tooling.submissions import ROOT, complete_submission

pytestmark = pytest.mark.provided

# The Pythons a zip is built for here, neither of them the one that builds it.
TARGETS = ("3.10", "3.12")
MACHINE = platform.machine()
# What a Linux with glibc 2.28 or later (Gradescope's Ubuntu images) installs: the wheels of
# manylinux_2_28 and of manylinux2014 (glibc 2.17), which pip tells apart.
PLATFORMS = (f"manylinux_2_28_{MACHINE}", f"manylinux2014_{MACHINE}")


def interpreter(version: str) -> str:
    """The executable of this machine's Python `version` (X.Y): on the PATH, or one pyenv
    installed even where its shims do not offer it."""
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))
    candidates = [shutil.which(f"python{version}")]
    candidates += sorted(map(str, pyenv.glob(f"versions/{version}.*/bin/python{version}")))
    asked = "import sys; print(sys.executable, '%d.%d' % sys.version_info[:2])"
    for candidate in filter(None, candidates):
        done = subprocess.run([candidate, "-c", asked], capture_output=True, text=True)
        if done.returncode == 0 and done.stdout.split()[-1] == version:
            return done.stdout.split()[0]
    pytest.fail(f"no Python {version} on this machine to install its zip in: tried {candidates}")


def offline_environment(root: Path, python: str) -> dict[str, str]:
    """The environment of setup.sh in the autograder root `root`: `python` is its python3,
    and pip reaches no package index, no configured wheel folder, no configuration."""
    (root / "bin").mkdir(parents=True)
    (root / "bin" / "python3").symlink_to(python)
    kept = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "VIRTUAL_ENV"))}
    return {
        **kept,
        "PATH": f"{root / 'bin'}{os.pathsep}{kept.get('PATH', '')}",
        "AUTOGRADER_ROOT": str(root),
        "PIP_CONFIG_FILE": os.devnull,
        "PIP_INDEX_URL": "http://127.0.0.1:9/simple",  # nothing listens there
    }


@pytest.fixture(scope="module", params=TARGETS)
def set_up_for(request, tmp_path_factory) -> tuple[str, Path, dict, subprocess.CompletedProcess]:
    """A zip built by `tenxor-instructor autograder --python-version X.Y --platform ...` with
    this Python, unpacked into a temporary autograder root whose setup.sh ran with Python
    X.Y: the version, the root, the scripts' environment, and how setup.sh ended."""
    version = request.param
    python = interpreter(version)
    assert f"{sys.version_info.major}.{sys.version_info.minor}" != version, "not a cross-build"
    root = tmp_path_factory.mktemp(f"python{version}") / "autograder"
    out = root.parent / "autograder.zip"
    options = ["--python-version", version, *(f"--platform={tag}" for tag in PLATFORMS)]
    started = time.monotonic()
    built = subprocess.run(
        [sys.executable, "-m", "instructor.cli", "autograder", "--out", str(out), *options]
        + ["--course", str(ROOT)],
        capture_output=True,
        text=True,
    )
    assert built.returncode == 0, f"autograder {options} failed: {built.stderr}"
    with zipfile.ZipFile(out) as archive:
        archive.extractall(root / "source")
    environment = offline_environment(root, python)
    setup = subprocess.run(
        ["bash", str(root / "source" / "setup.sh")],
        capture_output=True, text=True, env=environment, timeout=600,
    )  # fmt: skip
    print(f"Python {version}: built and set up in {time.monotonic() - started:.0f} s")
    return version, root, environment, setup


def test_a_zip_built_for_another_python_sets_up_and_grades_there_offline(set_up_for):
    """setup.sh installs the grader from the zip's wheels alone in the Python the zip was
    built for (pytest needs exceptiongroup and tomli on 3.10, which 3.11 does not need), the
    grader imports there, and its grading gives a complete submission every point."""
    version, root, environment, setup = set_up_for
    assert setup.returncode == 0, f"setup.sh with Python {version}: {setup.stderr[-3000:]}"
    venv = root / "venv" / "bin"
    imports = "import sys, pytest, instructor.grading.judge, instructor.grading.autograder; "
    imports += "print('%d.%d' % sys.version_info[:2])"
    done = subprocess.run([venv / "python", "-c", imports], capture_output=True, text=True)
    assert done.returncode == 0, f"importing the grader with Python {version}: {done.stderr}"
    assert done.stdout.split() == [version], f"the venv runs {done.stdout!r}, not {version}"
    complete_submission(root / "submission")
    # run_autograder's own command line, on chapter 1 alone: the packaging is on trial here,
    # and test_autograder.py grades the whole course with the grader as Gradescope runs it.
    command = (root / "source" / "run_autograder").read_text(encoding="utf-8")
    assert '--examples "${TENXOR_EXAMPLES:-100}"' in command, command
    graded = subprocess.run(
        [venv / "tenxor-instructor", "grade", root / "submission", "--single", "--out",
         root / "results", "--course", root / "source", "--examples", "10", "--chapter", "1"],
        capture_output=True, text=True, env=environment, cwd=root / "source", timeout=1200,
    )  # fmt: skip
    assert graded.returncode == 0, f"grading with Python {version}: {graded.stderr[-3000:]}"
    results = json.loads((root / "results" / "results.json").read_text(encoding="utf-8"))
    python = results["extra_data"]["versions"]["python"]
    assert python.startswith(f"{version}."), f"graded by Python {python}, not {version}"
    total = sum(item.points for item in CATALOG if item.chapter.number == 1)
    assert results["score"] == pytest.approx(total), f"score {results['score']}, not {total}"


def write_wheel(folder: Path, name: str, version: str, requires: list[str]) -> Path:
    """A wheel of the project `name` at `version` requiring `requires`: its path."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}-{version}-py3-none-any.whl"
    metadata = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
    metadata += "".join(f"Requires-Dist: {text}\n" for text in requires)
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(f"{name}-{version}.dist-info/METADATA", metadata)
    return path


PYTEST_REQUIRES = ["exceptiongroup>=1; python_version < '3.11'", "pluggy>=1.5"]


def test_a_set_lacking_a_dependency_marked_for_the_target_python_is_incomplete(tmp_path):
    """pytest needs exceptiongroup below Python 3.11 only: a set of wheels without it lacks
    it for 3.10 (named with the wheel that requires it) and is complete for 3.11 and 3.12."""
    wheels = [
        write_wheel(tmp_path, "pytest", "8.0.0", PYTEST_REQUIRES),
        write_wheel(tmp_path, "pluggy", "1.5.0", []),
    ]
    lacked = {}
    for version in ("3.10", "3.10.12", "3.11", "3.12"):
        environment = marker_environment(Target(version))
        lacked[version] = [
            (Requirement(item.requirement).name, item.required_by, item.found)
            for item in missing_requirements(wheels, ["pytest>=8"], environment)
        ]
    expected = [("exceptiongroup", wheels[0].name, None)]
    wanted = {"3.10": expected, "3.10.12": expected, "3.11": [], "3.12": []}
    assert lacked == wanted, f"missing_requirements for each Python: {lacked!r}"


def test_what_an_extra_or_a_platform_asks_for_is_required_where_it_applies(tmp_path):
    """A requirement with an extra brings what the extra asks for (and no other extra's);
    a platform marker is read for the target's platform; a wheel of too old a version does
    not satisfy a requirement."""
    wheels = [
        write_wheel(tmp_path, "grader", "1.0", ["fast[speed]>=1", "pluggy>=1.5"]),
        write_wheel(tmp_path, "fast", "1.0", ["turbo; extra == 'speed'", "slow; extra == 'x'"]),
        write_wheel(tmp_path, "pluggy", "1.0", []),
    ]
    wanted = ["grader", "sandbox; sys_platform == 'linux'", "arm; platform_machine == 'aarch64'"]
    lacked = {}
    for tags in (("manylinux_2_28_x86_64",), ("manylinux2014_aarch64",), ("macosx_11_0_arm64",)):
        environment = marker_environment(Target("3.12", tags))
        lacked[tags[0]] = {
            (Requirement(item.requirement).name, item.required_by, item.found)
            for item in missing_requirements(wheels, wanted, environment)
        }
    common = {("turbo", wheels[1].name, None), ("pluggy", wheels[0].name, "1.0")}
    course = "the course's pyproject.toml"
    expected = {
        "manylinux_2_28_x86_64": common | {("sandbox", course, None)},
        "manylinux2014_aarch64": common | {("sandbox", course, None), ("arm", course, None)},
        "macosx_11_0_arm64": common,
    }
    assert lacked == expected, f"missing_requirements on each platform: {lacked!r}"


def test_the_command_refuses_to_write_a_zip_whose_wheels_lack_a_requirement(
    tmp_path, monkeypatch, capsys
):
    """Where pip leaves out what the target needs even when asked for it by name, the
    command exits non-zero naming each missing requirement and the wheel requiring it, and
    writes no zip."""
    course = tmp_path / "course"
    course.mkdir()
    (course / "pyproject.toml").write_text(
        '[project]\nname = "c"\ndependencies = ["pytest>=8"]\n'
        "[project.optional-dependencies]\ngrading = []\n",
        encoding="utf-8",
    )
    asked_for = []

    def pip_leaving_out_exceptiongroup(wanted: list[str], folder: Path, target: Target):
        asked_for.append(wanted)
        return [
            write_wheel(folder, "pytest", "8.0.0", PYTEST_REQUIRES),
            write_wheel(folder, "pluggy", "1.5.0", []),
            write_wheel(folder, "setuptools", "80.0", []),
        ]

    monkeypatch.setattr(autograder, "download_wheels", pip_leaving_out_exceptiongroup)
    out = tmp_path / "autograder.zip"
    command = ["autograder", "--python-version", "3.10", "--out", str(out), "--course", str(course)]
    code, message = cli.main(command), capsys.readouterr().err
    assert code != 0, f"{command} exited {code}, saying {message!r}"
    assert message.startswith("tenxor-instructor autograder: "), message
    assert "exceptiongroup>=1" in message and "pytest-8.0.0-py3-none-any.whl" in message, message
    assert not out.exists(), f"{out} was written"
    assert any("exceptiongroup>=1" in wanted for wanted in asked_for), asked_for


def test_the_command_refuses_a_platform_it_cannot_read(tmp_path, capsys):
    """A --platform tag of no system whose environment markers are known is refused by name,
    before any download."""
    out = tmp_path / "autograder.zip"
    command = ["autograder", "--platform", "solaris_sparc", "--out", str(out), "--course", "."]
    code, message = cli.main(command), capsys.readouterr().err
    assert code != 0 and "--platform 'solaris_sparc'" in message, f"{command}: {code} {message!r}"
    assert not out.exists(), f"{out} was written"
