"""Chapter 4: broadcasting, expand, the offset walk and the elementwise kernels.

Every expected value comes from NumPy: `np.broadcast_shapes`, `np.broadcast_to`, and NumPy's
own elementwise operations on the arrays that the generated layouts describe.
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Iterator

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tenxor
from tenxor.broadcasting import (
    broadcast_shapes,
    expand_layout,
    map_values,
    read_values,
    walk_offsets,
    zip_values,
)
from tenxor.strides import Layout
from tests.support import (
    Case,
    assert_same,
    at_most_examples,
    broadcastable_shapes,
    cases,
    compact,
    contiguous_case,
    from_numpy,
    layouts,
    numpy_view,
    raises_naming,
    sizes,
    storage_shared,
    strided,
    to_numpy,
    value_pattern,
)

# ---------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------


def clashing_shapes(shapes: list[tuple[int, ...]]) -> list[tuple[int, ...]]:
    """The shapes whose sizes (other than 1) first disagree, scanning dims from the right."""
    for position in range(1, max(len(shape) for shape in shapes) + 1):
        present = [s for s in shapes if len(s) >= position and s[-position] != 1]
        if len({s[-position] for s in present}) > 1:
            return present
    raise AssertionError(f"shapes {shapes} broadcast")


@st.composite
def operand_pairs(draw: st.DrawFn, kind_a: str = "float", kind_b: str = "float"):
    """Two Cases with independently drawn layouts whose shapes broadcast together."""
    shape_a, shape_b = draw(broadcastable_shapes(2))
    return draw(cases(shape=shape_a, kind=kind_a)), draw(cases(shape=shape_b, kind=kind_b))


def as_float_case(case: Case) -> Case:
    """The same layout over a float64 copy of the buffer (integer values: many zeros)."""
    return Case(case.buffer.astype(np.float64), case.layout)


def numpy_result(op, x, y):
    """NumPy's answer for `op(x, y)` as an array, or the exception NumPy raises."""
    with np.errstate(all="ignore"):
        try:
            return np.asarray(op(x, y))
        except (TypeError, ValueError) as error:
            return error


def describe(operand) -> str:
    """A tensor's dtype name, or a Python number's repr."""
    return operand.dtype.name if isinstance(operand, tenxor.Tenxor) else repr(operand)


def check_binary(op, x, y, x_numpy, y_numpy, exact: bool = True) -> None:
    """`op(x, y)` (tensors or Python numbers) has the dtype and values NumPy gives for
    `op(x_numpy, y_numpy)`, or raises the same type of error as NumPy."""
    expected = numpy_result(op, x_numpy, y_numpy)
    if isinstance(expected, Exception):
        with pytest.raises(type(expected)):
            op(x, y)
        return
    result = op(x, y)
    for operand in (x, y):
        assert not (isinstance(operand, tenxor.Tenxor) and storage_shared(result, operand))
    described = f"{describe(x)} {op.__name__} {describe(y)}"
    assert result.dtype.name == expected.dtype.name, f"dtype of {described}"
    assert_same(result, expected, exact)


BINARY_OPS = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": operator.truediv,
    "**": operator.pow,
}
LOGICAL = {"&": operator.and_, "|": operator.or_, "^": operator.xor}
COMPARISONS = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "==": operator.eq,
    "!=": operator.ne,
}


# ---------------------------------------------------------------------------------------------
# 4.1 broadcast_shapes
# ---------------------------------------------------------------------------------------------

any_shapes = st.lists(st.lists(st.integers(0, 3), max_size=5).map(tuple), max_size=5)


@pytest.mark.exercise("4.1")
@given(st.integers(0, 5).flatmap(lambda count: broadcastable_shapes(count)))
def test_broadcast_shapes_of_compatible_shapes_matches_numpy(shapes):
    """Any number of compatible shapes (none, 0-d, size-0 dims) give NumPy's shape."""
    result = broadcast_shapes(*shapes)
    assert isinstance(result, tuple)
    assert result == np.broadcast_shapes(*shapes)


@pytest.mark.exercise("4.1")
@given(any_shapes)
def test_broadcast_shapes_raises_exactly_when_numpy_does(shapes):
    """Arbitrary small shapes: the same shape as NumPy, or, where NumPy errs, a ValueError
    naming a shape that clashes."""
    try:
        expected = np.broadcast_shapes(*shapes)
    except ValueError:
        with pytest.raises(ValueError) as info:
            broadcast_shapes(*shapes)
        message = str(info.value)
        clashing = clashing_shapes(shapes)
        assert any(re.search(value_pattern(shape), message) for shape in clashing), (
            f"the message names none of the clashing shapes {clashing}: {message!r}"
        )
    else:
        assert broadcast_shapes(*shapes) == expected


