"""Fixture submissions for the grading tests: each one starts from a complete submission (the
reference exercise modules) and breaks it in one way, and says which chapter-1 exercises it
must lose and what the student must be told."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from instructor.regions import find_regions
from instructor.release import LOCAL_ONLY, stubbed_source, write_tree
from tenxor.course.catalog import BY_ID, CATALOG, stub_line

ROOT = Path(__file__).resolve().parents[2]
MODULES = sorted({item.path for item in CATALOG})
CHAPTER_1 = [item.id for item in CATALOG if item.id.startswith("1.")]


def complete_submission(folder: Path) -> None:
    """A submission holding the reference version of every exercise module."""
    for module in MODULES:
        target = folder / module
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes((ROOT / module).read_bytes())


def copy_of_reference(destination: Path) -> Path:
    """A copy of the instructor's course, solutions and hidden tests included."""
    write_tree(ROOT, destination, LOCAL_ONLY, rewrite=lambda path: path.read_text())
    return destination


def replace_region(path: Path, exercise_id: str, body: str) -> None:
    """Replace the solution region of one exercise in a submitted module by `body`."""
    region = next(r for r in find_regions(path) if r.exercise_id == exercise_id)
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    new = [region.indent + line + "\n" for line in body.strip("\n").splitlines()]
    lines[region.begin - 1 : region.end] = new
    path.write_text("".join(lines), encoding="utf-8")


def in_region(exercise_id: str, body: str) -> Callable[[Path], None]:
    def edit(folder: Path) -> None:
        replace_region(folder / BY_ID[exercise_id].path, exercise_id, body)

    return edit


def appended(module: str, text: str) -> Callable[[Path], None]:
    def edit(folder: Path) -> None:
        with (folder / module).open("a", encoding="utf-8") as stream:
            stream.write("\n" + text + "\n")

    return edit


def written(relative: str, data: bytes | str) -> Callable[[Path], None]:
    def edit(folder: Path) -> None:
        target = folder / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(data, str):
            target.write_text(data, encoding="utf-8")
        else:
            target.write_bytes(data)

    return edit


def recoded(module: str, change: Callable[[bytes], bytes]) -> Callable[[Path], None]:
    """The module's bytes passed through `change`, as an editor might save them."""

    def edit(folder: Path) -> None:
        (folder / module).write_bytes(change((folder / module).read_bytes()))

    return edit


