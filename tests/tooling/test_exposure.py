"""Grading without an allowlisted view starts only where a worker's user can read nothing of
the course's secrets: every kind of copy is found and named, the release is not taken for
one, and without root or namespaces a batch is graded only when told it may run unprotected."""

from __future__ import annotations

import contextlib
import os
import py_compile
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from instructor.authoring.regions import regions_in
from instructor.authoring.release import solved_source, write_release
from instructor.grading.setup import GradingRefused, grading_setup
from instructor.sandbox.allowlist import (
    interpreter_folders,
    learner_packages,
    listed_libraries,
    shared_libraries,
    view_programs,
)
from instructor.sandbox.exposure import Secrets, course_secrets, exposure
from instructor.sandbox.launcher import grading_users
from tenxor.course.catalog import BY_ID
from tests.tooling.submissions import ROOT
from tests.tooling.test_grading import LIMITS

pytestmark = pytest.mark.provided
AS_ROOT = os.geteuid() == 0


@pytest.fixture(scope="module")
def secrets() -> Secrets:
    return course_secrets(ROOT)


def test_every_solution_and_every_hidden_test_file_has_a_secret(secrets: Secrets):
    solved = {what.rsplit(" ", 1)[1] for what in secrets.texts.values() if "exercise" in what}
    assert solved == {region.exercise_id for region in regions_in(ROOT / "tenxor")} == set(BY_ID)
    hidden = {path.name for path in (ROOT / "tests" / "hidden").glob("test_*.py")}
    assert {what.rsplit(" ", 1)[1] for what in secrets.texts.values() if "hidden" in what} == hidden
    assert secrets.bytecode and hidden <= secrets.names


def test_nothing_of_the_release_is_taken_for_a_secret(secrets: Secrets, tmp_path: Path):
    """The release's package and public tests (what learners hold, what the Gradescope
    grader installs), as source and as this interpreter's bytecode."""
    written = write_release(ROOT, tmp_path / "release")
    files = [tmp_path / "release" / path for path in written if path.suffix == ".py"]
    compiled = [Path(py_compile.compile(str(path), doraise=True)) for path in files]
    held = {path: secrets.held_in(path.name, path.read_bytes()) for path in [*files, *compiled]
            if secrets.may_hold(path.name)}  # fmt: skip
    assert len(held) > 10 and not {p: h for p, h in held.items() if h}


def reference_module(folder: Path) -> None:
    shutil.copy(ROOT / "tenxor" / "strides.py", folder / "strides.py")


def reference_bytecode(folder: Path) -> None:
    source = folder / "src" / "storage.py"
    source.parent.mkdir()
    source.write_text(solved_source(ROOT / "tenxor" / "storage.py"), encoding="utf-8")
    pyc = Path(py_compile.compile(str(source), doraise=True))
    target = folder / "__pycache__" / pyc.name
    target.parent.mkdir()
    shutil.move(pyc, target)
    shutil.rmtree(source.parent)


def reference_wheel(folder: Path) -> None:
    with zipfile.ZipFile(folder / "tenxor-0.1.0-py3-none-any.whl", "w") as wheel:
        wheel.write(ROOT / "tenxor" / "views.py", "tenxor/views.py")


def hidden_test(folder: Path) -> None:
    hidden = sorted((ROOT / "tests" / "hidden").glob("test_*.py"))[0]
    shutil.copy(hidden, folder / hidden.name)


PLANTED: dict[str, tuple[Callable[[Path], None], str, str]] = {
    "a copy of a solved module": (reference_module, "strides.py", "the solution of exercise"),
    "its bytecode alone": (reference_bytecode, ".pyc", "as bytecode"),
    "a wheel holding one": (reference_wheel, ".whl", "in its member tenxor/views.py"),
    "a hidden test file": (hidden_test, "_hidden.py", "hidden test text"),
}


@contextlib.contextmanager
def worker_user() -> Iterator[tuple[int, Path]]:
    """The first worker user of a claimed block, and a folder in /tmp only it may read: what
    is planted there is seen by no other grading's workers (which use other users)."""
    with grading_users() as users, tempfile.TemporaryDirectory(prefix="tenxor-planted-") as f:
        os.chown(f, users, users)
        yield users, Path(f)


@pytest.mark.skipif(not AS_ROOT, reason="the check becomes a worker's user")
@pytest.mark.parametrize("kind", list(PLANTED))
def test_each_kind_of_copy_a_worker_could_read_is_named(secrets: Secrets, kind: str):
    plant, name, held = PLANTED[kind]
    with worker_user() as (uid, folder):
        plant(folder)
        for path in folder.rglob("*"):
            os.chown(path, uid, uid)
        why = exposure(secrets, uid, [], ROOT, roots=[folder])  # grading walks the machine
    assert why is not None and f"a worker's user can read {folder}/" in why, why
    assert name in why and held in why, why


@pytest.mark.skipif(not AS_ROOT, reason="the check becomes a worker's user")
def test_a_folder_workers_must_not_open_is_named(secrets: Secrets):
    with worker_user() as (uid, folder):
        submissions = folder / "submissions"
        submissions.mkdir(mode=0o755)
        closed = folder / "closed"
        closed.mkdir(mode=0o700)
        assert exposure(secrets, uid, [closed], ROOT) is None  # the whole machine's walk
        why = exposure(secrets, uid, [closed, submissions], ROOT, roots=[folder])
    assert why == (
        f"a worker's user can open {submissions}; close it to other users "
        f"(chmod o-rwx {submissions}) and grade again"
    )


def test_a_batch_is_not_graded_unprotected_unless_told(tmp_path: Path):
    from instructor.sandbox.protections import SandboxMode

    refused = pytest.raises(GradingRefused, match="--unprotected")
    with refused, grading_setup(ROOT, [], LIMITS, 1, SandboxMode.UNPROTECTED):
        pass
    (tmp_path / "a-student" / "tenxor").mkdir(parents=True)
    done = subprocess.run(
        [sys.executable, "-m", "instructor.cli", "grade", "--batch", str(tmp_path)]
        + ["--sandbox", SandboxMode.UNPROTECTED.value, "--course", str(ROOT)],
        capture_output=True,
        text=True,
    )
    assert done.returncode != 0 and "pass --unprotected to grade anyway" in done.stderr


def test_the_views_libraries_are_those_ldd_lists():
    """The shared libraries bound into every worker's view, found with the dynamic loader's
    own listing of each program, are exactly those ldd lists for the same programs: the
    interpreter and every extension module a worker may load."""
    programs = view_programs(interpreter_folders()[0], learner_packages())
    listed: set[str] = set()
    for at in range(0, len(programs), 64):
        done = subprocess.run(["ldd", *map(str, programs[at : at + 64])], capture_output=True,
                              text=True)  # fmt: skip
        listed |= set(listed_libraries(done.stdout))
    found = shared_libraries(programs)
    assert len(programs) > 100 and any("libc.so" in path for path in listed), programs[:5]
    assert len(found) == len(set(found)), f"listed twice: {found}"
    assert set(found) == listed, f"the loader and ldd differ on {sorted(set(found) ^ listed)}"
