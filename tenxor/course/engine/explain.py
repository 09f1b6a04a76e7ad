"""Turn the exception of a failed test into a `Failure` record (see failure.py).

The record says what the test found (a `Mismatch` or `WrongError` gives what was compared,
both values and the rule; a numpy.testing failure gives both arrays), the learner's line (the
frame of the exercise under test, with an earlier exercise it went into named as such), and,
when the failed test is run once more under watch, the last call of the exercise's function
with its arguments and what it returned or raised.

What it reads of pytest, hypothesis, NumPy and CPython beyond their documented API (private
frames and attributes, the words of their messages, opcode names) is named in upstream.py.
"""

from __future__ import annotations

import importlib
import inspect
import re
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass, fields, is_dataclass, replace
from pathlib import Path
from types import CodeType, FrameType
from typing import Any

from ..catalog import BY_ID, CATALOG, EXERCISE_FILES, Exercise
from ..failure import Failure, Mismatch, WrongError, error_in_words, shown, written_as
from .upstream import (
    OPERATOR_MODULE,
    can_replay,
    compared_arrays,
    did_not_raise,
    example_notes,
    rejected_by_raises,
    replaying_example,
    reproduction,
    returns_normally,
    without_pytest_detail,
    yields,
)

UNFINISHED = re.compile(r"^Exercise (?P<id>\d+\.\d+):")
MESSAGE_LINES, MESSAGE_CHARS = 8, 800
CALL_CHARS = 160  # a longer call shows its longest arguments in brief, each one whole
WHOLE_ITEMS = 1000  # a container with more items than this is always shown in brief


class TimeLimitExceeded(BaseException):
    """Raised inside a test that ran past its time limit (a BaseException, so that `except
    Exception` in the code under test, or hypothesis, does not swallow it)."""


def first_lines(text: str) -> str:
    """At most a few lines and a few hundred characters of `text`."""
    lines = text.strip().splitlines()
    short = "\n".join(lines[:MESSAGE_LINES]) + ("\n..." if len(lines) > MESSAGE_LINES else "")
    return short if len(short) <= MESSAGE_CHARS else short[:MESSAGE_CHARS] + " ..."


def leaves(error: BaseException) -> list[BaseException]:
    """The exceptions inside an exception group (hypothesis reports several failures as one
    group), or the exception itself."""
    inner = getattr(error, "exceptions", None)
    if isinstance(inner, (tuple, list)) and inner:
        return [leaf for member in inner for leaf in leaves(member)]
    return [error]


def unfinished_exercise(error: BaseException) -> str | None:
    """The exercise whose stub raised `error`, if it is such a NotImplementedError."""
    match = UNFINISHED.match(str(error)) if isinstance(error, NotImplementedError) else None
    return match["id"] if match else None


def words(text: str) -> bool:
    """Whether `text` is a name or a few words (read whole), not a long text or a listing."""
    return len(text) <= 40 and "\n" not in text


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
        return (
            f"first difference at index {index}: got {shown(a[index])}, expected {shown(b[index])}"
        )
    if not (isinstance(left, (list, tuple, str)) and isinstance(right, (list, tuple, str))):
        return None
    if isinstance(left, str) and isinstance(right, str) and words(left) and words(right):
        return None  # two names ('list', 'tuple') differ as wholes, not letter by letter
    for position, (x, y) in enumerate(zip(left, right)):
        if x != y:
            return f"first difference at position {position}: got {shown(x)}, expected {shown(y)}"
    if len(left) != len(right):
        return f"one has {len(left)} items, the other {len(right)}"
    return None


def kind(value: object) -> str:
    """The type of a value with its article: "a tuple", "an int"."""
    name = type(value).__name__
    return f"{'an' if name[:1].lower() in 'aeiou' else 'a'} {name}"


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


# ---------------------------------------------------------------------------------------------
# What the test found
# ---------------------------------------------------------------------------------------------