@pytest.mark.exercise("4.1")
@pytest.mark.parametrize(
    "shapes",
    [
        [],
        [()],
        [(), ()],
        [(3,)],
        [(3,), (2, 3)],
        [(2, 1), (1, 3)],
        [(4, 1, 3), (5, 1)],
        [(1,), (0,)],
        [(0, 1), (1, 4)],
        [(2, 1, 1), (1, 3, 1), (1, 1, 4)],
        [(5, 1, 4, 1, 2), (3, 4, 1, 1), (1, 2), ()],
    ],
    ids=compact,
)
def test_broadcast_shapes_examples(shapes):
    """Shapes line up from the right; 1 stretches, 0 does not; a list is accepted too."""
    assert broadcast_shapes(*shapes) == np.broadcast_shapes(*shapes)
    assert broadcast_shapes(*[list(shape) for shape in shapes]) == np.broadcast_shapes(*shapes)


@pytest.mark.exercise("4.1")
@pytest.mark.parametrize(
    "shapes",
    [
        [(2, 3), (4,)],
        [(3,), (2, 4)],
        [(0,), (2,)],
        [(2,), (0,)],
        [(2, 1), (3, 1, 1), (4, 5)],
        [(5, 1, 4), (3, 1), (2, 4)],
    ],
    ids=compact,
)
def test_broadcast_shapes_rejects_incompatible_shapes_naming_them(shapes):
    """A mismatch is a ValueError whose message names the shapes that clash."""
    with pytest.raises(ValueError):
        np.broadcast_shapes(*shapes)
    clashing = shapes[-2:]
    with raises_naming(ValueError, *clashing):
        broadcast_shapes(*shapes)


# ---------------------------------------------------------------------------------------------
# 4.2 expand_layout
# ---------------------------------------------------------------------------------------------


@st.composite
def expansions(draw: st.DrawFn):
    """A Case and a shape it can expand to: up to two new leading dims, size-1 dims stretched."""
    case = draw(cases(max_dims=4))
    new = tuple(draw(st.lists(sizes, max_size=5 - case.layout.ndim).map(tuple)))
    stretched = tuple(
        draw(sizes) if size == 1 and draw(st.booleans()) else size for size in case.layout.shape
    )
    return case, new + stretched


@pytest.mark.exercise("4.2")
@given(expansions())
def test_expand_layout_matches_numpy_broadcast_to(drawn):
    """Shape, strides (stride 0 on new and stretched dims), offset and values of the view."""
    case, target = drawn
    expected = np.broadcast_to(strided(case.buffer, case.layout), target)
    result = expand_layout(case.layout, target)
    assert result.shape == target
    assert result.offset == case.layout.offset
    extra = len(target) - case.layout.ndim
    for dim, size in enumerate(target):
        if size != 1:
            assert result.strides[dim] == expected.strides[dim] // case.buffer.itemsize, dim
        if dim < extra or (case.layout.shape[dim - extra] == 1 and size != 1):
            assert result.strides[dim] == 0, f"dim {dim} is new or stretched"
    np.testing.assert_array_equal(numpy_view(case.buffer, result), expected)


@pytest.mark.exercise("4.2")
@given(expansions())
def test_tensor_expand_is_a_view_sharing_storage(drawn):
    """`expand`, `broadcast_to` and `tenxor.broadcast_to` return views over the same storage."""
    case, target = drawn
    t = case.tensor()
    expected = np.broadcast_to(case.array, target)
    results = [t.expand(target), t.broadcast_to(target), tenxor.broadcast_to(t, target)]
    if target:
        results.append(t.expand(*target))
    for result in results:
        assert storage_shared(result, t)
        assert result.offset == t.offset
        assert_same(result, expected)


@pytest.mark.exercise("4.2")
@given(cases(max_dims=4), st.lists(st.integers(0, 3), max_size=5).map(tuple))
def test_expand_layout_raises_exactly_when_numpy_does(case, target):
    """Random targets: NumPy's view where it exists, else a ValueError naming both shapes."""
    try:
        expected = np.broadcast_to(strided(case.buffer, case.layout), target)
    except ValueError:
        with raises_naming(ValueError, case.layout.shape, target):
            expand_layout(case.layout, target)
    else:
        np.testing.assert_array_equal(
            numpy_view(case.buffer, expand_layout(case.layout, target)), expected
        )


