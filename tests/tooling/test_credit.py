"""Partial credit: each rule scores a made-up exercise's test outcomes as worked out by hand,
the Gradescope entries add up to the score under every rule, and results.json and the
`grade` command name the rule."""

from __future__ import annotations

import pytest

from instructor.cli import parser
from instructor.grading import DEFAULT_CREDIT, Assembly, Credit, results_json
from instructor.grading.credit import part_scores, share_kept
from instructor.sandbox.launcher import SandboxLimits
from instructor.sandbox.protections import SandboxMode
from tenxor.course.catalog import BY_ID
from tenxor.course.engine import Result, Run, function_of
from tests.tooling.submissions import ROOT

pytestmark = pytest.mark.provided

PUBLIC = {
    "tests/test_strides.py::test_f[1]": True,
    "tests/test_strides.py::test_f[2]": False,  # so test_f fails as a function
    "tests/test_strides.py::test_g": True,
    "tests/test_strides.py::test_h[a]": True,
}
HIDDEN = {
    "tests/hidden/test_storage_strides_hidden.py::test_k[1]": True,
    "tests/hidden/test_storage_strides_hidden.py::test_k[2]": True,
}
# Worked out by hand for 3 points. cases: 6 cases, 4 of the public ones (3 pass) and 2
# hidden (both pass), each worth 1/2. functions: test_f, test_g, test_h public and test_k
# hidden, each worth 3/4; test_f fails. all-or-nothing: split as functions, and 0 since
# test_f[2] fails.
BY_HAND = {
    Credit.CASES: [(1.5, 2.0), (1.0, 1.0)],
    Credit.FUNCTIONS: [(1.5, 2.25), (0.75, 0.75)],
    Credit.ALL_OR_NOTHING: [(0.0, 2.25), (0.0, 0.75)],
}
SHARES = {Credit.CASES: 5 / 6, Credit.FUNCTIONS: 3 / 4, Credit.ALL_OR_NOTHING: 0.0}


def flat(pairs: list[tuple[float, float]]) -> list[float]:
    """(score, maximum) pairs as one list, for pytest.approx."""
    return [value for pair in pairs for value in pair]


@pytest.mark.parametrize("credit", list(Credit))
def test_each_rule_scores_the_parts_as_worked_out_by_hand(credit: Credit):
    assert flat(part_scores(credit, 3, [PUBLIC, HIDDEN])) == pytest.approx(flat(BY_HAND[credit]))
    assert share_kept(credit, {**PUBLIC, **HIDDEN}) == pytest.approx(SHARES[credit])


def test_all_or_nothing_gives_every_point_when_every_test_passes():
    passing = {test: True for test in PUBLIC}
    scores = part_scores(Credit.ALL_OR_NOTHING, 3, [passing, HIDDEN])
    assert flat(scores) == pytest.approx([2.25, 2.25, 0.75, 0.75])
    assert share_kept(Credit.ALL_OR_NOTHING, {**passing, **HIDDEN}) == 1.0


def test_a_test_function_is_its_node_id_without_the_parameters():
    assert function_of("tests/test_views.py::test_x[a-[1, 2]]") == "tests/test_views.py::test_x"
    assert function_of("tests/test_views.py::test_y") == "tests/test_views.py::test_y"


def made_up_run() -> tuple[dict[str, str], Run]:
    """The outcomes above as a run of exercise 2.1's tests."""
    outcomes = {**PUBLIC, **HIDDEN}
    expected = {test: "2.1" for test in outcomes}
    results = {
        test: Result(test, "2.1", "passed" if passed else "failed", "" if passed else "wrong")
        for test, passed in outcomes.items()
    }
    return expected, Run(collected=dict(expected), results=results)


@pytest.mark.parametrize("credit", list(Credit))
def test_the_entries_add_up_to_the_score_and_results_name_the_rule(credit: Credit):
    expected, run = made_up_run()
    limits, mode = SandboxLimits(), SandboxMode.SAME_USER
    results = results_json(expected, run, Assembly(ROOT), limits, mode, 1.0, credit)
    points = BY_ID["2.1"].points
    scores = [(entry["score"], entry["max_score"]) for entry in results["tests"]]
    by_hand = [value * points / 3 for value in flat(BY_HAND[credit])]
    assert flat(scores) == pytest.approx(by_hand, abs=1e-4)  # entries round to 4 decimals
    assert results["score"] == pytest.approx(sum(score for score, _ in scores), abs=0.005)
    assert results["extra_data"]["exercises"]["2.1"] == pytest.approx(results["score"], abs=0.005)
    assert results["extra_data"]["credit"] == credit.value
    assert f"Partial credit ({credit.value}): {credit.rule}." in results["output"]
    public = results["tests"][0]["output"]
    assert "3 of 4 tests passed." in public and "FAIL test_strides.py::test_f[2]: wrong" in public
    if credit is Credit.FUNCTIONS:
        assert "Scored by test function: 2 of 3 passed in full" in public
    if credit is Credit.ALL_OR_NOTHING:
        assert "Scored all or nothing:" in public and "not every one does." in public


def test_results_are_scored_by_the_default_rule_unless_told():
    expected, run = made_up_run()
    results = results_json(expected, run, Assembly(ROOT), SandboxLimits(), SandboxMode.SAME_USER, 1)
    assert results["extra_data"]["credit"] == DEFAULT_CREDIT.value


def test_the_grade_command_takes_a_rule_and_refuses_others(capsys):
    assert parser().parse_args(["grade", "."]).credit == DEFAULT_CREDIT.value
    chosen = parser().parse_args(["grade", ".", "--credit", "all-or-nothing"])
    assert Credit(chosen.credit) is Credit.ALL_OR_NOTHING
    with pytest.raises(SystemExit):
        parser().parse_args(["grade", ".", "--credit", "lenient"])
    assert "invalid choice: 'lenient'" in capsys.readouterr().err
