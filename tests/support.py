"""Test support: layouts generated directly, tensors built from them, and NumPy as the oracle.

Nothing here calls an exercise function: inputs are made from a Storage and a Layout, and
results are read back through NumPy's own stride arithmetic. So one unfinished exercise
cannot make another exercise's tests fail; where the library itself calls an exercise that
a test does not grade, the test puts a stand-in in its place (`stand_in`).
"""

from __future__ import annotations

import importlib
import math
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from hypothesis import settings
from hypothesis import strategies as st
from numpy.lib.stride_tricks import as_strided

import tenxor
from tenxor.core import Tenxor
from tenxor.course.catalog import exercise
from tenxor.course.failure import Mismatch, WrongError, shown
from tenxor.storage import Storage
from tenxor.strides import Layout

# NumPy has no bfloat16: the tests hold bfloat16 values in float32 arrays, which hold every
# bfloat16 value exactly (tests/bfloat16.py rounds to them, bit for bit as ml_dtypes does).
NUMPY_DTYPES = {
    "float64": np.float64,
    "float32": np.float32,
    "bfloat16": np.float32,
    "int64": np.int64,
    "int32": np.int32,
    "bool": np.bool_,
}


def numpy_dtype(dtype: tenxor.DType) -> np.dtype:
    """The NumPy dtype that holds a tenxor dtype's values (float32 for bfloat16)."""
    return np.dtype(NUMPY_DTYPES[dtype.name])


