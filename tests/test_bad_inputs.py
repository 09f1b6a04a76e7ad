"""Bad input across the public API and the exercise functions.

Every row is one bad call: it must raise the given error type with a message that names the
offending values (the shape, dim, index, dtype or value involved), in any order and in any
words. Each row is graded under the exercise whose function rejects the input, and calls
nothing outside that exercise and its prerequisites: inputs are built with the test helpers,
never with other exercises.
"""

from __future__ import annotations

import operator

import numpy as np
import pytest

import tenxor
from tenxor.core import Tenxor
from tenxor.reductions import combine_fold_values
from tenxor.storage import Storage, byte_strides, numel, round_to_bfloat16
from tenxor.strides import (
    Layout,
    column_major_strides,
    contiguous_strides,
    index_to_offset,
    next_index,
    offset_to_index,
)
from tenxor.views import infer_shape, permute_layout, squeeze_layout, unsqueeze_layout
from tests.support import from_numpy, make_tensor, raises_naming, row_major_strides


def bad(exercise: str, id: str, call, error: type[Exception], *values: object):
    """One row of the table: `call()` must raise `error` with a message naming `values`."""
    mark = pytest.mark.provided if exercise == "provided" else pytest.mark.exercise(exercise)
    return pytest.param(call, error, values, marks=mark, id=id)


# Inputs, built without any exercise function.


def matrix() -> Tenxor:
    """A contiguous float64 tensor of shape (2, 3)."""
    return from_numpy(np.arange(6.0).reshape(2, 3))


def cube() -> Tenxor:
    """A contiguous float64 tensor of shape (2, 1, 3)."""
    return from_numpy(np.arange(6.0).reshape(2, 1, 3))


def zeros(*shape: int) -> Tenxor:
    """A float64 tensor of zeros (shapes with a size-0 dim are fine)."""
    return from_numpy(np.zeros(shape))


def ints(*values: int) -> Tenxor:
    """A 1-D int64 tensor."""
    return from_numpy(np.array(values, dtype=np.int64))


def vector() -> Tenxor:
    """A contiguous float64 tensor of shape (3,)."""
    return from_numpy(np.arange(3.0))


def bools(*values: bool) -> Tenxor:
    """A 1-D bool tensor."""
    return from_numpy(np.array(values, dtype=np.bool_))


def scalar() -> Tenxor:
    """A 0-d float64 tensor."""
    return make_tensor(np.array([4.0]), Layout((), ()))


def layer(features_in: int, heads: int, features_out: int) -> tenxor.GATv2:
    """A GATv2 layer of zeros for nodes of `features_in` features, no biases."""
    theta = zeros(features_in, heads, features_out)
    return tenxor.GATv2(theta, theta, zeros(heads, features_out))


def operand(*shape: int) -> tuple[list[float], Layout]:
    """A (data, layout) operand of the fused kernel: zeros read in row-major order."""
    return [0.0] * int(np.prod(shape)), Layout(shape, row_major_strides(shape))


def transposed() -> Tenxor:
    """The transpose of a contiguous (2, 3) tensor: shape (3, 2), strides (1, 3)."""
    return make_tensor(np.arange(6.0), Layout((3, 2), (1, 3)))