def assertion_in_words(error: BaseException) -> str:
    """A plain assertion's message without pytest's nested explanations and advice."""
    lines = [line for line in str(error).splitlines() if line.strip()]
    if lines and not lines[0].startswith("assert "):
        # The test's own message says it; pytest's "assert False, where ..." adds nothing.
        end = next((k for k, line in enumerate(lines) if line.startswith("assert ")), len(lines))
        lines = lines[:end]
    kept = without_pytest_detail(lines)
    return "\n".join([f"{type(error).__name__}: {kept[0] if kept else ''}", *kept[1:]])


def finding(error: BaseException, seconds: float, memory_mb: int) -> Failure:
    """What a failed test found, from its exception alone."""
    if isinstance(error, TimeLimitExceeded):
        limit = f"after {seconds:g} s, the time a check may take" if seconds else "at its limit"
        return Failure(f"Stopped here {limit}.", timed_out=True)
    if isinstance(error, MemoryError):
        limit = f" (a check may use {memory_mb} MB)" if memory_mb else ""
        return Failure(
            f"MemoryError: the tests ran out of memory{limit}.\nIs something growing without end?"
        )
    if isinstance(error, WrongError):
        raised = error.got if error.__cause__ is not None else None
        rule = error.rule or None
        return Failure(str(error), what=error.what, got=error.got, expected=error.expected,
                       rule=rule, raised=raised)  # fmt: skip
    if isinstance(error, Mismatch):
        where = first_difference(error.got, error.expected)
        message = str(error) + (f"\n{where}" if where else "")
        got, expected = shown(error.got), shown(error.expected)
        return Failure(
            message, what=error.what, got=got, expected=expected, rule=error.rule or None
        )
    due = did_not_raise(error)
    if due:
        return Failure(f"expected {due}, got nothing raised", expected=due, got="nothing raised")
    caught = rejected_by_raises(error) if isinstance(error, AssertionError) else None
    if caught is not None:
        return Failure(
            f"{type(caught).__name__} raised, as expected, but its message does not name the "
            f"values it should (the case's values, in any words): {str(caught)!r}",
            raised=error_in_words(caught),
        )
    arrays = compared_arrays(error) if isinstance(error, AssertionError) else None
    if arrays is not None:
        got, expected = shown(arrays[0]), shown(arrays[1])
        where = first_difference(*arrays)
        message = f"the elements: got {got}, expected {expected}" + (f"\n{where}" if where else "")
        return Failure(message, what="the elements", got=got, expected=expected)
    if isinstance(error, AssertionError):
        return Failure(assertion_in_words(error))
    return Failure(error_in_words(error), raised=error_in_words(error))


# ---------------------------------------------------------------------------------------------
# The learner's line
# ---------------------------------------------------------------------------------------------


def relative_path(frame: FrameType, root: Path) -> str | None:
    """The file a frame runs, relative to the course folder ("tenxor/views.py"), or None
    when it lies outside."""
    path = Path(frame.f_code.co_filename)
    return path.relative_to(root).as_posix() if path.is_relative_to(root) else None


def exercise_at(frame: FrameType, root: Path) -> Exercise | None:
    """The exercise whose function `frame` runs, if it runs one in the course tree."""
    relative, name = relative_path(frame, root), frame.f_code.co_name
    return next((e for e in CATALOG if e.path == relative and e.function == name), None)


def package_frames(error: BaseException, root: Path) -> list[tuple[FrameType, int]]:
    """The frames of the package (not its tooling) the error passed through, outermost first."""
    package, tooling = root / "tenxor", root / "tenxor" / "course"
    found = []
    for frame, line in traceback.walk_tb(error.__traceback__):  # no source read: cheap
        path = Path(frame.f_code.co_filename)
        if path.is_relative_to(package) and not path.is_relative_to(tooling):
            found.append((frame, line))
    return found


def located(frame: FrameType, line: int, root: Path) -> str:
    """A frame's place: "tenxor/views.py:104 in unsqueeze_layout"."""
    return f"{relative_path(frame, root)}:{line} in {frame.f_code.co_name}"


