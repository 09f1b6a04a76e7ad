"""Files written whole or not at all: a reader finds the old file or the new one, never half
of one, even when the writer is killed in the middle.

    write_atomically(Path("grades/gradebook.csv"), "student,total\\n")
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

PARTIAL = ".partial"  # ends the name of a file being written, until it takes its place


def write_atomically(path: Path, text: str) -> None:
    """Write `text` to `path` so that the file is either as it was, or holds all of `text`:
    it is written first beside it as .NAME.*.partial, flushed to disk, then renamed into
    place. A write that fails leaves no partial file behind; one cut short by a kill does,
    which partial_files finds."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=PARTIAL)
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def partial_files(folder: Path, name: str) -> list[Path]:
    """The partial files that writes of folder/NAME cut short left in `folder`."""
    return sorted(path for path in folder.glob(f".{name}.*{PARTIAL}") if path.is_file())
