"""Chapter 5: the reduce kernel, sum/max/min/mean/argmax, the fused kernel (combine_fold),
matmul, softmax, masked softmax.

Expected values come from NumPy (np.sum, np.max, np.mean, np.argmax, np.einsum, np.matmul and
a numerically stable softmax written with NumPy) applied to the arrays the layouts describe.
"""

from __future__ import annotations

import math
import operator
import tracemalloc
import warnings
from collections.abc import Iterator, Sequence

import numpy as np
import pytest
from hypothesis import assume, example, given
from hypothesis import strategies as st

import tenxor
from tenxor.reductions import (
    combine_fold_values,
    first_largest_position,
    matmul,
    reduce_values,
)
from tenxor.strides import Layout
from tests.support import (
    NUMPY_DTYPES,
    Case,
    Mismatch,
    Scripted,
    assert_same,
    at_most_examples,
    broadcastable_shapes,
    cases,
    compact,
    contiguous_case,
    expect,
    from_numpy,
    masked_softmax_reference,
    raises_naming,
    sizes,
    stable_softmax,
    to_numpy,
    view_case,
)

# ---------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------


@st.composite
def dims_for(draw: st.DrawFn, ndim: int, several: bool = True):
    """None (every dim), one dim, or a tuple of distinct dims in any order; negative or not."""
    options = ["all"] + (["one"] if ndim else []) + (["several"] if ndim and several else [])
    choice = draw(st.sampled_from(options))
    if choice == "all":
        return None
    if choice == "one":
        return draw(st.integers(-ndim, ndim - 1))
    chosen = draw(st.lists(st.integers(0, ndim - 1), min_size=1, max_size=ndim, unique=True))
    return tuple(d - ndim if draw(st.booleans()) else d for d in chosen)


@st.composite
def reductions(draw: st.DrawFn, kind: str = "float", several: bool = True):
    """A Case (up to 5-d, any strides), the dims to reduce and keepdim."""
    case = draw(cases(kind=kind))
    return case, draw(dims_for(case.layout.ndim, several)), draw(st.booleans())


@st.composite
def cases_with_nans(draw: st.DrawFn, **kwargs) -> Case:
    """A float Case with a few NaNs planted in its buffer."""
    case = draw(cases(**kwargs))
    buffer = case.buffer.copy()
    positions = draw(st.lists(st.integers(0, len(buffer) - 1), max_size=3))
    buffer[positions] = np.nan
    return Case(buffer, case.layout)


def example_case(kind: str = "float") -> Case:
    """A typical (2, 3, 4) tensor for an explicit example: each dim has its own size, and it
    is stored column-major (strides (1, 2, 6)), so rows are not contiguous."""
    values = np.arange(24) * 7 % 11 - 5
    buffer = {"float": values * 0.5 + 0.25, "int": values}[kind]
    return Case(buffer, Layout((2, 3, 4), (1, 2, 6)))


def shape_rule(keepdim: bool) -> str:
    """Why a reduction's shape is what it is."""
    if keepdim:
        return "keepdim keeps each reduced dim as size 1"
    return "the reduced dims are dropped"


def reduced_dims(dims, ndim: int) -> list[int]:
    """The dims a reduction folds, counted from the front and sorted."""
    if dims is None:
        return list(range(ndim))
    return sorted(d % ndim for d in ((dims,) if isinstance(dims, int) else dims))


def groups_of(array: np.ndarray, dims) -> list[tuple]:
    """The groups a reduction over `dims` folds, in row-major order of the kept dims; each group
    in row-major order of the reduced dims (NumPy transposes and reshapes)."""
    reduced = reduced_dims(dims, array.ndim)
    kept = [d for d in range(array.ndim) if d not in reduced]
    moved = np.transpose(array, kept + reduced)
    count = math.prod(array.shape[d] for d in kept)
    length = math.prod(array.shape[d] for d in reduced)
    return [tuple(group) for group in moved.reshape(count, length).tolist()]


def numpy_or_error(fn, *args, **kwargs):
    """NumPy's answer as an array, or the exception it raises."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        try:
            return np.asarray(fn(*args, **kwargs))
        except (ValueError, TypeError) as error:
            return error


def assert_close(
    result: tenxor.Tenxor,
    expected: np.ndarray,
    rtol=1e-9,
    atol=1e-9,
    what: str = "the result",
    rule: str = "",
) -> None:
    """Same shape, and close values (NaN where NumPy has NaN); a failure names `what` was
    compared and the `rule` that makes `expected` right."""
    if not isinstance(result, tenxor.Tenxor):
        raise Mismatch(f"type of {what}", type(result).__name__, "Tenxor", rule)
    actual = to_numpy(result)
    expect(f"shape of {what}", actual.shape, expected.shape, rule)
    if not np.allclose(actual, expected, rtol=rtol, atol=atol, equal_nan=True):
        raise Mismatch(f"elements of {what}", actual, expected, rule)


def transposed_case(array: np.ndarray) -> Case:
    """`array` stored with its last two dims swapped and read back through swapped strides."""
    base = np.ascontiguousarray(np.swapaxes(array, -1, -2))
    return view_case(base, np.swapaxes(base, -1, -2))


def sliced_case(array: np.ndarray, steps: tuple[int, ...]) -> Case:
    """`array` read as a slice with `steps` (negative: reversed) of a larger buffer."""
    big = tuple(abs(step) * size + 1 for step, size in zip(steps, array.shape))
    base = np.full(big, -99, dtype=array.dtype)
    key = tuple(
        slice(1, 1 + step * size, step) if step > 0 else slice(-step * size, 0, step)
        for step, size in zip(steps, array.shape)
    )
    base[key] = array
    return view_case(base, base[key])


def expanded_case(small: np.ndarray, shape: tuple[int, ...]) -> Case:
    """`small` stretched to `shape` with stride 0 on the stretched dims."""
    base = np.ascontiguousarray(small)
    return view_case(base, np.broadcast_to(base, shape))


def operand_layouts(array: np.ndarray, small: np.ndarray | None = None) -> dict[str, Case]:
    """`array` as contiguous, transposed, sliced with negative steps, and (if `small` is
    given) as `small` expanded with stride 0."""
    found = {
        "contiguous": contiguous_case(array),
        "transposed": transposed_case(array),
        "sliced": sliced_case(array, tuple(-2 if d % 2 == 0 else 3 for d in range(array.ndim))),
    }
    if small is not None:
        found["expanded"] = expanded_case(small, array.shape)
    return found


@st.composite
def mask_shapes(draw: st.DrawFn, shape: tuple[int, ...]) -> tuple[int, ...]:
    """A shape that broadcasts to `shape`: leading dims dropped, some dims set to 1."""
    keep = draw(st.integers(0, len(shape)))
    tail = shape[len(shape) - keep :]
    return tuple(1 if draw(st.booleans()) else size for size in tail)


def pick_dim(draw: st.DrawFn, shape: tuple[int, ...]) -> int:
    """A dim (negative or not) whose size is not 0."""
    dim = draw(st.integers(-len(shape), len(shape) - 1), label="dim")
    assume(shape[dim] > 0)
    return dim


# The typical case an explicit example tries first: a [2, 3, 4] tensor read column-major from
# an offset, so that a wrong walk shows in its values.
TYPICAL = Case(np.arange(25.0) % 7 - 3, Layout((2, 3, 4), (1, 2, 6), 1))
TYPICAL_INTS = Case(np.arange(25) % 7 - 3, Layout((2, 3, 4), (1, 2, 6), 1))


def typical_values(shape: tuple[int, ...]) -> np.ndarray:
    """Small floats of both signs in `shape`, for a typical explicit example."""
    return (np.arange(int(np.prod(shape))) % 7 - 3.0).reshape(shape)


# ---------------------------------------------------------------------------------------------
# 5.1 reduce_values, sum, max, min
# ---------------------------------------------------------------------------------------------


@pytest.mark.exercise("5.1")
@given(reductions(kind="int"))
@example((example_case("int"), 1, True))
def test_reduce_values_with_sum_matches_numpy(drawn):
    """fold=sum over one dim, several dims, or all: NumPy's shape (keepdim too) and values."""
    case, dims, keepdim = drawn
    shape, values = reduce_values(sum, case.buffer.tolist(), case.layout, dims, keepdim)
    expected = np.sum(case.array, axis=dims, keepdims=keepdim)
    expect("shape of the sum", shape, expected.shape, shape_rule(keepdim))
    rule = "np.sum over the dims, in row-major order of the kept dims"
    expect("values of the sum", values, expected.ravel().tolist(), rule)


@pytest.mark.exercise("5.1")
@given(reductions())
@example((example_case(), (0, 2), False))
def test_reduce_values_with_len_counts_each_group(drawn):
    """fold=len is applied once per group: every result is the group's size (a fold that is
    applied dim by dim would count the wrong thing)."""
    case, dims, keepdim = drawn
    shape, values = reduce_values(len, case.buffer.tolist(), case.layout, dims, keepdim)
    expected = np.sum(np.ones(case.layout.shape, dtype=np.int64), axis=dims, keepdims=keepdim)
    expect("shape of the result", shape, expected.shape, shape_rule(keepdim))
    rule = "fold is called once per group, with the whole group"
    expect("group sizes len returned", values, expected.ravel().tolist(), rule)


