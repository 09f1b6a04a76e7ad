"""Harder checks for chapters 1 and 2: every bfloat16 upper half, 5-d layouts with large
strides, every offset and every step of 5-d shapes, and contiguity of every small layout."""

from __future__ import annotations

import functools
import itertools

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from numpy.lib.stride_tricks import as_strided

from tenxor.storage import round_to_bfloat16
from tenxor.strides import Layout, index_to_offset, is_contiguous, next_index, offset_to_index
from tests.bfloat16 import bfloat16_bits_of_float32_bits, values_of_bits
from tests.support import Mismatch, each_call, expect, layouts, numpy_view
from tests.test_storage import NAN_STAYS, ROUNDING, Bits, pattern_of
from tests.test_strides import ODOMETER, OFFSET_RULE, UNRAVEL, contiguity_rule


@pytest.mark.exercise("1.2")
def test_round_to_bfloat16_for_every_sign_and_exponent():
    """Every sign and exponent (infinities and NaNs included), with the kept mantissa bits at
    their edges (where rounding up carries into the exponent, and both parities of a tie),
    each with the three lower halves around the tie, rounds as ml_dtypes rounds it; every NaN
    stays a NaN. (Random lower halves are the public property tests' part.)"""
    sign_and_exponent = np.arange(2**9, dtype=np.uint32) << 7
    kept = np.array([0x00, 0x01, 0x3F, 0x40, 0x7E, 0x7F], dtype=np.uint32)
    upper = (sign_and_exponent[:, None] | kept[None, :]).ravel()
    lower = np.array([0x7FFF, 0x8000, 0x8001], dtype=np.uint32)
    bits = ((upper[:, None] << 16) | lower[None, :]).ravel()
    expected = bfloat16_bits_of_float32_bits(bits)
    nan = np.isnan(bits.view(np.float32))
    calls = [(b,) for b in bits.tolist()]
    result = np.array(list(each_call(round_to_bfloat16, calls)), dtype=np.int64)
    outside = np.flatnonzero((result < 0) | (result >= 2**16))
    if outside.size:
        i = outside[0]
        what = f"{pattern_of(int(bits[i]))} (the first of {outside.size} outside 16 bits)"
        raise Mismatch(what, Bits(result[i]), "a 16-bit pattern, 0 .. 0xffff")
    wrong = np.flatnonzero(~nan & (result != expected))
    if wrong.size:
        i = wrong[0]
        what = f"{pattern_of(int(bits[i]))} (the first of {wrong.size} wrong)"
        raise Mismatch(what, Bits(result[i]), Bits(expected[i]), ROUNDING)
    result_nan = np.isnan(values_of_bits(result[nan].astype(np.uint16)))
    if not result_nan.all():
        i = np.flatnonzero(nan)[np.flatnonzero(~result_nan)[0]]
        what = f"{pattern_of(int(bits[i]))} (the first of {int((~result_nan).sum())} NaNs lost)"
        due = "a NaN: 0x7f81 .. 0x7fff or 0xff81 .. 0xffff"
        raise Mismatch(what, Bits(result[i]), due, NAN_STAYS)


@pytest.mark.exercise("2.3")
@given(layouts(min_dims=5, max_dims=5, max_stride=2000))
@example((Layout((2, 3, 1, 2, 2), (1500, -400, 2000, 30, 1), 800), 2332))
def test_index_to_offset_of_5d_layouts_with_large_strides(layout_and_size):
    """5-d layouts with strides up to +-2000 (negative, zero) and a storage offset: every
    index's offset is the value NumPy's view holds over 0, 1, 2, ..."""
    layout, size = layout_and_size
    view = numpy_view(np.arange(size, dtype=np.int64), layout)
    calls = [(index, layout) for index in np.ndindex(layout.shape)]
    for (index, _), offset in zip(calls, each_call(index_to_offset, calls), strict=True):
        expect(f"offset of index {index} in {layout}", offset, int(view[index]), OFFSET_RULE)


@pytest.mark.exercise("2.4")
@given(st.lists(st.integers(1, 5) | st.just(1), min_size=5, max_size=5).map(tuple))
@example((2, 1, 3, 4, 2))
def test_offset_to_index_of_every_offset_of_5d_shapes(shape):
    """Every offset of a 5-d shape (size-1 dims included) gives np.unravel_index's index."""
    total = int(np.prod(shape))
    expected = list(zip(*(i.tolist() for i in np.unravel_index(np.arange(total), shape))))
    calls = [(offset, shape) for offset in range(total)]
    answers = each_call(offset_to_index, calls)
    for (offset, _), index, got in zip(calls, expected, answers, strict=True):
        expect(f"index of offset {offset} in shape {shape}", got, index, UNRAVEL)


@pytest.mark.exercise("2.5")
@given(st.lists(st.sampled_from([1, 1, 2, 3, 4]), min_size=5, max_size=5).map(tuple))
@example((2, 1, 3, 1, 4))
def test_next_index_over_5d_shapes_with_size_1_dims(shape):
    """Over 5-d shapes full of size-1 dims, the odometer from the zero index visits exactly
    np.ndindex(shape) in order, each step is the next index, and the last step is None."""
    order = list(np.ndindex(shape))
    calls = [(here, shape) for here in order]
    answers = each_call(next_index, calls)
    for here, there, got in zip(order, order[1:] + [None], answers, strict=True):
        expect(f"the index after {here} in shape {shape}", got, there, ODOMETER)
    answers = each_call(next_index, [(list(here), shape) for here in order])
    rule = f"{ODOMETER}; an index given as a list steps the same way"
    for here, expected in zip(order, order[1:] + [None]):
        expect(f"the index after {list(here)} in shape {shape}", next(answers), expected, rule)


@functools.cache
def every_small_layout() -> tuple[tuple[Layout, bool], ...]:
    """Every layout of up to 3 dims with sizes 0 to 2 and strides -3 to 3 (and 4 dims with
    sizes 1 and 2, strides -2 to 2), with a storage offset, and NumPy's C_CONTIGUOUS flag of
    the view it makes. (Made once: it is the same for every submission graded.)"""
    buffer = np.arange(100)
    families = [(range(0, 3), range(-3, 4), ndim) for ndim in range(4)]
    families.append((range(1, 3), range(-2, 3), 4))
    flagged = []
    for sizes, strides_range, ndim in families:
        for shape in itertools.product(sizes, repeat=ndim):
            for strides in itertools.product(strides_range, repeat=ndim):
                low = sum(min(0, (n - 1) * s) for n, s in zip(shape, strides) if n > 0)
                layout = Layout(shape, strides, 10 - low)
                view = as_strided(
                    buffer[layout.offset :],
                    shape=shape,
                    strides=tuple(8 * s for s in strides),
                    writeable=False,
                )
                flagged.append((layout, bool(view.flags["C_CONTIGUOUS"])))
    return tuple(flagged)


@pytest.mark.exercise("2.6")
def test_is_contiguous_of_every_small_layout():
    """Every small layout (every_small_layout): NumPy's C_CONTIGUOUS flag."""
    flagged = every_small_layout()
    answers = each_call(is_contiguous, [(layout,) for layout, _ in flagged])
    for layout, expected in flagged:
        expect(f"is_contiguous of {layout}", next(answers), expected, contiguity_rule(layout.shape))
    assert len(flagged) > 10_000
