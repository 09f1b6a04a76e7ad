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
from hypothesis import example, given
from hypothesis import strategies as st

import tenxor
from tenxor.strides import Layout
from tests.support import (
    NUMPY_DTYPES,
    Case,
    Mismatch,
    assert_same,
    cases,
    expect,
    make_tensor,
    numpy_view,
    row_major_strides,
    to_numpy,
)

SEPARATORS = ("---", "===", "***", "###")

any_case = st.sampled_from(["float", "int", "bool"]).flatmap(lambda kind: cases(kind=kind))

# A typical (2, 3) layout for an explicit example: column-major with storage offset 1.
EXAMPLE_CASE = Case(np.arange(8) * 1.25 - 3.5, Layout((2, 3), (1, 2), 1))


# ---------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------


def assert_new_tensor(
    t: tenxor.Tenxor, expected: np.ndarray, exact: bool = True, what: str = "the new tensor"
) -> None:
    """`t` is a fresh row-major tensor at storage offset 0 with the dtype and values of
    `expected`."""
    if not isinstance(t, tenxor.Tenxor):
        raise Mismatch(f"type of {what}", type(t).__name__, "Tenxor")
    expect(f"dtype of {what}", t.dtype.name, expected.dtype.name, "as NumPy infers or converts")
    expect(f"shape of {what}", t.shape, expected.shape, "as NumPy's")
    expect(f"storage offset of {what}", t.offset, 0, "a new tensor starts its storage")
    if expected.size > 0:
        strides = row_major_strides(expected.shape)
        expect(f"strides of {what}", t.strides, strides, "a new tensor is row-major")
    assert_same(t, expected, exact=exact, what=what, rule="NumPy's values")


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


def assert_same_nested(actual: object, expected: object, what: str = "the nested lists") -> None:
    """Nested lists equal element by element, with the same Python type at every leaf; a
    failure names the place, as `what[0][2]`."""
    if isinstance(expected, list):
        if not isinstance(actual, list):
            raise Mismatch(f"type of {what}", type(actual).__name__, "list")
        expect(f"length of {what}", len(actual), len(expected))
        for i, (a, e) in enumerate(zip(actual, expected)):
            assert_same_nested(a, e, f"{what}[{i}]")
        return
    if type(actual) is not type(expected):
        rule = "a Python number of the dtype's kind"
        raise Mismatch(f"type of {what}", type(actual).__name__, type(expected).__name__, rule)
    if not (actual == expected or (actual != actual and expected != expected)):
        raise Mismatch(what, actual, expected)


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
@example([1.7, -2.5, 3e9, -0.25, 7.0], "int64")
def test_tensor_float_to_int_truncates_toward_zero(values, dtype):
    """Any float (in range) converts to an integer dtype the way NumPy's astype truncates."""
    if dtype == "int32":
        values = [v / 2**22 for v in values]  # keep within int32
    expected = np.array(values, dtype=np.float64).astype(NUMPY_DTYPES[dtype])
    what = f"tensor(values, dtype={dtype!r})"
    assert_new_tensor(tenxor.tensor(values, dtype=dtype), expected, what=what)


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
@example(-5, 12, 3)
def test_arange_with_int_arguments_matches_numpy(start, end, step):
    """For any int start, end and nonzero step, arange equals np.arange exactly."""
    what = f"arange({start}, {end}, {step})"
    assert_new_tensor(tenxor.arange(start, end, step), np.arange(start, end, step), what=what)


@pytest.mark.provided
@given(st.floats(-10, 10), st.floats(-10, 10), st.floats(0.05, 5), st.booleans())
@example(-2.5, 4.0, 0.75, False)
def test_arange_with_float_arguments_matches_numpy(start, end, step, downwards):
    """For float arguments arange has np.arange's length and (up to rounding) its values."""
    step = -step if downwards else step
    t = tenxor.arange(start, end, step)
    expected = np.arange(start, end, step)
    what = f"arange({start!r}, {end!r}, {step!r})"
    expect(f"shape of {what}", t.shape, expected.shape, "np.arange's length")
    expect(f"dtype of {what}", t.dtype, tenxor.float64, "float arguments give float64")
    if not np.allclose(to_numpy(t), expected, rtol=1e-9, atol=1e-9, equal_nan=True):
        raise Mismatch(f"elements of {what}", to_numpy(t), expected, "np.arange's, up to rounding")


