"""`hand_in()`: your exercise modules in one zip, as grading takes them.

    >>> hand_in()  # in a notebook: a link that downloads submission.zip
    Wrote submission.zip: tenxor/broadcasting.py, tenxor/graph_attention.py, ...

The zip holds the modules that hold exercises (tenxor/storage.py, tenxor/strides.py, ...) at
their place in the package, and nothing else: upload it as it is (to Gradescope, or to your
instructor). In the browser, the link downloads it to your machine.
"""

from __future__ import annotations

import base64
import html
import io
import zipfile
from pathlib import Path

from .catalog import EXERCISE_FILES

SUBMISSION = "submission.zip"
# A fixed time for every entry, so the same modules always make the same zip.
ENTRY_TIME = (2020, 1, 1, 0, 0, 0)


def submission_bytes(root: Path) -> bytes:
    """A zip of the exercise modules of the course tree at `root`, each at its place."""
    missing = [path for path in EXERCISE_FILES if not (root / path).is_file()]
    if missing:
        raise FileNotFoundError(f"no {', '.join(missing)} in {root}: nothing is handed in")
    written = io.BytesIO()
    with zipfile.ZipFile(written, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in EXERCISE_FILES:
            entry = zipfile.ZipInfo(path, ENTRY_TIME)
            archive.writestr(entry, (root / path).read_bytes(), zipfile.ZIP_DEFLATED)
    return written.getvalue()


def download_link(data: bytes, name: str) -> str:
    """An HTML link that downloads `data` as the file `name` (it needs no server)."""
    address = "data:application/zip;base64," + base64.b64encode(data).decode("ascii")
    shown = html.escape(name)
    return f'<a download="{shown}" href="{address}">Download {shown}</a> ({len(data):,} bytes)'


def shown_in_notebook(link: str) -> bool:
    """Show `link` as HTML when running in a notebook; whether it was shown."""
    try:
        from IPython import get_ipython
        from IPython.display import HTML, display
    except ImportError:
        return False
    if get_ipython() is None:
        return False
    display(HTML(link))
    return True


def hand_in(root: Path | None = None) -> Path:
    """Write submission.zip, your exercise modules, into the course folder and, in a
    notebook, show a link that downloads it; its path."""
    from .check import course_root  # check's tree: the one whose tests you ran

    root = root or course_root()
    data = submission_bytes(root)
    target = root / SUBMISSION
    target.write_bytes(data)
    print(f"Wrote {target}: {', '.join(EXERCISE_FILES)}.")
    shown_in_notebook(download_link(data, SUBMISSION))
    return target