def learners_line(error: BaseException, root: Path, exercise: str) -> tuple[str | None, str | None]:
    """Where the error was raised, as the learner reads it: the line of the exercise under
    test it passed through last, and, when it was raised in an earlier exercise's function
    called from there, "inside your unsqueeze_layout (3.3), called from your matmul at line
    85". Without a frame of the exercise under test: the last line of the package."""
    frames = package_frames(error, root)
    if not frames:
        return None, None
    own = [
        k
        for k, (frame, _) in enumerate(frames)
        if (e := exercise_at(frame, root)) and e.id == exercise
    ]
    if not own:
        return located(*frames[-1], root), None
    frame, line = frames[own[-1]]
    deeper = [exercise_at(f, root) for f, _ in frames[own[-1] + 1 :]]
    earlier = [e for e in deeper if e is not None and e.id != exercise]
    inside = None
    if earlier:
        name = BY_ID[exercise].function
        inside = (
            f"inside your {earlier[-1].function} ({earlier[-1].id}), "
            f"called from your {name} at line {line}"
        )
    return located(frame, line, root), inside


# ---------------------------------------------------------------------------------------------
# The call: the failed test run once more, watching the exercise's function
# ---------------------------------------------------------------------------------------------


@dataclass
class Call:
    """One call of an exercise function: its arguments and what it returned or raised."""

    exercise: Exercise
    text: str
    returned: str | None = None
    raised: bool = False


def exercise_codes() -> dict[CodeType, Exercise]:
    """The code object of every exercise function, as its module holds it now."""
    codes = {}
    for item in CATALOG:
        try:
            function = getattr(importlib.import_module(item.module), item.function)
            codes[inspect.unwrap(function).__code__] = item
        except Exception:  # noqa: BLE001, S112 - a module that does not import has no calls
            continue
    return codes


def function_name(value: object) -> str | None:
    """How a function is written in code: `tag`, `operator.mul`, `sum`; None for a value that
    is not a function."""
    if not callable(value) or not hasattr(value, "__qualname__") or isinstance(value, type):
        return None
    name = value.__qualname__.rsplit(".", 1)[-1]
    return f"operator.{name}" if getattr(value, "__module__", None) == OPERATOR_MODULE else name


def in_brief(value: object) -> str:
    """A value in a few words that are never cut: a tensor by its shape and dtype, a long
    list by its length, a short list or tuple by its items in brief.

    >>> in_brief(([0.5] * 24, (2, 3, 4)))
    '(<list of 24 items>, (2, 3, 4))'
    """
    named = function_name(value)
    if named is not None:
        return named
    shape, dtype = getattr(value, "shape", None), getattr(value, "dtype", None)
    if shape is not None and dtype is not None:
        dtype_name = getattr(dtype, "name", dtype)
        return f"<{type(value).__name__} of shape {tuple(shape)}, dtype {dtype_name}>"
    if type(value) in (list, tuple) and len(value) <= 4:  # type: ignore[arg-type]
        return written_as(value, [in_brief(item) for item in value])  # type: ignore[arg-type]
    if isinstance(value, (list, tuple, dict, set, frozenset)):
        return f"<{type(value).__name__} of {len(value)} items>"
    if is_dataclass(value) and not isinstance(value, type):
        parts = [f"{f.name}={in_brief(getattr(value, f.name))}" for f in fields(value)]
        text = f"{type(value).__name__}({', '.join(parts)})"
    else:
        text = shown(value, 10 * CALL_CHARS)
    return text if len(text) <= CALL_CHARS else f"<{type(value).__name__}>"


def argument_in_full(value: object) -> str:
    """An argument as the call shows it while the call is short enough: its repr, whole (a
    function by its name)."""
    named = function_name(value)
    if named is not None:
        return named
    if isinstance(value, (list, tuple, dict, set, frozenset)) and len(value) > WHOLE_ITEMS:
        return in_brief(value)
    return shown(value, 10 * CALL_CHARS)


