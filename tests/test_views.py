"""Chapter 3: views as layout arithmetic, checked against the views NumPy makes.

Every test builds a layout over a storage buffer (see tests/support.py), applies an operation
to it and to the NumPy array that layout describes, and compares shape, element values,
storage offset and strides. Strides are compared where NumPy defines them: on dims of size
other than 1, in arrays that hold at least one element.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from tenxor.core import Tenxor
from tenxor.strides import Layout
from tenxor.views import (
    cut_runs,
    index_layout,
    infer_shape,
    layout_runs,
    permute_layout,
    squeeze_layout,
    unsqueeze_layout,
    view_layout,
)
from tests.support import (
    Case,
    Mismatch,
    assert_same,
    cases,
    expect,
    numpy_view,
    raises_naming,
    reach,
    row_major_strides,
    sizes,
    stand_in,
    storage_shared,
)

# ---------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------


def numpy_offset(case: Case, array: np.ndarray) -> int:
    """The storage offset of a NumPy view of `case.buffer`, in elements."""
    start = array.__array_interface__["data"][0] - case.buffer.__array_interface__["data"][0]
    return start // case.buffer.itemsize


def numpy_strides(array: np.ndarray) -> tuple[int, ...]:
    """NumPy's strides in elements."""
    return tuple(s // array.itemsize for s in array.strides)


def rules(*parts: str) -> str:
    """The non-empty `parts`, joined with "; "."""
    return "; ".join(part for part in parts if part)


ANY_SIZE_1_STRIDE = "dims of size 1 may have any stride"


def expect_strides(what: str, shape: tuple, strides: tuple, expected: tuple, rule: str) -> None:
    """`strides` are `expected` on every dim whose size is not 1 (the failure shows `expected`
    with the given strides of the size-1 dims, so only the real differences stand out)."""
    due = tuple(s if size == 1 else e for size, s, e in zip(shape, strides, expected))
    expect(what, tuple(strides), due, rules(rule, ANY_SIZE_1_STRIDE))


def assert_layout_matches(
    layout: Layout, case: Case, expected: np.ndarray, rule: str = "", what: str = "the new layout"
) -> None:
    """`layout` over `case.buffer` is the NumPy view `expected` of that buffer: same shape and
    values, and (when it holds elements) the same storage offset and the same strides on
    every dim whose size is not 1. `rule` says which NumPy operation made `expected`."""
    if not isinstance(layout, Layout):
        raise Mismatch(f"type of {what}", type(layout).__name__, "Layout", rule)
    expect(f"shape of {what}", layout.shape, expected.shape, rule)
    expect(f"number of strides of {what}", len(layout.strides), len(layout.shape), "one per dim")
    if expected.size == 0:
        return
    expect(f"storage offset of {what}", layout.offset, numpy_offset(case, expected), rule)
    what_strides = f"strides of {what}"
    expect_strides(what_strides, layout.shape, layout.strides, numpy_strides(expected), rule)
    low, high = reach(layout.shape, layout.strides)
    if layout.offset + low < 0 or layout.offset + high >= len(case.buffer):
        raise Mismatch(
            f"offsets {what} reads",
            f"{layout.offset + low} .. {layout.offset + high}",
            f"within the storage, 0 .. {len(case.buffer) - 1}",
            rules(rule, "a view reads only elements of the tensor it views"),
        )
    expect(f"elements {what} reads", numpy_view(case.buffer, layout), expected, rule)


def assert_view_matches(
    result: Tenxor, t: Tenxor, case: Case, expected: np.ndarray, rule: str = ""
) -> None:
    """`result` is a view of `t` (same Storage object) that reads what NumPy's `expected`
    reads from the same buffer."""
    if not isinstance(result, Tenxor):
        raise Mismatch("type of the result", type(result).__name__, "Tenxor", rule)
    if not storage_shared(result, t):
        raise Mismatch(
            "storage of the view",
            "a new Storage",
            "the Storage of the tensor it views",
            "a view shares storage",
        )
    assert_layout_matches(result.layout, case, expected, rule, what="the view")
    assert_same(result, expected, what="the view", rule=rule)


def expect_copy(result: Tenxor, t: Tenxor, what: str, rule: str) -> None:
    """`result` reads a new Storage, not the one of `t`."""
    if storage_shared(result, t):
        raise Mismatch(f"storage of {what}", "the Storage of the tensor", "a new Storage", rule)


def expect_row_major(what: str, result: Tenxor, shape: tuple[int, ...], rule: str) -> None:
    """The strides of `result` are row-major for `shape` (dims of size 1: any stride)."""
    expected = row_major_strides(shape)
    expect_strides(f"strides of {what}", result.shape, result.strides, expected, rule)


def as_items(key: Any) -> tuple[Any, ...]:
    return key if isinstance(key, tuple) else (key,)


def numpy_index(array: np.ndarray, key: Any) -> np.ndarray:
    """`array[key]` as an array (a 0-d view rather than a NumPy scalar when every dim is
    picked by an int)."""
    items = as_items(key)
    if not any(item is Ellipsis for item in items):
        items = items + (Ellipsis,)
    return array[items]


def numpy_reshape_view(array: np.ndarray, shape: tuple[int, ...]) -> np.ndarray | None:
    """NumPy's reshape of `array` to `shape` as a view, or None when only a copy can do it."""
    try:
        return np.reshape(array, shape, copy=False)
    except ValueError:
        return None


def random_case(shape: tuple[int, ...], seed: int = 0) -> Case:
    """A row-major Case of `shape` (0-d too) with random values and storage offset 0."""
    values = np.random.default_rng(seed).uniform(-10, 10, math.prod(shape))
    return Case(values, Layout(shape, row_major_strides(shape)))


def strided_case(shape: tuple[int, ...], strides: tuple[int, ...], offset: int) -> Case:
    """A Case with exactly this layout over a buffer just large enough, plus one spare cell."""
    low, high = reach(shape, strides)
    assert offset + low >= 0
    buffer = np.random.default_rng(1).uniform(-10, 10, offset + high + 2)
    return Case(buffer, Layout(shape, strides, offset))


def counting_case(shape: tuple[int, ...], strides: tuple[int, ...], offset: int) -> Case:
    """As strided_case, over a buffer holding 0.0, 1.0, 2.0, ...: each element's value is its
    offset, which makes the examples property tests try first easy to read."""
    low, high = reach(shape, strides)
    assert offset + low >= 0
    return Case(np.arange(offset + high + 2.0), Layout(shape, strides, offset))


# -- stand-ins for exercises that a copy path calls -------------------------------------------
#
# A gather with a list index moves the gathered dim with permute_layout (exercise 3.4). The
# tests of indexing put this stand-in in its place (see stand_in in tests/support.py), so that
# they grade indexing alone. (Copies
# themselves read and lay out elements with provided code, tenxor/row_major.py.)


def standin_permute_layout(layout: Layout, dims: Any) -> Layout:
    """For 3.4: the layout with its dims reordered (dims already counted from the front)."""
    dims = [d % layout.ndim for d in dims]
    return Layout(
        tuple(layout.shape[d] for d in dims),
        tuple(layout.strides[d] for d in dims),
        layout.offset,
    )


# -- strategies --------------------------------------------------------------------------------


def slices(size: int, steps: st.SearchStrategy[Any] | None = None) -> st.SearchStrategy[slice]:
    """Slices for a dim of `size`: bounds may be negative or out of range, any nonzero step
    (or a step from `steps`)."""
    bound = st.none() | st.integers(-size, size) | st.integers(-size - 3, size + 3)
    if steps is None:
        steps = st.none() | st.integers(-4, -1) | st.integers(1, 4)
    return st.builds(slice, bound, bound, steps)


def basic_items(size: int) -> st.SearchStrategy[Any]:
    """An int (negative too) or a slice for one dim of `size`."""
    if size == 0:
        return slices(size)
    return st.integers(-size, size - 1) | slices(size)


def index_lists(size: int) -> st.SearchStrategy[list[int]]:
    """A list index for a dim of `size`: duplicates and negative entries allowed."""
    if size == 0:
        return st.just([])
    return st.lists(st.integers(-size, size - 1), max_size=5)


@st.composite
def index_keys(draw: st.DrawFn, shape: tuple[int, ...], gather: bool = False) -> Any:
    """A key for `t[key]` valid for `shape`: ints, slices, None and at most one `...`; with
    `gather`, exactly one of the dims is indexed by a list instead."""
    ndim = len(shape)
    consumed = draw(st.integers(1 if gather else 0, ndim))
    ellipsis_at = draw(st.none() | st.integers(0, consumed))
    if ellipsis_at is None:
        dims = list(range(consumed))
    else:
        dims = list(range(ellipsis_at)) + list(range(ndim - consumed + ellipsis_at, ndim))
    items = [draw(basic_items(shape[d])) for d in dims]
    if gather:
        at = draw(st.integers(0, consumed - 1))
        items[at] = draw(index_lists(shape[dims[at]]))
    if ellipsis_at is not None:
        items.insert(ellipsis_at, Ellipsis)
    for _ in range(draw(st.integers(0, 2))):
        items.insert(draw(st.integers(0, len(items))), None)
    if len(items) == 1 and draw(st.booleans()):
        return items[0]
    return tuple(items)


def divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


@st.composite
def new_shapes(draw: st.DrawFn, shape: tuple[int, ...]) -> tuple[int, ...]:
    """A shape with as many elements as `shape`: neighbouring dims merged or split, 1s
    inserted, or a fresh factorization; sometimes with one size given as -1."""
    count = math.prod(shape)
    if draw(st.booleans()):
        merged: list[int] = []
        for size in shape:
            if merged and draw(st.booleans()):
                merged[-1] *= size
            else:
                merged.append(size)
        result = []
        for size in merged:
            if size > 1 and draw(st.booleans()):
                first = draw(st.sampled_from(divisors(size)))
                result += [first, size // first]
            else:
                result.append(size)
    elif count == 0:
        result = draw(st.lists(sizes, max_size=4))
        result.insert(draw(st.integers(0, len(result))), 0)
    else:
        result = []
        left = count
        while left > 1:
            size = draw(st.sampled_from(divisors(left)[1:]))
            result.append(size)
            left //= size
    for _ in range(draw(st.integers(0, 2))):
        if len(result) < 6:
            result.insert(draw(st.integers(0, len(result))), 1)
    if result and draw(st.booleans()):
        at = draw(st.integers(0, len(result) - 1))
        if math.prod(result[:at] + result[at + 1 :]) != 0:
            result[at] = -1
    return tuple(result)


@st.composite
def cases_with(draw: st.DrawFn, make_argument: Any, **case_options: Any) -> tuple[Case, Any]:
    """A Case and an argument drawn from `make_argument(shape)`."""
    case = draw(cases(**case_options))
    return case, draw(make_argument(case.layout.shape))


# ---------------------------------------------------------------------------------------------
# 3.1 infer_shape
# ---------------------------------------------------------------------------------------------


@st.composite
def shapes_and_counts(draw: st.DrawFn) -> tuple[tuple[int, ...], int]:
    """A shape (maybe with one or two -1s) and an element count that may or may not fit."""
    shape = draw(st.lists(sizes, max_size=5))
    count = math.prod(shape)
    for _ in range(draw(st.sampled_from([0, 1, 1, 1, 2]))):
        if shape:
            shape[draw(st.integers(0, len(shape) - 1))] = -1
    if draw(st.integers(0, 3)) == 0:
        count = draw(st.integers(0, 30))
    return tuple(shape), count


RESHAPE = "as NumPy's reshape fills in the -1"


@pytest.mark.exercise("3.1")
@given(shapes_and_counts())
@example(((2, -1, 4), 24))
def test_infer_shape_matches_numpy_reshape(shape_and_count):
    """infer_shape fills in the -1 as NumPy's reshape does, and raises a ValueError naming the
    shape exactly when NumPy cannot reshape that many elements to it."""
    shape, count = shape_and_count
    try:
        expected = np.empty(count).reshape(shape).shape
    except ValueError:
        expected = None  # checked below, outside the handler: NumPy's error is no finding
    if expected is None:
        with raises_naming(ValueError, shape):
            infer_shape(shape, count)
    else:
        what = f"the shape {shape} for {count} elements"
        expect(what, tuple(infer_shape(shape, count)), expected, RESHAPE)


@pytest.mark.exercise("3.1")
@pytest.mark.parametrize(
    "shape, count",
    [
        ((2, -1, 3), 12),
        ((-1,), 7),
        ((-1,), 0),
        ((-1, 3), 0),
        ((1, -1, 1), 5),
        ((), 1),
        ((2, 3), 6),
        ([4, -1], 8),
    ],
)
def test_infer_shape_examples(shape, count):
    """Small shapes, including a -1 that must become 0, give NumPy's shape as a tuple."""
    expected = np.empty(count).reshape(shape).shape
    result = infer_shape(shape, count)
    if not isinstance(result, tuple):
        raise Mismatch("type of the inferred shape", type(result).__name__, "tuple")
    expect(f"the shape {shape} for {count} elements", result, expected, RESHAPE)


@pytest.mark.exercise("3.1")
@pytest.mark.parametrize(
    "shape, count, values",
    [
        ((-1, 0), 0, [(-1, 0)]),
        ((0, -1), 5, [(0, -1)]),
        ((-1, -1), 4, [(-1, -1)]),
        ((2, -2), 4, [(2, -2), -2]),
        ((-3,), 3, [(-3,), -3]),
        ((4,), 6, [(4,), 6]),
        ((4, -1), 6, [(4, -1), 6]),
        ((), 2, [(), 2]),
        ((2, 0), 3, [(2, 0), 3]),
    ],
)
def test_infer_shape_rejects_shapes_it_cannot_fill(shape, count, values):
    """Two -1s, other negative sizes, a -1 beside a 0 and a wrong element count raise a
    ValueError naming the shape (and the count when it does not fit)."""
    with raises_naming(ValueError, *values):
        infer_shape(shape, count)


# ---------------------------------------------------------------------------------------------
# 3.2 squeeze_layout
# ---------------------------------------------------------------------------------------------


@st.composite
def squeeze_dims(draw: st.DrawFn, shape: tuple[int, ...]) -> Any:
    """None, one size-1 dim, or a tuple of size-1 dims; dims counted from either end."""
    ones = [d for d, size in enumerate(shape) if size == 1]

    def spelled(d: int) -> int:
        return d - len(shape) if draw(st.booleans()) else d

    choice = draw(st.sampled_from(["none", "one", "several"] if ones else ["none", "several"]))
    if choice == "none":
        return None
    if choice == "one":
        return spelled(draw(st.sampled_from(ones)))
    chosen = draw(st.lists(st.sampled_from(ones), unique=True) if ones else st.just([]))
    return tuple(spelled(d) for d in chosen)


SQUEEZE = "np.squeeze drops the size-1 dims named (all when none is)"
SQUEEZE_EXAMPLE = (counting_case((2, 1, 3, 1), (3, 7, 1, 5), offset=4), 1)


@pytest.mark.exercise("3.2")
@given(cases_with(squeeze_dims))
@example(SQUEEZE_EXAMPLE)
def test_squeeze_layout_matches_numpy(case_and_dim):
    """squeeze_layout drops exactly the dims np.squeeze drops and keeps offset and strides."""
    case, dim = case_and_dim
    expected = np.squeeze(case.array, axis=dim)
    assert_layout_matches(squeeze_layout(case.layout, dim), case, expected, SQUEEZE)


@pytest.mark.exercise("3.2")
@given(cases_with(squeeze_dims))
@example(SQUEEZE_EXAMPLE)
def test_tensor_squeeze_is_a_view(case_and_dim):
    """t.squeeze(dim) is a view sharing storage, equal to np.squeeze."""
    case, dim = case_and_dim
    t = case.tensor()
    result = t.squeeze() if dim is None else t.squeeze(dim)
    assert_view_matches(result, t, case, np.squeeze(case.array, axis=dim), SQUEEZE)


@pytest.mark.exercise("3.2")
@pytest.mark.parametrize(
    "shape, strides, dim",
    [
        ((1, 3, 1, 2), (50, 7, 30, 2), -2),
        ((1, 3, 1, 2), (50, 7, 30, 2), 0),
        ((1, 3, 1, 2), (50, 7, 30, 2), 2),
        ((1, 3, 1, 2), (50, 7, 30, 2), -4),
        ((3, 1), (2, 9), -1),
        ((2, 1, 1, 3), (-9, 4, 5, 3), (1, -2)),
        ((1, 1, 1), (1, 1, 1), None),
        ((2, 1, 3, 1), (7, 30, 2, 9), None),
        ((4, 1, 3), (3, 0, -1), 1),
    ],
)
def test_squeeze_layout_removes_the_named_dim(shape, strides, dim):
    """The named size-1 dim goes (negative dims count from the end; None names every size-1
    dim, and only those); the others keep their sizes and strides in order."""
    case = strided_case(shape, strides, offset=20)
    expected = np.squeeze(case.array, dim)
    assert_layout_matches(squeeze_layout(case.layout, dim), case, expected, SQUEEZE)


@pytest.mark.exercise("3.2")
@pytest.mark.parametrize(
    "shape, dim, error, values",
    [
        ((2, 3), 1, ValueError, [1, 3, (2, 3)]),
        ((2, 1, 3), -1, ValueError, [3, (2, 1, 3)]),
        ((1, 4), (0, 1), ValueError, [1, 4, (1, 4)]),
        ((2, 1), 2, IndexError, [2]),
        ((2, 1), -3, IndexError, [-3, 2]),
    ],
)
def test_squeeze_rejects_dims_that_are_not_size_one_or_out_of_range(shape, dim, error, values):
    """Squeezing a dim whose size is not 1 is a ValueError naming the dim and its size; a dim
    out of range is an IndexError naming it. NumPy rejects the same dims."""
    case = random_case(shape)
    with pytest.raises(ValueError):
        np.squeeze(case.array, axis=dim)
    with raises_naming(error, *values):
        squeeze_layout(case.layout, dim)
    with raises_naming(error, *values):
        case.tensor().squeeze(dim)


# ---------------------------------------------------------------------------------------------
# 3.3 unsqueeze_layout
# ---------------------------------------------------------------------------------------------


def unsqueeze_dims(shape: tuple[int, ...]) -> st.SearchStrategy[int]:
    return st.integers(-len(shape) - 1, len(shape))


EXPAND_DIMS = "NumPy's expand_dims inserts the size-1 dim at that place (-1: at the end)"
UNSQUEEZE_EXAMPLE = (counting_case((2, 3), (1, 2), offset=1), 1)


@pytest.mark.exercise("3.3")
@given(cases_with(unsqueeze_dims))
@example(UNSQUEEZE_EXAMPLE)
def test_unsqueeze_layout_matches_numpy_expand_dims(case_and_dim):
    """unsqueeze_layout inserts a size-1 dim where np.expand_dims does (-1 appends it)."""
    case, dim = case_and_dim
    expected = np.expand_dims(case.array, dim)
    assert_layout_matches(unsqueeze_layout(case.layout, dim), case, expected, EXPAND_DIMS)


@pytest.mark.exercise("3.3")
@given(cases_with(unsqueeze_dims))
@example(UNSQUEEZE_EXAMPLE)
def test_tensor_unsqueeze_is_a_view(case_and_dim):
    """t.unsqueeze(dim) is a view sharing storage, equal to np.expand_dims."""
    case, dim = case_and_dim
    expected = np.expand_dims(case.array, dim)
    t = case.tensor()
    assert_view_matches(t.unsqueeze(dim), t, case, expected, EXPAND_DIMS)


@pytest.mark.exercise("3.3")
@given(
    st.lists(st.integers(1, 4), max_size=4).flatmap(
        lambda shape: st.tuples(st.just(tuple(shape)), unsqueeze_dims(tuple(shape)))
    )
)
@example(((2, 3), 1))
def test_unsqueeze_keeps_a_row_major_tensor_row_major(shape_and_dim):
    """On a row-major tensor every stride, the new dim's too, is the row-major stride of the
    new shape (as NumPy's expand_dims gives), so code that checks strides one by one still
    sees a contiguous tensor."""
    shape, dim = shape_and_dim
    case = random_case(shape)
    expected = np.expand_dims(case.array, dim)
    result = unsqueeze_layout(case.layout, dim)
    assert_layout_matches(result, case, expected, EXPAND_DIMS)
    row_major = row_major_strides(expected.shape)
    assert numpy_strides(expected) == row_major
    rule = "the new size-1 dim too gets the row-major stride of its place, as NumPy's expand_dims"
    expect("strides of the new layout", result.strides, row_major, rule)


@pytest.mark.exercise("3.3")
@pytest.mark.parametrize("shape, dim", [((2, 3), 3), ((2, 3), -4), ((), 1), ((), -2), ((5,), 7)])
def test_unsqueeze_rejects_dims_out_of_range(shape, dim):
    """A dim outside -(ndim + 1) .. ndim is an IndexError naming it (NumPy rejects it too)."""
    case = random_case(shape)
    with pytest.raises(IndexError):
        np.expand_dims(case.array, dim)
    with raises_naming(IndexError, dim, shape):
        unsqueeze_layout(case.layout, dim)
    with raises_naming(IndexError, dim, shape):
        case.tensor().unsqueeze(dim)


# ---------------------------------------------------------------------------------------------
# 3.4 permute_layout
# ---------------------------------------------------------------------------------------------


@st.composite
def permutations(draw: st.DrawFn, shape: tuple[int, ...]) -> tuple[int, ...]:
    """A permutation of the dims of `shape`, some entries counted from the end."""
    ndim = len(shape)
    order = draw(st.permutations(range(ndim)))
    return tuple(d - ndim if draw(st.booleans()) else d for d in order)


@st.composite
def dim_pairs(draw: st.DrawFn, shape: tuple[int, ...]) -> tuple[int, int]:
    """Two dims of `shape` (maybe equal), either counted from the end."""
    ndim = len(shape)
    dim = st.integers(-ndim, ndim - 1)
    return draw(dim), draw(dim)


TRANSPOSE = "np.transpose: dim k of the result is dim dims[k] of the input"
PERMUTE_EXAMPLE = (counting_case((2, 3, 4), (12, 4, 1), offset=0), (1, 2, 0))


@pytest.mark.exercise("3.4")
@given(cases_with(permutations))
@example(PERMUTE_EXAMPLE)
def test_permute_layout_matches_numpy_transpose(case_and_dims):
    """permute_layout(layout, dims) is np.transpose(array, dims): dim k is input dim dims[k]."""
    case, dims = case_and_dims
    expected = np.transpose(case.array, dims)
    assert_layout_matches(permute_layout(case.layout, dims), case, expected, TRANSPOSE)


@pytest.mark.exercise("3.4")
@given(cases_with(permutations))
@example(PERMUTE_EXAMPLE)
def test_tensor_permute_is_a_view(case_and_dims):
    """t.permute(*dims) and t.permute(dims) are views equal to np.transpose."""
    case, dims = case_and_dims
    expected = np.transpose(case.array, dims)
    t = case.tensor()
    assert_view_matches(t.permute(dims), t, case, expected, TRANSPOSE)
    if dims:
        assert_view_matches(t.permute(*dims), t, case, expected, TRANSPOSE)


@pytest.mark.exercise("3.4")
@pytest.mark.parametrize(
    "dims", [(1, 2, 0), (2, 0, 1), (-2, -1, -3), (1, 0, 2), (0, 1, 2), (2, 1, 0)]
)
def test_permute_is_not_its_inverse(dims):
    """Permutations that are not their own inverse: dim k of the result is dim dims[k] of the
    input, not the other way round."""
    case = strided_case((2, 3, 4), (1, -10, 2), offset=25)
    expected = np.transpose(case.array, dims)
    assert_layout_matches(permute_layout(case.layout, dims), case, expected, TRANSPOSE)


@pytest.mark.exercise("3.4")
@given(cases_with(dim_pairs, min_dims=1))
@example((PERMUTE_EXAMPLE[0], (0, 2)))
def test_transpose_and_swapaxes_match_numpy(case_and_dims):
    """t.transpose(a, b) and t.swapaxes(a, b) swap two dims as np.swapaxes does."""
    case, (a, b) = case_and_dims
    expected = np.swapaxes(case.array, a, b)
    t = case.tensor()
    rule = "np.swapaxes swaps the two dims"
    assert_view_matches(t.transpose(a, b), t, case, expected, rule)
    assert_view_matches(t.swapaxes(a, b), t, case, expected, rule)


@pytest.mark.exercise("3.4")
@given(cases())
@example(PERMUTE_EXAMPLE[0])
def test_dot_t_reverses_the_dims(case):
    """t.T reverses every dim, as NumPy's .T does (a 0-d or 1-d tensor is unchanged)."""
    t = case.tensor()
    assert_view_matches(t.T, t, case, case.array.T, "NumPy's .T reverses the dims")


@pytest.mark.exercise("3.4")
@given(cases_with(dim_pairs, min_dims=1))
@example((PERMUTE_EXAMPLE[0], (0, 2)))
def test_movedim_matches_numpy_moveaxis(case_and_dims):
    """t.movedim(source, destination) moves one dim and keeps the others in order."""
    case, (source, destination) = case_and_dims
    expected = np.moveaxis(case.array, source, destination)
    t = case.tensor()
    rule = "np.moveaxis moves one dim and keeps the others in order"
    assert_view_matches(t.movedim(source, destination), t, case, expected, rule)


@pytest.mark.exercise("3.4")
@pytest.mark.parametrize(
    "dims, error, values",
    [
        ((0, 1), ValueError, [(0, 1), 2, (2, 3, 4), 3]),
        ((0, 1, 2, 3), ValueError, [(0, 1, 2, 3), 4, (2, 3, 4), 3]),
        ((0, 0, 1), ValueError, [(0, 0, 1)]),
        ((2, -1, 0), ValueError, [(2, -1, 0)]),
        ((0, 1, 3), IndexError, [3]),
        ((-4, 0, 1), IndexError, [-4, 3]),
    ],
)
def test_permute_rejects_what_is_not_a_permutation(dims, error, values):
    """Too few or too many dims, a dim named twice (also as -1 and 2) or a dim out of range
    raise an error naming the permutation or the dim; NumPy rejects them too."""
    case = random_case((2, 3, 4))
    with pytest.raises((ValueError, IndexError)):
        np.transpose(case.array, dims)
    with raises_naming(error, *values):
        permute_layout(case.layout, dims)
    with raises_naming(error, *values):
        case.tensor().permute(dims)


# ---------------------------------------------------------------------------------------------
# 3.5 index_layout
# ---------------------------------------------------------------------------------------------


INDEXING = "the view NumPy's array[key] makes"
INDEX_EXAMPLE = (
    counting_case((2, 3, 4), (12, 4, 1), offset=1),
    (1, slice(None, None, 2), slice(1, None)),
)


# the corner: an empty slice moves the storage offset nowhere, also a reversed one, whose start
# (-1 for a size-0 dim) would move it before the storage
EMPTY_SLICE_EXAMPLE = (
    counting_case((2, 0), (1, 1), offset=0),
    (slice(None), slice(None, None, -1)),
)


@pytest.mark.exercise("3.5")
@given(cases_with(index_keys))
@example(INDEX_EXAMPLE)
@example(EMPTY_SLICE_EXAMPLE)
def test_index_layout_matches_numpy_basic_indexing(case_and_key):
    """index_layout(layout, key) is the view NumPy's array[key] makes: ints (negative too),
    slices with any step and any bounds, None and `...`."""
    case, key = case_and_key
    expected = numpy_index(case.array, key)
    assert_layout_matches(index_layout(case.layout, key), case, expected, INDEXING)


@pytest.mark.exercise("3.5")
@given(cases_with(index_keys))
@example(INDEX_EXAMPLE)
def test_tensor_getitem_is_a_view(case_and_key):
    """t[key] is a view sharing storage, equal to NumPy's array[key]."""
    case, key = case_and_key
    t = case.tensor()
    assert_view_matches(t[key], t, case, numpy_index(case.array, key), INDEXING)


@st.composite
def cases_and_backward_slices(draw: st.DrawFn) -> tuple[Case, tuple[slice, ...]]:
    """A Case with no empty dims and a key of slices, each with a negative step."""
    shape = tuple(draw(st.lists(st.integers(1, 5), min_size=1, max_size=4)))
    case = draw(cases(shape=shape))
    key = tuple(draw(slices(size, st.integers(-3, -1))) for size in shape)
    return case, key[: draw(st.integers(1, len(key)))]


@pytest.mark.exercise("3.5")
@given(cases_and_backward_slices())
@example((counting_case((3, 4), (4, 1), offset=0), (slice(None, None, -1), slice(3, 0, -2))))
def test_negative_steps_match_numpy(case_and_key):
    """Slices with negative steps start at the right element (the offset moves there) and
    walk backwards: the stride is the dim's stride times the step."""
    case, key = case_and_key
    expected = numpy_index(case.array, key)
    rule = rules(INDEXING, "a negative step starts at the start bound and walks backwards")
    assert_layout_matches(index_layout(case.layout, key), case, expected, rule)
    t = case.tensor()
    assert_view_matches(t[key], t, case, expected, rule)


@pytest.mark.exercise("3.5")
@pytest.mark.parametrize(
    "key",
    [
        slice(None, None, -1),
        slice(4, 1, -2),
        slice(1, 4, -1),
        slice(10, -10, -1),
        slice(-10, 10, 2),
        slice(-1, None, -3),
        slice(None, -7, -1),
        slice(100, None, -4),
        slice(5, 0, -1),
        slice(2, 2),
        slice(-2, None),
        slice(1, None, 4),
        -1,
        -6,
        3,
        (None, slice(3, None, -2), None),
        (Ellipsis, -2),
        (),
    ],
)
def test_slices_of_a_strided_vector(key):
    """Slices of a 1-d layout with stride 2 and storage offset 3: negative steps start at the
    right element, out-of-range bounds are clipped, and the offset moves to the first
    element."""
    case = strided_case((6,), (2,), offset=3)
    expected = numpy_index(case.array, key)
    assert_layout_matches(index_layout(case.layout, key), case, expected, INDEXING)


@pytest.mark.exercise("3.5")
@pytest.mark.parametrize(
    "key",
    [
        (slice(None, None, -1), slice(1, None, -1)),
        (slice(None, None, -2), -1),
        (-1, slice(None, None, -3)),
        (Ellipsis, slice(3, 0, -2)),
        (slice(1, 2), Ellipsis, None),
        (None, 1, None, slice(None, None, -1), None),
        (slice(3, None, -1), slice(-1, -5, -1)),
        (slice(0, 0), slice(None, None, -1)),
    ],
)
def test_slices_of_a_layout_with_a_negative_stride(key):
    """Slices of a 2-d layout whose dim 1 already runs backwards through storage."""
    case = strided_case((4, 5), (6, -1), offset=7)
    expected = numpy_index(case.array, key)
    assert_layout_matches(index_layout(case.layout, key), case, expected, INDEXING)


@pytest.mark.exercise("3.5")
@pytest.mark.parametrize(
    "key, error, values",
    [
        ((0, 3), IndexError, [3, 1]),
        ((2, 0), IndexError, [2, 0]),
        ((slice(None), -4), IndexError, [-4, 1, 3]),
        (-3, IndexError, [-3, 0, 2]),
        ((0, 0, 0), IndexError, [3, (2, 3)]),
        ((None, 0, slice(None), 1), IndexError, [3, (2, 3)]),
        ((Ellipsis, 0, Ellipsis), IndexError, [(Ellipsis, 0, Ellipsis)]),
        (1.5, TypeError, [1.5]),
        ((0, "a"), TypeError, ["a"]),
        ((0, True), TypeError, [True]),
        ((slice(None, None, 0),), ValueError, []),
    ],
)
def test_indexing_rejects_bad_keys(key, error, values):
    """An int out of range, too many indices, two `...`, an index that is not an int and a
    step of 0 raise errors naming the offending index, size or shape."""
    case = random_case((2, 3))
    with raises_naming(error, *values):
        index_layout(case.layout, key)
    with raises_naming(error, *values):
        case.tensor()[key]


GATHER = "NumPy's fancy indexing: a list index gathers into a new row-major tensor"


@pytest.mark.exercise("3.5")
@given(cases_with(lambda shape: index_keys(shape, gather=True), min_dims=1))
@example((INDEX_EXAMPLE[0], (1, [2, 0, 2], slice(None, None, -2))))
def test_gather_with_a_list_matches_numpy_fancy_indexing(case_and_key):
    """t[key] with one list index (duplicates and negative entries allowed, combined with
    ints, slices, None and `...`) equals NumPy's fancy indexing and is a contiguous copy."""
    case, key = case_and_key
    expected = case.array[key]
    t = case.tensor()
    with stand_in("3.4", standin_permute_layout):
        result = t[key]
    expect_copy(result, t, "the gather result", GATHER)
    assert_same(result, expected, what="the gather result", rule=GATHER)
    if expected.size:
        expect_row_major("the gather result", result, expected.shape, GATHER)


@pytest.mark.exercise("3.5")
@pytest.mark.parametrize(
    "key",
    [
        [0, 0, 2],
        [-1, 0, -1, 1],
        [],
        (slice(None), [2, 2, 0]),
        (slice(None, None, -1), [2]),
        (1, [1, -3]),
        ([2, 0], 1),
        ([1, 1], slice(None), slice(None, None, -2)),
        (Ellipsis, [0, 3, 0]),
        (None, [2, 1]),
        (slice(None), 0, [1, 0, 1]),
        (0, slice(None), [1, 2]),
        (0, None, [1, 2]),
    ],
)
def test_gather_examples(key):
    """List indices on a (3, 3, 4) tensor whose layout has an offset and a negative stride,
    against NumPy's fancy indexing: equal elements, new storage."""
    case = strided_case((3, 3, 4), (-1, 12, 3), offset=2)
    t = case.tensor()
    with stand_in("3.4", standin_permute_layout):
        result = t[key]
    expect_copy(result, t, "the gather result", GATHER)
    assert_same(result, case.array[key], what="the gather result", rule=GATHER)


@pytest.mark.exercise("3.5")
@pytest.mark.parametrize(
    "key, values",
    [([0, 3], [3, 0]), ((slice(None), [-4]), [-4, 1, 3])],
)
def test_gather_rejects_list_entries_out_of_range(key, values):
    """A list entry out of range is an IndexError naming the entry and the dim's size."""
    t = random_case((3, 3)).tensor()
    with stand_in("3.4", standin_permute_layout), raises_naming(IndexError, *values):
        t[key]


# ---------------------------------------------------------------------------------------------
# 3.6 layout_runs
# ---------------------------------------------------------------------------------------------


def assert_runs_match_numpy(runs: Any, case: Case) -> None:
    """`runs` are the runs of `case.layout`, judged by NumPy: it can reshape the array to the
    run sizes without a copy (with the runs' strides), and it cannot merge two neighbouring
    runs without a copy. No elements: [(0, 1)]; one element: []."""
    array = case.array
    what = f"the runs of {case.layout}"
    pairs = "a list of (size, stride) tuples"
    if not isinstance(runs, list):
        raise Mismatch(f"type of {what}", type(runs).__name__, "list", pairs)
    if not all(isinstance(run, tuple) and len(run) == 2 for run in runs):
        raise Mismatch(what, runs, pairs)
    if array.size <= 1:
        rule = "no elements: [(0, 1)]; one element: no runs"
        expect(what, runs, [(0, 1)] if array.size == 0 else [], rule)
        return
    run_sizes = tuple(size for size, _ in runs)
    if not all(size > 1 for size in run_sizes):
        raise Mismatch(what, runs, "runs of size 2 or more", "a dim of size 1 never moves")
    merged = numpy_reshape_view(array, run_sizes)
    if merged is None:
        rule = f"NumPy reshapes the layout's {array.size} elements to the run sizes, no copy"
        raise Mismatch(what, runs, "runs that read the layout's elements in order", rule)
    rule = "NumPy's strides when it reshapes the layout to the run sizes"
    expect(f"strides of {what}", tuple(stride for _, stride in runs), numpy_strides(merged), rule)
    for i in range(len(runs) - 1):
        joined = run_sizes[:i] + (run_sizes[i] * run_sizes[i + 1],) + run_sizes[i + 2 :]
        if numpy_reshape_view(array, joined) is not None:
            one_run = [(run_sizes[i] * run_sizes[i + 1], runs[i + 1][1])]
            rule = "neighbouring dims that step through storage as one are merged into one run"
            raise Mismatch(f"runs {i} and {i + 1} of {case.layout}", runs[i : i + 2], one_run, rule)


@pytest.mark.exercise("3.6")
@given(cases())
@example(counting_case((2, 3, 4), (24, 4, 1), offset=1))
def test_layout_runs_are_the_dims_numpy_merges(case):
    """Any layout (stride 0, negative strides, gaps, size-0 and size-1 dims): the runs read the
    layout's elements in order, and no two neighbouring runs could be one."""
    assert_runs_match_numpy(layout_runs(case.layout), case)


@pytest.mark.exercise("3.6")
@pytest.mark.parametrize(
    "shape, strides, runs",
    [
        ((2, 3, 4), (12, 4, 1), [(24, 1)]),
        ((2, 4, 3), (12, 1, 4), [(2, 12), (4, 1), (3, 4)]),
        ((4, 3), (6, 1), [(4, 6), (3, 1)]),
        ((2, 1, 3), (3, 100, 1), [(6, 1)]),
        ((2, 3), (0, 1), [(2, 0), (3, 1)]),
        ((2, 3), (0, 0), [(6, 0)]),
        ((2, 3), (1, 0), [(2, 1), (3, 0)]),
        ((6,), (-1,), [(6, -1)]),
        ((2, 3), (-3, -1), [(6, -1)]),
        ((2, 3), (-3, 1), [(2, -3), (3, 1)]),
        ((4,), (0,), [(4, 0)]),
        ((1, 1), (5, 9), []),
        ((), (), []),
        ((0, 3), (3, 1), [(0, 1)]),
        ((3, 0), (1, 5), [(0, 1)]),
    ],
)
def test_layout_runs_examples(shape, strides, runs):
    """Row-major, transposed, gapped, stride-0, backwards, size-1 and empty layouts."""
    case = strided_case(shape, strides, offset=9)
    assert_runs_match_numpy(runs, case)  # the expected runs agree with NumPy
    rule = "each run: dims that step through storage as one, merged"
    expect(f"the runs of {case.layout}", layout_runs(case.layout), runs, rule)


# ---------------------------------------------------------------------------------------------
# 3.7 cut_runs
# ---------------------------------------------------------------------------------------------


@st.composite
def runs_lists(draw: st.DrawFn) -> list[tuple[int, int]]:
    """Runs as layout_runs gives them for two or more elements: sizes of 2 or more, strides of
    any sign (0 too), no two neighbours that would join."""
    runs = draw(
        st.lists(st.tuples(st.integers(2, 5), st.integers(-12, 12)), min_size=1, max_size=3)
    )
    joinable = any(outer[1] == size * stride for outer, (size, stride) in zip(runs, runs[1:]))
    return draw(st.nothing()) if joinable else runs


def runs_case(runs: list[tuple[int, int]]) -> Case:
    """A Case whose layout has one dim per run, with the run's size and stride."""
    shape = tuple(size for size, _ in runs)
    strides = tuple(stride for _, stride in runs)
    return strided_case(shape, strides, offset=-reach(shape, strides)[0])


def size_one_stride(shape: tuple[int, ...], strides: tuple[int, ...], dim: int, runs) -> int:
    """The stride a new size-1 dim gets: that of a dim of its place, i.e. the stride of the
    nearest bigger dim inside it times that dim's size, or the innermost run's stride."""
    inner = next((d for d in range(dim + 1, len(shape)) if shape[d] != 1), None)
    return runs[-1][1] if inner is None else strides[inner] * shape[inner]


def assert_cut_matches_numpy(runs: list[tuple[int, int]], shape: tuple[int, ...]) -> None:
    """cut_runs gives None exactly when NumPy must copy to reshape the runs' layout to `shape`,
    and otherwise NumPy's strides (size-1 dims: the stride of their place)."""
    expected = numpy_reshape_view(runs_case(runs).array, shape)
    result = cut_runs(runs, shape)
    what = f"strides of the runs {runs} cut into {shape}"
    if expected is None:
        if result is not None:
            raise Mismatch(what, result, None, "NumPy must copy to reshape these runs so")
        return
    want = list(numpy_strides(expected))
    for dim, size in enumerate(shape):
        if size == 1:
            want[dim] = size_one_stride(shape, tuple(want), dim, runs)
    rule = "NumPy's reshape without a copy; a size-1 dim gets the stride of its place"
    if result is None:
        raise Mismatch(what, None, tuple(want), rule)
    expect(f"number of {what}", len(result), len(shape), "one stride per dim")
    expect(what, tuple(result), tuple(want), rule)


@pytest.mark.exercise("3.7")
@given(
    runs_lists().flatmap(
        lambda runs: st.tuples(st.just(runs), new_shapes(tuple(size for size, _ in runs)))
    )
)
@example(([(2, 12), (6, 1)], (2, 3, 2)))
def test_cut_runs_matches_numpy_reshape_without_copy(runs_and_shape):
    """Runs of any strides cut into shapes made by merging, splitting and inserting 1s."""
    runs, shape = runs_and_shape
    count = math.prod(size for size, _ in runs)
    shape = np.empty(count).reshape(shape).shape  # the -1, if any, filled in
    assert_cut_matches_numpy(runs, shape)


@pytest.mark.exercise("3.7")
@pytest.mark.parametrize(
    "runs, shape, strides",
    [
        ([(6, 1)], (2, 1, 3), (3, 3, 1)),
        ([(6, 1)], (6, 1), (1, 1)),
        ([(6, 1)], (1, 6), (6, 1)),
        ([(6, 1)], (2, 3), (3, 1)),
        ([(2, 12), (3, 1)], (2, 1, 3), (12, 3, 1)),
        ([(2, 12), (3, 1)], (1, 2, 3, 1), (24, 12, 1, 1)),
        ([(3, 1), (2, 3)], (6,), None),
        ([(2, 12), (3, 1)], (3, 2), None),
        ([(4, 0), (3, 1)], (2, 2, 3), (0, 0, 1)),
        ([(2, 0), (3, 1)], (6,), None),
        ([(6, 0)], (3, 2), (0, 0)),
        ([(6, -1)], (2, 3), (-3, -1)),
        ([(2, -3), (3, 1)], (2, 3, 1), (-3, 1, 1)),
        ([(12, 2)], (2, 3, 2), (12, 4, 2)),
    ],
)
def test_cut_runs_examples(runs, shape, strides):
    """Small cuts, including PyTorch's strides for new size-1 dims:
    torch.empty(6).view(2, 1, 3).stride() == (3, 3, 1)."""
    assert_cut_matches_numpy(runs, shape)  # the expected strides agree with NumPy
    result = cut_runs(runs, shape)
    what = f"strides of the runs {runs} cut into {shape}"
    if strides is None:
        expect(what, result, None, "NumPy must copy to reshape these runs so")
    elif result is None:
        raise Mismatch(what, None, strides, "NumPy's reshape without a copy")
    else:
        expect(what, tuple(result), strides, "a size-1 dim gets the stride of its place")


@pytest.mark.exercise("3.7")
@pytest.mark.parametrize(
    "runs, shape, values",
    [
        ([(6, 1)], (4, 2), [(4, 2), 6]),
        ([(2, 5), (3, 1)], (7,), [(7,), 6]),
        ([(2, 0), (4, 1)], (3, 3), [(3, 3), 8]),
    ],
)
def test_cut_runs_rejects_shapes_of_another_size(runs, shape, values):
    """A shape that does not hold the runs' elements is a ValueError naming the shape and how
    many elements the runs hold."""
    with raises_naming(ValueError, *values):
        cut_runs(runs, shape)


# ---------------------------------------------------------------------------------------------
# ---------------------------------------------------------------------------------------------
# 3.7 view_layout, view, reshape (3.1, 3.6 and 3.7 together); 2.6 contiguous()
# ---------------------------------------------------------------------------------------------


VIEW_EXAMPLE = (counting_case((4, 3), (6, 1), offset=2), (2, 2, 3))
NO_COPY = "np.reshape without a copy"
NEEDS_COPY = "NumPy needs a copy to reshape this layout so"


def expect_none_layout(layout: object, case: Case, shape: tuple[int, ...]) -> None:
    """view_layout gave None, as NumPy cannot reshape `case` to `shape` without a copy."""
    if layout is not None:
        raise Mismatch(f"view_layout({case.layout}, {shape})", layout, None, NEEDS_COPY)


def expect_some_layout(layout: object, case: Case, shape: tuple, expected: np.ndarray) -> None:
    """view_layout gave a layout, as NumPy reshapes `case` to `shape` without a copy."""
    if layout is None:
        due = "a Layout"
        if expected.size:
            due = Layout(expected.shape, numpy_strides(expected), numpy_offset(case, expected))
        raise Mismatch(f"view_layout({case.layout}, {shape})", None, due, NO_COPY)


@pytest.mark.exercise("3.7")
@given(cases_with(new_shapes))
@example(VIEW_EXAMPLE)
def test_view_layout_matches_numpy_reshape_without_copy(case_and_shape):
    """view_layout returns a layout exactly when NumPy can reshape without a copy; that layout
    reads the elements of np.reshape (same offset, same strides on dims of size > 1). It
    returns None exactly when NumPy would need a copy."""
    case, shape = case_and_shape
    expected = numpy_reshape_view(case.array, shape)
    result = view_layout(case.layout, shape)
    if expected is None:
        expect_none_layout(result, case, shape)
    else:
        expect_some_layout(result, case, shape, expected)
        assert_layout_matches(result, case, expected, NO_COPY)


@pytest.mark.exercise("3.7")
@given(cases_with(new_shapes))
@example(VIEW_EXAMPLE)
def test_tensor_view_shares_storage_or_raises(case_and_shape):
    """t.view(shape) is a view equal to np.reshape when the strides allow it, and otherwise a
    ValueError naming the requested shape."""
    case, shape = case_and_shape
    expected = numpy_reshape_view(case.array, shape)
    t = case.tensor()
    if expected is None:
        with raises_naming(ValueError, shape):
            t.view(shape)
    else:
        assert_view_matches(t.view(shape), t, case, expected, NO_COPY)
        if shape:
            assert_view_matches(t.view(*shape), t, case, expected, NO_COPY)


@pytest.mark.exercise("3.7")
@given(cases_with(new_shapes))
@example((counting_case((3, 4), (1, 3), offset=2), (2, 6)))
def test_reshape_copies_exactly_when_view_cannot(case_and_shape):
    """t.reshape(shape) is a view when NumPy's reshape is one, else a row-major copy with new
    storage; either way it holds np.reshape's elements."""
    case, shape = case_and_shape
    expected = np.reshape(case.array, shape)
    t = case.tensor()
    result = t.reshape(shape)
    if numpy_reshape_view(case.array, shape) is not None:
        assert_view_matches(result, t, case, expected, NO_COPY)
    else:
        rule = "a reshape that cannot be a view makes a row-major copy, as np.reshape"
        expect_copy(result, t, "the reshape", rule)
        assert_same(result, expected, what="the reshape", rule=rule)
        expect_row_major("the reshape", result, expected.shape, rule)


@pytest.mark.exercise("3.7")
@pytest.mark.parametrize(
    "shape, strides, new_shape",
    [
        ((3, 2), (1, 3), (6,)),
        ((3, 2), (1, 3), (2, 3)),
        ((3, 2), (1, 3), (3, 2)),
        ((3, 2), (1, 3), (3, 1, 2)),
        ((3, 2), (1, 3), (1, 6)),
        ((2, 3, 4), (12, 1, 3), (6, 4)),
        ((2, 3, 4), (12, 1, 3), (2, 12)),
        ((2, 3, 4), (12, 1, 3), (-1, 3, 4)),
        ((2, 3), (-3, 1), (6,)),
        ((2, 3), (-3, 1), (2, 3, 1)),
        ((4, 3), (6, 1), (12,)),
        ((4, 3), (6, 1), (2, 6)),
        ((4, 3), (6, 1), (2, 2, 3)),
        ((2, 1, 3), (3, 100, 1), (6,)),
        ((2, 1, 3), (3, -7, 1), (3, 2)),
        ((2, 3), (0, 1), (6,)),
        ((2, 3), (0, 1), (2, 3, 1)),
        ((2, 3), (1, 0), (6,)),
        ((2, 3), (0, 0), (3, 2)),
        ((4,), (0,), (2, 2)),
        ((6,), (-1,), (2, 3)),
        ((6,), (2,), (3, -1)),
    ],
)
def test_view_layout_examples(shape, strides, new_shape):
    """Transposed, gapped, negative-stride, stride-0 and size-1 layouts: view_layout agrees
    with NumPy on whether the reshape can be a view, and on the view itself."""
    case = strided_case(shape, strides, offset=9)
    expected = numpy_reshape_view(case.array, new_shape)
    result = view_layout(case.layout, new_shape)
    if expected is None:
        expect_none_layout(result, case, new_shape)
    else:
        expect_some_layout(result, case, new_shape, expected)
        assert_layout_matches(result, case, expected, NO_COPY)


@pytest.mark.exercise("3.1")
@pytest.mark.parametrize(
    "shape, strides, new_shape",
    [
        ((1, 1), (5, 9), (1,)),
        ((1, 1), (5, 9), ()),
        ((0, 3), (3, 1), (3, 0)),
        ((0, 3), (3, 1), (1, 0, 5)),
        ((3, 0), (1, 5), (-1, 3)),
    ],
)
def test_view_layout_of_at_most_one_element(shape, strides, new_shape):
    """A layout of one element or none can take any shape of that many elements (view_layout
    does it without runs): NumPy agrees, and a layout with an element keeps its offset."""
    case = strided_case(shape, strides, offset=9)
    expected = numpy_reshape_view(case.array, new_shape)
    assert expected is not None
    rule = "at most one element takes any shape of that many elements"
    assert_layout_matches(view_layout(case.layout, new_shape), case, expected, rule)


@pytest.mark.exercise("3.7")
def test_view_of_a_transposed_matrix_needs_a_copy():
    """A transposed matrix does not read its elements in storage order, so viewing it as a
    vector raises a ValueError naming the shape asked for."""
    case = strided_case((3, 2), (1, 3), offset=0)
    with pytest.raises(ValueError):
        np.reshape(case.array, (6,), copy=False)
    expect_none_layout(view_layout(case.layout, (6,)), case, (6,))
    expect_none_layout(view_layout(case.layout, (-1,)), case, (-1,))
    with raises_naming(ValueError, (3, 2), (1, 3), (6,)):
        case.tensor().view(6)


@pytest.mark.exercise("3.1")
@pytest.mark.parametrize(
    "shape, new_shape, values",
    [
        ((2, 3), (4,), [(4,), 6]),
        ((2, 3), (-1, -1), [(-1, -1)]),
        ((2, 3), (4, -1), [(4, -1), 6]),
        ((0, 3), (-1, 0), [(-1, 0)]),
        ((2, 3), (2, -3), [(2, -3), -3]),
    ],
)
def test_view_rejects_shapes_of_the_wrong_size(shape, new_shape, values):
    """view and reshape to a shape that cannot hold the elements raise a ValueError naming
    that shape (NumPy's reshape raises too)."""
    case = random_case(shape)
    if min(new_shape) >= -1:
        with pytest.raises(ValueError):
            np.reshape(case.array, new_shape)
    with raises_naming(ValueError, *values):
        view_layout(case.layout, new_shape)
    with raises_naming(ValueError, *values):
        case.tensor().view(new_shape)
    with raises_naming(ValueError, *values):
        case.tensor().reshape(*new_shape)


@pytest.mark.provided  # contiguous() copies with provided code (tenxor/row_major.py)
@given(cases())
@example(counting_case((3, 4), (1, 3), offset=2))
def test_contiguous_returns_self_or_a_row_major_copy(case):
    """contiguous() returns the tensor itself when it is C-contiguous in NumPy's sense, and
    otherwise a row-major copy with new storage and the same elements."""
    t = case.tensor()
    result = t.contiguous()
    if case.array.flags.c_contiguous:
        if result is not t:
            rule = "a C-contiguous tensor is not copied"
            raise Mismatch("t.contiguous() of a contiguous tensor", "another tensor", "t", rule)
    else:
        rule = "a tensor that is not C-contiguous is copied in row-major order"
        if result is t:
            raise Mismatch("t.contiguous() of a tensor that is not contiguous", "t", "a copy", rule)
        expect_copy(result, t, "the contiguous copy", rule)
        expected = row_major_strides(case.array.shape)
        expect("strides of the contiguous copy", result.strides, expected, rule)
        assert_same(result, case.array, what="the contiguous copy", rule=rule)