@pytest.mark.provided
def test_rand_with_a_seed_is_reproducible_and_in_range():
    """rand with a seed: same seed same values, another seed other values, every value in
    [low, high), float64 by default, a fresh row-major tensor of the shape asked for."""
    a = tenxor.rand(3, 4, seed=7, low=-2.0, high=5.0)
    b = tenxor.rand((3, 4), seed=7, low=-2.0, high=5.0)
    c = tenxor.rand(3, 4, seed=8, low=-2.0, high=5.0)
    values = to_numpy(a)
    what = "rand(3, 4, seed=7, low=-2.0, high=5.0)"
    expect(f"shape of {what}", a.shape, (3, 4))
    expect(f"dtype of {what}", a.dtype, tenxor.float64, "float64 by default")
    expect(f"strides of {what}", a.strides, row_major_strides((3, 4)), "a new tensor")
    expect(f"storage offset of {what}", a.offset, 0, "a new tensor")
    rule = "the same seed gives the same values"
    expect("rand((3, 4), seed=7, ...) after rand(3, 4, seed=7, ...)", to_numpy(b), values, rule)
    if np.array_equal(to_numpy(c), values):
        raise Mismatch(
            "rand(3, 4, seed=8, ...)", to_numpy(c), "other values than seed 7's", "a new seed"
        )
    low_high = (float(values.min()), float(values.max()))
    if not (np.all(values >= -2.0) and np.all(values < 5.0)):
        rule = "every value in [low, high)"
        raise Mismatch(f"smallest and largest of {what}", low_high, "within [-2.0, 5.0)", rule)
    distinct = len(np.unique(values))
    expect(f"distinct values of {what}", distinct, values.size, "uniform floats do not repeat")


@pytest.mark.provided
def test_rand_spreads_uniformly_over_low_to_high():
    """Many rand values fill [low, high) evenly: each quarter gets about a quarter of them
    (so the range is neither shifted nor scaled wrong)."""
    values = to_numpy(tenxor.rand(4000, seed=3, low=-1.0, high=3.0))
    what = "rand(4000, seed=3, low=-1.0, high=3.0)"
    if not (values.min() >= -1.0 and values.max() < 3.0):
        low_high = (float(values.min()), float(values.max()))
        rule = "every value in [low, high)"
        raise Mismatch(f"smallest and largest of {what}", low_high, "within [-1.0, 3.0)", rule)
    counts, _ = np.histogram(values, bins=4, range=(-1.0, 3.0))
    if not all(850 < count < 1150 for count in counts):
        raise Mismatch(
            f"values of {what} in each quarter of [-1.0, 3.0)",
            counts.tolist(),
            "between 850 and 1150 each",
            "uniform over [low, high)",
        )
    mean = float(values.mean())
    if not abs(mean - 1.0) < 0.1:
        raise Mismatch(f"mean of {what}", mean, "within 0.1 of 1.0", "the middle of [low, high)")


@pytest.mark.provided
def test_rand_other_shapes_and_dtypes():
    """rand takes a tuple shape, a 0-d shape and a dtype."""
    t = tenxor.rand((2, 3), seed=1, dtype="float32")
    what = "rand((2, 3), seed=1, dtype='float32')"
    expect(f"dtype of {what}", t.dtype, tenxor.float32)
    expect(f"shape of {what}", t.shape, (2, 3), "a tuple is the shape")
    if not np.all((to_numpy(t) >= 0) & (to_numpy(t) < 1)):
        raise Mismatch(f"elements of {what}", to_numpy(t), "values in [0, 1)", "low 0, high 1")
    s = tenxor.rand((), seed=1)
    expect("shape of rand((), seed=1)", s.shape, (), "() is the 0-d shape")
    if not 0 <= to_numpy(s).item() < 1:
        got = to_numpy(s).item()
        raise Mismatch("the element of rand((), seed=1)", got, "a value in [0, 1)", "low 0, high 1")


@pytest.mark.provided
def test_manual_seed_restarts_the_shared_generator():
    """After manual_seed(n) the unseeded rand calls repeat the same sequence; a rand call with
    its own seed does not disturb that sequence."""
    tenxor.manual_seed(11)
    first, second = to_numpy(tenxor.rand(5)), to_numpy(tenxor.rand(5))
    tenxor.manual_seed(11)
    again = to_numpy(tenxor.rand(5))
    tenxor.rand(5, seed=99)
    rule = "manual_seed restarts the shared generator"
    expect("rand(5) after manual_seed(11) again", again, first, rule)
    rule = "a rand call with its own seed leaves the shared generator alone"
    expect("the second rand(5) after manual_seed(11) again", to_numpy(tenxor.rand(5)), second, rule)
    if np.array_equal(first, second):
        rule = "the shared generator moves on"
        raise Mismatch("the second rand(5) after manual_seed(11)", second, "not the first's", rule)


