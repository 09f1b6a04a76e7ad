"""Chapter 6: gather and scatter along the first dim, and a softmax within segments.

Expected values come from NumPy: fancy indexing (t[index]) for gather_rows, np.add.at and
np.maximum.at (or a plain loop over the index, for any other fold) for index_reduce, and a
softmax written per segment with NumPy for segment_softmax. Inputs are built from NumPy
arrays and results read back without calling any exercise.
"""

from __future__ import annotations

import operator
from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import tenxor
from tenxor.core import Tenxor
from tenxor.scatter import gather_rows, index_reduce, segment_softmax
from tests.support import (
    Mismatch,
    Scripted,
    assert_rows_close,
    assert_same,
    at_most_examples,
    expect,
    from_numpy,
    raises_naming,
    to_numpy,
    view_case,
)

INDEX_DTYPES = [np.int64, np.int32]


def index(values, dtype: type = np.int64) -> Tenxor:
    """An index tensor with the shape of `values` (a number gives a 0-d index)."""
    return from_numpy(np.array(values, dtype=dtype))


def rows(count: int, trailing: tuple[int, ...], seed: int = 0) -> np.ndarray:
    """`count` rows of `trailing` shape holding distinct numbers, so each row is recognisable."""
    values = np.random.default_rng(seed).permutation(count * int(np.prod(trailing, dtype=int)))
    return values.reshape(count, *trailing).astype(np.float64)


def assert_near(
    got: Tenxor,
    expected: np.ndarray,
    what: str,
    tolerance: float,
    rule: str,
    row_words: Callable[[int], str] = "row {}".format,
) -> None:
    """The tensor has the expected shape and each element is within `tolerance` of NumPy's
    (absolute and relative, as np.testing.assert_allclose with rtol = atol = tolerance)."""
    assert_rows_close(got, expected, what, rule, tolerance, tolerance, row_words)


GATHER_RULE = "result[k] = t[index[k]], as NumPy's t[index]"


# ---------------------------------------------------------------------------------------------
# 6.8 gather_rows
# ---------------------------------------------------------------------------------------------


@pytest.mark.exercise("6.8")
@pytest.mark.parametrize("dtype", INDEX_DTYPES, ids=["int64", "int32"])
@pytest.mark.parametrize("trailing", [(), (3,), (2, 2)], ids=str)
@pytest.mark.parametrize(
    "picks", [2, [0], [3, 1, 1, 0], [-1, -4, 2], [[0, 3, 3], [2, -2, 0]], []], ids=str
)
def test_gather_rows_copies_the_rows_an_index_names(dtype, trailing, picks):
    table = rows(4, trailing)
    picks = np.array(picks, dtype=dtype)
    expected = table[picks]
    got = gather_rows(from_numpy(table), from_numpy(picks))
    expect("dtype of the rows gathered", got.dtype.name, "float64", "the table's dtype")
    assert_same(got, expected, what="rows gathered", rule=GATHER_RULE)


@pytest.mark.exercise("6.8")
@pytest.mark.parametrize("kind", [np.int64, np.int32, np.float32, np.bool_])
def test_gather_rows_keeps_the_tables_dtype(kind):
    table = (np.arange(6).reshape(3, 2) % 2).astype(kind)
    got = gather_rows(from_numpy(table), index([2, 0, 2]))
    dtype = to_numpy(got).dtype.name
    expect("dtype of the rows gathered", dtype, table.dtype.name, "the table's dtype")
    assert_same(got, table[[2, 0, 2]], what="rows gathered", rule=GATHER_RULE)


@pytest.mark.exercise("6.8")
def test_gather_rows_of_a_view():
    base = rows(3, (4,))
    view = base.T[::-1]  # [4, 3], reversed rows of a transpose: strides (-1, 4)
    got = gather_rows(view_case(base, view).tensor(), index([3, 0, 0, 2]))
    rule = "the rows of the view, read through its strides (-1, 4)"
    assert_same(got, view[[3, 0, 0, 2]], what="rows gathered", rule=rule)


@pytest.mark.exercise("6.8")
def test_gather_rows_returns_a_copy():
    table = from_numpy(rows(3, (2,)))
    got = gather_rows(table, index([0, 1, 2]))
    what = "whether the rows gathered share the table's storage"
    expect(what, got.storage is table.storage, False, "gather_rows returns a copy")


@pytest.mark.exercise("6.8")
@pytest.mark.parametrize("dtype", ["float64", "bool"])
def test_gather_rows_rejects_an_index_that_is_not_integers(dtype):
    with raises_naming(TypeError, dtype):
        gather_rows(from_numpy(rows(3, (2,))), from_numpy(np.array([0, 1], dtype=dtype)))


