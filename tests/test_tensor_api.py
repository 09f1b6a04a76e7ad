"""The public API of tenxor: constructors, reading elements back, and the printer.

Constructors are read back with `to_numpy` and compared with NumPy. Reading (`tolist`,
`item`, `float`, `tobytes`) and printing (`repr`, `tensor_to_string`, `tprint`) are checked
against output built here from NumPy values, independently of the library's printer. All of
them are provided code that needs no exercise (tenxor/row_major.py), so these tests are
marked `provided`.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tenxor
from tenxor.strides import Layout
from tests.support import (
    NUMPY_DTYPES,
    assert_same,
    cases,
    make_tensor,
    numpy_view,
    row_major_strides,
    to_numpy,
)

SEPARATORS = ("---", "===", "***", "###")

any_case = st.sampled_from(["float", "int", "bool"]).flatmap(lambda kind: cases(kind=kind))


# ---------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------


def assert_new_tensor(t: tenxor.Tenxor, expected: np.ndarray, exact: bool = True) -> None:
    """`t` is a fresh row-major tensor at storage offset 0 with the dtype and values of
    `expected`."""
    assert t.dtype.name == expected.dtype.name
    assert t.shape == expected.shape
    assert t.offset == 0
    if expected.size > 0:
        assert t.strides == row_major_strides(expected.shape)
    assert_same(t, expected, exact=exact)


def cell_text(value: object, precision: int) -> str:
    """How the printer shows one element: floats with `precision` decimals, others as str."""
    if isinstance(value, float):
        return format(value, f".{precision}f")
    return str(value)


def expected_grid(array: np.ndarray, precision: int = 4) -> str:
    """The printed grid of `array`, built recursively: the last dim is a row, the dim before
    it stacks rows, and blocks of 3, 4, 5 and more dims are separated by ---, ===, *** and ###.
    Every cell is right-aligned to the width of the widest one."""
    if array.size == 0:
        return "(no elements)"
    width = max(len(cell_text(v, precision)) for v in array.reshape(-1).tolist())

    def cell(value: object) -> str:
        return cell_text(value, precision).rjust(width)

    def render(block: np.ndarray) -> str:
        if block.ndim == 0:
            return cell(block.item())
        if block.ndim == 1:
            return "  ".join(cell(v) for v in block.tolist())
        if block.ndim == 2:
            return "\n".join(render(row) for row in block)
        line = SEPARATORS[min(block.ndim - 3, len(SEPARATORS) - 1)]
        return f"\n{line}\n".join(render(inner) for inner in block)

    return render(array)


def expected_repr(array: np.ndarray) -> str:
    """A tensor's repr: a heading with shape and dtype, then the grid (or, above 1000
    elements, how many there are)."""
    heading = f"Tenxor of shape {array.shape}, dtype {array.dtype.name}"
    if array.size > 1000:
        return f"{heading}\n({array.size} elements: print a slice of it with tprint)"
    return f"{heading}\n{expected_grid(array)}"


def assert_same_nested(actual: object, expected: object) -> None:
    """Nested lists equal element by element, with the same Python type at every leaf."""
    if isinstance(expected, list):
        assert isinstance(actual, list), f"{actual!r} is not a list"
        assert len(actual) == len(expected)
        for a, e in zip(actual, expected):
            assert_same_nested(a, e)
        return
    assert type(actual) is type(expected), f"{actual!r} is not a {type(expected).__name__}"
    assert actual == expected or (actual != actual and expected != expected)


def column_major_tensor(expected: np.ndarray) -> tenxor.Tenxor:
    """A non-contiguous tensor with the elements of `expected`: stored in column-major order
    after one unused element, so it also has a storage offset."""
    stored = expected.transpose().reshape(-1)
    buffer = np.concatenate([np.full(1, -99, dtype=expected.dtype), stored])
    strides = row_major_strides(expected.shape[::-1])[::-1]
    return make_tensor(buffer, Layout(expected.shape, strides, 1))


# ---------------------------------------------------------------------------------------------
# Constructors (2.1)
# ---------------------------------------------------------------------------------------------


@pytest.mark.provided
@pytest.mark.parametrize(
    "data",
    [
        3, -2.5, True, 0,
        [], [[]], [[[]]],
        [1, 2, 3], [1, 2.5], [True, False], [True, 2], [True, 2.5],
        [[1, 2], [3, 4], [5, 6]],
        [[[1.5], [2]], [[3], [-4]]],
        ((1, 2), (3, 4)),
        [[True], [False]],
    ],
    ids=repr,
)  # fmt: skip
def test_tensor_from_numbers_and_nested_lists_infers_dtype_like_numpy(data):
    """tensor() of Python data has NumPy's shape, values and dtype (bool, int64, float64)."""
    assert_new_tensor(tenxor.tensor(data), np.array(data))


