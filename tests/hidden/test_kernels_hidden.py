"""Harder checks of the chapter 4 and 5 kernels: 5-d broadcasting, many batch dims, -inf
logits and every combination of reduced dims, all against NumPy."""

from __future__ import annotations

import itertools
import math
import operator
from collections.abc import Iterator

import numpy as np
import pytest
from hypothesis import assume, example, given
from hypothesis import strategies as st

import tenxor
from tenxor.reductions import combine_fold_values, first_largest_position, reduce_values
from tenxor.strides import Layout
from tests.support import (
    Case,
    Mismatch,
    assert_same,
    at_most_examples,
    broadcastable_shapes,
    cases,
    compact,
    contiguous_case,
    each_call,
    expect,
    masked_softmax_reference,
    raises_naming,
    stable_softmax,
    to_numpy,
    view_case,
)
from tests.test_reductions import (
    Words,
    assert_close,
    assert_matmul_close,
    data_of,
    expect_close_values,
    expect_groups_of_differences,
    fused_operands,
    shape_rule,
    times_plus,
)


def int_case(shape: tuple[int, ...], strides: tuple[int, ...], offset: int) -> Case:
    """A typical int Case for an explicit example: values -5 .. 5 over a buffer just large
    enough for this layout."""
    size = offset + sum((n - 1) * s for n, s in zip(shape, strides) if s > 0) + 1
    return Case(np.arange(size, dtype=np.int64) * 7 % 11 - 5, Layout(shape, strides, offset))


MATMUL_RULE = "np.matmul: batch dims broadcast, each element sums a's row times b's column"


@pytest.mark.exercise("4.6")
@at_most_examples(60)
@given(data=st.data())
def test_where_broadcasts_three_independent_5d_layouts(data):
    """where(c > 0.5, a, b) with three 5-d-broadcast operands on random layouts, b int64."""
    shapes = broadcastable_shapes(3, 5, 5, st.integers(1, 3))
    shape_c, shape_a, shape_b = data.draw(shapes, label="shapes of c, a and b")
    c = data.draw(cases(shape=shape_c), label="c")
    a = data.draw(cases(shape=shape_a), label="a")
    b = data.draw(cases(shape=shape_b, kind="int"), label="b")
    expected = np.where(c.array > 0.5, a.array, b.array)
    result = tenxor.where(c.tensor() > 0.5, a.tensor(), b.tensor())
    what = "where(c > 0.5, a, b)"
    if result.dtype is not tenxor.float64:
        raise Mismatch(f"dtype of {what}", result.dtype, tenxor.float64, "float64 a, int64 b")
    rule = "np.where: a's element where the condition holds, else b's; all three broadcast"
    assert_same(result, expected, what=what, rule=rule)
    flipped = tenxor.where(c.tensor() <= 0.5, b.tensor(), a.tensor())
    assert_same(flipped, expected, what="where(c <= 0.5, b, a)", rule=rule)


@pytest.mark.exercise("5.5")
@at_most_examples(40)
@given(data=st.data())
def test_matmul_with_three_broadcast_batch_dims_on_random_layouts(data):
    """(B1, B2, B3, n, k) @ (B1', B2', B3', k, m) with batch dims that broadcast and every
    operand on its own random layout (negative, zero and gap strides)."""
    shapes = broadcastable_shapes(2, 3, 3, st.integers(1, 3))
    batch_a, batch_b = data.draw(shapes, label="batch dims of a and b")
    batch_a = (1,) * (3 - len(batch_a)) + batch_a
    n, k, m = (data.draw(st.integers(0, 4), label=name) for name in ("n", "k", "m"))
    a = data.draw(cases(shape=batch_a + (n, k)), label="a")
    b = data.draw(cases(shape=batch_b + (k, m)), label="b")
    assert_matmul_close(a.tensor() @ b.tensor(), a.array, b.array, what="a @ b")


