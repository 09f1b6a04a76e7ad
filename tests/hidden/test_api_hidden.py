"""Harder checks of the public API: high-dimensional printing over generated layouts, the
dtype promotion table of `+`, and tensor() from generated nested data."""

from __future__ import annotations

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
)
from tests.test_tensor_api import assert_new_tensor

SEPARATORS = ("---", "===", "***", "###")


def grid_text(array: np.ndarray) -> str:
    """The printed grid of `array`, built matrix by matrix: before each matrix but the first
    comes the separator of the highest block that starts there (--- for a new matrix, === for
    a new 3-d block, *** for 4-d, ### for anything higher)."""
    if array.size == 0:
        return "(no elements)"
    texts = [f"{v:.4f}" if isinstance(v, float) else str(v) for v in array.reshape(-1).tolist()]
    width = max(map(len, texts))
    cells = np.array([text.rjust(width) for text in texts], dtype=object).reshape(array.shape)
    if array.ndim == 0:
        return cells.item()
    matrices = cells.reshape((-1,) + cells.shape[-2:]) if array.ndim >= 2 else cells[None, None]
    outer = list(np.ndindex(*array.shape[:-2]))
    lines: list[str] = []
    for number, matrix in enumerate(matrices):
        if number > 0:
            index = outer[number]
            starts = 0  # how many trailing outer dims restart at 0 here
            while starts < len(index) - 1 and index[len(index) - 1 - starts] == 0:
                starts += 1
            lines.append(SEPARATORS[min(starts, len(SEPARATORS) - 1)])
        lines.extend("  ".join(row) for row in matrix)
    return "\n".join(lines)


def expect_lines(what: str, shown_text: object, expected: str, rule: str) -> None:
    """`shown_text` is `expected`; otherwise the failure shows the first line that differs (a
    grid of 5 to 7 dims is too long to show whole)."""
    if shown_text == expected:
        return
    if not isinstance(shown_text, str):
        raise Mismatch(f"type of {what}", type(shown_text).__name__, "str", rule)
    got, due = shown_text.split("\n"), expected.split("\n")
    line = next((k for k, (a, b) in enumerate(zip(got, due)) if a != b), min(len(got), len(due)))
    missing = "(no such line)"
    got_line = got[line] if line < len(got) else missing
    due_line = due[line] if line < len(due) else missing
    where = f"line {line + 1} of {len(due)} of {what}"
    raise Mismatch(where, got_line, due_line, rule)


HIGH_SHAPES = [
    (2, 2, 2, 1, 2),
    (2, 1, 2, 2, 3),
    (2, 2, 1, 2, 1, 2),
    (2, 1, 2, 1, 2, 1, 2),
    (1, 2, 2, 2, 2, 2),
    (3, 1, 1, 1, 2),
]

# A (2, 1, 2, 2, 3) tensor over 0.0, 1.5, 3.0, ... whose third dim walks storage backwards
# from storage offset 6, and whose rows are not contiguous with each other.
PRINT_EXAMPLE = Case(np.arange(24.0) * 1.5, Layout((2, 1, 2, 2, 3), (12, 5, -6, 3, 1), 6))
GRID_RULE = "every matrix in order; --- between matrices, === 3-d blocks, *** 4-d, ### higher"


@pytest.mark.provided
@given(
    st.sampled_from(HIGH_SHAPES).flatmap(lambda shape: cases(shape=shape)),
    st.sampled_from([tenxor.float64, tenxor.int64]),
)
@example(PRINT_EXAMPLE, tenxor.float64)
def test_printing_5d_to_7d_tensors_over_generated_layouts(case, dtype):
    """Tensors of 5 to 7 dims read through generated layouts (stride 0, negative strides,
    storage offsets) print every matrix in order with the right separator between them,
    including `###` between blocks of 5 or more dims."""
    buffer = case.buffer if dtype is tenxor.float64 else np.round(case.buffer).astype(np.int64)
    t = make_tensor(buffer, case.layout)
    expected = numpy_view(buffer, case.layout)
    text = tenxor.tensor_to_string(t)
    described = f"a {dtype.name} tensor with {case.layout}"
    expect_lines(f"tensor_to_string of {described}", text, grid_text(expected), GRID_RULE)
    heading = f"Tenxor of shape {expected.shape}, dtype {dtype.name}"
    rule = "a heading with shape and dtype, then the grid tensor_to_string gives"
    expect_lines(f"repr of {described}", repr(t), f"{heading}\n{text}", rule)


# The result dtype of a + b for every pair of dtypes: the wider of the two, in the order
# bool < int32 < int64 < float32 < float64 (an int64 with a float32 gives float32).
ORDER = ("bool", "int32", "int64", "float32", "float64")
PROMOTION_TABLE = """
            bool     int32    int64    float32  float64
   bool     bool     int32    int64    float32  float64
   int32    int32    int32    int64    float32  float64
   int64    int64    int64    int64    float32  float64
   float32  float32  float32  float32  float32  float64
   float64  float64  float64  float64  float64  float64
"""
PROMOTION = {
    (row[0], column): result
    for row in (line.split() for line in PROMOTION_TABLE.strip().splitlines()[1:])
    for column, result in zip(ORDER, row[1:])
}

