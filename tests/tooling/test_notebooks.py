"""The notebooks: all there, each exercise checked in exactly one, the one the catalog names."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tenxor.course.catalog import CATALOG

pytestmark = pytest.mark.provided

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ["00_welcome", "01_storage", "02_strides", "03_views", "04_broadcasting",
             "05_reductions", "06_gatv2"]  # fmt: skip
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