@pytest.mark.exercise("5.5")
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
    what = "a @ b of a transposed (2, 1, 3, 4, 5) a and a reversed (1, 4, 1, 5, 2) b"
    rule = "np.matmul's shape: batch dims broadcast, the inner dim is summed over"
    expect(f"shape of {what}", result.shape, (2, 4, 3, 4, 2), rule)
    assert_close(result, expected, rtol=1e-12, atol=1e-12 * 45, what=what, rule=MATMUL_RULE)


@pytest.mark.exercise("5.6")
@at_most_examples(60)
@given(data=st.data())
def test_softmax_of_5d_layouts_with_minus_inf_entries(data):
    """-inf logits get weight 0 and groups that are all -inf are nan, as in NumPy; every dim."""
    case = data.draw(cases(min_dims=5, max_dims=5), label="case")
    buffer = case.buffer.copy()
    offsets = st.lists(st.integers(0, len(buffer) - 1), max_size=len(buffer))
    planted = data.draw(offsets, label="storage offsets set to -inf")
    buffer[planted] = -np.inf
    shift = data.draw(st.sampled_from([0.0, 900.0]), label="shift")
    logits = Case(buffer + shift, case.layout)
    dim = data.draw(st.integers(-5, 4), label="dim")
    assume(logits.layout.shape[dim] > 0)
    expected = stable_softmax(logits.array, dim)
    result = logits.tensor().softmax(dim)
    what = f"softmax({dim}) of logits with -inf entries"
    rule = "exp(x - max) / sum along dim: a -inf logit weighs 0, a group all -inf is nan"
    assert_close(result, expected, rtol=1e-9, atol=1e-12, what=what, rule=rule)
    at_minus_inf = to_numpy(result)[np.isneginf(logits.array) & ~np.isnan(expected)]
    zeros = np.zeros_like(at_minus_inf)
    expect(
        f"entries of {what} at -inf logits", at_minus_inf, zeros, "a -inf logit weighs exactly 0"
    )


# ---------------------------------------------------------------------------------------------
# 5.4 combine_fold_values and Tenxor.combine_fold
# ---------------------------------------------------------------------------------------------

# Several reduced dims of a 4-d shape, none of them next to another, in any order and sign.
APART = [(0, 2), (1, 3), (-1, -3), (3, 0), (0, 3), (-4, 1, 3), (2, -4)]


def cross(w, x, y, z):
    """w * x - y * z: which operand goes where shows."""
    return w * x - y * z


@pytest.mark.exercise("5.4")
@at_most_examples(30)
@given(fused_operands(4, min_dims=4, max_dims=4), st.sampled_from(APART))
def test_combine_fold_values_of_four_operands_folded_by_fsum_over_dims_apart(drawn, dims):
    """Four operands (some 0-d, some expanded, on any layouts) broadcast to 4 dims, combined by
    w * x - y * z and folded by math.fsum over dims that are not adjacent: NumPy's sums."""
    operands, _, keepdim = drawn
    shape, values = combine_fold_values(cross, math.fsum, data_of(operands), dims, keepdim)
    w, x, y, z = (case.array for case in operands)
    expected = np.sum(w * x - y * z, axis=dims, keepdims=keepdim)
    expect("shape of the result", shape, expected.shape, shape_rule(keepdim))
    rule = "np.sum over the dims of w * x - y * z, the operands broadcast, in this order"
    expect_close_values("values of the result", values, expected, rule)


@pytest.mark.exercise("5.4")
@at_most_examples(30)
@given(fused_operands(2, kind="int", min_dims=4, max_dims=4), st.sampled_from(APART))
def test_combine_fold_values_hands_fold_groups_of_dims_apart_in_row_major_order(drawn, dims):
    """fold=tuple over dims that are not adjacent: each group holds a - b in row-major order
    of the reduced dims, the groups in row-major order of the kept dims."""
    operands, _, keepdim = drawn
    expect_groups_of_differences(operands, dims, keepdim)


