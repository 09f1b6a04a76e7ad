"""Checks in the browser, where Python (Pyodide) has no processes: the tests run in the
kernel itself, as a separate process would run them.

    run_in_this_process(root, ["tests/test_strides.py", "--exercise", "2.1"], 20.0)

The modules of the course tree (tenxor's and the tests') are set aside before the run and
put back after it, so the run imports the files as they are now (a learner's edits count
without a restart) and the notebook keeps the modules it imported. Without signals, a test's
time limit is kept by the runner plugin's trace function (see runner.Timer), which stops a
loop that never ends at its next line.
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import stat
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from ..broken import modules_set_aside
from .running import PLUGIN_OPTIONS, PytestProcess, Run, record_not_run

IN_BROWSER = sys.platform == "emscripten"
OUTPUT_CHARS = 4000  # of what the run printed, kept as a process's output is
# In the browser, what a check reads, copied into memory (see tree_to_read).
MEMORY_COPY = Path(tempfile.gettempdir()) / "tenxor-course"
COPIED = ("tenxor", "tests", "pyproject.toml")


def tree_to_read(root: Path) -> Path:
    """The tree a check reads and runs its tests in: `root` itself on a machine. In the
    browser, each look at the browser's storage is a request (a check looked hundreds of
    times), so a check works in a copy in memory, brought up to date with `root` first."""
    if not IN_BROWSER:
        return root
    brought_up_to_date(root, MEMORY_COPY, COPIED)
    return MEMORY_COPY


def brought_up_to_date(source: Path, copy: Path, names: tuple[str, ...]) -> None:
    """Make `copy` hold the files and folders `names` of `source` as they are now: a file is
    copied again only where its size or modification time (kept on the copy) differs, and
    one no longer in `source` is removed from `copy`."""
    now = {path: info for name in names for path, info in files_below(source, name).items()}
    before = {path: info for name in names for path, info in files_below(copy, name).items()}
    for relative in before.keys() - now.keys():
        (copy / relative).unlink()
    for relative, (size, modified) in now.items():
        if before.get(relative) != (size, modified):
            (copy / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source / relative, copy / relative)
            os.utime(copy / relative, ns=(modified, modified))


def files_below(root: Path, name: str) -> dict[str, tuple[int, int]]:
    """Each file of `root`'s file or folder `name` (none of its compiled or hidden ones), by
    its path relative to `root`: its size and modification time in nanoseconds."""
    try:
        info = (root / name).stat()  # one look per file, and one listing per folder
    except FileNotFoundError:
        return {}
    if not stat.S_ISDIR(info.st_mode):
        return {name: (info.st_size, info.st_mtime_ns)}
    found: dict[str, tuple[int, int]] = {}
    for entry in os.scandir(root / name):
        if entry.name != "__pycache__" and not entry.name.startswith("."):
            found.update(files_below(root, f"{name}/{entry.name}"))
    return found


@contextlib.contextmanager
def as_a_test_process(root: Path, profile: str) -> Iterator[io.StringIO]:
    """What a test process would have in the block: the tree as its folder, the hypothesis
    profile, no bytecode written into the tree, and its own output (yielded)."""
    folder, path, writes = Path.cwd(), list(sys.path), sys.dont_write_bytecode
    profile_before = os.environ.get("TENXOR_HYPOTHESIS_PROFILE")
    output = io.StringIO()
    os.chdir(root)
    sys.dont_write_bytecode = writes if sys.pycache_prefix else True  # none among the files
    os.environ["TENXOR_HYPOTHESIS_PROFILE"] = profile
    try:
        with contextlib.redirect_stdout(output), contextlib.redirect_stderr(output):
            yield output
    finally:
        os.chdir(folder)
        sys.path[:] = path
        sys.dont_write_bytecode = writes
        if profile_before is None:
            os.environ.pop("TENXOR_HYPOTHESIS_PROFILE", None)
        else:
            os.environ["TENXOR_HYPOTHESIS_PROFILE"] = profile_before


def run_in_this_process(
    root: Path, pytest_args: list[str], seconds: float, profile: str = "check"
) -> Run:
    """Run pytest on the tree at `root` in this process, each test stopped after `seconds`
    and the run after twice that; every test's result, as run_tests gives it."""
    import pytest  # the kernel's first check pays for it, not its start

    started, run = time.monotonic(), Run()
    with tempfile.TemporaryDirectory(prefix="tenxor-check-") as scratch:
        pytest_process = PytestProcess(root, Path(scratch), 1)
        options = [*PLUGIN_OPTIONS, f"--results={pytest_process.events_path}"]
        options += [f"--test-timeout={seconds}", "--continue-on-collection-errors"]
        options += ["--capture=sys", "-p", "no:faulthandler", *pytest_args]
        with modules_set_aside(root), as_a_test_process(root, profile) as output:
            code = pytest.main(options)
        pytest_process.take(run)
    run.output = output.getvalue()[-OUTPUT_CHARS:]
    if not pytest_process.finished:
        run.problem = f"pytest could not run them (exit code {int(code)})"
    elif any(result.timed_out for result in run.results.values()):
        run.problem = f"stopped after {seconds:g} s, the time a check may take"
    record_not_run(run, "the run stopped before it")
    run.seconds = time.monotonic() - started
    return run
