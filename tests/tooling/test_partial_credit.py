"""The partial-credit benchmark: its one-token changes are the ones listed by hand, in the same
order on every run, and on two exercises it finds real wrong answers (each fails a test of
its exercise when run) and scores them by each rule from those outcomes."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest

from benchmarks import partial_credit
from benchmarks.partial_credit import mutations_in, mutations_of
from instructor.authoring.regions import Region, find_regions
from instructor.grading.judge_run import reference_tests
from tenxor.course.catalog import BY_ID
from tests.tooling.submissions import ROOT

pytestmark = pytest.mark.provided

SOURCE = '''\
def f(a, b, xs):
    """A docstring with < and 1."""
    # BEGIN SOLUTION 2.1
    if a < b and -a >= 0:  # a comment: 1 + 2
        return list(reversed(xs))
    return max(a - 1, b), f"{a + 1}"
    # END SOLUTION 2.1
    return a - 1
'''
REGION = Region(Path("m.py"), "2.1", 3, 7, "    ")
# (line, column, before, after) of every change, worked out by hand: nothing in the docstring,
# the comment, the f-string or outside the region; `-a` is a sign, `a - 1` an operator.
BY_HAND = {
    (4, 7, "a", "b"), (4, 9, "<", "<="), (4, 11, "b", "a"), (4, 13, "and", "or"),
    (4, 17, "-", ""), (4, 18, "a", "b"), (4, 20, ">=", ">"), (4, 23, "0", "1"),
    (5, 15, "list", ""), (5, 15, "list", "tuple"), (5, 20, "reversed", ""),
    (6, 11, "max", "min"), (6, 15, "a", "b"), (6, 17, "-", "+"), (6, 19, "1", "0"),
    (6, 19, "1", "2"), (6, 22, "b", "a"),
}  # fmt: skip
EXERCISES = ("2.1", "4.5")  # quick ones, whose first two changes both fail a test


def test_the_changes_are_every_one_token_change_of_the_region_listed_by_hand():
    found = mutations_in(SOURCE, "m.py", REGION)
    assert {(m.line, m.column, m.before, m.after) for m in found} == BY_HAND
    assert len(found) == len(BY_HAND)
    assert {m.kind for m in found} == set(partial_credit.KINDS)
    for mutation in found:
        changed = mutation.apply(SOURCE).splitlines()
        assert [n for n, line in enumerate(SOURCE.splitlines(), 1) if changed[n - 1] != line] == [
            mutation.line
        ]


def test_the_changes_come_in_the_same_order_whatever_moves_above_the_region():
    first = [(m.line, m.column, m.after) for m in mutations_in(SOURCE, "m.py", REGION)]
    moved = "import os\n\n\n" + SOURCE
    region = Region(Path("m.py"), "2.1", REGION.begin + 3, REGION.end + 3, "    ")
    again = [(m.line - 3, m.column, m.after) for m in mutations_in(moved, "m.py", region)]
    assert again == first and first != sorted(first)  # shuffled, the same way each time


def test_every_exercise_has_at_least_two_changes():
    for item in BY_ID.values():
        assert len(mutations_of(item)) >= 2, item.id


def by_function(outcomes: dict[str, bool]) -> float:
    """The share a test function's worth of outcomes keeps, counted here from the node ids."""
    functions: dict[str, bool] = {}
    for test, passed in outcomes.items():
        name = test.split("[")[0]
        functions[name] = functions.get(name, True) and passed
    return sum(functions.values()) / len(functions)


@pytest.fixture(scope="module")
def measured(tmp_path_factory) -> tuple[dict, str]:
    """The benchmark on two exercises, two wrong answers each, 10 examples a property test:
    what it wrote as JSON, and what it printed."""
    folder = tmp_path_factory.mktemp("partial-credit")
    readme = partial_credit.README.read_text(encoding="utf-8")
    options = [f"--exercise={exercise_id}" for exercise_id in EXERCISES]
    options += ["--limit", "2", "--examples", "10", "--jobs", "2", "--json", str(folder / "m")]
    printed = folder / "printed.md"
    with printed.open("w", encoding="utf-8") as stream, contextlib.redirect_stdout(stream):
        assert partial_credit.main(options) == 0
    assert partial_credit.README.read_text(encoding="utf-8") == readme  # not the whole course
    return json.loads((folder / "m").read_text()), printed.read_text(encoding="utf-8")


def test_the_wrong_answers_fail_real_tests_and_keep_the_shares_their_outcomes_give(measured):
    found, _ = measured
    collected = reference_tests(ROOT, list(EXERCISES))
    for exercise_id in EXERCISES:
        wrong = found["exercises"][exercise_id]["wrong"]
        assert len(wrong) == 2 == found["exercises"][exercise_id]["tried"]
        tests = sorted(test for test, owner in collected.items() if owner == exercise_id)
        region = next(r for r in find_regions(ROOT / BY_ID[exercise_id].path)
                      if r.exercise_id == exercise_id)  # fmt: skip
        for answer in wrong:
            outcomes = answer["outcomes"]
            assert sorted(outcomes) == tests  # the exercise's public and hidden tests, all run
            assert not all(outcomes.values())
            assert region.begin < answer["line"] < region.end
            kept = answer["kept"]
            assert all(0 <= share <= 1 for share in kept.values())
            assert kept["all-or-nothing"] == 0
            assert kept["cases"] == pytest.approx(sum(outcomes.values()) / len(outcomes))
            assert kept["functions"] == pytest.approx(by_function(outcomes))


def test_the_table_names_every_rule_and_the_count_of_wrong_answers(measured):
    _, printed = measured
    assert "4 wrong answers of 2 exercises, from 4 one-token changes tried" in printed
    for rule in ("| cases", "| functions", "| all-or-nothing"):
        assert rule in printed
    assert "| all-or-nothing | 0% | 0% | 0 | 4 |" in printed.replace(" (default)", "")
    assert all(f"| {exercise_id} | 2 | 2 |" in printed for exercise_id in EXERCISES)