@pytest.mark.exercise("5.1")
@given(reductions())
@example((example_case(), -1, False))
def test_reduce_values_with_max_matches_numpy(drawn):
    """A max fold (that accepts empty groups) gives np.max with initial=-inf."""
    case, dims, keepdim = drawn

    def top(group):
        return max(group, default=-math.inf)

    shape, values = reduce_values(top, case.buffer.tolist(), case.layout, dims, keepdim)
    expected = np.max(case.array, axis=dims, keepdims=keepdim, initial=-np.inf)
    expect("shape of the max", shape, expected.shape, shape_rule(keepdim))
    rule = "np.max over the dims, in row-major order of the kept dims"
    expect("values of the max", values, expected.ravel().tolist(), rule)


@pytest.mark.exercise("5.1")
@given(reductions())
@example((example_case(), 1, False))
def test_reduce_values_hands_each_group_to_the_fold(drawn):
    """fold=tuple shows the groups: one per kept index in row-major order; along one dim (or
    all dims) its elements are in row-major order, for several dims the same elements."""
    case, dims, keepdim = drawn
    _, values = reduce_values(tuple, case.buffer.tolist(), case.layout, dims, keepdim)
    expected = groups_of(case.array, dims)
    if dims is None or isinstance(dims, int):
        rule = "one group per kept index, each in row-major order"
        expect("groups handed to the fold", values, expected, rule)
    else:
        rule = "one group per kept index, in row-major order (elements in any order)"
        got = [sorted(group) for group in values]
        due = [sorted(group) for group in expected]
        expect("groups handed to the fold, sorted", got, due, rule)


@pytest.mark.exercise("5.1")
@pytest.mark.parametrize("dims", [0, 1, 2, -1, -3, (0, 2), (2, 0), (-1, 1), (0, 1, 2), None])
@pytest.mark.parametrize("keepdim", [False, True])
def test_reduce_values_on_a_non_square_tensor(dims, keepdim):
    """Shape (2, 3, 4): each dim has its own size, so reducing the wrong dim shows."""
    array = np.arange(24).reshape(2, 3, 4) ** 2
    case = contiguous_case(array)
    shape, values = reduce_values(sum, case.buffer.tolist(), case.layout, dims, keepdim)
    expected = np.sum(array, axis=dims, keepdims=keepdim)
    expect("shape of the sum", shape, expected.shape, shape_rule(keepdim))
    rule = "np.sum over the dims, in row-major order of the kept dims"
    expect("values of the sum", values, expected.ravel().tolist(), rule)


@pytest.mark.exercise("5.1")
@pytest.mark.parametrize("dims, error", [(2, IndexError), (-3, IndexError), ((0, 0), ValueError)])
def test_reduce_values_rejects_bad_dims_naming_them(dims, error):
    """A dim out of range is an IndexError, a repeated dim a ValueError; both name the dim."""
    case = contiguous_case(np.zeros((2, 3)))
    with raises_naming(error, dims):
        reduce_values(sum, case.buffer.tolist(), case.layout, dims)


@pytest.mark.exercise("5.1")
@given(data=st.data())
@example(data=Scripted(kind="float", case=TYPICAL, dims=1, keepdim=False))
@example(data=Scripted(kind="int", case=TYPICAL_INTS, dims=(2, 0), keepdim=True))
def test_tensor_sum_matches_numpy_with_its_dtype(data):
    """sum over dims with keepdim: float64 stays float64, int32/int64/bool sums are int64."""
    kind = data.draw(st.sampled_from(["float", "int", "int32", "bool"]), label="kind")
    case = data.draw(cases(kind="int" if kind == "int32" else kind), label="case")
    dims = data.draw(dims_for(case.layout.ndim), label="dims")
    keepdim = data.draw(st.booleans(), label="keepdim")
    if kind == "int32":
        case = Case(case.buffer.astype(np.int32), case.layout)
    expected = np.sum(case.array, axis=dims, keepdims=keepdim)
    results = {
        "t.sum(dims, keepdim)": case.tensor().sum(dims, keepdim),
        "tenxor.sum(t, dims, keepdim)": tenxor.sum(case.tensor(), dims, keepdim),
    }
    rule = "float64 stays float64; int32, int64 and bool sums are int64"
    for name, result in results.items():
        expect(f"dtype of {name}", result.dtype.name, expected.dtype.name, rule)
        assert_close(result, expected, what=name, rule=f"np.sum; {shape_rule(keepdim)}")


@pytest.mark.exercise("5.1")
@pytest.mark.parametrize("name", ["max", "min"])
@given(data=st.data())
@example(data=Scripted(case=TYPICAL, dims=-1, keepdim=False))
def test_tensor_max_and_min_match_numpy_including_nan(name, data):
    """max/min with NaNs planted: NaN propagates; an empty group raises ValueError like NumPy."""
    case = data.draw(cases_with_nans(), label="case")
    dims = data.draw(dims_for(case.layout.ndim), label="dims")
    keepdim = data.draw(st.booleans(), label="keepdim")
    expected = numpy_or_error(getattr(np, name), case.array, axis=dims, keepdims=keepdim)
    t = case.tensor()
    if isinstance(expected, Exception):
        rule = f"a group with no elements has no {name}, as in NumPy"
        with raises_naming(ValueError, case.layout.shape, rule=rule):
            getattr(t, name)(dims, keepdim)
        return
    results = {
        f"t.{name}(dims, keepdim)": getattr(t, name)(dims, keepdim),
        f"tenxor.{name}(t, dims, keepdim)": getattr(tenxor, name)(t, dims, keepdim),
    }
    rule = f"np.{name}, NaN propagates; {shape_rule(keepdim)}"
    for what, result in results.items():
        expect(f"dtype of {what}", result.dtype, tenxor.float64, "the input's dtype")
        assert_same(result, expected, what=what, rule=rule)


@pytest.mark.exercise("5.1")
@pytest.mark.parametrize("name", ["max", "min"])
@given(reductions(kind="int"))
@example((example_case("int"), 1, False))
def test_tensor_max_and_min_of_ints_stay_int(name, drawn):
    """max/min of an int64 tensor are int64 with NumPy's values."""
    case, dims, keepdim = drawn
    expected = numpy_or_error(getattr(np, name), case.array, axis=dims, keepdims=keepdim)
    assume(not isinstance(expected, Exception))
    result = getattr(case.tensor(), name)(dims, keepdim)
    what = f"t.{name}(dims, keepdim)"
    expect(f"dtype of {what}", result.dtype, tenxor.int64, "the input's dtype")
    assert_same(result, expected, what=what, rule=f"np.{name}; {shape_rule(keepdim)}")


@pytest.mark.exercise("5.1")
@pytest.mark.parametrize("name", ["max", "min"])
@pytest.mark.parametrize("dim", [1, -2, (1, 2)])
def test_max_and_min_of_an_empty_group_raise_naming_the_dim(name, dim):
    """Reducing a dim of size 0 has no answer: a ValueError naming that dim and the shape;
    reducing the other dims of the same tensor is fine (an empty result)."""
    array = np.zeros((2, 0, 3))
    t = from_numpy(array)
    with pytest.raises(ValueError):
        getattr(np, name)(array, axis=dim)
    with raises_naming(ValueError, 1, (2, 0, 3)):
        getattr(t, name)(dim)
    for other in (0, (0, 2)):
        expected = getattr(np, name)(array, other, keepdims=True)
        what = f"t.{name}({other}, keepdim=True) of shape (2, 0, 3)"
        assert_same(getattr(t, name)(other, True), expected, what=what, rule="an empty result")


@pytest.mark.exercise("5.1")
@pytest.mark.parametrize("keepdim", [False, True])
def test_sum_over_size_zero_and_size_one_dims(keepdim):
    """A sum over an empty dim is 0, over a size-1 dim the elements themselves."""
    array = np.arange(6.0).reshape(2, 1, 3)
    empty = np.zeros((2, 0, 3))
    rule = "a sum over no elements is 0; over one, that element"
    for source, dims in [(array, 1), (empty, 1), (empty, (0, 1)), (empty, 2), (empty, None)]:
        expected = np.sum(source, axis=dims, keepdims=keepdim)
        what = f"sum over dims {dims} of shape {source.shape}"
        assert_same(from_numpy(source).sum(dims, keepdim), expected, what=what, rule=rule)


# ---------------------------------------------------------------------------------------------
# 5.2 mean
# ---------------------------------------------------------------------------------------------