@pytest.mark.provided
@pytest.mark.parametrize(
    "array",
    [
        np.arange(6.0).reshape(2, 3),
        np.arange(-12, 12).reshape(2, 3, 4),
        np.array([[True, False, True]]),
        np.array(2.75),
        np.array(-7),
        np.zeros((0, 3)),
        np.arange(24.0).reshape(2, 3, 4)[::-1, :, ::2].transpose(2, 0, 1),
    ],
    ids=["float-matrix", "int-3d", "bool", "float-0d", "int-0d", "empty", "non-contiguous"],
)
def test_tensor_from_numpy_array_keeps_values_and_dtype(array):
    """tensor() of a float64, int64 or bool NumPy array (also 0-d, empty or non-contiguous)
    copies it into a fresh row-major tensor."""
    assert_new_tensor(tenxor.tensor(array), array)


@pytest.mark.provided
@pytest.mark.parametrize("dtype_as_object", [False, True], ids=["name", "dtype"])
@pytest.mark.parametrize(
    "data, dtype",
    [
        ([1.7, -1.7, 2.5, -0.5, 0.0, 3.999], "int64"),
        ([[1.7, -2.2], [9.9, -9.9]], "int32"),
        ([0.0, -0.0, 0.5, -2.0], "bool"),
        ([1, -2, 3], "float32"),
        ([0.1, 1e-3, 3.14159, -2.5e7], "float32"),
        ([1, 0, -3], "bool"),
        ([True, False], "int64"),
        ([True, False], "float64"),
        (np.array([[1.5, -1.5], [7.9, -0.2]]), "int64"),
        (2.9, "int32"),
    ],
)
def test_tensor_with_explicit_dtype_converts_like_numpy_astype(data, dtype, dtype_as_object):
    """With a dtype, values are converted as NumPy's astype does (floats truncate to ints,
    nonzero is True, float32 rounds)."""
    expected = np.array(data).astype(NUMPY_DTYPES[dtype])
    chosen = tenxor.DTYPES[dtype] if dtype_as_object else dtype
    assert_new_tensor(tenxor.tensor(data, dtype=chosen), expected)


@pytest.mark.provided
@given(st.lists(st.floats(-1e15, 1e15), max_size=12), st.sampled_from(["int64", "int32"]))
def test_tensor_float_to_int_truncates_toward_zero(values, dtype):
    """Any float (in range) converts to an integer dtype the way NumPy's astype truncates."""
    if dtype == "int32":
        values = [v / 2**22 for v in values]  # keep within int32
    expected = np.array(values, dtype=np.float64).astype(NUMPY_DTYPES[dtype])
    assert_new_tensor(tenxor.tensor(values, dtype=dtype), expected)


SHAPES = [(), (0,), (3,), (2, 3), (2, 0, 3), (1, 4, 1, 2), (2, 1, 3, 1, 2)]


