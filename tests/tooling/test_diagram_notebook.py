"""A notebook cell that shows a diagram: an <img>, a fixed text repr, and nbval passes twice."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytestmark = pytest.mark.provided

CELLS = [
    "import tenxor\nx = tenxor.arange(12).view(3, 4)\nx.draw(name='x')",
    "x.T.draw(name='x.T', arrows='strides')",
]


@pytest.fixture(scope="module")
def notebook(tmp_path_factory):
    """A notebook of diagram cells, executed so that its outputs are stored."""
    import nbformat
    from nbclient import NotebookClient

    folder = tmp_path_factory.mktemp("notebook")
    document = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell(source) for source in CELLS]
    )
    NotebookClient(document, timeout=120, kernel_name="python3").execute()
    path = folder / "diagrams.ipynb"
    nbformat.write(document, path)
    return path


def test_a_diagram_is_stored_as_an_img_with_a_fixed_text_repr(notebook):
    import nbformat

    document = nbformat.read(notebook, as_version=4)
    for cell in document.cells:
        (output,) = cell.outputs
        assert set(output["data"]) == {"text/html", "text/plain"}  # no SVG output to hide
        assert output["data"]["text/html"].startswith('<img src="data:image/svg+xml;base64,')
        assert output["data"]["text/plain"].startswith("<diagram: x")
        assert " at 0x" not in output["data"]["text/plain"]


def test_nbval_in_strict_mode_passes_twice_in_a_row(notebook):
    for _ in range(2):
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "--nbval", "-p", "no:cacheprovider", "-q",
             notebook.name],
            cwd=notebook.parent, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert done.returncode == 0, done.stdout[-3000:]
        assert f"{len(CELLS)} passed" in done.stdout


def test_nbval_notices_a_diagram_that_changed(notebook, tmp_path):
    import nbformat

    document = nbformat.read(notebook, as_version=4)
    output = document.cells[1].outputs[0]
    output["data"]["text/plain"] = output["data"]["text/plain"].replace("x.T", "x.t")
    changed = tmp_path / "changed.ipynb"
    nbformat.write(document, changed)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--nbval", "-p", "no:cacheprovider", "-q", changed.name],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 1 and "1 failed" in done.stdout