@pytest.mark.exercise("4.2")
def test_expand_a_column_repeats_one_storage_element_per_row():
    """(3, 1) with an offset and stride 2 expanded to (2, 3, 4): rows read one element each."""
    buffer = np.arange(10.0)
    layout = Layout((3, 1), (2, 5), 3)
    result = expand_layout(layout, (2, 3, 4))
    assert result == Layout((2, 3, 4), (0, 2, 0), 3)
    expected = np.broadcast_to(numpy_view(buffer, layout), (2, 3, 4))
    np.testing.assert_array_equal(numpy_view(buffer, result), expected)


@pytest.mark.exercise("4.2")
@pytest.mark.parametrize(
    "shape, target",
    [((2, 3), (2, 4)), ((2, 3), (3,)), ((3,), (3, 2)), ((0,), (1,)), ((2, 1), (4, 1)), ((1,), ())],
    ids=compact,
)
def test_expand_rejects_bad_targets_naming_both_shapes(shape, target):
    """A dim that is neither equal nor 1, or too few target dims: ValueError naming shapes."""
    with pytest.raises(ValueError):
        np.broadcast_to(np.zeros(shape), target)
    layout = Layout(shape, tuple(range(len(shape))))
    with raises_naming(ValueError, shape, target):
        expand_layout(layout, target)


# ---------------------------------------------------------------------------------------------
# 4.3 walk_offsets
# ---------------------------------------------------------------------------------------------


@pytest.mark.exercise("4.3")
@given(layouts())
def test_walk_offsets_matches_numpy_row_major_order(drawn):
    """Over a buffer whose values are their offsets, the walk equals NumPy's ravel()."""
    layout, size = drawn
    walked = walk_offsets(layout)
    assert isinstance(walked, Iterator), "walk_offsets must return an iterator (a generator)"
    offsets = list(walked)
    assert all(isinstance(o, int) and not isinstance(o, bool) for o in offsets)
    assert offsets == numpy_view(np.arange(size), layout).ravel().tolist()


@pytest.mark.exercise("4.3")
@pytest.mark.parametrize(
    "layout",
    [
        Layout((), (), 3),
        Layout((4,), (1,), 2),
        Layout((4,), (-2,), 7),
        Layout((2, 3), (1, 2), 5),
        Layout((2, 3), (3, 1), 0),
        Layout((3, 2), (0, 1), 1),
        Layout((2, 0, 3), (1, 1, 1), 0),
        Layout((2, 2, 2), (-4, 2, -1), 6),
        Layout((1, 3, 1), (9, -3, 9), 6),
    ],
    ids=compact,
)
def test_walk_offsets_examples(layout):
    """Column-major, negative, zero and gap strides, an offset, 0-d and empty layouts."""
    size = 12
    assert list(walk_offsets(layout)) == numpy_view(np.arange(size), layout).ravel().tolist()


# ---------------------------------------------------------------------------------------------
# 4.4 read_values
# ---------------------------------------------------------------------------------------------


@pytest.mark.exercise("4.4")
@pytest.mark.parametrize("kind", ["float", "int", "bool"])
@given(data=st.data())
def test_read_values_matches_numpy_ravel(kind, data):
    """All layouts (negative, zero and gap strides, offsets, 0-d, size 0): ravel() order."""
    case = data.draw(cases(kind=kind))
    expected = case.array.ravel().tolist()
    result = read_values(case.buffer.tolist(), case.layout)
    assert isinstance(result, list)
    assert result == expected
    assert read_values(case.tensor().storage.values(), case.layout) == expected


@pytest.mark.provided  # tensors read their elements with provided code (tenxor/row_major.py)
@given(cases())
def test_tensor_values_and_tolist_read_through_the_layout(case):
    """`values()` is the row-major list and `tolist()` the nested lists NumPy gives."""
    t = case.tensor()
    assert t.values() == case.array.ravel().tolist()
    assert t.tolist() == case.array.tolist()


@st.composite
def empty_layouts(draw: st.DrawFn) -> Layout:
    """A layout with a size-0 dim somewhere and any strides (zero included)."""
    shape = draw(st.lists(sizes, min_size=1, max_size=5))
    shape[draw(st.integers(0, len(shape) - 1))] = 0
    return draw(layouts(shape=tuple(shape)))[0]