@pytest.mark.exercise("5.2")
@given(data=st.data())
@example(data=Scripted(kind="float", case=TYPICAL, dims=(0, 2), keepdim=False))
def test_mean_matches_numpy(data):
    """mean over dims with keepdim: NumPy's values and dtype (float64 for int and bool
    input), nan for an empty group."""
    kind = data.draw(st.sampled_from(["float", "int", "bool"]), label="kind")
    case = data.draw(cases(kind=kind), label="case")
    dims = data.draw(dims_for(case.layout.ndim), label="dims")
    keepdim = data.draw(st.booleans(), label="keepdim")
    expected = numpy_or_error(np.mean, case.array, axis=dims, keepdims=keepdim)
    assert expected.dtype.name == "float64"  # the oracle's dtype, for every kind drawn
    t = case.tensor()
    results = {
        "t.mean(dims, keepdim)": t.mean(dims, keepdim),
        "tenxor.mean(t, dims, keepdim)": tenxor.mean(t, dims, keepdim),
    }
    rule = f"np.mean, nan for an empty group; {shape_rule(keepdim)}"
    for what, result in results.items():
        dtype_rule = "float64 for float64, int and bool input"
        expect(f"dtype of {what}", result.dtype.name, expected.dtype.name, dtype_rule)
        assert_close(result, expected, what=what, rule=rule)


@pytest.mark.exercise("5.2")
def test_mean_of_ints_is_not_integer_division():
    """The mean of int64 [[1, 2], [4, 4]] over each dim is float64 with the fractions."""
    array = np.array([[1, 2], [4, 4]])
    t = from_numpy(array)
    for dims in [None, 0, 1, -1, (0, 1)]:
        result = t.mean(dims)
        what = f"mean over dims {dims} of [[1, 2], [4, 4]]"
        expect(f"dtype of {what}", result.dtype, tenxor.float64, "the mean of ints is float64")
        rule = "the sum divided as floats, not integer division"
        assert_same(result, np.mean(array, axis=dims), what=what, rule=rule)


@pytest.mark.exercise("5.2")
@given(reductions())
@example((example_case(), (0, -1), True))
def test_mean_of_float32_stays_float32(drawn):
    """A float32 tensor has a float32 mean (close to NumPy's)."""
    case, dims, keepdim = drawn
    case = Case(case.buffer.astype(np.float32), case.layout)
    expected = numpy_or_error(np.mean, case.array, axis=dims, keepdims=keepdim)
    result = case.tensor().mean(dims, keepdim)
    what = "t.mean(dims, keepdim) of a float32 tensor"
    expect(f"dtype of {what}", result.dtype, tenxor.float32, "float32 stays float32")
    rule = f"np.mean within 1e-5; {shape_rule(keepdim)}"
    assert_close(result, expected, rtol=1e-5, atol=1e-5, what=what, rule=rule)


# ---------------------------------------------------------------------------------------------
# 5.3 argmax
# ---------------------------------------------------------------------------------------------

group_values = st.sampled_from([-2.0, 0.0, 1.5, 3.0, math.inf, -math.inf, math.nan]) | st.integers(
    -3, 3
)


@pytest.mark.exercise("5.3")
@given(st.lists(group_values, min_size=1, max_size=8))
@example([2.0, -1.0, 3.0, 0.5, 3.0])
def test_first_largest_position_matches_numpy_argmax(group):
    """Ties give the first position, and the first NaN wins, as in np.argmax."""
    expected = int(np.argmax(np.array(group, dtype=np.float64)))
    rule = "ties give the first position; the first NaN wins, as np.argmax"
    expect("position of the largest", first_largest_position(list(group)), expected, rule)


@pytest.mark.exercise("5.3")
@pytest.mark.parametrize(
    "group",
    [[3, 1, 3], [1, 5, 5, 2], [-1.0], [math.nan, 1.0], [2.0, math.nan, 9.0, math.nan],
     [-math.inf, -math.inf], [0.5, math.inf, math.inf], [True, False, True]],
    ids=compact,
)  # fmt: skip
def test_first_largest_position_examples(group):
    """Small groups with ties, NaNs and infinities."""
    expected = int(np.argmax(np.array(group, dtype=np.float64)))
    rule = "ties give the first position; the first NaN wins, as np.argmax"
    expect("position of the largest", first_largest_position(group), expected, rule)


@pytest.mark.exercise("5.3")
@given(data=st.data())
@example(data=Scripted(kind="int", case=TYPICAL_INTS, dim=1, keepdim=False))
def test_tensor_argmax_matches_numpy(data):
    """argmax over None (a flat index) or one dim, keepdim too: np.argmax, int64; ties
    (common in int tensors) give the first; NaN wins; no elements is a ValueError."""
    kind = data.draw(st.sampled_from(["int", "float"]), label="kind")
    case = data.draw(cases(kind="int") if kind == "int" else cases_with_nans(), label="case")
    dim = data.draw(dims_for(case.layout.ndim, several=False), label="dim")
    keepdim = data.draw(st.booleans(), label="keepdim")
    expected = numpy_or_error(np.argmax, case.array, axis=dim, keepdims=keepdim)
    t = case.tensor()
    if isinstance(expected, Exception):
        rule = "a group with no elements has no argmax, as in NumPy"
        with raises_naming(ValueError, case.layout.shape, rule=rule):
            t.argmax(dim, keepdim)
        return
    results = {
        "t.argmax(dim, keepdim)": t.argmax(dim, keepdim),
        "tenxor.argmax(t, dim, keepdim)": tenxor.argmax(t, dim, keepdim),
    }
    rule = "np.argmax: the first of ties, NaN wins; dim None gives a flat index"
    for what, result in results.items():
        expect(f"dtype of {what}", result.dtype, tenxor.int64, "positions are int64")
        assert_same(result, expected, what=what, rule=rule)


@pytest.mark.exercise("5.3")
def test_argmax_over_each_dim_of_a_tensor_with_ties():
    """Shape (2, 3, 4) with repeated maxima: each dim, None, and keepdim."""
    array = np.array([3, 1, 3, 0, 2, 3] * 4).reshape(2, 3, 4)
    t = from_numpy(array)
    for dim in [None, 0, 1, 2, -1, -2]:
        for keepdim in [False, True]:
            expected = np.argmax(array, axis=dim, keepdims=keepdim)
            what = f"t.argmax({dim}, {keepdim})"
            rule = "the first of tied maxima; dim None gives a flat index"
            assert_same(t.argmax(dim, keepdim), np.asarray(expected), what=what, rule=rule)


@pytest.mark.exercise("5.3")
def test_argmax_rejects_several_dims_and_dims_out_of_range():
    """argmax takes one dim or None: a tuple is a TypeError, dim 2 of a 2-d tensor an
    IndexError, both naming the dim (dim 1 works)."""
    array = np.array([[1.0, 4.0, 4.0], [7.0, 0.0, 7.0]])
    t = from_numpy(array)
    assert_same(t.argmax(1), np.argmax(array, axis=1), what="t.argmax(1)", rule="first of ties")
    with raises_naming(TypeError, (0, 1)):
        t.argmax((0, 1))
    with raises_naming(IndexError, 2):
        t.argmax(2)


# ---------------------------------------------------------------------------------------------
# 5.4 combine_fold_values: the fused kernel, and Tenxor.combine_fold
# ---------------------------------------------------------------------------------------------

LETTERS = "abcdefgh"  # np.einsum's names for the dims of a broadcast shape


@st.composite
def fused_operands(
    draw: st.DrawFn, count: int, kind: str = "float", min_dims: int = 1, max_dims: int = 4
):
    """`count` Cases, each on its own random layout (offsets, gaps, negative strides, size-0
    and size-1 dims; some expanded: a dim read with stride 0), whose shapes broadcast together
    (leading dims dropped, dims of size 1 stretched; one operand has every dim); the dims of
    the broadcast shape to reduce; and keepdim."""
    ndim = draw(st.integers(min_dims, max_dims))  # a 0-d broadcast shape: explicit cases
    target = tuple(draw(sizes) for _ in range(ndim))
    whole = draw(st.integers(0, count - 1))  # the operand that has every dim of the target
    operands = []
    for k in range(count):
        keep = ndim if k == whole else draw(st.integers(0, ndim))
        shape = tuple(1 if draw(st.booleans()) else n for n in target[ndim - keep :])
        case = draw(cases(shape=shape, kind=kind))
        if shape and draw(st.booleans()):  # expanded: one dim reads the same elements again
            d, strides = draw(st.integers(0, len(shape) - 1)), list(case.layout.strides)
            strides[d] = 0
            case = Case(case.buffer, Layout(shape, tuple(strides), case.layout.offset))
        operands.append(case)
    return operands, draw(dims_for(ndim)), draw(st.booleans())


def expanded_column() -> Case:
    """A typical operand for an explicit example: an int (3, 1) column expanded to (3, 4)
    with stride 0, read from storage offset 2."""
    column = np.array([9, 9, 3, -1, 2])
    return view_case(column, np.broadcast_to(column[2:, None], (3, 4)))


