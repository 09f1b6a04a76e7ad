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
from hypothesis import example, given
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


def example_values(size: int, kind: str = "float") -> np.ndarray:
    """`size` values of `kind` for an explicit example: small, both signs, a few zeros."""
    values = np.arange(size) % 5 - 2
    return {"float": values * 1.5 + 0.25, "int": values, "bool": values > 0}[kind]


def example_case(kind: str = "float") -> Case:
    """A typical (2, 3) layout for an explicit example: column-major, storage offset 1."""
    return Case(example_values(8, kind), Layout((2, 3), (1, 2), 1))


def example_pair(kind_a: str = "float", kind_b: str = "float") -> tuple[Case, Case]:
    """A typical pair for an explicit example: a (2, 3, 1) column-major view with a storage
    offset and a reversed (4,) row with stride -2; they broadcast to (2, 3, 4)."""
    return (
        Case(example_values(8, kind_a), Layout((2, 3, 1), (1, 2, 0), 1)),
        Case(example_values(8, kind_b), Layout((4,), (-2,), 7)),
    )


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
    """A tensor as `<dtype> tensor`, or a Python number's repr."""
    if isinstance(operand, tenxor.Tenxor):
        return f"{operand.dtype.name} tensor"
    return repr(operand)


def check_binary(op, x, y, x_numpy, y_numpy, exact: bool = True, rule: str = "") -> None:
    """`op(x, y)` (tensors or Python numbers) has the dtype and values NumPy gives for
    `op(x_numpy, y_numpy)`, or raises the same type of error as NumPy. `rule` says how the
    expected dtype is chosen, where that is not plainly NumPy's."""
    expected = numpy_result(op, x_numpy, y_numpy)
    described = f"{describe(x)} {SYMBOLS.get(op, op.__name__)} {describe(y)}"
    if isinstance(expected, Exception):
        due = type(expected).__name__
        with raises_naming(type(expected), rule=f"NumPy raises {due} for {described}"):
            op(x, y)
        return
    result = op(x, y)
    for operand in (x, y):
        if isinstance(operand, tenxor.Tenxor):
            shared = storage_shared(result, operand)
            expect(f"{described} shares an operand's storage", shared, False, "a new tensor")
    expect(f"dtype of {described}", result.dtype.name, expected.dtype.name, rule or "NumPy's")
    assert_same(result, expected, exact, what=described, rule="NumPy's broadcasting")


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
SYMBOLS = {op: name for name, op in {**BINARY_OPS, **LOGICAL, **COMPARISONS}.items()}


# ---------------------------------------------------------------------------------------------
# 4.1 broadcast_shapes
# ---------------------------------------------------------------------------------------------

any_shapes = st.lists(st.lists(st.integers(0, 3), max_size=5).map(tuple), max_size=5)


@pytest.mark.exercise("4.1")
@given(st.integers(0, 5).flatmap(lambda count: broadcastable_shapes(count)))
@example([(2, 1, 3), (4, 3)])
def test_broadcast_shapes_of_compatible_shapes_matches_numpy(shapes):
    """Any number of compatible shapes (none, 0-d, size-0 dims) give NumPy's shape."""
    result = broadcast_shapes(*shapes)
    expect("type of the broadcast shape", type(result).__name__, "tuple")
    expect("broadcast shape", result, np.broadcast_shapes(*shapes), "NumPy's broadcasting")


@pytest.mark.exercise("4.1")
@given(any_shapes)
@example([(2, 3), (3, 2, 2)])
def test_broadcast_shapes_raises_exactly_when_numpy_does(shapes):
    """Arbitrary small shapes: the same shape as NumPy, or, where NumPy errs, a ValueError
    naming a shape that clashes."""
    try:
        expected = np.broadcast_shapes(*shapes)
    except ValueError:
        expected = None  # NumPy cannot broadcast them (checked outside this handler)
    if expected is not None:
        expect("broadcast shape", broadcast_shapes(*shapes), expected, "NumPy's broadcasting")
        return
    with raises_naming(ValueError, rule="NumPy cannot broadcast these shapes") as raised:
        broadcast_shapes(*shapes)
    message = str(raised.value)
    clashing = clashing_shapes(shapes)
    if not any(re.search(value_pattern(shape), message) for shape in clashing):
        named = " or ".join(str(shape) for shape in clashing)
        raise Mismatch(
            "the ValueError message",
            message,
            f"a message naming {named}",
            "an error names the shapes that clash",
        )


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
    expected = np.broadcast_shapes(*shapes)
    rule = "shapes line up from the right, 1 stretches"
    expect("broadcast shape", broadcast_shapes(*shapes), expected, rule)
    as_lists = [list(shape) for shape in shapes]
    expect("broadcast shape of the shapes as lists", broadcast_shapes(*as_lists), expected, rule)


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


