"""Gradescope's autograder zip: built by one command, set up without a package index, and
grading a submission into a results.json that Gradescope accepts."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import jsonschema
import pytest

from instructor.launcher import ENTER_GROUP
from instructor.protections import SandboxMode
from instructor.release import stubbed_source
from instructor.worker_group import own_cgroup
from tenxor.course.catalog import CATALOG, stub_line
from tests.tooling.submissions import MODULES, ROOT, Fixture, copycat
from tests.tooling.test_trust import found_in, secrets, strays_written

pytestmark = pytest.mark.provided
SCHEMA = json.loads((Path(__file__).parent / "gradescope_results.schema.json").read_text())


@pytest.fixture(scope="module")
def autograder(tmp_path_factory) -> Path:
    """The autograder zip of the course, written by the instructor's command."""
    out = tmp_path_factory.mktemp("zip") / "autograder.zip"
    done = subprocess.run(
        [sys.executable, "-m", "instructor.cli", "autograder", "--out", str(out)]
        + ["--course", str(ROOT)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert f"Wrote {out}" in done.stdout
    return out


def test_the_zip_holds_the_scripts_the_course_and_its_wheels(autograder: Path):
    with zipfile.ZipFile(autograder) as archive:
        names = archive.namelist()
        modes = {info.filename: info.external_attr >> 16 for info in archive.infolist()}
    for script in ("setup.sh", "run_autograder"):
        assert script in names and modes[script] & stat.S_IXUSR, script
    assert {item.path for item in CATALOG} <= set(names)
    assert any(name.startswith("tests/hidden/test_") for name in names)
    grading = [
        path.relative_to(ROOT).as_posix() for path in (ROOT / "instructor" / "grading").glob("*.py")
    ]
    assert "instructor/grading/__init__.py" in grading and set(grading) <= set(names)
    assert "instructor/protections.py" in names and "pyproject.toml" in names
    wheels = {
        name.split("/")[1].split("-")[0].lower() for name in names if name.startswith("wheels/")
    }
    assert {"numpy", "pytest", "hypothesis", "ml_dtypes", "chalk_diagrams", "setuptools"} <= wheels
    assert not any(name.startswith((".venv/", "notebooks/", ".git/")) for name in names)


def gradescope_runs(script: Path, environment: dict[str, str]) -> subprocess.CompletedProcess:
    """Run one of the autograder's scripts as Gradescope does, with bash."""
    return subprocess.run(
        ["bash", str(script)], capture_output=True, text=True, env=environment, timeout=600
    )


@pytest.fixture(scope="module")
def installed(autograder: Path, tmp_path_factory) -> tuple[Path, dict[str, str]]:
    """Gradescope's first step in a temporary autograder root: unpack into source/ and run
    setup.sh with the package index out of reach; the root, and the scripts' environment."""
    root = tmp_path_factory.mktemp("gradescope") / "autograder"
    with zipfile.ZipFile(autograder) as archive:
        archive.extractall(root / "source")
    environment = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "VIRTUAL_ENV"))},
        "AUTOGRADER_ROOT": str(root),
        "PIP_INDEX_URL": "http://127.0.0.1:9/simple",  # nothing listens there
        "TENXOR_EXAMPLES": "10",  # the packaging is on trial here, not the exercises
    }
    setup = gradescope_runs(root / "source" / "setup.sh", environment)
    assert setup.returncode == 0, setup.stdout + setup.stderr
    return root, environment


def test_setup_installs_no_solution_and_leaves_the_course_to_root(installed):
    root, _ = installed
    assert stat.S_IMODE((root / "source").stat().st_mode) == 0o700
    site = next((root / "venv").glob("lib/python3*/site-packages"))
    for item in CATALOG:  # the installed module is the release's: each exercise a stub
        text = (site / item.path).read_text(encoding="utf-8")
        assert stub_line(item, "").strip() in text, item.id
    for module in MODULES:
        assert (site / module).read_text(encoding="utf-8") == stubbed_source(ROOT / module)


@contextlib.contextmanager
def gradescope_container() -> Iterator[list[str]]:
    """What runs a command within Gradescope's default container (0.5 CPU, 768 MB): a
    prefix that puts it into cgroups with those limits (the kernel's cpu and memory
    controllers), removed afterwards; no prefix where this process cannot make them."""
    made = []
    cpu, memory = own_cgroup("cpu"), own_cgroup("memory")
    if os.geteuid() == 0 and cpu is not None and memory is not None:
        name = f"tenxor-gradescope-{os.getpid()}"
        for folder, settings in (
            (cpu / name, {"cpu.cfs_period_us": "100000", "cpu.cfs_quota_us": "50000"}),
            (memory / name, {"memory.limit_in_bytes": str(768 * 1024 * 1024)}),
        ):
            folder.mkdir()
            made.append(folder)
            for file, value in settings.items():
                (folder / file).write_text(value)
    try:
        procs = [str(folder / "cgroup.procs") for folder in made]
        yield [sys.executable, "-c", ENTER_GROUP, json.dumps(procs)] if made else []
    finally:
        for folder in made:
            kill_cgroup_v1(folder)
            folder.rmdir()


