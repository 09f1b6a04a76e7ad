"""A property test's examples, drawn once and replayed for every submission a judge grades.

Grading replays the same examples on every run (a derandomized hypothesis profile), so the
examples a property test draws are the same for every submission whose function passes it:
drawing them is most of a test's cost, and it need not be paid again for each student. A
judge that grades several submissions first runs each property test with the reference
solutions, recording every example: the arguments drawn for it, and each value its test drew
from `data` as it ran. For each submission it then calls the test's body on those examples
only, without hypothesis's engine:

    examples = []
    with recording(test, examples):
        test()                               # hypothesis draws, the body records
    replayed(test, fixtures, examples)       # None: the body passed on every example

A body that fails on an example (or asks for more than was drawn) is run in full by hypothesis
afterwards, so a failure is reported with its shrunk example, as without replay; if that run
passes, the replayed failure stands. Nothing here runs submitted code: the values recorded
come from hypothesis's strategies in the judge.
"""

from __future__ import annotations

import contextlib
import copy
import pickle
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from hypothesis.errors import UnsatisfiedAssumption
from hypothesis.strategies import DataObject

from tenxor.course.engine.upstream import given_arguments, is_hypothesis_stop, outside_the_engine

# What note() and assume() need around a body that hypothesis does not run (None: another
# hypothesis, where every test is drawn in full).
BUILD_CONTEXT = outside_the_engine()


class DrawnOut(Exception):
    """A replayed body asked `data` for more values than the recorded example drew."""


@dataclass
class Example:
    """One example of a property test: its drawn arguments (copied before the body ran),
    the values drawn from `data` in order, and how the body ended ("passed", "rejected" by
    assume, or "cut short" by hypothesis while drawing)."""

    arguments: dict[str, Any]
    draws: list[Any] = field(default_factory=list)
    data: tuple[str, ...] = ()  # the arguments that are st.data()
    ended: str = "passed"
    packed: bytes | None = None  # the arguments and draws pickled, once copied for a replay

    def fresh(self) -> tuple[dict[str, Any], list[Any]]:
        """A copy of the arguments and the draws for one replay, shared with no other: one
        pickle.loads of what the first copy pickled (deepcopy for what pickle cannot hold)."""
        if self.packed is None:
            try:
                self.packed = pickle.dumps((self.arguments, self.draws), pickle.HIGHEST_PROTOCOL)
            except (pickle.PicklingError, TypeError, AttributeError):
                self.packed = b""
        if self.packed:
            return pickle.loads(self.packed)  # noqa: S301 - pickled above, by this process
        return copy.deepcopy((self.arguments, self.draws))


class RecordingData:
    """A test's `data`, keeping a copy of every value drawn from it."""

    def __init__(self, data: DataObject, draws: list[Any]) -> None:
        self.data, self.draws = data, draws

    def draw(self, strategy: Any, label: Any = None) -> Any:
        value = self.data.draw(strategy, label)
        self.draws.append(copy.deepcopy(value))
        return value


class ReplayedData:
    """A stand-in for `data` that hands out a copy of a recorded example's values, in order."""

    def __init__(self, draws: list[Any]) -> None:
        self.values = iter(draws)

    def draw(self, strategy: Any, label: Any = None) -> Any:
        try:
            return next(self.values)
        except StopIteration:
            raise DrawnOut("the test drew more than the recorded example holds") from None


def is_property_test(function: Any) -> bool:
    """Whether `function` is a hypothesis test whose examples can be recorded."""
    return hasattr(getattr(function, "hypothesis", None), "inner_test") and can_replay()


def can_replay() -> bool:
    """Whether this hypothesis lets a body run outside its engine (note() and assume()
    need a build context)."""
    return BUILD_CONTEXT is not None


@contextlib.contextmanager
def recording(test: Any, examples: list[Example]) -> Iterator[None]:
    """While hypothesis runs `test`, append each example it runs to `examples`."""
    handle = test.hypothesis
    body, given = handle.inner_test, given_arguments(test)

    def recorded(*args: Any, **kwargs: Any) -> Any:
        data = tuple(name for name in given if isinstance(kwargs.get(name), DataObject))
        drawn = {name: kwargs[name] for name in given if name in kwargs and name not in data}
        example = Example(copy.deepcopy(drawn), data=data)
        examples.append(example)
        for name in data:
            kwargs[name] = RecordingData(kwargs[name], example.draws)
        try:
            return body(*args, **kwargs)
        except UnsatisfiedAssumption:
            example.ended = "rejected"
            raise
        except BaseException as error:
            example.ended = "cut short" if is_hypothesis_stop(error) else "failed"
            raise

    handle.inner_test = recorded
    try:
        yield
    finally:
        handle.inner_test = body


def replayed(test: Any, fixtures: dict[str, Any], examples: list[Example]) -> BaseException | None:
    """Run the body of `test` on each recorded example, with `fixtures`; None when it passed
    on every one (or was rejected where the recording was), else what it raised first."""
    body = test.hypothesis.inner_test
    for example in examples:
        drawn, draws = example.fresh()
        arguments = {**fixtures, **drawn}
        for name in example.data:
            arguments[name] = ReplayedData(draws)
        error = ended_with(body, arguments)
        if error is None:
            continue
        if isinstance(error, UnsatisfiedAssumption):
            continue  # rejected: hypothesis would not count the example either
        if isinstance(error, DrawnOut) and example.ended == "cut short":
            continue
        return error
    return None


def ended_with(body: Callable[..., Any], arguments: dict[str, Any]) -> BaseException | None:
    """Call `body` as hypothesis would, in a build context of its own; what it raised (a
    failed assertion, pytest.fail, the submission's error), but an interruption."""
    context = BUILD_CONTEXT(body)
    try:
        with context:
            body(**arguments)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as error:  # noqa: BLE001 - pytest's outcomes are BaseExceptions
        return error
    return None
