"""The student release: stubs in place of solutions, instructor files left behind,
notebooks with their outputs but for the answers of predict-then-run cells, the same tree
every time, and a clear stop on bad markers."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import nbformat
import pytest

from instructor.regions import MARKER, RegionError, find_regions
from instructor.release import write_release
from tenxor.course.catalog import BY_ID, CATALOG, released_function
from tests.tooling.submissions import copy_of_reference

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.provided
STUB = re.compile(r'^(\s*)raise NotImplementedError\("Exercise (\S+): (.+) \((\S+)\)"\)$')


def tree_digest(folder: Path) -> dict[str, str]:
    return {
        path.relative_to(folder).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Path:
    """A copy of the course with a notebook whose outputs are stored: a worked example and a
    predict-then-run question."""
    copy = tmp_path_factory.mktemp("course") / "course"
    copy_of_reference(copy)
    document = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("print(2 + 2)")
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="4\n")]
    question = nbformat.v4.new_code_cell("print(3 * 3)", metadata={"tags": ["predict"]})
    question.outputs = [nbformat.v4.new_output("stream", name="stdout", text="9\n")]
    question.execution_count = 2
    document.cells = [cell, question]
    (copy / "notebooks").mkdir(exist_ok=True)
    nbformat.write(document, copy / "notebooks" / "01_storage.ipynb")
    return copy


def test_every_region_becomes_its_stub_line_at_the_region_indentation(course, tmp_path):
    release = tmp_path / "release"
    write_release(course, release)
    stubs = {}
    for item in CATALOG:
        source = (course / item.path).read_text().splitlines()
        region = next(r for r in find_regions(course / item.path) if r.exercise_id == item.id)
        lines = (release / item.path).read_text().splitlines()
        match = next(STUB.match(line) for line in lines if f"Exercise {item.id}:" in line)
        assert match.group(1) == region.indent
        assert (match.group(2), match.group(3), match.group(4)) == (
            item.id,
            item.title,
            item.notebook,
        )
        stubs[item.id] = match
        assert source[region.begin - 1].strip() == f"# BEGIN SOLUTION {item.id}"
    assert sorted(stubs) == sorted(BY_ID)
    for path in (release / "tenxor").rglob("*.py"):
        text = path.read_text()
        assert not any(MARKER.match(line) for line in text.splitlines()), path
        compile(text, str(path), "exec")


@pytest.fixture(scope="module")
def reference_release(tmp_path_factory) -> Path:
    """The student release of the course itself."""
    release = tmp_path_factory.mktemp("reference") / "release"
    write_release(ROOT, release)
    return release


@pytest.mark.parametrize("exercise", CATALOG, ids=str)
def test_a_released_function_is_shown_as_the_release_has_it(exercise, reference_release):
    shown = released_function(exercise.id)
    lines = shown.splitlines()
    assert lines[0].startswith(f"def {exercise.function}(") and '"""' in shown
    assert STUB.match(lines[-1]) and f"Exercise {exercise.id}:" in lines[-1]
    assert shown in (reference_release / exercise.path).read_text(encoding="utf-8")


def test_the_release_leaves_instructor_files_behind_and_keeps_notebook_outputs(course, tmp_path):
    release = tmp_path / "release"
    files = {path.as_posix() for path in write_release(course, release)}
    assert not any(name.startswith(("tests/hidden", "tests/tooling", ".ci")) for name in files)
    assert {"tests/conftest.py", "tests/support.py", "README.md", "pyproject.toml"} <= files
    assert {"tests/test_strides.py", "course.py", "environment.yml"} <= files
    assert not any(".venv" in name or "__pycache__" in name for name in files)
    kept = nbformat.read(release / "notebooks" / "01_storage.ipynb", as_version=4)
    assert kept.cells[0].outputs[0].text == "4\n"


