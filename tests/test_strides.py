"""Chapter 2: strides. Row- and column-major strides, index <-> offset, the odometer walk and
contiguity, checked against NumPy; and the Layout value they all work on."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from tenxor.strides import (
    Layout,
    column_major_strides,
    contiguous_strides,
    index_to_offset,
    is_contiguous,
    next_index,
    offset_to_index,
)
from tests.support import (
    Case,
    Mismatch,
    cases,
    each_call,
    expect,
    layouts,
    make_tensor,
    numpy_view,
    raises_naming,
    reach,
    row_major_strides,
    same_values,
    shown,
    sizes,
    storage_shared,
    strided,
)


def numpy_strides(shape: tuple[int, ...], order: str) -> tuple[int, ...]:
    """The strides, in elements, of a new NumPy array of `shape` in C or F order."""
    array = np.empty(shape, dtype=np.float64, order=order)
    return tuple(s // array.itemsize for s in array.strides)


def sizes_at_least_1(shape: tuple[int, ...]) -> tuple[int, ...]:
    """The shape with every size-0 dim counted as size 1."""
    return tuple(max(size, 1) for size in shape)


def expect_type(what: str, value: object, expected: type) -> None:
    """`value` is of exactly the type `expected` (a subclass, a list for a tuple, fails)."""
    if type(value) is not expected:
        raise Mismatch(f"type of {what}", type(value).__name__, expected.__name__)


ROW_MAJOR = "row-major: each dim moves by the product of the sizes after it"
COLUMN_MAJOR = "column-major: each dim moves by the product of the sizes before it"
OFFSET_RULE = "the storage offset plus each index entry times its dim's stride"
UNRAVEL = "np.unravel_index: the index whose row-major offset it is"
ODOMETER = "np.ndindex order: the last dim counts fastest; None after the last index"
C_CONTIGUOUS = "NumPy's C_CONTIGUOUS flag of the same view"


def contiguity_rule(shape: tuple[int, ...]) -> str:
    """The rule for is_contiguous, with the special cases that `shape` has."""
    if 0 in shape:
        return f"{C_CONTIGUOUS}; a layout with no elements is contiguous"
    if 1 in shape:
        return f"{C_CONTIGUOUS}; dims of size 1 may have any stride"
    return C_CONTIGUOUS


nonempty_shapes = st.lists(st.integers(1, 5) | st.just(1), max_size=6).map(tuple)
small_nonempty_shapes = st.lists(st.integers(1, 4) | st.just(1), max_size=5).map(tuple)


# ---------------------------------------------------------------------------------------------
# 2.1 contiguous_strides and 2.2 column_major_strides
# ---------------------------------------------------------------------------------------------

CHOSEN_SHAPES = [
    (), (5,), (1,), (2, 3), (3, 2), (3, 1, 2), (1, 4), (4, 1), (1, 1, 1), (2, 3, 4, 5, 6),
]  # fmt: skip
SIZE_0_SHAPES = [(0,), (2, 0), (0, 3), (2, 0, 3), (4, 1, 0, 2)]


@pytest.mark.exercise("2.1")
@given(nonempty_shapes)
@example((2, 3, 4))
def test_contiguous_strides_match_numpy_c_order(shape):
    """Row-major strides are NumPy's C-order strides // itemsize, size-1 dims included."""
    expected = numpy_strides(shape, "C")
    expect(f"row-major strides of {shape}", contiguous_strides(shape), expected, ROW_MAJOR)


@pytest.mark.exercise("2.1")
@pytest.mark.parametrize("shape", CHOSEN_SHAPES, ids=str)
def test_contiguous_strides_of_chosen_shapes(shape):
    """The last dim moves by 1 and each earlier dim by the product of the sizes after it (not
    reversed, not including its own size)."""
    result = contiguous_strides(shape)
    expect_type("the row-major strides", result, tuple)
    expect(f"row-major strides of {shape}", result, numpy_strides(shape, "C"), ROW_MAJOR)


