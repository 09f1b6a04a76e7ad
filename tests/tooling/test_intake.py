"""One student's failure is that student's: whatever a submission folder holds (names of any
bytes, folders nested past any depth, FIFOs, devices, symbolic and hard links, huge and
empty modules), intake neither hangs nor fails nor reads outside it, every student gets a
result, and a well-formed submission scores exactly what the reference scores."""

from __future__ import annotations
import __future__

import compileall
import csv
import importlib.machinery
import importlib.util
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from instructor.authoring.release import solved_source, write_tree
from instructor.grading import GradingOptions, grade_batch, students_in
from instructor.grading.batch import OUTPUT_FILES, shown
from instructor.grading.intake import MAX_DEPTH, MAX_MODULE_BYTES, assemble, submission_digest
from instructor.grading.setup import JUDGE_TREE_EXCLUDED, RELEASE_TREE_EXCLUDED
from instructor.grading.spreadsheet import safe_cell
from instructor.sandbox.allowlist import GRADING, PACKAGE, WORKER_MODULES, bwrap_command, view
from tenxor.course.catalog import BY_ID
from tests.tooling.submissions import ROOT, STORAGE, complete_submission
from tests.tooling.test_grading import AS_ROOT, EXAMPLES, LIMITS

pytestmark = pytest.mark.provided

FUTURE = "from __future__ import annotations"
DEEP = 1200  # folders nested in a submission beside its modules


def deep_folders(base: Path, depth: int = DEEP) -> None:
    """`depth` folders, each in the one before: d/d/d/... (os.makedirs recurses that deep)."""
    for level in range(1, depth + 1):
        os.mkdir(base / "/".join(["d"] * level))


def remove_deep(base: Path, depth: int = DEEP) -> None:
    """Remove what deep_folders made, deepest first (shutil.rmtree recurses that deep)."""
    for level in range(depth, 0, -1):
        os.rmdir(base / "/".join(["d"] * level))


# How a submission holds tenxor/storage.py (exercise 1.1 and the rest of chapter 1), and
# whether that earns 1.1's points. The others are taken from the complete submission.
def regular(folder: Path, outside: Path) -> None:
    pass


def nested_deep(folder: Path, outside: Path) -> None:
    """The module in a tenxor/ folder as deep as intake looks."""
    target = folder / "/".join(["n"] * (MAX_DEPTH - 1)) / STORAGE
    target.parent.mkdir(parents=True)
    (folder / STORAGE).rename(target)


def nested_too_deep(folder: Path, outside: Path) -> None:
    target = folder / "/".join(["n"] * (MAX_DEPTH + 1)) / STORAGE
    target.parent.mkdir(parents=True)
    (folder / STORAGE).rename(target)


def symbolic_link(folder: Path, outside: Path) -> None:
    (folder / STORAGE).unlink()
    (folder / STORAGE).symlink_to(ROOT / STORAGE)


def linked_folder(folder: Path, outside: Path) -> None:
    """tenxor/ itself a link to the instructor's package."""
    shutil.rmtree(folder / "tenxor")
    (folder / "tenxor").symlink_to(ROOT / "tenxor")


def hard_link(folder: Path, outside: Path) -> None:
    (folder / STORAGE).unlink()
    os.link(outside, folder / STORAGE)


def fifo(folder: Path, outside: Path) -> None:
    (folder / STORAGE).unlink()
    os.mkfifo(folder / STORAGE)


def device(folder: Path, outside: Path) -> None:
    """/dev/zero's device number: a reader that trusted it would read zeros for ever."""
    (folder / STORAGE).unlink()
    os.mknod(folder / STORAGE, stat.S_IFCHR | 0o600, os.makedev(1, 5))


def huge(folder: Path, outside: Path) -> None:
    with (folder / STORAGE).open("ab") as stream:
        stream.write(b"#" * MAX_MODULE_BYTES + b"\n")


def empty(folder: Path, outside: Path) -> None:
    (folder / STORAGE).write_bytes(b"")


def deep_beside(folder: Path, outside: Path) -> None:
    deep_folders(folder)


EARNS = {regular: True, nested_deep: True, deep_beside: True, nested_too_deep: False,
         symbolic_link: False, linked_folder: False, hard_link: False, fifo: False,
         huge: False, empty: False, **({device: False} if AS_ROOT else {})}  # fmt: skip

