"""The student release: the course tree with every solution region replaced by a stub.

A stub is one line at the region's indentation,
`raise NotImplementedError("Exercise 2.1: <title> (notebooks/02_strides.ipynb)")`.
Hidden tests, the tooling's own tests and CI files stay behind; notebooks travel with their
outputs, but for the answers of predict-then-run cells (tagged `predict`), and Markdown files
without their instructor-only sections. The same source tree always gives the same release,
byte for byte.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Collection, Iterator
from fnmatch import fnmatch
from pathlib import Path

from tenxor.course.catalog import BY_ID, Exercise, stub_line

from .regions import RegionError, find_regions

# Never part of any copy of the course: environments, caches and build output.
LOCAL_ONLY = (
    ".git",
    ".venv",
    "__pycache__",
    "*.egg-info",
    ".pytest_cache",
    ".ruff_cache",
    ".hypothesis",
    ".ipynb_checkpoints",
    "build",
    "dist",
    "bench-check",  # the quick benchmark check's output (benchmarks/README.md)
    ".tenxor-hints.json",  # which hints check() has shown this learner
    "autograder.zip",  # what tenxor-instructor autograder writes
)
# Kept by the instructor: hidden tests, the tests of the tooling itself and CI.
INSTRUCTOR_ONLY = (
    "instructor",
    "tests/hidden",
    "tests/tooling",
    ".ci",
    "benchmarks/check_latency.py",  # times check() on a release it writes
    "benchmarks/grading_time.py",  # times the grader
)
# Left out of the trees that grading and verify build to run tests in.
NOT_NEEDED_FOR_TESTS = (
    *LOCAL_ONLY,
    "instructor",
    "tests/tooling",
    ".ci",
    "notebooks",
    "diagrams",
    "benchmarks",
)
# The cell tag of a predict-then-run question, whose stored output the release leaves out.
PREDICT_TAG = "predict"
# The lines around a Markdown section that is for instructors only.
INSTRUCTOR_BEGIN, INSTRUCTOR_END = "<!-- instructor -->", "<!-- /instructor -->"
# The comment that ends a line of pyproject.toml that is for instructors only.
INSTRUCTOR_LINE = "# instructor only"


def probe_line(exercise: Exercise, indent: str) -> str:
    """The line a probe tree puts at the top of a region: it notes that a test reached it."""
    return f'{indent}__import__("tenxor.course.runner").course.runner.reach("{exercise.id}")\n'


def stubbed_source(path: Path, stubbed: Collection[str] | None = None) -> str:
    """The text of `path` with the solution regions of the `stubbed` exercises (default: every
    exercise) replaced by their stubs.

    Raises RegionError naming file and line for unbalanced, nested or unknown markers.
    """
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    for region in reversed(find_regions(path, set(BY_ID))):
        if stubbed is not None and region.exercise_id not in stubbed:
            continue
        stub = stub_line(BY_ID[region.exercise_id], region.indent)
        lines[region.begin - 1 : region.end] = [stub]
    return "".join(lines)


def probed_source(path: Path) -> str:
    """The text of `path` with a probe line at the top of every solution region."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    for region in reversed(find_regions(path, set(BY_ID))):
        lines.insert(region.begin, probe_line(BY_ID[region.exercise_id], region.indent))
    return "".join(lines)