def reversed_slice() -> Case:
    """A typical operand for an explicit example: an int (2, 1, 4) slice with steps -2, 1 and 3
    of a larger buffer (negative strides, a storage offset)."""
    return sliced_case(np.arange(8).reshape(2, 1, 4) * 3 % 7 - 3, (-2, 1, 3))


def data_of(operands: list[Case]) -> list[tuple[list, Layout]]:
    """The operands as combine_fold_values takes them: (a storage's elements, the layout that
    reads them)."""
    return [(case.buffer.tolist(), case.layout) for case in operands]


def kept_shape(shape: tuple[int, ...], dims, keepdim: bool) -> tuple[int, ...]:
    """The shape of a reduction of `shape` over `dims`."""
    reduced = reduced_dims(dims, len(shape))
    if keepdim:
        return tuple(1 if d in reduced else size for d, size in enumerate(shape))
    return tuple(size for d, size in enumerate(shape) if d not in reduced)


def products_summed(arrays: list[np.ndarray], dims, keepdim: bool) -> np.ndarray:
    """np.einsum of the arrays broadcast together: their elementwise products summed over the
    reduced dims (every letter of the broadcast shape in each operand, the kept ones out)."""
    shape = np.broadcast_shapes(*(array.shape for array in arrays))
    letters = LETTERS[: len(shape)]
    reduced = reduced_dims(dims, len(shape))
    kept = "".join(letter for d, letter in enumerate(letters) if d not in reduced)
    spec = ",".join([letters] * len(arrays)) + "->" + kept
    total = np.einsum(spec, *(np.broadcast_to(array, shape) for array in arrays))
    return np.asarray(total).reshape(kept_shape(shape, dims, keepdim))


def expect_close_values(what: str, values: object, expected: np.ndarray, rule: str) -> None:
    """`values` is a list of as many numbers as `expected` holds, each within 1e-9 (relative
    or absolute) of NumPy's, in row-major order."""
    due = expected.ravel().tolist()
    try:
        got = np.array(values, dtype=np.float64)
        close = got.shape == (len(due),) and np.allclose(got, due, rtol=1e-9, atol=1e-9)
    except (TypeError, ValueError):
        close = False
    if not isinstance(values, list) or not close:
        raise Mismatch(what, values, due, rule)


def folds_an_empty_group(shape: tuple[int, ...], dims) -> bool:
    """Whether a reduction of `shape` over `dims` has an output element whose group is empty."""
    reduced = reduced_dims(dims, len(shape))
    outputs = math.prod(size for d, size in enumerate(shape) if d not in reduced)
    return outputs > 0 and math.prod(shape[d] for d in reduced) == 0


