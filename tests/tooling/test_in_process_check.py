"""check() where there are no processes and no signals (the browser's Pyodide): the tests run
in the calling process, with the tree's modules imported afresh and put back afterwards, a
loop that never ends stopped at its next line, and the same statuses and report as a check
in a separate process gives."""

from __future__ import annotations

import io
import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from instructor.authoring.release import write_release
from tenxor.course.broken import import_problem, modules_of_tree
from tenxor.course.check import DONE, FAILING, NOT_STARTED, check_exercise
from tenxor.course.engine import Limits, warm
from tenxor.course.engine.in_process import COPIED, brought_up_to_date, tree_to_read
from tests.tooling.submissions import replace_stub, restore

pytestmark = pytest.mark.provided

QUICK = Limits(test_seconds=2.0, run_seconds=2.0, memory_mb=2048)


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("in-process") / "release"
    write_release(Path(__file__).resolve().parents[2], folder)
    return folder


@pytest.fixture
def in_the_browser(monkeypatch) -> Iterator[None]:
    """As in Pyodide: no processes for a check, no interval timer; the hypothesis profile
    of this process as it was, afterwards."""
    monkeypatch.setattr(warm, "IN_BROWSER", True)
    monkeypatch.delattr(signal, "setitimer")
    profile = settings._current_profile  # noqa: SLF001 - a nested run loads the course's
    yield
    settings.load_profile(profile)


def checked(exercise_id: str, root: Path, limits: Limits = QUICK) -> tuple[object, str]:
    """check_exercise's status and report."""
    report = io.StringIO()
    status = check_exercise(exercise_id, root, report, limits)
    return status, report.getvalue()


def test_a_stub_a_runaway_loop_and_a_solution_checked_in_this_process(release, in_the_browser):
    before = dict(sys.modules)
    status, report = checked("2.1", release)
    assert status.state == NOT_STARTED and status.total > 0, report
    replace_stub(release, "2.1", "while True:\n    pass")
    status, report = checked("2.1", release)
    assert status.state == FAILING and "stopped after 2 s" in report, report
    assert "raised at tenxor/strides.py:" in report, report
    write_release(Path(__file__).resolve().parents[2], release, replace=True)
    restore(release, "2.1")
    status, report = checked("2.1", release)
    assert status.state == DONE and status.passed == status.total > 0, report
    kept = {name: module for name, module in sys.modules.items() if name in before}
    changed = [name for name, module in kept.items() if before[name] is not module]
    assert not changed, f"the check replaced the caller's modules {changed[:5]}"
    assert not modules_of_tree(release).keys() - before.keys(), "modules of the run were left"


def test_the_report_in_this_process_is_the_report_of_a_separate_process(
    release, in_the_browser, monkeypatch
):
    """A wrong answer: the same report, line for line, call, result and rule included; the
    kernel's hypothesis shrinks as long as before."""
    from hypothesis.internal.conjecture import engine

    write_release(Path(__file__).resolve().parents[2], release, replace=True)
    replace_stub(release, "2.2", "return tuple(1 for _ in shape)")
    shrinking = engine.MAX_SHRINKING_SECONDS
    _, here = checked("2.2", release, Limits())
    assert shrinking == engine.MAX_SHRINKING_SECONDS, (
        f"after a check, hypothesis shrinks for {engine.MAX_SHRINKING_SECONDS} s, "
        f"not the {shrinking} s it had before"
    )
    monkeypatch.undo()  # a check in a separate process, as on a machine
    _, apart = checked("2.2", release, Limits())
    assert "First failure" in here and here == apart


def test_a_module_that_does_not_import_is_named_without_a_process(release, monkeypatch):
    write_release(Path(__file__).resolve().parents[2], release, replace=True)
    path = release / "tenxor" / "views.py"
    path.write_text(path.read_text(encoding="utf-8") + "\nraise RuntimeError('boom 42')\n")
    monkeypatch.setattr(sys, "platform", "emscripten")
    before = sys.modules.get("tenxor.views")
    problem = import_problem(release)
    assert problem and "tenxor/views.py" in problem[0] and "boom 42" in " ".join(problem)
    assert sys.modules.get("tenxor.views") is before, "the failed import took the caller's place"


def test_the_copy_in_memory_follows_every_change_and_reads_only_changed_files(tmp_path):
    """In the browser a check reads a copy of the course in memory: brought up to date, it
    holds exactly the files the course holds now (an edited file, a new one, none that was
    removed, no compiled ones), and a file whose size and time did not change is not read
    again (a look at the browser's storage is a request)."""
    source, copy = tmp_path / "course", tmp_path / "copy"
    (source / "tenxor" / "__pycache__").mkdir(parents=True)
    (source / "tests").mkdir()
    files = {"tenxor/strides.py": "def f():\n    return 1\n", "tenxor/views.py": "x = 1\n",
             "tests/test_strides.py": "def test():\n    pass\n",
             "pyproject.toml": "[x]\n"}  # fmt: skip
    for relative, text in files.items():
        (source / relative).write_text(text)
    (source / "tenxor" / "__pycache__" / "strides.cpython-312.pyc").write_bytes(b"\0")
    names = COPIED  # what a check reads: the package, its tests, the project file

    def held(folder: Path) -> dict[str, str]:
        return {p.relative_to(folder).as_posix(): p.read_text() for p in folder.rglob("*")
                if p.is_file()}  # fmt: skip

    brought_up_to_date(source, copy, names)
    assert held(copy) == files
    unchanged = copy / "tenxor" / "views.py"  # planted: only a read of it again would undo it
    times = unchanged.stat().st_atime_ns, unchanged.stat().st_mtime_ns
    unchanged.write_text("y = 2\n")
    os.utime(unchanged, ns=times)
    (source / "tenxor" / "strides.py").write_text("def f():\n    return 2\n")  # same size
    os.utime(source / "tenxor" / "strides.py", ns=(10**18, 10**18))
    (source / "tests" / "test_strides.py").unlink()
    (source / "tests" / "test_views.py").write_text("def test():\n    assert True\n")
    brought_up_to_date(source, copy, names)
    expected = {path: text for path, text in held(source).items() if "__pycache__" not in path}
    expected["tenxor/views.py"] = "y = 2\n"
    assert held(copy) == expected, "the copy does not hold the course as it is now"
    assert tree_to_read(source) == source, "on a machine a check reads the course itself"