@pytest.mark.exercise("2.1")
def test_contiguous_strides_of_a_list_shape():
    """A shape given as a list gives the same tuple and is not modified."""
    shape = [2, 3, 4]
    expected = numpy_strides((2, 3, 4), "C")
    expect("row-major strides of [2, 3, 4]", contiguous_strides(shape), expected, ROW_MAJOR)
    expect("the shape list after the call", shape, [2, 3, 4], "the argument is not modified")


@pytest.mark.exercise("2.1")
@pytest.mark.parametrize("shape", SIZE_0_SHAPES, ids=str)
def test_contiguous_strides_count_a_size_0_dim_as_1(shape):
    """A size-0 dim counts as size 1 (PyTorch's convention), so the strides are NumPy's
    C-order strides of the shape with every 0 replaced by 1. (A new NumPy array of a size-0
    shape has all-zero strides instead; no element is ever read, so both are valid.)"""
    expected = numpy_strides(sizes_at_least_1(shape), "C")
    rule = "a size-0 dim counts as 1"
    expect(f"row-major strides of {shape}", contiguous_strides(shape), expected, rule)


@pytest.mark.exercise("2.2")
@given(nonempty_shapes)
@example((2, 3, 4))
def test_column_major_strides_match_numpy_f_order(shape):
    """Column-major strides are NumPy's F-order strides // itemsize, size-1 dims included."""
    expected = numpy_strides(shape, "F")
    expect(f"column-major strides of {shape}", column_major_strides(shape), expected, COLUMN_MAJOR)


@pytest.mark.exercise("2.2")
@pytest.mark.parametrize("shape", CHOSEN_SHAPES, ids=str)
def test_column_major_strides_of_chosen_shapes(shape):
    """The first dim moves by 1 and each later dim by the product of the sizes before it."""
    result = column_major_strides(shape)
    expect_type("the column-major strides", result, tuple)
    expect(f"column-major strides of {shape}", result, numpy_strides(shape, "F"), COLUMN_MAJOR)


@pytest.mark.exercise("2.2")
def test_column_major_strides_are_not_row_major_strides():
    """For a non-square shape the two orders differ; the F order is not the C order reversed."""
    shape = (2, 3, 4)
    expected = numpy_strides(shape, "F")
    assert expected not in (numpy_strides(shape, "C"), numpy_strides(shape, "C")[::-1])
    rule = "not the row-major strides, nor those reversed"
    expect("column-major strides of (2, 3, 4)", column_major_strides(shape), expected, rule)
    expected = numpy_strides((4, 5), "F")
    expect("column-major strides of [4, 5]", column_major_strides([4, 5]), expected, COLUMN_MAJOR)


@pytest.mark.exercise("2.2")
@pytest.mark.parametrize("shape", SIZE_0_SHAPES, ids=str)
def test_column_major_strides_count_a_size_0_dim_as_1(shape):
    """A size-0 dim counts as size 1, as for row-major strides: NumPy's F-order strides of the
    shape with every 0 replaced by 1."""
    expected = numpy_strides(sizes_at_least_1(shape), "F")
    rule = "a size-0 dim counts as 1"
    expect(f"column-major strides of {shape}", column_major_strides(shape), expected, rule)


# ---------------------------------------------------------------------------------------------
# Layout: an immutable, validated value
# ---------------------------------------------------------------------------------------------


@pytest.mark.exercise("2.3")
def test_layout_is_immutable():
    """Assigning to a Layout's fields fails, and the layout still reads the same offsets."""
    layout = Layout((2, 3), (3, 1), 4)
    for field, value in (("shape", (6,)), ("strides", (1, 1)), ("offset", 0)):
        with raises_naming(dataclasses.FrozenInstanceError, rule="a Layout is immutable"):
            setattr(layout, field, value)
    expect("the layout after the assignments", layout, Layout((2, 3), (3, 1), 4), "immutable")
    view = numpy_view(np.arange(10), layout)
    expect("offset of index (1, 2)", index_to_offset((1, 2), layout), int(view[1, 2]), OFFSET_RULE)