# (2, 1, 3) column-major with a storage offset, expanded by a new dim and a stretched dim
EXPANSION = (Case(example_values(8), Layout((2, 1, 3), (1, 5, 2), 1)), (4, 2, 5, 3))
# the corner: a size-1 dim stretched to size 0 (NumPy allows it: 1 broadcasts to any size)
TO_SIZE_0 = (Case(example_values(8), Layout((2, 1), (3, 5), 1)), (2, 0))


@pytest.mark.exercise("4.2")
@given(expansions())
@example(EXPANSION)
@example(TO_SIZE_0)
def test_expand_layout_matches_numpy_broadcast_to(drawn):
    """Shape, strides (stride 0 on new and stretched dims), offset and values of the view."""
    case, target = drawn
    expected = np.broadcast_to(strided(case.buffer, case.layout), target)
    result = expand_layout(case.layout, target)
    expect("shape of the expanded layout", result.shape, target, "the target shape")
    offset = case.layout.offset
    expect("storage offset of the expanded layout", result.offset, offset, "expand moves nothing")
    extra = len(target) - case.layout.ndim
    due = []
    for dim, size in enumerate(target):
        if dim < extra or (case.layout.shape[dim - extra] == 1 and size != 1):
            due.append(0)
        elif size != 1:
            due.append(expected.strides[dim] // case.buffer.itemsize)
        else:  # a size-1 dim that stays size 1: any stride reads the same element
            due.append(result.strides[dim])
    rule = "an expanded dim (new or stretched) has stride 0, the others keep theirs"
    expect("strides of the expanded layout", result.strides, tuple(due), rule)
    expect(
        "elements read through the expanded layout",
        numpy_view(case.buffer, result),
        expected,
        "as np.broadcast_to",
    )


@pytest.mark.exercise("4.2")
@given(expansions())
@example(EXPANSION)
def test_tensor_expand_is_a_view_sharing_storage(drawn):
    """`expand`, `broadcast_to` and `tenxor.broadcast_to` return views over the same storage."""
    case, target = drawn
    expected = np.broadcast_to(case.array, target)
    t = case.tensor()
    results = {
        "t.expand(shape)": t.expand(target),
        "t.broadcast_to(shape)": t.broadcast_to(target),
        "tenxor.broadcast_to(t, shape)": tenxor.broadcast_to(t, target),
    }
    if target:
        results["t.expand(*shape)"] = t.expand(*target)
    for name, result in results.items():
        expect(f"{name} shares t's storage", storage_shared(result, t), True, "a view")
        expect(f"storage offset of {name}", result.offset, t.offset, "expand moves nothing")
        assert_same(result, expected, what=name, rule="as np.broadcast_to")


@pytest.mark.exercise("4.2")
@given(cases(max_dims=4), st.lists(st.integers(0, 3), max_size=5).map(tuple))
@example(*EXPANSION)
def test_expand_layout_raises_exactly_when_numpy_does(case, target):
    """Random targets: NumPy's view where it exists, else a ValueError naming both shapes."""
    try:
        expected = np.broadcast_to(strided(case.buffer, case.layout), target)
    except ValueError:
        expected = None  # NumPy cannot expand (checked outside this handler)
    if expected is None:
        with raises_naming(ValueError, case.layout.shape, target, rule="NumPy cannot expand"):
            expand_layout(case.layout, target)
        return
    expect(
        "elements read through the expanded layout",
        numpy_view(case.buffer, expand_layout(case.layout, target)),
        expected,
        "as np.broadcast_to",
    )


@pytest.mark.exercise("4.2")
def test_expand_a_column_repeats_one_storage_element_per_row():
    """(3, 1) with an offset and stride 2 expanded to (2, 3, 4): rows read one element each."""
    buffer = np.arange(10.0)
    layout = Layout((3, 1), (2, 5), 3)
    result = expand_layout(layout, (2, 3, 4))
    due = Layout((2, 3, 4), (0, 2, 0), 3)
    expect("expanded layout", result, due, "an expanded dim has stride 0, the others keep theirs")
    expected = np.broadcast_to(numpy_view(buffer, layout), (2, 3, 4))
    what = "elements read through the expanded layout"
    expect(what, numpy_view(buffer, result), expected, "as np.broadcast_to")


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
@example((Layout((2, 3), (1, 2), 1), 8))
def test_walk_offsets_matches_numpy_row_major_order(drawn):
    """Over a buffer whose values are their offsets, the walk equals NumPy's ravel()."""
    layout, size = drawn
    walked = walk_offsets(layout)
    if not isinstance(walked, Iterator):
        raise Mismatch(
            "what walk_offsets returned", walked, "an iterator", "walk_offsets is a generator"
        )
    offsets = list(walked)
    for offset in offsets:
        if not isinstance(offset, int) or isinstance(offset, bool):
            raise Mismatch("an offset walked", offset, "an int", "offsets are ints")
    expected = numpy_view(np.arange(size), layout).ravel().tolist()
    expect("offsets walked", offsets, expected, "row-major order, as NumPy's ravel()")


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
    expected = numpy_view(np.arange(size), layout).ravel().tolist()
    rule = "row-major order, as NumPy's ravel()"
    expect("offsets walked", list(walk_offsets(layout)), expected, rule)


# ---------------------------------------------------------------------------------------------
# 4.4 read_values
# ---------------------------------------------------------------------------------------------


@pytest.mark.exercise("4.4")
@given(st.sampled_from(["float", "int", "bool"]).flatmap(lambda kind: cases(kind=kind)))
@example(Case(example_values(8), Layout((2, 3), (1, 2), 1)))  # typical: column-major, offset
@example(Case(example_values(8, "int"), Layout((2, 2, 2), (4, 0, -1), 1)))  # stride 0, negative
@example(Case(example_values(8, "bool"), Layout((), (), 3)))  # the corners: 0-d, and size 0
@example(Case(example_values(8), Layout((2, 0, 3), (3, 3, 1), 0)))
def test_read_values_matches_numpy_ravel(case):
    """All layouts (negative, zero and gap strides, offsets, 0-d, size 0): ravel() order."""
    expected = case.array.ravel().tolist()
    result = read_values(case.buffer.tolist(), case.layout)
    expect("type of the values read", type(result).__name__, "list")
    rule = "row-major order, as NumPy's ravel()"
    expect("values read", result, expected, rule)
    from_storage = read_values(case.tensor().storage.values(), case.layout)
    expect("values read from a Storage's values()", from_storage, expected, rule)


@pytest.mark.provided  # tensors read their elements with provided code (tenxor/row_major.py)
@given(cases())
@example(example_case())
def test_tensor_values_and_tolist_read_through_the_layout(case):
    """`values()` is the row-major list and `tolist()` the nested lists NumPy gives."""
    t = case.tensor()
    expect("t.values()", t.values(), case.array.ravel().tolist(), "row-major order")
    expect("t.tolist()", t.tolist(), case.array.tolist(), "as NumPy's tolist()")


@st.composite
def empty_layouts(draw: st.DrawFn) -> Layout:
    """A layout with a size-0 dim somewhere and any strides (zero included)."""
    shape = draw(st.lists(sizes, min_size=1, max_size=5))
    shape[draw(st.integers(0, len(shape) - 1))] = 0
    return draw(layouts(shape=tuple(shape)))[0]


@pytest.mark.exercise("4.4")
@given(empty_layouts())
@example(Layout((2, 0, 3), (3, 0, -1), 2))
def test_read_values_of_an_empty_layout_over_an_empty_buffer(layout):
    """A layout with no elements reads nothing, whatever its strides, even from an empty
    buffer (NumPy gives empty arrays all-zero strides)."""
    expected = numpy_view(np.zeros(0), layout).ravel().tolist()
    rule = "a layout with a size-0 dim holds no elements"
    expect("values read from an empty buffer", read_values([], layout), expected, rule)
    expect("offsets walked", list(walk_offsets(layout)), expected, rule)


@pytest.mark.exercise("4.4")
def test_read_values_of_a_reversed_row_that_ends_at_offset_zero():
    """A negative stride whose last element is storage offset 0 (a slice stop of -1 trap)."""
    buffer = np.arange(6.0)
    for layout in [Layout((3,), (-1,), 2), Layout((2, 3), (-3, -1), 5), Layout((3,), (-2,), 4)]:
        expected = numpy_view(buffer, layout).ravel().tolist()
        got = read_values(buffer.tolist(), layout)
        expect(f"values read through {layout}", got, expected, "offset 0 is read too")


# ---------------------------------------------------------------------------------------------
# 4.5 map_values and the unary tensor methods
# ---------------------------------------------------------------------------------------------


@pytest.mark.exercise("4.5")
@given(cases())
@example(example_case())
def test_map_values_applies_fn_to_each_element_in_row_major_order(case):
    """One call per element (stride-0 repeats included), results in ravel() order."""
    calls = []

    def tag(x):
        calls.append(x)
        return ("seen", x)

    expected = case.array.ravel().tolist()
    result = map_values(tag, case.buffer.tolist(), case.layout)
    expect("type of what map_values returned", type(result).__name__, "list")
    tagged = [("seen", x) for x in expected]
    expect("results of map_values", result, tagged, "fn of each element, in row-major order")
    rule = "one call per element (repeats too), in row-major order"
    expect("elements fn was called with", calls, expected, rule)


@pytest.mark.exercise("4.5")
@given(cases())
@example(example_case())
def test_tensor_map_makes_a_new_tensor(case):
    """`t.map(fn)` has t's shape and dtype, new storage, and fn of every element."""
    t = case.tensor()
    result = t.map(lambda x: 2 * x - 1)
    expect("dtype of t.map(fn)", result.dtype, t.dtype, "t's dtype")
    expect("t.map(fn) shares t's storage", storage_shared(result, t), False, "a new tensor")
    assert_same(result, 2 * case.array - 1, what="t.map(lambda x: 2 * x - 1)")


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
@example(data=Scripted(kind="float64", case=Case(example_values(8), Layout((2, 3), (1, 2), 1))))
@example(data=Scripted(kind="int64", case=Case(example_values(6, "int"), Layout((3,), (-2,), 5))))
def test_unary_methods_match_numpy(name, data):
    """exp, log, relu, leaky_relu and unary minus: NumPy's values and dtype (int -> float64
    for exp/log/leaky_relu, float32 stays float32), -inf/nan from log of 0/negatives."""
    method, reference = UNARY[name]
    kinds = st.sampled_from(["float64", "float32", "int64", "int-valued float64"])
    kind = data.draw(kinds, label="kind")
    case = data.draw(cases(kind="int" if kind.startswith("int") else "float"), label="case")
    if kind == "float32":
        case = float32_case(case)
    elif kind == "int-valued float64":
        case = as_float_case(case)
    elif name.startswith(("exp", "tenxor.exp")):
        case = Case(case.buffer * 40, case.layout)  # large enough to overflow to inf
    with np.errstate(all="ignore"):
        expected = np.asarray(reference(case.array))
    result = method(case.tensor())
    rule = "int gives float64 for exp, log and leaky_relu; float32 stays float32"
    expect(f"dtype of {name}", result.dtype.name, expected.dtype.name, rule)
    result_values = to_numpy(result)
    expect(f"shape of {name}", result_values.shape, expected.shape, "the input's shape")
    rtol = 1e-6 if kind == "float32" else 1e-12
    if not np.allclose(result_values, expected, rtol=rtol, atol=0, equal_nan=True):
        rule = f"NumPy's values within a relative {rtol:g}"
        raise Mismatch(f"elements of {name}", result_values, expected, rule)


@pytest.mark.exercise("4.5")
def test_log_of_zero_and_negatives_gives_minus_inf_and_nan():
    """log(0) = -inf and log(x < 0) = nan, as in NumPy, for float and int tensors."""
    values = np.array([[0.0, -1.0, 1.0], [np.e, -0.0, 0.5]])
    rule = "log(0) is -inf, log of a negative is nan"
    with np.errstate(all="ignore"):
        expected = np.log(values)
        assert_same(from_numpy(values).log(), expected, what="log of a float tensor", rule=rule)
        ints = np.array([0, -3, 1, 7])
        what = "log of an int tensor"
        assert_same(from_numpy(ints).log(), np.log(ints), exact=False, what=what, rule=rule)


@pytest.mark.exercise("4.5")
@given(cases(kind="bool"))
@example(example_case("bool"))
def test_invert_is_logical_not_on_bool_tensors(case):
    """`~t` on a bool tensor is elementwise not."""
    result = ~case.tensor()
    expect("dtype of ~t", result.dtype, tenxor.bool)
    assert_same(result, ~case.array, what="~t", rule="elementwise not")


@pytest.mark.exercise("4.5")
def test_unary_operations_reject_bool_and_non_bool_inputs_naming_the_dtype():
    """Unary minus works on floats and `~` on bools; unary minus of a bool tensor and `~` of
    a float tensor are TypeErrors, as in NumPy."""
    flags = from_numpy(np.array([True, False]))
    assert_same(-from_numpy(np.array([1.5, -2.0])), np.array([-1.5, 2.0]), what="-[1.5, -2.0]")
    assert_same(~flags, np.array([False, True]), what="~[True, False]")
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
@example(data=Scripted(case=Case(example_values(8), Layout((2, 3), (1, 2), 1))))
def test_to_dtype_matches_numpy_astype(kind, target, data):
    """`to(dtype)` (a DType or its name) is a copy like NumPy's astype: floats truncate
    toward zero, nonzero is True, float64 rounds to float32."""
    case = data.draw(cases(kind=kind), label="case")
    expected = case.array.astype(np.dtype(target))
    t = case.tensor()
    results = {
        f"t.to({target!r})": t.to(target),
        f"t.to(tenxor.{target})": t.to(tenxor.DTYPES[target]),
    }
    rule = "as NumPy's astype: floats truncate toward zero, nonzero is True"
    for name, result in results.items():
        expect(f"dtype of {name}", result.dtype, tenxor.DTYPES[target])
        expect(f"{name} shares t's storage", storage_shared(result, t), False, "a copy")
        assert_same(result, expected, what=name, rule=rule)


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
@example(example_pair())
def test_zip_values_pairs_broadcast_elements_in_row_major_order(pair):
    """The broadcast shape and fn(a, b) for each pair NumPy's broadcasting lines up."""
    a, b = pair
    left, right = np.broadcast_arrays(a.array, b.array)
    expected = (left.shape, list(zip(left.ravel().tolist(), right.ravel().tolist())))
    shape, values = zip_values(
        lambda x, y: (x, y), a.buffer.tolist(), a.layout, b.buffer.tolist(), b.layout
    )
    expect("broadcast shape", shape, expected[0], "NumPy's broadcasting")
    rule = "the pairs NumPy's broadcasting lines up, in row-major order"
    expect("pairs (a, b) handed to fn", values, expected[1], rule)


@pytest.mark.exercise("4.6")
@given(operand_pairs())
@example(example_pair())
def test_zip_values_keeps_operand_order(pair):
    """fn receives the element of a first: a - b, not b - a."""
    a, b = pair
    expected = a.array - b.array
    shape, values = zip_values(
        operator.sub, a.buffer.tolist(), a.layout, b.buffer.tolist(), b.layout
    )
    expect("broadcast shape", shape, expected.shape, "NumPy's broadcasting")
    expect("number of values", len(values), expected.size, "one per element of the shape")
    got = np.array(values, dtype=np.float64).reshape(shape)
    expect("values of fn = operator.sub", got, expected, "a's element first: a - b, not b - a")


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
@example(pair=example_pair())
def test_float_operators_broadcast_like_numpy(name, pair):
    """+ - * / ** and comparisons between two broadcast float64 layouts."""
    a, b = pair
    check_binary(ALL_OPS[name], a.tensor(), b.tensor(), a.array, b.array, exact=name != "**")


@pytest.mark.exercise("4.6")
@pytest.mark.parametrize("name", ["+", "-", "*", "/"] + list(COMPARISONS))
@at_most_examples(50)
@given(pair=operand_pairs(kind_a="int", kind_b="int"))
@example(pair=example_pair("int", "int"))
def test_int_operators_broadcast_like_numpy(name, pair):
    """int64 with int64: + - * stay int64, / gives float64 (inf/nan for a zero divisor),
    comparisons give bool; equal values are common, so < and <= differ."""
    a, b = pair
    check_binary(ALL_OPS[name], a.tensor(), b.tensor(), a.array, b.array)


@pytest.mark.exercise("4.6")
@given(pair=operand_pairs(kind_a="int", kind_b="int"))
@example(pair=example_pair("int", "int"))
def test_int_power_with_small_exponents_stays_int(pair):
    """int64 ** non-negative int64 is exact and int64."""
    a, b = pair
    exponents = Case(np.abs(b.buffer) % 4, b.layout)
    check_binary(operator.pow, a.tensor(), exponents.tensor(), a.array, exponents.array)


@pytest.mark.exercise("4.6")
@pytest.mark.parametrize("name", list(ALL_OPS))
@at_most_examples(50)
@given(case=cases(), scalar=st.sampled_from([2, -3, 0, 0.5, -1.5, 0.0, -0.0]))
@example(case=example_case(), scalar=2)
def test_python_scalars_on_either_side_of_a_float_tensor(name, case, scalar):
    """t op scalar and scalar op t: NumPy's values, float64 results (bool for comparisons)."""
    op, t, exact = ALL_OPS[name], case.tensor(), name != "**"
    check_binary(op, t, scalar, case.array, scalar, exact)
    check_binary(op, scalar, t, scalar, case.array, exact)


@pytest.mark.exercise("4.6")
@pytest.mark.parametrize("name", list(ALL_OPS))
@at_most_examples(50)
@given(case=cases(kind="int"), scalar=st.sampled_from([2, -3, 0, 0.5, -1.5]))
@example(case=example_case("int"), scalar=2)
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
    rule = "the wider int or float; an int/float mix takes the float's dtype (PyTorch's rule)"
    for op in DTYPE_OPS.values():
        check_binary(op, from_numpy(x), from_numpy(y), x_numpy, y_numpy, rule=rule)


@pytest.mark.exercise("4.6")
@pytest.mark.parametrize("scalar", [2, 2.5], ids=repr)
@pytest.mark.parametrize("dtype", DTYPE_NAMES)
def test_result_dtype_with_a_python_scalar_follows_numpy(dtype, scalar):
    """A Python scalar takes the tensor's dtype unless it is a wider kind: float32 stays
    float32 with 2 and 2.5, int32 stays int32 with 2, an int tensor with 2.5 gives float64."""
    x = np.array([[1], [0], [3]]).astype(dtype)
    rule = "a Python scalar takes the tensor's dtype unless it is a wider kind (NumPy's rule)"
    for op in DTYPE_OPS.values():
        check_binary(op, from_numpy(x), scalar, x, scalar, rule=rule)
        check_binary(op, scalar, from_numpy(x), scalar, x, rule=rule)


@pytest.mark.exercise("4.6")
def test_float32_tensors_with_python_floats_round_like_numpy():
    """float32 op Python float is computed and stored as float32, matching NumPy's values."""
    x = np.array([0.1, 1 / 3, -2.7, 1e-3], dtype=np.float32)
    for op in [operator.add, operator.sub, operator.mul, operator.truediv]:
        check_binary(op, from_numpy(x), 0.7, x, 0.7)
        check_binary(op, 0.7, from_numpy(x), 0.7, x)
        what = f"dtype of float32 tensor {SYMBOLS[op]} 0.7"
        expect(what, op(from_numpy(x), 0.7).dtype, tenxor.float32, "a Python float keeps float32")


@pytest.mark.exercise("4.6")
def test_division_by_zero_gives_inf_and_nan_like_numpy():
    """x / 0 is +-inf (by the signs of x and of the zero), 0 / 0 and nan / 0 are nan, for
    float and int tensors and Python scalar divisors or dividends."""
    numerators = np.array([1.0, -1.0, 0.0, -0.0, 2.5, math.inf, -math.inf, math.nan])[:, None]
    denominators = np.array([0.0, -0.0, 2.0, math.inf])
    ints = np.array([[-3], [0], [4]])
    with np.errstate(all="ignore"):
        checks = {
            "x / y": (from_numpy(numerators) / from_numpy(denominators), numerators / denominators),
            "y / x": (from_numpy(denominators) / from_numpy(numerators), denominators / numerators),
            "x / 0": (from_numpy(numerators) / 0, numerators / 0),
            "x / -0.0": (from_numpy(numerators) / -0.0, numerators / -0.0),
            "0 / x": (0 / from_numpy(numerators), 0 / numerators),
            "ints / [0, 2]": (
                from_numpy(ints) / from_numpy(np.array([0, 2])),
                ints / np.array([0, 2]),
            ),
            "ints / 0": (from_numpy(ints) / 0, ints / 0),
            "1 / ints": (1 / from_numpy(ints), 1 / ints),
        }
    rule = "x / 0 is +-inf by the signs of x and of the zero; 0 / 0 and nan / 0 are nan"
    for name, (result, expected) in checks.items():
        expect(f"dtype of {name}", result.dtype, tenxor.float64, "/ gives float64")
        assert_same(result, expected, what=name, rule=rule)
        numbers = ~np.isnan(expected)
        signs = np.signbit(to_numpy(result)[numbers])
        expect(f"signs (signbit) of {name}", signs, np.signbit(expected[numbers]), rule)


@pytest.mark.exercise("4.6")
@given(operand_pairs())
@example(example_pair("int", "int"))
def test_division_by_zero_on_broadcast_layouts(pair):
    """Integer-valued float layouts (zeros are common): / gives NumPy's inf and nan."""
    a, b = as_float_case(pair[0]), as_float_case(pair[1])
    expected = numpy_result(operator.truediv, a.array, b.array)
    rule = "x / 0 is +-inf, 0 / 0 is nan, as in NumPy"
    assert_same(a.tensor() / b.tensor(), expected, what="a / b", rule=rule)


@pytest.mark.exercise("4.6")
@pytest.mark.parametrize("name", list(LOGICAL))
@at_most_examples(50)
@given(pair=operand_pairs(kind_a="bool", kind_b="bool"))
@example(pair=example_pair("bool", "bool"))
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


WHERE_EXAMPLE = {
    "shapes of c, a, b": ((2, 1, 3), (3,), (2, 1, 1)),
    "c": Case(example_values(8), Layout((2, 1, 3), (1, 0, 2), 1)),
    "a": Case(example_values(4), Layout((3,), (1,), 0)),
    "kind of b": "int",
    "b": Case(example_values(4, "int"), Layout((2, 1, 1), (-2, 0, 0), 3)),
}


@pytest.mark.exercise("4.6")
@given(data=st.data())
@example(data=Scripted(**WHERE_EXAMPLE))
def test_where_picks_from_three_broadcast_operands(data):
    """where(c > 0, a, b) over three independently drawn broadcast layouts is np.where; an
    int64 b with a float64 a gives float64."""
    shape_c, shape_a, shape_b = data.draw(broadcastable_shapes(3), label="shapes of c, a, b")
    c = data.draw(cases(shape=shape_c), label="c")
    a = data.draw(cases(shape=shape_a), label="a")
    kind_b = data.draw(st.sampled_from(["float", "int"]), label="kind of b")
    b = data.draw(cases(shape=shape_b, kind=kind_b), label="b")
    expected = np.where(c.array > 0, a.array, b.array)
    result = tenxor.where(c.tensor() > 0, a.tensor(), b.tensor())
    what = "tenxor.where(c > 0, a, b)"
    expect(f"dtype of {what}", result.dtype.name, expected.dtype.name, "as np.where")
    rule = "np.where, with NumPy's broadcasting"
    assert_same(result, expected, what=what, rule=rule)
    method = a.tensor().where(c.tensor() > 0, b.tensor())
    assert_same(method, expected, what="a.where(c > 0, b)", rule=rule)


@pytest.mark.exercise("4.6")
@given(operand_pairs())
@example(example_pair())
def test_where_with_python_scalars(pair):
    """A Python number as either branch broadcasts like a 0-d tensor of the other's dtype."""
    c, a = pair
    condition = c.tensor() < 1.5
    picks = c.array < 1.5
    checks = {
        "where(c < 1.5, a, 0.0)": (
            tenxor.where(condition, a.tensor(), 0.0),
            np.where(picks, a.array, 0.0),
        ),
        "where(c < 1.5, -1.0, a)": (
            tenxor.where(condition, -1.0, a.tensor()),
            np.where(picks, -1.0, a.array),
        ),
        "where(c < 1.5, 1, a)": (
            tenxor.where(condition, 1, a.tensor()),
            np.where(picks, 1, a.array),
        ),
        "a.where(c < 1.5, 7.5)": (
            a.tensor().where(condition, 7.5),
            np.where(picks, a.array, 7.5),
        ),
    }
    rule = "a Python number broadcasts like a 0-d tensor of the other branch's dtype"
    for name, (result, expected) in checks.items():
        expect(f"dtype of {name}", result.dtype, tenxor.float64, "float64 like a")
        assert_same(result, expected, what=name, rule=rule)


@pytest.mark.exercise("4.6")
def test_where_rejects_shapes_that_do_not_broadcast():
    """A condition, a or b that does not broadcast is a ValueError naming the shapes."""
    condition = from_numpy(np.zeros((2, 3))) > 0
    with raises_naming(ValueError, (2, 3), (4,)):
        tenxor.where(condition, from_numpy(np.zeros(4)), 0.0)


@pytest.mark.exercise("4.6")
@at_most_examples(50)
@given(operand_pairs(kind_a="int", kind_b="float"))
@example(example_pair("int", "float"))
def test_mixed_int_and_float_tensors_give_float64(pair):
    """int64 with float64 in either order: float64 and NumPy's values."""
    a, b = pair
    for op in [operator.add, operator.sub, operator.mul, operator.truediv]:
        for x, y, xa, ya in [(a, b, a.array, b.array), (b, a, b.array, a.array)]:
            result = op(x.tensor(), y.tensor())
            what = f"{describe(x.tensor())} {SYMBOLS[op]} {describe(y.tensor())}"
            expect(f"dtype of {what}", result.dtype, tenxor.float64, "int with float is float")
            assert_same(result, numpy_result(op, xa, ya), what=what, rule="NumPy's broadcasting")


@pytest.mark.exercise("4.6")
def test_operators_on_a_stride_zero_and_negative_stride_pair():
    """A (3, 1) column with stride 0 on its size-1 dim minus a reversed row with an offset."""
    column = Case(np.arange(10.0), Layout((3, 1), (3, 0), 1))
    row = Case(np.arange(10.0) * 10, Layout((4,), (-2,), 9))
    expected = column.array - row.array
    result = column.tensor() - row.tensor()
    rule = "NumPy's broadcasting"
    expect("shape of column - row", result.shape, (3, 4), rule)
    assert_same(result, expected, what="column - row", rule=rule)
    reverse = row.tensor() - column.tensor()
    assert_same(reverse, row.array - column.array, what="row - column", rule=rule)


@pytest.mark.exercise("4.6")
@given(operand_pairs(kind_a="bool", kind_b="bool"))
@example(example_pair("bool", "bool"))
def test_bool_tensors_compare_to_bool(pair):
    """Comparisons of bool tensors are elementwise and give bool tensors."""
    a, b = pair
    for symbol, op in COMPARISONS.items():
        result = op(a.tensor(), b.tensor())
        what = f"a {symbol} b of bool tensors"
        expect(f"dtype of {what}", result.dtype, tenxor.bool, "a comparison gives bool")
        assert_same(result, op(a.array, b.array), what=what, rule="elementwise, broadcast")
