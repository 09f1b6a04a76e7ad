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
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from tests.tooling.submissions import ROOT, copy_of_reference

pytestmark = pytest.mark.provided

MODULE = "tenxor/norms.py"
PUBLIC_TESTS = "tests/test_norms.py"
HIDDEN_TESTS = "tests/hidden/test_norms_hidden.py"
NOTEBOOK = "notebooks/07_norms.ipynb"
CATALOG = "tenxor/course/catalog.py"

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

CELLS = [
    ("markdown", "# Chapter 7: norms\nHow long is a vector?"),
    ("code", "from tenxor.course import check\nfrom tenxor import norms"),
    ("code", 'check("7.1")'),
    ("code", "norms.sum_of_squares([3.0, 4.0])"),
    ("code", 'check("7.2")'),
    ("code", "norms.euclidean_norm([3.0, 4.0])"),
]  # fmt: skip

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


def add_chapter_7(course: Path) -> None:
    """Add the chapter's four files and its catalog rows to the course at `course`."""
    for relative, text in ((MODULE, NORMS), (PUBLIC_TESTS, TESTS), (HIDDEN_TESTS, HIDDEN)):
        (course / relative).write_text(text, encoding="utf-8")
    document = nbformat.v4.new_notebook()
    document.cells = [
        nbformat.v4.new_code_cell(source)
        if kind == "code"
        else nbformat.v4.new_markdown_cell(source)
        for kind, source in CELLS
    ]
    nbformat.write(document, course / NOTEBOOK)
    catalog = (course / CATALOG).read_text(encoding="utf-8")
    for old, new in CATALOG_EDITS:
        assert catalog.count(old) == 1, f"the catalog no longer holds {old!r} once"
        catalog = catalog.replace(old, new)
    (course / CATALOG).write_text(catalog, encoding="utf-8")


def changed_files(course: Path) -> set[str]:
    """The files of `course` that are new or differ from the instructor's tree."""
    found = set()
    for path in course.rglob("*"):
        relative = path.relative_to(course).as_posix()
        if path.is_file() and "__pycache__" not in path.parts:
            original = ROOT / relative
            if not original.is_file() or not filecmp.cmp(path, original, shallow=False):
                found.add(relative)
    return found


def run_in(folder: Path, *arguments: str) -> subprocess.CompletedProcess:
    """Run Python in `folder`, where it imports that folder's tenxor and instructor."""
    return subprocess.run(
        [sys.executable, *arguments], cwd=folder, capture_output=True, text=True, timeout=900
    )


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


def test_the_chapter_is_four_new_files_and_catalog_rows(course: Path):
    assert changed_files(course) == {MODULE, PUBLIC_TESTS, HIDDEN_TESTS, NOTEBOOK, CATALOG}


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