names = st.binary(min_size=1, max_size=10).filter(
    lambda name: (
        b"/" not in name
        and b"\0" not in name
        and not name.startswith(b".")
        and os.fsdecode(name) not in OUTPUT_FILES
    )
)
students = st.dictionaries(names, st.sampled_from(list(EARNS)), min_size=2, max_size=4)


def build(base: Path, chosen: dict[bytes, object]) -> tuple[dict[str, Path], dict[str, bool]]:
    """The batch folder's submissions and whether each earns 1.1's points."""
    outside = base / "elsewhere.py"
    outside.write_bytes((ROOT / STORAGE).read_bytes())
    earns = {}
    for raw, kind in chosen.items():
        folder = base / "batch" / os.fsdecode(raw)
        complete_submission(folder)
        kind(folder, outside)
        earns[os.fsdecode(raw)] = EARNS[kind]
    return students_in(base / "batch"), earns


@settings(max_examples=3, deadline=None, suppress_health_check=list(HealthCheck))
@given(chosen=students)
def test_every_student_gets_a_result_and_well_formed_ones_score_the_reference(chosen):
    base = Path(tempfile.mkdtemp(prefix="tenxor-intake-"))
    try:
        submissions, earns = build(base, chosen)
        assert sorted(submissions) == sorted(earns)
        output = base / "grades"
        said: list[str] = []
        grade_batch(
            ROOT,
            submissions,
            output,
            GradingOptions(selection=["1.1"], limits=LIMITS, jobs=2, profile=EXAMPLES),
            report=said.append,
        )
        points = BY_ID["1.1"].points
        with (output / "gradebook.csv").open(encoding="utf-8", newline="") as stream:
            rows = {row["student"]: row for row in csv.DictReader(stream)}
        for student, earned in earns.items():
            results = output / student / "results.json"
            assert results.is_file() and (output / student / "report.html").is_file(), student
            row = rows[safe_cell(shown(student))]
            assert float(row["total"]) == (points if earned else 0), (student, row, said)
    finally:
        for folder in (base / "batch").glob("*"):
            if (folder / "d").is_dir() and not (folder / "d").is_symlink():
                remove_deep(folder)
        shutil.rmtree(base)


@pytest.mark.parametrize("kind", list(EARNS), ids=[kind.__name__ for kind in EARNS])
def test_intake_takes_regular_files_alone_and_says_why_not(tmp_path: Path, kind):
    """Each kind alone, with the reason a student reads; the fingerprint never fails."""
    submissions, earns = build(tmp_path, {b"student": kind})
    folder = submissions["student"]
    assembly = assemble(ROOT, folder, tmp_path / "package")
    assert (STORAGE in assembly.taken) == (earns["student"] or kind is empty), assembly
    if not earns["student"]:
        why = assembly.problem_of(STORAGE)
        words = {symbolic_link: "symbolic link", linked_folder: "is missing",
                 hard_link: "hard link", fifo: "FIFO", device: "character device",
                 huge: "larger than", nested_too_deep: "is missing", empty: None}  # fmt: skip
        if words[kind]:
            assert why and words[kind] in why, why
    assert len(submission_digest(folder)) == 64
    if kind is deep_beside:
        remove_deep(folder)


def test_a_package_runs_each_submitted_module_and_the_releases_bytecode_of_the_others(
    tmp_path: Path,
):
    """A submitted module the size of its stub, written in the same second as the release's
    bytecode (which Python checks against a source's time and size): the package runs the
    submitted module, from bytecode intake compiled as importing compiles it (no future
    import of intake's own leaks into it), and keeps the release's for the others; set aside,
    the module's stub runs again, not the submitted module's bytecode."""
    release = tmp_path / "release"
    write_tree(ROOT, release, RELEASE_TREE_EXCLUDED)
    compileall.compile_dir(release / "tenxor", quiet=2)
    stub = (release / STORAGE).read_text(encoding="utf-8")
    submitted = stub.replace("Chapter 1: storage.", "CHAPTER 1: STORAGE.", 1)
    submitted = submitted.replace(FUTURE, "import __future__  # no postponing", 1)
    assert len(submitted) == len(stub) and submitted != stub
    (tmp_path / "submission" / "tenxor").mkdir(parents=True)
    (tmp_path / "submission" / STORAGE).write_text(submitted, encoding="utf-8")
    package = tmp_path / "package"
    assembly = assemble(release, tmp_path / "submission", package)
    assert assembly.taken == [STORAGE], assembly
    for module in (package / "tenxor").glob("*.py"):
        kept = module.name != "storage.py"
        cached = Path(importlib.util.cache_from_source(str(module)))
        released = release / "tenxor" / "__pycache__" / cached.name
        assert (cached.read_bytes() == released.read_bytes()) == kept, module.name
    loader = importlib.machinery.SourceFileLoader("tenxor.storage", str(package / STORAGE))
    loader.source_to_code = lambda *arguments: pytest.fail("storage.py was compiled again")
    code = loader.get_code("tenxor.storage")
    assert code.co_filename == str(package / STORAGE)
    assert not code.co_flags & __future__.annotations.compiler_flag, "intake's future leaked"
    assert code.co_code == compile(submitted, "storage.py", "exec", dont_inherit=True).co_code
    assert docstring_run(package).startswith("CHAPTER 1: STORAGE.")
    written = (package / STORAGE).stat()
    assembly.set_aside(["it raised at import"])  # the stub put back, as if in the same second
    os.utime(package / STORAGE, ns=(written.st_atime_ns, written.st_mtime_ns))
    assert docstring_run(package).startswith("Chapter 1: storage."), "the set-aside module ran"


