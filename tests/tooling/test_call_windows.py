"""Calls sent to a worker a window at a time (Sandbox.each) answer as the same calls made one
at a time would: the same values and errors in the same order, every limit per call, and what
a call costs (a strike, a new worker) charged only once the caller comes to its answer."""

from __future__ import annotations

import dataclasses
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from instructor.grading.intake import assemble
from instructor.grading.setup import grading_setup
from instructor.sandbox.judge_side import (
    LimitReached,
    Raising,
    Sandbox,
    SandboxFailure,
    pipe_capacity,
)
from instructor.sandbox.launcher import Launcher, SandboxLimits
from tests.tooling.submissions import ROOT, Fixture, appended

pytestmark = pytest.mark.provided

LIMITS = SandboxLimits(call_cpu_seconds=1.0, call_wall_seconds=20.0, strikes=3)
TARGET = ("tenxor.strides", "answer_for")
EXERCISE = "2.4"
# A function of the submission whose answer depends on its argument: the number itself,
# or an error, a crash, a call that never ends, or one that takes 0.6 s of CPU time.
ANSWER_FOR = """
def answer_for(number):
    import os, time
    if number == -1:
        raise ValueError(f"no answer for {number}")
    if number == -2:
        os._exit(3)
    if number == -3:
        while True:
            pass
    if number == -4:
        end = time.thread_time() + 0.6
        while time.thread_time() < end:
            pass
    return [number, "answered"]
"""


@pytest.fixture(scope="module")
def sandbox() -> Iterator[Sandbox]:
    """A sandbox for a submission with answer_for, its worker started."""
    fixture = Fixture("answers", (appended("tenxor/strides.py", ANSWER_FOR),), (), "")
    with (
        grading_setup(ROOT, [], LIMITS, 1, profile="ci-quick") as setup,
        tempfile.TemporaryDirectory(prefix="submission-", dir=setup.scratch) as scratch,
    ):
        submission = fixture.build(Path(scratch) / "submission")
        assembly = assemble(setup.release_tree, submission, Path(scratch) / "package")
        config = dataclasses.replace(setup.config(assembly.package, 0), judge=None, limits=LIMITS)
        made = Sandbox(config, None, Launcher(config))
        try:
            assert made.start() is None, "the submission did not import"
            yield made
        finally:
            made.close()


@pytest.fixture
def fresh(sandbox: Sandbox) -> Sandbox:
    """The sandbox with no exercise charged anything yet."""
    sandbox.accounts.clear()
    sandbox.owed = None
    sandbox.unbatched.clear()
    return sandbox


def one_at_a_time(sandbox: Sandbox, numbers: list[int]) -> list[object]:
    """answer_for(number) for each number by single calls: each value, or the error raised."""
    answers: list[object] = []
    for number in numbers:
        try:
            answers.append(sandbox.call(EXERCISE, TARGET, (number,), {}, []))
        except Exception as error:  # noqa: BLE001 - the errors are what is compared
            answers.append(error)
    return answers


def in_windows(sandbox: Sandbox, numbers: list[int]) -> list[object]:
    """The same through Sandbox.each: the values and errors (Raising) it gives, and the error
    it raised, if any, last."""
    answers: list[object] = []
    try:
        answers.extend(
            answer.error if type(answer) is Raising else answer
            for answer in sandbox.each(EXERCISE, TARGET, [(n,) for n in numbers])
        )
    except Exception as error:  # noqa: BLE001 - the errors are what is compared
        answers.append(error)
    return answers


def names(error: object, *values: str) -> bool:
    """Whether the message of `error` names each of `values`, as a word of its own."""
    return all(re.search(rf"(?<![\w.]){re.escape(v)}(?![\w.])", str(error)) for v in values)


def described(answers: list[object]) -> list[object]:
    """Answers as comparable data: values as they are, errors by their type."""
    return [type(a).__name__ if isinstance(a, BaseException) else a for a in answers]


def test_a_window_answers_as_single_calls_do_in_the_same_order(fresh: Sandbox):
    numbers = list(range(3000))
    windowed = in_windows(fresh, numbers)
    assert windowed == one_at_a_time(fresh, numbers)
    assert windowed[2999] == [2999, "answered"]
    assert fresh.window_bytes <= pipe_capacity(fresh.commands), "a window fits in the pipe"
    assert fresh.window_bytes < 3000 * 40, "so 3000 calls took several windows"


