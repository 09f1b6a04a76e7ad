"""Pytest plugin for `check()`, loaded with `-p tenxor.course.feedback` next to
`tenxor.course.runner`: it says what went wrong in words a learner can act on.

It adds events to the runner's `--results` file:

- `case`: the parameters of a parametrized test as Python values ("shape=(2, 3)"), so a
  failing case is named by what it computes, not by its pytest id;
- `explained`: a failed test's error in plain words (no regex, no advice to run pytest with
  other options, never the two sides of a comparison printed the same) and, when the error
  surfaced in provided code, which of the learner's functions returned what on the way.

With `--check-seconds S` the whole run stops after S seconds, inside the test that was
running, so the learner sees the line their code was at.
"""

from __future__ import annotations

import ast
import contextlib
import dis
import importlib
import inspect
import json
import re
import signal
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import CodeType, FrameType, TracebackType
from typing import Any

import pytest

from .catalog import CATALOG, Exercise
from .runner import (
    EXAMPLE_NOTES,
    TimeLimitExceeded,
    first_lines,
    leaves,
    unfinished_exercise,
    where_in_package,
)

PYTEST_SUMMARY_CHARS = (80 - 15 - 2 - 2) // 2  # how much of each side pytest shows for ==
VALUE_CHARS = 120  # a value longer than this is shortened in the middle
FIRST_SHRINK_SECONDS = 0.5  # for the first failing example, the one a learner reads
REPRODUCE = re.compile(r"@reproduce_failure\((?P<arguments>[^)]*)\)")
RETURNS = {"RETURN_VALUE", "RETURN_CONST"}  # the instructions that return from a function
ADVICE = re.compile(r"(use '?-vv?'?|-vv to show|use -v to get)", re.IGNORECASE)
NESTED_DETAIL = re.compile(r"^\s*\+ {4,}\S")
FULL_DIFF = re.compile(r"^\s*Full diff:")
DID_NOT_RAISE = re.compile(r"DID NOT RAISE (?:any of \()?(?P<names>[\w, ]+)")


def shown(value: object, limit: int = VALUE_CHARS) -> str:
    """The repr of `value` on one line, shortened in the middle when it is long."""
    try:
        text = " ".join(repr(value).split())
    except Exception as error:  # noqa: BLE001 - a broken __repr__ is the learner's to fix
        text = f"<{type(value).__name__} whose repr raised {type(error).__name__}>"
    if len(text) <= limit:
        return text
    half = (limit - 5) // 2
    return f"{text[:half]} ... {text[-half:]}"


def case_in_words(params: dict[str, Any]) -> str:
    """A parametrized test's case as its values: "shape=(2, 3), dim=1"."""
    return ", ".join(f"{name}={shown(value, 60)}" for name, value in params.items())


def summary_repr(value: object) -> str:
    """A value as pytest shows it in the first line of a failed `==` (shortened to fit)."""
    try:
        from _pytest._io.saferepr import saferepr
    except ImportError:  # pytest moved it: shorten as it does, roughly
        return shown(value, PYTEST_SUMMARY_CHARS)
    return saferepr(value, maxsize=PYTEST_SUMMARY_CHARS)


def kind(value: object) -> str:
    """The type of a value with its article: "a tuple", "an int"."""
    name = type(value).__name__
    return f"{'an' if name[:1].lower() in 'aeiou' else 'a'} {name}"


def first_difference(left: object, right: object) -> str | None:
    """Where two sequences or arrays first differ, in words, or None."""
    if hasattr(left, "shape") and hasattr(right, "shape") and hasattr(left, "__array__"):
        import numpy as np

        a, b = np.asarray(left), np.asarray(right)
        if a.shape != b.shape:
            return f"their shapes differ: {a.shape} and {b.shape}"
        differ = np.argwhere(~((a == b) | ((a != a) & (b != b))))
        if len(differ) == 0:
            return None
        index = tuple(int(i) for i in differ[0])
        return f"they first differ at index {index}: {shown(a[index])} != {shown(b[index])}"
    if not (isinstance(left, (list, tuple, str)) and isinstance(right, (list, tuple, str))):
        return None
    for position, (x, y) in enumerate(zip(left, right)):
        if x != y:
            return f"they first differ at position {position}: {shown(x)} != {shown(y)}"
    if len(left) != len(right):
        return f"one has {len(left)} items, the other {len(right)}"
    return None