class Words:
    """A finding put in words: it prints as its text, without quotes, and is never compared
    letter by letter."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


def expect_error_type(error: BaseException | None, due: type, rule: str) -> None:
    """The error is of exactly the type `due`, not a subclass of it nor a wrapper."""
    if type(error) is not due:
        raise Mismatch(
            "type of the error raised", Words(type(error).__name__), Words(due.__name__), rule
        )


def times_plus(x, y, z):
    """x * y + z: which operand goes where shows."""
    return x * y + z


# Combines of three elements, each with its NumPy twin, and folds with theirs.
THREE_WAY = {
    "times_plus": (times_plus, lambda x, y, z: x * y + z),
    "max": (max, lambda x, y, z: np.maximum(np.maximum(x, y), z)),
    "math.hypot": (math.hypot, lambda x, y, z: np.sqrt(x * x + y * y + z * z)),
}
FOLDS = {"sum": (sum, np.sum), "max": (max, np.max), "min": (min, np.min)}


def expect_groups_of_differences(operands: list[Case], dims, keepdim: bool) -> None:
    """combine=operator.sub, fold=tuple hands back what fold is handed: one group per output
    element, in row-major order of the kept dims, holding a - b for each index of the reduced
    dims, in row-major order of those dims."""
    shape, values = combine_fold_values(operator.sub, tuple, data_of(operands), dims, keepdim)
    a, b = np.broadcast_arrays(*(case.array for case in operands))
    expect("shape of the result", shape, kept_shape(a.shape, dims, keepdim), shape_rule(keepdim))
    rule = "a group per kept index; a - b (a's element first) in row-major order of the dims"
    expect("groups handed to fold", values, groups_of(a - b, dims), rule)


@pytest.mark.exercise("5.4")
@given(fused_operands(2, kind="int"))
@example(([example_case("int"), expanded_column()], 1, False))
def test_combine_fold_values_of_products_summed_matches_einsum(drawn):
    """combine=operator.mul, fold=sum of two operands on any layouts, over None, one dim or
    several (negative too), keepdim or not: the sums of products np.einsum gives."""
    operands, dims, keepdim = drawn
    shape, values = combine_fold_values(operator.mul, sum, data_of(operands), dims, keepdim)
    expected = products_summed([case.array for case in operands], dims, keepdim)
    expect("shape of the result", shape, expected.shape, shape_rule(keepdim))
    rule = "np.einsum: the broadcast operands' products summed over the dims, kept dims row-major"
    expect("values of the result", values, expected.ravel().tolist(), rule)


@pytest.mark.exercise("5.4")
@given(fused_operands(2, kind="int"))
@example(([reversed_slice(), example_case("int")], (0, 2), True))
def test_combine_fold_values_hands_fold_each_group_in_row_major_order(drawn):
    """fold=tuple shows what fold is handed: one group per output element, in row-major order
    of the kept dims, holding combine(a's element, b's element) for each index of the reduced
    dims, in row-major order of those dims."""
    operands, dims, keepdim = drawn
    expect_groups_of_differences(operands, dims, keepdim)


@pytest.mark.exercise("5.4")
@pytest.mark.parametrize("fold", list(FOLDS))
@at_most_examples(40)
@given(fused_operands(3), st.sampled_from(list(THREE_WAY)))
@example(([expanded_column(), reversed_slice(), example_case("int")], 1, True), "times_plus")
def test_combine_fold_values_of_three_operands_matches_numpy(fold, drawn, combine):
    """Three operands on any layouts, each combine (x * y + z, max, math.hypot) and fold (sum,
    max, min): NumPy's broadcasting, then np.sum, np.max or np.min along the dims. A group
    with no elements makes max and min raise their own ValueError, which passes through."""
    operands, dims, keepdim = drawn
    combine_fn, numpy_combine = THREE_WAY[combine]
    fold_fn, numpy_fold = FOLDS[fold]
    combined = numpy_combine(*(case.array.astype(np.float64) for case in operands))
    if fold != "sum" and folds_an_empty_group(combined.shape, dims):
        rule = f"{fold}() of a group with no elements raises ValueError, which passes through"
        with raises_naming(ValueError, rule=rule):
            combine_fold_values(combine_fn, fold_fn, data_of(operands), dims, keepdim)
        return
    shape, values = combine_fold_values(combine_fn, fold_fn, data_of(operands), dims, keepdim)
    initial = {"sum": {}, "max": {"initial": -np.inf}, "min": {"initial": np.inf}}[fold]
    expected = numpy_fold(combined, axis=dims, keepdims=keepdim, **initial)
    expect("shape of the result", shape, expected.shape, shape_rule(keepdim))
    rule = f"np.{fold} over the dims of {combine}(a, b, c), the operands broadcast, in order"
    expect_close_values("values of the result", values, expected, rule)


@pytest.mark.exercise("5.4")
@pytest.mark.parametrize("fold", list(FOLDS))
@at_most_examples(40)
@given(fused_operands(1, kind="int", max_dims=5))
@example(([example_case("int")], (0, 2), False))
def test_combine_fold_values_of_one_operand_maps_then_reduces(fold, drawn):
    """One operand and combine=abs: the reduction of |a| that np.sum, np.max or np.min of
    np.abs gives (max and min of a group with no elements raise their own ValueError)."""
    (case,), dims, keepdim = drawn
    fold_fn, numpy_fold = FOLDS[fold]
    if fold != "sum" and folds_an_empty_group(case.layout.shape, dims):
        rule = f"{fold}() of a group with no elements raises ValueError, which passes through"
        with raises_naming(ValueError, rule=rule):
            combine_fold_values(abs, fold_fn, data_of([case]), dims, keepdim)
        return
    shape, values = combine_fold_values(abs, fold_fn, data_of([case]), dims, keepdim)
    initial = {"sum": {}, "max": {"initial": 0}, "min": {"initial": 99}}[fold]
    expected = numpy_fold(np.abs(case.array), axis=dims, keepdims=keepdim, **initial)
    expect("shape of the result", shape, expected.shape, shape_rule(keepdim))
    rule = f"np.{fold} of np.abs(a) over the dims, in row-major order of the kept dims"
    expect("values of the result", values, expected.ravel().tolist(), rule)


@pytest.mark.exercise("5.4")
@pytest.mark.parametrize("layout_b", ["contiguous", "transposed", "sliced", "expanded"])
@pytest.mark.parametrize("layout_a", ["contiguous", "transposed", "sliced", "expanded"])
def test_combine_fold_values_of_non_contiguous_operands(layout_a, layout_b):
    """a (2, 3, 4) and b (3, 4), each stored transposed, as a reversed and strided slice of a
    larger buffer (with a storage offset) or expanded with stride 0, reduced over one dim,
    several or all: the sums of products np.einsum gives."""
    x = np.arange(24).reshape(2, 3, 4) * 5 % 11 - 5
    y = np.array([[3, 0, -2, 1], [-1, 4, 2, 5], [2, -3, 1, 0]])
    a = operand_layouts(x, np.array([[[4, -2, 0, 3]], [[1, 5, -3, 2]]]))[layout_a]
    b = operand_layouts(y, np.array([[2], [-1], [3]]))[layout_b]
    for dims in [None, 0, 1, -1, (0, 2), (2, 1), (-3, -2, -1)]:
        for keepdim in (False, True):
            shape, values = combine_fold_values(operator.mul, sum, data_of([a, b]), dims, keepdim)
            expected = products_summed([a.array, b.array], dims, keepdim)
            over = f"over dims {dims}, keepdim={keepdim}, of a {layout_a} a and a {layout_b} b"
            expect(f"shape of the result {over}", shape, expected.shape, shape_rule(keepdim))
            rule = "np.einsum: the products summed over the dims, wherever the layouts read them"
            expect(f"values of the result {over}", values, expected.ravel().tolist(), rule)


@pytest.mark.exercise("5.4")
@pytest.mark.parametrize(
    "shape_a, shape_b, dims",
    [((2, 0, 3), (3,), 1), ((2, 0, 3), (1, 3), (0, 1)), ((2, 0, 3), (2, 1, 1), 0),
     ((0, 3), (0, 1), None), ((2, 1, 3), (1, 4, 1), 1), ((2, 1, 3), (1, 4, 1), (0, 2)),
     ((1, 1), (1,), None), ((2, 3), (), -1), ((), (), None)],
    ids=compact,
)  # fmt: skip
@pytest.mark.parametrize("keepdim", [False, True])
def test_combine_fold_values_over_size_zero_and_size_one_dims(shape_a, shape_b, dims, keepdim):
    """A group with no elements is folded too (sum gives 0), a result with no elements folds
    nothing, size-1 dims broadcast, and 0-d operands meet everything."""
    x = np.arange(math.prod(shape_a)).reshape(shape_a) - 2
    y = np.arange(math.prod(shape_b)).reshape(shape_b) * 3 + 1
    operands = [contiguous_case(x), contiguous_case(y)]
    shape, values = combine_fold_values(operator.mul, sum, data_of(operands), dims, keepdim)
    expected = products_summed([x, y], dims, keepdim)
    over = f"of shapes {shape_a} and {shape_b} over dims {dims}, keepdim={keepdim}"
    expect(f"shape of the result {over}", shape, expected.shape, shape_rule(keepdim))
    rule = "a sum over no elements is 0, and a result with no elements holds no values"
    expect(f"values of the result {over}", values, expected.ravel().tolist(), rule)


def walked_operands() -> list[Case]:
    """A (2, 3, 4) tensor stored transposed and a (3, 1) column, for the tests that watch the
    walk: its groups over one dim, several or all have rows of 3 or 4 elements."""
    a = transposed_case(np.arange(24).reshape(2, 3, 4) % 7 - 3)
    return [a, contiguous_case(np.array([[2], [-1], [3]]))]


@pytest.mark.exercise("5.4")
@pytest.mark.parametrize("dims", [-1, 1, (0, 2), None])
def test_combine_fold_values_combines_each_element_as_fold_takes_it(dims):
    """A counting combine and a fold that notes, as it takes each element, how often combine
    has run: fold is called once per output element with an iterator over its group, and
    combine makes element k + 1 of a group only after fold has taken element k. A kernel that
    combines a whole group into a list first (and hands fold an iterator over it) holds the
    group; this is what the fused kernel never does."""
    a, b = walked_operands()
    calls = 0

    def counting_mul(x, y):
        nonlocal calls
        calls += 1
        return x * y

    handed = []  # per call of fold: what it got, combine's calls then, and as it took each

    def noting_sum(group):
        before, made, elements = calls, [], []
        for element in group:
            made.append(calls)
            elements.append(element)
        handed.append((group, before, made, elements))
        return sum(elements)

    shape, values = combine_fold_values(counting_mul, noting_sum, data_of([a, b]), dims)
    groups = groups_of(a.array * b.array, dims)
    size = len(groups[0])
    expected = products_summed([a.array, b.array], dims, False)
    expect("values of the result", values, expected.ravel().tolist(), "sums of the products")
    rule = "fold is called once per output element"
    expect("number of calls of fold", len(handed), len(groups), rule)
    rule = "combine makes each element when fold takes it: element k + 1 only after fold took k"
    for g, (group, before, made, elements) in enumerate(handed):
        if not isinstance(group, Iterator):
            got, due = Words(f"a {type(group).__name__}"), Words("an iterator")
            why = "fold gets an iterator: combine runs as fold takes the elements"
            raise Mismatch(f"what fold got for output element {g}", got, due, why)
        what = f"calls of combine when fold was called for output element {g}"
        expect(what, before, g * size, f"{g} groups of {size} before it; {rule}")
        for k, count in enumerate(made):
            what = f"calls of combine when fold took element {k} of output element {g}"
            expect(what, count, g * size + k + 1, f"{g} groups of {size} and {k + 1}; {rule}")
        rule = "combine(a's element, b's element) in row-major order of the reduced dims"
        expect(f"elements fold got for output element {g}", tuple(elements), groups[g], rule)


class CountedStorage(Sequence):
    """A storage's elements that count each read of them in `reads` (a one-element list that
    several storages share): one call of data[...] reads one element (data[5]) or one row
    (data[2:14:3]); iterating reads element by element."""

    def __init__(self, values: list, reads: list[int]) -> None:
        self.values, self.reads = values, reads

    def __len__(self) -> int:
        return len(self.values)

    def __getitem__(self, key):
        self.reads[0] += 1
        return self.values[key]

    def __repr__(self) -> str:
        return f"<counted storage of {len(self.values)} elements>"


@pytest.mark.exercise("5.4")
@pytest.mark.parametrize("dims", [-1, 1, (0, 2), None])
def test_combine_fold_values_reads_a_row_at_a_time_as_fold_reaches_it(dims):
    """Storage that counts its reads, and a fold that notes them as it takes each element: a
    group is read a row at a time, one read of each operand's storage (data[start:stop:step],
    as read_row does) for the elements along the last reduced dim, and only once fold reaches
    that row. A kernel that reads every element's offset reads the storage once per element;
    one that reads a whole group first reads every row of it before fold takes anything."""
    operands = walked_operands()
    counted = [0]  # the reads of every operand's storage so far
    data = [(CountedStorage(values, counted), layout) for values, layout in data_of(operands)]
    taken = []  # per call of fold: the reads so far as it took each of its elements

    def noting_sum(group):
        reads, elements = [], []
        for element in group:
            reads.append(counted[0])
            elements.append(element)
        taken.append(reads)
        return sum(elements)

    shape, values = combine_fold_values(operator.mul, noting_sum, data, dims)
    expected = products_summed([case.array for case in operands], dims, False)
    expect("values of the result", values, expected.ravel().tolist(), "sums of the products")
    broadcast = np.broadcast_shapes(*(case.array.shape for case in operands))
    reduced = reduced_dims(dims, len(broadcast))
    row = broadcast[reduced[-1]]  # the elements along the last reduced dim
    rows = math.prod(broadcast[d] for d in reduced) // row  # the rows of a group
    count = len(operands)
    where = f"rows of {row} along dim {reduced[-1]}, {rows} to a group"
    rule = (
        "each operand's row is read in one step (read_row), when fold reaches it: "
        "never element by element, never a row ahead"
    )
    expect("number of calls of fold", len(taken), len(expected.ravel()), "one per output")
    for g, reads in enumerate(taken):
        for k, got in enumerate(reads):
            begun = g * rows + k // row + 1  # the rows fold has reached, this one included
            if got > count * begun:
                what = (
                    f"reads of the operands' storage when fold took element {k} of output "
                    f"element {g}"
                )
                rows_begun = "1 row" if begun == 1 else f"{begun} rows"
                due = Words(f"at most {count * begun} (one read per operand and row: {count} "
                            f"operands, {rows_begun} begun; {where})")  # fmt: skip
                raise Mismatch(what, got, due, rule)
    total = counted[0]
    if total > count * rows * len(taken):
        what = "reads of the operands' storage in all"
        due = Words(f"at most {count * rows * len(taken)} ({count} operands, {len(taken)} "
                    f"groups of {rows} rows; {where})")  # fmt: skip
        raise Mismatch(what, total, due, rule)


def peak_bytes(call) -> int:
    """The most memory Python held at once during call(), beyond what it held before."""
    tracing = tracemalloc.is_tracing()
    if not tracing:
        tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        call()
        return tracemalloc.get_traced_memory()[1] - before
    finally:
        if not tracing:
            tracemalloc.stop()


@pytest.mark.exercise("5.4")
def test_combine_fold_values_holds_nothing_the_size_of_a_group_of_a_million():
    """One group of 1000 x 1000 elements, folded by any: a row of 1000 read 1000 times times
    a column stretched along the rows (stride 0 along one dim each), reduced over both dims.
    any stops at the first true product, the 3000th; a kernel that combines each element as
    fold takes it makes 3000 products, holding one at a time, so the peak memory of the call
    stays far below what a list of the group takes (8 bytes per element). The answer is
    NumPy's."""
    n = 1000
    row_values = [0] * (n - 1) + [1]  # only the last element of each row is 1
    column_values = [0, 0] + [1] * (n - 2)  # rows 0 and 1 are all 0
    row = (row_values, Layout((n, n), (0, 1)))  # row[i, j] = row_values[j]
    column = (column_values, Layout((n, n), (1, 0)))  # column[i, j] = column_values[i]
    products = np.outer(column_values, row_values)
    expected = ((), [bool(np.any(products))])
    combine_fold_values(operator.mul, any, [row, column], None)  # anything imported once
    results = []
    peak = peak_bytes(
        lambda: results.append(combine_fold_values(operator.mul, any, [row, column], None))
    )
    rule = "np.any of the broadcast products: the first true one is at [2, 999]"
    expect("combine_fold_values(operator.mul, any, [row, column])", results[0], expected, rule)
    limit = n * n  # one byte per element of the group
    if peak > limit:
        what = f"peak memory while folding one group of {n * n} elements, in bytes"
        due = Words(f"below {limit} (a list of the group alone takes {8 * n * n})")
        rule = "fold takes each combined element as it is made: no list of a group is held"
        raise Mismatch(what, peak, due, rule)


