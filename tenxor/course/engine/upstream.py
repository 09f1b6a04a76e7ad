"""What the check engine relies on in pytest, hypothesis, NumPy, setuptools and CPython that
they do not promise to keep, named in this one module.

The engine reads some of their private parts: modules and attributes whose names start with
`_` (`_pytest.raises`, `_hypothesis_pytestplugin`, a test's
`_hypothesis_internal_use_reproduce_failure`), internal modules (hypothesis's shrinking
engine, NumPy's comparison frame), attributes pytest does not document (a test's `callspec`,
a skip's report), the words of their messages (pytest's "DID NOT RAISE" and its advice to
rerun with -v, hypothesis's "Failing test case" and "Draw 1 (dim): ..." notes), the name of
the finder of a setuptools editable install, and CPython's opcode names. Any release of one of
them may change these without notice.

So they are written here alone, as small named functions and constants, and the rest of the
engine calls these. tests/tooling/test_upstream.py runs each one against the installed
pytest, hypothesis, NumPy and Python; when one stops matching, that test names the package,
its version and the name here that must follow it. (pyproject.toml caps pytest and hypothesis
at their next major version for the same reason.)

This module imports only the standard library at its top: the warm worker, which never
imports the tenxor package, loads it by its path (see worker.py), and `tenxor check` starts
without pytest.
"""

from __future__ import annotations

import ast
import dis
import re
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType, TracebackType
from typing import Any

# ---------------------------------------------------------------------------------------------
# pytest
# ---------------------------------------------------------------------------------------------

# hypothesis's pytest plugin, a private module, named with -p where plugins do not load by
# themselves (the warm worker disables pytest's plugin autoload).
HYPOTHESIS_PLUGIN = "_hypothesis_pytestplugin"
# How many characters of each side pytest shows in the first line of a failed `==`: its own
# formula in _pytest/assertion/util.py, (80 - 15 - len(op) - 2) // 2.
SUMMARY_CHARS = (80 - 15 - len("==") - 2) // 2
# The module whose frame ends a `pytest.raises` block, and its local holding what was raised.
RAISES_MODULE, RAISES_CAUGHT = "_pytest.raises", "exc_val"
# The type pytest raises when a `pytest.raises` block saw nothing raised, and its message.
FAILED = "Failed"
DID_NOT_RAISE = re.compile(r"DID NOT RAISE (?:any of \()?(?P<names>[\w, ]+)")
# Lines of pytest's message for a failed assertion that a learner's report leaves out: its
# deeper "+    where" explanations, the full diff, and its advice to rerun with -v or -vv.
NESTED_DETAIL = re.compile(r"^\s*\+ {4,}\S")
FULL_DIFF = re.compile(r"^\s*Full diff:")
ADVICE = re.compile(r"(use '?-vv?'?|-vv to show|use -v to get)", re.IGNORECASE)


def summary_side(value: object) -> str | None:
    """A value as pytest writes it in the first line of a failed `==`; None where pytest no
    longer has the function that writes it. (No name here starts with `pytest_`: pytest takes
    every such name in runner.py, a plugin, for a hook.)"""
    try:
        from _pytest._io.saferepr import saferepr
    except ImportError:
        return None
    return saferepr(value, maxsize=SUMMARY_CHARS)


def parametrized_case(item: Any) -> tuple[dict[str, Any], str] | None:
    """A parametrized test's case: its values by parameter name, and the id pytest gave it
    ("shape0-1"); None for a test without parameters."""
    callspec = getattr(item, "callspec", None)
    params = getattr(callspec, "params", None)
    if not params:
        return None
    return dict(params), str(callspec.id)


def skip_reason(report: Any) -> str:
    """Why pytest skipped a test ("Skipped: no GPU"), from its report."""
    return str(report.longrepr[-1]) if isinstance(report.longrepr, tuple) else "skipped"