# The result dtype of tensor + Python number: the number takes the tensor's dtype unless it
# needs a wider kind (a float with an integer or bool tensor gives float64, an int with a bool
# tensor gives int64).
SCALAR_PROMOTION = {
    ("bool", True): "bool", ("bool", 3): "int64", ("bool", 2.5): "float64",
    ("int32", True): "int32", ("int32", 3): "int32", ("int32", 2.5): "float64",
    ("int64", True): "int64", ("int64", 3): "int64", ("int64", 2.5): "float64",
    ("float32", True): "float32", ("float32", 3): "float32", ("float32", 2.5): "float32",
    ("float64", True): "float64", ("float64", 3): "float64", ("float64", 2.5): "float64",
}  # fmt: skip


def operand(dtype: str, shape: tuple[int, ...], seed: int) -> tuple[tenxor.Tenxor, np.ndarray]:
    """A tensor of small exact values in `dtype`, stored column-major after one unused element
    (so non-contiguous and at a storage offset), and the same values as a NumPy array."""
    array = np.random.default_rng(seed).integers(0, 5, size=shape).astype(NUMPY_DTYPES[dtype])
    buffer = np.concatenate([array.reshape(-1)[:1], array.transpose().reshape(-1)])
    strides = row_major_strides(shape[::-1])[::-1]
    return make_tensor(buffer, Layout(shape, strides, 1)), array


PROMOTION_RULE = "the wider of the two: bool < int32 < int64 < float32 < float64"
SCALAR_RULE = (
    "the tensor's dtype, unless the number needs a wider kind (float64, or int64 for bool)"
)


@pytest.mark.exercise("4.6")
def test_addition_promotes_dtypes_by_the_table():
    """a + b for every pair of dtypes (broadcast, non-contiguous operands) has the dtype of
    the table and NumPy's values computed in that dtype; tensor + number and number + tensor
    follow the scalar table."""
    assert len(PROMOTION) == 25
    for (left, right), result in PROMOTION.items():
        a, a_np = operand(left, (2, 1, 3), seed=1)
        b, b_np = operand(right, (4, 1), seed=2)
        expected = a_np.astype(NUMPY_DTYPES[result]) + b_np.astype(NUMPY_DTYPES[result])
        total = a + b
        what = f"{left} tensor + {right} tensor"
        expect(f"dtype of {what}", total.dtype.name, result, PROMOTION_RULE)
        rule = "(2, 1, 3) and (4, 1) broadcast to (2, 4, 3)"
        expect(f"shape of {what}", total.shape, (2, 4, 3), rule)
        rule = "a new tensor is row-major"
        expect(f"strides of {what}", total.strides, row_major_strides((2, 4, 3)), rule)
        assert_same(total, expected, what=what, rule=f"NumPy's sums computed in {result}")
    for (kind, number), result in SCALAR_PROMOTION.items():
        a, a_np = operand(kind, (2, 3), seed=3)
        expected = a_np.astype(NUMPY_DTYPES[result]) + np.array(number).astype(NUMPY_DTYPES[result])
        totals = {
            f"{kind} tensor + {number!r}": a + number,
            f"{number!r} + {kind} tensor": number + a,
        }
        for what, total in totals.items():
            expect(f"dtype of {what}", total.dtype.name, result, SCALAR_RULE)
            assert_same(total, expected, what=what, rule=f"NumPy's sums computed in {result}")


def nested(draw: st.DrawFn, shape: tuple[int, ...], element: st.SearchStrategy) -> object:
    """Nested lists (sometimes tuples) of `shape` filled with drawn elements."""
    if not shape:
        return draw(element)
    items = [nested(draw, shape[1:], element) for _ in range(shape[0])]
    return tuple(items) if draw(st.booleans()) else items


@st.composite
def nested_data(draw: st.DrawFn) -> object:
    """A number or nested lists of up to 4 dims holding bools, ints and/or floats."""
    shape = tuple(draw(st.lists(st.integers(0, 3), max_size=4)))
    kinds = draw(st.sets(st.sampled_from(["bool", "int", "float"]), min_size=1))
    element = st.one_of(
        *[
            {
                "bool": st.booleans(),
                "int": st.integers(-(10**6), 10**6),
                "float": st.floats(-1e6, 1e6),
            }[kind]
            for kind in sorted(kinds)
        ]
    )
    return nested(draw, shape, element)


@pytest.mark.provided
@given(nested_data(), st.sampled_from([None, "float64", "float32", "int64", "int32", "bool"]))
@example([[1, -2.5, 3], (4, True, 0.25)], None)
def test_tensor_of_generated_nested_data_matches_numpy(data, dtype):
    """tensor() of any nested data has the shape, dtype and values of np.array(data): bool if
    all elements are bools, int64 if all are ints or bools, else float64; with a dtype the
    values convert like NumPy's astype."""
    expected = np.array(data)
    if dtype is not None:
        expected = expected.astype(NUMPY_DTYPES[dtype])
    t = tenxor.tensor(data, dtype=dtype)
    assert_new_tensor(t, expected, what=f"tensor(data, dtype={dtype!r})")
