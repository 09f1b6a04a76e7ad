"""The course as a static site that runs in the browser (`tenxor-instructor site OUT`): a
JupyterLite site whose Python is Pyodide, holding the student release's notebooks, its
`tenxor` package and public tests as files a learner edits in the browser (kept in the
browser's storage), and the wheels of what they need (pytest, hypothesis, chalk-diagrams and
their pure dependencies; NumPy and Pillow are Pyodide's own).

    tenxor-instructor site site/                      # Pyodide from its CDN
    tenxor-instructor pyodide pyodide/ && tenxor-instructor site site/ --pyodide pyodide/

Nothing is taken from the instructor's tree but the student release, so the release's
guarantees hold: no solution, hidden test or grading code is in the site. Each notebook
starts with a cell that installs the wheels from the site and puts the package in the
browser's files first on the path. The wheels are pinned, and every file's time is the
release's, so the same tree always gives the same site.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from packaging.requirements import Requirement

from instructor.grading.wheels import missing_requirements

from .pyodide import LOCK, canonical, pip_download
from .release import write_release

# Pure wheels for Pyodide 0.27 (Python 3.12), pinned so that a site can be built again as
# it was: the newest hypothesis with a pure wheel, and what they all require.
BROWSER_WHEELS = (
    "pytest==9.2.0", "pluggy==1.7.0", "iniconfig==2.3.1", "hypothesis==6.155.7",
    "sortedcontainers==2.4.0", "chalk-diagrams==0.2.2", "chalk-planar==0.4", "colour==0.1.5",
    "importlib-metadata==10.2.0", "zipp==4.1.2", "lazy-importer==0.1.0", "loguru==0.7.3",
    "svgwrite==1.4.3", "toolz==1.2.0", "typing-extensions==4.16.0", "comm==0.2.3",
)  # fmt: skip
# What a notebook installs: the course's packages, at the versions of BROWSER_WHEELS (where
# Pyodide has an older one of its own) or Pyodide's (NumPy).
COURSE_PACKAGES = ("pytest==", "hypothesis==", "chalk-diagrams==")
INSTALLED = ("numpy", *(pin for pin in BROWSER_WHEELS if pin.startswith(COURSE_PACKAGES)))
PYODIDE_PACKAGES = ("numpy", "pillow", "packaging", "pygments")  # Pyodide's own, that they use
# The markers' values in Pyodide 0.27.
PYODIDE_ENVIRONMENT = {
    "python_version": "3.12", "python_full_version": "3.12.7", "sys_platform": "emscripten",
    "platform_system": "Emscripten", "os_name": "posix", "platform_machine": "wasm32",
    "implementation_name": "cpython", "platform_python_implementation": "CPython",
    "platform_release": "", "platform_version": "", "implementation_version": "3.12.7",
}  # fmt: skip
DRIVE = "/drive"  # where the kernel sees the site's files
CONTENTS = ("notebooks", "tenxor", "tests", "pyproject.toml")  # of the release, in the site
KERNEL_PLUGIN = "@jupyterlite/pyodide-kernel-extension:kernel"
SETUP_TAG = "browser-setup"
SETUP_CELL = f"""\
# In the browser: install the course's packages from this site (the first time takes a few
# seconds), and import tenxor from the files you edit here (tenxor/ in the file browser).
# hand_in() from tenxor.course downloads your exercise modules as submission.zip.
%pip install -q {" ".join(INSTALLED)}
import sys
sys.path.insert(0, "{DRIVE}")
sys.pycache_prefix = "/tmp/pycache"  # compiled modules in memory, not among your files"""


# What the browser cannot install, stood in for by a module that says so when it is used
# (notebook 01 imports ml_dtypes to compare with; its cells that use it then explain).
ML_DTYPES_STAND_IN = '''"""ml_dtypes is not in the browser: Pyodide has no build of it.

Importing it works, so the notebooks run; using it raises an error that says so. The output
stored under a notebook cell that uses it shows what it gives on a machine.
"""


def __getattr__(name: str):
    raise ModuleNotFoundError(
        f"ml_dtypes.{name} is not available in the browser (ml_dtypes has no build for "
        "Pyodide): the output stored under this cell shows what it gives on a machine, "
        "and `python3 course.py lab` runs it on yours"
    )
'''
STAND_INS = {"ml_dtypes.py": ML_DTYPES_STAND_IN}


def with_setup_cell(notebook: dict) -> dict:
    """`notebook` with the browser's set-up cell first."""
    cell = {
        "cell_type": "code",
        "execution_count": None,
        "id": SETUP_TAG,
        "metadata": {"tags": [SETUP_TAG]},
        "outputs": [],
        "source": SETUP_CELL.splitlines(keepends=True),
    }
    return {**notebook, "cells": [cell, *notebook["cells"]]}