@pytest.mark.exercise("5.4")
@pytest.mark.parametrize(
    "dims, keepdim",
    [(None, True), ((2, 0, 1), True), ((-1, -2, -3), False), ((0, 2), True), ((-1, 0), False),
     (1, False)],
    ids=compact,
)  # fmt: skip
def test_combine_fold_values_with_a_0d_operand_and_every_dim_reduced(dims, keepdim):
    """x (3, 1, 4) stored transposed, a 0-d y at storage offset 2 and z (2, 4), a column
    expanded with stride 0: combined by x * y + z into (3, 2, 4) and folded by math.fsum;
    keepdim with every dim reduced keeps three dims of size 1."""
    x = np.arange(12.0).reshape(3, 1, 4) * 0.75 - 4.0
    base = np.ascontiguousarray(np.swapaxes(x, -1, -2))
    column = np.array([0.5, -2.0])
    operands = [
        view_case(base, np.swapaxes(base, -1, -2)),
        Case(np.array([9.0, 9.0, -1.5, 9.0]), Layout((), (), 2)),
        view_case(column, np.broadcast_to(column[:, None], (2, 4))),
    ]
    shape, values = combine_fold_values(times_plus, math.fsum, data_of(operands), dims, keepdim)
    expected = np.sum(x * -1.5 + column[:, None], axis=dims, keepdims=keepdim)
    what = f"the result over dims {dims}, keepdim={keepdim}"
    expect(f"shape of {what}", shape, expected.shape, shape_rule(keepdim))
    rule = "np.sum of x * y + z over the dims: a 0-d operand meets every element"
    expect_close_values(f"values of {what}", values, expected, rule)


@pytest.mark.exercise("5.4")
@pytest.mark.parametrize("keepdim", [False, True])
def test_combine_fold_values_folds_an_empty_group_to_the_folds_own_answer(keepdim):
    """Shapes (2, 0, 3), (3,) and (2, 1, 1): over dim 1 each of the 6 groups is empty and fold
    still runs once for it (math.fsum gives 0.0, tuple gives (), max raises its ValueError);
    over dim 0 the result has no elements and fold never runs."""
    operands = [
        contiguous_case(np.zeros((2, 0, 3))),
        contiguous_case(np.array([1.0, 2.0, 3.0])),
        contiguous_case(np.array([[[4.0]], [[5.0]]])),
    ]
    data = data_of(operands)
    for dims, outputs in [(1, 6), ((1, 2), 2), (-2, 6), (0, 0), ((0, 2), 0)]:
        empty = np.zeros((2, 0, 3))
        expected = np.sum(empty, axis=dims, keepdims=keepdim)
        over = f"over dims {dims}, keepdim={keepdim}"
        shape, values = combine_fold_values(max, math.fsum, data, dims, keepdim)
        expect(f"shape of the result {over}", shape, expected.shape, shape_rule(keepdim))
        rule = "math.fsum of an empty group is 0.0; a result with no elements holds no values"
        expect(f"values of the result {over}", values, expected.ravel().tolist(), rule)
        _, groups = combine_fold_values(max, tuple, data, dims, keepdim)
        rule = "fold runs once per output element, with the group's elements (here none)"
        expect(f"groups handed to fold {over}", groups, [()] * outputs, rule)
        if outputs:
            with raises_naming(ValueError, rule="max() of an empty group raises; it passes"):
                combine_fold_values(max, max, data, dims, keepdim)


