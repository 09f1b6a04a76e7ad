"""Headless Chromium for the tests: find it, take screenshots, tell blank pictures from real ones.

Under CI (CI=true) a missing browser fails the tests that need it; elsewhere they are skipped
with a message saying how to enable them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

NAMES = ("chromium", "chromium-browser", "google-chrome")
FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
)  # fmt: skip
MISSING = (
    "the browser tests need Chromium; install Debian's package (`sudo apt-get install "
    "chromium`) to run them (`python3 course.py test` installs it when CI=true)"
)


def chromium() -> str:
    """The path of Chromium, or a skip (a failure under CI) saying how to install it."""
    for name in NAMES:
        path = shutil.which(name)
        if path:
            return path
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true but no Chromium was found: {MISSING}")
    pytest.skip(MISSING)


def screenshot(page: Path, out: Path, width: int, height: int) -> Path:
    """A PNG screenshot of the page at `page`, in a window of width x height."""
    profile = out.parent / f"{out.stem}-profile"
    command = [chromium(), *FLAGS, f"--user-data-dir={profile}", f"--window-size={width},{height}",
               f"--screenshot={out}", page.as_uri()]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=180)
    assert out.exists(), f"Chromium took no screenshot (exit {done.returncode}): {done.stderr}"
    return out


def ink(image, box: tuple[int, int, int, int]) -> tuple[float, int]:
    """The share of non-white pixels in `box` of a PIL image, and its number of colours."""
    region = image.convert("RGB").crop(box)
    colours = region.getcolors(maxcolors=region.width * region.height)
    inked = sum(count for count, pixel in colours if min(pixel) < 235)
    return inked / (region.width * region.height), len(colours)