def copy_contents(release: Path, contents: Path) -> None:
    """The release's CONTENTS into `contents`, each notebook with the set-up cell first and
    without the stored kernel's Python version (the browser's is another), and STAND_INS."""
    for name in CONTENTS:
        source = release / name
        if source.is_dir():
            shutil.copytree(source, contents / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copyfile(source, contents / name)
    for name, text in STAND_INS.items():
        (contents / name).write_text(text, encoding="utf-8")
    for path in sorted((contents / "notebooks").glob("*.ipynb")):
        notebook = with_setup_cell(json.loads(path.read_text(encoding="utf-8")))
        notebook["metadata"].get("language_info", {}).pop("version", None)
        path.write_text(json.dumps(notebook, indent=1, ensure_ascii=False) + "\n", "utf-8")


def download_wheels(folder: Path) -> list[Path]:
    """BROWSER_WHEELS into `folder`, checked to hold everything they require in Pyodide
    (but Pyodide's own PYODIDE_PACKAGES); the wheels."""
    pip_download(folder, *BROWSER_WHEELS)
    wheels = sorted(folder.glob("*.whl"))
    missing = [
        found
        for found in missing_requirements(wheels, INSTALLED[1:], PYODIDE_ENVIRONMENT)
        if canonical(Requirement(found.requirement).name) not in PYODIDE_PACKAGES
    ]
    if missing:
        raise ValueError(f"the site's wheels lack {', '.join(map(str, missing))}")
    return wheels


def settings(pyodide: Path | None) -> dict:
    """The site's jupyter-lite.json: its kernel takes packages from the site (never from
    PyPI), and Pyodide from the site's copy when there is one."""
    kernel: dict = {"disablePyPIFallback": True}
    if pyodide is not None:
        kernel["pyodideUrl"] = "./pyodide/pyodide.js"
    return {
        "jupyter-lite-schema-version": 0,
        "jupyter-config-data": {
            "appName": "tenxor",
            "litePluginSettings": {KERNEL_PLUGIN: kernel},
        },
    }


def check_pyodide(folder: Path) -> None:
    """Refuse a folder that is not a Pyodide with the packages the site loads from it."""
    lock_path = folder / LOCK
    if not (folder / "pyodide.js").is_file() or not lock_path.is_file():
        raise FileNotFoundError(f"{folder} holds no Pyodide (tenxor-instructor pyodide makes one)")
    held = {canonical(name) for name in json.loads(lock_path.read_text("utf-8"))["packages"]}
    lacking = sorted(set(PYODIDE_PACKAGES) - held)
    if lacking:
        raise ValueError(f"the Pyodide in {folder} lacks {', '.join(lacking)}")


def build_site(course: Path, out: Path, pyodide: Path | None = None) -> Path:
    """Write the browser site of the course at `course` into `out` (replaced if it exists),
    with a copy of the Pyodide in `pyodide` if given; `out`."""
    if pyodide is not None:
        check_pyodide(pyodide)
    with tempfile.TemporaryDirectory(prefix="tenxor-site-") as scratch:
        lite = Path(scratch)
        write_release(course, lite / "release")
        copy_contents(lite / "release", lite / "contents")
        wheels = download_wheels(lite / "wheels")
        (lite / "jupyter-lite.json").write_text(json.dumps(settings(pyodide), indent=1))
        config = {
            "LiteBuildConfig": {"contents": [str(lite / "contents")], "ignore_sys_prefix": False},
            "PipliteAddon": {"piplite_urls": [str(path) for path in wheels]},
        }
        (lite / "jupyter_lite_config.json").write_text(json.dumps(config, indent=1))
        # Built in the scratch folder: with SOURCE_DATE_EPOCH, the build dates back every
        # file beside its output folder too, which must not be the instructor's.
        build = [sys.executable, "-m", "jupyter", "lite", "build", "--lite-dir", str(lite)]
        environment = {**os.environ, "SOURCE_DATE_EPOCH": "1577836800"}  # 2020-01-01
        done = subprocess.run(
            [*build, "--output-dir", str(lite / "output")],
            cwd=lite, capture_output=True, text=True, env=environment,
        )  # fmt: skip
        if done.returncode != 0:
            raise RuntimeError(f"jupyter lite build failed:\n{done.stdout[-3000:]}{done.stderr}")
        shutil.rmtree(out, ignore_errors=True)
        shutil.copytree(lite / "output", out)
    if pyodide is not None:
        shutil.copytree(pyodide, out / "pyodide")
    return out