@pytest.mark.provided
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_zeros_and_ones_have_the_shape_dtype_and_row_major_strides(shape):
    """zeros/ones take the shape as separate sizes or as one tuple, default to float64 and
    lay out a fresh row-major tensor."""
    assert_new_tensor(tenxor.zeros(shape), np.zeros(shape))
    assert_new_tensor(tenxor.ones(*shape), np.ones(shape))
    assert_new_tensor(tenxor.zeros(shape, dtype="int32"), np.zeros(shape, dtype=np.int32))
    assert_new_tensor(tenxor.ones(shape, dtype=tenxor.bool), np.ones(shape, dtype=np.bool_))


@pytest.mark.provided
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("value", [7, -2.5, True, 0])
def test_full_infers_the_dtype_of_its_value(shape, value):
    """full(shape, value) repeats `value` and takes its dtype (int64, float64 or bool), as
    np.full does."""
    assert_new_tensor(tenxor.full(shape, value), np.full(shape, value))


@pytest.mark.provided
def test_full_with_a_dtype_converts_the_value():
    """full with an explicit dtype converts the value like astype (2.9 -> 2 as int64)."""
    expected = np.full((2, 3), 2.9).astype(np.int64)
    assert_new_tensor(tenxor.full((2, 3), 2.9, dtype="int64"), expected)
    assert_new_tensor(
        tenxor.full((3,), -1.9, dtype=tenxor.int32), np.full(3, -1.9).astype(np.int32)
    )
    assert_new_tensor(tenxor.full((2,), 5, dtype="float32"), np.full(2, 5, dtype=np.float32))


ARANGE_ARGS = [
    (5,), (0,), (2, 7), (0, 10, 3), (10, 0, -3), (-3, 3, 2), (5, 5), (5, 0), (0, 5, -1),
    (0, 1, 0.1), (1, 0, -0.25), (0.5, 3), (0, 2.5, 0.5), (-1.5, 1.5, 0.75), (2, -2, -0.5),
    (1, 1.3, 0.1), (0, 0.3, 0.1), (3.0,),
]  # fmt: skip


@pytest.mark.provided
@pytest.mark.parametrize("args", ARANGE_ARGS, ids=str)
def test_arange_matches_numpy(args):
    """arange gives np.arange's values and length (float steps, negative steps, empty
    ranges) and its dtype: int64 for int arguments, float64 otherwise."""
    expected = np.arange(*args)
    assert_new_tensor(tenxor.arange(*args), expected, exact=expected.dtype.kind != "f")


@pytest.mark.provided
def test_arange_with_a_dtype():
    """arange converts its numbers to an explicit dtype."""
    assert_new_tensor(tenxor.arange(5, dtype="float32"), np.arange(5, dtype=np.float32))
    expected = np.arange(0, 3, 0.5).astype(np.float32)
    assert_new_tensor(tenxor.arange(0, 3, 0.5, dtype=tenxor.float32), expected)


@pytest.mark.provided
@given(st.integers(-30, 30), st.integers(-30, 30), st.integers(-7, 7).filter(bool))
def test_arange_with_int_arguments_matches_numpy(start, end, step):
    """For any int start, end and nonzero step, arange equals np.arange exactly."""
    assert_new_tensor(tenxor.arange(start, end, step), np.arange(start, end, step))


@pytest.mark.provided
@given(st.floats(-10, 10), st.floats(-10, 10), st.floats(0.05, 5), st.booleans())
def test_arange_with_float_arguments_matches_numpy(start, end, step, downwards):
    """For float arguments arange has np.arange's length and (up to rounding) its values."""
    step = -step if downwards else step
    t = tenxor.arange(start, end, step)
    expected = np.arange(start, end, step)
    assert t.shape == expected.shape
    assert t.dtype is tenxor.float64
    np.testing.assert_allclose(to_numpy(t), expected, rtol=1e-9, atol=1e-9)