# ---------------------------------------------------------------------------------------------
# Reading elements back (4.4)
# ---------------------------------------------------------------------------------------------


@pytest.mark.provided
@given(any_case)
@example(EXAMPLE_CASE)
def test_tolist_matches_numpy_on_any_layout(case):
    """tolist() gives NumPy's nested lists (a plain number for 0-d) for any layout: strides
    0 or negative, storage offsets, size-0 and size-1 dims; bools stay bools."""
    assert_same_nested(case.tensor().tolist(), case.array.tolist(), "t.tolist()")


@pytest.mark.provided
def test_tolist_reads_through_offset_and_negative_strides():
    """A small reversed, offset view lists its elements in index order."""
    buffer = np.arange(10, dtype=np.int64)
    t = make_tensor(buffer, Layout((2, 3), (-4, -1), 9))
    assert_same_nested(t.tolist(), numpy_view(buffer, t.layout).tolist(), "t.tolist()")
    assert_same_nested(t.tolist(), [[9, 8, 7], [5, 4, 3]], "t.tolist()")


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
    assert_same_nested(t.item(), expected, "t.item()")
    expect("float(t)", float(t), float(expected), "the one element as a float")
    expect("type of float(t)", type(float(t)).__name__, "float")


TOBYTES_DTYPES = [np.float64, np.float32, np.int64, np.int32, np.bool_]


@pytest.mark.provided
@pytest.mark.parametrize("dtype", TOBYTES_DTYPES, ids=lambda d: np.dtype(d).name)
def test_tobytes_of_a_transposed_tensor_equals_numpy(dtype):
    """tobytes() of a non-contiguous tensor is NumPy's tobytes() of the same values and
    dtype: the row-major bytes of the elements."""
    buffer = (np.arange(12) % 5 - 2).astype(dtype)
    layout = Layout((4, 3), (1, 4), 0)
    t = make_tensor(buffer, layout)
    expected = numpy_view(buffer, layout).tobytes()
    expect("t.tobytes()", t.tobytes(), expected, "the row-major bytes, as NumPy's tobytes()")


@pytest.mark.provided
@given(any_case, st.sampled_from(TOBYTES_DTYPES))
@example(EXAMPLE_CASE, np.float32)
def test_tobytes_equals_numpy_on_any_layout(case, dtype):
    """tobytes() equals NumPy's tobytes() of the same view for any layout and dtype."""
    buffer = case.buffer.astype(dtype)
    t = make_tensor(buffer, case.layout)
    expected = numpy_view(buffer, case.layout).tobytes()
    expect("t.tobytes()", t.tobytes(), expected, "the row-major bytes, as NumPy's tobytes()")


@pytest.mark.provided
def test_tobytes_of_a_contiguous_slice_holds_only_its_elements():
    """A contiguous view that starts at storage offset 2 and reads 3 of 8 elements gives the
    bytes of those 3 elements only."""
    buffer = np.arange(8.0)
    layout = Layout((3,), (1,), 2)
    expected = numpy_view(buffer, layout).tobytes()
    got = make_tensor(buffer, layout).tobytes()
    expect("tobytes() of 3 elements from storage offset 2", got, expected, "those 3 only")
    empty = Layout((0, 2), (2, 1), 0)
    got = make_tensor(buffer, empty).tobytes()
    expect("tobytes() of a (0, 2) tensor", got, b"", "no elements, no bytes")


# ---------------------------------------------------------------------------------------------
# The printer (4.4)
# ---------------------------------------------------------------------------------------------


@pytest.mark.provided
@given(any_case)
@example(EXAMPLE_CASE)
def test_repr_shows_heading_and_grid_on_any_layout(case):
    """repr() is the heading `Tenxor of shape ..., dtype ...` and the grid of the elements,
    with equal-width right-aligned cells, read through any layout."""
    rule = "a heading, then the grid of right-aligned equal-width cells"
    expect("repr(t)", repr(case.tensor()), expected_repr(case.array), rule)


@pytest.mark.provided
@given(any_case, st.integers(0, 6))
@example(EXAMPLE_CASE, 2)
def test_tensor_to_string_matches_the_independent_grid(case, precision):
    """tensor_to_string() without dims prints every element, floats with `precision`
    decimals."""
    text = tenxor.tensor_to_string(case.tensor(), precision=precision)
    rule = f"floats with {precision} decimals, cells right-aligned to equal width"
    expect(
        f"tensor_to_string(t, precision={precision})",
        text,
        expected_grid(case.array, precision),
        rule,
    )


