"""`check` imports where Python has no POSIX-only modules (as on Windows): the course tooling
imports fcntl, resource and termios only inside the functions that need them."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
POSIX_ONLY = ("fcntl", "resource", "termios", "pwd", "grp", "tty", "pty")
pytestmark = pytest.mark.provided

# A Python where the POSIX-only modules cannot be imported and sys.platform says Windows.
AS_ON_WINDOWS = f"""\
import importlib.abc
import sys

POSIX_ONLY = {POSIX_ONLY!r}


class NoPosixModules(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in POSIX_ONLY:
            raise ImportError(f"No module named {{name!r}} (as on Windows)")
        return None


for name in POSIX_ONLY:
    sys.modules.pop(name, None)
sys.meta_path.insert(0, NoPosixModules())
sys.platform = "win32"
"""


def as_on_windows(code: str) -> subprocess.CompletedProcess[str]:
    """Run `code` in a new Python process set up as AS_ON_WINDOWS says."""
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-c", AS_ON_WINDOWS + code],
        cwd=ROOT, env=environment, capture_output=True, text=True, check=False,
    )  # fmt: skip


def test_posix_only_modules_cannot_be_imported_in_the_windows_like_process():
    done = as_on_windows("import fcntl\n")
    assert done.returncode != 0 and "as on Windows" in done.stderr, done.stderr


def test_check_imports_and_is_callable_without_posix_only_modules():
    code = (
        "from tenxor.course import check\n"
        "from tenxor.course.check import check as the_check\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in POSIX_ONLY)\n"
        "print(callable(check), check is the_check, loaded)\n"
    )
    done = as_on_windows(code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[0] == "True True []", done.stdout


def unguarded_imports(path: Path) -> set[str]:
    """The top-level names of the modules a file imports at its top, unconditionally (not in
    a function, nor behind an `if` or a `try`)."""
    names = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize(
    "path",
    sorted((ROOT / "tenxor" / "course").rglob("*.py")),
    ids=lambda path: path.relative_to(ROOT).as_posix(),
)
def test_no_course_module_imports_a_posix_only_module_at_its_top(path):
    found = unguarded_imports(path) & set(POSIX_ONLY)
    assert not found, f"import {', '.join(sorted(found))} inside the function that needs it"