def comparison_in_words(left: object, right: object) -> list[str]:
    """The lines that explain a failed `left == right`, never with both sides printed the
    same: when their reprs agree, their types or the first position where they differ."""
    a, b = shown(left), shown(right)
    where = first_difference(left, right)
    if a != b:
        return [f"{a} == {b}", *([where] if where else [])]
    if type(left) is not type(right):
        return [f"{a} ({kind(left)}) == {b} ({kind(right)})"]
    if where:
        return [f"two values of type {type(left).__name__} that print alike, but {where}"]
    return [f"two values that both print as {a} but are not equal"]


def exception_of(error: BaseException) -> BaseException | None:
    """The exception a `pytest.raises` block caught but rejected (its message did not match),
    found in the frame of the block's exit."""
    trace: TracebackType | None = error.__traceback__
    while trace is not None:
        frame = trace.tb_frame
        caught = frame.f_locals.get("exc_val")
        if frame.f_globals.get("__name__") == "_pytest.raises" and isinstance(
            caught, BaseException
        ):
            return caught
        trace = trace.tb_next
    return None


def arrays_compared(error: BaseException) -> tuple[Any, Any] | None:
    """The actual and desired arrays of a failed `numpy.testing` assertion, from its frame."""
    trace: TracebackType | None = error.__traceback__
    while trace is not None:
        frame = trace.tb_frame
        if frame.f_code.co_name == "assert_array_compare" and {"x", "y"} <= set(frame.f_locals):
            return frame.f_locals["x"], frame.f_locals["y"]
        trace = trace.tb_next
    return None


def plain_message(error: BaseException, seconds: float, memory_mb: int) -> str:
    """A failed test's error in plain words."""
    if isinstance(error, TimeLimitExceeded):
        return f"Stopped here after {seconds:g} s, the time a check may take."
    if isinstance(error, MemoryError):
        return (
            f"MemoryError: the tests ran out of memory (a check may use {memory_mb} MB).\n"
            "Is something growing without end?"
        )
    missing = DID_NOT_RAISE.search(str(error))
    if missing and type(error).__name__ == "Failed":
        return f"Expected {missing['names']} to be raised here, but nothing was raised."
    caught = exception_of(error) if isinstance(error, AssertionError) else None
    if caught is not None:
        return (
            f"{type(caught).__name__} raised, as expected, but its message does not name the "
            f"values it should (the case's values, in any words): {str(caught)!r}"
        )
    arrays = arrays_compared(error) if isinstance(error, AssertionError) else None
    if arrays is not None:
        header = str(error).strip().splitlines()[0]
        where = first_difference(*arrays)
        got, expected = shown(arrays[0]), shown(arrays[1])
        lines = [f"AssertionError: {header}", f"got      {got}", f"expected {expected}"]
        return "\n".join(lines + ([where] if where else []))
    lines = [line for line in str(error).splitlines() if line.strip()]
    if isinstance(error, AssertionError) and lines and not lines[0].startswith("assert "):
        # The test's own message says it; pytest's "assert False, where ..." adds nothing.
        lines = lines[: next((k for k, line in enumerate(lines) if line.startswith("assert ")),
                             len(lines))]  # fmt: skip
    # pytest's full diff (printed in full under CI) repeats what its first lines say.
    lines = lines[: next((k for k, line in enumerate(lines) if FULL_DIFF.match(line)), len(lines))]
    kept = [line for line in lines if not NESTED_DETAIL.match(line) and not ADVICE.search(line)]
    return "\n".join([f"{type(error).__name__}: {kept[0] if kept else ''}", *kept[1:]])


# ---------------------------------------------------------------------------------------------
# Errors that surface in provided code: which exercise function returned what on the way
# ---------------------------------------------------------------------------------------------


@dataclass
class Call:
    """One call of an exercise function: its arguments and what it returned (as text)."""

    exercise: Exercise
    arguments: str
    returned: str = ""