@pytest.mark.provided
def test_print_small_examples_literally():
    """Tiny grids whose text is right by definition: alignment, decimals, separators."""
    ints = make_tensor(np.array([1, -20, 300, 4]), Layout((2, 2), (2, 1)))
    rule = "cells right-aligned to the widest"
    expect(
        "tensor_to_string of [[1, -20], [300, 4]]",
        tenxor.tensor_to_string(ints),
        "  1  -20\n300    4",
        rule,
    )
    floats = make_tensor(np.array([0.5, -12.0]), Layout((2,), (1,)))
    expect(
        "tensor_to_string of [0.5, -12.0]",
        tenxor.tensor_to_string(floats),
        "  0.5000  -12.0000",
        "4 decimals by default, right-aligned",
    )
    cube = make_tensor(np.arange(8), Layout((2, 2, 2), (4, 2, 1)))
    expect(
        "tensor_to_string of arange(8) as (2, 2, 2)",
        tenxor.tensor_to_string(cube),
        "0  1\n2  3\n---\n4  5\n6  7",
        "--- between matrices",
    )
    four = make_tensor(np.arange(4), Layout((2, 2, 1, 1), (2, 1, 1, 1)))
    expect(
        "tensor_to_string of arange(4) as (2, 2, 1, 1)",
        tenxor.tensor_to_string(four),
        "0\n---\n1\n===\n2\n---\n3",
        "=== between 3-d blocks",
    )
    flags = make_tensor(np.array([True, False]), Layout((2,), (1,)))
    expect(
        "repr of [True, False]",
        repr(flags),
        "Tenxor of shape (2,), dtype bool\n True  False",
        "the heading, then the grid",
    )


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
    rule = "--- between matrices, === between 3-d blocks, *** 4-d, ### higher"
    expect(f"tensor_to_string of a {shape} tensor", text, expected_grid(expected), rule)
    present = [line in text.splitlines() for line in SEPARATORS]
    what = "which of ---, ===, ***, ### the grid has"
    expect(what, present, separators_expected(shape), "a block separates its sub-blocks")


@pytest.mark.provided
def test_repr_of_a_large_tensor_counts_its_elements():
    """Above 1000 elements repr() says how many there are instead of printing them; at 1000
    it still prints them."""
    big = make_tensor(np.zeros(1001), Layout((11, 91), (91, 1)))
    rule = "above 1000 elements, how many there are instead of the grid"
    expect("repr of an (11, 91) tensor", repr(big), expected_repr(np.zeros((11, 91))), rule)
    second = repr(big).splitlines()[1:2]
    counted = ["(1001 elements: print a slice of it with tprint)"]
    expect("second line of repr of an (11, 91) tensor", second, counted, rule)
    edge = make_tensor(np.zeros(1000), Layout((10, 100), (100, 1)))
    rule = "1000 elements are still printed"
    expect("repr of a (10, 100) tensor", repr(edge), expected_repr(np.zeros((10, 100))), rule)
    lines = len(repr(edge).splitlines())
    expect("lines in repr of a (10, 100) tensor", lines, 11, "a heading and 10 rows")


@pytest.mark.provided
def test_printing_a_tensor_with_no_elements():
    """A tensor with a size-0 dim prints `(no elements)`."""
    t = make_tensor(np.arange(3.0), Layout((2, 0, 3), (0, 3, 1), 1))
    rule = "a tensor with a size-0 dim prints (no elements)"
    expected = "Tenxor of shape (2, 0, 3), dtype float64\n(no elements)"
    expect("repr of a (2, 0, 3) tensor", repr(t), expected, rule)
    expect(
        "tensor_to_string of a (2, 0, 3) tensor", tenxor.tensor_to_string(t), "(no elements)", rule
    )


@pytest.mark.provided
def test_tprint_prints_the_grid(capsys):
    """tprint(t) writes tensor_to_string(t) and a newline to stdout."""
    expected = np.arange(12.0).reshape(2, 3, 2) / 3
    t = column_major_tensor(expected)
    tenxor.tprint(t)
    tenxor.tprint(t, precision=1)
    printed = capsys.readouterr().out
    expected_text = expected_grid(expected) + "\n" + expected_grid(expected, 1) + "\n"
    rule = "tensor_to_string(t) and a newline, for each call"
    expect("what tprint(t) and tprint(t, precision=1) printed", printed, expected_text, rule)


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
    rule = "None keeps a dim, an int keeps one position of it"
    text = tenxor.tensor_to_string(t, dims)
    expect(f"tensor_to_string(t, {dims})", text, expected_grid(expected[key]), rule)
    tenxor.tprint(t, dims, precision=2)
    printed = capsys.readouterr().out
    what = f"what tprint(t, {dims}, precision=2) printed"
    expect(what, printed, expected_grid(expected[key], 2) + "\n", rule)
