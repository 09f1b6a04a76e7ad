"""Headless Chromium for the tests: find it, take screenshots, tell blank pictures from real ones.

Under CI (CI=true) a missing browser fails the tests that need it; elsewhere they are skipped
with a message saying how to enable them.
"""

from __future__ import annotations

import base64
import io
import json
import os
import re
import shutil
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

NAMES = ("chromium", "chromium-browser", "google-chrome")
FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
)  # fmt: skip
MISSING = (
    "the browser tests need Chromium; install Debian's package (`sudo apt-get install "
    "chromium`) to run them (`python3 -m instructor.ci` installs it when CI=true)"
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


def ink(image, box: tuple[int, int, int, int] | None = None) -> tuple[float, int]:
    """The share of non-white pixels in `box` of a PIL image (all of it by default), and its
    number of colours."""
    region = image.convert("RGB").crop(box) if box else image.convert("RGB")
    colours = region.getcolors(maxcolors=region.width * region.height)
    inked = sum(count for count, pixel in colours if min(pixel) < 235)
    return inked / (region.width * region.height), len(colours)


class DevTools:
    """A headless Chromium driven over the DevTools protocol: open pages, run JavaScript, take
    screenshots of parts of the page."""

    def __init__(
        self, profile: Path, width: int = 1400, height: int = 1000, flags: tuple[str, ...] = ()
    ) -> None:
        import websocket

        command = [chromium(), *FLAGS, *flags, f"--user-data-dir={profile}",
                   "--remote-debugging-port=0", f"--window-size={width},{height}",
                   "about:blank"]  # fmt: skip
        self.process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
        endpoint = None
        for line in self.process.stderr:
            found = re.search(r"DevTools listening on ws://([^/]+)/", line)
            if found:
                endpoint = found[1]
                break
        assert endpoint, (
            f"Chromium did not start its DevTools endpoint (exit {self.process.poll()})"
        )
        with urllib.request.urlopen(f"http://{endpoint}/json/list", timeout=30) as reply:
            page = next(target for target in json.load(reply) if target["type"] == "page")
        self.socket = websocket.create_connection(page["webSocketDebuggerUrl"], timeout=60)
        self.calls = 0
        self.events: list[dict[str, Any]] = []  # of the domains enabled (Network.enable, ...)

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        """Send one DevTools command and return its result (events on the way are kept in
        `events`)."""
        self.calls += 1
        self.socket.send(json.dumps({"id": self.calls, "method": method, "params": params}))
        while True:
            message = json.loads(self.socket.recv())
            if "method" in message:
                self.events.append(message)
            elif message.get("id") == self.calls:
                assert "error" not in message, f"{method} failed: {message['error']}"
                return message["result"]

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (JSON-serialisable values only; a
        promise is awaited)."""
        reply = self.call(
            "Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True
        )
        assert "exceptionDetails" not in reply, (
            f"{expression!r} raised: {reply['exceptionDetails']}"
        )
        return reply["result"].get("value")

    def wait_for(self, expression: str, seconds: float) -> Any:
        """Evaluate `expression` until it is truthy; its last value (falsy after `seconds`)."""
        deadline = time.monotonic() + seconds
        value = self.evaluate(expression)
        while not value and time.monotonic() < deadline:
            time.sleep(0.25)
            value = self.evaluate(expression)
        return value

    def screenshot_of(self, selector: str, k: int):
        """A PIL image of the k-th element matching `selector`, scrolled into view first."""
        from PIL import Image

        element = f"document.querySelectorAll({json.dumps(selector)})[{k}]"
        box = self.evaluate(f"({element}.scrollIntoView(), (r => [r.x, r.y, r.width, r.height])"
                            f"({element}.getBoundingClientRect()))")  # fmt: skip
        clip = dict(zip(("x", "y", "width", "height"), box), scale=1)
        shot = self.call("Page.captureScreenshot", format="png", clip=clip)
        return Image.open(io.BytesIO(base64.b64decode(shot["data"])))

    def close(self) -> None:
        self.socket.close()
        self.process.kill()
        self.process.wait(timeout=30)