def kill_cgroup_v1(folder: Path) -> None:
    """End whatever is still in a cgroup (nothing, once a command has finished)."""
    for pid in (folder / "cgroup.procs").read_text().split():
        with contextlib.suppress(ProcessLookupError):
            os.kill(int(pid), signal.SIGKILL)


def graded_by_gradescope(root: Path, environment: dict[str, str], fixture: Fixture) -> dict:
    """run_autograder on a fixture submission, in Gradescope's default container: its
    results.json."""
    shutil.rmtree(root / "submission", ignore_errors=True)
    shutil.rmtree(root / "results", ignore_errors=True)
    fixture.build(root / "submission")
    with gradescope_container() as prefix:
        graded = subprocess.run(
            [*prefix, shutil.which("bash") or "/bin/bash", str(root / "source" / "run_autograder")],
            capture_output=True, text=True, env=environment, timeout=1200,
        )  # fmt: skip
    assert graded.returncode == 0, graded.stdout + graded.stderr
    results = json.loads((root / "results" / "results.json").read_text())
    jsonschema.validate(results, SCHEMA)
    return results


def test_a_complete_submission_scores_full_and_a_copycat_nothing(installed):
    """Through the real setup.sh and run_autograder, within 0.5 CPU and 768 MB: the
    reference's modules earn every point; modules that run the installed course's copy of
    themselves earn none (that copy is the release's)."""
    root, environment = installed
    total = sum(item.points for item in CATALOG)
    results = graded_by_gradescope(root, environment, Fixture("complete", (), (), ""))
    assert results["score"] == pytest.approx(total)
    assert sum(entry["max_score"] for entry in results["tests"]) == pytest.approx(total)
    results = graded_by_gradescope(root, environment, Fixture("copycat", (copycat,), (), ""))
    assert results["score"] == 0, results["output"]


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can choose to separate users")
def test_a_copycat_scores_nothing_without_namespaces_either(installed):
    """Where the container allows no namespaces (the separate-user sandbox), the worker keeps
    handles on the folders its imports come from, the grader's site-packages included: what
    it finds there is the release's package."""
    root, environment = installed
    Fixture("copycat", (copycat,), (), "").build(root / "copycat")
    out = root / "copycat-results"
    command = [str(root / "venv" / "bin" / "tenxor-instructor"), "grade", str(root / "copycat")]
    command += ["--out", str(out), "--course", str(root / "source"), "--examples", "10"]
    command += ["--sandbox", SandboxMode.SEPARATE_USER.value]
    graded = subprocess.run(command, capture_output=True, text=True, env=environment)
    assert graded.returncode == 0, graded.stdout + graded.stderr
    results = json.loads((out / "results.json").read_text())
    assert results["score"] == 0 and results["extra_data"]["sandbox"] == SandboxMode.SEPARATE_USER


@pytest.mark.skipif(os.geteuid() != 0, reason="workers get users of their own as root")
@pytest.mark.parametrize("mode", [SandboxMode.ISOLATED, SandboxMode.SEPARATE_USER])
def test_a_worker_of_the_autograder_finds_nothing_of_the_course(installed, mode, tmp_path):
    """Enumeration in the layout setup.sh leaves: a worker started by the grader installed
    in the autograder's environment, with or without namespaces, walks every path it can
    open and reads every file; nothing holds a solution or a hidden test's text, and it may
    write only its own scratch."""
    root, environment = installed
    needles = secrets()
    (tmp_path / "needles.json").write_text(json.dumps(needles), encoding="utf-8")
    (tmp_path / "closed").mkdir()
    run_walking = f"import sys, runpy; sys.path.append({str(ROOT)!r}); "
    run_walking += "runpy.run_module('tests.tooling.walking', run_name='__main__')"
    done = subprocess.run(
        [str(root / "venv" / "bin" / "python"), "-c", run_walking, str(root / "source")]
        + [mode.value, str(tmp_path / "needles.json"), str(tmp_path / "closed")],
        capture_output=True, text=True, env=environment, cwd=tmp_path, timeout=1200,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    walked = json.loads(done.stdout.splitlines()[-1])
    assert walked["mode"] == mode.value and walked["files"] > 1000, walked["files"]
    assert not walked["found"], found_in(walked, needles)
    assert not strays_written(walked), strays_written(walked)
