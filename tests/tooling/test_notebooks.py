"""The notebooks: all there, each exercise checked in exactly one, the one the catalog names,
and every check cell's stored report left out of nbval's comparison."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from instructor.authoring.release import is_check_cell
from tenxor.course.catalog import CATALOG, CHAPTERS, exercises_in

pytestmark = pytest.mark.provided

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = [Path(chapter.notebook).stem for chapter in CHAPTERS]
CHECK = re.compile(r"""check\(\s*["'](\d+\.\d+)["']\s*\)""")


def code_cells(notebook: Path) -> list[str]:
    document = json.loads(notebook.read_text(encoding="utf-8"))
    return ["".join(cell["source"]) for cell in document["cells"] if cell["cell_type"] == "code"]


def checked_exercises() -> dict[str, list[str]]:
    """For each exercise id, the notebooks with a check("<id>") cell."""
    found: dict[str, list[str]] = {}
    for notebook in sorted((ROOT / "notebooks").glob("*.ipynb")):
        for source in code_cells(notebook):
            for exercise in CHECK.findall(source):
                found.setdefault(exercise, []).append(f"notebooks/{notebook.name}")
    return found


def test_the_course_notebooks_are_all_there():
    for name in NOTEBOOKS:
        assert (ROOT / "notebooks" / f"{name}.ipynb").exists(), name


def test_the_notebook_folder_holds_the_course_notebooks_and_nothing_else():
    assert sorted(path.stem for path in (ROOT / "notebooks").glob("*.ipynb")) == NOTEBOOKS


@pytest.mark.parametrize("exercise", CATALOG, ids=str)
def test_each_exercise_has_one_check_cell_in_its_own_notebook(exercise):
    assert checked_exercises().get(exercise.id) == [exercise.notebook]


# A predict-then-run question is a markdown line starting with a bold number, "**1.**", in the
# section of a notebook whose heading says "Predict"; the code cell after it reveals the answer.
PREDICT_HEADING = re.compile(r"^#+ .*\bPredict\b", re.MULTILINE)
HEADING = re.compile(r"^#+ ", re.MULTILINE)
QUESTION = re.compile(r"^\*\*\d+\.\*\*", re.MULTILINE)
PREDICT_TAG = "predict"


def cells(notebook: Path) -> list[dict]:
    return json.loads(notebook.read_text(encoding="utf-8"))["cells"]


def question_cells(notebook_cells: list[dict]) -> dict[int, str]:
    """For each predict-then-run question, the position of the code cell that answers it,
    mapped to the question's first words."""
    answers: dict[int, str] = {}
    in_section = False
    for position, cell in enumerate(notebook_cells):
        if cell["cell_type"] != "markdown":
            continue
        source = "".join(cell["source"])
        if HEADING.search(source):
            in_section = bool(PREDICT_HEADING.search(source))
        questions = QUESTION.findall(source) if in_section else []
        assert len(questions) <= 1, f"cell {position} asks {len(questions)} questions at once"
        if questions:
            following = [
                later
                for later in range(position + 1, len(notebook_cells))
                if notebook_cells[later]["cell_type"] == "code"
            ]
            assert following, f"question {questions[0]} in cell {position} has no code cell"
            answers[following[0]] = questions[0]
    return answers


def tagged_cells(notebook_cells: list[dict]) -> set[int]:
    return {
        position
        for position, cell in enumerate(notebook_cells)
        if PREDICT_TAG in cell.get("metadata", {}).get("tags", [])
    }


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_predict_then_run_answers_and_only_they_carry_the_predict_tag(name):
    notebook_cells = cells(ROOT / "notebooks" / f"{name}.ipynb")
    answers = question_cells(notebook_cells)
    tagged = tagged_cells(notebook_cells)
    untagged = {answers[position]: position for position in sorted(set(answers) - tagged)}
    assert not untagged, f"answer cells without the {PREDICT_TAG!r} tag: {untagged}"
    assert tagged <= set(answers), f"cells tagged {PREDICT_TAG!r} that answer no question: " + str(
        sorted(tagged - set(answers))
    )


def test_the_course_asks_predict_then_run_questions():
    asked = {
        name: len(question_cells(cells(ROOT / "notebooks" / f"{name}.ipynb"))) for name in NOTEBOOKS
    }
    assert all(asked[name] >= 2 for name in NOTEBOOKS[1:]), asked


def test_a_question_in_another_section_is_not_a_prediction():
    notebook_cells = [
        {"cell_type": "markdown", "source": ["## Recap\n", "\n", "**1.** Not a question here."]},
        {"cell_type": "code", "source": ["1 + 1"], "metadata": {}},
        {
            "cell_type": "markdown",
            "source": ["## Predict, then run\n", "\n", "**1.** What is 2 + 2?"],
        },
        {"cell_type": "code", "source": ["2 + 2"], "metadata": {}},
        {"cell_type": "markdown", "source": ["The answer is above.\n", "\n", "**2.** And 3 + 3?"]},
        {"cell_type": "markdown", "source": ["Think first."]},
        {"cell_type": "code", "source": ["3 + 3"], "metadata": {"tags": ["predict"]}},
    ]
    assert question_cells(notebook_cells) == {3: "**1.**", 6: "**2.**"}
    assert tagged_cells(notebook_cells) == {6}


# nbval compares every stored output but those of cells with this tag. A check cell's report
# names and counts the tests, which change whenever a test is added, so nbval skips it.
IGNORE_OUTPUT_TAG = "nbval-ignore-output"


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_every_check_cell_carries_the_tag_that_keeps_nbval_from_comparing_its_report(name):
    notebook = ROOT / "notebooks" / f"{name}.ipynb"
    checks = [cell for cell in cells(notebook) if is_check_cell(cell)]
    untagged = [
        "".join(cell["source"])
        for cell in checks
        if IGNORE_OUTPUT_TAG not in cell.get("metadata", {}).get("tags", [])
    ]
    assert not untagged, f"check cells without the {IGNORE_OUTPUT_TAG!r} tag: {untagged}"
    assert len(checks) >= len(exercises_in(f"notebooks/{name}.ipynb"))


def test_a_check_cell_is_a_code_cell_that_calls_check():
    assert is_check_cell({"cell_type": "code", "source": ['check("2.1")']})
    assert is_check_cell({"cell_type": "code", "source": "x = 1\n  check()\n"})
    assert is_check_cell({"cell_type": "code", "source": 'check("2.1", hint=True)'})
    assert not is_check_cell({"cell_type": "markdown", "source": 'check("2.1")'})
    assert not is_check_cell({"cell_type": "code", "source": "from tenxor.course import check"})
    assert not is_check_cell({"cell_type": "code", "source": "recheck(1)"})