@pytest.mark.exercise("4.4")
@given(empty_layouts())
def test_read_values_of_an_empty_layout_over_an_empty_buffer(layout):
    """A layout with no elements reads nothing, whatever its strides, even from an empty
    buffer (NumPy gives empty arrays all-zero strides)."""
    expected = numpy_view(np.zeros(0), layout).ravel().tolist()
    assert read_values([], layout) == expected
    assert list(walk_offsets(layout)) == expected


@pytest.mark.exercise("4.4")
def test_read_values_of_a_reversed_row_that_ends_at_offset_zero():
    """A negative stride whose last element is storage offset 0 (a slice stop of -1 trap)."""
    buffer = np.arange(6.0)
    for layout in [Layout((3,), (-1,), 2), Layout((2, 3), (-3, -1), 5), Layout((3,), (-2,), 4)]:
        expected = numpy_view(buffer, layout).ravel().tolist()
        assert read_values(buffer.tolist(), layout) == expected


# ---------------------------------------------------------------------------------------------
# 4.5 map_values and the unary tensor methods
# ---------------------------------------------------------------------------------------------


@pytest.mark.exercise("4.5")
@given(cases())
def test_map_values_applies_fn_to_each_element_in_row_major_order(case):
    """One call per element (stride-0 repeats included), results in ravel() order."""
    calls = []

    def tag(x):
        calls.append(x)
        return ("seen", x)

    result = map_values(tag, case.buffer.tolist(), case.layout)
    expected = case.array.ravel().tolist()
    assert isinstance(result, list)
    assert result == [("seen", x) for x in expected]
    assert calls == expected


@pytest.mark.exercise("4.5")
@given(cases())
def test_tensor_map_makes_a_new_tensor(case):
    """`t.map(fn)` has t's shape and dtype, new storage, and fn of every element."""
    t = case.tensor()
    result = t.map(lambda x: 2 * x - 1)
    assert result.dtype is t.dtype
    assert not storage_shared(result, t)
    assert_same(result, 2 * case.array - 1)


def float32_case(case: Case) -> Case:
    """The same layout over a float32 copy of the buffer."""
    return Case(case.buffer.astype(np.float32), case.layout)


UNARY = {
    "exp": (lambda t: t.exp(), np.exp),
    "tenxor.exp": (tenxor.exp, np.exp),
    "log": (lambda t: t.log(), np.log),
    "tenxor.log": (tenxor.log, np.log),
    "relu": (lambda t: t.relu(), lambda a: np.maximum(a, 0)),
    "tenxor.relu": (tenxor.relu, lambda a: np.maximum(a, 0)),
    "leaky_relu": (lambda t: t.leaky_relu(), lambda a: np.where(a > 0, a, 0.01 * a)),
    "leaky_relu(0.2)": (lambda t: t.leaky_relu(0.2), lambda a: np.where(a > 0, a, 0.2 * a)),
    "tenxor.leaky_relu(3)": (
        lambda t: tenxor.leaky_relu(t, 3.0),
        lambda a: np.where(a > 0, a, 3.0 * a),
    ),
    "neg": (operator.neg, operator.neg),
}


@pytest.mark.exercise("4.5")
@pytest.mark.parametrize("name", list(UNARY))
@at_most_examples(50)
@given(data=st.data())
def test_unary_methods_match_numpy(name, data):
    """exp, log, relu, leaky_relu and unary minus: NumPy's values and dtype (int -> float64
    for exp/log/leaky_relu, float32 stays float32), -inf/nan from log of 0/negatives."""
    method, reference = UNARY[name]
    kind = data.draw(st.sampled_from(["float64", "float32", "int64", "int-valued float64"]))
    case = data.draw(cases(kind="int" if kind.startswith("int") else "float"))
    if kind == "float32":
        case = float32_case(case)
    elif kind == "int-valued float64":
        case = as_float_case(case)
    elif name.startswith(("exp", "tenxor.exp")):
        case = Case(case.buffer * 40, case.layout)  # large enough to overflow to inf
    with np.errstate(all="ignore"):
        expected = np.asarray(reference(case.array))
    result = method(case.tensor())
    assert result.dtype.name == expected.dtype.name
    result_values = to_numpy(result)
    assert result_values.shape == expected.shape
    rtol = 1e-6 if kind == "float32" else 1e-12
    np.testing.assert_allclose(result_values, expected, rtol=rtol, atol=0, equal_nan=True)


