"""The hints: every exercise has a few, and none gives away a line of its reference solution."""

from __future__ import annotations

from pathlib import Path

import pytest

import tenxor
from instructor.authoring.regions import regions_in
from tenxor.course.catalog import CATALOG
from tenxor.course.hints import HINTS

pytestmark = pytest.mark.provided

PACKAGE = Path(tenxor.__file__).resolve().parent
SHORTEST_TELLING_LINE = 12  # shorter solution lines ("count = 1", "else:") say nothing alone
COMMONPLACE = {"return None", "return True", "return False", "continue", "break", "else:"}


def solution_lines(exercise_id: str) -> set[str]:
    """The lines of an exercise's reference solution long enough to give it away, stripped;
    a line with a trailing comment counts both whole and without the comment."""
    found: set[str] = set()
    for region in regions_in(PACKAGE):
        if region.exercise_id != exercise_id:
            continue
        text = region.path.read_text(encoding="utf-8").splitlines()
        for line in text[region.begin : region.end - 1]:
            whole = line.strip()
            code = whole.split("  #")[0].strip()
            found |= {
                candidate
                for candidate in (whole, code)
                if len(candidate) >= SHORTEST_TELLING_LINE and candidate not in COMMONPLACE
            }
    return found


def test_every_exercise_of_the_catalog_has_at_least_two_hints_and_no_other_id_has_any():
    catalog_ids = [exercise.id for exercise in CATALOG]
    missing, unknown = set(catalog_ids) - set(HINTS), set(HINTS) - set(catalog_ids)
    assert not missing, f"exercises without hints: {sorted(missing)}"
    assert not unknown, f"hints for ids outside the catalog: {sorted(unknown)}"
    few = {id: len(HINTS[id]) for id in catalog_ids if len(HINTS[id]) < 2}
    assert not few, f"exercises with fewer than two hints: {few}"


def test_hints_are_non_empty_distinct_strings():
    every = [hint for hints in HINTS.values() for hint in hints]
    assert all(isinstance(hint, str) and hint.strip() for hint in every)
    repeated = sorted({hint for hint in every if every.count(hint) > 1})
    assert not repeated, f"hints given twice: {repeated}"


def test_every_reference_solution_has_lines_to_compare_with():
    """Otherwise the next test would pass without looking at anything."""
    empty = [exercise.id for exercise in CATALOG if not solution_lines(exercise.id)]
    assert not empty, f"no solution lines found for {empty}"


@pytest.mark.parametrize("exercise_id", sorted(HINTS))
def test_no_hint_holds_a_line_of_its_reference_solution(exercise_id):
    lines = solution_lines(exercise_id)
    given_away = [
        (number, line)
        for number, hint in enumerate(HINTS[exercise_id], start=1)
        for line in sorted(lines)
        if line in hint
    ]
    assert not given_away, f"hints of {exercise_id} quote its solution: {given_away}"


def test_multi_line_hints_keep_every_line_within_100_characters():
    long_lines = [
        (id, line)
        for id, hints in HINTS.items()
        for hint in hints
        if "\n" in hint
        for line in hint.splitlines()
        if len(line) > 100
    ]
    assert not long_lines
