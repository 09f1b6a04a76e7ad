"""The `tenxor` command: the course's tools, once the package imports (else what stops it,
said as tenxor_shell says it)."""

from __future__ import annotations

import sys

from tenxor_shell import AFTER, course_root, failed_import


def main() -> int:
    """The `tenxor` command: its tools, once the package imports."""
    try:
        from tenxor.course.cli import main as command
    except Exception as error:  # noqa: BLE001 - the learner's package, whatever it raised
        print("\n".join([*failed_import(error, course_root()), "", AFTER]))
        return 1
    return command()


if __name__ == "__main__":
    sys.exit(main())