@pytest.mark.exercise("6.8")
@pytest.mark.parametrize("bad, count", [(5, 3), (-4, 3), (1, 1)])
def test_gather_rows_rejects_an_index_out_of_range(bad, count):
    with raises_naming(IndexError, bad, count):
        gather_rows(from_numpy(rows(count, (2,))), index([0, bad]))


@pytest.mark.exercise("6.8")
def test_gather_rows_rejects_a_0d_table():
    with raises_naming(ValueError, ()):
        gather_rows(from_numpy(np.array(1.5)), index([0]))


# ---------------------------------------------------------------------------------------------
# 6.9 index_reduce
# ---------------------------------------------------------------------------------------------


def folded_by_numpy(start: np.ndarray, picks: np.ndarray, source: np.ndarray, ufunc) -> np.ndarray:
    """np.add.at or np.maximum.at on a copy of `start`, in the dtype that holds both."""
    result = start.astype(np.result_type(start, source))
    ufunc.at(result, picks, source)
    return result


def folded_in_order(start: np.ndarray, picks: np.ndarray, source: np.ndarray, fold) -> np.ndarray:
    """Every source row folded into the row its index names, k = 0, 1, ... in order."""
    result = start.astype(np.result_type(start, source))
    for k, i in enumerate(picks):
        for position in np.ndindex(*start.shape[1:]):
            result[(i, *position)] = fold(result[(i, *position)], source[(k, *position)])
    return result


ADD_RULE = "every source[k] added to row index[k], as np.add.at"
ORDER_RULE = "source rows folded in index order, k = 0, 1, ..."


@pytest.mark.exercise("6.9")
@pytest.mark.parametrize("dtype", INDEX_DTYPES, ids=["int64", "int32"])
@pytest.mark.parametrize("trailing", [(), (3,), (2, 2)], ids=str)
@pytest.mark.parametrize(
    "fold, ufunc", [(operator.add, np.add), (max, np.maximum)], ids=["add", "max"]
)
def test_index_reduce_folds_repeated_rows_like_numpy(dtype, trailing, fold, ufunc):
    rng = np.random.default_rng(len(trailing))
    start = rng.uniform(-1, 1, (4, *trailing))
    picks = np.array([1, 3, 1, -1, 0, 1, -4], dtype=dtype)
    source = rng.uniform(-1, 1, (len(picks), *trailing))
    expected = folded_by_numpy(start, picks, source, ufunc)
    got = index_reduce(from_numpy(start), from_numpy(picks), from_numpy(source), fold)
    expect("dtype of the folded rows", got.dtype.name, "float64", "float64 t and source")
    rule = f"every source[k] folded into row index[k], as np.{ufunc.__name__}.at"
    assert_near(got, expected, "the folded rows", 1e-12, rule)


@pytest.mark.exercise("6.9")
@at_most_examples(40)
@given(data=st.data())
@example(data=Scripted(rows=4, trailing=(2,), index=[1, 3, 1, -1, 0], seed=7))
@example(data=Scripted(rows=3, trailing=(0,), index=[], seed=0))  # the corners: no rows, size 0
def test_index_reduce_adds_like_np_add_at(data):
    count = data.draw(st.integers(1, 5), label="rows")
    trailing = tuple(data.draw(st.lists(st.integers(0, 3), max_size=2), label="trailing"))
    picks = np.array(
        data.draw(st.lists(st.integers(-count, count - 1), max_size=8), label="index"),
        dtype=np.int64,
    )
    rng = np.random.default_rng(data.draw(st.integers(0, 1000), label="seed"))
    start = rng.integers(-9, 9, (count, *trailing))
    source = rng.integers(-9, 9, (len(picks), *trailing))
    got = index_reduce(from_numpy(start), from_numpy(picks), from_numpy(source), operator.add)
    expect("dtype of the folded rows", got.dtype.name, "int64", "int64 t and source")
    expected = folded_by_numpy(start, picks, source, np.add)
    assert_same(got, expected, what="the folded rows", rule=ADD_RULE)


@pytest.mark.exercise("6.9")
def test_index_reduce_folds_in_index_order():
    start = np.zeros((3, 2), dtype=np.int64)
    picks = np.array([2, 0, 2, 2, 0])
    source = np.array([[1, 2], [3, 4], [5, 6], [7, 8], [9, 1]])
    # the last one wins; digits in order
    folds = {"fold(a, b) = b": lambda a, b: b, "fold(a, b) = 10 * a + b": lambda a, b: 10 * a + b}
    for name, fold in folds.items():
        got = index_reduce(from_numpy(start), from_numpy(picks), from_numpy(source), fold)
        expected = folded_in_order(start, picks, source, fold)
        assert_same(got, expected, what=f"the rows folded with {name}", rule=ORDER_RULE)