@pytest.mark.exercise("4.5")
def test_log_of_zero_and_negatives_gives_minus_inf_and_nan():
    """log(0) = -inf and log(x < 0) = nan, as in NumPy, for float and int tensors."""
    values = np.array([[0.0, -1.0, 1.0], [np.e, -0.0, 0.5]])
    with np.errstate(all="ignore"):
        expected = np.log(values)
        assert_same(from_numpy(values).log(), expected)
        ints = np.array([0, -3, 1, 7])
        assert_same(from_numpy(ints).log(), np.log(ints), exact=False)


@pytest.mark.exercise("4.5")
@given(cases(kind="bool"))
def test_invert_is_logical_not_on_bool_tensors(case):
    """`~t` on a bool tensor is elementwise not."""
    result = ~case.tensor()
    assert result.dtype is tenxor.bool
    assert_same(result, ~case.array)


@pytest.mark.exercise("4.5")
def test_unary_operations_reject_bool_and_non_bool_inputs_naming_the_dtype():
    """Unary minus works on floats and `~` on bools; unary minus of a bool tensor and `~` of
    a float tensor are TypeErrors, as in NumPy."""
    flags = from_numpy(np.array([True, False]))
    assert_same(-from_numpy(np.array([1.5, -2.0])), np.array([-1.5, 2.0]))
    assert_same(~flags, np.array([False, True]))
    with pytest.raises(TypeError):
        _ = -np.array([True, False])
    with raises_naming(TypeError, "bool"):
        _ = -flags
    with pytest.raises(TypeError):
        _ = ~np.array([1.5])
    with raises_naming(TypeError, "float64"):
        _ = ~from_numpy(np.array([1.5]))


CONVERSIONS = [
    ("float", "int64"),
    ("float", "int32"),
    ("float", "float32"),
    ("float", "bool"),
    ("int", "float64"),
    ("int", "float32"),
    ("int", "bool"),
    ("bool", "int64"),
    ("bool", "float64"),
    ("int", "int64"),
]


@pytest.mark.exercise("4.5")
@pytest.mark.parametrize("kind, target", CONVERSIONS, ids=[f"{k}-{t}" for k, t in CONVERSIONS])
@at_most_examples(50)
@given(data=st.data())
def test_to_dtype_matches_numpy_astype(kind, target, data):
    """`to(dtype)` (a DType or its name) is a copy like NumPy's astype: floats truncate
    toward zero, nonzero is True, float64 rounds to float32."""
    case = data.draw(cases(kind=kind))
    t = case.tensor()
    expected = case.array.astype(np.dtype(target))
    for result in (t.to(target), t.to(tenxor.DTYPES[target])):
        assert result.dtype is tenxor.DTYPES[target]
        assert not storage_shared(result, t)
        assert_same(result, expected)


@pytest.mark.exercise("4.5")
@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan])
def test_to_int_rejects_non_finite_floats_naming_the_value(value):
    """inf and nan have no integer value: a ValueError that names the value."""
    t = from_numpy(np.array([1.0, value]))
    with raises_naming(ValueError, value):
        t.to("int64")


# ---------------------------------------------------------------------------------------------
# 4.6 zip_values, operators, comparisons and where
# ---------------------------------------------------------------------------------------------


@pytest.mark.exercise("4.6")
@given(operand_pairs())
def test_zip_values_pairs_broadcast_elements_in_row_major_order(pair):
    """The broadcast shape and fn(a, b) for each pair NumPy's broadcasting lines up."""
    a, b = pair
    shape, values = zip_values(
        lambda x, y: (x, y), a.buffer.tolist(), a.layout, b.buffer.tolist(), b.layout
    )
    left, right = np.broadcast_arrays(a.array, b.array)
    assert shape == left.shape
    assert values == list(zip(left.ravel().tolist(), right.ravel().tolist()))


@pytest.mark.exercise("4.6")
@given(operand_pairs())
def test_zip_values_keeps_operand_order(pair):
    """fn receives the element of a first: a - b, not b - a."""
    a, b = pair
    shape, values = zip_values(
        operator.sub, a.buffer.tolist(), a.layout, b.buffer.tolist(), b.layout
    )
    expected = a.array - b.array
    assert shape == expected.shape
    np.testing.assert_array_equal(np.array(values, dtype=np.float64).reshape(shape), expected)


