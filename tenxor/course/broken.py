"""A module of the package that does not compile or import, said first and alone: no test
can run until every module of `tenxor` imports, so nothing else of a run would help.

    tenxor/storage.py line 69: SyntaxError: '(' was never closed
        return ((

    No test can run until every module of tenxor imports: fix it, then check again.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tenxor_shell import AFTER, failed_import, place

IMPORT_SECONDS = 60.0

# Imports the package of the course at argv[1]; prints where that failed, or null.
IMPORT_PROBE = """\
import json, sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from tenxor_shell import failed_import
try:
    import tenxor
except Exception as error:
    print(json.dumps(failed_import(error, Path(sys.argv[1]))))
else:
    print("null")
"""


def syntax_problem(root: Path) -> list[str] | None:
    """The first module of the package that does not compile: where, why and its line."""
    for path in sorted((root / "tenxor").glob("*.py")):
        try:
            compile(path.read_bytes(), str(path), "exec", dont_inherit=True)
        except SyntaxError as error:
            return failed_import(error, root)
        except ValueError as error:  # a NUL byte, for one
            return [f"{place(root, str(path), None)}: ValueError: {error}"]
    return None


def import_problem(root: Path) -> list[str] | None:
    """Where importing the package fails, and why (None when it imports)."""
    done = subprocess.run(
        [sys.executable, "-c", IMPORT_PROBE, str(root.resolve())],
        capture_output=True,
        text=True,
        cwd=root,
        timeout=IMPORT_SECONDS,
    )
    try:
        return json.loads(done.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return [f"tenxor: importing it ended the process (exit code {done.returncode})"]


def broken_module(root: Path, imports_checked: bool = False) -> list[str] | None:
    """What to tell a learner whose package does not compile or (when `imports_checked`)
    import: the place and the error first, then the line, then what to do."""
    problem = syntax_problem(root) or (import_problem(root) if imports_checked else None)
    return None if problem is None else [*problem, "", AFTER]
