"""The student release: stubs in place of solutions, instructor files left behind,
notebooks with their outputs but for the answers of predict-then-run cells and the reports of
check cells, a course.py and README that speak only of what a learner runs, the same tree
every time, and a clear stop on bad markers. The solutions release: the same, with every
solution filled in and every test passing, and a README that speaks to its reader."""

from __future__ import annotations

import compileall
import hashlib
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import nbformat
import pytest

from instructor.authoring.regions import MARKER, RegionError, find_regions
from instructor.authoring.release import (
    LOCAL_ONLY,
    NOT_NEEDED_FOR_TESTS,
    PREDICT_TAG,
    SectionError,
    course_files,
    is_check_cell,
    write_release,
    write_solutions,
    write_tree,
)
from instructor.cli import main as instructor_main
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
    """A copy of the course with a notebook whose outputs are stored: a worked example, a
    predict-then-run question and a check cell."""
    copy = tmp_path_factory.mktemp("course") / "course"
    copy_of_reference(copy)
    document = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("print(2 + 2)")
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="4\n")]
    question = nbformat.v4.new_code_cell("print(3 * 3)", metadata={"tags": ["predict"]})
    question.outputs = [nbformat.v4.new_output("stream", name="stdout", text="9\n")]
    question.execution_count = 2
    checking = nbformat.v4.new_code_cell('check("1.1")')  # found by its call, tagged or not
    report = "Exercise 1.1: ...\n\n16 of 16 tests passed: done (2 points).\n"
    checking.outputs = [nbformat.v4.new_output("stream", name="stdout", text=report)]
    checking.execution_count = 3
    document.cells = [cell, question, checking]
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


def test_the_release_hides_the_answers_of_predict_then_run_cells_and_check_reports_only(
    course, tmp_path
):
    release = tmp_path / "release"
    write_release(course, release)
    source = nbformat.read(course / "notebooks" / "01_storage.ipynb", as_version=4)
    released = nbformat.read(release / "notebooks" / "01_storage.ipynb", as_version=4)
    for hidden in (1, 2):  # the answer to a prediction, the report of a check cell
        assert source.cells[hidden].outputs and not released.cells[hidden].outputs
        assert source.cells[hidden].execution_count is not None
        assert released.cells[hidden].execution_count is None
        assert released.cells[hidden].source == source.cells[hidden].source
        assert released.cells[hidden].metadata == source.cells[hidden].metadata
    assert released.cells[0] == source.cells[0]
    assert released.metadata == source.metadata
    nbformat.validate(released)


def test_every_check_cell_of_the_course_is_released_without_its_report(reference_release):
    """The instructor's notebooks keep the reports of their check cells; the release ships
    each check cell empty, so that no verdict shows before the learner runs it."""
    for notebook in sorted((ROOT / "notebooks").glob("*.ipynb")):
        mine = nbformat.read(notebook, as_version=4)
        theirs = nbformat.read(reference_release / "notebooks" / notebook.name, as_version=4)
        assert [cell.source for cell in theirs.cells] == [cell.source for cell in mine.cells]
        checks = [i for i, cell in enumerate(mine.cells) if is_check_cell(cell)]
        for i in checks:
            assert mine.cells[i].outputs, f"{notebook.name}: cell {i} has no stored report"
            assert theirs.cells[i].outputs == [], f"{notebook.name}: cell {i} keeps its report"
            assert theirs.cells[i].execution_count is None, f"{notebook.name}: cell {i}"
            assert theirs.cells[i].metadata == mine.cells[i].metadata
        assert len(checks) >= sum(item.notebook.endswith(notebook.name) for item in CATALOG)


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


# What a learner never runs, and so never reads of: the instructor's command and package, the
# gates, hidden tests, grading and its exports, the linter, nbval, the browser tests, markers.
INSTRUCTOR_ONLY_WORDS = re.compile(
    r"tenxor-instructor|instructor|verify|\bgates?\b|hidden|\bgrade\b|gradescope|gradebook|"
    r"autograder|judge|chromium|\bruff\b|nbval|<!--|# <",
    re.IGNORECASE,
)