@pytest.mark.exercise("5.4")
def test_combine_fold_values_lets_errors_of_combine_and_fold_through():
    """Whatever combine or fold raises reaches the caller unchanged: the same type and message,
    neither caught nor wrapped."""
    a = contiguous_case(np.array([[1.0, 2.0], [3.0, 4.0]]))
    b = contiguous_case(np.array([1.0, 0.0]))

    def refusing_zero(x, y):
        if y == 0:
            raise ArithmeticError(f"refusing {x} and {y}")
        return x * y

    def refusing_big(group):
        total = sum(group)
        if total > 5:
            raise LookupError(f"refusing a group summing to {total}")
        return total

    rule = "an error that combine raises passes through unchanged"
    with raises_naming(ArithmeticError, 2.0, 0.0, rule=rule) as raised:
        combine_fold_values(refusing_zero, sum, data_of([a, b]), 1)
    expect_error_type(raised.value, ArithmeticError, rule)
    with raises_naming(ZeroDivisionError, rule=rule) as raised:
        combine_fold_values(operator.truediv, sum, data_of([a, b]), 0)
    expect_error_type(raised.value, ZeroDivisionError, rule)
    rule = "an error that fold raises passes through unchanged"
    with raises_naming(LookupError, 8.0, rule=rule) as raised:
        combine_fold_values(operator.add, refusing_big, data_of([a, b]), -1)
    expect_error_type(raised.value, LookupError, rule)


# The dtypes of two operands and the one tenxor promotes them to (PyTorch's rules).
DTYPE_PAIRS = [
    ("float64", "float64", "float64"), ("int64", "float64", "float64"),
    ("int32", "int64", "int64"), ("float32", "float32", "float32"),
    ("int64", "int64", "int64"), ("float32", "int32", "float32"),
]  # fmt: skip


COMBINE_FOLD_EXAMPLE = {
    "dtypes of t and u": ("int64", "float64", "float64"),
    "shapes of t and u": ((2, 3, 4), (3, 1)),
    "t": TYPICAL_INTS,
    "u": Case(np.arange(4.0) - 1.5, Layout((3, 1), (1, 0), 0)),
    "dims": 2,
    "keepdim": False,
}


@pytest.mark.exercise("5.4")
@at_most_examples(50)
@given(data=st.data())
@example(data=Scripted(**COMBINE_FOLD_EXAMPLE))
def test_tensor_combine_fold_matches_numpy_with_the_promoted_dtype(data):
    """t.combine_fold(operator.mul, u, dim=dims, keepdim=keepdim) and tenxor.combine_fold of
    the same, on any layouts: NumPy's sums of products, of the operands' promoted dtype."""
    *names, dtype = data.draw(st.sampled_from(DTYPE_PAIRS), label="dtypes of t and u")
    shapes = data.draw(broadcastable_shapes(2, max_dims=4), label="shapes of t and u")
    drawn = []
    for name, shape, label in zip(names, shapes, "tu"):
        kind = "float" if name.startswith("float") else "int"
        case = data.draw(cases(shape=shape, kind=kind), label=label)
        drawn.append(Case(case.buffer.astype(NUMPY_DTYPES[name]), case.layout))
    ndim = len(np.broadcast_shapes(*shapes))
    dims = data.draw(dims_for(ndim), label="dims")
    keepdim = data.draw(st.booleans(), label="keepdim")
    x, y = (case.array for case in drawn)
    wide = np.float64 if dtype.startswith("float") else np.int64
    expected = np.sum(x.astype(wide) * y.astype(wide), axis=dims, keepdims=keepdim)
    t, u = (case.tensor() for case in drawn)
    results = {
        "t.combine_fold(operator.mul, u, dim=dims, keepdim=keepdim)": (
            t.combine_fold(operator.mul, u, dim=dims, keepdim=keepdim)
        ),
        "tenxor.combine_fold(operator.mul, t, u, dim=dims, keepdim=keepdim)": (
            tenxor.combine_fold(operator.mul, t, u, dim=dims, keepdim=keepdim)
        ),
    }
    rtol = 1e-6 if dtype == "float32" else 1e-9
    rule = f"np.sum(t * u) over the dims; {shape_rule(keepdim)}"
    for what, result in results.items():
        dtype_rule = f"the operands' promoted dtype: {names[0]} with {names[1]} gives {dtype}"
        expect(f"dtype of {what}", result.dtype, tenxor.DTYPES[dtype], dtype_rule)
        assert_close(result, expected, rtol=rtol, atol=1e-9, what=what, rule=rule)


@pytest.mark.exercise("5.4")
def test_tensor_combine_fold_with_numbers_nested_lists_and_a_dtype():
    """Python numbers and nested lists broadcast as tensors (a number takes the tensor's
    dtype unless it needs a float), other folds and keepdim work, and dtype= sets the
    result's dtype."""
    array = np.array([[0, 1, 2], [3, 4, 5]])
    t = from_numpy(array)
    halves = from_numpy(np.array([1.5, -2.5], dtype=np.float32))
    rows = np.array([[10], [2]])
    found = [
        ("t.combine_fold(operator.mul, 2, dim=1)",
         t.combine_fold(operator.mul, 2, dim=1), np.sum(array * 2, axis=1)),
        ("t.combine_fold(operator.mul, 0.5, dim=0)",
         t.combine_fold(operator.mul, 0.5, dim=0), np.sum(array * 0.5, axis=0)),
        ("t.combine_fold(operator.sub, [[10], [2]], fold=max, dim=-1, keepdim=True)",
         t.combine_fold(operator.sub, [[10], [2]], fold=max, dim=-1, keepdim=True),
         np.max(array - rows, axis=-1, keepdims=True)),
        ("t.combine_fold(max, 1.5, [[10], [2]], dim=0)",
         t.combine_fold(max, 1.5, [[10], [2]], dim=0),
         np.sum(np.maximum(np.maximum(array, 1.5), rows), axis=0)),
        ("t.combine_fold(operator.mul, t)",
         t.combine_fold(operator.mul, t), np.sum(array * array)),
        ("t.combine_fold(operator.mul, [1, 2, 3], dim=(0, 1), keepdim=True)",
         t.combine_fold(operator.mul, [1, 2, 3], dim=(0, 1), keepdim=True),
         np.sum(array * [1, 2, 3], keepdims=True)),
        ("t.combine_fold(operator.mul, [1, 2, 3], dim=1, dtype=tenxor.float64)",
         t.combine_fold(operator.mul, [1, 2, 3], dim=1, dtype=tenxor.float64),
         np.sum(array * [1, 2, 3], axis=1).astype(np.float64)),
        ("tenxor.combine_fold(operator.mul, t, [1, 2, 3], fold=min, dim=-2)",
         tenxor.combine_fold(operator.mul, t, [1, 2, 3], fold=min, dim=-2),
         np.min(array * [1, 2, 3], axis=-2)),
        ("halves.combine_fold(operator.mul, 2.0)  (float32)",
         halves.combine_fold(operator.mul, 2.0), np.sum(np.float32([1.5, -2.5]) * 2)),
    ]  # fmt: skip
    for what, result, expected in found:
        expected = np.asarray(expected)
        rule = "the operands' promoted dtype, a number taking the tensor's unless it needs a float"
        expect(f"dtype of {what}", result.dtype, tenxor.DTYPES[expected.dtype.name], rule)
        assert_same(result, expected, what=what, rule="as NumPy broadcasts and reduces")


