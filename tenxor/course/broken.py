"""A module of the package that does not compile or import, said first and alone: no test
can run until every module of `tenxor` imports, so nothing else of a run would help.

    tenxor/storage.py line 69: SyntaxError: '(' was never closed
        return ((

    No test can run until every module of tenxor imports: fix it, then check again.

This module imports nothing of tenxor, so the `tenxor` command (tenxor_shell) loads it by
its path when the package itself will not import.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import traceback
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

IMPORT_SECONDS = 60.0
AFTER = "No test can run until every module of tenxor imports: fix it, then check again."

# Imports the package of the course at argv[1]; prints how that failed (import_failure, by
# this module at argv[2]), or null.
IMPORT_PROBE = """\
import importlib.util, json, sys
sys.path.insert(0, sys.argv[1])
spec = importlib.util.spec_from_file_location("tenxor_broken", sys.argv[2])
broken = importlib.util.module_from_spec(spec)
spec.loader.exec_module(broken)
try:
    import tenxor
except Exception as error:
    print(json.dumps(broken.import_failure(error)))
else:
    print("null")
"""


def import_failure(error: BaseException) -> dict[str, Any]:
    """An import's failure as plain data: the error's kind and message, and the places it
    passed (a syntax error: its own place), innermost last."""
    if isinstance(error, SyntaxError) and error.filename:
        places = [[error.filename, error.lineno, error.text]]
        return {"error": type(error).__name__, "message": error.msg, "places": places}
    frames = traceback.extract_tb(error.__traceback__)
    places = [[frame.filename, frame.lineno, frame.line] for frame in frames]
    return {"error": type(error).__name__, "message": str(error), "places": places}


def place(root: Path, path: str | None, line: int | None) -> str:
    """`tenxor/storage.py line 69`: a file of the course and a line, as a learner finds it."""
    if not path:
        return "tenxor"
    try:
        shown = Path(path).resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        shown = path
    return f"{shown} line {line}" if line else shown


def described(failure: dict[str, Any], root: Path) -> list[str]:
    """Where an import of the package in `root/tenxor` failed and why, then the line itself:
    the last place in the package the failure passed."""
    package = (root / "tenxor").resolve()
    inside = [p for p in failure["places"] if Path(p[0]).resolve().is_relative_to(package)]
    path, line, text = inside[-1] if inside else (None, None, None)
    head = f"{place(root, path, line)}: {failure['error']}: {failure['message']}"
    return [head, *([f"    {text.strip()}"] if text and text.strip() else [])]


def syntax_problem(root: Path) -> list[str] | None:
    """The first module of the package that does not compile: where, why and its line."""
    for path in sorted((root / "tenxor").glob("*.py")):
        try:
            compile(path.read_bytes(), str(path), "exec", dont_inherit=True)
        except SyntaxError as error:
            return described(import_failure(error), root)
        except ValueError as error:  # a NUL byte, for one
            return [f"{place(root, str(path), None)}: ValueError: {error}"]
    return None


def modules_of_tree(root: Path) -> dict[str, ModuleType]:
    """The imported modules of the packages the tree at `root` holds (tenxor, tests, ...),
    wherever they were imported from."""
    packages = {path.name for path in root.iterdir() if (path / "__init__.py").is_file()}
    return {
        name: module
        for name, module in list(sys.modules.items())
        if name.partition(".")[0] in packages
    }


@contextlib.contextmanager
def modules_set_aside(root: Path) -> Iterator[None]:
    """The tree's modules out of sys.modules in the block (it imports them afresh, first
    from the tree), and back as they were after it."""
    kept, path = modules_of_tree(root), list(sys.path)
    for name in kept:
        del sys.modules[name]
    sys.path.insert(0, str(root))
    try:
        yield
    finally:
        sys.path[:] = path
        for name in modules_of_tree(root):
            del sys.modules[name]
        sys.modules.update(kept)


def import_problem_here(root: Path) -> list[str] | None:
    """import_problem in this process, where there are no others (the browser)."""
    with modules_set_aside(root):
        try:
            __import__("tenxor")
        except Exception as error:  # noqa: BLE001 - any error of the learner's code is said
            return described(import_failure(error), root)
    return None


def import_problem(root: Path) -> list[str] | None:
    """Where importing the package fails, and why (None when it imports)."""
    if sys.platform == "emscripten":
        return import_problem_here(root)
    done = subprocess.run(
        [sys.executable, "-c", IMPORT_PROBE, str(root.resolve()), str(Path(__file__).resolve())],
        capture_output=True,
        text=True,
        cwd=root,
        timeout=IMPORT_SECONDS,
    )
    try:
        failure = json.loads(done.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return [f"tenxor: importing it ended the process (exit code {done.returncode})"]
    return None if failure is None else described(failure, root)


def broken_module(root: Path, imports_checked: bool = False) -> list[str] | None:
    """What to tell a learner whose package does not compile or (when `imports_checked`)
    import: the place and the error first, then the line, then what to do."""
    problem = syntax_problem(root) or (import_problem(root) if imports_checked else None)
    return None if problem is None else [*problem, "", AFTER]