@pytest.mark.exercise("4.6")
@pytest.mark.parametrize(
    "shape_a, shape_b",
    [((2, 3), (4,)), ((3,), (3, 2)), ((2, 0), (2, 2)), ((4, 1, 3), (2, 3, 1, 2))],
)
def test_zip_values_rejects_shapes_that_do_not_broadcast(shape_a, shape_b):
    """Shapes that NumPy cannot broadcast raise a ValueError naming both shapes."""
    with pytest.raises(ValueError):
        np.broadcast_shapes(shape_a, shape_b)
    a, b = contiguous_case(np.zeros(shape_a)), contiguous_case(np.zeros(shape_b))
    with raises_naming(ValueError, shape_a, shape_b):
        zip_values(operator.add, a.buffer.tolist(), a.layout, b.buffer.tolist(), b.layout)
    with raises_naming(ValueError, shape_a, shape_b):
        a.tensor() + b.tensor()


ALL_OPS = {**BINARY_OPS, **COMPARISONS}


@pytest.mark.exercise("4.6")
@pytest.mark.parametrize("name", list(ALL_OPS))
@at_most_examples(50)
@given(pair=operand_pairs())
def test_float_operators_broadcast_like_numpy(name, pair):
    """+ - * / ** and comparisons between two broadcast float64 layouts."""
    a, b = pair
    check_binary(ALL_OPS[name], a.tensor(), b.tensor(), a.array, b.array, exact=name != "**")


@pytest.mark.exercise("4.6")
@pytest.mark.parametrize("name", ["+", "-", "*", "/"] + list(COMPARISONS))
@at_most_examples(50)
@given(pair=operand_pairs(kind_a="int", kind_b="int"))
def test_int_operators_broadcast_like_numpy(name, pair):
    """int64 with int64: + - * stay int64, / gives float64 (inf/nan for a zero divisor),
    comparisons give bool; equal values are common, so < and <= differ."""
    a, b = pair
    check_binary(ALL_OPS[name], a.tensor(), b.tensor(), a.array, b.array)


@pytest.mark.exercise("4.6")
@given(pair=operand_pairs(kind_a="int", kind_b="int"))
def test_int_power_with_small_exponents_stays_int(pair):
    """int64 ** non-negative int64 is exact and int64."""
    a, b = pair
    exponents = Case(np.abs(b.buffer) % 4, b.layout)
    check_binary(operator.pow, a.tensor(), exponents.tensor(), a.array, exponents.array)


@pytest.mark.exercise("4.6")
@pytest.mark.parametrize("name", list(ALL_OPS))
@at_most_examples(50)
@given(case=cases(), scalar=st.sampled_from([2, -3, 0, 0.5, -1.5, 0.0, -0.0]))
def test_python_scalars_on_either_side_of_a_float_tensor(name, case, scalar):
    """t op scalar and scalar op t: NumPy's values, float64 results (bool for comparisons)."""
    op, t, exact = ALL_OPS[name], case.tensor(), name != "**"
    check_binary(op, t, scalar, case.array, scalar, exact)
    check_binary(op, scalar, t, scalar, case.array, exact)


@pytest.mark.exercise("4.6")
@pytest.mark.parametrize("name", list(ALL_OPS))
@at_most_examples(50)
@given(case=cases(kind="int"), scalar=st.sampled_from([2, -3, 0, 0.5, -1.5]))
def test_python_scalars_on_either_side_of_an_int_tensor(name, case, scalar):
    """An int scalar keeps int64, a float scalar gives float64, / always gives float64;
    an integer to a negative integer power is a ValueError as in NumPy."""
    op, t = ALL_OPS[name], case.tensor()
    exact = not (name == "**" and isinstance(scalar, float))
    check_binary(op, t, scalar, case.array, scalar, exact)
    check_binary(op, scalar, t, scalar, case.array, exact)


DTYPE_NAMES = ["bool", "int32", "int64", "float32", "float64"]
DTYPE_OPS = {name: op for name, op in ALL_OPS.items() if name != "**"}


@pytest.mark.exercise("4.6")
@pytest.mark.parametrize("dtype_b", DTYPE_NAMES)
@pytest.mark.parametrize("dtype_a", DTYPE_NAMES)
def test_result_dtype_of_two_tensors_follows_the_pytorch_rule(dtype_a, dtype_b):
    """The result dtype of mixing two tensors: the wider of two ints or of two floats, and for
    an int/float mix the float's dtype (PyTorch's rule: int64 with float32 gives float32, where
    NumPy would widen to float64); float64 for / of ints and bools, bool for comparisons.
    The oracle is NumPy after casting an int operand to its float partner's dtype."""
    x = np.array([[1], [0], [3]]).astype(dtype_a)
    y = np.array([2, 1]).astype(dtype_b)
    x_numpy, y_numpy = x, y
    if x.dtype.kind in "biu" and y.dtype.kind == "f":
        x_numpy = x.astype(y.dtype)
    if y.dtype.kind in "biu" and x.dtype.kind == "f":
        y_numpy = y.astype(x.dtype)
    for op in DTYPE_OPS.values():
        check_binary(op, from_numpy(x), from_numpy(y), x_numpy, y_numpy)


