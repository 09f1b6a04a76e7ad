"""The exercise catalog: every chapter of the course (its notebook, the modules that hold its
exercises, the test files that grade them, the records its functions pass around) and every
exercise (its function, points and the exercises it builds on). Release, check, grade, verify,
the judge and its worker all read these two lists; no other file names a chapter's module or
test file.
"""

from __future__ import annotations

import ast
import importlib
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Chapter:
    """One chapter: its notebook, the modules that hold its exercises, the test files that
    grade them (public ones are released, hidden ones never are) and the records (frozen
    dataclasses, "module.Class") that its functions take or return, which may cross between
    the judge and a sandbox worker."""

    number: int
    notebook: str  # e.g. "notebooks/03_views.ipynb"
    modules: tuple[str, ...] = ()  # e.g. ("tenxor.views",)
    tests: tuple[str, ...] = ()  # e.g. ("tests/test_views.py",)
    hidden: tuple[str, ...] = ()  # e.g. ("tests/hidden/test_views_hidden.py",)
    records: tuple[str, ...] = ()  # e.g. ("tenxor.graph_attention.GATv2",)


@dataclass(frozen=True)
class Exercise:
    """One exercise: the function a learner fills in and how it is graded."""

    id: str
    title: str
    module: str  # the module that holds it, e.g. "tenxor.strides"
    function: str
    chapter: Chapter
    points: int
    depends_on: tuple[str, ...] = ()

    @property
    def notebook(self) -> str:
        """The notebook that teaches it, relative to the project root."""
        return self.chapter.notebook

    @property
    def path(self) -> str:
        """The file that holds the function, relative to the project root."""
        return module_file(self.module)


def module_file(module: str) -> str:
    """The file of a module, relative to the project root: tenxor/views.py for tenxor.views."""
    return module.replace(".", "/") + ".py"


CHAPTERS: tuple[Chapter, ...] = (
    Chapter(0, "notebooks/00_welcome.ipynb"),
    Chapter(1, "notebooks/01_storage.ipynb", ("tenxor.storage",), ("tests/test_storage.py",),
            ("tests/hidden/test_storage_strides_hidden.py",)),
    Chapter(2, "notebooks/02_strides.ipynb", ("tenxor.strides",), ("tests/test_strides.py",),
            ("tests/hidden/test_storage_strides_hidden.py",)),
    Chapter(3, "notebooks/03_views.ipynb", ("tenxor.views",), ("tests/test_views.py",),
            ("tests/hidden/test_views_hidden.py",)),
    Chapter(4, "notebooks/04_broadcasting.ipynb", ("tenxor.broadcasting",),
            ("tests/test_broadcasting.py",), ("tests/hidden/test_kernels_hidden.py",)),
    Chapter(5, "notebooks/05_reductions.ipynb", ("tenxor.reductions",),
            ("tests/test_reductions.py",), ("tests/hidden/test_kernels_hidden.py",)),
    Chapter(6, "notebooks/06_gatv2.ipynb", ("tenxor.graph_attention", "tenxor.scatter"),
            ("tests/test_graph_attention.py", "tests/test_scatter.py"),
            ("tests/hidden/test_graph_attention_hidden.py",),
            ("tenxor.graph_attention.GATv2", "tenxor.graph_attention.EdgeList")),
)  # fmt: skip
HIDDEN_TESTS = "tests/hidden"  # the folder of the hidden tests, never released
TOOLING_TESTS = "tests/tooling"  # the tests of the course's tooling, never released
# Tests that span the chapters: bad inputs to every exercise, and the provided tensor API.
COURSE_TESTS: tuple[str, ...] = ("tests/test_bad_inputs.py", "tests/test_tensor_api.py")
COURSE_HIDDEN: tuple[str, ...] = ("tests/hidden/test_api_hidden.py",)
BY_NUMBER: dict[int, Chapter] = {chapter.number: chapter for chapter in CHAPTERS}


def _exercises(number: int, module: str, *rows: tuple) -> list[Exercise]:
    chapter = BY_NUMBER[number]
    return [
        Exercise(id, title, module, function, chapter, points, tuple(deps))
        for id, title, function, points, deps in rows
    ]


