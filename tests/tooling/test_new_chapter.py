"""A new chapter is a small change: in a copy of the course, a throwaway chapter 7 (one module
with two exercises, a public and a hidden test file, a notebook with check cells, and catalog
rows whose points come from other exercises) is added by those files and catalog rows alone.
Release, every gate of verify, check and grading then handle it with no other file changed.

Every step runs the copy's own code (its catalog names chapter 7; this process's does not).
"""

from __future__ import annotations

import csv
import filecmp
import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from instructor.authoring.release import LOCAL_ONLY, course_files
from tests.tooling.submissions import ROOT, copy_of_reference

pytestmark = pytest.mark.provided

MODULE = "tenxor/norms.py"
PUBLIC_TESTS = "tests/test_norms.py"
HIDDEN_TESTS = "tests/hidden/test_norms_hidden.py"
NOTEBOOK = "notebooks/07_norms.ipynb"
CATALOG = "tenxor/course/catalog.py"
HINTS = "tenxor/course/hints.py"
PLANTED = "tests/tooling/planted.py"
WELCOME = "notebooks/00_welcome.ipynb"  # its table of chapters comes from the catalog

NORMS = '''\
"""Chapter 7: norms. The length of a vector, from the sum of its squares."""

from __future__ import annotations

import math


def sum_of_squares(values: list[float]) -> float:
    """The sum of the squares of `values` (0.0 for no values).

    Raises TypeError for a value that is not a number, naming it, for example:
    `values must be numbers, got 'a'`.
    """
    # BEGIN SOLUTION 7.1
    total = 0.0
    for value in values:
        if not isinstance(value, (int, float)):
            raise TypeError(f"values must be numbers, got {value!r}")
        total += value * value
    return total
    # END SOLUTION 7.1


def euclidean_norm(values: list[float]) -> float:
    """The length of `values` as a vector: the square root of its sum of squares."""
    # BEGIN SOLUTION 7.2
    return math.sqrt(sum_of_squares(values))
    # END SOLUTION 7.2
'''

TESTS = '''\
"""Chapter 7: norms, against NumPy."""

import numpy as np
import pytest

from tenxor.norms import euclidean_norm, sum_of_squares
from tests.support import expect, raises_naming

VECTORS = [[], [3.0, 4.0], [-1.0, 2.0, -2.0], [0.5] * 9]


@pytest.mark.exercise("7.1")
@pytest.mark.parametrize("values", VECTORS)
def test_sum_of_squares_matches_numpy(values):
    expected = float(np.sum(np.square(np.array(values, dtype=float))))
    expect(f"sum_of_squares({values})", sum_of_squares(values), expected)


@pytest.mark.exercise("7.1")
def test_a_value_that_is_not_a_number_is_named():
    with raises_naming(TypeError, "'a'"):
        sum_of_squares([1.0, "a"])


@pytest.mark.exercise("7.2")
@pytest.mark.parametrize("values", VECTORS)
def test_euclidean_norm_matches_numpy(values):
    expected = float(np.linalg.norm(np.array(values, dtype=float)))
    expect(f"euclidean_norm({values})", euclidean_norm(values), expected)
'''

HIDDEN = '''\
"""Chapter 7, hidden: integers and long vectors."""

import numpy as np
import pytest

from tenxor.norms import euclidean_norm, sum_of_squares
from tests.support import expect


@pytest.mark.exercise("7.1")
def test_sum_of_squares_of_integers():
    expect("sum_of_squares([1, 2, 3])", sum_of_squares([1, 2, 3]), 14)


@pytest.mark.exercise("7.2")
def test_norm_of_a_long_vector():
    values = [float(v) for v in range(100)]
    expect("euclidean_norm(range(100))", euclidean_norm(values), float(np.linalg.norm(values)))
'''

CHECK = ["nbval-ignore-output"]  # a check cell: its report names and counts the tests
PREDICT = ["predict"]  # a predict-then-run cell
CELLS = [
    ("markdown", "# Chapter 7: norms\nHow long is a vector?", []),
    ("code", "from tenxor.course import check\nfrom tenxor import norms", []),
    ("code", 'check("7.1")', CHECK),
    ("code", "norms.sum_of_squares([3.0, 4.0])", []),
    ("code", 'check("7.2")', CHECK),
    ("code", "norms.euclidean_norm([3.0, 4.0])", []),
    ("markdown", "## Predict, then run\n\n**1.** What is the norm of `[0.0, 0.0]`?", []),
    ("code", "norms.euclidean_norm([0.0, 0.0])", PREDICT),
    ("markdown", "**2.** Does the sign of a value change the norm of `[-3.0, 4.0]`?", []),
    ("code", "norms.euclidean_norm([-3.0, 4.0])", PREDICT),
]  # fmt: skip