@pytest.mark.exercise("2.3")
def test_layout_from_lists_is_the_same_value():
    """Lists become tuples: equal, hashable, and read at the same offsets."""
    from_lists = Layout([2, 3], [1, 2], 5)
    layout = Layout((2, 3), (1, 2), 5)
    tuples = "lists become tuples"
    expect("Layout([2, 3], [1, 2], 5)", from_lists, layout, tuples)
    expect("hash of Layout([2, 3], [1, 2], 5)", hash(from_lists), hash(layout), tuples)
    expect("shape of Layout([2, 3], [1, 2], 5)", from_lists.shape, (2, 3), tuples)
    expect("strides of Layout([2, 3], [1, 2], 5)", from_lists.strides, (1, 2), tuples)
    expect("ndim of Layout([2, 3], [1, 2], 5)", from_lists.ndim, 2, "one dim per size")
    expect("ndim of Layout((), ())", Layout((), ()).ndim, 0, "one dim per size")
    expect("storage offset of Layout((4,), (1,))", Layout((4,), (1,)).offset, 0, "0 by default")
    view = numpy_view(np.arange(12), layout)
    for index in np.ndindex(layout.shape):
        got = index_to_offset(index, from_lists)
        expect(f"offset of index {index}", got, int(view[index]), OFFSET_RULE)


BAD_LAYOUTS = [
    pytest.param(((2, -1), (1, 1), 0), ValueError, [(2, -1)], id="negative-size"),
    pytest.param(((2, 3), (1,), 0), ValueError, [(2, 3), (1,)], id="too-few-strides"),
    pytest.param(((4,), (1, 1), 0), ValueError, [(4,), (1, 1)], id="too-many-strides"),
    pytest.param(((2,), (1,), -3), ValueError, [-3], id="negative-offset"),
    pytest.param(((2,), (1,), 1.5), ValueError, [1.5], id="float-offset"),
    pytest.param(((2.0, 3), (3, 1), 0), TypeError, [(2.0, 3)], id="float-size"),
    pytest.param(((2, 3), (3, 0.5), 0), TypeError, [(3, 0.5)], id="float-stride"),
    pytest.param(((True, 3), (3, 1), 0), TypeError, [(True, 3)], id="bool-size"),
]


@pytest.mark.provided
def test_layout_takes_integers_of_any_kind_as_python_ints():
    """NumPy's integers are sizes, strides and offsets as NumPy and PyTorch take them; the
    layout holds Python ints, equal to and hashing as the layout of plain ints."""
    given = Layout((np.int64(3), np.int32(4)), (np.int64(4), np.uint8(1)), np.int64(2))
    plain = Layout((3, 4), (4, 1), 2)
    expect("Layout of NumPy integers", given, plain, "integers of any kind are sizes")
    kinds = [type(v) for v in (*given.shape, *given.strides, given.offset)]
    expect("the types a Layout of NumPy integers holds", kinds, [int] * 5, "stored as int")
    expect("its hash", hash(given), hash(plain), "equal values hash alike")


@pytest.mark.provided
@pytest.mark.parametrize(("args", "error", "named"), BAD_LAYOUTS)
def test_layout_rejects_bad_input_and_names_it(args, error, named):
    """A bad shape, strides or offset is an error whose message names the bad value."""
    with raises_naming(error, *named):
        Layout(*args)


# ---------------------------------------------------------------------------------------------
# 2.3 index_to_offset
# ---------------------------------------------------------------------------------------------


@pytest.mark.exercise("2.3")
@given(layouts())
@example((Layout((3, 4), (1, 3), 2), 14))
def test_index_to_offset_matches_numpy_view(layout_and_size):
    """Over a buffer holding 0, 1, 2, ... the value NumPy's view has at an index IS its offset:
    any strides (negative, zero, gaps), any storage offset, 0-d and size-1 dims."""
    layout, size = layout_and_size
    view = numpy_view(np.arange(size), layout)
    calls = [(index, layout) for index in np.ndindex(layout.shape)]
    for (index, _), got in zip(calls, each_call(index_to_offset, calls), strict=True):
        expect(f"offset of index {index}", got, int(view[index]), OFFSET_RULE)


