"""What a failed test found, in one record: the schema that `check()` and grading both render.

A test states its finding by raising `Mismatch` (what came back, what was expected, and the
rule where a value alone does not say it) or `WrongError` (an error of another type than the
one due). The test plugin turns any failure into a `Failure` record once; check's text and
Gradescope's entries are two ways of printing it.

    >>> print(Mismatch("strides of the new layout", (1, 1), (2, 1), "as expand_dims"))
    strides of the new layout: got (1, 1), expected (2, 1) (as expand_dims)
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import asdict, dataclass, fields
from typing import Any, ClassVar

VALUE_CHARS = 120  # a value longer than this is shortened in the middle
# Whether the report being written shows ints in hex: a test marked `bit_patterns` compares
# bit patterns, which its messages write in hex, so its calls and cases do too.
INTS_IN_HEX: ContextVar[bool] = ContextVar("INTS_IN_HEX", default=False)


@contextmanager
def ints_in_hex(hexadecimal: bool = True) -> Iterator[None]:
    """In the block, `shown` writes ints (alone, or in a tuple or list) in hex: 0x3f80."""
    token = INTS_IN_HEX.set(hexadecimal)
    try:
        yield
    finally:
        INTS_IN_HEX.reset(token)


def subscript(part: slice) -> str:
    """A slice as it is written between brackets: `::2`, `1:3`, `:`."""
    text = ":".join("" if end is None else repr(end) for end in (part.start, part.stop))
    return text if part.step is None else f"{text}:{part.step!r}"


def readable(value: object) -> str:
    """The repr of `value`, but slices written as between brackets (as keys are), also
    inside a tuple or list of them, and ints in hex inside `ints_in_hex()`.

    >>> readable((slice(None, None, 2), 1))
    '(::2, 1)'
    """
    if isinstance(value, slice):
        return subscript(value)
    if type(value) is int and INTS_IN_HEX.get():
        return hex(value)
    if type(value) in (tuple, list) and any(
        isinstance(part, slice) or (type(part) is int and INTS_IN_HEX.get()) for part in value
    ):
        return written_as(value, [readable(part) for part in value])
    return repr(value)


def written_as(items: list | tuple, texts: list[str]) -> str:
    """A list or a tuple as code writes it, from the texts of its items: [a, b], (a,), (a, b)."""
    inner = ", ".join(texts)
    if type(items) is list:
        return f"[{inner}]"
    return f"({inner},)" if len(texts) == 1 else f"({inner})"


def shown(value: object, limit: int = VALUE_CHARS) -> str:
    """The repr of `value` on one line (slices as keys are written), shortened in the middle
    when it is long."""
    try:
        text = readable(value)
        text = " ".join(text.split()) if "\n" in text else text  # a str keeps its spaces
    except Exception as error:  # noqa: BLE001 - a broken __repr__ is the learner's to fix
        text = f"<{type(value).__name__} whose repr raised {type(error).__name__}>"
    if len(text) <= limit:
        return text
    half = (limit - 5) // 2
    return f"{text[:half]} ... {text[-half:]}"


def error_in_words(error: BaseException) -> str:
    """An exception as `Type: message`, on one line."""
    return shown(error, 10_000) if not str(error) else f"{type(error).__name__}: {error}"


class Mismatch(AssertionError):
    """A test's finding: `what` came back as `got` where `expected` was due, by `rule`."""

    def __init__(self, what: str, got: object, expected: object, rule: str = "") -> None:
        self.what, self.got, self.expected, self.rule = what, got, expected, rule
        text = f"{what}: got {shown(got)}, expected {shown(expected)}"
        super().__init__(text + (f" ({rule})" if rule else ""))


class WrongError(AssertionError):
    """A test's finding: the code under test raised `got` (or nothing, when `got` is None)
    where an error of type `expected` was due."""

    def __init__(self, expected: str, got: BaseException | None, rule: str = "") -> None:
        self.what, self.expected, self.rule = "the error raised", expected, rule
        self.got = "nothing raised" if got is None else error_in_words(got)
        super().__init__(f"expected {expected}, got {self.got}" + (f" ({rule})" if rule else ""))


@dataclass(frozen=True)
class Failure:
    """Why one test failed, as plain text fields (every field but `message` may be empty).

    `message`: the finding in one to a few lines. `what`, `got`, `expected`, `rule`: the
    values a test compared, when it said so. `call`, `returned`, `raised`: the last call of
    the exercise under test before the failure. `line`: where the error was raised, in the
    learner's function when it passed through one; `inside`: the earlier exercise it was
    raised in; `before`: the last earlier exercise that returned before an error raised in
    provided code, and what it returned. `case`: a parametrized test's values; `example`: a
    property test's input when no call says it. `unfinished`: the exercise whose stub raised.
    `timed_out`: the test was stopped at its time limit.
    """

    VERSION: ClassVar[int] = 1

    message: str
    what: str | None = None
    got: str | None = None
    expected: str | None = None
    rule: str | None = None
    call: str | None = None
    returned: str | None = None
    raised: str | None = None
    line: str | None = None
    inside: str | None = None
    before: str | None = None
    case: str | None = None
    example: str | None = None
    unfinished: str | None = None
    timed_out: bool = False
    version: int = VERSION

    def to_dict(self) -> dict[str, Any]:
        """The record as JSON-ready data, with only the fields that are set."""
        return {key: value for key, value in asdict(self).items() if value not in (None, False)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Failure:
        """The record in `data`, ignoring keys it does not know (a newer record's) and
        turning every text field into a string."""
        known = {f.name: f for f in fields(cls)}
        values: dict[str, Any] = {}
        for key, value in data.items():
            if key not in known or value is None:
                continue
            if key == "timed_out":
                values[key] = bool(value)
            elif key == "version":
                values[key] = int(value) if isinstance(value, int) else cls.VERSION
            else:
                values[key] = str(value)
        values.setdefault("message", "failed")
        return cls(**values)