def row_major_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    """Row-major strides in elements, as NumPy computes them; a size-0 dim counts as size 1
    (PyTorch's convention, which tenxor follows)."""
    sizes = tuple(max(size, 1) for size in shape)
    return tuple(s // 8 for s in np.empty(sizes, dtype=np.float64).strides)


def reach(shape: tuple[int, ...], strides: tuple[int, ...]) -> tuple[int, int]:
    """The lowest and highest offsets (relative to the storage offset) a layout reads."""
    low = sum(min(0, (n - 1) * s) for n, s in zip(shape, strides) if n > 0)
    high = sum(max(0, (n - 1) * s) for n, s in zip(shape, strides) if n > 0)
    return low, high


def strided(buffer: np.ndarray, layout: Layout) -> np.ndarray:
    """The NumPy view of `layout` over the 1-D `buffer` with the layout's own strides, also
    when it holds no elements (read-only)."""
    itemsize = buffer.dtype.itemsize
    return as_strided(
        buffer[layout.offset :],
        shape=layout.shape,
        strides=tuple(s * itemsize for s in layout.strides),
        writeable=False,
    )


def numpy_view(buffer: np.ndarray, layout: Layout) -> np.ndarray:
    """The NumPy view that `layout` describes over the 1-D `buffer` (read-only); a fresh
    empty array when the layout holds no elements."""
    if 0 in layout.shape:
        return np.empty(layout.shape, dtype=buffer.dtype)
    return strided(buffer, layout)


def to_numpy(t: Tenxor) -> np.ndarray:
    """A copy of a tensor's elements as a NumPy array, read straight from storage + layout."""
    buffer = np.array(list(t.storage.values()), dtype=numpy_dtype(t.dtype))
    return numpy_view(buffer, t.layout).copy()


def make_tensor(buffer: np.ndarray, layout: Layout, dtype: tenxor.DType | None = None) -> Tenxor:
    """A Tenxor over a new Storage holding `buffer` (1-D), read through `layout`."""
    if dtype is None:
        dtype = {"f": tenxor.float64, "i": tenxor.int64, "b": tenxor.bool}[buffer.dtype.kind]
        dtype = {np.float32: tenxor.float32, np.int32: tenxor.int32}.get(buffer.dtype.type, dtype)
    return Tenxor(Storage(buffer.tolist(), dtype), layout)


def from_numpy(array: np.ndarray, dtype: tenxor.DType | None = None) -> Tenxor:
    """A contiguous Tenxor with the elements of `array`."""
    array = np.array(array, order="C", copy=True)  # keeps 0-d arrays 0-d
    layout = Layout(array.shape, row_major_strides(array.shape))
    return make_tensor(array.reshape(-1), layout, dtype)


# ---------------------------------------------------------------------------------------------
# Hypothesis strategies
# ---------------------------------------------------------------------------------------------

sizes = st.integers(0, 4) | st.integers(1, 3)  # size-0 and size-1 dims are common


@dataclass(frozen=True)
class Case:
    """A layout over a storage buffer, with the NumPy view it describes."""

    buffer: np.ndarray
    layout: Layout

    @property
    def array(self) -> np.ndarray:
        return numpy_view(self.buffer, self.layout)

    def tensor(self, dtype: tenxor.DType | None = None) -> Tenxor:
        return make_tensor(self.buffer, self.layout, dtype)


@st.composite
def layouts(
    draw: st.DrawFn,
    min_dims: int = 0,
    max_dims: int = 5,
    shape: tuple[int, ...] | None = None,
    max_stride: int = 7,
) -> tuple[Layout, int]:
    """A layout (any strides: zero, negative, gaps) and the storage size it needs."""
    if shape is None:
        ndim = draw(st.integers(min_dims, max_dims))
        shape = tuple(draw(sizes) for _ in range(ndim))
    strides = tuple(draw(st.integers(-max_stride, max_stride)) for _ in shape)
    low, high = reach(shape, strides)
    offset = -low + draw(st.integers(0, 3))
    size = offset + high + 1 + draw(st.integers(0, 3))
    return Layout(shape, strides, offset), size


@st.composite
def cases(
    draw: st.DrawFn,
    min_dims: int = 0,
    max_dims: int = 5,
    shape: tuple[int, ...] | None = None,
    kind: str = "float",
) -> Case:
    """A Case with random values of `kind` ("float", "int" or "bool") in its buffer."""
    layout, size = draw(layouts(min_dims=min_dims, max_dims=max_dims, shape=shape))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    if kind == "float":
        buffer = rng.uniform(-10, 10, size)
    elif kind == "int":
        buffer = rng.integers(-20, 20, size).astype(np.int64)
    else:
        buffer = rng.integers(0, 2, size).astype(np.bool_)
    return Case(buffer, layout)


def view_case(base: np.ndarray, view: np.ndarray) -> Case:
    """The Case whose layout reads NumPy's `view` out of the contiguous array `base`."""
    itemsize = base.itemsize
    start = view.__array_interface__["data"][0] - base.__array_interface__["data"][0]
    strides = tuple(s // itemsize for s in view.strides)
    case = Case(base.reshape(-1), Layout(view.shape, strides, start // itemsize))
    np.testing.assert_array_equal(case.array, view)
    return case


def contiguous_case(array: np.ndarray) -> Case:
    """A Case whose layout is the row-major layout of `array`."""
    array = np.array(array, order="C", copy=True)
    return Case(array.reshape(-1).copy(), Layout(array.shape, row_major_strides(array.shape)))


def same_values(got: object, expected: object) -> bool:
    """Equal, with NaN equal to NaN; arrays element by element and of the same shape;
    tensors by dtype, shape and elements, read from storage and layout (never with the
    tensor's own `==`, which runs the library's kernels)."""
    if isinstance(got, Tenxor) or isinstance(expected, Tenxor):
        if not (isinstance(got, Tenxor) and isinstance(expected, Tenxor)):
            return False
        return got.dtype is expected.dtype and same_values(to_numpy(got), to_numpy(expected))
    if isinstance(got, np.ndarray) or isinstance(expected, np.ndarray):
        a, b = np.asarray(got), np.asarray(expected)
        return a.shape == b.shape and bool(np.array_equal(a, b, equal_nan=a.dtype.kind == "f"))
    if isinstance(got, float) and isinstance(expected, float):
        return ulp_close(got, expected)
    try:
        return bool(got == expected)
    except (TypeError, ValueError):  # an array-like compared with a tuple, for one
        return False


def each_call(function: Callable[..., Any], cases: Iterable[tuple[Any, ...]]) -> Iterator[Any]:
    """What `function(*case)` returns for each of `cases`, in turn (raising where a call
    raises). When grading, the judge sends a submission's calls to its worker many at a
    time, which costs far less than one at a time:

        for (offset, shape), index in zip(cases, each_call(offset_to_index, cases)):
            ...
    """
    each = getattr(function, "each", None)
    return each(cases) if each is not None else (function(*case) for case in cases)


def expect(what: str, got: object, expected: object, rule: str = "") -> None:
    """`got` equals `expected`; otherwise the test fails saying `what` was compared, both
    values, and the `rule` that makes `expected` right where the values do not say it.

        expect("strides of the new layout", result.strides, (2, 1), "row-major, like NumPy's")
    """
    if not same_values(got, expected):
        raise Mismatch(what, got, expected, rule)


def assert_same(
    actual: Tenxor,
    expected: np.ndarray,
    exact: bool = True,
    what: str = "the result",
    rule: str = "",
) -> None:
    """The tensor has the expected shape and elements (NaNs equal, close for floats)."""
    if not isinstance(actual, Tenxor):
        raise Mismatch(f"type of {what}", type(actual).__name__, "Tenxor", rule)
    result = to_numpy(actual)
    expect(f"shape of {what}", result.shape, expected.shape, rule)
    if exact:
        close = np.array_equal(result, expected, equal_nan=result.dtype.kind == "f")
    else:
        close = np.allclose(result, expected, rtol=1e-9, atol=1e-12, equal_nan=True)
    if not close:
        raise Mismatch(f"elements of {what}", result, expected, rule)


def assert_rows_close(
    got: Tenxor,
    expected: np.ndarray,
    what: str,
    rule: str,
    rtol: float,
    atol: float,
    row_words: Callable[[int], str] = "row {}".format,
) -> None:
    """As np.testing.assert_allclose(to_numpy(got), expected, rtol, atol): the tensor has the
    expected shape and each element is within atol + rtol * |expected| of NumPy's (NaN where
    NumPy has NaN); a failure shows the first row that is off (named by `row_words`), its
    values and the expected ones."""
    if not isinstance(got, Tenxor):
        raise Mismatch(f"type of {what}", type(got).__name__, "Tenxor")
    result = to_numpy(got)
    expect(f"shape of {what}", result.shape, expected.shape)
    close = np.isclose(result, expected, rtol=rtol, atol=atol, equal_nan=True)
    if not close.all():
        row = int(np.argwhere(~close)[0][0])
        what = f"{row_words(row)} of {what}"
        raise Mismatch(what, result[row].tolist(), expected[row].tolist(), rule)


def storage_shared(a: Tenxor, b: Tenxor) -> bool:
    """True when the two tensors read the same Storage object."""
    return a.storage is b.storage


def ulp_close(a: float, b: float) -> bool:
    """Equal, or both NaN."""
    return a == b or (math.isnan(a) and math.isnan(b))


def value_pattern(value: object) -> str:
    """A regex that finds `value` in a message in one of its usual printed forms.

    An int (or float) stands alone: 5 is not found inside 15, -5 or 5.5, and -5 is found as
    "-5". A tuple is found with () or [] and any spacing, a 1-tuple also without its comma.
    `...` is found as "..." or "Ellipsis"; a string (a dtype name, "nan") literally.
    """
    if value is Ellipsis:
        return r"(?:\.\.\.|Ellipsis)"
    if isinstance(value, (tuple, list)):
        inner = r"\s*,\s*".join(value_pattern(item) for item in value)
        return rf"[\(\[]\s*{inner}\s*,?\s*[\)\]]"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return rf"(?<![\w.-]){re.escape(str(value))}(?![\w]|\.\d)"
    return re.escape(str(value))


def assert_names(error: BaseException, *values: object) -> None:
    """The error's message names every one of `values`, in any order and with any words
    around them (see value_pattern for the forms a value may take)."""
    message = str(error)
    missing = [value for value in values if not re.search(value_pattern(value), message)]
    if missing:
        named = ", ".join(shown(value) for value in missing)
        raise Mismatch(
            f"the {type(error).__name__} message",
            message,
            f"a message naming {named}",
            "an error names the values that caused it, in any words",
        )


@dataclass
class Raised:
    """The error a `raises_naming` block caught (`value`, once the block has ended)."""

    value: BaseException | None = None


@contextmanager
def raises_naming(
    error: type[BaseException] | tuple[type[BaseException], ...], *values: object, rule: str = ""
) -> Iterator[Raised]:
    """The block raises `error`, and its message names every one of `values`; otherwise the
    test fails saying which error was due and what was raised instead (or that nothing was).

        with raises_naming(IndexError, 4, (2, 3)):
            unsqueeze_layout(layout, 4)
    """
    due = error.__name__ if isinstance(error, type) else " or ".join(e.__name__ for e in error)
    raised = Raised()
    try:
        yield raised
    except error as caught:
        raised.value = caught
    except NotImplementedError:
        raise  # an exercise not written yet: check says which, and where to write it
    except Exception as other:  # noqa: BLE001 - an error of the wrong type is the finding
        raise WrongError(due, other, rule) from other
    else:
        raise WrongError(due, None, rule)
    assert_names(raised.value, *values)


def compact(value: object) -> str:
    """A test id without spaces: str(value) with the spaces removed."""
    return str(value).replace(" ", "")


@st.composite
def broadcastable_shapes(
    draw: st.DrawFn,
    count: int,
    min_dims: int = 0,
    max_dims: int = 5,
    size: st.SearchStrategy[int] = sizes,
) -> list[tuple[int, ...]]:
    """`count` shapes that broadcast together: a target shape is drawn, and each shape is the
    target with some leading dims dropped and some dims set to 1."""
    ndim = draw(st.integers(min_dims, max_dims))
    target = tuple(draw(size) for _ in range(ndim))
    shapes = []
    for _ in range(count):
        keep = draw(st.integers(0, ndim))
        tail = target[ndim - keep :]
        shapes.append(tuple(1 if draw(st.booleans()) else n for n in tail))
    return shapes


def stable_softmax(x: np.ndarray, axis: int) -> np.ndarray:
    """Softmax along `axis` with the maximum subtracted first (nan where a group along `axis`
    is all -inf)."""
    with np.errstate(all="ignore"):
        e = np.exp(x - x.max(axis=axis, keepdims=True))
        return e / e.sum(axis=axis, keepdims=True)


def masked_softmax_reference(x: np.ndarray, mask: np.ndarray, axis: int) -> np.ndarray:
    """Softmax along `axis` over the entries where `mask` (broadcast to x) is nonzero; masked
    entries and groups with nothing left are 0."""
    keep = np.broadcast_to(mask.astype(bool), x.shape)
    logits = np.where(keep, x, -np.inf)
    peak = logits.max(axis=axis, keepdims=True)
    peak = np.where(np.isneginf(peak), 0.0, peak)
    with np.errstate(all="ignore"):
        weights = np.where(keep, np.exp(logits - peak), 0.0)
    total = weights.sum(axis=axis, keepdims=True)
    return np.divide(weights, total, out=np.zeros_like(weights), where=total > 0)


class Scripted:
    """Stands in for hypothesis's `data` in an explicit example: each draw gives the value
    named by its label, so a test that draws inside is tried on a chosen case first.

        @given(data=st.data())
        @example(data=Scripted(kind="float64", case=TYPICAL_CASE))
        def test_x(data):
            kind = data.draw(KINDS, label="kind")  # "float64" in the example
    """

    def __init__(self, **values: object) -> None:
        self.values = values

    def draw(self, strategy: object, label: str) -> object:
        """The value of the example named `label` (the strategy is not drawn from)."""
        return self.values[label]

    def __repr__(self) -> str:
        return ", ".join(f"{label}: {value!r}" for label, value in self.values.items())


def at_most_examples(limit: int) -> settings:
    """Settings for a costly property test: the profile's example count, capped at `limit`."""
    return settings(max_examples=min(limit, settings().max_examples))


# ---------------------------------------------------------------------------------------------
# Stand-ins for exercises a test does not grade
# ---------------------------------------------------------------------------------------------


def loaded_tenxor_modules() -> list[ModuleType]:
    """Every module of the tenxor package imported so far, the package itself included."""
    if LOADED["count"] != len(sys.modules):  # modules are only added while tests run
        LOADED["modules"] = [
            module
            for name, module in list(sys.modules.items())
            if name.partition(".")[0] == "tenxor" and module is not None
        ]
        LOADED["count"] = len(sys.modules)
    return LOADED["modules"]


LOADED: dict[str, Any] = {"count": -1, "modules": []}  # what loaded_tenxor_modules last found


@contextmanager
def stand_in(exercise_id: str, function: Callable[..., Any]) -> Iterator[None]:
    """Within the block, `function` stands in for the function of exercise `exercise_id`
    wherever the library holds it: in its chapter module and in every tenxor module that
    imported it. So a test grades one exercise even where the library calls another."""
    item = exercise(exercise_id)
    replaced = getattr(importlib.import_module(item.module), item.function)
    with pytest.MonkeyPatch.context() as patch:
        for module in loaded_tenxor_modules():
            for name, value in list(vars(module).items()):
                if value is replaced:
                    patch.setattr(module, name, function)
        yield