def instructor_words(text: str) -> list[str]:
    """The instructor-only words in a text, each once, in order."""
    return list(dict.fromkeys(found.lower() for found in INSTRUCTOR_ONLY_WORDS.findall(text)))


def test_the_released_readme_is_the_learners(course, tmp_path):
    release = tmp_path / "release"
    write_release(course, release)
    mine = (course / "README.md").read_text(encoding="utf-8")
    theirs = (release / "README.md").read_text(encoding="utf-8")
    assert "<!-- instructor -->" in mine and "tenxor-instructor verify" in mine
    assert instructor_words(theirs) == [], instructor_words(theirs)
    for instructor_only in ("instructor/", "tests/hidden", "tests/tooling", ".ci"):
        assert instructor_only not in theirs, instructor_only
    for learner_material in ("python3 course.py lab", "python3 course.py test",
                             'check("2.1", hint=True)', "check()", "stand-ins"):  # fmt: skip
        assert learner_material in theirs, learner_material


def marked_lines(text: str, begin: str, end: str) -> list[str]:
    """The lines of `text` inside the sections between `begin` and `end` lines, but blanks."""
    inside, found = False, []
    for line in text.splitlines():
        if line.strip() in (begin, end):
            inside = line.strip() == begin
        elif inside and line.strip():
            found.append(line)
    return found


def test_the_solutions_readme_speaks_to_a_reader_of_solutions_the_releases_to_a_learner(
    course, tmp_path
):
    """The student release's README tells the learner about the NotImplementedError stubs
    they replace; the solutions release's has no stub to speak of and says how to run the
    tests against the solutions. Each keeps its own marked section of the course's README and
    none of the other's, without marker lines or instructor words."""
    write_release(course, tmp_path / "release")
    write_solutions(course, tmp_path / "solutions")
    mine = (course / "README.md").read_text(encoding="utf-8")
    learner = (tmp_path / "release" / "README.md").read_text(encoding="utf-8")
    reader = (tmp_path / "solutions" / "README.md").read_text(encoding="utf-8")
    assert "NotImplementedError" in learner, "the student release's README names no stub"
    stubs = [line for line in reader.splitlines() if "NotImplementedError" in line]
    assert stubs == [], f"the solutions README speaks of stubs to replace: {stubs}"
    for command in ("python3 course.py test", 'check("2.1")'):
        assert command in reader, f"the solutions README does not say to run {command}"
    for name, text in (("student", learner), ("solutions", reader)):
        assert instructor_words(text) == [], (name, instructor_words(text))
    own = {
        "student": marked_lines(mine, "<!-- student release -->", "<!-- /student release -->"),
        "solutions": marked_lines(
            mine, "<!-- solutions release -->", "<!-- /solutions release -->"
        ),
    }
    once = Counter(mine.splitlines())  # a line of a section found elsewhere too may be kept
    for name, text, other in (("student", learner, "solutions"), ("solutions", reader, "student")):
        lines = set(text.splitlines())
        assert own[name] and set(own[name]) <= lines, f"the {name} README lacks its section"
        kept = [line for line in own[other] if line in lines and once[line] == 1]
        assert kept == [], f"the {name} README keeps the {other} release's lines {kept}"


def help_of(course_py: Path) -> str:
    """What `python3 course.py` prints without a command (its help), from its own folder."""
    done = subprocess.run(
        [sys.executable, course_py.name], cwd=course_py.parent, capture_output=True, text=True
    )
    assert done.returncode == 2, done.stdout + done.stderr
    return done.stdout