# Two hints for each exercise, in tenxor/course/hints.py.
HINTS_EDIT = (
    "HINTS: dict[str, tuple[str, ...]] = {\n",
    "HINTS: dict[str, tuple[str, ...]] = {\n"
    '    "7.1": ("Start from zero and add each value times itself.",\n'
    '            "Refuse a value that is not an int or a float before you square it."),\n'
    '    "7.2": ("The length of a vector is the square root of something you have already.",\n'
    '            "math.sqrt takes the sum of squares from exercise 7.1."),\n',
)
# A plausible wrong answer for each exercise, in tests/tooling/planted.py.
PLANTED_EDIT = (
    "PLANTED: tuple[Planted, ...] = (\n",
    "PLANTED: tuple[Planted, ...] = (\n"
    '    Planted("7.1", "total += value * value", "total += value", "adds the values, not their '
    'squares", False),\n'
    '    Planted("7.2", "math.sqrt(sum_of_squares(values))", "sum_of_squares(values)", '
    '"forgets the square root", False),\n',
)

# Catalog rows: chapter 7 and its exercises, which take their two points from 1.2 and 3.1.
CATALOG_EDITS = [
    (
        '("tenxor.graph_attention.GATv2", "tenxor.graph_attention.EdgeList")),\n',
        '("tenxor.graph_attention.GATv2", "tenxor.graph_attention.EdgeList")),\n'
        f'    Chapter(7, "{NOTEBOOK}", ("tenxor.norms",), ("{PUBLIC_TESTS}",),\n'
        f'            ("{HIDDEN_TESTS}",)),\n',
    ),
    (
        '("1.2", "Round a float32 to bfloat16", "round_to_bfloat16", 3, []),',
        '("1.2", "Round a float32 to bfloat16", "round_to_bfloat16", 2, []),',
    ),
    (
        '("3.1", "Infer the -1 in a shape", "infer_shape", 3, []),',
        '("3.1", "Infer the -1 in a shape", "infer_shape", 2, []),',
    ),
    (
        ")  # fmt: skip\n\nBY_ID",
        '    + _exercises(\n        7,\n        "tenxor.norms",\n'
        '        ("7.1", "Sum of squares", "sum_of_squares", 1, []),\n'
        '        ("7.2", "Euclidean norm", "euclidean_norm", 1, ["7.1"]),\n'
        "    )\n)  # fmt: skip\n\nBY_ID",
    ),
]  # fmt: skip


# The tooling's tests that list chapters, exercises or notebooks, run with the chapter added
# (the two of test_catalog.py that run every exercise's tests are verify's catalog gate).
GUARDS = [f"tests/tooling/test_{name}.py"
          for name in ("layers", "catalog", "hints", "notebooks", "planted_answers")]  # fmt: skip
NOT_GUARDS = (
    "not exercise_option_selects and not every_exercise_has_tests"
    " and (not report_of_a_planted_answer or 7.1 or 7.2)"  # the new chapter's own
)


def run_again(course: Path, notebook: str) -> None:
    """Run `notebook` of `course` top to bottom, as a maintainer does, keeping its outputs:
    its kernel imports that course's tenxor."""
    script = (
        "import sys, nbformat\nfrom nbclient import NotebookClient\n"
        "document = nbformat.read(sys.argv[1], as_version=4)\n"
        "NotebookClient(document, timeout=600, resources={'metadata': {'path': 'notebooks'}})"
        ".execute()\nnbformat.write(document, sys.argv[1])\n"
    )
    done = run_in(course, "-c", script, notebook)
    assert done.returncode == 0, done.stdout + done.stderr


def add_chapter_7(course: Path) -> None:
    """Add chapter 7 to the course at `course` as README says: its module, public and
    hidden tests, notebook, catalog rows, hints and planted answers, and the welcome
    notebook run again."""
    for relative, text in ((MODULE, NORMS), (PUBLIC_TESTS, TESTS), (HIDDEN_TESTS, HIDDEN)):
        (course / relative).write_text(text, encoding="utf-8")
    document = nbformat.v4.new_notebook()
    document.cells = [
        (nbformat.v4.new_code_cell if kind == "code" else nbformat.v4.new_markdown_cell)(
            source, metadata={"tags": tags} if tags else {}
        )
        for kind, source, tags in CELLS
    ]
    nbformat.write(document, course / NOTEBOOK)
    catalog = (course / CATALOG).read_text(encoding="utf-8")
    for old, new in CATALOG_EDITS:
        assert catalog.count(old) == 1, f"the catalog no longer holds {old!r} once"
        catalog = catalog.replace(old, new)
    (course / CATALOG).write_text(catalog, encoding="utf-8")
    for relative, (old, new) in ((HINTS, HINTS_EDIT), (PLANTED, PLANTED_EDIT)):
        text = (course / relative).read_text(encoding="utf-8")
        assert text.count(old) == 1, f"{relative} no longer holds {old!r} once"
        (course / relative).write_text(text.replace(old, new), encoding="utf-8")
    for notebook in (NOTEBOOK, WELCOME):  # their outputs stored, as nbval compares them
        run_again(course, notebook)


