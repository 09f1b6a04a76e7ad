"""The catalog, the solution regions and the test markers match one to one."""

import ast
import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from instructor.regions import RegionError, find_regions, regions_in
from tenxor.course.catalog import BY_ID, CATALOG, prerequisites

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


def test_every_exercise_has_tests_and_every_test_names_a_known_exercise(tmp_path):
    target = tmp_path / "map.json"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", f"--exercise-map={target}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    graded = set(json.loads(target.read_text()).values()) - {"provided"}
    assert graded == set(BY_ID), f"exercises without tests: {set(BY_ID) - graded}"


def test_exercise_option_selects_exactly_that_exercises_tests(tmp_path):
    every, chosen = tmp_path / "every.json", tmp_path / "chosen.json"
    for target, extra in ((every, []), (chosen, ["--exercise", "3.4"])):
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "--collect-only", "-q", f"--exercise-map={target}"]
            + extra,
            cwd=ROOT,
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0, done.stdout + done.stderr
    expected = {node for node, owner in json.loads(every.read_text()).items() if owner == "3.4"}
    listed = {line for line in done.stdout.splitlines() if "::" in line}
    assert listed == expected and expected


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