def test_course_py_is_the_learners_alone_and_released_as_it_is(course, tmp_path):
    """course.py speaks only of what a learner runs, in both trees: the release holds it
    byte for byte, and neither its help nor its code names an instructor's tool (the
    instructor's test run is instructor.ci)."""
    release = tmp_path / "release"
    write_release(course, release)
    mine, theirs = course / "course.py", release / "course.py"
    assert theirs.read_bytes() == mine.read_bytes()
    text = mine.read_text(encoding="utf-8")
    assert instructor_words(help_of(mine)) == [], help_of(mine)
    assert instructor_words(text) == [], instructor_words(text)
    for learner_material in ("course.py lab", "course.py test", "course.py bench",
                             'check("2.1")', "hint=True", "check()", "tenxor check"):  # fmt: skip
        assert learner_material in help_of(theirs), learner_material


@pytest.mark.parametrize(
    "edit, problem",
    [
        (lambda text: "".join(text.rsplit("<!-- /instructor -->\n", 1)), "is never closed"),
        (lambda text: text.replace("<!-- instructor -->\n", "", 1), "without a matching"),
        (lambda text: "<!-- instructor -->\n" + text, "inside the section of line 1"),
        (
            lambda text: text.replace("<!-- /solutions release -->\n", ""),
            r"<!-- instructor --> inside the section of line \d+",  # the next section
        ),
        (
            lambda text: text.replace("<!-- /solutions release -->", "<!-- /student release -->"),
            "without a matching <!-- student release -->",
        ),
    ],
    ids=[
        "never-closed",
        "closed-but-not-opened",
        "nested",
        "solutions-left-open",
        "solutions-closed-as-student",
    ],  # fmt: skip
)
def test_an_instructor_section_left_open_stops_the_release_naming_file_and_line(
    tmp_path, edit, problem
):
    course = tmp_path / "course"
    copy_of_reference(course)
    readme = course / "README.md"
    readme.write_text(edit(readme.read_text(encoding="utf-8")), encoding="utf-8")
    with pytest.raises(SectionError, match=problem) as caught:
        write_release(course, tmp_path / "release")
    assert re.search(r"README\.md:\d+: ", str(caught.value)), caught.value
    assert not (tmp_path / "release").exists()


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


# ---------------------------------------------------------------------------------------------
# The solutions release, for after the deadline
# ---------------------------------------------------------------------------------------------

CHECK_CALL = re.compile(r'check\("([^"]+)"\)')
# Runs check() on the exercises named by its arguments in the course folder it runs in, after
# making sure that it imported that folder's tenxor.
CHECK_IN_TREE = """\
import sys
from pathlib import Path
import tenxor
from tenxor.course.check import check_exercise
assert Path(tenxor.__file__).resolve().is_relative_to(Path.cwd().resolve()), tenxor.__file__
for exercise_id in sys.argv[1:]:
    check_exercise(exercise_id, Path.cwd())
"""
REPORT_END = re.compile(r"^(\d+) of (\d+) tests passed: (.+) \(\d+ points?\)\.$", re.MULTILINE)


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory) -> Path:
    """A copy of the course itself, which both releases below are written from."""
    return copy_of_reference(tmp_path_factory.mktemp("snapshot") / "course")


@pytest.fixture(scope="module")
def solutions(snapshot) -> Path:
    """The solutions release of the course."""
    write_solutions(snapshot, snapshot.parent / "solutions")
    return snapshot.parent / "solutions"


def checked_exercises(notebook: Path) -> list[str]:
    """The exercises that the check cells of a notebook check, in order."""
    cells = nbformat.read(notebook, as_version=4).cells
    return [
        found for cell in cells if is_check_cell(cell) for found in CHECK_CALL.findall(cell.source)
    ]


