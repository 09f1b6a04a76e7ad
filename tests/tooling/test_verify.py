"""verify: its gates go red, naming the exercise, when a test no longer proves anything."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import numpy as np
import pytest

from instructor.authoring.verify import describe, region_problems, verify
from tests.tooling.submissions import copy_of_reference

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.provided

WEAK_TEST = "tests/test_strides.py::test_column_major_strides_are_not_row_major_strides"
CROSSING_TEST = """

@pytest.mark.exercise("2.2")
def test_column_major_strides_of_a_vector_equal_its_row_major_strides():
    assert column_major_strides((5,)) == contiguous_strides((5,))
"""


def copy_of_course(destination: Path, test_files: tuple[str, ...] = ("test_strides.py",)) -> Path:
    """The course with its solutions, only some of its test files and none of its notebooks
    (to keep runs short)."""
    copy_of_reference(destination)
    shutil.rmtree(destination / "notebooks", ignore_errors=True)
    shutil.rmtree(destination / "tests" / "hidden")
    for path in (destination / "tests").glob("test_*.py"):
        if path.name not in test_files:
            path.unlink()
    return destination


def weaken(course: Path) -> None:
    """Make one test of exercise 2.2 return before it calls anything."""
    path = course / "tests" / "test_strides.py"
    name = WEAK_TEST.split("::")[1]
    text = path.read_text()
    signature = f"def {name}():\n"
    assert signature in text
    path.write_text(text.replace(signature, signature + "    return\n"))


def test_a_weakened_test_turns_the_release_and_stub_gates_red_naming_its_exercise(tmp_path):
    course = copy_of_course(tmp_path / "course")
    healthy = verify(course, ("release", "stubs"), say=lambda line: None)
    assert all(gate.passed for gate in healthy), [describe(gate) for gate in healthy]

    weaken(course)
    gates = {gate.name: gate for gate in verify(course, ("release", "stubs"), say=print)}
    assert not gates["release"].passed and not gates["stubs"].passed
    assert gates["release"].problems == [f"exercise 2.2: {WEAK_TEST} passes in the release"]
    assert gates["stubs"].problems == [f"exercise 2.2: {WEAK_TEST} still passes with 2.2 stubbed"]


def test_a_test_that_calls_another_exercise_turns_the_stub_gate_red(tmp_path):
    course = copy_of_course(tmp_path / "course")
    with (course / "tests" / "test_strides.py").open("a") as stream:
        stream.write(CROSSING_TEST)
    (gate,) = verify(course, ("stubs",), say=lambda line: None)
    assert gate.problems == [
        "exercise 2.1: stubbing it would fail tests/test_strides.py::"
        "test_column_major_strides_of_a_vector_equal_its_row_major_strides, a test of 2.2, "
        "which does not depend on 2.1"
    ]


def test_the_verify_command_exits_non_zero_and_names_the_gate(tmp_path):
    course = copy_of_course(tmp_path / "course")
    weaken(course)
    done = subprocess.run(
        [sys.executable, "-m", "instructor.cli", "verify", "--gate", "release"]
        + ["--course", str(course)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1
    assert "verify: FAILED: release" in done.stdout and WEAK_TEST in done.stdout


def test_regions_outside_their_function_or_missing_are_problems(tmp_path):
    course = copy_of_course(tmp_path / "course")
    strides = course / "tenxor" / "strides.py"
    text = strides.read_text()
    strides.write_text(
        text.replace("    # BEGIN SOLUTION 2.2\n", "").replace("    # END SOLUTION 2.2\n", "")
    )
    assert region_problems(course) == ["exercise 2.2 has 0 solution regions, not 1"]
    assert region_problems(ROOT) == []


def notebook(path: Path, *sources: str) -> None:
    document = nbformat.v4.new_notebook()
    document.cells = [nbformat.v4.new_code_cell(source) for source in sources]
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(document, path)


def test_the_notebook_gate_accepts_unfinished_exercises_and_nothing_else(tmp_path, capfd):
    """...and prints nothing but its own findings: not the log of the kernels it starts."""
    course = copy_of_course(tmp_path / "course")
    notebook(
        course / "notebooks" / "01_storage.ipynb",
        "import tenxor\nprint(tenxor.float32)",
        "from tenxor.course import check\ncheck('2.1')",
        "from tenxor.strides import contiguous_strides\ncontiguous_strides((2, 3))",
        "raise ValueError('never reached')",
    )
    (gate,) = verify(course, ("notebooks",), say=lambda line: None)
    assert gate.passed, describe(gate)

    early = course / "notebooks" / "03_views.ipynb"
    notebook(
        early,
        "import tenxor\ntenxor.arange(6).numel()",
        "from tenxor.course import check\ncheck('3.1')",
    )
    (gate,) = verify(course, ("notebooks",), say=lambda line: None)
    assert gate.problems == [
        "notebooks/03_views.ipynb: cell 1 raised before the notebook's first check() cell "
        "(Exercise 1.1: Element count of a shape (notebooks/01_storage.ipynb)); a learner must "
        "get there without finishing an exercise"
    ]
    early.unlink()

    notebook(course / "notebooks" / "02_strides.ipynb", "import tenxor", "1 / 0")
    (gate,) = verify(course, ("notebooks",), say=lambda line: None)
    assert len(gate.problems) == 1
    assert gate.problems[0].startswith("notebooks/02_strides.ipynb: a cell raised something else")
    assert gate.problems[0].endswith("ZeroDivisionError: division by zero")
    printed = "".join(capfd.readouterr())
    assert "[IPKernelApp]" not in printed, f"the kernels' log reached verify's output: {printed}"


def test_creating_printing_listing_and_copying_need_no_exercise(tmp_path):
    course = copy_of_course(tmp_path / "course")
    notebook(
        course / "notebooks" / "00_welcome.ipynb",
        "import tenxor\nt = tenxor.tensor([[1.0, 2.0], [3.0, 4.0]])",
        "print(t, tenxor.arange(6), tenxor.zeros(2, 1), tenxor.rand(2, seed=0))",
        "assert t.clone().tolist() == t.contiguous().tolist() == [[1.0, 2.0], [3.0, 4.0]]",
        "from tenxor.course import check\ncheck('1.1')",
    )
    (gate,) = verify(course, ("notebooks",), say=lambda line: None)
    assert gate.passed, describe(gate)


def numpy_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    """The strides, in elements, of a row-major array of `shape`, as NumPy lays it out."""
    array = np.zeros(shape)
    return tuple(step // array.itemsize for step in array.strides)


def test_the_chapter_gate_holds_each_notebook_to_its_stored_outputs(tmp_path):
    """A cell whose stored output the run with its chapter finished does not reproduce is
    named (counting every cell, markdown too) with both outputs; a cell that reproduces its
    stored output passes."""
    course = copy_of_course(tmp_path / "course")
    stored, printed_now = "(3, 9)\n", f"{numpy_strides((2, 3))}\n"
    right = numpy_strides((4, 5))
    printed = nbformat.v4.new_output("stream", name="stdout", text=stored)
    shown = nbformat.v4.new_output("execute_result", {"text/plain": repr(right)}, execution_count=3)
    document = nbformat.v4.new_notebook()
    document.cells = [
        nbformat.v4.new_markdown_cell("# Strides"),
        nbformat.v4.new_code_cell("from tenxor.strides import contiguous_strides"),
        nbformat.v4.new_code_cell("print(contiguous_strides((2, 3)))", execution_count=2,
                                  outputs=[printed]),
        nbformat.v4.new_code_cell("contiguous_strides((4, 5))", execution_count=3, outputs=[shown]),
    ]  # fmt: skip
    (course / "notebooks").mkdir()
    nbformat.write(document, course / "notebooks" / "02_strides.ipynb")
    (gate,) = verify(course, ("chapters",), say=lambda line: None)
    assert len(gate.problems) == 1, describe(gate)  # the expression's output is reproduced
    problem = gate.problems[0]
    where = "notebooks/02_strides.ipynb: cell 3 (counting from 1) shows other output"
    assert problem.startswith(where) and problem.endswith("run the notebook again and save it")
    both = f"{stored!r} == {printed_now!r}"  # the stored output, then this run's, as nbval puts it
    assert both in problem, f"{problem!r} does not show {both}"


def test_the_chapter_gate_runs_each_notebook_with_its_chapter_done_and_later_ones_not(tmp_path):
    course = copy_of_course(tmp_path / "course")
    uses_chapter_2 = "from tenxor.strides import contiguous_strides\ncontiguous_strides((2, 3))"
    notebook(course / "notebooks" / "02_strides.ipynb", uses_chapter_2, "tenxor_ok = 1")
    (gate,) = verify(course, ("chapters",), say=lambda line: None)
    assert gate.passed, describe(gate)

    notebook(course / "notebooks" / "01_storage.ipynb", "import tenxor", uses_chapter_2)
    (gate,) = verify(course, ("chapters",), say=lambda line: None)
    assert gate.problems == [
        "notebooks/01_storage.ipynb: cell 2 (counting from 1) raised NotImplementedError: "
        "Exercise 2.1: Row-major strides (notebooks/02_strides.ipynb); the exercises up to "
        "this chapter are done"
    ]