def test_the_release_hides_the_answers_of_predict_then_run_cells_only(course, tmp_path):
    release = tmp_path / "release"
    write_release(course, release)
    source = nbformat.read(course / "notebooks" / "01_storage.ipynb", as_version=4)
    released = nbformat.read(release / "notebooks" / "01_storage.ipynb", as_version=4)
    assert source.cells[1].outputs and not released.cells[1].outputs
    assert released.cells[1].execution_count is None
    assert released.cells[1].source == source.cells[1].source
    assert released.cells[0] == source.cells[0]
    assert released.metadata == source.metadata
    nbformat.validate(released)


def test_releasing_twice_gives_identical_trees(course, tmp_path):
    write_release(course, tmp_path / "first")
    write_release(course, tmp_path / "second")
    assert tree_digest(tmp_path / "first") == tree_digest(tmp_path / "second")


def test_an_existing_folder_is_kept_unless_replace_is_asked(course, tmp_path):
    release = tmp_path / "release"
    write_release(course, release)
    with pytest.raises(FileExistsError, match="already exists"):
        write_release(course, release)
    (release / "stray.txt").write_text("left from before")
    write_release(course, release, replace=True)
    assert not (release / "stray.txt").exists()
    for around in (course, course.parent):  # replacing them would delete the course
        with pytest.raises(ValueError) as refused:
            write_release(course, around, replace=True)
        assert str(around) in str(refused.value)
        assert (course / "tenxor" / "course" / "catalog.py").exists()


@pytest.mark.parametrize(
    "marker, problem",
    [
        ("    # BEGIN SOLUTION 2.1\n", "BEGIN SOLUTION 2.1 inside the region of"),
        ("    # END SOLUTION 3.3\n", "END SOLUTION 3.3 without a matching BEGIN"),
        ("    # BEGIN SOLUTION 9.9\n", "unknown exercise '9.9'"),
    ],
)
def test_bad_markers_stop_the_release_naming_file_and_line(tmp_path, marker, problem):
    course = tmp_path / "course"
    copy_of_reference(course)
    strides = course / "tenxor" / "strides.py"
    lines = strides.read_text().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if "# BEGIN SOLUTION 2.2" in line) + 1
    lines.insert(at, marker)
    strides.write_text("".join(lines))
    with pytest.raises(RegionError, match=problem) as caught:
        write_release(course, tmp_path / "release")
    assert f"{strides}:{at + 1}:" in str(caught.value)
    assert not (tmp_path / "release").exists()


def test_the_released_readme_is_the_learners(course, tmp_path):
    release = tmp_path / "release"
    write_release(course, release)
    mine = (course / "README.md").read_text(encoding="utf-8")
    theirs = (release / "README.md").read_text(encoding="utf-8")
    assert "<!-- instructor -->" in mine and "tenxor-instructor verify" in mine
    for instructor_only in ("tenxor-instructor", "instructor/", "tests/hidden",
                            "ruff", "Chromium", "<!--"):  # fmt: skip
        assert instructor_only not in theirs, instructor_only
    for learner_material in ("python3 course.py lab", 'check("2.1", hint=True)', "stand-ins"):
        assert learner_material in theirs, learner_material


def test_a_release_holds_no_release_verify_or_grading_code(course, tmp_path):
    """The learner's package is the library, the diagrams and check: the instructor's package,
    its command and any module that releases, verifies or grades stay behind."""
    release = tmp_path / "release"
    files = [path.as_posix() for path in write_release(course, release)]
    assert not any(name.startswith("instructor/") for name in files)
    assert not any(name.endswith(("release.py", "verify.py", "grading.py", "regions.py"))
                   for name in files)  # fmt: skip
    imports = re.compile(r"^\s*(from|import) instructor\b", re.MULTILINE)
    for name in files:
        if name.endswith(".py"):
            assert not imports.search((release / name).read_text(encoding="utf-8")), name
    assert "tenxor-instructor" not in (release / "pyproject.toml").read_text(encoding="utf-8")
    assert "tenxor-instructor" in (course / "pyproject.toml").read_text(encoding="utf-8")