def collect_error_line(report: Any) -> str:
    """The last line of pytest's report on a test file it could not collect: the error
    ("E   ModuleNotFoundError: No module named 'numpy'")."""
    lines = str(report.longrepr).strip().splitlines()
    return lines[-1] if lines else ""


def rejected_by_raises(error: BaseException) -> BaseException | None:
    """The exception a `pytest.raises` block caught but rejected (its message did not match),
    when `error` is that block's failure; else None."""
    trace: TracebackType | None = error.__traceback__
    while trace is not None:
        frame = trace.tb_frame
        caught = frame.f_locals.get(RAISES_CAUGHT)
        if frame.f_globals.get("__name__") == RAISES_MODULE and isinstance(caught, BaseException):
            return caught
        trace = trace.tb_next
    return None


def did_not_raise(error: BaseException) -> str | None:
    """The exception types a `pytest.raises` block waited for in vain ("ValueError",
    "ValueError, TypeError"), when `error` is pytest's failure saying so; else None."""
    found = DID_NOT_RAISE.search(str(error)) if type(error).__name__ == FAILED else None
    return found["names"] if found else None


def without_pytest_detail(lines: list[str]) -> list[str]:
    """The lines of pytest's message for a failed assertion without its full diff, its deeper
    "+    where" explanations and its advice to rerun with -v."""
    end = next((k for k, line in enumerate(lines) if FULL_DIFF.match(line)), len(lines))
    kept = [line for line in lines[:end] if not NESTED_DETAIL.match(line)]
    return [line for line in kept if not ADVICE.search(line)]


# ---------------------------------------------------------------------------------------------
# hypothesis
# ---------------------------------------------------------------------------------------------

# The note hypothesis adds to a failure when `print_blob` is set, and the test's attribute
# that makes it replay that example only (what @reproduce_failure sets).
REPRODUCE = re.compile(r"@reproduce_failure\((?P<arguments>[^)]*)\)")
REPLAY_ATTRIBUTE = "_hypothesis_internal_use_reproduce_failure"
# The notes that give a failing example, and those that give the values drawn in the test.
EXAMPLE_NOTES = ("Falsifying example", "Failing test case", "Falsifying explicit example")
DRAW_NOTE = "Draw "
LABELLED_DRAW = re.compile(r"^Draw \d+ \((?P<label>[^)]*)\): ")
UNLABELLED_DRAW = re.compile(r"^Draw \d+: ")


def reproduction(error: BaseException) -> tuple[str, bytes] | None:
    """The hypothesis version and blob that replay a property test's failing example, from the
    note hypothesis adds to its failure when `print_blob` is set; None without one."""
    for note in getattr(error, "__notes__", []):
        found = REPRODUCE.search(note) if isinstance(note, str) else None
        if found:
            return ast.literal_eval(f"({found['arguments']})")
    return None


def can_replay(test: Any) -> bool:
    """Whether `test` is a hypothesis test that can replay one example from its blob."""
    return hasattr(test, REPLAY_ATTRIBUTE)


@contextmanager
def replaying_example(test: Any, reproduction: tuple[str, bytes]) -> Iterator[None]:
    """In the block, the hypothesis test `test` runs the example of `reproduction` (the
    hypothesis version and blob of a @reproduce_failure) and nothing else."""
    setattr(test, REPLAY_ATTRIBUTE, reproduction)
    try:
        yield
    finally:
        setattr(test, REPLAY_ATTRIBUTE, None)


def example_notes(notes: list[str]) -> list[str]:
    """hypothesis's notes on a failing example: the example, then the values drawn inside the
    test by their labels ("dim: 2"; "drawn: 2" for a value drawn without one); none when no
    note gives an example."""
    example = [note for note in notes if note.startswith(EXAMPLE_NOTES)][:1]
    if not example:
        return []
    draws = [note for note in notes if note.startswith(DRAW_NOTE)]
    draws = [LABELLED_DRAW.sub(lambda m: f"{m['label']}: ", note) for note in draws]
    return example + [UNLABELLED_DRAW.sub("drawn: ", note) for note in draws]