CHOSEN_LAYOUTS = [
    Layout((), (), 0),
    Layout((), (), 7),
    Layout((2, 3), (3, 1), 0),
    Layout((2, 3), (1, 2), 5),
    Layout((2, 3), (3, 1), 4),
    Layout((3,), (-2,), 6),
    Layout((4, 3), (0, 1), 2),
    Layout((3, 4), (-4, -1), 11),
    Layout((2, 1, 3), (3, 50, -1), 2),
    Layout((2, 2, 2), (1, 2, 4), 1),
]


@pytest.mark.exercise("2.3")
@pytest.mark.parametrize("layout", CHOSEN_LAYOUTS, ids=repr)
def test_index_to_offset_of_chosen_layouts(layout):
    """Column-major strides, a storage offset, negative and zero strides: each index's offset
    is NumPy's (adds the storage offset, pairs each index with its own dim's stride)."""
    _, high = reach(layout.shape, layout.strides)
    view = numpy_view(np.arange(layout.offset + high + 1), layout)
    for index in np.ndindex(layout.shape):
        result = index_to_offset(index, layout)
        expect_type(f"the offset of index {index}", result, int)
        expect(f"offset of index {index}", result, int(view[index]), OFFSET_RULE)


@pytest.mark.exercise("2.3")
def test_index_to_offset_accepts_a_list_index():
    """An index given as a list works like the tuple."""
    layout = Layout((3, 4), (1, 3), 2)
    view = numpy_view(np.arange(14), layout)
    got = index_to_offset([2, 3], layout)
    expect("offset of index [2, 3]", got, int(view[2, 3]), "a list index works like a tuple")


BAD_INDICES = [
    pytest.param((1,), Layout((2, 3), (3, 1)), [(1,), (2, 3)], id="too-few-entries"),
    pytest.param((0, 0, 0), Layout((2, 3), (3, 1)), [(0, 0, 0), (2, 3)], id="too-many-entries"),
    pytest.param((0,), Layout((), (), 2), [(0,), ()], id="index-for-0-d"),
    pytest.param((0, 7), Layout((4, 5), (5, 1)), [7, 5], id="past-the-end"),
    pytest.param((6, 0), Layout((4, 5), (5, 1)), [6, 4], id="past-the-end-dim-0"),
    pytest.param((4, 0), Layout((4, 5), (5, 1)), [4], id="equal-to-size"),
    pytest.param((0, -1), Layout((4, 5), (5, 1), 3), [-1], id="negative"),
    pytest.param((1, 0), Layout((3, 0), (1, 1)), [0], id="size-0-dim"),
]


@pytest.mark.exercise("2.3")
@pytest.mark.parametrize(("index", "layout", "named"), BAD_INDICES)
def test_index_to_offset_rejects_bad_indices(index, layout, named):
    """A wrong number of entries or an entry out of range is an IndexError naming it, never
    an offset of some other element."""
    with raises_naming(IndexError, *named):
        index_to_offset(index, layout)


# ---------------------------------------------------------------------------------------------
# 2.4 offset_to_index
# ---------------------------------------------------------------------------------------------


