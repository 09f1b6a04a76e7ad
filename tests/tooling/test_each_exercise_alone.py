"""Each exercise is graded on its own: a test of exercise X runs the submission's X on the
instructor's versions of every exercise X builds on, so a module that is broken or missing,
or one wrong exercise, costs its own exercises' points and nothing else, and a student is
never told that an exercise they wrote is not done."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from instructor.grading import GRADING_LIMITS, GradingOptions, grade_batch, students_in
from tenxor.course.catalog import BY_ID, CATALOG, POINTS, prerequisites
from tests.tooling.submissions import (
    Fixture,
    appended,
    copy_of_reference,
    in_region,
    plain_pytest_scores,
)

pytestmark = pytest.mark.provided

EXAMPLES = "ci-quick"
LIMITS = replace(GRADING_LIMITS, call_cpu_seconds=1.0, exercise_cpu_seconds=2.0, memory_mb=1024)
EVERY_EXERCISE = [item.id for item in CATALOG]
VIEWS = "tenxor/views.py"
# Heads averaged by their sum: wrong for every call that averages (6.6 is worth 1 point);
# 6.7 and 6.11 call combine_heads.
SUM_NOT_MEAN = """\
if concat:
    return received.reshape(*received.shape[:-2], -1)
return received.sum(dim=-2)
"""
# A submission that keeps every function of the judge's it is lent (in any module of the
# package, while any test runs) and calls the one of its own exercise 3.1 in its stead:
# lent functions answer only while the exercise they were lent for is graded.
KEEP_LENT_FUNCTIONS = """\
import sys as _sys

_KEPT = {}


def _keep_lent_functions():
    for _module in list(_sys.modules.values()):
        if getattr(_module, "__name__", "").startswith("tenxor"):
            for _name, _value in list(vars(_module).items()):
                if getattr(_value, "__qualname__", "").endswith("call_judge"):
                    _KEPT.setdefault(_name, _value)


_own_cut_runs = cut_runs


def cut_runs(*args, **kwargs):
    _keep_lent_functions()
    return _own_cut_runs(*args, **kwargs)


def infer_shape(*args, **kwargs):
    _keep_lent_functions()
    if "infer_shape" in _KEPT:
        return _KEPT["infer_shape"](*args, **kwargs)
    raise NotImplementedError("Exercise 3.1 was never written")
"""


def module_exercises(module: str) -> set[str]:
    return {item.id for item in CATALOG if item.path == module}


# name: (its edits, the exercises its own code loses in full, the one it gets wrong in part)
CLASS = {
    "syntax-error-in-views": ((appended(VIEWS, "def broken(:"),), module_exercises(VIEWS), None),
    "one-bug-in-6.6": ((in_region("6.6", SUM_NOT_MEAN),), set(), "6.6"),
    "keeps-lent-functions": ((appended(VIEWS, KEEP_LENT_FUNCTIONS),), {"3.1"}, None),
}


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> Path:
    """The class graded in one batch, every exercise of the course."""
    base = tmp_path_factory.mktemp("alone")
    course = copy_of_reference(base / "course")
    for name, (edits, _, _) in CLASS.items():
        Fixture(name, edits, (), "").build(base / "submissions" / name)
    output = base / "grades"
    output.mkdir()
    grade_batch(
        course,
        students_in(base / "submissions"),
        output,
        GradingOptions(selection=EVERY_EXERCISE, limits=LIMITS, jobs=1, profile=EXAMPLES),
    )
    return output


def results_of(graded: Path, name: str) -> dict:
    return json.loads((graded / name / "results.json").read_text())


def own_points(name: str, tmp_path: Path) -> dict[str, float]:
    """What each exercise of a class member earns by its own code: nothing for what it
    lost in full, plain pytest's score for the exercise it got wrong in part (run with every
    other exercise the instructor's), every point for the rest."""
    edits, lost, wrong = CLASS[name]
    points = {item.id: 0.0 if item.id in lost else float(item.points) for item in CATALOG}
    if wrong is not None:
        fixture = Fixture(name, edits, (), "")
        points.update(plain_pytest_scores(fixture, tmp_path, [wrong], EXAMPLES))
    return points


@pytest.mark.parametrize("name", CLASS)
def test_each_exercise_scores_what_its_own_code_earns(graded: Path, name: str, tmp_path: Path):
    results = results_of(graded, name)
    expected = own_points(name, tmp_path)
    found = results["extra_data"]["exercises"]
    wrong = {
        exercise_id: (found.get(exercise_id), points)
        for exercise_id, points in expected.items()
        if found.get(exercise_id) != pytest.approx(points, abs=1e-3)
    }
    assert not wrong, (
        f"{name}: exercises scored (found, earned by their own code) {wrong}; an exercise's "
        "score may not depend on the exercises it builds on"
    )
    assert results["score"] == pytest.approx(sum(expected.values()), abs=0.01), (
        f"{name} scored {results['score']}, its exercises earn {sum(expected.values())}"
    )


def test_the_cascade_cases_score_exactly_what_their_own_code_earns(graded: Path):
    """The two cases a TA found: a syntax error in views.py costs chapter 3 alone (81 of
    100), and one wrong 1-point exercise costs that point alone."""
    views_points = sum(BY_ID[e].points for e in module_exercises(VIEWS))
    found = results_of(graded, "syntax-error-in-views")["score"]
    assert found == POINTS - views_points, f"syntax error in views.py: {found}"
    found = results_of(graded, "one-bug-in-6.6")["score"]
    assert found == POINTS - BY_ID["6.6"].points, f"one bug in 6.6: {found}"


def test_a_written_exercise_is_never_called_not_done(graded: Path):
    """The exercises of a module that does not compile are not graded because of that, and
    the student is told so, never that they still raise NotImplementedError."""
    results = results_of(graded, "syntax-error-in-views")
    views = module_exercises(VIEWS)
    said = [entry["output"] for entry in results["tests"] if entry["number"] in views]
    outcomes = results["extra_data"]["outcomes"].values()
    said += [o["reason"] for o in outcomes if o["exercise"] in views and not o["passed"]]
    report = (graded / "syntax-error-in-views" / "report.html").read_text()
    for text in [*said, report]:
        assert "NotImplementedError" not in text and "not done" not in text, text[:600]
    for entry in (e for e in results["tests"] if e["number"] in views):
        assert "tenxor/views.py has a syntax error at line" in entry["output"], entry["output"]


@pytest.mark.parametrize("exercise_id", EVERY_EXERCISE)
def test_every_exercise_runs_on_the_instructors_versions_of_all_it_builds_on(exercise_id):
    """What stands in the worker for the exercises an exercise builds on, enumerated: the
    instructor's function of each, and never of the exercise itself or of another."""
    from instructor.grading.judge import bindings_of

    references = {item.id: object() for item in CATALOG}
    found = bindings_of(exercise_id, references)
    expected = {(BY_ID[e].module, BY_ID[e].function, id(references[e]))
                for e in prerequisites(exercise_id)}  # fmt: skip
    assert {(m, f, id(r)) for m, f, r in found} == expected, (exercise_id, found)
    assert all(r is not references[exercise_id] for _, _, r in found), exercise_id
