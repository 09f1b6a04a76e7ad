"""Checks in the browser, where Python (Pyodide) has no processes: the tests run in the
kernel itself, as a separate process would run them.

    pytest_in_this_process(root, ["tests/test_strides.py", "--exercise", "2.1"], output, {})

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
import sys
from collections.abc import Iterator
from pathlib import Path
from unittest import mock

from ..broken import modules_set_aside

IN_BROWSER = sys.platform == "emscripten"


@contextlib.contextmanager
def as_a_test_process(root: Path, environment: dict[str, str]) -> Iterator[io.StringIO]:
    """What a test process would have in the block: the tree as its folder, `environment`
    added to its own, no bytecode written into the tree, and its own output (yielded)."""
    folder, writes, output = Path.cwd(), sys.dont_write_bytecode, io.StringIO()
    os.chdir(root)
    sys.dont_write_bytecode = writes if sys.pycache_prefix else True  # none among the files
    try:
        with (
            mock.patch.dict(os.environ, environment),
            contextlib.redirect_stdout(output),
            contextlib.redirect_stderr(output),
        ):
            yield output
    finally:
        os.chdir(folder)
        sys.dont_write_bytecode = writes


def pytest_in_this_process(
    root: Path, pytest_args: list[str], output: Path, environment: dict[str, str]
) -> int:
    """Run pytest with `pytest_args` on the tree at `root` in this process, as a test process
    with `environment` added to its own runs it (its modules imported afresh, what it prints
    written to `output`); its exit code."""
    import pytest  # the kernel's first check pays for it, not its start

    with modules_set_aside(root), as_a_test_process(root, environment) as printed:
        code = pytest.main([*pytest_args, "--capture=sys", "-p", "no:faulthandler"])
    output.write_text(printed.getvalue(), encoding="utf-8")
    return int(code)
