"""Chapter 3, harder cases: chains of views, stride-0 and size-1 dims in reshapes, and negative
steps on 5-d layouts, all against NumPy."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from hypothesis import example, given, note
from hypothesis import strategies as st

from tenxor.course.catalog import prerequisites
from tenxor.strides import Layout
from tenxor.views import index_layout, layout_runs, view_layout
from tests.support import (
    Case,
    cases,
    expect,
    numpy_view,
    raises_naming,
    reach,
    row_major_strides,
    stand_in,
)
from tests.test_views import (
    INDEXING,
    NEEDS_COPY,
    NO_COPY,
    assert_layout_matches,
    assert_runs_match_numpy,
    assert_view_matches,
    counting_case,
    expect_none_layout,
    expect_some_layout,
    index_keys,
    new_shapes,
    numpy_index,
    numpy_reshape_view,
    slices,
    squeeze_dims,
)

VIEW_EXERCISES = ("3.2", "3.3", "3.4", "3.5", "3.7")

# ---------------------------------------------------------------------------------------------
# Chains of view operations
# ---------------------------------------------------------------------------------------------


def numpy_layout(layout: Layout, operation: Callable[[np.ndarray], np.ndarray | None]) -> Any:
    """The layout of the NumPy view `operation(array)`, where `array` is what `layout` reads
    (None when `operation` gives None)."""
    high = reach(layout.shape, layout.strides)[1]
    buffer = np.zeros(layout.offset + high + 1)
    result = operation(numpy_view(buffer, layout))
    if result is None:
        return None
    if result.size == 0:
        return Layout(result.shape, (0,) * result.ndim, layout.offset)
    assert np.shares_memory(result, buffer), "the stand-in must make a view"
    start = result.__array_interface__["data"][0] - buffer.__array_interface__["data"][0]
    itemsize = buffer.itemsize
    return Layout(result.shape, tuple(s // itemsize for s in result.strides), start // itemsize)


def squeeze_by_numpy(layout: Layout, dim: Any = None) -> Layout:
    axis = dim if dim is None or isinstance(dim, int) else tuple(dim)
    return numpy_layout(layout, lambda a: np.squeeze(a, axis=axis))


def unsqueeze_by_numpy(layout: Layout, dim: int) -> Layout:
    return numpy_layout(layout, lambda a: np.expand_dims(a, dim))


def permute_by_numpy(layout: Layout, dims: Any) -> Layout:
    return numpy_layout(layout, lambda a: np.transpose(a, tuple(dims)))


def index_by_numpy(layout: Layout, key: Any) -> Layout:
    return numpy_layout(layout, lambda a: numpy_index(a, key))


def infer_shape_by_numpy(shape: Any, numel: int) -> tuple[int, ...]:
    return np.empty(numel).reshape(tuple(shape)).shape


def runs_by_rule(layout: Layout) -> list[tuple[int, int]]:
    """The runs of a layout: neighbouring dims of size other than 1 join when the outer
    stride is the inner size times the inner stride (NumPy has no runs to ask for)."""
    if 0 in layout.shape:
        return [(0, 1)]
    runs: list[tuple[int, int]] = []
    for size, stride in zip(layout.shape, layout.strides):
        if size != 1 and runs and runs[-1][1] == size * stride:
            runs[-1] = (runs[-1][0] * size, stride)
        elif size != 1:
            runs.append((size, stride))
    return runs


def cut_runs_by_numpy(runs: Any, shape: Any) -> tuple[int, ...] | None:
    """The strides NumPy gives `shape` when it reshapes the runs (as a layout) without a copy."""
    sizes, strides = tuple(size for size, _ in runs), tuple(stride for _, stride in runs)
    over_runs = Layout(sizes, strides, -reach(sizes, strides)[0])
    cut = numpy_layout(over_runs, lambda a: numpy_reshape_view(a, tuple(shape)))
    return None if cut is None else cut.strides


CHAPTER_3_STAND_INS = {
    "3.1": infer_shape_by_numpy,
    "3.2": squeeze_by_numpy,
    "3.3": unsqueeze_by_numpy,
    "3.4": permute_by_numpy,
    "3.5": index_by_numpy,
    "3.6": runs_by_rule,
    "3.7": cut_runs_by_numpy,
}


@contextmanager
def numpy_views_except(exercise_id: str) -> Iterator[None]:
    """Within the block, the function of every chapter-3 exercise but `exercise_id` and those
    it builds on is replaced by a stand-in that asks NumPy for the layout (or, for the runs,
    follows their rule), so a chain grades one exercise."""
    graded = {exercise_id} | prerequisites(exercise_id)
    with ExitStack() as stack:
        for other, function in CHAPTER_3_STAND_INS.items():
            if other not in graded:
                stack.enter_context(stand_in(other, function))
        yield


# What each view operation is in NumPy, given the array and the step's arguments.
NUMPY_VIEWS: dict[str, Callable[..., np.ndarray]] = {
    "squeeze": lambda a, dim: np.squeeze(a, axis=dim),
    "unsqueeze": np.expand_dims,
    "permute": np.transpose,
    "T": lambda a: a.T,
    "transpose": np.swapaxes,
    "movedim": np.moveaxis,
    "index": numpy_index,
    "view": lambda a, shape: np.reshape(a, shape, copy=False),
}


@dataclass(frozen=True)
class Step:
    """One view operation: the Tenxor method (or indexing) and its arguments."""

    name: str  # a key of NUMPY_VIEWS
    args: tuple[Any, ...] = ()

    @property
    def label(self) -> str:
        """The step as code: `[key]` for indexing, else the method call after its dot."""
        if self.name == "index":
            return f"[{self.args[0]!r}]"
        if self.name == "T":
            return "T"
        if self.name in ("permute", "view"):  # one tuple, shown as the arguments
            return f"{self.name}{self.args[0]}"
        return f"{self.name}({', '.join(str(a) for a in self.args if a is not None)})"

    def on_tensor(self, t: Any) -> Any:
        if self.name == "index":
            return t[self.args[0]]
        if self.name == "T":
            return t.T
        arguments = () if self.args == (None,) else self.args
        return getattr(t, self.name)(*arguments)

    def on_array(self, array: np.ndarray) -> np.ndarray:
        return NUMPY_VIEWS[self.name](array, *self.args)


@st.composite
def view_steps(draw: st.DrawFn, kind: str, array: np.ndarray) -> Step:
    """One view operation of exercise `kind` that NumPy can apply to `array` as a view."""
    shape, ndim = array.shape, array.ndim
    if kind == "3.2":
        return Step("squeeze", (draw(squeeze_dims(shape)),))
    if kind == "3.3":
        return Step("unsqueeze", (draw(st.integers(-ndim - 1, ndim)),))
    if kind == "3.4":
        how = draw(st.sampled_from(["permute", "T"] + (["transpose", "movedim"] if ndim else [])))
        if how == "permute":
            return Step("permute", (tuple(draw(st.permutations(range(ndim)))),))
        if how == "T":
            return Step("T")
        return Step(how, (draw(st.integers(-ndim, ndim - 1)), draw(st.integers(-ndim, ndim - 1))))
    if kind == "3.5":
        return Step("index", (draw(index_keys(shape)),))
    new_shape = draw(new_shapes(shape))
    if numpy_reshape_view(array, new_shape) is None:
        new_shape = shape + (1,)
    return Step("view", (new_shape,))


@pytest.mark.parametrize(
    "exercise",
    [pytest.param(e, marks=pytest.mark.exercise(e)) for e in VIEW_EXERCISES],
)
@given(case=cases(max_dims=4), data=st.data())
def test_chains_of_five_views_match_numpy(exercise, case, data):
    """Five view operations in a row (squeeze, unsqueeze, permute/transpose/T/movedim,
    indexing, view), at least one of them the graded exercise's, read what the same chain
    reads in NumPy and still share the first tensor's storage. The other exercises' layout
    functions are stood in for by NumPy."""
    others = st.lists(st.sampled_from(VIEW_EXERCISES), min_size=4, max_size=4)
    kinds = data.draw(others, label="exercises of the other four steps")
    kinds.insert(data.draw(st.integers(0, 4), label="place of the graded step"), exercise)
    t, array = case.tensor(), case.array
    result, chain = t, "t"
    with numpy_views_except(exercise):
        for kind in kinds:
            step = data.draw(view_steps(kind, array), label=f"step {kind}")
            note(f"{step.label} on shape {array.shape} with strides {result.strides}")
            result, array = step.on_tensor(result), step.on_array(array)
            chain += step.label if step.name == "index" else f".{step.label}"
            what = f"shape of {chain}, t of shape {case.layout.shape}"
            expect(what, result.shape, array.shape, "the shape NumPy gives after the same steps")
    assert_view_matches(result, t, case, array, f"the view NumPy makes by {chain}")


# ---------------------------------------------------------------------------------------------
# view_layout with stride-0 and size-1 dims
# ---------------------------------------------------------------------------------------------


@st.composite
def stretched_cases(draw: st.DrawFn) -> Case:
    """A Case whose layout is a row-major layout (maybe with gaps, maybe walked backwards)
    with some dims stretched to stride 0 and size-1 dims of arbitrary stride inserted."""
    shape = list(draw(st.lists(st.integers(1, 4), min_size=1, max_size=4)))
    scale = draw(st.sampled_from([1, 2, -1, -3]))
    strides = [scale * s for s in row_major_strides(tuple(shape))]
    for dim in range(len(shape)):
        if draw(st.integers(0, 2)) == 0:
            strides[dim] = 0
    for _ in range(draw(st.integers(0, 2))):
        at = draw(st.integers(0, len(shape)))
        shape.insert(at, 1)
        strides.insert(at, draw(st.integers(-9, 9)))
    low, high = reach(tuple(shape), tuple(strides))
    offset = -low + draw(st.integers(0, 2))
    buffer = np.random.default_rng(draw(st.integers(0, 2**32 - 1))).uniform(
        -10, 10, offset + high + 1 + draw(st.integers(0, 2))
    )
    return Case(buffer, Layout(tuple(shape), tuple(strides), offset))


@pytest.mark.exercise("3.7")
@given(case=stretched_cases(), data=st.data())
def test_view_layout_on_stretched_and_size_one_dims(case, data):
    """Reshapes of layouts with stride-0 dims (repeated elements) and size-1 dims with odd
    strides: a view exactly when NumPy can make one, reading NumPy's elements; a ValueError
    naming the shape from view otherwise."""
    shape = data.draw(new_shapes(case.layout.shape), label="new shape")
    expected = numpy_reshape_view(case.array, shape)
    result = view_layout(case.layout, shape)
    t = case.tensor()
    if expected is None:
        expect_none_layout(result, case, shape)
        with raises_naming(ValueError, shape, rule=NEEDS_COPY):
            t.view(shape)
    else:
        expect_some_layout(result, case, shape, expected)
        assert_layout_matches(result, case, expected, NO_COPY)
        assert_view_matches(t.view(shape), t, case, expected, NO_COPY)


# (2, 3, 4) row-major with its middle dim stretched to stride 0 (each row of 4 is read 3 times)
# and a size-1 dim of stride -7 inserted before it.
STRETCHED_EXAMPLE = counting_case((2, 1, 3, 4), (12, -7, 0, 1), offset=1)


@pytest.mark.exercise("3.6")
@given(stretched_cases())
@example(STRETCHED_EXAMPLE)
def test_layout_runs_of_stretched_and_size_one_dims(case):
    """Stride-0 dims (joined only by the rule) and size-1 dims of any stride: the runs are the
    neighbouring dims NumPy merges into one."""
    assert_runs_match_numpy(layout_runs(case.layout), case)


# ---------------------------------------------------------------------------------------------
# Negative steps on 5-d layouts
# ---------------------------------------------------------------------------------------------


@st.composite
def five_dim_cases_and_backward_keys(draw: st.DrawFn) -> tuple[Case, tuple[Any, ...]]:
    """A 5-d Case without empty dims and a key that walks most dims backwards: negative-step
    slices, negative ints, None, and maybe a leading `...`."""
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=5, max_size=5)))
    case = draw(cases(shape=shape))
    items: list[Any] = []
    for size in shape:
        backward = slices(size, st.integers(-3, -1))
        items.append(draw(backward | backward | st.integers(-size, -1) | st.just(slice(None))))
    if draw(st.booleans()):
        items = [Ellipsis] + items[draw(st.integers(0, 5)) :]
    for _ in range(draw(st.integers(0, 2))):
        items.insert(draw(st.integers(0, len(items))), None)
    return case, tuple(items)


@pytest.mark.exercise("3.5")
@given(five_dim_cases_and_backward_keys())
@example(
    (
        counting_case((2, 3, 1, 4, 2), (24, 8, 8, 2, 1), offset=3),
        (slice(None, None, -1), -2, slice(None), None, slice(3, 0, -2), -1),
    )
)
def test_negative_steps_on_five_dim_layouts(case_and_key):
    """On 5-d layouts with any strides, keys of backward slices, negative ints and None give
    NumPy's view: the offset lands on the first selected element and every sliced dim's
    stride is the old stride times the step."""
    case, key = case_and_key
    expected = numpy_index(case.array, key)
    rule = f"{INDEXING}: a step k multiplies the stride by k, negative too"
    assert_layout_matches(index_layout(case.layout, key), case, expected, rule)
    t = case.tensor()
    assert_view_matches(t[key], t, case, expected, rule)