# ---------------------------------------------------------------------------------------------
# 5.5 matmul
# ---------------------------------------------------------------------------------------------

MATMUL_SHAPES = [
    ((3,), (3,)),
    ((3,), (3, 4)),
    ((2, 3), (3,)),
    ((2, 3), (3, 4)),
    ((2, 1, 3, 4), (5, 4, 2)),
    ((2, 3, 4), (4,)),
    ((4,), (2, 4, 3)),
    ((5, 2, 3), (3, 4)),
    ((2, 3), (5, 3, 4)),
    ((1, 2, 3), (4, 3, 5)),
    ((3, 1, 2, 3), (1, 4, 3, 2)),
    ((2, 0), (0, 3)),
    ((0, 3), (3, 2)),
    ((2, 3), (3, 0)),
    ((0,), (0,)),
    ((2, 0, 3), (3, 4)),
    ((3, 2, 0), (0, 5)),
    ((0, 2, 3), (3, 1)),
]


def assert_matmul_close(
    result: tenxor.Tenxor,
    a: np.ndarray,
    b: np.ndarray,
    what: str = "the product a @ b",
    expected: np.ndarray | None = None,
) -> None:
    """The product has np.matmul's shape and values (`expected`, when the caller computed it
    already): relative tolerance 1e-12, plus 1e-12 of the largest |a| @ |b| for sums that
    cancel."""
    expected = np.asarray(np.matmul(a, b) if expected is None else expected)
    scale = np.asarray(np.matmul(np.abs(a), np.abs(b)))
    if not isinstance(result, tenxor.Tenxor):
        raise Mismatch(f"type of {what}", type(result).__name__, "Tenxor")
    actual = to_numpy(result)
    shapes = f"{a.shape} @ {b.shape}"
    rule = "np.matmul's shape: batch dims broadcast, the inner dim is summed over"
    expect(f"shape of {what}, {shapes}", actual.shape, expected.shape, rule)
    atol = 1e-12 * float(scale.max(initial=0.0))
    if not np.allclose(actual, expected, rtol=1e-12, atol=atol, equal_nan=True):
        rule = "each element sums a's row times b's column over the inner dim, as np.matmul"
        raise Mismatch(f"elements of {what}, {shapes}", actual, expected, rule)


@pytest.mark.exercise("5.5")
@pytest.mark.parametrize("shape_a, shape_b", MATMUL_SHAPES, ids=compact)
@at_most_examples(25)
@given(data=st.data())
@example(data=Scripted(a=None, b=None))  # both operands row-major, the typical case, first
def test_matmul_matches_numpy_on_any_layouts(shape_a, shape_b, data):
    """Every NumPy case (1-D and N-D operands, broadcast batch dims, size-0 dims) with
    operands on random layouts (negative, zero and gap strides, offsets)."""
    a = data.draw(cases(shape=shape_a), label="a") or contiguous_case(typical_values(shape_a))
    b = data.draw(cases(shape=shape_b), label="b") or contiguous_case(typical_values(shape_b))
    expected = np.matmul(a.array, b.array)  # what a report shows as due if matmul raises
    result = matmul(a.tensor(), b.tensor())
    expect("dtype of matmul(a, b)", result.dtype, tenxor.float64, "float64 @ float64")
    assert_matmul_close(result, a.array, b.array, what="matmul(a, b)", expected=expected)


@pytest.mark.exercise("5.5")
@pytest.mark.parametrize("shape_a, shape_b", MATMUL_SHAPES, ids=compact)
def test_matmul_of_int_tensors_is_exact_int64(shape_a, shape_b):
    """int64 @ int64 is int64 and exactly np.matmul (operator, method and function forms)."""
    rng = np.random.default_rng(sum(shape_a) * 31 + sum(shape_b))
    x = rng.integers(-9, 10, shape_a)
    y = rng.integers(-9, 10, shape_b)
    a, b = from_numpy(x), from_numpy(y)
    expected = np.asarray(np.matmul(x, y))
    results = {
        "a @ b": a @ b,
        "a.matmul(b)": a.matmul(b),
        "tenxor.matmul(a, b)": tenxor.matmul(a, b),
        "matmul(a, b)": matmul(a, b),
    }
    rule = f"np.matmul of {shape_a} and {shape_b}, exact for ints"
    for what, result in results.items():
        expect(f"dtype of {what}", result.dtype, tenxor.int64, "int64 @ int64 is int64")
        assert_same(result, expected, what=what, rule=rule)


@pytest.mark.exercise("5.5")
@pytest.mark.parametrize("layout_b", ["contiguous", "transposed", "sliced", "expanded"])
@pytest.mark.parametrize("layout_a", ["contiguous", "transposed", "sliced", "expanded"])
def test_matmul_of_non_contiguous_operands(layout_a, layout_b):
    """(2, 1, 3, 4) @ (5, 4, 2): operands stored transposed, as reversed/strided slices of a
    larger buffer with an offset, or expanded with stride 0 (over batch and inner dims)."""
    rng = np.random.default_rng(7)
    small_a = rng.uniform(-1, 1, (2, 1, 1, 4))
    small_b = rng.uniform(-1, 1, (1, 4, 1))
    x = np.broadcast_to(small_a, (2, 1, 3, 4)).copy()
    y = np.broadcast_to(small_b, (5, 4, 2)).copy()
    a = operand_layouts(x, small_a)[layout_a]
    b = operand_layouts(y, small_b)[layout_b]
    what = f"matmul(a, b) of a {layout_a} a and a {layout_b} b"
    assert_matmul_close(matmul(a.tensor(), b.tensor()), x, y, what=what)


@pytest.mark.exercise("5.5")
def test_matmul_of_views_made_by_transpose_and_expand():
    """a.transpose(-1, -2) @ b.expand(...) matches NumPy's swapaxes and broadcast_to."""
    rng = np.random.default_rng(3)
    x = rng.uniform(-5, 5, (3, 4, 2))
    y = rng.uniform(-5, 5, (4, 1))
    a, b = from_numpy(x), from_numpy(y)
    result = a.transpose(-1, -2) @ b.expand(3, 4, 5)
    what = "a.transpose(-1, -2) @ b.expand(3, 4, 5)"
    assert_matmul_close(result, np.swapaxes(x, -1, -2), np.broadcast_to(y, (3, 4, 5)), what)
    what = "b.expand(4, 5).T @ a"
    assert_matmul_close(b.expand(4, 5).T @ a, np.broadcast_to(y, (4, 5)).T, x, what)


@pytest.mark.exercise("5.5")
@pytest.mark.parametrize(
    "shape_a, shape_b",
    [((2, 3), (4, 2)), ((3,), (4,)), ((2, 3), (2,)), ((3,), (2, 3)), ((2, 3, 4), (5, 3)),
     ((2, 5, 3), (2, 4, 5)), ((), (3,)), ((3,), ()), ((), ()), ((), (2, 3))],
    ids=compact,
)  # fmt: skip
def test_matmul_rejects_bad_shapes_naming_both(shape_a, shape_b):
    """Inner dims that differ or a 0-d operand: a ValueError (as in NumPy) whose message
    names both operands' shapes."""
    with pytest.raises(ValueError):
        np.matmul(np.zeros(shape_a), np.zeros(shape_b))
    a, b = from_numpy(np.zeros(shape_a)), from_numpy(np.zeros(shape_b))
    with raises_naming(ValueError, shape_a, shape_b):
        matmul(a, b)


@pytest.mark.exercise("5.5")
@pytest.mark.parametrize(
    "shape_a, shape_b", [((2, 3, 4), (3, 4, 5)), ((2, 2, 3, 4), (3, 4, 5))], ids=compact
)
def test_matmul_rejects_batch_dims_that_do_not_broadcast_naming_both_shapes(shape_a, shape_b):
    """Batch dims 2 and 3 cannot broadcast: a ValueError naming the operands' own shapes."""
    with pytest.raises(ValueError):
        np.matmul(np.zeros(shape_a), np.zeros(shape_b))
    a, b = from_numpy(np.zeros(shape_a)), from_numpy(np.zeros(shape_b))
    with raises_naming(ValueError, shape_a, shape_b):
        matmul(a, b)


# ---------------------------------------------------------------------------------------------
# 5.6 softmax
# ---------------------------------------------------------------------------------------------

shifts = st.sampled_from([0.0, 1000.0, -1000.0])


