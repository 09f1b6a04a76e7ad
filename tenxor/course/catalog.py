"""The exercise catalog: every exercise of the course, its function, notebook, points and the
exercises it builds on. Release, check, grade and verify all read this one list."""

from __future__ import annotations

import ast
import importlib
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Exercise:
    """One exercise: the function a learner fills in and how it is graded."""

    id: str
    title: str
    module: str  # the chapter module, e.g. "tenxor.strides"
    function: str
    notebook: str
    points: int
    depends_on: tuple[str, ...] = ()

    @property
    def path(self) -> str:
        """The file that holds the function, relative to the project root."""
        return self.module.replace(".", "/") + ".py"


def _chapter(notebook: str, module: str, *rows: tuple) -> list[Exercise]:
    return [
        Exercise(id, title, module, function, f"notebooks/{notebook}.ipynb", points, tuple(deps))
        for id, title, function, points, deps in rows
    ]


CATALOG: tuple[Exercise, ...] = tuple(
    _chapter(
        "01_storage",
        "tenxor.storage",
        ("1.1", "Element count of a shape", "numel", 2, []),
        ("1.2", "Round a float32 to bfloat16", "round_to_bfloat16", 3, []),
        ("1.3", "Byte strides from element strides", "byte_strides", 2, []),
    )
    + _chapter(
        "02_strides",
        "tenxor.strides",
        ("2.1", "Row-major strides", "contiguous_strides", 2, []),
        ("2.2", "Column-major strides", "column_major_strides", 2, []),
        ("2.3", "Index to offset", "index_to_offset", 2, []),
        ("2.4", "Offset to index", "offset_to_index", 2, []),
        ("2.5", "The next index in row-major order", "next_index", 2, []),
        ("2.6", "Contiguity", "is_contiguous", 2, []),
    )
    + _chapter(
        "03_views",
        "tenxor.views",
        ("3.1", "Infer the -1 in a shape", "infer_shape", 3, []),
        ("3.2", "Squeeze as a layout", "squeeze_layout", 2, []),
        ("3.3", "Unsqueeze as a layout", "unsqueeze_layout", 2, []),
        ("3.4", "Permute as a layout", "permute_layout", 3, []),
        ("3.5", "Indexing and slicing as a layout", "index_layout", 3, []),
        ("3.6", "Find the runs of a layout", "layout_runs", 3, []),
        ("3.7", "Cut the runs into a new shape", "cut_runs", 3, ["3.1", "3.6"]),
    )
    + _chapter(
        "04_broadcasting",
        "tenxor.broadcasting",
        ("4.1", "Broadcast shapes", "broadcast_shapes", 3, []),
        ("4.2", "Expand as a layout with stride 0", "expand_layout", 3, []),
        ("4.3", "Walk the offsets of a layout", "walk_offsets", 3, []),
        ("4.4", "Read a layout's values row by row", "read_values", 3, ["4.3"]),
        ("4.5", "The map kernel", "map_values", 2, ["4.4"]),
        ("4.6", "The zip kernel with broadcasting", "zip_values", 3,
         ["4.1", "4.2", "4.4"]),
    )
    + _chapter(
        "05_reductions",
        "tenxor.reductions",
        ("5.1", "The reduce kernel", "reduce_values", 4, ["3.4", "4.4"]),
        ("5.2", "Mean from sum", "mean", 3, ["5.1", "4.6"]),
        ("5.3", "Argmax", "first_largest_position", 3, ["5.1"]),
        ("5.4", "Matmul from broadcast-multiply and sum", "matmul", 4,
         ["3.2", "3.3", "3.4", "4.6", "5.1"]),
        ("5.5", "Stable softmax", "softmax", 3, ["5.1", "4.5", "4.6"]),
        ("5.6", "Masked softmax", "masked_softmax", 3, ["5.1", "4.5", "4.6"]),
    )
    + _chapter(
        "06_gatv2",
        "tenxor.graph_attention",
        ("6.1", "Project every node for every head", "project", 2, ["3.7", "5.4"]),
        ("6.2", "Whom each node attends to", "attends", 2, ["3.3", "4.6"]),
        ("6.3", "Attention logits for every pair", "attention_logits", 2,
         ["3.3", "4.5", "4.6", "5.1"]),
        ("6.4", "Masked attention weights", "attention_weights", 2, ["3.3", "5.6"]),
        ("6.5", "Weighted sum of the senders", "aggregate", 2, ["3.4", "5.4"]),
        ("6.6", "Concatenate or average the heads", "combine_heads", 2, ["3.7", "5.2"]),
        ("6.7", "The GATv2 layer on a padded batch", "gatv2", 3,
         ["6.1", "6.2", "6.3", "6.4", "6.5", "6.6", "4.6"]),
    )
    + _chapter(
        "06_gatv2",
        "tenxor.scatter",
        ("6.8", "Gather rows by an index tensor", "gather_rows", 2, []),
        ("6.9", "Fold rows into a tensor by index", "index_reduce", 3, []),
        ("6.10", "Softmax within segments", "segment_softmax", 2, ["6.8", "6.9", "4.5", "4.6"]),
    )
    + _chapter(
        "06_gatv2",
        "tenxor.graph_attention",
        ("6.11", "The GATv2 layer on an edge list", "gatv2_edges", 3,
         ["6.1", "6.6", "6.8", "6.10", "6.9", "4.5", "4.6", "5.1"]),
    )
)  # fmt: skip