@pytest.mark.exercise("6.9")
def test_index_reduce_returns_a_copy_and_leaves_its_inputs_alone():
    start = np.arange(6.0).reshape(3, 2)
    t = from_numpy(start)
    got = index_reduce(t, index([1]), from_numpy(np.ones((1, 2))), operator.add)
    what = "whether the result shares t's storage"
    expect(what, got.storage is t.storage, False, "index_reduce returns a copy")
    assert_same(t, start, what="t after the call", rule="index_reduce leaves its inputs alone")
    expected = start + np.array([[0, 0], [1, 1], [0, 0]])
    assert_same(got, expected, what="the folded rows", rule="row 1 plus [1, 1]")


@pytest.mark.exercise("6.9")
def test_index_reduce_with_no_rows_to_fold_is_a_copy_of_t():
    start = np.arange(6.0).reshape(3, 2)
    got = index_reduce(from_numpy(start), index([]), from_numpy(np.zeros((0, 2))), operator.add)
    assert_same(got, start, what="the folded rows", rule="no rows to fold: a copy of t")


@pytest.mark.exercise("6.9")
@pytest.mark.parametrize(
    "t_dtype, source_dtype, result",
    [
        (np.int64, np.float64, tenxor.float64),
        (np.float64, np.int32, tenxor.float64),
        (np.int32, np.int64, tenxor.int64),
        (np.float32, np.float64, tenxor.float64),
        (np.float32, np.float32, tenxor.float32),
        (np.int32, np.int32, tenxor.int32),
    ],
    ids=lambda v: getattr(v, "__name__", str(v)),
)
def test_index_reduce_result_holds_both_dtypes(t_dtype, source_dtype, result):
    start = np.arange(6).reshape(3, 2).astype(t_dtype)
    picks = np.array([0, 2, 0])
    numbers = np.arange(6).reshape(3, 2)
    source = (numbers * 1.5 if source_dtype == np.float64 else numbers + 1).astype(source_dtype)
    got = index_reduce(from_numpy(start), from_numpy(picks), from_numpy(source), operator.add)
    rule = "the dtype that holds both t's and source's"
    expect("dtype of the folded rows", got.dtype.name, result.name, rule)
    expected = folded_by_numpy(start, picks, source, np.add)
    assert_same(got, expected, what="the folded rows", rule=ADD_RULE)


@pytest.mark.exercise("6.9")
@pytest.mark.parametrize(
    "t_shape, index_shape, source_shape",
    [
        ((3, 2), (2,), (3, 2)),  # one more source row than indices
        ((3, 2), (2,), (2, 3)),  # rows of another width
        ((3,), (2, 1), (2, 1)),  # a 2-d index
        ((3, 2), (2,), (2,)),  # source rows without the trailing dim
        ((), (1,), (1,)),  # a 0-d t has no rows
    ],
    ids=str,
)
def test_index_reduce_rejects_shapes_that_do_not_fit(t_shape, index_shape, source_shape):
    t, source = from_numpy(np.zeros(t_shape)), from_numpy(np.ones(source_shape))
    picks = from_numpy(np.zeros(index_shape, dtype=np.int64))
    with raises_naming(ValueError, t_shape, index_shape, source_shape):
        index_reduce(t, picks, source, operator.add)


@pytest.mark.exercise("6.9")
def test_index_reduce_rejects_a_float_index():
    t, source = from_numpy(np.zeros((3, 2))), from_numpy(np.ones((1, 2)))
    with raises_naming(TypeError, "float64"):
        index_reduce(t, from_numpy(np.array([0.0])), source, operator.add)


@pytest.mark.exercise("6.9")
@pytest.mark.parametrize("bad", [3, -4])
def test_index_reduce_rejects_an_index_out_of_range(bad):
    t, source = from_numpy(np.zeros((3, 2))), from_numpy(np.ones((2, 2)))
    with raises_naming(IndexError, bad, 3):
        index_reduce(t, index([0, bad]), source, operator.add)


# ---------------------------------------------------------------------------------------------
# 6.10 segment_softmax
# ---------------------------------------------------------------------------------------------