@pytest.mark.exercise("5.6")
@given(data=st.data())
@example(data=Scripted(case=TYPICAL, dim=1, shift=1000.0))
def test_softmax_matches_a_stable_numpy_softmax(data):
    """softmax over any dim (negative too) of any layout, with logits near 0 or +-1000
    (where exp without subtracting the maximum overflows or underflows)."""
    case = data.draw(cases(min_dims=1), label="case")
    dim = pick_dim(data.draw, case.layout.shape)
    logits = Case(case.buffer + data.draw(shifts, label="shift"), case.layout)
    expected = stable_softmax(logits.array, dim)
    result = logits.tensor().softmax(dim)
    expect("dtype of the softmax", result.dtype, tenxor.float64, "float64 logits")
    rule = "exp(x - max) / sum along dim: the maximum is subtracted first"
    assert_close(result, expected, atol=1e-12, what="the softmax", rule=rule)
    sums = to_numpy(result).sum(axis=dim)
    if not np.allclose(sums, np.ones_like(sums), rtol=1e-12, atol=0, equal_nan=True):
        raise Mismatch(
            "sums of the softmax along dim", sums, np.ones_like(sums), "each group sums to 1"
        )


@pytest.mark.exercise("5.6")
@pytest.mark.parametrize("dim", [0, 1, 2, -1, -2, -3])
def test_softmax_over_each_dim_of_a_non_square_tensor(dim):
    """Shape (2, 3, 4) with logits up to 1000: each dim normalises its own groups."""
    x = np.random.default_rng(dim + 10).uniform(-4, 4, (2, 3, 4)) + 997.0
    results = {
        f"t.softmax({dim})": from_numpy(x).softmax(dim),
        f"tenxor.softmax(t, {dim})": tenxor.softmax(from_numpy(x), dim),
    }
    rule = f"each group along dim {dim} sums to 1; the maximum is subtracted first"
    for what, result in results.items():
        assert_close(result, stable_softmax(x, dim), atol=1e-12, what=what, rule=rule)


@pytest.mark.exercise("5.6")
def test_softmax_of_huge_logits_has_no_nan():
    """Logits 1000, 1001, 1002 (exp overflows) and -1000..-998 (exp underflows)."""
    for x in (np.array([[1000.0, 1001.0, 1002.0]]), np.array([[-1000.0], [-999.0], [-998.0]])):
        for dim in (0, 1):
            result = from_numpy(x).softmax(dim)
            what = f"softmax({dim}) of {x.tolist()}"
            nans = int(np.isnan(to_numpy(result)).sum())
            rule = "subtract the maximum before exp, so exp cannot overflow"
            expect(f"number of NaNs in {what}", nans, 0, rule)
            assert_close(result, stable_softmax(x, dim), atol=1e-15, what=what, rule=rule)


@pytest.mark.exercise("5.6")
@given(cases(min_dims=1, kind="int"), st.data())
@example(TYPICAL_INTS, Scripted(dim=-1))
def test_softmax_of_ints_is_float64(case, data):
    """Integer logits give a float64 softmax."""
    dim = pick_dim(data.draw, case.layout.shape)
    result = case.tensor().softmax(dim)
    expect("dtype of the softmax", result.dtype, tenxor.float64, "int logits give float64")
    expected = stable_softmax(case.array.astype(np.float64), dim)
    assert_close(result, expected, atol=1e-12, what="the softmax", rule="as of float64 logits")


@pytest.mark.exercise("5.6")
def test_softmax_rejects_a_dim_out_of_range_naming_it():
    """dim 2 of a 2-d tensor is an IndexError naming the dim."""
    with raises_naming(IndexError, 2):
        from_numpy(np.zeros((2, 3))).softmax(2)


# ---------------------------------------------------------------------------------------------
# 5.7 masked_softmax
# ---------------------------------------------------------------------------------------------


MASKED_SOFTMAX_EXAMPLE = {
    "case": TYPICAL,
    "dim": 2,
    "shift": 0.0,
    "shape of the mask": (3, 4),
    "mask": Case(np.arange(12) % 3 > 0, Layout((3, 4), (4, 1), 0)),
    "mask dtype": np.bool_,
}


@pytest.mark.exercise("5.7")
@given(data=st.data())
@example(data=Scripted(**MASKED_SOFTMAX_EXAMPLE))
def test_masked_softmax_matches_numpy(data):
    """Any layout and dim, a mask (bool, or 0/1 floats or ints) on its own layout that
    broadcasts to the logits, logits near 0 or +-1000: masked entries are exactly 0, fully
    masked groups are all 0 and nothing is nan."""
    case = data.draw(cases(min_dims=1), label="case")
    dim = pick_dim(data.draw, case.layout.shape)
    logits = Case(case.buffer + data.draw(shifts, label="shift"), case.layout)
    shape = data.draw(mask_shapes(case.layout.shape), label="shape of the mask")
    mask = data.draw(cases(shape=shape, kind="bool"), label="mask")
    mask_dtype = data.draw(st.sampled_from([np.bool_, np.float64, np.int64]), label="mask dtype")
    mask = Case(mask.buffer.astype(mask_dtype), mask.layout)
    expected = masked_softmax_reference(logits.array, mask.array, dim)
    result = logits.tensor().masked_softmax(mask.tensor(), dim)
    what = "the masked softmax"
    expect(f"dtype of {what}", result.dtype, tenxor.float64, "float64 logits")
    rule = "a softmax over the kept entries of each group; masked entries 0"
    assert_close(result, expected, atol=1e-12, what=what, rule=rule)
    actual = to_numpy(result)
    nans = int(np.isnan(actual).sum())
    expect(f"number of NaNs in {what}", nans, 0, "a fully masked group is 0, not nan")
    keep = np.broadcast_to(mask.array.astype(bool), actual.shape)
    masked = actual[~keep]
    rule = "a masked entry is exactly 0"
    expect(f"masked entries of {what}", masked, np.zeros_like(masked), rule)
    empty_groups = ~keep.any(axis=dim, keepdims=True) & np.ones(actual.shape, dtype=bool)
    emptied = actual[empty_groups]
    rule = "a fully masked group is exactly 0"
    expect(f"entries of fully masked groups of {what}", emptied, np.zeros_like(emptied), rule)


@pytest.mark.exercise("5.7")
def test_masked_softmax_with_a_broadcast_mask_and_fully_masked_rows():
    """A (3, 1) mask on (3, 4) logits masks whole rows (exact zeros); a (4,) mask masks
    columns; the function and method forms agree."""
    x = np.arange(12.0).reshape(3, 4) - 5.0
    rows = np.array([[True], [False], [True]])
    columns = np.array([1.0, 0.0, 0.0, 1.0])
    for mask, dim in [(rows, 1), (rows, 0), (columns, 1), (columns, -2)]:
        expected = masked_softmax_reference(x, mask, dim)
        t, m = from_numpy(x), from_numpy(mask)
        results = {
            f"t.masked_softmax(mask of shape {mask.shape}, {dim})": t.masked_softmax(m, dim),
            f"tenxor.masked_softmax(t, mask of shape {mask.shape}, {dim})": (
                tenxor.masked_softmax(t, m, dim)
            ),
        }
        rule = "a softmax over the kept entries of each group; a fully masked group is all 0"
        for what, result in results.items():
            assert_same(result, expected, exact=False, what=what, rule=rule)
            masked = to_numpy(result)[~np.broadcast_to(mask.astype(bool), x.shape)]
            zeros = np.zeros_like(masked)
            expect(f"masked entries of {what}", masked, zeros, "a masked entry is exactly 0")


@pytest.mark.exercise("5.7")
def test_masked_softmax_ignores_huge_masked_logits():
    """Masked entries carry logits of 1000 and the kept ones are small: the maximum that is
    subtracted must come from the kept entries only."""
    x = np.array([[1000.0, 0.5, 1.0, 1000.0], [2.0, 1000.0, -1.0, 0.0]])
    mask = np.array([[False, True, True, False], [True, False, True, True]])
    result = from_numpy(x).masked_softmax(from_numpy(mask), 1)
    expected = masked_softmax_reference(x, mask, 1)
    rule = "the maximum subtracted is that of the kept entries only"
    assert_same(result, expected, exact=False, what="the masked softmax", rule=rule)


@pytest.mark.exercise("5.7")
def test_masked_softmax_of_large_logits_and_an_all_false_mask():
    """Logits near +-1000 stay finite; a mask that is all false gives all zeros."""
    x = np.array([[1000.0, 1001.0, 999.0], [-1000.0, -1001.0, -999.0]])
    mask = np.array([True, True, False])
    assert_same(
        from_numpy(x).masked_softmax(from_numpy(mask), 1),
        masked_softmax_reference(x, mask, 1),
        exact=False,
        what="the masked softmax of logits near +-1000",
        rule="the kept entries' maximum is subtracted first",
    )
    nothing = from_numpy(np.zeros((2, 3), dtype=bool))
    what = "the masked softmax with an all-false mask"
    result = from_numpy(x).masked_softmax(nothing, 0)
    assert_same(result, np.zeros((2, 3)), what=what, rule="a fully masked group is all 0")
