"""Test support: layouts generated directly, tensors built from them, and NumPy as the oracle.

Nothing here calls an exercise function: inputs are made from a Storage and a Layout, and
results are read back through NumPy's own stride arithmetic. So one unfinished exercise
cannot make another exercise's tests fail.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import ml_dtypes
import numpy as np
from hypothesis import strategies as st
from numpy.lib.stride_tricks import as_strided

import tenxor
from tenxor.storage import Storage
from tenxor.strides import Layout
from tenxor.tensor import Tenxor

NUMPY_DTYPES = {
    "float64": np.float64,
    "float32": np.float32,
    "bfloat16": ml_dtypes.bfloat16,
    "int64": np.int64,
    "int32": np.int32,
    "bool": np.bool_,
}


def numpy_dtype(dtype: tenxor.DType) -> np.dtype:
    """The NumPy dtype of a tenxor dtype."""
    return np.dtype(NUMPY_DTYPES[dtype.name])


def row_major_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    """Row-major strides in elements, as NumPy computes them; a size-0 dim counts as size 1
    (PyTorch's convention, which tenxor follows)."""
    sizes = tuple(max(size, 1) for size in shape)
    return tuple(s // 8 for s in np.empty(sizes, dtype=np.float64).strides)


def reach(shape: tuple[int, ...], strides: tuple[int, ...]) -> tuple[int, int]:
    """The lowest and highest offsets (relative to the storage offset) a layout reads."""
    low = sum(min(0, (n - 1) * s) for n, s in zip(shape, strides) if n > 0)
    high = sum(max(0, (n - 1) * s) for n, s in zip(shape, strides) if n > 0)
    return low, high


def numpy_view(buffer: np.ndarray, layout: Layout) -> np.ndarray:
    """The NumPy view that `layout` describes over the 1-D `buffer` (read-only)."""
    if 0 in layout.shape:
        return np.empty(layout.shape, dtype=buffer.dtype)
    itemsize = buffer.dtype.itemsize
    return as_strided(
        buffer[layout.offset :],
        shape=layout.shape,
        strides=tuple(s * itemsize for s in layout.strides),
        writeable=False,
    )


def to_numpy(t: Tenxor) -> np.ndarray:
    """A copy of a tensor's elements as a NumPy array, read straight from storage + layout."""
    buffer = np.array(list(t.storage.values()), dtype=numpy_dtype(t.dtype))
    return numpy_view(buffer, t.layout).copy()


def make_tensor(buffer: np.ndarray, layout: Layout, dtype: tenxor.DType | None = None) -> Tenxor:
    """A Tenxor over a new Storage holding `buffer` (1-D), read through `layout`."""
    if dtype is None:
        dtype = {"f": tenxor.float64, "i": tenxor.int64, "b": tenxor.bool}[buffer.dtype.kind]
        dtype = {np.float32: tenxor.float32, np.int32: tenxor.int32}.get(buffer.dtype.type, dtype)
    return Tenxor(Storage(buffer.tolist(), dtype), layout)


def from_numpy(array: np.ndarray, dtype: tenxor.DType | None = None) -> Tenxor:
    """A contiguous Tenxor with the elements of `array`."""
    array = np.array(array, order="C", copy=True)  # keeps 0-d arrays 0-d
    layout = Layout(array.shape, row_major_strides(array.shape))
    return make_tensor(array.reshape(-1), layout, dtype)


# ---------------------------------------------------------------------------------------------
# Hypothesis strategies
# ---------------------------------------------------------------------------------------------

sizes = st.integers(0, 4) | st.integers(1, 3)  # size-0 and size-1 dims are common


@dataclass(frozen=True)
class Case:
    """A layout over a storage buffer, with the NumPy view it describes."""

    buffer: np.ndarray
    layout: Layout

    @property
    def array(self) -> np.ndarray:
        return numpy_view(self.buffer, self.layout)

    def tensor(self, dtype: tenxor.DType | None = None) -> Tenxor:
        return make_tensor(self.buffer, self.layout, dtype)


@st.composite
def layouts(
    draw: st.DrawFn,
    min_dims: int = 0,
    max_dims: int = 5,
    shape: tuple[int, ...] | None = None,
    max_stride: int = 7,
) -> tuple[Layout, int]:
    """A layout (any strides: zero, negative, gaps) and the storage size it needs."""
    if shape is None:
        ndim = draw(st.integers(min_dims, max_dims))
        shape = tuple(draw(sizes) for _ in range(ndim))
    strides = tuple(draw(st.integers(-max_stride, max_stride)) for _ in shape)
    low, high = reach(shape, strides)
    offset = -low + draw(st.integers(0, 3))
    size = offset + high + 1 + draw(st.integers(0, 3))
    return Layout(shape, strides, offset), size


@st.composite
def cases(
    draw: st.DrawFn,
    min_dims: int = 0,
    max_dims: int = 5,
    shape: tuple[int, ...] | None = None,
    kind: str = "float",
) -> Case:
    """A Case with random values of `kind` ("float", "int" or "bool") in its buffer."""
    layout, size = draw(layouts(min_dims=min_dims, max_dims=max_dims, shape=shape))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    if kind == "float":
        buffer = rng.uniform(-10, 10, size)
    elif kind == "int":
        buffer = rng.integers(-20, 20, size).astype(np.int64)
    else:
        buffer = rng.integers(0, 2, size).astype(np.bool_)
    return Case(buffer, layout)


def contiguous_case(array: np.ndarray) -> Case:
    """A Case whose layout is the row-major layout of `array`."""
    array = np.array(array, order="C", copy=True)
    return Case(array.reshape(-1).copy(), Layout(array.shape, row_major_strides(array.shape)))


def assert_same(actual: Tenxor, expected: np.ndarray, exact: bool = True) -> None:
    """The tensor has the expected shape and elements (NaNs equal, close for floats)."""
    result = to_numpy(actual)
    assert result.shape == expected.shape, f"shape {result.shape} != expected {expected.shape}"
    if exact:
        np.testing.assert_array_equal(result, expected)
    else:
        np.testing.assert_allclose(result, expected, rtol=1e-9, atol=1e-12, equal_nan=True)


def storage_shared(a: Tenxor, b: Tenxor) -> bool:
    """True when the two tensors read the same Storage object."""
    return a.storage is b.storage


def ulp_close(a: float, b: float) -> bool:
    """Equal, or both NaN."""
    return a == b or (math.isnan(a) and math.isnan(b))
