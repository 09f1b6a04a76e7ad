"""The course in the browser, offline: Pyodide assembled from npm and its official package
files (each checked against its lock), the site built by `tenxor-instructor site --pyodide`,
served on 127.0.0.1 to headless Chromium, which may reach no other address. A learner opens
notebook 02, runs it to exercise 2.1, sees check say the stub is not started, writes a
solution into tenxor/strides.py in the browser, sees `done` and a stride diagram, reloads
and still has the solution, downloads the submission, which grading scores as 2.1's points,
and sees notebook 06's equations typeset. The site holds nothing of the solutions, the
hidden tests or grading."""

from __future__ import annotations

import functools
import hashlib
import http.server
import importlib.util
import json
import shutil
import subprocess
import sys
import threading
import time
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from instructor.authoring.pyodide import (
    LOCK,
    PYODIDE_VERSION,
    PyodideMismatch,
    assemble_pyodide,
    checked,
)
from instructor.authoring.site import SETUP_TAG, STAND_INS, build_site
from instructor.sandbox.exposure import course_secrets, held_in_archive
from tenxor.course.catalog import BY_ID, CATALOG, EXERCISE_FILES
from tests.tooling.browser import DevTools, chromium
from tests.tooling.submissions import ROOT, restore

pytestmark = pytest.mark.provided

FIRST_VISIT_MB = 40  # the most a first visit may transfer, to the first check's result
LEARNER_SECONDS = 240  # the most any step of the session may wait (Pyodide's first start)
APP = "window.jupyterapp"
NOTEBOOK = "notebooks/02_strides.ipynb"
BROWSER = "not an origin"  # the initiator of Chromium's own requests, in its network log
STRIDES = "tenxor/strides.py"
EQUATIONS = "notebooks/06_gatv2.ipynb"  # the notebook with the most equations


@dataclass
class Served:
    """A static server of a folder on 127.0.0.1: its address and what it sent."""

    folder: Path
    sent: list[tuple[str, int]] = field(default_factory=list)  # (path, bytes) per response
    address: str = ""