@pytest.mark.provided
def test_rand_with_a_seed_is_reproducible_and_in_range():
    """rand with a seed: same seed same values, another seed other values, every value in
    [low, high), float64 by default, a fresh row-major tensor of the shape asked for."""
    a = tenxor.rand(3, 4, seed=7, low=-2.0, high=5.0)
    b = tenxor.rand((3, 4), seed=7, low=-2.0, high=5.0)
    c = tenxor.rand(3, 4, seed=8, low=-2.0, high=5.0)
    values = to_numpy(a)
    assert a.shape == (3, 4) and a.dtype is tenxor.float64
    assert a.strides == row_major_strides((3, 4)) and a.offset == 0
    np.testing.assert_array_equal(to_numpy(b), values)
    assert not np.array_equal(to_numpy(c), values)
    assert np.all(values >= -2.0) and np.all(values < 5.0)
    assert len(np.unique(values)) == values.size


@pytest.mark.provided
def test_rand_spreads_uniformly_over_low_to_high():
    """Many rand values fill [low, high) evenly: each quarter gets about a quarter of them
    (so the range is neither shifted nor scaled wrong)."""
    values = to_numpy(tenxor.rand(4000, seed=3, low=-1.0, high=3.0))
    assert values.min() >= -1.0 and values.max() < 3.0
    counts, _ = np.histogram(values, bins=4, range=(-1.0, 3.0))
    assert all(850 < count < 1150 for count in counts), counts
    assert abs(values.mean() - 1.0) < 0.1


@pytest.mark.provided
def test_rand_other_shapes_and_dtypes():
    """rand takes a tuple shape, a 0-d shape and a dtype."""
    t = tenxor.rand((2, 3), seed=1, dtype="float32")
    assert t.dtype is tenxor.float32 and t.shape == (2, 3)
    assert np.all((to_numpy(t) >= 0) & (to_numpy(t) < 1))
    s = tenxor.rand((), seed=1)
    assert s.shape == () and 0 <= to_numpy(s).item() < 1


@pytest.mark.provided
def test_manual_seed_restarts_the_shared_generator():
    """After manual_seed(n) the unseeded rand calls repeat the same sequence; a rand call with
    its own seed does not disturb that sequence."""
    tenxor.manual_seed(11)
    first, second = to_numpy(tenxor.rand(5)), to_numpy(tenxor.rand(5))
    tenxor.manual_seed(11)
    again = to_numpy(tenxor.rand(5))
    tenxor.rand(5, seed=99)
    np.testing.assert_array_equal(again, first)
    np.testing.assert_array_equal(to_numpy(tenxor.rand(5)), second)
    assert not np.array_equal(first, second)


# ---------------------------------------------------------------------------------------------
# Reading elements back (4.4)
# ---------------------------------------------------------------------------------------------


@pytest.mark.provided
@given(any_case)
def test_tolist_matches_numpy_on_any_layout(case):
    """tolist() gives NumPy's nested lists (a plain number for 0-d) for any layout: strides
    0 or negative, storage offsets, size-0 and size-1 dims; bools stay bools."""
    assert_same_nested(case.tensor().tolist(), case.array.tolist())


@pytest.mark.provided
def test_tolist_reads_through_offset_and_negative_strides():
    """A small reversed, offset view lists its elements in index order."""
    buffer = np.arange(10, dtype=np.int64)
    t = make_tensor(buffer, Layout((2, 3), (-4, -1), 9))
    assert_same_nested(t.tolist(), numpy_view(buffer, t.layout).tolist())
    assert_same_nested(t.tolist(), [[9, 8, 7], [5, 4, 3]])


@pytest.mark.provided
@pytest.mark.parametrize(
    "buffer, layout",
    [
        (np.array([1.5, -2.25, 3.0]), Layout((), (), 1)),
        (np.array([4, 5, 6, 7], dtype=np.int64), Layout((1, 1, 1), (-2, 5, 0), 3)),
        (np.array([False, True]), Layout((1,), (1,), 1)),
        (np.array([0.5, 2.5], dtype=np.float32), Layout((), (), 1)),
    ],
    ids=["float-0d-offset", "int-size-1-dims", "bool", "float32"],
)
def test_item_and_float_read_the_one_element(buffer, layout):
    """item() returns the one element as a Python number of the right type; float() of it
    is that number as a float."""
    t = make_tensor(buffer, layout)
    expected = numpy_view(buffer, layout).reshape(()).item()
    assert_same_nested(t.item(), expected)
    assert float(t) == float(expected)
    assert isinstance(float(t), float)


