"""Replaying a property test's recorded examples (instructor.grading.replay): the body sees exactly
what hypothesis drew for it, and every way a body can end is told apart."""

from __future__ import annotations

import pytest
from hypothesis import assume, example, given, note, settings
from hypothesis import strategies as st

from instructor.grading.replay import Example, can_replay, recording, replayed

pytestmark = pytest.mark.provided

EXAMPLES = 30


def recorded(test) -> list[Example]:
    """Run a hypothesis test once, recording its examples."""
    examples: list[Example] = []
    with recording(test, examples):
        test()
    return examples


def test_this_hypothesis_lets_bodies_run_outside_its_engine():
    assert can_replay(), "grading.replay cannot build the context note() and assume() need"


def test_a_replayed_body_sees_every_drawn_argument_and_value_in_order():
    seen: list[tuple] = []

    @settings(max_examples=EXAMPLES, database=None, derandomize=True)
    @given(st.integers(0, 9), st.data())
    def test(number, data):
        drawn = data.draw(st.lists(st.integers(), max_size=3))
        note(f"drew {drawn}")
        seen.append((number, drawn))

    examples = recorded(test)
    first = list(seen)
    seen.clear()
    assert replayed(test, {}, examples) is None
    assert seen == first, f"replayed {seen}, hypothesis drew {first}"
    passed = [e for e in examples if e.ended == "passed"]
    assert len(passed) == len(first) >= EXAMPLES, f"{len(passed)} examples passed of {examples}"
    assert {e.ended for e in examples} <= {"passed", "cut short"}, f"examples: {examples}"


def test_a_replayed_argument_is_a_copy_the_body_may_change():
    @settings(max_examples=5, database=None, derandomize=True)
    @given(st.lists(st.integers(), min_size=1, max_size=3))
    @example([1, 2])  # explicit examples are recorded too
    def test(values):
        assert values[-1] != "changed"
        values.append("changed")

    examples = recorded(test)
    assert examples[0].arguments == {"values": [1, 2]}, "the explicit example was not first"
    assert replayed(test, {}, examples) is None
    assert replayed(test, {}, examples) is None, "the second replay saw the first one's change"


def test_a_body_that_fails_on_an_example_returns_its_error():
    answers = {"wrong": False}

    @settings(max_examples=EXAMPLES, database=None, derandomize=True)
    @given(st.integers(0, 100))
    def test(number):
        assert not (answers["wrong"] and number > 50), f"{number} answered wrong"

    examples = recorded(test)
    answers["wrong"] = True
    error = replayed(test, {}, examples)
    assert isinstance(error, AssertionError), f"replaying returned {error!r}"
    failing = [e.arguments["number"] for e in examples if e.arguments["number"] > 50]
    assert str(failing[0]) in str(error), f"{error} does not name the first failing example"


def test_assumptions_rejected_in_the_recording_are_rejected_again():
    @settings(max_examples=EXAMPLES, database=None, derandomize=True)
    @given(st.integers(0, 10))
    def test(number):
        assume(number % 2 == 0)
        assert number % 2 == 0

    examples = recorded(test)
    assert {e.ended for e in examples} == {"passed", "rejected"}
    assert replayed(test, {}, examples) is None


def test_a_body_that_draws_more_than_was_recorded_fails():
    draws = {"extra": 0}

    @settings(max_examples=5, database=None, derandomize=True)
    @given(st.data())
    def test(data):
        for _ in range(1 + draws["extra"]):
            data.draw(st.integers())

    examples = recorded(test)
    draws["extra"] = 1
    error = replayed(test, {}, examples)
    assert error is not None and "drew more than the recorded example" in str(error)


def test_fixtures_are_passed_to_the_replayed_body():
    @settings(max_examples=5, database=None, derandomize=True)
    @given(number=st.integers(0, 3))
    def test(number, offset):
        assert number + offset >= 10

    examples: list[Example] = []
    with recording(test, examples):
        test(offset=10)
    assert replayed(test, {"offset": 10}, examples) is None
    assert isinstance(replayed(test, {"offset": 0}, examples), AssertionError)