@pytest.mark.exercise("4.6")
@pytest.mark.parametrize("scalar", [2, 2.5], ids=repr)
@pytest.mark.parametrize("dtype", DTYPE_NAMES)
def test_result_dtype_with_a_python_scalar_follows_numpy(dtype, scalar):
    """A Python scalar takes the tensor's dtype unless it is a wider kind: float32 stays
    float32 with 2 and 2.5, int32 stays int32 with 2, an int tensor with 2.5 gives float64."""
    x = np.array([[1], [0], [3]]).astype(dtype)
    for op in DTYPE_OPS.values():
        check_binary(op, from_numpy(x), scalar, x, scalar)
        check_binary(op, scalar, from_numpy(x), scalar, x)


@pytest.mark.exercise("4.6")
def test_float32_tensors_with_python_floats_round_like_numpy():
    """float32 op Python float is computed and stored as float32, matching NumPy's values."""
    x = np.array([0.1, 1 / 3, -2.7, 1e-3], dtype=np.float32)
    for op in [operator.add, operator.sub, operator.mul, operator.truediv]:
        check_binary(op, from_numpy(x), 0.7, x, 0.7)
        check_binary(op, 0.7, from_numpy(x), 0.7, x)
        assert op(from_numpy(x), 0.7).dtype is tenxor.float32


@pytest.mark.exercise("4.6")
def test_division_by_zero_gives_inf_and_nan_like_numpy():
    """x / 0 is +-inf (by the signs of x and of the zero), 0 / 0 and nan / 0 are nan, for
    float and int tensors and Python scalar divisors or dividends."""
    numerators = np.array([1.0, -1.0, 0.0, -0.0, 2.5, math.inf, -math.inf, math.nan])[:, None]
    denominators = np.array([0.0, -0.0, 2.0, math.inf])
    ints = np.array([[-3], [0], [4]])
    with np.errstate(all="ignore"):
        checks = [
            (from_numpy(numerators) / from_numpy(denominators), numerators / denominators),
            (from_numpy(denominators) / from_numpy(numerators), denominators / numerators),
            (from_numpy(numerators) / 0, numerators / 0),
            (from_numpy(numerators) / -0.0, numerators / -0.0),
            (0 / from_numpy(numerators), 0 / numerators),
            (from_numpy(ints) / from_numpy(np.array([0, 2])), ints / np.array([0, 2])),
            (from_numpy(ints) / 0, ints / 0),
            (1 / from_numpy(ints), 1 / ints),
        ]
    for result, expected in checks:
        assert result.dtype is tenxor.float64
        assert_same(result, expected)
        numbers = ~np.isnan(expected)
        signs = np.signbit(to_numpy(result)[numbers])
        np.testing.assert_array_equal(signs, np.signbit(expected[numbers]))


@pytest.mark.exercise("4.6")
@given(operand_pairs())
def test_division_by_zero_on_broadcast_layouts(pair):
    """Integer-valued float layouts (zeros are common): / gives NumPy's inf and nan."""
    a, b = as_float_case(pair[0]), as_float_case(pair[1])
    expected = numpy_result(operator.truediv, a.array, b.array)
    assert_same(a.tensor() / b.tensor(), expected)


@pytest.mark.exercise("4.6")
@pytest.mark.parametrize("name", list(LOGICAL))
@at_most_examples(50)
@given(pair=operand_pairs(kind_a="bool", kind_b="bool"))
def test_bool_operators_broadcast_like_numpy(name, pair):
    """& | ^ between two broadcast bool layouts (or a bool tensor and a Python bool, on
    either side) are NumPy's logical and, or and xor, as in PyTorch."""
    a, b = pair
    check_binary(LOGICAL[name], a.tensor(), b.tensor(), a.array, b.array)
    check_binary(LOGICAL[name], True, b.tensor(), np.True_, b.array)
    check_binary(LOGICAL[name], a.tensor(), False, a.array, np.False_)