def exercise_codes() -> dict[CodeType, Exercise]:
    """The code object of every exercise function of the catalog, with its exercise."""
    codes = {}
    for item in CATALOG:
        try:
            function = getattr(importlib.import_module(item.module), item.function)
            codes[inspect.unwrap(function).__code__] = item
        except Exception:  # noqa: BLE001, S112 - a module that does not import has no calls
            continue
    return codes


def arguments_of(frame: FrameType) -> str:
    """The arguments a function was called with, from its frame at the call."""
    code = frame.f_code
    count = code.co_argcount + code.co_kwonlyargcount
    count += bool(code.co_flags & inspect.CO_VARARGS) + bool(code.co_flags & inspect.CO_VARKEYWORDS)
    names = code.co_varnames[:count]
    return ", ".join(f"{name}={shown(frame.f_locals.get(name), 80)}" for name in names)


def returns_normally(frame: FrameType) -> bool:
    """Whether a frame that is being left returns a value (rather than passing on an exception
    or yielding)."""
    return dis.opname[frame.f_code.co_code[frame.f_lasti]] in RETURNS


def last_return(run: Callable[[], Any]) -> Call | None:
    """Run `run` and return the last call of an exercise function that returned before it
    ended (None if none did)."""
    codes = exercise_codes()
    pending: dict[FrameType, Call] = {}
    finished: list[Call] = []

    def watch(frame: FrameType, event: str, value: Any) -> None:
        if frame.f_code not in codes:
            return
        if event == "call":
            pending[frame] = Call(codes[frame.f_code], arguments_of(frame))
        elif event == "return" and frame in pending:
            call = pending.pop(frame)
            if returns_normally(frame):
                call.returned = shown(value)
                finished[:] = [call]

    sys.setprofile(watch)
    try:
        run()
    except BaseException:  # noqa: BLE001, S110 - the failure is already recorded
        pass
    finally:
        sys.setprofile(None)
    return finished[-1] if finished else None


def exercise_files() -> set[str]:
    """The files that hold exercises, relative to the course folder: "tenxor/strides.py"."""
    return {item.path for item in CATALOG}


def in_provided_code(where: str | None) -> bool:
    """Whether a "file:line in function" location lies in a file that holds no exercise."""
    return where is not None and where.split(":", 1)[0] not in exercise_files()


def learner_line(error: BaseException, root: Path) -> str | None:
    """The innermost line of an exercise file that the error passed through."""
    found = None
    files = exercise_files()
    for frame, line in traceback.walk_tb(error.__traceback__):
        path = Path(frame.f_code.co_filename)
        if path.is_relative_to(root) and path.relative_to(root).as_posix() in files:
            found = f"{path.relative_to(root).as_posix()}:{line} in {frame.f_code.co_name}"
    return found


def provided_code_in_words(called_from: str | None, returned: Call | None) -> list[str]:
    """Where an error that surfaced in provided code came from, as far as the learner's own
    functions tell: the line of theirs that called it, and the last of their functions to
    return a value before it."""
    lines = ["That line is provided code."]
    if called_from:
        lines[0] += f" It was called from your code at {called_from}."
    if returned:
        name, number = returned.exercise.function, returned.exercise.id
        lines += [
            f"Before the error, your {name} (exercise {number}) returned {returned.returned}",
            f"when called as {name}({returned.arguments})",
        ]
    return lines


def reproduction(error: BaseException) -> tuple[str, bytes] | None:
    """The hypothesis version and blob that replay a property test's failing example, from the
    note hypothesis adds when `print_blob` is set."""
    for note in getattr(error, "__notes__", []):
        found = REPRODUCE.search(note) if isinstance(note, str) else None
        if found:
            return ast.literal_eval(f"({found['arguments']})")
    return None


def replaying(item: pytest.Item, error: BaseException) -> Callable[[], Any]:
    """A function that runs a failed test again: a property test with its failing example
    only (which hypothesis can replay), any other test as it ran."""
    blob = reproduction(error)
    test = getattr(item, "obj", None)
    if blob is None or not hasattr(test, "_hypothesis_internal_use_reproduce_failure"):
        return item.runtest

    def replay() -> None:
        test._hypothesis_internal_use_reproduce_failure = blob
        try:
            item.runtest()
        finally:
            test._hypothesis_internal_use_reproduce_failure = None

    return replay