def changed_files(course: Path) -> set[str]:
    """The files of `course` that are new or differ from the instructor's tree (not those
    that running the course leaves, which stay out of a release too)."""
    found = set()
    for relative in course_files(course, LOCAL_ONLY):
        original = ROOT / relative
        if not original.is_file() or not filecmp.cmp(course / relative, original, shallow=False):
            found.add(relative.as_posix())
    return found


def run_in(folder: Path, *arguments: str) -> subprocess.CompletedProcess:
    """Run Python in `folder`, where it, and every kernel it starts, imports that folder's
    tenxor and instructor."""
    return subprocess.run(
        [sys.executable, *arguments], cwd=folder, capture_output=True, text=True, timeout=900,
        env={**os.environ, "PYTHONPATH": str(folder)},
    )  # fmt: skip


def checked_states(folder: Path) -> dict[str, str]:
    """What check says of 7.1 and 7.2 in the course at `folder`."""
    script = (
        "import io, json\nfrom tenxor.course.check import check_exercise\n"
        "print(json.dumps({i: check_exercise(i, out=io.StringIO()).state for i in ('7.1', '7.2')}))"
    )
    done = run_in(folder, "-c", script)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Path:
    course = copy_of_reference(tmp_path_factory.mktemp("new-chapter") / "course")
    add_chapter_7(course)
    return course


def readme_chapter_files() -> set[str]:
    """The files README's "Add a chapter" says a chapter 7 is."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("### Add a chapter", 1)[1].split("\n### ", 1)[0]
    listing = section.split("```\n", 2)[1]
    return {line.split()[0] for line in listing.splitlines() if line and not line[0].isspace()}


def test_the_chapter_is_exactly_the_files_the_readme_names(course: Path):
    chapter = {MODULE, PUBLIC_TESTS, HIDDEN_TESTS, NOTEBOOK, CATALOG, HINTS, PLANTED, WELCOME}
    assert readme_chapter_files() == chapter, "README's list of a chapter's files changed"
    assert changed_files(course) == chapter


def test_every_guard_of_the_tooling_passes_with_the_chapter(course: Path):
    """The tooling's tests that hold the course to its catalog (layers, hints, planted
    answers, catalog and notebooks, nbval on the welcome notebook) pass in the course with
    chapter 7, run there with its own code. (verify's chapter gate runs the chapter's own
    notebook under nbval.)"""
    for run in (["-p", "no:nbval", *GUARDS, "-k", NOT_GUARDS], ["--nbval", WELCOME]):
        done = run_in(course, "-m", "pytest", "-q", "-p", "no:cacheprovider", *run)
        assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
        assert " passed" in done.stdout and "skipped" not in done.stdout, done.stdout[-2000:]


def test_release_ships_the_chapter_stubbed_and_its_hidden_tests_not(course: Path, tmp_path):
    done = run_in(course, "-m", "instructor.cli", "release", str(tmp_path / "release"))
    assert done.returncode == 0, done.stdout + done.stderr
    released = (tmp_path / "release" / MODULE).read_text(encoding="utf-8")
    assert (
        'raise NotImplementedError("Exercise 7.1: Sum of squares (notebooks/07_norms.ipynb)")'
        in released
    )
    assert "total += value * value" not in released
    assert (tmp_path / "release" / PUBLIC_TESTS).is_file()
    assert (tmp_path / "release" / NOTEBOOK).is_file()
    assert not (tmp_path / "release" / HIDDEN_TESTS).exists()
    assert checked_states(tmp_path / "release") == {"7.1": "not started", "7.2": "not started"}


def test_every_gate_of_verify_passes_for_the_chapter(course: Path):
    done = run_in(course, "-m", "instructor.cli", "verify", "--chapter", "7", "--course", ".")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count(": passed: ") == 6, done.stdout
    assert "verify: every gate passed" in done.stdout


def test_check_finds_both_exercises_done_in_the_reference(course: Path):
    assert checked_states(course) == {"7.1": "done", "7.2": "done"}


def test_grading_scores_a_complete_and_an_empty_submission(course: Path, tmp_path):
    complete, empty = tmp_path / "submissions" / "complete", tmp_path / "submissions" / "empty"
    (complete / "tenxor").mkdir(parents=True)
    (complete / MODULE).write_bytes((course / MODULE).read_bytes())
    empty.mkdir()
    output = tmp_path / "grades"
    done = run_in(
        course, "-m", "instructor.cli", "grade", "--course", ".", "--batch",
        str(tmp_path / "submissions"), "--out", str(output), "--chapter", "7", "--examples", "10",
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    scores = {
        student: json.loads((output / student / "results.json").read_text())["score"]
        for student in ("complete", "empty")
    }
    assert scores == {"complete": 2, "empty": 0}
    with (output / "gradebook.csv").open() as stream:
        rows = {row["student"]: row for row in csv.DictReader(stream)}
    assert rows["complete"]["7.1"] == "1" and rows["complete"]["7.2"] == "1", rows
    assert rows["empty"]["7.1"] == "0" and rows["empty"]["7.2"] == "0", rows
