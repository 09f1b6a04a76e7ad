"""Each course notebook opens in JupyterLab, in headless Chromium, with every cell shown and
every stored diagram drawn (not blank)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tenxor.diagrams import Picture

from .browser import DevTools, chromium, ink
from .test_notebooks import NOTEBOOKS, ROOT

pytestmark = pytest.mark.provided

APP = "window.jupyterapp"  # the lab's application (the server exposes it: expose_app_in_browser)
DIAGRAMS = ".jp-NotebookPanel .jp-OutputArea-output img"
CELLS = ".jp-NotebookPanel .jp-Cell"
# Lab settings: render every cell, not only those scrolled into view; fetch no news.
SETTINGS = {
    "@jupyterlab/notebook-extension/tracker": {"windowingMode": "none"},
    "@jupyterlab/apputils-extension/notification": {"fetchNews": "false", "checkForUpdates": False},
}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def write_settings(folder: Path) -> Path:
    for plugin, values in SETTINGS.items():
        path = folder / f"{plugin}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))
    return folder


@pytest.fixture(scope="module")
def lab(tmp_path_factory) -> Iterator[tuple[str, Path]]:
    """A JupyterLab server over a copy of the notebooks (so nothing can save over them): its
    address and the folder it serves."""
    chromium()  # skip (or fail under CI) before starting anything
    home = tmp_path_factory.mktemp("lab")
    shutil.copytree(ROOT / "notebooks", home / "course" / "notebooks")
    environment = {**os.environ, **{f"JUPYTER_{kind}_DIR": str(home / kind.lower())
                                    for kind in ("CONFIG", "DATA", "RUNTIME")}}  # fmt: skip
    environment["IPYTHONDIR"] = str(home / "ipython")
    port = free_port()
    command = [sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root",
               "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}",
               "--IdentityProvider.token=", f"--ServerApp.root_dir={home / 'course'}",
               f"--LabApp.user_settings_dir={write_settings(home / 'settings')}",
               f"--LabApp.workspaces_dir={home / 'workspaces'}",
               "--LabApp.expose_app_in_browser=True"]  # fmt: skip
    log = (home / "lab.log").open("w")
    server = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=environment)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while not responds(url + "/api/status"):
            assert server.poll() is None, (home / "lab.log").read_text()[-3000:]
            assert time.monotonic() < deadline, "JupyterLab did not start within 120 s"
            time.sleep(0.3)
        yield url, home / "course"
    finally:
        server.terminate()  # it shuts its kernels down first, slowly on a busy machine
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()


def responds(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2):
            return True
    except OSError:
        return False


@pytest.fixture(scope="module")
def browser(tmp_path_factory) -> Iterator[DevTools]:
    devtools = DevTools(tmp_path_factory.mktemp("chromium") / "profile")
    yield devtools
    devtools.close()


def stored(notebook: Path) -> tuple[int, int]:
    """The number of cells of a notebook and of the diagram images in its stored outputs."""
    document = json.loads(notebook.read_text(encoding="utf-8"))
    outputs = [output for cell in document["cells"] for output in cell.get("outputs", [])]
    html = ["".join(output.get("data", {}).get("text/html", "")) for output in outputs]
    return len(document["cells"]), sum(part.count("<img ") for part in html)


def open_notebook(browser: DevTools, lab: tuple[str, Path], notebook: Path) -> tuple[int, int]:
    """Open a notebook of the lab's folder in place of the one open (the lab is loaded once,
    for the first); its numbers of cells and of diagrams once shown."""
    url, folder = lab
    cells, diagrams = stored(notebook)
    path = notebook.relative_to(folder).as_posix()
    if browser.evaluate(f"typeof {APP} === 'object'"):  # the lab is loaded: close, then open
        browser.evaluate(f"Array.from({APP}.shell.widgets('main')).forEach(w => w.dispose())")
        closed = browser.wait_for("!document.querySelector('.jp-NotebookPanel')", seconds=30)
        assert closed, f"the notebook open before {path} was still shown 30 s after closing"
        opening = json.dumps({"path": path})
        browser.evaluate(f"{APP}.commands.execute('docmanager:open', {opening}).then(() => true)")
    else:
        browser.call("Page.navigate", url=f"{url}/lab/tree/{path}?reset")
    shown = (
        f"document.querySelectorAll('{CELLS}').length === {cells} && "
        f"[...document.querySelectorAll('{DIAGRAMS}')].filter(i => i.complete && i.naturalWidth)"
        f".length === {diagrams}"
    )
    if not browser.wait_for(shown, seconds=90):
        found = browser.evaluate(
            f"[document.querySelectorAll('{CELLS}').length, "
            f"document.querySelectorAll('{DIAGRAMS}').length]"
        )
        pytest.fail(f"{path}: JupyterLab shows {found[0]} of {cells} cells and "
                    f"{found[1]} of {diagrams} diagrams")  # fmt: skip
    dialogs = browser.evaluate("[...document.querySelectorAll('.jp-Dialog')].map(d => d.innerText)")
    assert not dialogs, f"{path}: JupyterLab opened a dialog over the notebook: {dialogs}"
    return cells, diagrams


@pytest.mark.parametrize("notebook", NOTEBOOKS)
def test_the_notebook_opens_in_jupyterlab_with_its_diagrams_drawn(lab, browser, notebook):
    _, diagrams = open_notebook(browser, lab, lab[1] / "notebooks" / f"{notebook}.ipynb")
    assert diagrams > 0, f"{notebook} stores no diagram"
    for k in range(diagrams):
        share, colours = ink(browser.screenshot_of(DIAGRAMS, k))
        assert share > 0.03 and colours > 8, f"{notebook}: diagram {k + 1} looks blank"


def test_a_blank_diagram_would_be_seen_as_blank(lab, browser):
    """The control: in a notebook storing an empty picture next to a real one, the measure
    finds the empty one blank and the real one inked."""
    import nbformat

    import tenxor

    empty = Picture('<svg xmlns="http://www.w3.org/2000/svg" width="300" height="200"></svg>', "")
    kernel = json.loads((ROOT / "notebooks" / f"{NOTEBOOKS[0]}.ipynb").read_text())["metadata"]
    document = nbformat.v4.new_notebook(metadata=kernel)
    for picture in (empty, tenxor.arange(6).view(2, 3).draw()):
        output = nbformat.v4.new_output("display_data", {"text/html": picture._repr_html_()})
        document.cells.append(nbformat.v4.new_code_cell("picture", outputs=[output]))
    path = lab[1] / "control.ipynb"
    nbformat.write(document, path)
    assert open_notebook(browser, lab, path) == (2, 2)
    (blank, blank_colours), (inked, colours) = [
        ink(browser.screenshot_of(DIAGRAMS, k)) for k in range(2)
    ]
    assert blank == 0 and blank_colours <= 8  # fails both of the tests above
    assert inked > 0.03 and colours > 8
