"""Harder checks of the chapter 4 and 5 kernels: 5-d broadcasting, many batch dims, -inf
logits and every combination of reduced dims, all against NumPy."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import tenxor
from tenxor.reductions import reduce_values
from tests.support import (
    Case,
    assert_same,
    at_most_examples,
    broadcastable_shapes,
    cases,
    masked_softmax_reference,
    stable_softmax,
    to_numpy,
    view_case,
)


@pytest.mark.exercise("4.6")
@at_most_examples(60)
@given(data=st.data())
def test_where_broadcasts_three_independent_5d_layouts(data):
    """where(c > 0.5, a, b) with three 5-d-broadcast operands on random layouts, b int64."""
    shape_c, shape_a, shape_b = data.draw(broadcastable_shapes(3, 5, 5, st.integers(1, 3)))
    c = data.draw(cases(shape=shape_c))
    a = data.draw(cases(shape=shape_a))
    b = data.draw(cases(shape=shape_b, kind="int"))
    expected = np.where(c.array > 0.5, a.array, b.array)
    result = tenxor.where(c.tensor() > 0.5, a.tensor(), b.tensor())
    assert result.dtype is tenxor.float64
    assert_same(result, expected)
    flipped = tenxor.where(c.tensor() <= 0.5, b.tensor(), a.tensor())
    assert_same(flipped, expected)


@pytest.mark.exercise("5.4")
@at_most_examples(40)
@given(data=st.data())
def test_matmul_with_three_broadcast_batch_dims_on_random_layouts(data):
    """(B1, B2, B3, n, k) @ (B1', B2', B3', k, m) with batch dims that broadcast and every
    operand on its own random layout (negative, zero and gap strides)."""
    batch_a, batch_b = data.draw(broadcastable_shapes(2, 3, 3, st.integers(1, 3)))
    batch_a = (1,) * (3 - len(batch_a)) + batch_a
    n, k, m = (data.draw(st.integers(0, 4)) for _ in range(3))
    a = data.draw(cases(shape=batch_a + (n, k)))
    b = data.draw(cases(shape=batch_b + (k, m)))
    expected = np.matmul(a.array, b.array)
    scale = np.matmul(np.abs(a.array), np.abs(b.array))
    actual = to_numpy(a.tensor() @ b.tensor())
    assert actual.shape == expected.shape
    atol = 1e-12 * float(scale.max(initial=0.0))
    np.testing.assert_allclose(actual, expected, rtol=1e-12, atol=atol)


@pytest.mark.exercise("5.4")
def test_matmul_of_transposed_and_reversed_5d_operands():
    """(2, 1, 3, 4, 5) stored transposed @ (1, 4, 1, 5, 2) read with negative strides from a
    larger buffer: shape (2, 4, 3, 4, 2) and NumPy's values."""
    rng = np.random.default_rng(11)
    x = rng.uniform(-3, 3, (2, 1, 3, 4, 5))
    y = rng.uniform(-3, 3, (1, 4, 1, 5, 2))
    base_a = np.ascontiguousarray(np.swapaxes(x, -1, -2))
    a = view_case(base_a, np.swapaxes(base_a, -1, -2))
    base_b = np.full((3, 9, 3, 11, 5), -99.0)
    window = base_b[1:2, 7::-2, 2:, 9::-2, 3::-2]
    window[...] = y
    b = view_case(base_b, window)
    result = a.tensor() @ b.tensor()
    expected = np.matmul(x, y)
    assert result.shape == (2, 4, 3, 4, 2)
    np.testing.assert_allclose(to_numpy(result), expected, rtol=1e-12, atol=1e-12 * 45)


@pytest.mark.exercise("5.5")
@at_most_examples(60)
@given(data=st.data())
def test_softmax_of_5d_layouts_with_minus_inf_entries(data):
    """-inf logits get weight 0 and runs that are all -inf are nan, as in NumPy; every dim."""
    case = data.draw(cases(min_dims=5, max_dims=5))
    buffer = case.buffer.copy()
    planted = data.draw(st.lists(st.integers(0, len(buffer) - 1), max_size=len(buffer)))
    buffer[planted] = -np.inf
    logits = Case(buffer + data.draw(st.sampled_from([0.0, 900.0])), case.layout)
    dim = data.draw(st.integers(-5, 4))
    assume(logits.layout.shape[dim] > 0)
    expected = stable_softmax(logits.array, dim)
    actual = to_numpy(logits.tensor().softmax(dim))
    assert actual.shape == expected.shape
    np.testing.assert_allclose(actual, expected, rtol=1e-9, atol=1e-12, equal_nan=True)
    assert (actual[np.isneginf(logits.array) & ~np.isnan(expected)] == 0).all()


@pytest.mark.exercise("5.1")
@at_most_examples(30)
@given(cases(min_dims=4, max_dims=4, kind="int"))
def test_reduce_values_over_every_subset_of_dims_of_a_4d_layout(case):
    """Every non-empty set of dims (given in reverse, as negative dims), keepdim or not: the
    sum and the run length match NumPy, and each run holds NumPy's elements."""
    data = case.buffer.tolist()
    for count in range(1, 5):
        for subset in itertools.combinations(range(4), count):
            dims = tuple(d - 4 for d in reversed(subset))
            kept = [d for d in range(4) if d not in subset]
            moved = np.transpose(case.array, kept + list(subset))
            runs = moved.reshape(
                math.prod(case.array.shape[d] for d in kept),
                math.prod(case.array.shape[d] for d in subset),
            )
            for keepdim in (False, True):
                expected = np.sum(case.array, axis=dims, keepdims=keepdim)
                shape, values = reduce_values(sum, data, case.layout, dims, keepdim)
                assert shape == expected.shape, (dims, keepdim)
                assert values == expected.ravel().tolist(), (dims, keepdim)
                counts = np.sum(np.ones_like(case.array), axis=dims, keepdims=keepdim)
                assert reduce_values(len, data, case.layout, dims, keepdim)[1] == (
                    counts.ravel().tolist()
                )
                _, found = reduce_values(sorted, data, case.layout, dims, keepdim)
                assert found == [sorted(run) for run in runs.tolist()], (dims, keepdim)


@pytest.mark.exercise("5.6")
@at_most_examples(60)
@given(data=st.data())
def test_masked_softmax_of_4d_layouts_with_broadcast_masks(data):
    """4-d logits near +-1000 and a mask on its own layout broadcast over some dims: NumPy's
    masked softmax, exact zeros where masked and in fully masked runs."""
    case = data.draw(cases(min_dims=4, max_dims=4))
    logits = Case(case.buffer + data.draw(st.sampled_from([1000.0, -1000.0])), case.layout)
    shape = case.layout.shape
    mask_shape = tuple(1 if data.draw(st.booleans()) else n for n in shape)
    mask = data.draw(cases(shape=mask_shape[data.draw(st.integers(0, 4)) :], kind="bool"))
    dim = data.draw(st.integers(-4, 3))
    assume(shape[dim] > 0)
    expected = masked_softmax_reference(logits.array, mask.array, dim)
    result = tenxor.masked_softmax(logits.tensor(), mask.tensor(), dim)
    actual = to_numpy(result)
    assert actual.shape == expected.shape
    np.testing.assert_allclose(actual, expected, rtol=1e-9, atol=1e-12)
    keep = np.broadcast_to(mask.array, shape)
    assert (actual[~keep] == 0).all()
    assert not np.isnan(actual).any()


@pytest.mark.exercise("5.3")
@given(cases(min_dims=5, max_dims=5, kind="int"), st.booleans())
def test_argmax_over_each_dim_of_5d_layouts_with_many_ties(case, keepdim):
    """Values 0..2 only, so most runs have tied maxima: the first one, as np.argmax."""
    ties = Case(case.buffer % 3, case.layout)
    t = ties.tensor()
    for dim in [None, *range(-5, 5)]:
        try:
            expected = np.argmax(ties.array, axis=dim, keepdims=keepdim)
        except ValueError:
            with pytest.raises(ValueError):
                t.argmax(dim, keepdim)
            continue
        assert_same(t.argmax(dim, keepdim), np.asarray(expected))
