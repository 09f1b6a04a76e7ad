"""Partial credit: how an exercise's points are shared among its tests.

The rules (Credit) score one exercise from the outcomes of its tests alone, public and hidden,
each given as test node id -> passed:

    cases           every collected test case counts once (a test with 8 parametrized cases
                    counts 8 times)
    functions       every test function counts once, and passes only when all its cases
                    pass (a parametrized or property test is one function)
    all-or-nothing  the exercise's points only when every one of its tests passes

`python -m benchmarks.partial_credit` measures what each rule gives wrong answers
(benchmarks/README.md, "Partial credit"). The default, `functions`, leaves a one-token wrong
answer about a fifth of its exercise's points where `cases` leaves it more than a third, and
unlike `all-or-nothing` still credits in full each behaviour an answer gets right.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence

from tenxor.course.engine import function_of


class Credit(str, enum.Enum):
    """A rule for an exercise's partial credit."""

    CASES = "cases"
    FUNCTIONS = "functions"
    ALL_OR_NOTHING = "all-or-nothing"

    __str__ = str.__str__
    __format__ = str.__format__

    @property
    def rule(self) -> str:
        """The rule in a few words, for the instructor and the student."""
        return RULES[self]


RULES = {
    Credit.CASES: "each test case counts once",
    Credit.FUNCTIONS: "each test function counts once, and passes only when all its cases pass",
    Credit.ALL_OR_NOTHING: "the exercise's points only when every one of its tests, public and "
    "hidden, passes",
}
DEFAULT_CREDIT = Credit.FUNCTIONS


def units(credit: Credit, tests: Sequence[str]) -> dict[str, list[str]]:
    """What `credit` counts among `tests`, each with the tests it is made of: every test
    under `cases`, every test function under the other rules."""
    if credit is Credit.CASES:
        return {test: [test] for test in tests}
    grouped: dict[str, list[str]] = {}
    for test in tests:
        grouped.setdefault(function_of(test), []).append(test)
    return grouped


def units_passed(credit: Credit, outcomes: Mapping[str, bool]) -> int:
    """How many of the units `credit` counts in `outcomes` (test -> passed) passed in full."""
    counted = units(credit, list(outcomes))
    return sum(all(outcomes[test] for test in members) for members in counted.values())


def part_scores(
    credit: Credit, points: float, parts: Sequence[Mapping[str, bool]]
) -> list[tuple[float, float]]:
    """The score and the maximum of each part of one exercise's tests (its public tests, its
    hidden tests), each part given as test -> passed: the maxima add up to `points`, split
    by the units `credit` counts (all-or-nothing splits as `functions` does), and the scores
    to what the exercise earns."""
    split = Credit.CASES if credit is Credit.CASES else Credit.FUNCTIONS
    sizes = [len(units(split, list(part))) for part in parts]
    if not sum(sizes):
        return [(0.0, 0.0) for _ in parts]
    share = points / sum(sizes)
    every_test_passed = all(all(part.values()) for part in parts)
    scores = []
    for part, size in zip(parts, sizes):
        maximum = share * size
        if credit is Credit.ALL_OR_NOTHING:
            scores.append((maximum if every_test_passed else 0.0, maximum))
        else:
            scores.append((share * units_passed(credit, part), maximum))
    return scores


def share_kept(credit: Credit, outcomes: Mapping[str, bool]) -> float:
    """The share of its exercise's points (0 to 1) that a submission keeps under `credit` when
    the exercise's tests end as `outcomes` (test -> passed)."""
    return sum(score for score, _ in part_scores(credit, 1.0, [outcomes]))


def scored_in_words(credit: Credit, part: Mapping[str, bool], every_test_passed: bool) -> str:
    """How `credit` scored one part of an exercise's tests, for the student ("" for `cases`,
    whose count of tests passed says it all)."""
    if credit is Credit.FUNCTIONS:
        counted = len(units(credit, list(part)))
        return (
            f"Scored by test function: {units_passed(credit, part)} of {counted} passed in "
            "full (a parametrized or property test counts once, and only when all its cases "
            "pass)."
        )
    if credit is Credit.ALL_OR_NOTHING:
        verdict = "every one does." if every_test_passed else "not every one does."
        return f"Scored all or nothing: {RULES[credit]}; {verdict}"
    return ""
