"""The diagram gallery: complete, indexed, reproducible byte for byte, and not stale."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tenxor.diagrams.gallery import README, figures, write_gallery

from .svg_parts import parts

pytestmark = pytest.mark.provided

ROOT = Path(__file__).resolve().parents[2]
GALLERY = ROOT / "diagrams"
STALE = "diagrams/ is stale: run `tenxor draw --gallery diagrams/` and commit the result"


def test_the_committed_gallery_is_what_the_code_draws(tmp_path):
    write_gallery(tmp_path)
    fresh = {path.name: path.read_bytes() for path in tmp_path.iterdir()}
    committed = {path.name: path.read_bytes() for path in GALLERY.iterdir()}
    assert sorted(committed) == sorted(fresh), STALE
    changed = [name for name in fresh if fresh[name] != committed[name]]
    assert not changed, f"{STALE} ({', '.join(changed)} differ)"


def test_the_gallery_covers_the_course_and_its_index_captions_every_figure():
    gallery = figures()
    assert len(gallery) >= 12
    index = (GALLERY / README).read_text()
    for figure in gallery:
        assert f"| [{figure.name}]({figure.name}) | {figure.caption} |" in index
        assert parts((GALLERY / figure.name).read_text()), figure.name
    drawn = " ".join(figure.name for figure in gallery)
    for topic in ("bytes", "row-major", "column-major", "three-dims", "four-dims", "transpose",
                  "permute", "step-slice", "negative-step", "storage-offset", "stride-0",
                  "gather-copy", "broadcast", "broadcast-error", "sum"):  # fmt: skip
        assert topic in drawn


def test_rendering_is_byte_for_byte_reproducible_across_processes(tmp_path):
    outputs = []
    for seed in ("1", "2"):
        folder = tmp_path / seed
        environment = {**os.environ, "PYTHONHASHSEED": seed}
        command = [sys.executable, "-m", "tenxor.course.cli", "draw", "--gallery", str(folder)]
        done = subprocess.run(command, capture_output=True, text=True, env=environment)
        assert done.returncode == 0, done.stderr
        outputs.append({path.name: path.read_bytes() for path in folder.iterdir()})
    assert outputs[0] == outputs[1]


def test_writing_the_gallery_removes_figures_that_no_longer_exist(tmp_path):
    (tmp_path / "99-old.svg").write_text("<svg/>")
    write_gallery(tmp_path)
    assert not (tmp_path / "99-old.svg").exists()