def softmax_per_segment(logits: np.ndarray, segment: np.ndarray, segments: int) -> np.ndarray:
    """For every segment s, a softmax over the rows k with segment[k] == s, the largest
    subtracted first, separately at every trailing position."""
    result = np.zeros(logits.shape, dtype=np.float64)
    for s in range(segments):
        chosen = segment == s
        if chosen.any():
            part = logits[chosen].astype(np.float64)
            e = np.exp(part - part.max(axis=0))
            result[chosen] = e / e.sum(axis=0)
    return result


SOFTMAX_RULE = "a softmax over the rows of each segment"


def assert_softmax(
    got: Tenxor,
    expected: np.ndarray,
    segment: np.ndarray,
    tolerance: float = 1e-12,
    rule: str = SOFTMAX_RULE,
) -> None:
    """The weights have the logits' shape, are finite and within `tolerance` of NumPy's; a
    failure names the first row that is off and its segment."""
    if not isinstance(got, Tenxor):
        raise Mismatch("type of the weights", type(got).__name__, "Tenxor")
    result = to_numpy(got)
    expect("shape of the weights", result.shape, expected.shape, "the logits' shape")
    infinite = np.argwhere(~np.isfinite(result))
    if infinite.size:
        row = int(infinite[0][0])
        what = f"row {row} (segment {segment[row]}) of the weights"
        finite = "finite: each segment's largest logit subtracted before exp"
        raise Mismatch(what, result[row].tolist(), expected[row].tolist(), finite)
    row_words = "row {} (segment {})".format
    assert_near(got, expected, "the weights", tolerance, rule, lambda k: row_words(k, segment[k]))


@pytest.mark.exercise("6.10")
@pytest.mark.parametrize("dtype", INDEX_DTYPES, ids=["int64", "int32"])
@pytest.mark.parametrize("trailing", [(), (3,), (2, 2)], ids=str)
def test_segment_softmax_is_a_softmax_within_each_segment(dtype, trailing):
    rng = np.random.default_rng(len(trailing))
    segment = np.array([2, 0, 2, 5, 0, 2, 3, 0], dtype=dtype)  # 1 and 4 empty, 3 and 5 alone
    logits = rng.normal(size=(len(segment), *trailing))
    got = segment_softmax(from_numpy(logits), from_numpy(segment), 6)
    expect("dtype of the weights", got.dtype.name, "float64", "the logits' dtype")
    assert_softmax(got, softmax_per_segment(logits, segment, 6), segment)
    totals = np.zeros((6, *trailing))
    np.add.at(totals, segment, to_numpy(got))
    sums = totals[[0, 2, 3, 5]]
    if not np.allclose(sums, 1.0):
        what = "sums of the weights of segments 0, 2, 3 and 5"
        raise Mismatch(what, sums.tolist(), np.ones_like(sums).tolist(), "each sums to 1")


@pytest.mark.exercise("6.10")
def test_segment_softmax_gives_a_row_alone_in_its_segment_weight_1():
    logits = np.array([[-7.0, 300.0], [0.5, -2.0], [1e4, 2.0]])
    got = segment_softmax(from_numpy(logits), index([2, 0, 1]), 3)
    rule = "a row alone in its segment gets weight 1, however large its logit"
    assert_same(got, np.ones((3, 2)), what="the weights", rule=rule)


@pytest.mark.exercise("6.10")
def test_segment_softmax_of_logits_in_the_thousands_does_not_overflow():
    logits = np.array([4000.0, 3999.0, -5000.0, -4000.0, -4001.0, 9000.0, 8990.0])
    segment = np.array([0, 0, 0, 1, 1, 2, 2])
    got = segment_softmax(from_numpy(logits), from_numpy(segment), 4)
    rule = "each segment's largest logit subtracted before exp, so nothing overflows"
    assert_softmax(got, softmax_per_segment(logits, segment, 4), segment, rule=rule)


@pytest.mark.exercise("6.10")
def test_segment_softmax_keeps_float32():
    logits = np.random.default_rng(3).normal(size=(6, 2)).astype(np.float32)
    segment = np.array([1, 1, 0, 1, 0, 2])
    got = segment_softmax(from_numpy(logits), from_numpy(segment), 3)
    expect("dtype of the weights", got.dtype.name, "float32", "the logits' dtype")
    expected = softmax_per_segment(logits, segment, 3)
    rule = f"{SOFTMAX_RULE}, in float32"
    assert_softmax(got, expected, segment, tolerance=1e-6, rule=rule)


@pytest.mark.exercise("6.10")
def test_segment_softmax_of_no_rows():
    got = segment_softmax(from_numpy(np.zeros((0, 2))), index([]), 3)
    assert_same(got, np.zeros((0, 2)), what="the weights", rule="no rows, no weights")