@pytest.mark.exercise("5.4")
@pytest.mark.parametrize("dims", [(0, 2), (3, 1), (-1, -4)], ids=compact)
def test_combine_fold_values_combines_one_group_at_a_time_over_dims_apart(dims):
    """x (2, 3, 2, 3), y (3, 2, 3) expanded with stride 0 and z (3,) reversed, reduced over two
    dims that are not adjacent (keepdim): when fold is called for output element g, combine
    has run at most (g + 1) * group size times, exactly that once fold has taken the group,
    and fold got an iterator."""
    x = contiguous_case(np.arange(36.0).reshape(2, 3, 2, 3) % 5 - 2)
    column = np.arange(6.0) - 2.5
    y = view_case(column, np.broadcast_to(column.reshape(3, 2, 1), (3, 2, 3)))  # stride 0
    z = Case(np.array([0.5, 1.5, -1.0]), Layout((3,), (-1,), 2))
    calls = 0

    def counting(a, b, c):
        nonlocal calls
        calls += 1
        return a * b + c

    handed = []  # per call of fold: (whether it got an iterator, calls before, calls after)

    def recording_fsum(group):
        before, is_iterator = calls, isinstance(group, Iterator)
        total = math.fsum(group)
        handed.append((is_iterator, before, calls))
        return total

    operands = data_of([x, y, z])
    shape, values = combine_fold_values(counting, recording_fsum, operands, dims, True)
    combined = x.array * y.array + z.array
    expected = np.sum(combined, axis=dims, keepdims=True)
    expect("shape of the result", shape, expected.shape, shape_rule(True))
    expect_close_values("values of the result", values, expected, "np.sum of x * y + z")
    size = combined.size // expected.size
    expect("number of calls of fold", len(handed), expected.size, "one per output element")
    for g, (is_iterator, before, after) in enumerate(handed):
        rule = "fold gets an iterator, and combine runs as fold takes the elements"
        expect(f"fold got an iterator for output element {g}", is_iterator, True, rule)
        if before > (g + 1) * size:
            rule = "only the group being folded is combined; the combined tensor never exists"
            what = f"calls of combine when fold was called for output element {g}"
            raise Mismatch(what, before, Words(f"at most {(g + 1) * size}"), rule)
        rule = "each element is combined once, when fold takes it"
        expect(f"calls of combine once fold had taken group {g}", after, (g + 1) * size, rule)


@pytest.mark.exercise("5.4")
@at_most_examples(40)
@given(fused_operands(2, kind="bool"), st.sampled_from(["any", "all"]))
def test_tensor_combine_fold_of_bools_with_any_and_all(drawn, fold):
    """t.combine_fold(operator.and_, u, fold=any or all) of bool tensors on any layouts: a
    bool tensor (the operands' dtype) holding np.any or np.all of t & u along the dims."""
    (a, b), dims, keepdim = drawn
    t, u = a.tensor(), b.tensor()
    fold_fn = {"any": any, "all": all}[fold]
    result = t.combine_fold(operator.and_, u, fold=fold_fn, dim=dims, keepdim=keepdim)
    expected = getattr(np, fold)(a.array & b.array, axis=dims, keepdims=keepdim)
    what = f"t.combine_fold(operator.and_, u, fold={fold}, dim={dims}, keepdim={keepdim})"
    expect(f"dtype of {what}", result.dtype, tenxor.bool, "bool with bool stays bool")
    rule = f"np.{fold} of t & u over the dims (an empty group gives {fold}() of nothing)"
    assert_same(result, expected, what=what, rule=rule)


SUM_RULE = "np.sum over the dims, in row-major order of the kept dims"
SIZE_RULE = "fold is called once per group, with the whole group"


@pytest.mark.exercise("5.1")
@at_most_examples(30)
@given(cases(min_dims=4, max_dims=4, kind="int"))
@example(int_case((2, 3, 2, 2), (1, 2, 6, -12), offset=12))
def test_reduce_values_over_every_subset_of_dims_of_a_4d_layout(case):
    """Every non-empty set of dims (given in reverse, as negative dims), keepdim or not: the
    sum and the group size match NumPy, and each group holds NumPy's elements."""
    data = case.buffer.tolist()
    calls, checks = [], []  # each call of reduce_values, and its checks: (what, part, due, rule)
    for count in range(1, 5):
        for subset in itertools.combinations(range(4), count):
            dims = tuple(d - 4 for d in reversed(subset))
            kept = [d for d in range(4) if d not in subset]
            moved = np.transpose(case.array, kept + list(subset))
            groups = moved.reshape(
                math.prod(case.array.shape[d] for d in kept),
                math.prod(case.array.shape[d] for d in subset),
            )
            for keepdim in (False, True):
                over = f"over dims {dims}, keepdim={keepdim}"
                expected = np.sum(case.array, axis=dims, keepdims=keepdim)
                counts = np.sum(np.ones_like(case.array), axis=dims, keepdims=keepdim)
                calls += [(fold, data, case.layout, dims, keepdim) for fold in (sum, len, sorted)]
                checks += [
                    [
                        (f"shape of the sum {over}", 0, expected.shape, shape_rule(keepdim)),
                        (f"values of the sum {over}", 1, expected.ravel().tolist(), SUM_RULE),
                    ],
                    [(f"group sizes len returned {over}", 1, counts.ravel().tolist(), SIZE_RULE)],
                    [
                        (
                            f"what fold=sorted returned {over}",
                            1,
                            [sorted(group) for group in groups.tolist()],
                            "one group per kept index, in row-major order of the kept dims",
                        )
                    ],
                ]
    for answer, expectations in zip(each_call(reduce_values, calls), checks, strict=True):
        for what, part, due, rule in expectations:
            expect(what, answer[part], due, rule)


