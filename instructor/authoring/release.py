"""The student release: the course tree with every solution region replaced by a stub.

A stub is one line at the region's indentation,
`raise NotImplementedError("Exercise 2.1: <title> (notebooks/02_strides.ipynb)")`.
Hidden tests, the tooling's own tests and CI files stay behind. Notebooks travel with their
outputs, but for the answers of predict-then-run cells (tagged `predict`) and the reports of
check cells (a verdict stored before the learner has written anything would be a lie).
Markdown files leave out their instructor-only sections and the solutions release's own, so
that the release speaks only of what a learner runs (course.py is the learner's alone, the
same in both trees; the instructor's test run is instructor.ci). The same source tree always
gives the same release, byte for byte.

The solutions release, for after the deadline, is the same tree with every solution region
filled in instead: the reference code kept without its marker lines, as a learner's finished
file reads. Its check cells ship empty too (running them says "done"); predict-then-run cells
keep their answers. Its Markdown keeps the sections marked for it (`<!-- solutions release -->`)
in place of the student release's (`<!-- student release -->`): its README speaks to a
reader of solutions, not to a learner with exercises to fill in.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Callable, Collection, Iterator
from fnmatch import fnmatch
from pathlib import Path

from instructor.entry_points import probe_line
from tenxor.course.catalog import BY_ID, HIDDEN_TESTS, TOOLING_TESTS, stub_line

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
    ".tenxor-results.json",  # the test results check() remembers for the progress table
    "autograder.zip",  # what tenxor-instructor autograder writes
    "*.partial",  # a write cut short (tenxor.course.files)
)
# Kept by the instructor: hidden tests, the tests of the tooling itself and CI.
INSTRUCTOR_ONLY = (
    "instructor",
    HIDDEN_TESTS,
    TOOLING_TESTS,
    ".ci",
    "benchmarks/check_latency.py",  # times check() on a release it writes
    "benchmarks/grading_time.py",  # times the grader
    "benchmarks/grading_cost.py",  # measures the grader's CPU time, with the red team's class
    "benchmarks/partial_credit.py",  # scores wrong answers with the hidden tests
)
# Left out of the trees that grading and verify build to run tests in.
NOT_NEEDED_FOR_TESTS = (
    *LOCAL_ONLY,
    "instructor",
    TOOLING_TESTS,
    ".ci",
    "notebooks",
    "diagrams",
    "benchmarks",
)
# The cell tag of a predict-then-run question, whose stored output the release leaves out.
PREDICT_TAG = "predict"
# A check cell: a code cell with a line that calls check(...), e.g. `check("2.1")`. The
# release leaves out its stored report.
CHECK_CALL = re.compile(r"^\s*check\(", re.MULTILINE)
# The lines around a Markdown section that is for instructors only.
INSTRUCTOR_BEGIN, INSTRUCTOR_END = "<!-- instructor -->", "<!-- /instructor -->"
# The lines around a Markdown section that one release alone keeps: the student release's
# (how to fill in the exercises) or the solutions release's (what its reader runs).
STUDENT_BEGIN, STUDENT_END = "<!-- student release -->", "<!-- /student release -->"
SOLUTIONS_BEGIN, SOLUTIONS_END = "<!-- solutions release -->", "<!-- /solutions release -->"
# Which sections of Markdown each tree keeps (True) or leaves out (False), by their lines.
STUDENT_SECTIONS = {
    (INSTRUCTOR_BEGIN, INSTRUCTOR_END): False,
    (STUDENT_BEGIN, STUDENT_END): True,
    (SOLUTIONS_BEGIN, SOLUTIONS_END): False,
}
SOLUTIONS_SECTIONS = {
    (INSTRUCTOR_BEGIN, INSTRUCTOR_END): False,
    (STUDENT_BEGIN, STUDENT_END): False,
    (SOLUTIONS_BEGIN, SOLUTIONS_END): True,
}
# The comment that ends a line of pyproject.toml that is for instructors only.
INSTRUCTOR_LINE = "# instructor only"


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


def solved_source(path: Path) -> str:
    """The text of `path` with every solution region filled in: the reference code kept, its
    `# BEGIN SOLUTION` and `# END SOLUTION` lines left out.

    Raises RegionError naming file and line for unbalanced, nested or unknown markers.
    """
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    for region in reversed(find_regions(path, set(BY_ID))):
        del lines[region.end - 1], lines[region.begin - 1]
    return "".join(lines)


def probed_source(path: Path) -> str:
    """The text of `path` with a probe call at the top of every solution region, on its
    BEGIN line (the marker kept after it as a comment): every line stays where it was, so a
    failure in the probed tree names the lines of the tree itself."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    for region in find_regions(path, set(BY_ID)):
        probe = probe_line(region.indent, region.exercise_id).rstrip("\n")
        lines[region.begin - 1] = f"{probe}  {lines[region.begin - 1].strip()}\n"
    return "".join(lines)


