"""The catalog, the solution regions and the test markers match one to one, and prose counts
exercises and points as the catalog does."""

import ast
import dataclasses
import importlib
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import tenxor.course.markers
from instructor.authoring.regions import RegionError, find_regions, regions_in
from instructor.authoring.verify import manifest_problems
from tenxor.course.catalog import (
    BY_ID,
    CATALOG,
    catalog_problems,
    exercises_in,
    prerequisites,
    total_points,
)
from tenxor.course.markers import progress_line

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.provided


def test_catalog_has_unique_ids_and_points_add_to_100():
    assert len(CATALOG) >= 20
    assert len(BY_ID) == len(CATALOG)
    assert sum(exercise.points for exercise in CATALOG) == 100
    assert all(exercise.points > 0 for exercise in CATALOG)


def test_dependencies_name_earlier_exercises_and_have_no_cycles():
    order = [exercise.id for exercise in CATALOG]
    for exercise in CATALOG:
        for dep in exercise.depends_on:
            assert dep in BY_ID, f"{exercise.id} depends on unknown {dep}"
            assert order.index(dep) < order.index(exercise.id), f"{exercise.id} -> {dep}"
        assert exercise.id not in prerequisites(exercise.id)


def test_each_exercise_function_exists_in_its_module_and_notebook_path_is_named():
    for exercise in CATALOG:
        module = importlib.import_module(exercise.module)
        assert callable(getattr(module, exercise.function)), exercise.id
        assert exercise.notebook.startswith("notebooks/0") and exercise.notebook.endswith(".ipynb")


def test_each_exercise_has_exactly_one_region_inside_its_function():
    regions = regions_in(ROOT / "tenxor", set(BY_ID))
    assert sorted(r.exercise_id for r in regions) == sorted(BY_ID)
    for region in regions:
        exercise = BY_ID[region.exercise_id]
        assert region.path == ROOT / exercise.path, region
        tree = ast.parse(region.path.read_text())
        function = next(
            node
            for node in ast.walk(tree)
            if isinstance(node, ast.FunctionDef) and node.name == exercise.function
        )
        assert function.lineno < region.begin < region.end <= function.end_lineno + 1, region


def collected(target: Path, *options: str) -> list[str]:
    """The tests pytest collects in the course with `options`, each test's exercise (or
    "provided") written to `target` (nbval, which collects no test here, is not loaded)."""
    command = [sys.executable, "-m", "pytest", "-p", "no:nbval", "--collect-only", "-q"]
    done = subprocess.run(
        [*command, f"--exercise-map={target}", *options], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return [line for line in done.stdout.splitlines() if "::" in line]


@pytest.fixture(scope="module")
def owners(tmp_path_factory) -> dict[str, str]:
    """Every collected test of the course, with the exercise (or "provided") it tests."""
    target = tmp_path_factory.mktemp("map") / "map.json"
    collected(target)
    return json.loads(target.read_text())


def test_every_exercise_has_tests_and_every_test_names_a_known_exercise(owners):
    graded = set(owners.values()) - {"provided"}
    assert graded == set(BY_ID), f"exercises without tests: {set(BY_ID) - graded}"


def test_the_chapter_manifest_names_every_notebook_module_and_test_file(owners):
    graded = {test: owner for test, owner in owners.items() if owner in BY_ID}
    assert manifest_problems(ROOT, graded) == []
    assert catalog_problems() == []


def test_a_test_file_or_notebook_outside_the_manifest_and_a_misplaced_test_are_problems(tmp_path):
    for path in ("tests/test_strides.py", "tests/test_extra.py", "notebooks/09_extra.ipynb"):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text("")
    problems = manifest_problems(tmp_path, {"tests/test_strides.py::test_numel": "1.1"})
    assert "tests/test_extra.py is in no chapter of the catalog" in problems
    assert "notebooks/09_extra.ipynb is in no chapter of the catalog" in problems
    assert "chapter 1: tests/test_storage.py does not exist" in problems
    assert (
        "tests/test_strides.py::test_numel tests exercise 1.1, but tests/test_strides.py is not a "
        "test file of chapter 1 nor one that spans the chapters"
    ) in problems


def test_points_that_do_not_add_up_are_a_catalog_problem(monkeypatch):
    first, expected = CATALOG[0], total_points() + 1
    changed = (dataclasses.replace(first, points=first.points + 1), *CATALOG[1:])
    monkeypatch.setattr(tenxor.course.catalog, "CATALOG", changed)
    assert f"points add up to {expected}, not 100" in catalog_problems()


def test_exercise_option_selects_exactly_that_exercises_tests(owners, tmp_path):
    listed = set(collected(tmp_path / "chosen.json", "--exercise", "3.4"))
    expected = {node for node, owner in owners.items() if owner == "3.4"}
    assert listed == expected and expected, sorted(listed ^ expected)[:10]


@pytest.mark.parametrize(
    "text, problem",
    [
        ("# BEGIN SOLUTION 1.1\n", "never closed"),
        ("# END SOLUTION 1.1\n", "without a matching BEGIN"),
        ("# BEGIN SOLUTION 1.1\n# BEGIN SOLUTION 1.2\n", "inside the region of 1.1"),
        ("# BEGIN SOLUTION 9.9\n# END SOLUTION 9.9\n", "unknown exercise '9.9'"),
        ("# BEGIN SOLUTION 1.1\n# END SOLUTION 1.2\n", "without a matching BEGIN"),
        ("#BEGIN SOLUTION 1.1\n", "malformed"),
    ],
)
def test_bad_markers_are_reported_with_file_and_line(tmp_path, text, problem):
    path = tmp_path / "module.py"
    path.write_text(text)
    with pytest.raises(RegionError, match=problem) as caught:
        find_regions(path, set(BY_ID))
    assert f"{path}:" in str(caught.value)


# "N exercises" and "N points" in prose, N in digits or in words ("seven", "thirty-nine").
UNITS = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
         "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen",
         "eighteen", "nineteen"]  # fmt: skip
