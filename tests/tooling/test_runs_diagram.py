"""The runs diagram, read back from its SVG and checked against runs found with NumPy.

The oracle never uses the joining rule the diagram applies. A group of neighbouring dims (size-1
dims left out) is one run exactly when reading it in row-major order, the other dims held at
index 0, visits offsets that form an arithmetic progression; the runs are the longest such
groups, from the outermost dim. Offsets come from a NumPy view of np.arange, whose values are
the offsets themselves.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tenxor
from tenxor.diagrams import runs_diagram
from tenxor.diagrams.runs import find_runs

from .svg_parts import named, parts, target_of

pytestmark = pytest.mark.provided

GALLERY = Path(__file__).resolve().parents[2] / "diagrams"

# (name, shape of the base, how to make the view in tenxor, the same in NumPy)
LAYOUTS = [
    ("row-major", (2, 3, 4), lambda x: x, lambda a: a),
    ("transpose and slice", (2, 3, 4), lambda x: x.permute(2, 0, 1)[1:3],
     lambda a: a.transpose(2, 0, 1)[1:3]),
    ("size-1 dim between runs", (2, 3, 4), lambda x: x.permute(2, 0, 1)[1:3, None],
     lambda a: a.transpose(2, 0, 1)[1:3, None]),
    ("size-1 dim inside a run", (2, 3), lambda x: x[:, None, :], lambda a: a[:, None, :]),
    ("slice of rows", (4, 6), lambda x: x[:, :4], lambda a: a[:, :4]),
    ("expand", (4,), lambda x: x.expand(2, 3, 4), lambda a: np.broadcast_to(a, (2, 3, 4))),
    ("expand a column", (3, 1), lambda x: x.expand(3, 4), lambda a: np.broadcast_to(a, (3, 4))),
    ("reversed", (2, 3), lambda x: x[::-1, ::-1], lambda a: a[::-1, ::-1]),
    ("reversed rows only", (3, 4), lambda x: x[::-1], lambda a: a[::-1]),
    ("step slice", (3, 4), lambda x: x[:, ::2], lambda a: a[:, ::2]),
    ("one element", (2, 3), lambda x: x[1:, 2:], lambda a: a[1:, 2:]),
    ("0-d", (5,), lambda x: x[3], lambda a: a[3]),
]  # fmt: skip


def progression(values: np.ndarray) -> int | None:
    """The common step of `values` (at least two of them) in order, or None."""
    steps = np.diff(values.ravel())
    return int(steps[0]) if np.all(steps == steps[0]) else None


def along(offsets: np.ndarray, dims: list[int]) -> np.ndarray:
    """The offsets read along `dims`, every other dim at index 0, in row-major order."""
    key = tuple(slice(None) if d in dims else 0 for d in range(offsets.ndim))
    return offsets[key].ravel()


def numpy_runs(offsets: np.ndarray) -> list[tuple[int, int, tuple[int, ...]]]:
    """(size, stride, dims) of each run of the layout whose offsets NumPy gives."""
    moving = [d for d, size in enumerate(offsets.shape) if size != 1]
    if offsets.size == 0:
        return [(0, 1, tuple(moving))]
    runs: list[list[int]] = []
    for dim in moving:
        if runs and progression(along(offsets, runs[-1] + [dim])) is not None:
            runs[-1].append(dim)
        else:
            runs.append([dim])
    return [(len(along(offsets, g)), progression(along(offsets, g)), tuple(g)) for g in runs]


def pair(shape, make, make_numpy):
    """The tenxor view and the NumPy array of the offsets it reads."""
    count = int(np.prod(shape))
    return make(tenxor.arange(count).view(*shape)), make_numpy(np.arange(count).reshape(shape))


def draw(t) -> dict:
    picture = runs_diagram(t.shape, t.strides, t.offset, len(t.storage.data), t.storage.data)
    return parts(picture.svg)


def centre_x(box) -> float:
    return (box[0] + box[2]) / 2


def covered_dims(band, dims: dict) -> set[int]:
    """The dims whose box lies under `band`."""
    x0, _, x1, _ = band.box
    return {int(key) for key, part in dims.items() if x0 <= centre_x(part.box) <= x1}


@pytest.mark.parametrize("name, shape, make, make_numpy", LAYOUTS, ids=[c[0] for c in LAYOUTS])
def test_the_bands_over_the_dims_are_the_runs_numpy_finds(name, shape, make, make_numpy):
    t, offsets = pair(shape, make, make_numpy)
    found = draw(t)
    bands, dims = named(found, "run"), named(found, "dim")
    expected = numpy_runs(offsets)
    assert sorted(bands) == [str(k) for k in range(len(expected))]
    assert sorted(dims, key=int) == [str(d) for d in range(t.ndim)]
    for k, (size, stride, members) in enumerate(expected):
        band = bands[str(k)]
        assert " ".join(band.texts) == f"run {k}: size {size}, stride {stride}"
        under = covered_dims(band, dims)
        assert {d for d in under if t.shape[d] != 1} == set(members)
        assert all(band.box[3] < dims[str(d)].box[1] for d in under)  # the band is above
    for d in range(t.ndim):
        assert dims[str(d)].texts == [f"dim {d}", f"size {t.shape[d]}, stride {t.strides[d]}"]


@pytest.mark.parametrize("name, shape, make, make_numpy", LAYOUTS, ids=[c[0] for c in LAYOUTS])
def test_every_dim_of_size_1_is_marked_as_in_no_run(name, shape, make, make_numpy):
    t, offsets = pair(shape, make, make_numpy)
    found = draw(t)
    tags, dims = named(found, "norun"), named(found, "dim")
    assert set(tags) == {str(d) for d in range(offsets.ndim) if offsets.shape[d] == 1}
    for key, tag in tags.items():
        assert tag.texts == ["no run"]
        x0, _, x1, bottom = dims[key].box
        assert x0 <= centre_x(tag.box) <= x1 and tag.box[1] > bottom  # under its dim


@pytest.mark.parametrize("name, shape, make, make_numpy", LAYOUTS, ids=[c[0] for c in LAYOUTS])
def test_each_run_marks_the_storage_cells_it_walks_through(name, shape, make, make_numpy):
    t, offsets = pair(shape, make, make_numpy)
    found = draw(t)
    storage = named(found, "storage")
    for k, (_, _, members) in enumerate(numpy_runs(offsets)):
        walked = {int(o) for o in along(offsets, list(members))}
        steps = named(found, f"span/{k}")
        assert set(steps) == {str(o) for o in walked}
        for key, step in steps.items():
            x = centre_x(step.box)
            under = [o for o, cell in storage.items() if cell.box[0] <= x <= cell.box[2]]
            assert under == [key], f"run {k}: the mark of offset {key} is under {under}"
            assert step.box[1] > storage[key].box[3]  # below the storage row
        bar = found[f"span/{k}"].box
        assert bar[0] <= min(centre_x(s.box) for s in steps.values())
        assert bar[2] >= max(centre_x(s.box) for s in steps.values())


def test_cells_point_at_the_storage_cells_they_read():
    t, offsets = pair(
        (2, 3, 4), lambda x: x.permute(2, 0, 1)[1:3], lambda a: a.transpose(2, 0, 1)[1:3]
    )
    picture = runs_diagram(t.shape, t.strides, t.offset, 24, t.storage.data, arrows="all")
    found = parts(picture.svg)
    cells, storage, arrows = (named(found, r) for r in ("tensor", "storage", "arrow/tensor"))
    assert len(cells) == offsets.size == len(arrows)
    for index in np.ndindex(offsets.shape):
        key = ",".join(map(str, index))
        start, end = arrows[key].arrow
        assert target_of(start, cells) == [key]
        assert target_of(end, storage) == [str(offsets[index])]
        assert cells[key].fill == storage[str(offsets[index])].fill


def test_a_layout_with_no_elements_has_the_one_run_0_1():
    found = parts(runs_diagram((2, 0, 3), (0, 3, 1), 4, storage_size=6).svg)
    bands = named(found, "run")
    assert list(bands) == ["0"] and " ".join(bands["0"].texts) == "run 0: size 0, stride 1"
    assert covered_dims(bands["0"], named(found, "dim")) == {0, 1, 2}
    assert named(found, "span/0") == {}  # nothing is read


def random_layout(rng: np.random.Generator, ndim: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """A shape with sizes 0 to 3 and strides from -6 to 6, where about half the dims get the
    stride that joins them to the dim after them."""
    shape = tuple(int(size) for size in rng.integers(0, 4, ndim))
    strides = [int(stride) for stride in rng.integers(-6, 7, ndim)]
    for d in reversed(range(ndim - 1)):
        if rng.random() < 0.5:
            strides[d] = shape[d + 1] * strides[d + 1]
    return shape, tuple(strides)


RNG = np.random.default_rng(2024)
RANDOM_LAYOUTS = [random_layout(RNG, ndim) for ndim in [0, 1, 2, 3, 4, 5] * 60]


@pytest.mark.parametrize("shape, strides", RANDOM_LAYOUTS, ids=str)
def test_find_runs_agrees_with_numpy_on_random_layouts(shape, strides):
    index = np.indices(shape) if shape else np.zeros((0,), dtype=int)
    offsets = sum((i * s for i, s in zip(index, strides)), np.zeros(shape, dtype=int))
    runs = [(run.size, run.stride, run.dims) for run in find_runs(shape, strides)]
    assert runs == numpy_runs(offsets)


def test_the_gallery_shows_two_runs_of_a_transposed_slice_and_a_stride_0_run():
    sliced = parts((GALLERY / "20-runs-transpose-slice.svg").read_text())
    assert len(named(sliced, "run")) == 2 and named(sliced, "norun")
    expanded = parts((GALLERY / "21-runs-expand-stride-0.svg").read_text())
    words = [" ".join(band.texts) for band in named(expanded, "run").values()]
    assert any(text.endswith("stride 0") for text in words)