def call_text(function: str, arguments: list[tuple[str, object]]) -> str:
    """A call in words, its arguments by name: while it is longer than CALL_CHARS, its longest
    argument is shown in brief instead, so no argument is ever cut in the middle.

    >>> call_text("read_values", [("data", [0.5] * 40), ("layout", (2, 20))])
    'read_values(data=<list of 40 items>, layout=(2, 20))'
    """
    texts = [argument_in_full(value) for _, value in arguments]
    briefed: set[int] = set()
    while sum(map(len, texts)) + 4 * len(texts) + len(function) > CALL_CHARS:
        longest = max(
            (k for k in range(len(texts)) if k not in briefed),
            key=lambda k: len(texts[k]),
            default=None,
        )
        if longest is None:
            break
        texts[longest] = in_brief(arguments[longest][1])
        briefed.add(longest)
    joined = ", ".join(f"{name}={text}" for (name, _), text in zip(arguments, texts))
    return f"{function}({joined})"


def call_in_words(frame: FrameType) -> str:
    """A call as it was made, its arguments by name: "unsqueeze_layout(layout=..., dim=0)"."""
    code = frame.f_code
    count = code.co_argcount + code.co_kwonlyargcount
    count += bool(code.co_flags & inspect.CO_VARARGS) + bool(code.co_flags & inspect.CO_VARKEYWORDS)
    names = code.co_varnames[:count]
    return call_text(code.co_name, [(name, frame.f_locals.get(name)) for name in names])


def call_of(function: Callable[..., Any], args: tuple, kwargs: dict[str, Any]) -> str:
    """A call of `function` in words, its arguments by name where its signature names them."""
    try:
        named = inspect.signature(function).bind(*args, **kwargs).arguments
    except (TypeError, ValueError):
        named = {**{f"argument {k}": value for k, value in enumerate(args)}, **kwargs}
    return call_text(function.__name__, list(named.items()))


def is_generator(code: CodeType) -> bool:
    """Whether `code` is a generator function's: its calls yield rather than return."""
    return bool(code.co_flags & inspect.CO_GENERATOR)


def yielded_in_words(values: list[Any], finished: bool) -> str:
    """What a generator call gave, as the report says it."""
    if finished:
        return f"a generator that yielded {shown(values)}"
    return f"a generator that had yielded {shown(values)} when the test stopped taking items"


def watched_calls(run: Callable[[], Any], codes: dict[CodeType, Exercise]) -> list[Call]:
    """Run `run`, watching the functions of `codes`: their calls, in the order they ended (a
    generator's call ends when it is exhausted, or when the run ends before)."""
    pending: dict[FrameType, Call] = {}
    yielded: dict[FrameType, list[Any]] = {}
    ended: list[Call] = []

    def watch(frame: FrameType, event: str, value: Any) -> None:
        if frame.f_code not in codes:
            return
        if event == "call" and frame not in pending:  # not a generator taking up again
            pending[frame] = Call(codes[frame.f_code], call_in_words(frame))
        elif event == "return" and frame in pending:
            generator = is_generator(frame.f_code)
            if generator and yields(frame):
                yielded.setdefault(frame, []).append(value)
                return
            call = pending.pop(frame)
            if returns_normally(frame):
                items = yielded.pop(frame, [])
                call.returned = yielded_in_words(items, True) if generator else shown(value)
            else:
                call.raised = True
            ended.append(call)

    sys.setprofile(watch)
    try:
        run()
    except BaseException:  # noqa: BLE001, S110 - the failure is already recorded
        pass
    finally:
        sys.setprofile(None)
    for frame, call in pending.items():
        if frame in yielded:
            call.returned = yielded_in_words(yielded[frame], False)
            ended.append(call)
    return ended


def replaying(test: Any, run: Callable[[], None], error: BaseException) -> Callable[[], Any]:
    """A function that runs a failed test again: a property test with its failing example
    only (which hypothesis can replay), any other test as it ran."""
    blob = reproduction(error)
    if blob is None or not can_replay(test):
        return run

    def replay() -> None:
        with replaying_example(test, blob):
            run()

    return replay