def test_a_window_that_can_go_in_one_batch_does(fresh: Sandbox, monkeypatch):
    """Quick calls, errors among them, answer in batches (a message for a whole window)
    and never one at a time; a window with a call that crashes or hangs is cut short and its
    calls are made one at a time, with the strike where one at a time puts it; so are the
    exercise's calls after it."""
    numbers = [n if n % 7 else -1 for n in range(1, 600)]
    expected = described(one_at_a_time(fresh, numbers))
    with monkeypatch.context() as patched:
        patched.setattr(Sandbox, "answers", lambda *args: pytest.fail("a call went alone"))
        assert described(in_windows(fresh, numbers)) == expected
    assert not fresh.unbatched and fresh.account(EXERCISE).strikes == []
    ended = {-2: ["SandboxFailure"], -3: ["LimitReached", [2, "answered"]]}  # crash, hang
    for number, after in ended.items():
        fresh.accounts.clear(), fresh.unbatched.clear()
        assert described(in_windows(fresh, [1, number, 2])) == [[1, "answered"], *after]
        assert fresh.unbatched == {EXERCISE} and len(fresh.account(EXERCISE).strikes) == 1
        assert described(in_windows(fresh, [3, 4])) == [[3, "answered"], [4, "answered"]]


def test_an_error_of_one_call_is_its_answer_and_the_calls_after_it_still_answer(fresh):
    expected = [[1, "answered"], "ValueError", [2, "answered"]]
    assert described(in_windows(fresh, [1, -1, 2])) == expected
    each = fresh.each(EXERCISE, TARGET, [(1,), (-1,), (2,)])
    answers = [next(each), next(each), next(each)]
    assert [type(a).__name__ for a in answers] == ["list", "Raising", "list"]
    assert str(answers[1].error) == "no answer for -1"
    assert fresh.account(EXERCISE).strikes == []


def test_a_crash_the_caller_never_comes_to_costs_nothing_and_one_it_reaches_a_strike(fresh):
    each = fresh.each(EXERCISE, TARGET, [(1,), (2,), (-2,), (3,)])
    assert [next(each), next(each)] == [[1, "answered"], [2, "answered"]]
    del each  # the caller stopped before the crash: no strike, and no one owes the restart
    assert fresh.account(EXERCISE).strikes == [] and fresh.owed is None
    assert fresh.call(EXERCISE, TARGET, (4,), {}, []) == [4, "answered"]

    answers = in_windows(fresh, [1, -2, 3])
    assert described(answers) == [[1, "answered"], "SandboxFailure"]
    assert isinstance(answers[1], SandboxFailure) and names(answers[1], "3"), answers[1]
    assert len(fresh.account(EXERCISE).strikes) == 1 and fresh.owed == EXERCISE
    assert fresh.call(EXERCISE, TARGET, (5,), {}, []) == [5, "answered"]


def test_each_call_of_a_window_has_its_own_cpu_time(fresh):
    """Three calls of 0.6 s each in one window: 1.8 s in all, more than the 1 s one call
    may take, and every one answers; a call that never ends runs out of its own time."""
    assert in_windows(fresh, [-4, -4, -4, 7]) == [[-4, "answered"]] * 3 + [[7, "answered"]]
    answers = in_windows(fresh, [1, -3, 2])
    assert described(answers) == [[1, "answered"], "LimitReached", [2, "answered"]]
    assert isinstance(answers[1], LimitReached)
    assert fresh.account(EXERCISE).strikes == ["it ran out of CPU time"]


def test_a_window_stops_at_the_strike_that_ends_the_exercise(fresh):
    """After the last strike an exercise's calls fail at once, in a window as alone."""
    fresh.account(EXERCISE).strikes[:] = ["before", "before"]
    answers = in_windows(fresh, [1, -2, 2])
    assert described(answers) == [[1, "answered"], "SandboxFailure"]
    answers = in_windows(fresh, [3])
    assert described(answers) == ["LimitReached"]
    assert names(answers[0], EXERCISE, "3"), answers[0]  # its strikes


def test_a_window_ends_where_the_exercise_uses_up_its_cpu_time(fresh):
    """With 1 s of CPU time for the exercise, two calls of 0.6 s use it up: the worker is
    stopped before the calls left, which fail as they would one at a time, without a strike."""
    fresh.limits = dataclasses.replace(LIMITS, exercise_cpu_seconds=1.0)
    try:
        answers = in_windows(fresh, [-4, -4, -4, -4, 1])
        stopped = fresh.pid is None
    finally:
        fresh.limits = LIMITS
    assert described(answers) == [[-4, "answered"], [-4, "answered"], "LimitReached"]
    assert names(answers[2], EXERCISE, "1"), answers[2]  # its budget
    assert stopped, "the worker was stopped before it answered the calls left"
    assert fresh.account(EXERCISE).strikes == [] and fresh.owed is None
