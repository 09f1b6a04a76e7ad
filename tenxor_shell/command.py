"""The `tenxor` command: the course's tools once the package imports; where it does not,
where and why, in one place and never with a traceback of the command's own:

    $ tenxor check 1.1
    tenxor/storage.py line 69: SyntaxError: '(' was never closed
        return ((

    No test can run until every module of tenxor imports: fix it, then check again.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType


def course_root() -> Path:
    """The folder holding the tenxor package this interpreter imports (found, not imported)."""
    spec = importlib.util.find_spec("tenxor")
    return Path(spec.origin).resolve().parents[1] if spec and spec.origin else Path.cwd()


def broken_module_tools(root: Path) -> ModuleType:
    """tenxor/course/broken.py, loaded by its path: importing it as part of the package would
    import the package first."""
    spec = importlib.util.spec_from_file_location(
        "tenxor_broken", root / "tenxor" / "course" / "broken.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> int:
    """Run the tenxor command, or say what stops the package from importing."""
    try:
        from tenxor.course.cli import main as command
    except Exception as error:  # noqa: BLE001 - the learner's package, whatever it raised
        root = course_root()
        broken = broken_module_tools(root)
        print("\n".join([*broken.described(broken.import_failure(error), root), "", broken.AFTER]))
        return 1
    return command()


if __name__ == "__main__":
    sys.exit(main())