def indented_with_tabs(data: bytes) -> bytes:
    """Every four spaces of indentation as one tab."""
    lines = data.decode("utf-8").splitlines(keepends=True)
    tabbed = []
    for line in lines:
        body = line.lstrip(" ")
        tabbed.append(
            "\t" * ((len(line) - len(body)) // 4) + " " * ((len(line) - len(body)) % 4) + body
        )
    return "".join(tabbed).encode("utf-8")


def removed(*modules: str) -> Callable[[Path], None]:
    def edit(folder: Path) -> None:
        for module in modules:
            (folder / module).unlink()

    return edit


def stubbed(module: str) -> Callable[[Path], None]:
    """The module as the release gives it: every exercise of it not started."""

    def edit(folder: Path) -> None:
        (folder / module).write_text(stubbed_source(ROOT / module), encoding="utf-8")

    return edit


def linked_to_solution(module: str) -> Callable[[Path], None]:
    def edit(folder: Path) -> None:
        (folder / module).unlink()
        os.symlink(ROOT / module, folder / module)

    return edit


PASS_EVERYTHING = """\
import pytest

@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    report.outcome = "passed"
    report.longrepr = None
"""
FAKE_TESTS = """\
import pytest

@pytest.mark.exercise("1.1")
def test_numel():
    assert True
"""


@dataclass(frozen=True)
class Fixture:
    """A submission, the chapter-1 exercises it must lose, and a phrase its report names."""

    name: str
    edits: tuple[Callable[[Path], None], ...]
    lost: tuple[str, ...]
    says: str

    def build(self, folder: Path) -> Path:
        complete_submission(folder)
        for edit in self.edits:
            edit(folder)
        return folder


STORAGE = "tenxor/storage.py"
FIXTURES = (
    Fixture("complete", (), (), "Graded modules: tenxor/broadcasting.py"),
    Fixture("half-done", (in_region("1.2", stub_line(BY_ID["1.2"], "")),), ("1.2",),
            "not done: it still raises NotImplementedError"),
    Fixture("not-started", (stubbed(STORAGE),), tuple(CHAPTER_1), "not done"),
    Fixture("infinite-loop", (in_region("1.1", "while True:\n    pass"),), ("1.1",),
            "time limit"),
    Fixture("unbounded-recursion",
            (in_region("1.3", "return byte_strides(strides, itemsize)"),), ("1.3",),
            "RecursionError"),
    Fixture("memory-blow-up",
            (in_region("1.1", "blocks = []\nwhile True:\n    blocks.append(bytearray(10**7))"),),
            ("1.1",), "memory limit"),
    Fixture("syntax-error-in-storage", (appended(STORAGE, "def broken(:"),), tuple(CHAPTER_1),
            "tenxor/storage.py has a syntax error at line"),
    Fixture("syntax-error-elsewhere", (appended("tenxor/views.py", "def broken(:"),), (),
            "tenxor/views.py has a syntax error"),
    Fixture("exception-at-import", (appended(STORAGE, "raise RuntimeError('boom')"),),
            tuple(CHAPTER_1), "RuntimeError: boom"),
    Fixture("sys-exit-at-import", (appended(STORAGE, "import sys\nsys.exit(0)"),),
            tuple(CHAPTER_1), "ended the process"),
    Fixture("os-exit-at-import", (appended(STORAGE, "import os\nos._exit(0)"),),
            tuple(CHAPTER_1), "ended the process"),
    Fixture("sys-exit-in-function", (in_region("1.3", "import sys\nsys.exit(0)"),), ("1.3",),
            "SystemExit"),
    Fixture("os-exit-in-function", (in_region("1.1", "import os\nos._exit(0)"),), ("1.1",),
            "the test process ended (exit code 0)"),
    Fixture("planted-conftest",
            (stubbed(STORAGE), written("conftest.py", PASS_EVERYTHING),
             written("tests/conftest.py", PASS_EVERYTHING)),
            tuple(CHAPTER_1), "conftest.py"),
    Fixture("edited-tests",
            (stubbed(STORAGE), written("tests/test_storage.py", FAKE_TESTS)),
            tuple(CHAPTER_1), "tests/test_storage.py"),
    Fixture("prints-50-MB", (appended(STORAGE, "print('x' * 50_000_000)"),), (),
            "printed more than 8 MB; the rest was dropped"),
    Fixture("missing-files", (removed(*[m for m in MODULES if m != STORAGE]),), (),
            "tenxor/views.py is missing"),
    Fixture("no-modules-at-all", (removed(*MODULES),), tuple(CHAPTER_1),
            "tenxor/storage.py is missing"),
    Fixture("not-utf-8", (written(STORAGE, b"def numel(shape):\n    return '\xff'\n"),),
            tuple(CHAPTER_1), "not valid UTF-8"),
    Fixture("symlink-to-the-solution", (linked_to_solution(STORAGE),), tuple(CHAPTER_1),
            "symbolic link"),
    Fixture("segfault-in-storage",
            (in_region("1.1", "import ctypes\nreturn ctypes.string_at(0)"),), ("1.1",),
            "ended or hung the test process 2 times"),
    Fixture("recursion-past-the-c-stack",
            (in_region("1.3", "import sys\nsys.setrecursionlimit(10**8)\n"
                              "def deeper(n):\n    return deeper(n + 1) + 1\n"
                              "return deeper(0)"),), ("1.3",), "1.3"),
    Fixture("byte-order-mark", (recoded(STORAGE, lambda data: b"\xef\xbb\xbf" + data),), (),
            "Graded modules: tenxor/broadcasting.py"),
    Fixture("crlf-line-endings", (recoded(STORAGE, lambda data: data.replace(b"\n", b"\r\n")),),
            (), "Graded modules: tenxor/broadcasting.py"),
    Fixture("indented-with-tabs", (recoded(STORAGE, indented_with_tabs),), (),
            "Graded modules: tenxor/broadcasting.py"),
    Fixture("prints-5-MB-to-stderr-at-import",
            (appended(STORAGE, "import sys\nsys.stderr.write('x' * 5_000_000)"),), (),
            "Graded modules: tenxor/broadcasting.py"),
)  # fmt: skip


def replace_stub(folder: Path, exercise_id: str, body: str) -> None:
    """In a release, put `body` (lines without indentation) in place of an exercise's stub."""
    module = BY_ID[exercise_id].path
    region = next(r for r in find_regions(ROOT / module) if r.exercise_id == exercise_id)
    stub = stub_line(BY_ID[exercise_id], region.indent)
    text = (folder / module).read_text(encoding="utf-8")
    assert stub in text, f"exercise {exercise_id} is not a stub in {folder / module}"
    lines = "".join(region.indent + line + "\n" for line in body.strip("\n").splitlines())
    (folder / module).write_text(text.replace(stub, lines), encoding="utf-8")


def restore(folder: Path, exercise_id: str) -> None:
    """In a release, put the reference solution of one exercise back in place of its stub."""
    module = BY_ID[exercise_id].path
    region = next(r for r in find_regions(ROOT / module) if r.exercise_id == exercise_id)
    solution = (ROOT / module).read_text(encoding="utf-8").splitlines(keepends=True)
    body = "".join(
        line.removeprefix(region.indent) for line in solution[region.begin : region.end - 1]
    )
    replace_stub(folder, exercise_id, body)