BY_ID: dict[str, Exercise] = {exercise.id: exercise for exercise in CATALOG}


def exercise(exercise_id: str) -> Exercise:
    """The exercise with this id, or a KeyError listing the known ids."""
    try:
        return BY_ID[exercise_id]
    except KeyError:
        raise KeyError(
            f"no exercise {exercise_id!r}; known exercises: {', '.join(BY_ID)}"
        ) from None


def prerequisites(exercise_id: str) -> set[str]:
    """Every exercise that `exercise_id` builds on, directly or through others."""
    found: set[str] = set()
    pending = list(exercise(exercise_id).depends_on)
    while pending:
        current = pending.pop()
        if current not in found:
            found.add(current)
            pending.extend(exercise(current).depends_on)
    return found


def total_points() -> int:
    """The points of every exercise of the catalog together."""
    return sum(item.points for item in CATALOG)


def exercises_in(notebook: str) -> list[Exercise]:
    """The exercises of one chapter notebook (e.g. "notebooks/03_views.ipynb"), in order."""
    return [item for item in CATALOG if item.notebook == notebook]


def stub_message(item: Exercise) -> str:
    """What an unfinished exercise raises: its id, title and notebook."""
    return f"Exercise {item.id}: {item.title} ({item.notebook})"


def stub_line(item: Exercise, indent: str) -> str:
    """The line that stands in the release where an exercise's solution goes."""
    quoted = stub_message(item).replace("\\", "\\\\").replace('"', '\\"')
    return f'{indent}raise NotImplementedError("{quoted}")\n'


def released_function(exercise_id: str) -> str:
    """The source of an exercise's function as a learner first sees it: the one line that
    raises NotImplementedError naming the exercise stands where its solution goes."""
    item = exercise(exercise_id)
    source = Path(importlib.import_module(item.module).__file__).read_text(encoding="utf-8")
    found = next(
        node
        for node in ast.parse(source).body
        if isinstance(node, ast.FunctionDef) and node.name == item.function
    )
    lines = source.splitlines(keepends=True)
    marks = [line.strip() for line in lines]
    begin, end = f"# BEGIN SOLUTION {item.id}", f"# END SOLUTION {item.id}"
    stop = found.end_lineno  # the function's lines are lines[found.lineno - 1 : stop]
    if begin in marks:  # the instructor's tree: the solution is still there
        first = marks.index(begin)
        last = marks.index(end, first)
        indent = lines[first][: len(lines[first]) - len(lines[first].lstrip())]
        lines[first : last + 1] = [stub_line(item, indent)]
        stop = max(first + 1, stop - (last - first))
    return "".join(lines[found.lineno - 1 : stop]).rstrip("\n")