def bound_shrinking(seconds: float) -> float | None:
    """Let hypothesis shrink a failing example for at most `seconds` per test (a constant of
    its engine, which it reads each time it starts shrinking); the bound it had before, None
    without hypothesis."""
    try:
        from hypothesis.internal.conjecture import engine
    except ImportError:
        return None
    before, engine.MAX_SHRINKING_SECONDS = engine.MAX_SHRINKING_SECONDS, seconds
    return before


# ---------------------------------------------------------------------------------------------
# NumPy
# ---------------------------------------------------------------------------------------------

# The function every numpy.testing array assertion goes through, and its locals holding the
# actual and desired arrays: as given (`ox`, `oy`), else `x`, `y`, which it may narrow to the
# elements that are not NaN or inf.
NUMPY_COMPARISON = "assert_array_compare"
NUMPY_COMPARED = (("ox", "oy"), ("x", "y"))


def compared_arrays(error: BaseException) -> tuple[Any, Any] | None:
    """The actual and desired arrays of a failed `numpy.testing` assertion, from the frame of
    NumPy's comparison; None for any other error."""
    trace: TracebackType | None = error.__traceback__
    while trace is not None:
        frame = trace.tb_frame
        if frame.f_code.co_name == NUMPY_COMPARISON:
            for actual, desired in NUMPY_COMPARED:
                if actual in frame.f_locals and desired in frame.f_locals:
                    return frame.f_locals[actual], frame.f_locals[desired]
        trace = trace.tb_next
    return None


# ---------------------------------------------------------------------------------------------
# setuptools
# ---------------------------------------------------------------------------------------------

# What the module of an editable install's import finder has in its name
# ("__editable___tenxor_0_1_0_finder"), so a test process can forget that finder.
EDITABLE_FINDER_MARK = "__editable__"


# ---------------------------------------------------------------------------------------------
# CPython
# ---------------------------------------------------------------------------------------------

# The instructions a frame is left by when it yields, and when it returns a value.
YIELDING = frozenset({"YIELD_VALUE"})
RETURNING = frozenset({"RETURN_VALUE", "RETURN_CONST"})
# The module CPython's operator functions (operator.mul, ...) say they come from.
OPERATOR_MODULE = "_operator"


def leaving_instruction(frame: FrameType) -> str:
    """The name of the instruction a frame that is being left stops at."""
    return dis.opname[frame.f_code.co_code[frame.f_lasti]]


def yields(frame: FrameType) -> bool:
    """Whether a frame that is being left yields a value (and will take up again)."""
    return leaving_instruction(frame) in YIELDING


def returns_normally(frame: FrameType) -> bool:
    """Whether a frame that is being left returns a value (rather than passing on an exception
    or yielding)."""
    return leaving_instruction(frame) in RETURNING


# Grading (instructor.grading.replay) runs a property test's body on recorded examples,
# outside hypothesis's engine: it takes the drawn arguments' names from hypothesis's handle,
# and gives the body the build context that note() and assume() look for.


def given_arguments(test: Any) -> set[str]:
    """The names of the arguments hypothesis draws for the property test `test`."""
    return set(test.hypothesis._given_kwargs)


def outside_the_engine() -> Any:
    """A function that makes, for a body, the build context it needs to run outside
    hypothesis's engine; None where this hypothesis offers none."""
    try:
        from hypothesis.control import BuildContext
        from hypothesis.internal.conjecture.data import ConjectureData
    except ImportError:
        return None
    return lambda body: BuildContext(ConjectureData.for_choices([]), wrapped_test=body)


def is_hypothesis_stop(error: BaseException) -> bool:
    """Whether `error` is hypothesis ending an example while it draws (not the body's)."""
    return type(error).__module__.startswith("hypothesis.")


def fixture_names(item: Any) -> list[str]:
    """The names of the fixtures pytest gives the test function `item`."""
    return list(item._fixtureinfo.argnames)