CATALOG: tuple[Exercise, ...] = tuple(
    _exercises(
        1,
        "tenxor.storage",
        ("1.1", "Element count of a shape", "numel", 2, []),
        ("1.2", "Round a float32 to bfloat16", "round_to_bfloat16", 3, []),
        ("1.3", "Byte strides from element strides", "byte_strides", 2, []),
    )
    + _exercises(
        2,
        "tenxor.strides",
        ("2.1", "Row-major strides", "contiguous_strides", 2, []),
        ("2.2", "Column-major strides", "column_major_strides", 2, []),
        ("2.3", "Index to offset", "index_to_offset", 2, []),
        ("2.4", "Offset to index", "offset_to_index", 2, []),
        ("2.5", "The next index in row-major order", "next_index", 2, []),
        ("2.6", "Contiguity", "is_contiguous", 2, []),
    )
    + _exercises(
        3,
        "tenxor.views",
        ("3.1", "Infer the -1 in a shape", "infer_shape", 3, []),
        ("3.2", "Squeeze as a layout", "squeeze_layout", 2, []),
        ("3.3", "Unsqueeze as a layout", "unsqueeze_layout", 2, []),
        ("3.4", "Permute as a layout", "permute_layout", 3, []),
        ("3.5", "Indexing and slicing as a layout", "index_layout", 3, []),
        ("3.6", "Find the runs of a layout", "layout_runs", 3, []),
        ("3.7", "Cut the runs into a new shape", "cut_runs", 3, ["3.1", "3.6"]),
    )
    + _exercises(
        4,
        "tenxor.broadcasting",
        ("4.1", "Broadcast shapes", "broadcast_shapes", 3, []),
        ("4.2", "Expand as a layout with stride 0", "expand_layout", 3, []),
        ("4.3", "Walk the offsets of a layout", "walk_offsets", 3, []),
        ("4.4", "Read a layout's values row by row", "read_values", 3, ["4.3"]),
        ("4.5", "The map kernel", "map_values", 2, ["4.4"]),
        ("4.6", "The zip kernel with broadcasting", "zip_values", 3,
         ["4.1", "4.2", "4.4"]),
    )
    + _exercises(
        5,
        "tenxor.reductions",
        ("5.1", "The reduce kernel", "reduce_values", 4, ["3.4", "4.4"]),
        ("5.2", "Mean from sum", "mean", 2, ["5.1", "4.6"]),
        ("5.3", "Argmax", "first_largest_position", 2, ["5.1"]),
        ("5.4", "The fused kernel: combine and fold as you walk", "combine_fold_values", 4,
         ["3.4", "4.1", "4.2", "4.3"]),
        ("5.5", "Batched matmul", "matmul", 3, ["3.2", "3.3", "3.4", "4.1", "5.4"]),
        ("5.6", "Stable softmax", "softmax", 3, ["5.1", "4.5", "4.6"]),
        ("5.7", "Masked softmax", "masked_softmax", 3, ["5.1", "4.5", "4.6"]),
    )
    + _exercises(
        6,
        "tenxor.graph_attention",
        ("6.1", "Project every node for every head", "project", 2, ["3.7", "4.6", "5.5"]),
        ("6.2", "Whom each node attends to", "attends", 2, ["3.3", "4.6"]),
        ("6.3", "Attention logits for every pair", "attention_logits", 2, ["3.3", "5.4"]),
        ("6.4", "Masked attention weights", "attention_weights", 2, ["3.3", "5.7"]),
        ("6.5", "Weighted sum of the senders", "aggregate", 2, ["3.4", "5.5"]),
        ("6.6", "Concatenate or average the heads", "combine_heads", 1, ["3.7", "5.2"]),
        ("6.7", "The GATv2 layer on a padded batch", "gatv2", 3,
         ["6.1", "6.2", "6.3", "6.4", "6.5", "6.6", "4.6"]),
    )
    + _exercises(
        6,
        "tenxor.scatter",
        ("6.8", "Gather rows by an index tensor", "gather_rows", 2, []),
        ("6.9", "Fold rows into a tensor by index", "index_reduce", 3, []),
        ("6.10", "Softmax within segments", "segment_softmax", 2, ["6.8", "6.9", "4.5", "4.6"]),
    )
    + _exercises(
        6,
        "tenxor.graph_attention",
        ("6.11", "The GATv2 layer on an edge list", "gatv2_edges", 3,
         ["6.1", "6.6", "6.8", "6.10", "6.9", "4.5", "4.6", "5.1", "5.4"]),
    )
)  # fmt: skip

