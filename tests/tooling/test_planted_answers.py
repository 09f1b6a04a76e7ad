"""Every exercise's report states its case: one plausible wrong answer per exercise is planted
into a copy of the reference (tests/tooling/planted.py), and check's report of its first
failure must name the learner's function with its arguments, what it returned or raised, and
what was expected, with no hypothesis "Draw n:" and no pytest id; when the wrong answer
raises, the line reported is in the exercise's own function."""

from __future__ import annotations

import importlib
import inspect
import io
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tenxor.course.catalog import BY_ID, CATALOG, Exercise
from tenxor.course.check import FAILING, check_exercise
from tests.tooling.planted import PLANTED, Planted, planted
from tests.tooling.submissions import copy_of_reference

pytestmark = pytest.mark.provided

PYTEST_ID = re.compile(r"\[[A-Za-z_]\w*\d+\]")  # how pytest names a case: [shape2], [key7]
DRAW = re.compile(r"\bDraw \d+\b")
SHAPE = re.compile(r"shape=\((?P<sizes>[^)]*)\)")  # a shape in a call, by its sizes


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Iterator[Path]:
    yield copy_of_reference(tmp_path_factory.mktemp("planted") / "course")


def first_failure(report: str) -> str:
    """The part of a check report that explains its first failure."""
    assert "First failure, " in report, report
    return report.split("First failure, ", 1)[1].rsplit("\n\n", 1)[0]


def test_every_exercise_has_a_planted_answer():
    planted = {answer.exercise for answer in PLANTED}
    assert len(PLANTED) >= len(CATALOG)
    assert planted == set(BY_ID), f"no planted answer for {sorted(set(BY_ID) - planted)}"


@pytest.mark.parametrize(
    "answer", PLANTED, ids=lambda answer: f"{answer.exercise}:{answer.mistake}"
)
def test_the_report_of_a_planted_answer_states_call_result_and_expectation(
    course: Path, answer: Planted
):
    item = BY_ID[answer.exercise]
    out = io.StringIO()
    with planted(course, answer):
        status = check_exercise(item.id, course, out)
    report = out.getvalue()
    assert status.state == FAILING, report
    first = first_failure(report)
    call = re.search(rf"^\s+call: +{item.function}\((?P<arguments>.*)\)$", first, re.M)
    assert call, f"the report does not name the call of {item.function}:\n{first}"
    assert re.match(r"\w+=", call["arguments"]), f"arguments are named: {call[0]}"
    assert re.search(r"^\s+returned: ", first, re.M) or "Error" in first, first
    assert "expected" in first, f"the report does not say what was expected:\n{first}"
    assert not DRAW.search(first), first
    assert not PYTEST_ID.search(report), report
    assert " ... " not in call[0], f"an argument of the call is cut in the middle:\n{call[0]}"
    if "size-0" not in answer.mistake:
        sizes = [shape.replace(" ", "").split(",") for shape in SHAPE.findall(call[0])]
        empty = [shape for shape in sizes if "0" in shape]
        assert not empty, f"an empty example is shown where a typical one fails too:\n{first}"
    if answer.raises:
        line = re.search(rf"raised at {re.escape(item.path)}:\d+ in (?P<function>\w+)", first)
        assert line and line["function"] == item.function, first
        assert "a result: no error is due" not in first, (
            f"the report does not show the value due where the learner's code raised:\n{first}"
        )
    if is_generator_function(item):
        returned = re.search(r"^\s+returned: +(?P<value>.*)$", first, re.M)
        assert returned and returned["value"].startswith("a generator that"), (
            f"a generator's report does not say what it yielded:\n{first}"
        )


def is_generator_function(item: Exercise) -> bool:
    """Whether the exercise's reference function is a generator function."""
    return inspect.isgeneratorfunction(getattr(importlib.import_module(item.module), item.function))