def without_predictions(path: Path) -> str:
    """The text of the notebook at `path` with the outputs of its predict-then-run cells
    (tagged `predict`) removed, so that a learner predicts before seeing the answer."""
    document = json.loads(path.read_text(encoding="utf-8"))
    for cell in document["cells"]:
        if PREDICT_TAG in cell.get("metadata", {}).get("tags", []):
            cell["outputs"], cell["execution_count"] = [], None
    return json.dumps(document, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def without_instructor_sections(text: str) -> str:
    """Markdown without its instructor-only sections: the lines from `<!-- instructor -->`
    to `<!-- /instructor -->`, both included."""
    kept, inside = [], False
    for line in text.splitlines(keepends=True):
        if line.strip() == INSTRUCTOR_BEGIN:
            inside = True
        elif line.strip() == INSTRUCTOR_END:
            inside = False
        elif not inside:
            kept.append(line)
    return "".join(kept).rstrip("\n") + "\n"


def released_document(relative: Path, source: Path) -> str | None:
    """The text the release writes for a notebook (answers of predict-then-run cells left
    out), a Markdown file (instructor sections left out) or pyproject.toml (instructor lines
    left out); None for any other file."""
    if relative.suffix == ".ipynb":
        return without_predictions(source)
    if relative.suffix == ".md":
        text = source.read_text(encoding="utf-8")
        return without_instructor_sections(text) if INSTRUCTOR_BEGIN in text else None
    if relative.name == "pyproject.toml":
        lines = source.read_text(encoding="utf-8").splitlines(keepends=True)
        return "".join(line for line in lines if INSTRUCTOR_LINE not in line)
    return None


def is_excluded(relative: Path, excluded: tuple[str, ...]) -> bool:
    """Whether a path (relative to the course root) is, or lies inside, an excluded entry."""
    text = relative.as_posix()
    for pattern in excluded:
        if "/" in pattern:
            if text == pattern or text.startswith(pattern + "/"):
                return True
        elif any(fnmatch(part, pattern) for part in relative.parts):
            return True
    return False


def course_files(root: Path, excluded: tuple[str, ...]) -> Iterator[Path]:
    """The files of the course tree at `root`, relative to it, in sorted order."""
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root)
        if path.is_file() and not is_excluded(relative, excluded):
            yield relative


def check_regions(root: Path) -> None:
    """Raise RegionError (file and line) if any solution marker in the package is wrong."""
    for path in sorted((root / "tenxor").rglob("*.py")):
        find_regions(path, set(BY_ID))


def write_tree(
    root: Path,
    destination: Path,
    excluded: tuple[str, ...],
    rewrite: Callable[[Path], str] = stubbed_source,
    documents: Callable[[Path, Path], str | None] | None = None,
) -> list[Path]:
    """Copy the course at `root` to `destination` (which must not exist yet), leaving out
    `excluded` and passing the package's modules through `rewrite` (default: stub every
    exercise); `documents(relative, source)` may give the text of any other file (None: copy
    it as it is). The files written, relative to `destination`.
    """
    root, destination = root.resolve(), destination.resolve()
    check_regions(root)
    inside = destination.relative_to(root).as_posix() if destination.is_relative_to(root) else None
    excluded = excluded + ((inside,) if inside else ())
    written = []
    for relative in course_files(root, excluded):
        target = destination / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        source = root / relative
        if relative.parts[0] == "tenxor" and relative.suffix == ".py":
            target.write_text(rewrite(source), encoding="utf-8")
        elif documents and (text := documents(relative, source)) is not None:
            target.write_text(text, encoding="utf-8")
        else:
            shutil.copyfile(source, target)
        written.append(relative)
    return written


def write_release(root: Path, destination: Path, replace: bool = False) -> list[Path]:
    """Write the student release of the course at `root` into `destination`.

    Refuses to write into an existing folder unless `replace` is true, in which case the
    folder is emptied first. Returns the files written, relative to `destination`.
    """
    destination = Path(destination)
    if destination.exists():
        if not replace:
            raise FileExistsError(
                f"{destination} already exists; choose a new folder or pass --replace"
            )
        if Path(root).resolve().is_relative_to(destination.resolve()):
            raise ValueError(f"{destination} is the course itself (or holds it), not a release")
        shutil.rmtree(destination)
    try:
        return write_tree(
            Path(root), destination, LOCAL_ONLY + INSTRUCTOR_ONLY, documents=released_document
        )
    except RegionError:
        shutil.rmtree(destination, ignore_errors=True)
        raise