@pytest.mark.exercise("4.6")
def test_operators_reject_bad_operands_with_clear_errors():
    """bool - bool is a TypeError, an int to a negative int power a ValueError naming both,
    & | ^ of a tensor that is not bool a TypeError naming both dtypes."""
    flags = from_numpy(np.array([True, False]))
    with raises_naming(TypeError, "bool"):
        _ = flags - flags
    for combine in LOGICAL.values():
        with raises_naming(TypeError, "int64", "bool"):
            combine(from_numpy(np.array([1, 0])), flags)
        with raises_naming(TypeError, "float64"):
            combine(flags, 1.5)
    base = from_numpy(np.array([2, 3]))
    with raises_naming(ValueError, 2, -1):
        base ** from_numpy(np.array([-1, 2]))
    with raises_naming(ValueError, -2):
        _ = base**-2


@pytest.mark.exercise("4.6")
@given(data=st.data())
def test_where_picks_from_three_broadcast_operands(data):
    """where(c > 0, a, b) over three independently drawn broadcast layouts is np.where; an
    int64 b with a float64 a gives float64."""
    shape_c, shape_a, shape_b = data.draw(broadcastable_shapes(3))
    c = data.draw(cases(shape=shape_c))
    a = data.draw(cases(shape=shape_a))
    b = data.draw(cases(shape=shape_b, kind=data.draw(st.sampled_from(["float", "int"]))))
    expected = np.where(c.array > 0, a.array, b.array)
    result = tenxor.where(c.tensor() > 0, a.tensor(), b.tensor())
    assert result.dtype.name == expected.dtype.name
    assert_same(result, expected)
    assert_same(a.tensor().where(c.tensor() > 0, b.tensor()), expected)


@pytest.mark.exercise("4.6")
@given(operand_pairs())
def test_where_with_python_scalars(pair):
    """A Python number as either branch broadcasts like a 0-d tensor of the other's dtype."""
    c, a = pair
    condition = c.tensor() < 1.5
    picks = c.array < 1.5
    checks = [
        (tenxor.where(condition, a.tensor(), 0.0), np.where(picks, a.array, 0.0)),
        (tenxor.where(condition, -1.0, a.tensor()), np.where(picks, -1.0, a.array)),
        (tenxor.where(condition, 1, a.tensor()), np.where(picks, 1, a.array)),
        (a.tensor().where(condition, 7.5), np.where(picks, a.array, 7.5)),
    ]
    for result, expected in checks:
        assert result.dtype is tenxor.float64
        assert_same(result, expected)


@pytest.mark.exercise("4.6")
def test_where_rejects_shapes_that_do_not_broadcast():
    """A condition, a or b that does not broadcast is a ValueError naming the shapes."""
    condition = from_numpy(np.zeros((2, 3))) > 0
    with raises_naming(ValueError, (2, 3), (4,)):
        tenxor.where(condition, from_numpy(np.zeros(4)), 0.0)


@pytest.mark.exercise("4.6")
@at_most_examples(50)
@given(operand_pairs(kind_a="int", kind_b="float"))
def test_mixed_int_and_float_tensors_give_float64(pair):
    """int64 with float64 in either order: float64 and NumPy's values."""
    a, b = pair
    for op in [operator.add, operator.sub, operator.mul, operator.truediv]:
        for x, y, xa, ya in [(a, b, a.array, b.array), (b, a, b.array, a.array)]:
            result = op(x.tensor(), y.tensor())
            assert result.dtype is tenxor.float64
            assert_same(result, numpy_result(op, xa, ya))


@pytest.mark.exercise("4.6")
def test_operators_on_a_stride_zero_and_negative_stride_pair():
    """A (3, 1) column with stride 0 on its size-1 dim minus a reversed row with an offset."""
    column = Case(np.arange(10.0), Layout((3, 1), (3, 0), 1))
    row = Case(np.arange(10.0) * 10, Layout((4,), (-2,), 9))
    expected = column.array - row.array
    result = column.tensor() - row.tensor()
    assert result.shape == (3, 4)
    assert_same(result, expected)
    assert_same(row.tensor() - column.tensor(), row.array - column.array)


@pytest.mark.exercise("4.6")
@given(operand_pairs(kind_a="bool", kind_b="bool"))
def test_bool_tensors_compare_to_bool(pair):
    """Comparisons of bool tensors are elementwise and give bool tensors."""
    a, b = pair
    for op in COMPARISONS.values():
        result = op(a.tensor(), b.tensor())
        assert result.dtype is tenxor.bool
        assert_same(result, op(a.array, b.array))