def test_the_solutions_release_fills_in_every_region_and_leaves_out_what_the_release_does(
    snapshot, solutions
):
    reference_release = snapshot.parent / "release"
    write_release(snapshot, reference_release)
    files = [path.as_posix() for path in course_files(solutions, LOCAL_ONLY)]  # runs add caches
    assert files == [path.as_posix() for path in course_files(reference_release, LOCAL_ONLY)]
    assert not any(
        name.startswith(("instructor", "tests/hidden", "tests/tooling", ".ci")) for name in files
    )
    for path in solutions.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert 'raise NotImplementedError("Exercise' not in text, path
        assert not any(MARKER.match(line) for line in text.splitlines()), path
        compile(text, str(path), "exec")
    for item in CATALOG:  # the reference code, line for line, where the region was
        region = next(r for r in find_regions(snapshot / item.path) if r.exercise_id == item.id)
        reference = (snapshot / item.path).read_text(encoding="utf-8").splitlines(keepends=True)
        body = "".join(reference[region.begin : region.end - 1])
        assert body and body in (solutions / item.path).read_text(encoding="utf-8"), item.id
    for name in files:  # everything but the exercise modules, notebooks and README as released
        if not name.startswith(("tenxor/", "notebooks/")) and name != "README.md":
            released = (reference_release / name).read_bytes()
            assert (solutions / name).read_bytes() == released, name


def test_the_solutions_notebooks_keep_predicted_answers_and_leave_check_cells_empty(
    snapshot, solutions
):
    for notebook in sorted((snapshot / "notebooks").glob("*.ipynb")):
        mine = nbformat.read(notebook, as_version=4)
        theirs = nbformat.read(solutions / "notebooks" / notebook.name, as_version=4)
        assert theirs.metadata == mine.metadata and len(theirs.cells) == len(mine.cells)
        for i, (kept, source) in enumerate(zip(theirs.cells, mine.cells)):
            if is_check_cell(source):
                assert kept.outputs == [] and kept.execution_count is None, (notebook.name, i)
                assert kept.source == source.source and kept.metadata == source.metadata
            else:
                assert kept == source, (notebook.name, i)
        predicted = [cell for cell in theirs.cells if PREDICT_TAG in cell.metadata.get("tags", [])]
        assert all(cell.outputs for cell in predicted), notebook.name


def test_every_module_of_the_solutions_release_is_the_reference_without_its_markers(
    snapshot, solutions
):
    """Line for line the instructor's modules, which verify's reference gate runs every test
    on: so every public test passes in the solutions release as it does there (and the check
    test below runs some of them in it)."""
    for path in sorted((snapshot / "tenxor").rglob("*.py")):
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        kept = "".join(line for line in lines if not MARKER.match(line))
        solved = solutions / path.relative_to(snapshot)
        assert solved.read_text(encoding="utf-8") == kept, path.relative_to(snapshot)


