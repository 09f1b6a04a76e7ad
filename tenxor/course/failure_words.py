"""A failed test put into words: the lines that explain it to a learner, from its `Failure`
record (see failure.py). `check()` prints them under "First failure", and grading shows the
same lines in Gradescope's entries and in the student's report.

    strides of the layout: got (1, 2), expected (3, 1)
    call:     contiguous_strides(shape=(2, 3))
    returned: (1, 2)

Every message is wrapped to fit a notebook's output area (`wrapped`), hints included.
"""

from __future__ import annotations

import textwrap

from .catalog import BY_ID
from .engine import Result
from .failure import Failure

LINE_WIDTH = 90  # explanations wrap to fit a notebook's output area
LABEL_WIDTH = 10  # "returned: " and the lines under it start their text in this column


def wrapped(text: str) -> list[str]:
    """`text` wrapped to the output width, keeping its own line breaks."""
    return [part for line in text.splitlines() for part in textwrap.wrap(line, LINE_WIDTH) or [""]]


def labelled(label: str, text: str) -> list[str]:
    """`text` after a label, its further lines indented under the first."""
    first, *rest = text.splitlines() or [""]
    return [f"{label:<{LABEL_WIDTH}}{first}", *(f"{'':<{LABEL_WIDTH}}{line}" for line in rest)]


def needs_first(result: Result) -> list[str] | None:
    """What to say when a test failed on an unfinished exercise's stub, or None."""
    if result.unfinished and result.unfinished != result.exercise:
        needed = BY_ID[result.unfinished]
        return wrapped(
            f"This test needs exercise {needed.id} ({needed.title}, {needed.path}: "
            f"{needed.function}), which is not finished yet. Do that one first, then check again."
        )
    if result.unfinished:
        mine = BY_ID[result.unfinished]
        return [
            f"Not started: {mine.function} in {mine.path} still raises NotImplementedError.",
            "Replace that raise with your code, save the file, then check again.",
        ]
    return None


def record_in_words(record: Failure) -> list[str]:
    """A failure record as check prints it: the finding, then the call that went wrong, what
    it returned or raised, what was expected and where, then the case or the example."""
    lines = wrapped(record.message)
    if record.call:
        lines += labelled("call:", record.call)
        if record.timed_out:
            lines.append(f"{'':<{LABEL_WIDTH}}(still running when it was stopped)")
        elif record.returned is not None:
            lines += labelled("returned:", record.returned)
        elif record.raised and record.raised not in record.message:
            lines += labelled("raised:", record.raised)
    if record.expected and f"expected {record.expected}" not in record.message:
        lines += labelled("expected:", record.expected)
    elif record.raised and not record.expected and not record.unfinished:
        lines += labelled("expected:", "a result: no error is due for this call")
    if record.line:
        lines.append(f"raised at {record.line}")
    if record.inside:
        lines.append(f"  ({record.inside})")
    if record.before:
        lines += wrapped(f"That line is provided code. Before the error, {record.before}")
    if record.case:
        lines.append(f"the case: {record.case}")
    if record.example and not record.call:
        lines += record.example.splitlines()
    return lines


def failure_in_words(result: Result) -> list[str]:
    """The lines that explain one failed test to a learner."""
    first = needs_first(result)
    if first is not None:
        return first
    if result.failure is None:
        return result.message.splitlines() or [result.outcome]
    return record_in_words(result.failure)