TENS = ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
NUMBER = rf"\d+|(?:{'|'.join(TENS)})(?:-(?:{'|'.join(UNITS[:9])}))?|{'|'.join(UNITS)}|a hundred"
COUNTED = re.compile(rf"\b({NUMBER})[ -](exercises|points)\b", re.IGNORECASE)
PROGRESS = re.compile(r"(\d+) of \d+ exercises done \(\d+ of \d+ points\); next: [\d.]*\d")


def number(text: str) -> int:
    """The value of a number in digits or words: "39", "seven", "thirty-nine", "a hundred"."""
    words = text.lower()
    if words.isdigit():
        return int(words)
    if words == "a hundred":
        return 100
    tens, _, unit = words.partition("-")
    if tens in TENS:
        return 10 * (TENS.index(tens) + 2) + (UNITS.index(unit) + 1 if unit else 0)
    return UNITS.index(words) + 1


def counted_figures(text: str) -> list[tuple[int, str]]:
    """Every "N exercises" and "N points" of a text, as (N, "exercises" or "points")."""
    return [(number(found), unit.lower()) for found, unit in COUNTED.findall(text)]


def markdown_of(notebook: Path) -> str:
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    return "\n\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")


def prose_with_counts() -> dict[str, tuple[str, dict[str, set[int]]]]:
    """The texts that may count exercises or points, each with the figures it may use: the
    course's in README.md, course.py and the progress plugin's docstring; in a notebook, the
    course's, its chapter's and its exercises' own."""
    course = {"exercises": {len(CATALOG)}, "points": {total_points()}}
    texts = {
        "README.md": ((ROOT / "README.md").read_text(encoding="utf-8"), course),
        "course.py": ((ROOT / "course.py").read_text(encoding="utf-8"), course),
        "tenxor/course/markers.py": (tenxor.course.markers.__doc__, course),
    }
    for notebook in sorted((ROOT / "notebooks").glob("*.ipynb")):
        name = f"notebooks/{notebook.name}"
        chapter = exercises_in(name)
        allowed = {
            "exercises": course["exercises"] | {len(chapter)},
            "points": course["points"]
            | {sum(item.points for item in chapter)}
            | {item.points for item in chapter},
        }
        texts[name] = (markdown_of(notebook), allowed)
    return texts


def test_counts_in_prose_are_found_in_digits_and_in_words():
    text = "12 of 36 exercises done (38 of 100 points); all seven exercises, thirty-nine points"
    assert counted_figures(text) == [(36, "exercises"), (100, "points"), (7, "exercises"),
                                     (39, "points")]  # fmt: skip
    assert counted_figures("offset 1 is where it starts; exercises 6.8 to 6.10") == []


def test_every_count_of_exercises_or_points_in_prose_is_the_catalogs():
    wrong = {}
    for name, (text, allowed) in prose_with_counts().items():
        found = [(n, unit) for n, unit in counted_figures(text) if n not in allowed[unit]]
        if found:
            wrong[name] = found
    figures = f"{len(CATALOG)} exercises and {total_points()} points, or a chapter's"
    assert not wrong, f"counts that are not the catalog's ({figures}): {wrong}"


def test_an_example_progress_line_in_the_readme_is_what_the_catalog_gives():
    """The README describes the progress line without its figures (a new chapter would
    change them); an example line it does show must be what the catalog gives."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    examples = list(PROGRESS.finditer(readme))
    for example in examples:
        first = {item.id for item in CATALOG[: int(example.group(1))]}
        assert example.group(0) == progress_line(first, set())