TOBYTES_DTYPES = [np.float64, np.float32, np.int64, np.int32, np.bool_]


@pytest.mark.provided
@pytest.mark.parametrize("dtype", TOBYTES_DTYPES, ids=lambda d: np.dtype(d).name)
def test_tobytes_of_a_transposed_tensor_equals_numpy(dtype):
    """tobytes() of a non-contiguous tensor is NumPy's tobytes() of the same values and
    dtype: the row-major bytes of the elements."""
    buffer = (np.arange(12) % 5 - 2).astype(dtype)
    layout = Layout((4, 3), (1, 4), 0)
    t = make_tensor(buffer, layout)
    assert t.tobytes() == numpy_view(buffer, layout).tobytes()


@pytest.mark.provided
@given(any_case, st.sampled_from(TOBYTES_DTYPES))
def test_tobytes_equals_numpy_on_any_layout(case, dtype):
    """tobytes() equals NumPy's tobytes() of the same view for any layout and dtype."""
    buffer = case.buffer.astype(dtype)
    t = make_tensor(buffer, case.layout)
    assert t.tobytes() == numpy_view(buffer, case.layout).tobytes()


@pytest.mark.provided
def test_tobytes_of_a_contiguous_slice_holds_only_its_elements():
    """A contiguous view that starts at storage offset 2 and reads 3 of 8 elements gives the
    bytes of those 3 elements only."""
    buffer = np.arange(8.0)
    layout = Layout((3,), (1,), 2)
    assert make_tensor(buffer, layout).tobytes() == numpy_view(buffer, layout).tobytes()
    empty = Layout((0, 2), (2, 1), 0)
    assert make_tensor(buffer, empty).tobytes() == b""


# ---------------------------------------------------------------------------------------------
# The printer (4.4)
# ---------------------------------------------------------------------------------------------


@pytest.mark.provided
@given(any_case)
def test_repr_shows_heading_and_grid_on_any_layout(case):
    """repr() is the heading `Tenxor of shape ..., dtype ...` and the grid of the elements,
    with equal-width right-aligned cells, read through any layout."""
    assert repr(case.tensor()) == expected_repr(case.array)


@pytest.mark.provided
@given(any_case, st.integers(0, 6))
def test_tensor_to_string_matches_the_independent_grid(case, precision):
    """tensor_to_string() without dims prints every element, floats with `precision`
    decimals."""
    text = tenxor.tensor_to_string(case.tensor(), precision=precision)
    assert text == expected_grid(case.array, precision)


@pytest.mark.provided
def test_print_small_examples_literally():
    """Tiny grids whose text is right by definition: alignment, decimals, separators."""
    ints = make_tensor(np.array([1, -20, 300, 4]), Layout((2, 2), (2, 1)))
    assert tenxor.tensor_to_string(ints) == "  1  -20\n300    4"
    floats = make_tensor(np.array([0.5, -12.0]), Layout((2,), (1,)))
    assert tenxor.tensor_to_string(floats) == "  0.5000  -12.0000"
    cube = make_tensor(np.arange(8), Layout((2, 2, 2), (4, 2, 1)))
    assert tenxor.tensor_to_string(cube) == "0  1\n2  3\n---\n4  5\n6  7"
    four = make_tensor(np.arange(4), Layout((2, 2, 1, 1), (2, 1, 1, 1)))
    assert tenxor.tensor_to_string(four) == "0\n---\n1\n===\n2\n---\n3"
    flags = make_tensor(np.array([True, False]), Layout((2,), (1,)))
    assert repr(flags) == "Tenxor of shape (2,), dtype bool\n True  False"