class SectionError(ValueError):
    """An instructor-only section or block that is not closed, or closed without being opened."""


def is_check_cell(cell: dict) -> bool:
    """Whether a notebook cell (as JSON) is a check cell: code with a line calling check()."""
    source = cell.get("source", "")
    source = source if isinstance(source, str) else "".join(source)
    return cell.get("cell_type") == "code" and bool(CHECK_CALL.search(source))


def hides_output(cell: dict) -> bool:
    """Whether the release ships a notebook cell without its stored output: the answer of a
    predict-then-run question (tagged `predict`) or a check cell."""
    return PREDICT_TAG in cell.get("metadata", {}).get("tags", []) or is_check_cell(cell)


def released_notebook(path: Path, hides: Callable[[dict], bool] = hides_output) -> str:
    """The text of the notebook at `path` with the outputs and execution counts of the cells
    `hides` names removed (default: predict-then-run cells and check cells: a learner predicts
    before seeing the answer, and runs check() before reading a verdict)."""
    document = json.loads(path.read_text(encoding="utf-8"))
    for cell in document["cells"]:
        if hides(cell):
            cell["outputs"], cell["execution_count"] = [], None
    return json.dumps(document, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def without_sections(text: str, begin: str, end: str, name: str = "text") -> str:
    """`text` without the lines from a line starting with `begin` to the line `end`, both
    included (lines compared without surrounding blanks).

    Raises SectionError naming `name` and the line for an `end` without a `begin`, a `begin`
    inside a section, or a section never closed.
    """
    return with_sections(text, {(begin, end): False}, name)


def with_sections(text: str, sections: dict[tuple[str, str], bool], name: str = "text") -> str:
    """`text` with each section marked by one of `sections`' (begin, end) lines kept (True)
    or left out (False): the lines from a line starting with `begin` to the line `end`,
    without those two lines either way (lines compared without surrounding blanks).

    Raises SectionError naming `name` and the line for an `end` without its `begin`, a
    section inside another, or a section never closed.
    """
    kept, opened = [], None  # opened: the line that opened the current section, its marks
    for number, line in enumerate(text.splitlines(keepends=True), start=1):
        stripped = line.strip()
        begun = next((marks for marks in sections if stripped.startswith(marks[0])), None)
        ended = next((marks for marks in sections if stripped == marks[1]), None)
        if begun:
            if opened is not None:
                raise SectionError(
                    f"{name}:{number}: {begun[0]} inside the section of line {opened[0]}"
                )
            opened = (number, begun)
        elif ended:
            if opened is None or opened[1] != ended:
                raise SectionError(f"{name}:{number}: {ended[1]} without a matching {ended[0]}")
            opened = None
        elif opened is None or sections[opened[1]]:
            kept.append(line)
    if opened is not None:
        begin, end = opened[1]
        raise SectionError(f"{name}:{opened[0]}: {begin} is never closed by {end}")
    return "".join(kept)


def released_markdown(
    text: str, name: str = "text", sections: dict[tuple[str, str], bool] = STUDENT_SECTIONS
) -> str:
    """Markdown without its instructor-only sections (the lines from `<!-- instructor -->`
    to `<!-- /instructor -->`, both included) and with the sections of one release kept or
    left out as `sections` says (default: the student release's)."""
    return with_sections(text, sections, name).rstrip("\n") + "\n"


def has_line(text: str, start: str) -> bool:
    """Whether a line of `text`, without surrounding blanks, starts with `start`."""
    return any(line.strip().startswith(start) for line in text.splitlines())


def released_document(
    relative: Path,
    source: Path,
    hides: Callable[[dict], bool] = hides_output,
    sections: dict[tuple[str, str], bool] = STUDENT_SECTIONS,
) -> str | None:
    """The text the release writes for a notebook (outputs of the cells `hides` names left
    out; default: answers of predict-then-run cells and reports of check cells), a Markdown
    file (instructor sections left out, the sections of one release kept or left out as
    `sections` says; default: the student release's), a Python script (instructor blocks
    left out) or pyproject.toml (instructor lines left out); None for any other file, and
    for a file with nothing to leave out."""
    if relative.suffix == ".ipynb":
        return released_notebook(source, hides)
    if relative.suffix == ".md":
        text = source.read_text(encoding="utf-8")
        if any(has_line(text, begin) or has_line(text, end) for begin, end in sections):
            return released_markdown(text, relative.as_posix(), sections)
        return None
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
    """The files of the course tree at `root`, relative to it, in sorted order. An excluded
    folder is not entered (a .venv beside the course holds tens of thousands of files)."""
    found = []
    for folder, subfolders, files in os.walk(root):
        place = Path(folder).relative_to(root)
        subfolders[:] = [name for name in subfolders if not is_excluded(place / name, excluded)]
        found += [place / name for name in files if not is_excluded(place / name, excluded)]
    for relative in sorted(found, key=lambda path: path.parts):
        if (root / relative).is_file():
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
    bytecode: bool = False,
) -> list[Path]:
    """Copy the course at `root` to `destination` (which must not exist yet), leaving out
    `excluded` and passing the package's modules through `rewrite` (default: stub every
    exercise); `documents(relative, source)` may give the text of any other file (None: copy
    it as it is). With `bytecode`, each module copied as it is keeps the bytecode Python and
    pytest compiled it to (see with_bytecode). The files written, relative to `destination`.
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
            text = rewrite(source)
        else:
            text = documents(relative, source) if documents else None
        if bytecode and relative.suffix == ".py" and (text is None or text == read_text(source)):
            with_bytecode(source, target)
        elif text is not None:
            target.write_text(text, encoding="utf-8")
        else:
            shutil.copyfile(source, target)
        written.append(relative)
    return written


def read_text(path: Path) -> str | None:
    """The text of a UTF-8 file, or None if it is not one."""
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        return None


def compiled_files(module: Path) -> list[Path]:
    """The bytecode files compiled from the module file `module` in its folder's
    __pycache__: Python's, and pytest's for a test module whose asserts it rewrote."""
    return sorted((module.parent / "__pycache__").glob(f"{module.stem}.*.pyc"))


def with_bytecode(module: Path, target: Path) -> None:
    """Copy the module file `module` to `target` with the bytecode compiled from it
    (compiled_files), and with its modification time, by which Python and pytest take that
    bytecode for the module's, exactly as they do in `module`'s folder (bytecode that
    records another time or size than the module's is compiled again)."""
    shutil.copyfile(module, target)
    made = module.stat()
    os.utime(target, ns=(made.st_atime_ns, made.st_mtime_ns))
    for compiled in compiled_files(module):
        (target.parent / "__pycache__").mkdir(exist_ok=True)
        shutil.copyfile(compiled, target.parent / "__pycache__" / compiled.name)


def solutions_document(relative: Path, source: Path) -> str | None:
    """The text the solutions release writes for a file, as the release does (see
    released_document), but for predict-then-run cells, which keep their answers, and
    Markdown, which keeps the solutions release's sections instead of the student
    release's."""
    return released_document(relative, source, is_check_cell, SOLUTIONS_SECTIONS)


def write_release(root: Path, destination: Path, replace: bool = False) -> list[Path]:
    """Write the student release of the course at `root` into `destination`.

    Refuses to write into an existing folder unless `replace` is true, in which case the
    folder is emptied first. Returns the files written, relative to `destination`.
    """
    return write_learners_tree(root, destination, replace, stubbed_source, released_document)


def write_solutions(root: Path, destination: Path, replace: bool = False) -> list[Path]:
    """Write the solutions release of the course at `root` into `destination`: the student
    release with every solution region filled in, and predict-then-run cells with their
    answers. Refuses an existing folder, and `replace`s one, as write_release does."""
    return write_learners_tree(root, destination, replace, solved_source, solutions_document)


def write_learners_tree(
    root: Path,
    destination: Path,
    replace: bool,
    rewrite: Callable[[Path], str],
    documents: Callable[[Path, Path], str | None],
) -> list[Path]:
    """Write a tree for learners (a release) of the course at `root` into `destination`:
    instructor files left behind, the package's modules through `rewrite`, other files
    through `documents` (see write_tree). Refuses an existing folder unless `replace` is
    true; leaves nothing behind when a marker or an instructor section is wrong. The files
    written, relative to `destination`."""
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
        return write_tree(Path(root), destination, LOCAL_ONLY + INSTRUCTOR_ONLY, rewrite, documents)
    except (RegionError, SectionError):
        shutil.rmtree(destination, ignore_errors=True)
        raise
