"""The diagram gallery: every figure of the course, rendered into one folder with an index.

`tenxor draw --gallery diagrams/` writes them. Rendering is deterministic, so the files are
byte-for-byte the same on every run and a test can tell when the folder is stale.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tenxor.core import Tenxor
from tenxor.creation import arange, rand, tensor
from tenxor.graph_attention import GATv2
from tenxor.strides import Layout

from .alignment import broadcast_diagram
from .figures import gather_diagram, layout_diagram, reduction_diagram, view_diagram
from .folds import fold_walk_diagram
from .graphs import graph_diagram
from .memory import bytes_diagram
from .render import Picture
from .runs import runs_diagram

README = "README.md"


@dataclass(frozen=True)
class Figure:
    """One picture of the gallery: its file name, a one-line caption and how to draw it."""

    name: str
    caption: str
    draw: Callable[[], Picture]


def of_arange(*shape: int) -> Tenxor:
    """arange viewed as `shape`."""
    return arange(math.prod(shape)).view(*shape)


def tensor_figure(
    name: str, caption: str, shape: tuple[int, ...], arrows: str | None = None
) -> Figure:
    """A figure of arange(n).view(shape) over its storage."""

    def draw() -> Picture:
        t = of_arange(*shape)
        return layout_diagram(t.shape, t.strides, t.offset, len(t.storage.data), t.storage.data,
                              arrows, name="x")  # fmt: skip

    return Figure(name, caption, draw)


def view_figure(name: str, caption: str, shape: tuple[int, ...], expression: str,
                       make: Callable) -> Figure:  # fmt: skip
    """A figure of x = arange(n).view(shape) and its view `make(x)`, spelled `expression`."""

    def draw() -> Picture:
        x = of_arange(*shape)
        return view_diagram(x, make(x), "x", expression)

    return Figure(name, caption, draw)


def runs_figure(name: str, caption: str, shape: tuple[int, ...], expression: str,
                make: Callable) -> Figure:  # fmt: skip
    """A figure of the runs of the view `make(x)` of x = arange(n).view(shape), spelled
    `expression`."""

    def draw() -> Picture:
        t = make(of_arange(*shape))
        return runs_diagram(t.shape, t.strides, t.offset, len(t.storage.data), t.storage.data,
                            name=expression)  # fmt: skip

    return Figure(name, caption, draw)


GALLERY_GRAPH = [  # adjacency[i][j] = 1: node i receives from node j; node 5 is padding
    [0, 1, 0, 0, 1, 0],
    [1, 0, 1, 0, 0, 0],
    [0, 0, 0, 1, 1, 0],
    [1, 0, 1, 1, 0, 0],
    [0, 1, 0, 1, 0, 0],
    [0, 0, 0, 0, 0, 0],
]


def attention_figure() -> Picture:
    """One graph of five real nodes and the weights head 0 of a seeded GATv2 layer gives it:
    3 features in, 2 heads of 4 features, configured as GATv2Conv(3, 4, heads=2)."""
    node_mask = tensor([[1, 1, 1, 1, 1, 0]])
    x = rand(1, 6, 3, seed=7, low=-1.0, high=1.0) * node_mask.unsqueeze(-1)
    layer = GATv2.random(features_in=3, features_out=4, heads=2, seed=11)
    alpha = layer.attention_weights(x, tensor([GALLERY_GRAPH]), node_mask)  # [1, 6, 6, 2]
    return graph_diagram(GALLERY_GRAPH, node_mask[0], alpha[0, :, :, 0], name="head 0")


def matmul_walk_figure() -> Picture:
    """a @ b on the fused kernel, for a (2, 3) and b (3, 2): views of a's rows and b's columns
    that share the last dim meet at out[0, 1]. The views are given by their layouts (which
    view methods make them is exercise 5.5's to find)."""
    a, b = of_arange(2, 3), arange(10, 16).view(3, 2)
    rows = Tenxor(a.storage, Layout((2, 1, 3), (3, 3, 1), 0))  # row i, for every column j
    columns = Tenxor(b.storage, Layout((1, 2, 3), (2, 1, 2), 0))  # column j, for every row i
    return fold_walk_diagram([rows, columns], -1, (0, 1), names=["rows", "columns"])


def figures() -> list[Figure]:
    """Every figure of the gallery, in the order of the course."""
    return [
        Figure("01-bytes-float32-bfloat16.svg",
               "The same three values as float32 and as bfloat16: bytes in storage and the bits "
               "of one element.", bytes_diagram),
        tensor_figure("02-row-major.svg",
                      "A 3 x 4 tensor over its storage in row-major order: strides (4, 1).",
                      (3, 4)),
        Figure("03-column-major.svg",
               "The same shape in column-major order: strides (1, 3), so columns are contiguous.",
               lambda: layout_diagram((3, 4), (1, 3), name="x")),
        tensor_figure("04-three-dims.svg",
                      "A 3-d tensor (2, 3, 4) as a row of grids; arrows show one step along each "
                      "dim.", (2, 3, 4), "strides"),
        tensor_figure("05-four-dims.svg",
                      "A 4-d tensor (2, 2, 2, 3) as a grid of grids.", (2, 2, 2, 3), "strides"),
        view_figure("06-transpose.svg",
                           "x.T: the same storage read with the strides swapped.",
                           (3, 4), "x.T", lambda x: x.T),
        view_figure("07-permute.svg",
                           "x.permute(2, 0, 1): dims reordered, strides reordered with them.",
                           (2, 2, 3), "x.permute(2, 0, 1)", lambda x: x.permute(2, 0, 1)),
        view_figure("08-step-slice.svg",
                           "x[:, ::2]: a step of 2 doubles the stride of the last dim.",
                           (3, 4), "x[:, ::2]", lambda x: x[:, ::2]),
        view_figure("09-negative-step.svg",
                           "x[::-1]: a negative step gives a negative stride and moves the "
                           "storage offset to the last element.",
                           (6,), "x[::-1]", lambda x: x[::-1]),
        view_figure("10-storage-offset.svg",
                           "x[1:, 1:3]: slicing moves the storage offset; grey storage is never "
                           "read by the view.", (3, 4), "x[1:, 1:3]", lambda x: x[1:, 1:3]),
        view_figure("11-expand-stride-0.svg",
                           "x.expand(3, 4): stride 0 makes four cells of each row read one "
                           "storage cell.", (3, 1), "x.expand(3, 4)", lambda x: x.expand(3, 4)),
        Figure("12-gather-copy.svg",
               "x[[2, 0, 2]]: a list index gathers rows into new storage; it is a copy, and a "
               "row may appear twice.", lambda: gather_diagram(of_arange(3, 4), 0, [2, 0, 2])),
        Figure("13-broadcast.svg",
               "Broadcasting (4, 3, 2) with (3, 1): align right, pad with 1, stretch the 1s.",
               lambda: broadcast_diagram((4, 3, 2), (3, 1))),
        Figure("14-broadcast-four-dims.svg",
               "Broadcasting (8, 1, 6, 1) with (7, 1, 5): both shapes stretch.",
               lambda: broadcast_diagram((8, 1, 6, 1), (7, 1, 5))),
        Figure("15-broadcast-error.svg",
               "(3, 2) with (2, 3) cannot broadcast: dim -1 has sizes 2 and 3.",
               lambda: broadcast_diagram((3, 2), (2, 3))),
        Figure("16-sum-along-dim-1.svg",
               "x.sum(dim=1): the cells of each row fold into one output cell.",
               lambda: reduction_diagram((3, 4), 1, list(range(12)))),
        Figure("17-sum-along-dim-0.svg",
               "x.sum(dim=0, keepdim=True) on a (2, 3, 4) tensor: cells fold across the grids.",
               lambda: reduction_diagram((2, 3, 4), 0, list(range(24)), keepdim=True)),
        Figure("18-long-storage.svg",
               "A view into long storage: only the offsets it reads, and their neighbours, are "
               "drawn; '…' stands for the rest.",
               lambda: layout_diagram((2, 3), (40, 7), 5, storage_size=120, name="x")),
        Figure("19-graph-attention.svg",
               "One graph of a GATv2 batch: an arrow j → i for each edge, as wide as the weight "
               "head 0 gives it in i's softmax.", attention_figure),
        runs_figure("20-runs-transpose-slice.svg",
                    "The runs of a permuted, sliced view: dims 2 and 3 step through storage as "
                    "one run of stride 4, dim 0 is a run of stride 1, the size-1 dim is in none.",
                    (2, 3, 4), "x.permute(2, 0, 1)[1:3, None]",
                    lambda x: x.permute(2, 0, 1)[1:3, None]),
        runs_figure("21-runs-expand-stride-0.svg",
                    "The runs of an expanded view: the two stride-0 dims join into one run that "
                    "reads a single storage cell six times.",
                    (4,), "x.expand(2, 3, 4)", lambda x: x.expand(2, 3, 4)),
        Figure("22-fused-kernel-matmul.svg",
               "a @ b on the fused kernel, a (2, 3) and b (3, 2): a view of a's rows (2, 1, 3) "
               "and one of b's columns (1, 2, 3), which share their last dim, meet at "
               "out[0, 1]; the kernel multiplies 3 pairs and sums them in one accumulator.",
               matmul_walk_figure),
    ]  # fmt: skip


def readme(gallery: list[Figure]) -> str:
    """The gallery's index: each file with its caption."""
    lines = [
        "# Diagram gallery",
        "",
        "Rendered by `tenxor draw --gallery diagrams/` from `tenxor/diagrams/gallery.py`; do "
        "not edit by hand. A test renders the gallery again and fails when these files differ.",
        "",
        "| Figure | What it shows |",
        "| --- | --- |",
    ]
    lines += [f"| [{figure.name}]({figure.name}) | {figure.caption} |" for figure in gallery]
    return "\n".join(lines) + "\n"


def write_gallery(folder: Path) -> list[Path]:
    """Render every figure into `folder` (made if needed), remove stale SVGs, write the index."""
    folder.mkdir(parents=True, exist_ok=True)
    gallery = figures()
    written = []
    for figure in gallery:
        written.append(figure.draw().save(folder / figure.name))
    names = {figure.name for figure in gallery}
    for old in folder.glob("*.svg"):
        if old.name not in names:
            old.unlink()
    index = folder / README
    index.write_text(readme(gallery), encoding="utf-8")
    return [*written, index]