def serve(served: Served) -> http.server.ThreadingHTTPServer:
    """Serve `served.folder` on a free port of 127.0.0.1, recording each response."""

    class Handler(http.server.SimpleHTTPRequestHandler):
        def send_header(self, keyword: str, value: str) -> None:
            if keyword == "Content-Length":
                served.sent.append((self.path, int(value)))
            super().send_header(keyword, value)

        def log_message(self, *arguments: object) -> None:
            pass

    handler = functools.partial(Handler, directory=str(served.folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    served.address = f"http://127.0.0.1:{server.server_address[1]}"
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The site with its own Pyodide, as an instructor hosts it offline; the app exposed to
    the test's scripts (the one setting the test changes)."""
    chromium()  # skip (or fail under CI) before fetching anything
    base = tmp_path_factory.mktemp("browser-site")
    assemble_pyodide(base / "pyodide")
    out = build_site(ROOT, base / "site", base / "pyodide")
    settings = json.loads((out / "jupyter-lite.json").read_text(encoding="utf-8"))
    settings["jupyter-config-data"]["exposeAppInBrowser"] = True
    (out / "jupyter-lite.json").write_text(json.dumps(settings), encoding="utf-8")
    return out


@dataclass
class Learner:
    """A learner's browser on the site: Chromium that resolves no name but 127.0.0.1, with
    its network log, and the notebook it works in."""

    tools: DevTools
    served: Served
    net_log: Path

    def js(self, expression: str) -> object:
        return self.tools.evaluate(expression)

    def wait_for(self, expression: str, what: str) -> object:
        """The value of `expression` once truthy, asked again while a page loads (which
        answers no question: "Inspected target navigated or closed")."""
        deadline = time.monotonic() + LEARNER_SECONDS
        while time.monotonic() < deadline:
            try:
                value = self.js(expression)
            except AssertionError as error:
                if "navigated" not in str(error) and "context" not in str(error):
                    raise
                value = None
            if value:
                return value
            time.sleep(0.25)
        raise AssertionError(f"waited {LEARNER_SECONDS} s for {what}")

    def open_lab(self) -> None:
        self.tools.call("Page.navigate", url=f"{self.served.address}/lab/index.html")
        self.wait_for(f"typeof {APP} === 'object'", "JupyterLite to start")
        self.js(f"{APP}.restored.then(() => true)")

    def reload(self) -> None:
        """Reload the page, as a learner coming back does, and wait for JupyterLite."""
        self.js("window.reloaded = false")
        self.tools.call("Page.reload")
        self.wait_for(f"window.reloaded === undefined && typeof {APP} === 'object'",
                      "JupyterLite to start again")  # fmt: skip
        self.js(f"{APP}.restored.then(() => true)")

    def open_notebook(self, path: str) -> None:
        opened = f"{APP}.commands.execute('docmanager:open', {{path: {json.dumps(path)}}})"
        self.js(f"{opened}.then(w => (window.nb = w, w.context.ready))"
                ".then(() => window.nb.sessionContext.ready).then(() => true)")  # fmt: skip

    def cell_sources(self) -> list[str]:
        return self.js("window.nb.content.widgets.map(c => c.model.sharedModel.getSource())")

    def run_cell(self, index: int) -> str:
        """Run one cell and wait for the kernel to finish it; its output's text."""
        self.js(f"(window.nb.content.activeCellIndex = {index}, "
                f"{APP}.commands.execute('notebook:run-cell').then(() => true))")  # fmt: skip
        cell = f"window.nb.content.widgets[{index}]"
        kernel = "window.nb.sessionContext.session.kernel"
        self.wait_for(f"{cell}.model.type !== 'code' || ({cell}.model.executionCount > 0 && "
                      f"{kernel}.status === 'idle')", f"cell {index} to run")  # fmt: skip
        return self.js(f"({cell}.node.querySelector('.jp-OutputArea') || {{}}).innerText || ''")

    def add_cell(self, source: str) -> int:
        """A new code cell at the notebook's end holding `source`; its index."""
        model = "window.nb.content.model"
        return self.js(f"({model}.sharedModel.insertCell({model}.cells.length, "
                       f"{{cell_type: 'code', source: {json.dumps(source)}}}), "
                       f"{model}.cells.length - 1)")  # fmt: skip

    def read_file(self, path: str) -> str:
        return self.js(f"{APP}.serviceManager.contents.get({json.dumps(path)}, "
                       "{content: true}).then(m => m.content)")  # fmt: skip

    def save_file(self, path: str, text: str) -> None:
        model = json.dumps({"type": "file", "format": "text", "content": text})
        self.js(f"{APP}.serviceManager.contents.save({json.dumps(path)}, {model})"
                ".then(() => true)")  # fmt: skip

    def asked_by_pages(self) -> set[str]:
        """The addresses the site's pages and workers asked for, from Chromium's network log
        (read line by line: its end is written only as Chromium exits). Chromium's own
        requests (updates, accounts), which no page makes, are left out; the resolver
        refused them too."""
        asked = set()
        for line in self.net_log.read_text(encoding="utf-8").splitlines():
            try:
                params = json.loads(line.rstrip(",")).get("params", {})
            except (ValueError, AttributeError):
                continue
            if "url" in params and params.get("initiator", BROWSER) != BROWSER:
                asked.add(params["url"])
        return asked


@pytest.fixture
def learner(site: Path, tmp_path: Path) -> Iterator[Learner]:
    served = Served(site)
    server = serve(served)
    net_log = tmp_path / "net-log.json"
    flags = ("--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
             f"--log-net-log={net_log}")  # fmt: skip
    tools = DevTools(tmp_path / "profile", flags=flags)
    tools.call("Browser.setDownloadBehavior", behavior="allow", downloadPath=str(tmp_path))
    try:
        yield Learner(tools, served, net_log)
    finally:
        tools.close()  # writes the network log's end
        server.shutdown()


def solved_strides(site: Path, scratch: Path) -> str:
    """The site's tenxor/strides.py with exercise 2.1 solved (the reference's solution)."""
    (scratch / "tenxor").mkdir(parents=True)
    shutil.copyfile(site / "files" / STRIDES, scratch / STRIDES)
    restore(scratch, "2.1")
    return (scratch / STRIDES).read_text(encoding="utf-8")


def grade_zip(path: Path, out: Path) -> dict:
    """`tenxor-instructor grade` on a hand-in zip, chapter 2 of it (the hand-in is on trial
    here, not the exercises): its results.json."""
    command = [sys.executable, "-m", "instructor.cli", "grade", str(path), "--out", str(out),
               "--course", str(ROOT), "--examples", "10", "--chapter", "2"]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads((out / "results.json").read_text(encoding="utf-8"))


def test_a_learner_checks_solves_reloads_and_hands_in_offline(site, learner, tmp_path):
    opened = time.monotonic()
    learner.open_lab()
    learner.open_notebook(NOTEBOOK)
    sources = learner.cell_sources()
    assert sources[0].startswith("# In the browser"), sources[0][:200]
    check_cell = sources.index('check("2.1")')
    for index in range(check_cell):
        learner.run_cell(index)
    report = learner.run_cell(check_cell)
    first_check = time.monotonic() - opened
    assert "Exercise 2.1" in report and "not started" in report, report
    first_visit = sum(size for _, size in learner.served.sent)
    assert first_visit < FIRST_VISIT_MB * 2**20, f"a first visit took {first_visit:,} bytes"

    learner.save_file(STRIDES, solved_strides(site, tmp_path / "solved"))
    started = time.monotonic()
    report = learner.run_cell(check_cell)
    later_check = time.monotonic() - started
    assert "done" in report and "FAIL" not in report, report
    kinds = learner.js("window.nb.content.widgets.map(c => c.model.type)")
    drawn = next(i for i, s in enumerate(sources) if kinds[i] == "code" and "_diagram(" in s)
    pictures = f"window.nb.content.widgets[{drawn}].node.querySelectorAll('img, svg').length"
    assert drawn < check_cell and learner.js(pictures), "the stride diagram was not drawn"

    learner.reload()
    assert learner.read_file(STRIDES) == solved_strides(site, tmp_path / "again"), (
        "the solution written in the browser did not survive a reload"
    )
    learner.open_notebook(NOTEBOOK)
    hand_in = learner.add_cell("from tenxor.course import hand_in\nhand_in()")
    learner.run_cell(0)
    said = learner.run_cell(hand_in)
    assert "submission.zip" in said, said
    learner.js(f"window.nb.content.widgets[{hand_in}].node.querySelector('a[download]').click()")
    downloaded = tmp_path / "submission.zip"
    deadline = time.monotonic() + 60
    while not downloaded.exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    with zipfile.ZipFile(downloaded) as archive:
        assert sorted(archive.namelist()) == sorted(EXERCISE_FILES), archive.namelist()
    learner.open_notebook(EQUATIONS)
    cells = json.loads((site / "files" / EQUATIONS).read_text(encoding="utf-8"))["cells"]
    math = next(i for i, c in enumerate(cells) if c["cell_type"] == "markdown" and "$" in
                "".join(c["source"]))  # fmt: skip
    learner.js(f"window.nb.content.scrollToItem({math}).then(() => true)")  # drawn when seen
    typeset = "window.nb.content.node.querySelectorAll('mjx-container').length"
    learner.wait_for(typeset, "the equations of notebook 06 to be typeset (with no CDN)")
    results = grade_zip(downloaded, tmp_path / "grades")
    assert results["score"] == pytest.approx(BY_ID["2.1"].points), results["output"]
    chapter_2 = {item.id for item in CATALOG if item.chapter.number == 2}
    assert set(results["extra_data"]["exercises"]) == chapter_2, results["extra_data"]
    asked = learner.asked_by_pages()
    outside = sorted(u for u in asked if not u.startswith((learner.served.address, "data:")))
    assert not outside and len(asked) > 50, (len(asked), outside[:10])
    print(
        f"first check {first_check:.1f} s after opening the site, cold; a later check "
        f"{later_check:.1f} s; first visit {first_visit / 2**20:.1f} MB"
    )


def test_the_site_holds_no_secret_and_the_same_tree_gives_the_same_site(site, tmp_path):
    """Every file of the site read: no solution, hidden test or grading code (as text, or in
    a wheel or zip); built again, every file is the same (Pyodide's from its CDN then, the
    one setting that differs), and nothing beside the site's folder changed."""
    secrets = course_secrets(ROOT)
    files = sorted(path for path in site.rglob("*") if path.is_file())
    assert len(files) > 100
    for path in files:
        data = path.read_bytes()
        if path.suffix in (".whl", ".zip"):
            found = held_in_archive(secrets, str(path))
        elif path.suffix != ".wasm":
            found = secrets.held_in(path.name, data)
        else:
            found = None
        assert found is None, f"{path.relative_to(site)} holds {found}"
    contents = {path.relative_to(site / "files").parts[0] for path in (site / "files").rglob("*")}
    assert contents == {"notebooks", "tenxor", "tests", "pyproject.toml", *STAND_INS}, contents
    assert not (site / "files" / "tests" / "hidden").exists()
    beside = tmp_path / "beside.txt"  # an instructor's file next to the site's folder
    beside.write_text("kept as it is")
    written = beside.stat().st_mtime
    again = build_site(ROOT, tmp_path / "again")
    assert beside.stat().st_mtime == written, "building the site dated back a file beside it"
    first = {p.relative_to(site): hashlib.sha256(p.read_bytes()).digest() for p in files}
    second = {p.relative_to(again): hashlib.sha256(p.read_bytes()).digest()
              for p in again.rglob("*") if p.is_file()}  # fmt: skip
    ours = {path for path in first if path.parts[0] != "pyodide"} - {Path("jupyter-lite.json")}
    differ = sorted(str(path) for path in ours if first[path] != second.get(path))
    assert not differ, f"built again, these files differ: {differ[:10]}"
    notebook = json.loads((site / "files" / NOTEBOOK).read_text(encoding="utf-8"))
    assert notebook["cells"][0]["metadata"]["tags"] == [SETUP_TAG]


def test_a_package_file_that_is_not_pyodides_is_refused(site):
    lock = json.loads((site / "pyodide" / LOCK).read_text(encoding="utf-8"))
    entry = lock["packages"]["numpy"]
    wheel = (site / "pyodide" / entry["file_name"]).read_bytes()
    assert checked("numpy", wheel, entry) == wheel
    with pytest.raises(PyodideMismatch, match=f"numpy: sha256 .* Pyodide {PYODIDE_VERSION}"):
        checked("numpy", wheel + b"\0", entry)


def test_what_the_browser_cannot_install_imports_and_says_so_when_used(site):
    """ml_dtypes has no Pyodide build: the site's stand-in imports (notebook 01's first cell
    runs), and using it names the browser, the stored output and the local command."""
    spec = importlib.util.spec_from_file_location("ml_dtypes", site / "files" / "ml_dtypes.py")
    stand_in = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(stand_in)
    with pytest.raises(ModuleNotFoundError, match="bfloat16 is not available in the browser"):
        stand_in.bfloat16  # noqa: B018 - the use that must explain itself
    first = json.loads((site / "files" / "notebooks" / "01_storage.ipynb").read_text("utf-8"))
    imports = "".join(next(c for c in first["cells"][1:] if c["cell_type"] == "code")["source"])
    assert "import ml_dtypes" in imports and "from ml_dtypes" not in imports, imports