def unravel(offset: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(int(i) for i in np.unravel_index(offset, shape))


@st.composite
def offsets_in(draw: st.DrawFn) -> tuple[int, tuple[int, ...]]:
    """An offset of a row-major shape with at least one element (often its first or last)."""
    shape = draw(nonempty_shapes)
    total = int(np.prod(shape, dtype=np.int64))
    return draw(st.integers(0, total - 1) | st.sampled_from([0, total - 1])), shape


@pytest.mark.exercise("2.4")
@given(offsets_in())
@example((17, (2, 3, 4)))  # typical: every dim has a digit to give
@example((23, (2, 3, 4)))  # the corners: the last offset, and dims of size 1
@example((5, (1, 6, 1)))
def test_offset_to_index_matches_numpy_unravel_index(offset_and_shape):
    """offset_to_index is np.unravel_index in C order."""
    offset, shape = offset_and_shape
    expect(
        f"index of offset {offset}", offset_to_index(offset, shape), unravel(offset, shape), UNRAVEL
    )


@pytest.mark.exercise("2.4")
@pytest.mark.parametrize("shape", [(), (5,), (2, 3), (3, 2), (2, 3, 4), (3, 1, 2), (1, 1)], ids=str)
def test_offset_to_index_of_every_offset(shape):
    """Every offset of small shapes, in order, gives NumPy's indices (row-major, not
    column-major), as a tuple of ints."""
    for offset in range(int(np.prod(shape, dtype=np.int64))):
        result = offset_to_index(offset, shape)
        expect(f"index of offset {offset}", result, unravel(offset, shape), UNRAVEL)
        if not isinstance(result, tuple) or any(type(i) is not int for i in result):
            raise Mismatch(f"index of offset {offset}", result, "a tuple of Python ints")


@pytest.mark.exercise("2.4")
def test_offset_to_index_inverts_row_major_offsets():
    """The index of offset i*12 + j*4 + k in shape (2, 3, 4) is (i, j, k)."""
    shape = (2, 3, 4)
    offsets = np.arange(24).reshape(shape)
    for index in np.ndindex(shape):
        offset = int(offsets[index])
        expect(f"index of offset {offset}", offset_to_index(offset, list(shape)), index, UNRAVEL)


BAD_OFFSETS = [
    pytest.param(6, (2, 3), id="equal-to-numel"),
    pytest.param(17, (2, 3), id="past-the-end"),
    pytest.param(-1, (2, 3), id="negative"),
    pytest.param(1, (), id="past-0-d"),
    pytest.param(0, (2, 0), id="no-elements"),
]


@pytest.mark.exercise("2.4")
@pytest.mark.parametrize(("offset", "shape"), BAD_OFFSETS)
def test_offset_to_index_rejects_offsets_out_of_range(offset, shape):
    """An offset outside 0 .. numel-1 is an IndexError naming it (no wrap-around)."""
    with raises_naming(IndexError, offset):
        offset_to_index(offset, shape)


# ---------------------------------------------------------------------------------------------
# 2.5 next_index
# ---------------------------------------------------------------------------------------------


def is_index_of(index: object, shape: tuple[int, ...]) -> bool:
    """Whether `index` is a tuple of one entry per dim of `shape`, each in its range."""
    return (
        isinstance(index, tuple)
        and len(index) == len(shape)
        and all(type(i) is int and 0 <= i < size for i, size in zip(index, shape))
    )


def expect_walk(shape: tuple[int, ...]) -> None:
    """Each index of np.ndindex(shape) steps to the one after it, and the last to None (so the
    walk from the zero index visits them all in order); otherwise the failure names the first
    step that went wrong: the index next_index was given, what it returned and what was due
    (an error it raises shows what was due, too)."""
    order = list(np.ndindex(shape))
    answers = each_call(next_index, [(here, shape) for here in order])
    for here, expected in zip(order, order[1:] + [None]):
        got = next(answers)
        if same_values(got, expected):
            continue
        rule = ODOMETER
        if got is not None and not is_index_of(got, shape):
            rule = f"{shown(got)} is not an index of shape {shape}; {ODOMETER}"
        raise Mismatch(f"the index after {here} in shape {shape}", got, expected, rule)


@pytest.mark.exercise("2.5")
@given(small_nonempty_shapes)
@example((2, 3, 4))
def test_next_index_walks_every_index_in_numpy_order(shape):
    """From the zero index, next_index visits exactly np.ndindex(shape), in order, then None."""
    expect_walk(shape)


@pytest.mark.exercise("2.5")
@pytest.mark.parametrize("shape", [(), (1,), (4,), (2, 3), (3, 1, 2), (1, 1, 1), (2, 1)], ids=str)
def test_next_index_steps_to_the_following_index(shape):
    """Each index steps to the next one of np.ndindex; the last one steps to None (it does not
    wrap around to the zero index)."""
    order = list(np.ndindex(shape))
    for here, there in zip(order, order[1:] + [None]):
        expect(f"the index after {here}", next_index(here, shape), there, ODOMETER)


@pytest.mark.exercise("2.5")
def test_next_index_carries_like_an_odometer():
    """The last dim counts; a full dim wraps to 0 and carries into the dim before it."""
    shape = (2, 3, 4)
    order = list(np.ndindex(shape))
    carry = "the last dim counts; a full dim wraps to 0 and carries into the dim before it"
    for here in [(0, 0, 3), (0, 2, 3), (1, 1, 3), (0, 1, 2)]:
        expect(
            f"the index after {here}", next_index(here, shape), order[order.index(here) + 1], carry
        )
    result = next_index((1, 2, 3), shape)
    if result is not None:
        rule = "the walk ends there; it does not wrap around"
        raise Mismatch("the index after the last index (1, 2, 3)", result, None, rule)


@pytest.mark.exercise("2.5")
def test_next_index_does_not_change_its_argument():
    """An index given as a list is left as it was; the result is a new tuple."""
    index = [0, 2, 3]
    result = next_index(index, (2, 3, 4))
    expect("the index after [0, 2, 3]", result, list(np.ndindex((2, 3, 4)))[12], "a new tuple")
    expect("the index list after the call", index, [0, 2, 3], "the argument is not modified")


BAD_STEPS = [
    pytest.param((0,), (2, 3), [(0,), (2, 3)], id="too-few-entries"),
    pytest.param((0, 0, 0), (2, 3), [(0, 0, 0), (2, 3)], id="too-many-entries"),
    pytest.param((0, 5), (2, 3), [5], id="past-the-end"),
    pytest.param((2, 0), (2, 3), [2], id="equal-to-size"),
    pytest.param((0, -1), (2, 3), [-1], id="negative"),
    pytest.param((0, 0), (4, 0), [0], id="size-0-dim"),
]


@pytest.mark.exercise("2.5")
@pytest.mark.parametrize(("index", "shape", "named"), BAD_STEPS)
def test_next_index_rejects_bad_indices(index, shape, named):
    """A wrong number of entries or an entry out of range is an IndexError naming it."""
    with raises_naming(IndexError, *named):
        next_index(index, shape)


# ---------------------------------------------------------------------------------------------
# 2.6 is_contiguous
# ---------------------------------------------------------------------------------------------


@st.composite
def nearly_contiguous_layouts(draw: st.DrawFn) -> tuple[Layout, int]:
    """Row-major layouts, often with one change: any stride for a size-1 dim, one stride
    negated, zeroed, doubled or swapped with another; and a storage offset."""
    ndim = draw(st.integers(0, 5))
    shape = tuple(draw(sizes) for _ in range(ndim))
    strides = list(row_major_strides(shape))
    for dim, size in enumerate(shape):
        if size == 1 and draw(st.booleans()):
            strides[dim] = draw(st.integers(-9, 9))
    change = draw(st.sampled_from(["none", "none", "negate", "zero", "double", "swap"]))
    if ndim and change != "none":
        dim = draw(st.integers(0, ndim - 1))
        if change == "negate":
            strides[dim] = -strides[dim]
        elif change == "zero":
            strides[dim] = 0
        elif change == "double":
            strides[dim] *= 2
        else:
            other = draw(st.integers(0, ndim - 1))
            strides[dim], strides[other] = strides[other], strides[dim]
    low, high = reach(shape, tuple(strides))
    offset = -low + draw(st.integers(0, 3))
    return Layout(shape, tuple(strides), offset), offset + high + 1


def numpy_c_contiguous(layout: Layout, size: int) -> bool:
    """NumPy's verdict on the view `layout` describes."""
    return bool(strided(np.arange(max(size, 1)), layout).flags["C_CONTIGUOUS"])


@pytest.mark.exercise("2.6")
@given(layouts() | nearly_contiguous_layouts())
@example((Layout((2, 3, 4), (12, 4, 1), 1), 25))
def test_is_contiguous_matches_numpy(layout_and_size):
    """is_contiguous is NumPy's C_CONTIGUOUS flag of the same view."""
    layout, size = layout_and_size
    got = is_contiguous(layout)
    expected = numpy_c_contiguous(layout, size)
    expect(f"is_contiguous of {layout}", got, expected, contiguity_rule(layout.shape))


CONTIGUITY_CASES = [
    pytest.param(Layout((), ()), id="0-d"),
    pytest.param(Layout((), (), 5), id="0-d-with-offset"),
    pytest.param(Layout((5,), (1,)), id="vector"),
    pytest.param(Layout((5,), (2,)), id="every-other"),
    pytest.param(Layout((5,), (-1,), 4), id="reversed"),
    pytest.param(Layout((5,), (0,)), id="stride-0"),
    pytest.param(Layout((2, 3), (3, 1)), id="row-major"),
    pytest.param(Layout((2, 3), (3, 1), 4), id="row-major-with-offset"),
    pytest.param(Layout((2, 3), (1, 2)), id="column-major"),
    pytest.param(Layout((2, 3), (4, 1)), id="gap-between-rows"),
    pytest.param(Layout((2, 2), (1, 1)), id="overlapping"),
    pytest.param(Layout((2, 1, 3), (3, 99, 1)), id="size-1-dim-any-stride"),
    pytest.param(Layout((2, 1, 3), (3, -5, 1), 5), id="size-1-dim-negative-stride"),
    pytest.param(Layout((1,), (7,)), id="single-element"),
    pytest.param(Layout((1, 1), (0, 0)), id="single-element-stride-0"),
    pytest.param(Layout((3, 1), (1, 3)), id="column-of-size-1-dim"),
    pytest.param(Layout((1, 4), (0, 1)), id="size-1-then-row"),
    pytest.param(Layout((4, 1), (1, 0)), id="row-then-size-1"),
    pytest.param(Layout((3, 4), (1, 3)), id="transposed"),
    pytest.param(Layout((0,), (1,)), id="empty"),
    pytest.param(Layout((0, 3), (5, 7)), id="empty-odd-strides"),
    pytest.param(Layout((2, 0), (-3, 9), 3), id="empty-negative-stride"),
    pytest.param(Layout((3, 0, 2), (0, 0, 0)), id="empty-stride-0"),
]


@pytest.mark.exercise("2.6")
@pytest.mark.parametrize("layout", CONTIGUITY_CASES)
def test_is_contiguous_of_chosen_layouts(layout):
    """Size-1 dims never move, so their strides do not matter; a layout with no elements is
    contiguous; the storage offset does not matter; stride 0, negative strides, gaps and
    column-major order are not row-major contiguous. NumPy decides each case."""
    _, high = reach(layout.shape, layout.strides)
    result = is_contiguous(layout)
    expect_type("the result of is_contiguous", result, bool)
    expected = numpy_c_contiguous(layout, layout.offset + high + 1)
    expect(f"is_contiguous of {layout}", result, expected, contiguity_rule(layout.shape))


@pytest.mark.exercise("2.6")
@given(cases())
@example(Case(np.arange(30.0), Layout((3, 4), (1, 3), 2)))
def test_tensor_is_contiguous_matches_numpy(case):
    """t.is_contiguous() is NumPy's C_CONTIGUOUS flag of the tensor's view."""
    got = case.tensor().is_contiguous()
    expected = bool(case.array.flags["C_CONTIGUOUS"])
    rule = contiguity_rule(case.layout.shape)
    expect(f"t.is_contiguous() of a tensor with {case.layout}", got, expected, rule)


@pytest.mark.exercise("2.6")
@given(nearly_contiguous_layouts())
@example((Layout((2, 3, 4), (12, 4, 1), 1), 25))
def test_contiguous_tensor_is_its_own_contiguous_version(layout_and_size):
    """t.is_contiguous() follows NumPy, and a contiguous tensor's contiguous() is itself (no
    copy, same storage)."""
    layout, size = layout_and_size
    t = make_tensor(np.arange(size, dtype=np.float64), layout)
    expected = numpy_c_contiguous(layout, size)
    rule = contiguity_rule(layout.shape)
    expect(f"t.is_contiguous() of a tensor with {layout}", t.is_contiguous(), expected, rule)
    if expected:
        same = t.contiguous()
        rule = "a contiguous tensor is not copied"
        if same is not t:
            raise Mismatch("t.contiguous() of a contiguous tensor", "another tensor", "t", rule)
        if not storage_shared(same, t):
            raise Mismatch("storage of t.contiguous()", "a new Storage", "the Storage of t", rule)