def test_check_says_done_in_the_solutions_release(solutions):
    """Every exercise has a check cell; the last one of each notebook (the exercise that
    depends on most of its chapter) says done when it is run."""
    checked = {
        notebook.name: checked_exercises(notebook)
        for notebook in sorted((solutions / "notebooks").glob("*.ipynb"))
    }
    assert sorted(item for ids in checked.values() for item in ids) == sorted(BY_ID)
    sample = [ids[-1] for ids in checked.values() if ids]
    done = subprocess.run(
        [sys.executable, "-c", CHECK_IN_TREE, *sample],
        cwd=solutions,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    reports = REPORT_END.findall(done.stdout)
    assert len(reports) == len(sample) >= 6, done.stdout
    for exercise_id, (passed, total, state) in zip(sample, reports):
        assert state == "done" and passed == total != "0", (exercise_id, done.stdout)


def test_the_solutions_release_command_writes_the_same_tree_every_time(course, tmp_path):
    write_solutions(course, tmp_path / "first")
    command = ["release", "--solutions", str(tmp_path / "second"), "--course", str(course)]
    assert instructor_main(command) == 0
    assert tree_digest(tmp_path / "first") == tree_digest(tmp_path / "second")
    assert instructor_main(command) == 2  # the folder exists
    (tmp_path / "second" / "stray.txt").write_text("left from before")
    assert instructor_main([*command, "--replace"]) == 0
    assert tree_digest(tmp_path / "first") == tree_digest(tmp_path / "second")
    with pytest.raises(FileExistsError, match="already exists"):
        write_solutions(course, tmp_path / "first")


def test_course_files_lists_every_file_outside_the_excluded_entries_in_path_order(tmp_path):
    """Excluded folders (by name anywhere, or by path from the root) and excluded files are left
    out with everything inside them; the rest comes sorted part by part, as paths sort."""
    for name in [
        ".venv/lib/site.py", "tenxor/core.py", "tenxor/__pycache__/core.pyc", "tenxor-notes.md",
        "tests/hidden/test_x.py", "tests/test_x.py", "tests/hidden.txt", "a/b/build/c.py",
        "README.md", "x.egg-info/PKG-INFO",
    ]:  # fmt: skip
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(name)
    excluded = (".venv", "__pycache__", "build", "*.egg-info", "tests/hidden")
    found = [path.as_posix() for path in course_files(tmp_path, excluded)]
    assert found == ["README.md", "tenxor/core.py", "tenxor-notes.md", "tests/hidden.txt",
                     "tests/test_x.py"]  # fmt: skip


def compiled_from(module: Path) -> list[Path]:
    """The __pycache__ files compiled from `module` (Python's, and pytest's for a test)."""
    return sorted((module.parent / "__pycache__").glob(f"{module.stem}.*"))


def bytecode_of(module: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in compiled_from(module)}


def bytecode_times(module: Path) -> dict[str, int]:
    return {path.name: path.stat().st_mtime_ns for path in compiled_from(module)}


def collect(tree: Path, test_file: str) -> None:
    """pytest's collection of one test file in `tree`, writing bytecode where it has none."""
    environment = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    command = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
               test_file]  # fmt: skip
    done = subprocess.run(command, cwd=tree, env=environment, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_tree_keeps_bytecode_only_of_the_modules_it_copies_as_they_are(tmp_path):
    """write_tree(bytecode=True), as grading writes its trees: a module copied as it is keeps
    the bytecode Python and pytest compiled it to, and they take it as theirs; a module it
    rewrites (an exercise stubbed) gets none of the course's, nor does one edited later."""
    course = tmp_path / "course"
    write_tree(ROOT, course, NOT_NEEDED_FOR_TESTS, rewrite=lambda path: path.read_text())
    compileall.compile_dir(course / "tenxor", quiet=1)
    collect(course, "tests/test_views.py")
    kept, stubbed, test = "tenxor/core.py", BY_ID["2.1"].path, "tests/test_views.py"
    assert bytecode_of(course / kept) and bytecode_of(course / stubbed), "nothing compiled"
    assert any("pytest" in name for name in bytecode_of(course / test)), "no rewritten test"

    tree = tmp_path / "tree"
    write_tree(course, tree, NOT_NEEDED_FOR_TESTS, bytecode=True)  # every exercise stubbed
    assert bytecode_of(tree / kept) == bytecode_of(course / kept)
    assert bytecode_of(tree / test) == bytecode_of(course / test)
    assert bytecode_of(tree / stubbed) == {}, "the course's bytecode came with a rewritten module"

    carried = {**bytecode_times(tree / kept), **bytecode_times(tree / test)}
    compileall.compile_dir(tree / "tenxor", quiet=1)
    collect(tree, test)
    assert {**bytecode_times(tree / kept), **bytecode_times(tree / test)} == carried, (
        "Python or pytest compiled again a module whose bytecode came along"
    )
    assert bytecode_of(tree / stubbed) != bytecode_of(course / stubbed) != {}

    with (tree / kept).open("a", encoding="utf-8") as module:
        module.write("\nEDITED = True\n")
    compileall.compile_dir(tree / "tenxor", quiet=1)
    assert bytecode_of(tree / kept) != bytecode_of(course / kept), "an edit was not compiled"