def example_of(error: BaseException, leaf: BaseException) -> str | None:
    """The failing input hypothesis found (with the values drawn inside the test), or None."""
    found = [n for e in (leaf, error) for n in getattr(e, "__notes__", []) if isinstance(n, str)]
    notes = list(dict.fromkeys(found))
    example = [note for note in notes if note.startswith(EXAMPLE_NOTES)][:1]
    if not example:
        return None
    return "\n".join(example + [note for note in notes if note.startswith("Draw ")])


# ---------------------------------------------------------------------------------------------
# The plugin
# ---------------------------------------------------------------------------------------------


def bound_shrinking(seconds: float) -> None:
    """Let hypothesis shrink a failing example for at most `seconds` per test (hypothesis
    offers this constant for patching)."""
    with contextlib.suppress(ImportError):
        from hypothesis.internal.conjecture import engine

        engine.MAX_SHRINKING_SECONDS = seconds


def on_alarm(signum: int, frame: Any) -> None:
    raise TimeLimitExceeded("the check ran longer than its time limit")


class Feedback:
    """Writes `case` and `explained` events; stops the run at its time limit."""

    def __init__(self, config: pytest.Config) -> None:
        self.root = Path(str(config.rootpath))
        self.seconds = config.getoption("--check-seconds")
        self.memory_mb = config.getoption("--check-memory-mb")
        self.stream = open(config.getoption("--results"), "a", encoding="utf-8")  # noqa: SIM115
        self.first_failure = True  # only the first failure is explained in full

    def write(self, **event: Any) -> None:
        self.stream.write(json.dumps(event) + "\n")
        self.stream.flush()

    def pytest_sessionstart(self) -> None:
        self.times = {"started": time.time()}
        bound_shrinking(FIRST_SHRINK_SECONDS)
        if self.seconds:
            signal.signal(signal.SIGALRM, on_alarm)
            signal.setitimer(signal.ITIMER_REAL, self.seconds)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        params = getattr(getattr(item, "callspec", None), "params", None)
        if params:
            self.write(event="case", test=item.nodeid, case=case_in_words(params))

    @pytest.hookimpl(tryfirst=True)
    def pytest_assertrepr_compare(self, op: str, left: object, right: object) -> list[str] | None:
        """Leave a comparison to pytest, unless pytest would print its two sides the same."""
        if op != "==" or summary_repr(left) != summary_repr(right):
            return None
        return comparison_in_words(left, right)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo):
        report = (yield).get_result()
        if not report.failed or call.excinfo is None:
            return
        found = leaves(call.excinfo.value)
        leaf = next((one for one in found if unfinished_exercise(one) is None), found[0])
        if any(isinstance(one, TimeLimitExceeded) for one in found):
            item.session.shouldstop = "the check reached its time limit"
        message = first_lines(plain_message(leaf, self.seconds, self.memory_mb))
        where = where_in_package(leaf, self.root)
        traced = None
        if self.first_failure and in_provided_code(where) and unfinished_exercise(leaf) is None:
            called_from = learner_line(leaf, self.root)
            rerun = replaying(item, call.excinfo.value)
            traced = provided_code_in_words(called_from, last_return(rerun))
        if self.first_failure:
            # Only the first failure's example is shown: later ones need not be the smallest.
            bound_shrinking(0.0)
        self.first_failure = False
        example = example_of(call.excinfo.value, leaf)
        self.write(
            event="explained", test=item.nodeid, message=message, example=example, traced=traced
        )

    def pytest_collection_finish(self) -> None:
        self.times["collected"] = time.time()

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self) -> None:
        if self.seconds:
            signal.setitimer(signal.ITIMER_REAL, 0)
        self.write(event="timing", **self.times, finished=time.time())

    def pytest_unconfigure(self) -> None:
        self.stream.close()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("tenxor check feedback")
    group.addoption(
        "--check-seconds", type=float, default=0.0, metavar="S", help="stop the run after S s"
    )
    group.addoption(
        "--check-memory-mb", type=int, default=0, metavar="MB", help="the memory limit, to name"
    )


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("--results"):
        config.pluginmanager.register(Feedback(config), "tenxor-feedback")