def example_of(error: BaseException, leaf: BaseException) -> str | None:
    """The failing input hypothesis found, with the values drawn inside the test by their
    labels ("dim: 2"; "drawn: 2" for a value drawn without one), or None."""
    found = [n for e in (leaf, error) for n in getattr(e, "__notes__", []) if isinstance(n, str)]
    described = example_notes(list(dict.fromkeys(found)))
    return first_lines("\n".join(described)) if described else None


# ---------------------------------------------------------------------------------------------
# The record
# ---------------------------------------------------------------------------------------------


def explained_leaf(error: BaseException) -> BaseException:
    """The exception a failed test's record explains: the first of a group that is not an
    unfinished exercise's stub (else the first)."""
    found = leaves(error)
    return next((leaf for leaf in found if unfinished_exercise(leaf) is None), found[0])


def raised_error(leaf: BaseException) -> BaseException:
    """The error that was raised in the code under test: for a WrongError, the error of the
    wrong type it reports; else the exception itself."""
    return leaf.__cause__ if isinstance(leaf, WrongError) and leaf.__cause__ else leaf


def explained(
    error: BaseException,
    root: Path,
    exercise: str,
    seconds: float = 0.0,
    memory_mb: int = 0,
    case: str | None = None,
) -> Failure:
    """The record of a failed test of `exercise` from its exception."""
    found = leaves(error)
    unfinished = [unfinished_exercise(leaf) for leaf in found]
    leaf = explained_leaf(error)
    record = finding(leaf, seconds, memory_mb)
    raised = raised_error(leaf)
    line, inside = learners_line(raised, root, exercise) if exercise in BY_ID else (None, None)
    expected = record.expected
    if expected is None and record.raised:
        expected = expected_in_test(leaf, root)
    stopped = any(isinstance(leaf, TimeLimitExceeded) for leaf in found)
    return replace(
        record,
        call=running_call(leaf, root, exercise) if stopped else record.call,
        expected=expected,
        message=first_lines(record.message),
        line=line,
        inside=inside,
        case=case,
        example=example_of(error, leaf),
        unfinished=unfinished[0] if all(unfinished) else None,
        timed_out=stopped,
    )


def running_call(error: BaseException, root: Path, exercise: str) -> str | None:
    """The call of the exercise's function that was running when `error` stopped it (its
    innermost one), in words."""
    running = [
        frame
        for frame, _ in package_frames(error, root)
        if (item := exercise_at(frame, root)) is not None and item.id == exercise
    ]
    return call_in_words(running[-1]) if running else None


def with_calls(record: Failure, exercise: str, calls: list[Call], provided: bool) -> Failure:
    """The record with the last call of the exercise's own function that ended, and, when
    the error was raised in provided code (`provided`), the last exercise function that
    returned before it, with what it returned."""
    error = record.raised  # what the test's error was, before the call says whether it raised it
    returned = [call for call in calls if call.returned is not None]
    if provided and error and returned:
        last = returned[-1]
        told = f"your {last.exercise.function} ({last.exercise.id}) returned {last.returned}"
        record = replace(record, before=f"{told} when called as {last.text}")
    own = [call for call in calls if call.exercise.id == exercise]
    if own:
        call = own[-1]
        raised = error if call.raised else None
        record = replace(record, call=call.text, returned=call.returned, raised=raised)
    return record


def raised_in_provided_code(error: BaseException, root: Path) -> bool:
    """Whether the innermost line of the package that `error` passed through lies in a file
    that holds no exercise."""
    frames = package_frames(error, root)
    return bool(frames) and relative_path(frames[-1][0], root) not in EXERCISE_FILES


def expected_in_test(error: BaseException, root: Path) -> str | None:
    """The value the test had computed as `expected` when the error reached it, if any."""
    tests = root / "tests"
    for frame, _ in reversed(list(traceback.walk_tb(error.__traceback__))):
        if Path(frame.f_code.co_filename).is_relative_to(tests) and "expected" in frame.f_locals:
            return shown(frame.f_locals["expected"])
    return None
