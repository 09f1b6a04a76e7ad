"""Keep every folder Python imports from reachable after this process gives up root.

A worker or a judge starts as root and then becomes a user of its own. The interpreter, its
standard library and the virtual environment may sit below a folder that user may not
enter (a home folder of mode 700, or the course itself, which grading hides). So, while still
root, the process takes a handle on each folder of `sys.path`, and imports go through the
handles from then on: lazily loaded submodules (`concurrent.futures.thread`,
`numpy.random`) import as they would anywhere, and nothing else of those parents opens.

    handles = hold(import_folders())     # as root: one descriptor per folder
    reroute(through_descriptors(handles))  # imports read /proc/self/fd/N/...

(In the isolated mode the worker needs none of this: bubblewrap's view holds the folders it
imports from, read-only, and nothing else: instructor.sandbox.allowlist.)
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

O_PATH = getattr(os, "O_PATH", 0)


def import_folders(outside: str | None = None) -> list[str]:
    """The folders of sys.path that exist (zip files and missing entries left out), but any
    in the folder `outside` (the judge's tree, which a worker must never reach)."""
    folders = dict.fromkeys(os.path.abspath(p) for p in sys.path if p and os.path.isdir(p))
    if outside is None:
        return list(folders)
    return [f for f in folders if not Path(f).is_relative_to(os.path.abspath(outside))]


def hold(folders: list[str]) -> dict[str, int]:
    """A descriptor on each folder, opened with this process's present rights."""
    return {folder: os.open(folder, O_PATH | os.O_DIRECTORY) for folder in folders}


def through_descriptors(handles: dict[str, int]) -> dict[str, str]:
    """Each folder's path through its descriptor (a process may always use its own)."""
    return {folder: f"/proc/self/fd/{handle}" for folder, handle in handles.items()}


def moved(path: str, places: dict[str, str]) -> str:
    """`path` with the longest held folder it lies in replaced by its new place."""
    for folder in sorted(places, key=len, reverse=True):
        if path == folder or path.startswith(folder + os.sep):
            return places[folder] + path[len(folder) :]
    return path


def reroute(places: dict[str, str]) -> None:
    """Import from the new places: sys.path, and the search path of every package already
    imported (where its lazily loaded submodules are looked for)."""
    sys.path[:] = [moved(path, places) for path in sys.path]
    for module in list(sys.modules.values()):
        search = getattr(module, "__path__", None)
        if isinstance(search, list):
            search[:] = [moved(path, places) for path in search]
        elif search is not None and isinstance(getattr(search, "_path", None), list):
            search._path[:] = [moved(path, places) for path in search._path]  # a namespace
    sys.path_importer_cache.clear()