BAD_INPUTS = [
    # 1.1 element count
    bad("1.1", "numel-negative-size", lambda: numel((2, -3)), ValueError,
        (2, -3), -3),
    bad("provided", "item-of-six-elements", lambda: matrix().item(), ValueError,
        (2, 3), 6),
    bad("provided", "item-of-no-elements", lambda: zeros(0, 2).item(), ValueError,
        (0, 2), 0),
    bad("provided", "bool-of-two-elements", lambda: bool(bools(True, False)), ValueError,
        (2,)),
    # 1.2 bfloat16 rounding
    bad("1.2", "bfloat16-pattern-above-32-bits", lambda: round_to_bfloat16(2**32), ValueError,
        4294967296),
    bad("1.2", "bfloat16-negative-pattern", lambda: round_to_bfloat16(-1), ValueError,
        -1),
    # 1.3 byte strides
    bad("1.3", "byte-strides-itemsize-0", lambda: byte_strides((3, 1), 0), ValueError,
        0),
    # 2.1 constructors, layouts and storage
    bad("provided", "zeros-negative-size", lambda: tenxor.zeros(2, -3), ValueError,
        (2, -3)),
    bad("provided", "zeros-float-size", lambda: tenxor.zeros(2, 3.5), TypeError,
        3.5),
    bad("provided", "zeros-unknown-dtype", lambda: tenxor.zeros(2, dtype="complex"), TypeError,
        "complex"),
    bad("provided", "from-values-wrong-count",
        lambda: Tenxor.from_values([1.0, 2.0, 3.0], (2, 2), tenxor.float64), ValueError,
        3, (2, 2)),
    bad("provided", "tensor-ragged-rows", lambda: tenxor.tensor([[1, 2], [3]]), ValueError,
        1, (1,), 0, (2,)),
    bad("provided", "tensor-int64-overflow", lambda: tenxor.tensor([1, 2**63]), OverflowError,
        9223372036854775808, "int64"),
    bad("provided", "arange-step-0", lambda: tenxor.arange(0, 5, 0), ValueError,
        0),
    bad("provided", "rand-low-equals-high", lambda: tenxor.rand(2, low=1.0, high=1.0), ValueError,
        1.0),
    bad("2.1", "layout-past-the-storage-end",
        lambda: Tenxor(Storage([0.0] * 6), Layout((2, 3), contiguous_strides((2, 3)), 1)),
        IndexError, 1, 6),
    bad("2.1", "layout-strides-of-another-shape",
        lambda: Layout((2, 3), contiguous_strides((3,))), ValueError,
        (2, 3), 2, (1,), 1),
    bad("2.1", "layout-negative-offset",
        lambda: Layout((2, 3), contiguous_strides((2, 3)), -1), ValueError,
        -1),
    bad("2.1", "layout-float-size",
        lambda: Layout((2, 3.0), contiguous_strides((2, 3))), TypeError,
        (2, 3.0)),
    # 2.2 column-major strides
    bad("2.2", "column-major-layout-past-the-storage-end",
        lambda: Tenxor(Storage([0.0] * 5), Layout((2, 3), column_major_strides((2, 3)))),
        IndexError, 0, 5),
    # 2.3 index -> offset
    bad("2.3", "index-to-offset-short-index",
        lambda: index_to_offset((1,), Layout((2, 3), (3, 1))), IndexError,
        (1,), 1, (2, 3), 2),
    bad("2.3", "index-to-offset-entry-too-large",
        lambda: index_to_offset((1, 3), Layout((2, 3), (3, 1))), IndexError,
        3, 1),
    bad("2.3", "index-to-offset-negative-entry",
        lambda: index_to_offset((-1, 0), Layout((2, 3), (3, 1), 2)), IndexError,
        -1, 0, 2),
    # 2.4 offset -> index
    bad("2.4", "offset-to-index-past-the-end", lambda: offset_to_index(6, (2, 3)), IndexError,
        6, (2, 3)),
    bad("2.4", "offset-to-index-negative", lambda: offset_to_index(-1, (2, 3)), IndexError,
        -1, (2, 3)),
    # 2.5 next index
    bad("2.5", "next-index-entry-out-of-range", lambda: next_index((0, 3), (2, 3)), IndexError,
        3, 1),
    bad("2.5", "next-index-wrong-length", lambda: next_index((0,), (2, 3)), IndexError,
        (0,), 1, (2, 3), 2),
    # 3.1 inferring -1
    bad("3.1", "infer-two-minus-ones", lambda: infer_shape((-1, -1), 6), ValueError,
        (-1, -1)),
    bad("3.1", "infer-minus-one-does-not-divide", lambda: infer_shape((4, -1), 6), ValueError,
        (4, -1), 6),
    bad("3.1", "infer-minus-one-next-to-size-0", lambda: infer_shape((0, -1), 0), ValueError,
        (0, -1)),
    bad("3.1", "infer-wrong-element-count", lambda: infer_shape((4, 2), 6), ValueError,
        (4, 2), 8, 6),
    bad("3.1", "infer-negative-size", lambda: infer_shape((2, -2), 4), ValueError,
        (2, -2), -2),
    # 3.2 squeeze
    bad("3.2", "squeeze-dim-out-of-range", lambda: cube().squeeze(3), IndexError,
        3),
    bad("3.2", "squeeze-dim-of-size-2", lambda: cube().squeeze(0), ValueError,
        0, 2, (2, 1, 3)),
    bad("3.2", "squeeze-one-of-two-dims-has-size-3",
        lambda: squeeze_layout(Layout((2, 1, 3), (3, 3, 1)), (1, 2)), ValueError,
        2, 3, (2, 1, 3)),
    bad("3.2", "squeeze-float-dim", lambda: cube().squeeze(1.5), TypeError, 1.5),
    # 3.3 unsqueeze
    bad("3.3", "unsqueeze-dim-too-large", lambda: cube().unsqueeze(4), IndexError,
        4, (2, 1, 3)),
    bad("3.3", "unsqueeze-dim-too-small", lambda: cube().unsqueeze(-5), IndexError,
        -5, (2, 1, 3)),
    bad("3.3", "unsqueeze-0d-at-2", lambda: unsqueeze_layout(Layout((), ()), 2), IndexError,
        2, ()),
    bad("3.3", "unsqueeze-float-dim", lambda: cube().unsqueeze(1.5), TypeError, 1.5),
    # 3.4 permute and transpose
    bad("3.4", "permute-too-few-dims", lambda: cube().permute(0, 1), ValueError,
        (0, 1), 2, (2, 1, 3), 3),
    bad("3.4", "permute-repeated-dim", lambda: cube().permute(0, 0, 1), ValueError,
        (0, 0, 1)),
    bad("3.4", "permute-dim-out-of-range", lambda: cube().permute(0, 1, 3), IndexError,
        3),
    bad("3.4", "permute-negative-dim-out-of-range",
        lambda: permute_layout(Layout((2, 3), (3, 1)), (1, -3)), IndexError,
        -3, 2),
    bad("provided", "transpose-dim-out-of-range", lambda: matrix().transpose(0, 2), IndexError,
        2),
    # 3.5 indexing
    bad("3.5", "int-index-past-the-end", lambda: matrix()[2], IndexError,
        2, 0),
    bad("3.5", "negative-index-too-small", lambda: matrix()[:, -4], IndexError,
        -4, 1, 3),
    bad("3.5", "index-after-none-counts-dims", lambda: matrix()[None, 0, 3], IndexError,
        3, 1),
    bad("3.5", "too-many-indices", lambda: matrix()[0, 0, 0], IndexError,
        3, (2, 3)),
    bad("3.5", "two-ellipses", lambda: matrix()[..., 0, ...], IndexError, ...),
    bad("3.5", "float-index", lambda: matrix()[1.5], TypeError, 1.5, "float"),
    bad("3.5", "bool-index", lambda: matrix()[True], TypeError, True),
    bad("3.5", "slice-step-0", lambda: matrix()[::0], ValueError),
    bad("3.5", "list-index-entry-past-the-end", lambda: matrix()[[0, 2]], IndexError,
        2, 0),
    bad("3.5", "list-index-entry-too-negative", lambda: matrix()[:, [0, -4]], IndexError,
        -4, 1, 3),
    bad("provided", "two-list-indices", lambda: matrix()[[0, 1], [1]], IndexError,
        2),
    bad("3.5", "tprint-position-out-of-range",
        lambda: tenxor.tensor_to_string(matrix(), (5, None)), IndexError,
        5, 0, 2),
    # 3.7 view and reshape (3.1 rejects the shapes that cannot hold the elements)
    bad("3.7", "view-needs-a-copy", lambda: transposed().view(6), ValueError,
        (3, 2), (1, 3), (6,)),
    bad("3.1", "view-two-minus-ones", lambda: matrix().view(-1, -1), ValueError,
        (-1, -1)),
    bad("3.1", "reshape-minus-one-does-not-divide", lambda: matrix().reshape(4, -1),
        ValueError, (4, -1), 6),
    bad("3.1", "reshape-wrong-element-count", lambda: matrix().reshape(4, 2), ValueError,
        (4, 2), 8, 6),
    bad("3.1", "view-minus-one-next-to-size-0", lambda: zeros(0, 3).view(0, -1), ValueError,
        (0, -1)),
    bad("provided", "view-float-sizes", lambda: from_numpy(np.arange(4.0)).view(2.0, 2), TypeError,
        (2.0, 2)),
    bad("provided", "view-one-float-size", lambda: matrix().view(6.0), TypeError, 6.0),
    # 4.1 broadcast shapes
    bad("4.1", "broadcast-three-shapes",
        lambda: tenxor.broadcast_shapes((2, 3), (3,), (4, 1)), ValueError,
        (2, 3), (3,), (4, 1), 2, 4),
    bad("4.1", "broadcast-from-the-right", lambda: tenxor.broadcast_shapes((2, 3), (2,)),
        ValueError, (2, 3), (2,), 3, 2),
    bad("4.1", "broadcast-negative-size", lambda: tenxor.broadcast_shapes((2, -1), (2, 1)),
        ValueError, -1),
    bad("4.1", "where-not-broadcastable",
        lambda: tenxor.where(bools(True, False), zeros(3), zeros(3)), ValueError,
        (2,), (3,), 2, 3),
    # 4.2 expand
    bad("4.2", "expand-to-fewer-dims", lambda: matrix().expand(3), ValueError,
        (2, 3), (3,)),
    bad("4.2", "expand-dim-of-size-2", lambda: matrix().expand(4, 3), ValueError,
        (2, 3), (4, 3), 0, 2),
    bad("4.2", "broadcast-to-lines-up-from-the-right",
        lambda: tenxor.broadcast_to(zeros(2, 1), (2, 3, 4)), ValueError,
        (2, 1), (2, 3, 4), 0, 2),
    bad("4.2", "expand-to-a-negative-size", lambda: zeros(1).expand(-2), ValueError,
        (1,), (-2,), -2),
    # 4.4 reading values (printing)
    bad("provided", "tprint-wrong-number-of-dims",
        lambda: tenxor.tprint(matrix(), (0,)), ValueError, (0,), 1, 2),
    # 4.5 map
    bad("4.5", "map-float-into-int64", lambda: ints(1, 2).map(lambda x: x + 0.5), TypeError,
        "int64", 1.5),
    bad("4.5", "to-int64-of-nan", lambda: from_numpy(np.array([1.0, np.nan])).to("int64"),
        ValueError, "nan", "int64"),
    bad("4.5", "map-int64-overflow", lambda: ints(1, 2**62).map(lambda x: 2 * x),
        OverflowError, 9223372036854775808, "int64"),
    bad("provided", "negate-bool", lambda: -bools(True, False), TypeError, "-", "bool"),
    # 4.6 zip with broadcasting
    bad("4.6", "add-not-broadcastable", lambda: matrix() + zeros(2), ValueError,
        (2, 3), (2,), 3, 2),
    bad("4.6", "multiply-not-broadcastable", lambda: zeros(3) * zeros(4), ValueError,
        (3,), (4,), 3, 4),
    bad("4.6", "compare-not-broadcastable", lambda: matrix() < zeros(3, 2), ValueError,
        (2, 3), (3, 2)),
    bad("4.6", "int-to-negative-int-power", lambda: ints(2, 3) ** -1, ValueError,
        2, -1),
    bad("4.6", "int-to-negative-int-power-elementwise", lambda: ints(2, 3) ** ints(1, -2),
        ValueError, 3, -2),
    # 5.1 reductions
    bad("5.1", "sum-dim-out-of-range", lambda: matrix().sum(2), IndexError,
        2),
    bad("5.1", "sum-negative-dim-out-of-range", lambda: matrix().sum(-3), IndexError,
        -3, 2),
    bad("5.1", "sum-same-dim-twice", lambda: matrix().sum((0, 0)), ValueError,
        (0, 0)),
    bad("5.1", "sum-float-dim", lambda: matrix().sum(1.0), TypeError, 1.0),
    bad("5.1", "sum-int64-overflow", lambda: ints(2**62, 2**62).sum(), OverflowError,
        9223372036854775808, "int64"),
    bad("provided", "max-over-empty-dim", lambda: zeros(0, 3).max(0), ValueError,
        0, (0, 3)),
    # 5.2 mean
    bad("5.2", "mean-dim-out-of-range", lambda: matrix().mean(2), IndexError,
        2),
    # 5.3 argmax
    bad("provided", "argmax-dim-out-of-range", lambda: matrix().argmax(2), IndexError,
        2),
    bad("provided", "argmax-over-empty-dim", lambda: zeros(2, 0).argmax(1), ValueError,
        1, 0, (2, 0)),
    # 5.4 the fused kernel
    bad("5.4", "combine-fold-no-operands", lambda: combine_fold_values(operator.mul, sum, []),
        ValueError, 0),
    bad("5.4", "combine-fold-shapes-not-broadcastable",
        lambda: combine_fold_values(operator.mul, sum, [operand(2, 3), operand(3), operand(4, 1)]),
        ValueError, (2, 3), (3,), (4, 1), 2, 4),
    bad("5.4", "combine-fold-dim-out-of-range-of-the-broadcast-shape",
        lambda: combine_fold_values(operator.mul, sum, [operand(3), operand(2, 1, 1)], 5),
        IndexError, 5, 3),
    bad("5.4", "combine-fold-negative-dim-out-of-range",
        lambda: combine_fold_values(operator.mul, sum, [operand(3), operand(2, 1, 1)], (0, -4)),
        IndexError, -4, 3),
    bad("5.4", "combine-fold-same-dim-twice",
        lambda: combine_fold_values(operator.mul, sum, [operand(2, 3), operand(3)], (1, -1)),
        ValueError, (1, -1)),
    bad("5.4", "tensor-combine-fold-not-broadcastable",
        lambda: matrix().combine_fold(operator.mul, zeros(2)), ValueError, (2, 3), (2,), 3, 2),
    bad("5.4", "tensor-combine-fold-dim-out-of-range",
        lambda: tenxor.combine_fold(operator.mul, vector(), matrix(), dim=2), IndexError, 2),
    bad("5.4", "tensor-combine-fold-same-dim-twice",
        lambda: matrix().combine_fold(operator.mul, vector(), dim=(0, 0)), ValueError, (0, 0)),
    # 5.5 matmul
    bad("5.5", "matmul-inner-dims-differ", lambda: matrix() @ zeros(4, 2), ValueError,
        (2, 3), (4, 2), 3, 4),
    bad("5.5", "matmul-matrix-vector-inner-dims-differ", lambda: matrix() @ zeros(2),
        ValueError, (2, 3), (2,), 3, 2),
    bad("5.5", "matmul-vectors-of-different-lengths", lambda: vector() @ zeros(4), ValueError,
        (3,), (4,), 3, 4),
    bad("5.5", "matmul-0d-left", lambda: scalar() @ matrix(), ValueError,
        (), (2, 3)),
    bad("5.5", "matmul-0d-right", lambda: tenxor.matmul(matrix(), scalar()), ValueError,
        (2, 3), ()),
    bad("5.5", "matmul-batch-dims-not-broadcastable", lambda: zeros(2, 2, 3) @ zeros(3, 3, 4),
        ValueError, (2, 2, 3), (3, 3, 4), (2,), (3,)),
    # 5.6 softmax
    bad("5.6", "softmax-dim-out-of-range", lambda: matrix().softmax(2), IndexError,
        2),
    bad("5.6", "softmax-negative-dim-out-of-range", lambda: tenxor.softmax(matrix(), -3),
        IndexError, -3, 2),
    # 5.7 masked softmax
    bad("5.7", "masked-softmax-mask-not-broadcastable",
        lambda: matrix().masked_softmax(bools(True, False), -1), ValueError,
        (2,), (2, 3), 2, 3),
    bad("5.7", "masked-softmax-mask-of-more-dims",
        lambda: tenxor.masked_softmax(vector(), from_numpy(np.ones((2, 3), bool)), 0),
        ValueError, (3,), (2, 3)),
    bad("5.7", "masked-softmax-dim-out-of-range",
        lambda: tenxor.masked_softmax(matrix(), bools(True, False, True), 2), IndexError,
        2),
    # 6 GATv2: the inputs of the layer must fit together and fit its weights (check_batch and
    # check_edges, provided, run before the layer)
    bad("provided", "gatv2-adjacency-of-other-graphs",
        lambda: tenxor.gatv2(zeros(2, 3, 4), zeros(2, 4, 4), zeros(2, 3), layer(4, 2, 3)),
        ValueError, (2, 3, 4), (2, 4, 4), (2, 3)),
    bad("provided", "gatv2-node-mask-of-other-graphs",
        lambda: tenxor.gatv2(zeros(2, 3, 4), zeros(2, 3, 3), zeros(3, 2), layer(4, 2, 3)),
        ValueError, (2, 3, 4), (2, 3, 3), (3, 2)),
    bad("provided", "gatv2-x-without-a-batch-dim",
        lambda: tenxor.gatv2(zeros(3, 4), zeros(3, 3), zeros(3), layer(4, 2, 3)),
        ValueError, (3, 4), (3, 3), (3,)),
    bad("provided", "gatv2-theta-for-other-features",
        lambda: layer(5, 2, 3)(zeros(2, 3, 4), zeros(2, 3, 3), zeros(2, 3)),
        ValueError, (2, 3, 4), (5, 2, 3), (4, 2, 3)),
    bad("provided", "gatv2-attention-of-other-width",
        lambda: tenxor.GATv2(zeros(4, 2, 3), zeros(4, 2, 3), zeros(2, 6))(
            zeros(2, 3, 4), zeros(2, 3, 3), zeros(2, 3)),
        ValueError, (4, 2, 3), (4, 2, 6)),
    bad("provided", "gatv2-concat-bias-of-one-head",
        lambda: tenxor.GATv2(zeros(4, 2, 3), zeros(4, 2, 3), zeros(2, 3), bias=zeros(3))(
            zeros(2, 3, 4), zeros(2, 3, 3), zeros(2, 3)),
        ValueError, (3,), (6,)),
    bad("provided", "gatv2-mean-bias-of-all-heads",
        lambda: tenxor.GATv2(zeros(4, 2, 3), zeros(4, 2, 3), zeros(2, 3), bias=zeros(6),
                             concat=False)(zeros(2, 3, 4), zeros(2, 3, 3), zeros(2, 3)),
        ValueError, (6,), (3,)),
    bad("provided", "gatv2-edges-sources-and-targets-differ",
        lambda: tenxor.gatv2_edges(zeros(4, 4), ints(0, 1, 2), ints(1, 2), layer(4, 2, 3)),
        ValueError, (4, 4), (3,), (2,)),
    bad("provided", "gatv2-edges-edge-index-of-two-rows",
        lambda: tenxor.gatv2_edges(zeros(4, 4), from_numpy(np.zeros((2, 3), dtype=np.int64)),
                                   ints(1, 2, 3), layer(4, 2, 3)),
        ValueError, (2, 3), (3,)),
    bad("provided", "gatv2-edges-batched-x",
        lambda: layer(4, 2, 3).on_edges(zeros(1, 4, 4), ints(0, 1), ints(1, 2)),
        ValueError, (1, 4, 4), (2,)),
    bad("provided", "gatv2-edges-theta-for-other-features",
        lambda: tenxor.gatv2_edges(zeros(4, 5), ints(0), ints(1), layer(4, 2, 3)),
        ValueError, (4, 5), (4, 2, 3), (5, 2, 3)),
]  # fmt: skip


@pytest.mark.parametrize("call, error, values", BAD_INPUTS)
def test_bad_input_raises_an_error_naming_it(call, error, values):
    """The bad call raises the expected error, and its message names the offending values
    (in any order, with any words around them)."""
    with raises_naming(error, *values):
        call()