@pytest.mark.exercise("5.7")
@at_most_examples(60)
@given(data=st.data())
def test_masked_softmax_of_4d_layouts_with_broadcast_masks(data):
    """4-d logits near +-1000 and a mask on its own layout broadcast over some dims: NumPy's
    masked softmax, exact zeros where masked and in fully masked groups."""
    case = data.draw(cases(min_dims=4, max_dims=4), label="case")
    shift = data.draw(st.sampled_from([1000.0, -1000.0]), label="shift")
    logits = Case(case.buffer + shift, case.layout)
    shape = case.layout.shape
    ones = [data.draw(st.booleans(), label=f"mask dim {d} is 1") for d in range(len(shape))]
    mask_shape = tuple(1 if one else n for one, n in zip(ones, shape))
    dropped = data.draw(st.integers(0, 4), label="leading dims the mask drops")
    mask = data.draw(cases(shape=mask_shape[dropped:], kind="bool"), label="mask")
    dim = data.draw(st.integers(-4, 3), label="dim")
    assume(shape[dim] > 0)
    expected = masked_softmax_reference(logits.array, mask.array, dim)
    result = tenxor.masked_softmax(logits.tensor(), mask.tensor(), dim)
    what = f"masked_softmax(logits, mask of shape {mask_shape[dropped:]}, {dim})"
    rule = "a softmax over the kept entries of each group; masked entries 0"
    assert_close(result, expected, rtol=1e-9, atol=1e-12, what=what, rule=rule)
    actual = to_numpy(result)
    keep = np.broadcast_to(mask.array, shape)
    masked = actual[~keep]
    expect(
        f"masked entries of {what}", masked, np.zeros_like(masked), "a masked entry is exactly 0"
    )
    nans = int(np.isnan(actual).sum())
    expect(f"number of NaNs in {what}", nans, 0, "a fully masked group is 0, not nan")


@pytest.mark.exercise("5.3")
@given(cases(min_dims=5, max_dims=5, kind="int"))
@example(int_case((2, 3, 1, 2, 2), (1, 2, 5, -6, 12), offset=6))
def test_first_largest_position_of_every_group_of_5d_layouts_with_many_ties(case):
    """Values 0..2 only, so most groups have tied maxima: each group that argmax folds, along
    each dim of a 5-d layout and over all of it, gives the first of them, as np.argmax."""
    ties = case.array % 3
    groups = [(None, ties.ravel())] if ties.size else []  # (the dim argmax folds, a group)
    for dim in range(5):
        if ties.shape[dim] > 0:
            rows = np.moveaxis(ties, dim, -1).reshape(-1, ties.shape[dim])
            groups += [(dim, row) for row in rows]
    calls = [(row.tolist(),) for _, row in groups]
    answers = each_call(first_largest_position, calls)
    for (dim, row), (group,) in zip(groups, calls, strict=True):
        expected = int(np.argmax(row))
        what = f"first_largest_position({group}), a group of t.argmax({dim}), t of {ties.shape}"
        expect(what, next(answers), expected, "the first of tied maxima, as np.argmax")
