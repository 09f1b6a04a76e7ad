"""Stride diagrams: pictures of tensors, views and their runs, broadcasting, reductions, the
fused kernel's walk, graphs.

Provided tooling, not an exercise. `t.draw()` draws any tensor; the functions below draw the
figures of the course, and `tenxor draw` renders them to files.
"""

from .alignment import broadcast_diagram
from .figures import gather_diagram, layout_diagram, reduction_diagram, tensor_diagram, view_diagram
from .folds import fold_walk_diagram
from .graphs import graph_diagram
from .layouts import MAX_CELLS, DiagramTooLarge
from .memory import bytes_diagram
from .render import Picture, Row, side_by_side
from .runs import runs_diagram

__all__ = [
    "MAX_CELLS", "DiagramTooLarge", "Picture", "Row", "broadcast_diagram", "bytes_diagram",
    "fold_walk_diagram", "gather_diagram", "graph_diagram", "layout_diagram",
    "reduction_diagram", "runs_diagram", "side_by_side", "tensor_diagram", "view_diagram",
]  # fmt: skip