BY_ID: dict[str, Exercise] = {exercise.id: exercise for exercise in CATALOG}
# Every module that holds an exercise, and every record that may cross judge and worker.
EXERCISE_MODULES: tuple[str, ...] = tuple(dict.fromkeys(item.module for item in CATALOG))
EXERCISE_FILES: tuple[str, ...] = tuple(sorted(map(module_file, EXERCISE_MODULES)))
RECORDS: tuple[str, ...] = tuple(record for chapter in CHAPTERS for record in chapter.records)
POINTS = 100  # what the exercises of the course are worth together


def chapter_of_notebook(notebook: str) -> Chapter:
    """The chapter taught by `notebook` (e.g. "notebooks/03_views.ipynb"), or a KeyError
    listing the notebooks of the catalog."""
    found = [chapter for chapter in CHAPTERS if chapter.notebook == notebook]
    if not found:
        known = ", ".join(chapter.notebook for chapter in CHAPTERS)
        raise KeyError(f"no chapter has the notebook {notebook!r}; the chapters have {known}")
    return found[0]


def tests_of(item: Exercise) -> list[str]:
    """The public test files that may test an exercise: its chapter's, then those that span
    the chapters."""
    return [*item.chapter.tests, *COURSE_TESTS]


def hidden_tests_of(item: Exercise) -> list[str]:
    """The hidden test files that may test an exercise: its chapter's, then those that span
    the chapters."""
    return [*item.chapter.hidden, *COURSE_HIDDEN]


def public_tests() -> tuple[str, ...]:
    """Every public test file of the course, each once."""
    return tuple(dict.fromkeys(f for c in CHAPTERS for f in c.tests)) + COURSE_TESTS


PUBLIC_TEST_FILES = frozenset(public_tests())


def is_hidden_test(node_id: str) -> bool:
    """Whether a test (by its pytest node id) is hidden: in any file but the public test
    files (a hidden file this catalog does not list is hidden too)."""
    return node_id.split("::")[0] not in PUBLIC_TEST_FILES


def hidden_tests() -> tuple[str, ...]:
    """Every hidden test file of the course (never released), each once."""
    return tuple(dict.fromkeys(f for c in CHAPTERS for f in c.hidden)) + COURSE_HIDDEN


def catalog_problems() -> list[str]:
    """Problems of the catalog itself: ids, chapters, points, dependencies."""
    found, order = [], [item.id for item in CATALOG]
    if len(set(order)) != len(order):
        found.append(f"exercise ids repeat: {order}")
    numbers = [chapter.number for chapter in CHAPTERS]
    if numbers != sorted(set(numbers)):
        found.append(f"chapter numbers repeat or are out of order: {numbers}")
    total = total_points()
    if total != POINTS:
        found.append(f"points add up to {total}, not {POINTS}")
    names = [record.rsplit(".", 1)[-1] for record in RECORDS]
    if len(set(names)) != len(names):
        found.append(f"records share a class name (the name they cross as): {RECORDS}")
    for item in CATALOG:
        if item.points <= 0:
            found.append(f"exercise {item.id} is worth {item.points} points")
        if item.module not in item.chapter.modules:
            found.append(
                f"exercise {item.id} is in {item.module}, which is not a module of chapter "
                f"{item.chapter.number} {item.chapter.modules}"
            )
        for dependency in item.depends_on:
            if dependency not in BY_ID or order.index(dependency) >= order.index(item.id):
                found.append(f"exercise {item.id} depends on {dependency}, not an earlier one")
    return found


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