def separators_expected(shape: tuple[int, ...]) -> list[bool]:
    """Which of ---, ===, *** and ### a grid of `shape` contains: a block of k >= 3 dims
    separates its sub-blocks only when it has more than one."""
    outer = shape[:-2]
    levels = [outer[-1:], outer[-2:-1], outer[-3:-2], outer[:-3]]
    return [any(size > 1 for size in sizes) for sizes in levels]


@pytest.mark.provided
@pytest.mark.parametrize(
    "shape",
    [(3,), (2, 3), (2, 2, 3), (2, 3, 2, 2), (3, 2, 2, 1, 2), (2, 1, 2, 2, 3), (2, 1, 2, 1, 2, 2),
     (1, 2, 1, 2, 2), (2, 2, 1, 1, 2, 1, 2)],
    ids=str,
)  # fmt: skip
def test_separators_between_matrices_cubes_and_higher_blocks(shape):
    """--- separates matrices, === 3-d blocks, *** 4-d blocks and ### anything higher; the
    grid is read through a non-contiguous layout with a storage offset."""
    expected = (np.arange(math.prod(shape)) * 1.25 - 7).reshape(shape)
    text = tenxor.tensor_to_string(column_major_tensor(expected))
    assert text == expected_grid(expected)
    present = [line in text.splitlines() for line in SEPARATORS]
    assert present == separators_expected(shape)


@pytest.mark.provided
def test_repr_of_a_large_tensor_counts_its_elements():
    """Above 1000 elements repr() says how many there are instead of printing them; at 1000
    it still prints them."""
    big = make_tensor(np.zeros(1001), Layout((11, 91), (91, 1)))
    assert repr(big) == expected_repr(np.zeros((11, 91)))
    assert repr(big).splitlines()[1] == "(1001 elements: print a slice of it with tprint)"
    edge = make_tensor(np.zeros(1000), Layout((10, 100), (100, 1)))
    assert repr(edge) == expected_repr(np.zeros((10, 100)))
    assert len(repr(edge).splitlines()) == 11


@pytest.mark.provided
def test_printing_a_tensor_with_no_elements():
    """A tensor with a size-0 dim prints `(no elements)`."""
    t = make_tensor(np.arange(3.0), Layout((2, 0, 3), (0, 3, 1), 1))
    assert repr(t) == "Tenxor of shape (2, 0, 3), dtype float64\n(no elements)"
    assert tenxor.tensor_to_string(t) == "(no elements)"


@pytest.mark.provided
def test_tprint_prints_the_grid(capsys):
    """tprint(t) writes tensor_to_string(t) and a newline to stdout."""
    expected = np.arange(12.0).reshape(2, 3, 2) / 3
    t = column_major_tensor(expected)
    tenxor.tprint(t)
    tenxor.tprint(t, precision=1)
    assert capsys.readouterr().out == (
        expected_grid(expected) + "\n" + expected_grid(expected, 1) + "\n"
    )


DIMS_SELECTIONS = [
    (None, None, None, None),
    (1, None, None, None),
    (None, 0, None, None),
    (None, None, -1, None),
    (None, None, None, 1),
    (2, 1, None, None),
    (None, 1, None, 0),
    (1, 0, 2, None),
    (1, -1, 0, 1),
]


@pytest.mark.provided  # the printer's slice selection also uses indexing (3.5)
@pytest.mark.parametrize("dims", DIMS_SELECTIONS, ids=str)
def test_tprint_with_a_dims_selection(capsys, dims):
    """`dims` picks a slice (None keeps a dim, an int keeps one position of it) and only that
    slice is printed, from a non-contiguous tensor with a storage offset."""
    expected = np.arange(48).reshape(3, 2, 4, 2) - 20
    t = column_major_tensor(expected)
    key = tuple(slice(None) if d is None else d for d in dims)
    assert tenxor.tensor_to_string(t, dims) == expected_grid(expected[key])
    tenxor.tprint(t, dims, precision=2)
    assert capsys.readouterr().out == expected_grid(expected[key], 2) + "\n"
