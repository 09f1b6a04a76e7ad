"""The `tenxor` shell command's way in: it imports the course's tools, which import the
package a learner is writing. Where that package does not compile or import, the command
says so in one place and stops, never with a traceback of its own:

    $ tenxor check 1.1
    tenxor/storage.py line 69: SyntaxError: '(' was never closed
        return ((

    No test can run until every module of tenxor imports: fix it, then check again.

This module imports nothing of tenxor, so it runs whatever state tenxor is in; the command
itself is `tenxor_shell.command`.
"""

from __future__ import annotations

import importlib.util
import traceback
from pathlib import Path

AFTER = "No test can run until every module of tenxor imports: fix it, then check again."


def place(root: Path, path: str | None, line: int | None) -> str:
    """`tenxor/storage.py line 69`: a file of the course and a line, as a learner finds it."""
    if not path:
        return "tenxor"
    try:
        shown = Path(path).resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        shown = path
    return f"{shown} line {line}" if line else shown


def failed_import(error: BaseException, root: Path) -> list[str]:
    """Where importing the package in `root/tenxor` failed and why, then the line itself:
    for a syntax error its own place, else the last place in the package the error passed."""
    if isinstance(error, SyntaxError) and error.filename:
        path, line, text, message = error.filename, error.lineno, error.text, error.msg
    else:
        package = str((root / "tenxor").resolve())
        frames = [f for f in traceback.extract_tb(error.__traceback__)
                  if str(Path(f.filename).resolve()).startswith(package)]  # fmt: skip
        last = frames[-1] if frames else None
        path, line = (last.filename, last.lineno) if last else (None, None)
        text, message = (last.line if last else None), str(error)
    head = f"{place(root, path, line)}: {type(error).__name__}: {message}"
    return [head, *([f"    {text.strip()}"] if text and text.strip() else [])]


def course_root() -> Path:
    """The folder holding the tenxor package this interpreter would import (not importing it)."""
    spec = importlib.util.find_spec("tenxor")
    return Path(spec.origin).resolve().parents[1] if spec and spec.origin else Path.cwd()