def docstring_run(package: Path) -> str:
    """What tenxor.storage's docstring is when the package at `package` is imported."""
    shown = subprocess.run(
        [sys.executable, "-B", "-c", "import tenxor.storage; print(tenxor.storage.__doc__)"],
        cwd=package, capture_output=True, text=True,
    )  # fmt: skip
    return shown.stdout + shown.stderr


# Imports, in a worker's view, every module a worker runs of its own and of the package.
IMPORT_ALL = f"""
import importlib, sys
sys.path[:0] = [{str(GRADING)!r}, {str(PACKAGE)!r}]
for module in {[path.removesuffix(".py").replace("/", ".") for path in WORKER_MODULES]!r}:
    importlib.import_module(module.removesuffix(".__init__"))
importlib.import_module("tenxor")
"""


@pytest.mark.skipif(not AS_ROOT, reason="bubblewrap builds the worker's view as root")
def test_a_worker_compiles_none_of_its_modules_or_the_packages(tmp_path: Path):
    """In the view a batch's workers run in, every module of the worker's own and of the
    submission's package is run from bytecode compiled once for the batch (grading's set-up
    compiles the judges' tree, intake the submitted modules): `python -v` names a file of
    bytecode as the code of each, and no source."""
    judges, release = tmp_path / "judge", tmp_path / "release"
    write_tree(ROOT, judges, JUDGE_TREE_EXCLUDED, rewrite=solved_source)
    write_tree(ROOT, release, RELEASE_TREE_EXCLUDED)
    for package in (judges / "instructor", release / "tenxor"):
        compileall.compile_dir(package, quiet=2)
    complete_submission(tmp_path / "submission")
    assemble(release, tmp_path / "submission", tmp_path / "package")
    seen = view(str(tmp_path / "package"), str(judges))
    command = [*bwrap_command(seen, 16), seen.interpreter, "-I", "-B", "-v", "-c", IMPORT_ALL]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    code_from = re.findall(r"^# code object from '?(/sandbox/[^'\n]+)'?$", done.stderr, re.M)
    ours = {*WORKER_MODULES, *(f"tenxor/{p.name}" for p in (release / "tenxor").glob("*.py"))}
    wanted = {f"{GRADING if m in WORKER_MODULES else PACKAGE}/{m}" for m in ours}
    cached = {importlib.util.cache_from_source(module) for module in wanted}
    assert set(code_from) == cached, f"compiled in the worker: {sorted(set(code_from) - cached)}"


def test_a_student_folder_that_is_a_link_is_refused_and_the_batch_goes_on(tmp_path: Path):
    complete_submission(tmp_path / "batch" / "complete")
    (tmp_path / "batch" / "linked").symlink_to(tmp_path / "batch" / "complete")
    said: list[str] = []
    output = tmp_path / "grades"
    grade_batch(
        ROOT,
        students_in(tmp_path / "batch"),
        output,
        GradingOptions(selection=["1.1"], limits=LIMITS, profile=EXAMPLES),
        report=said.append,
    )
    assert (output / "complete" / "results.json").is_file()
    assert not (output / "linked").exists()
    assert [line for line in said if line.startswith("Not graded: linked") and "link" in line]
