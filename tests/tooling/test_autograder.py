"""Gradescope's autograder zip: built by one command, set up without a package index, and
grading a submission into a results.json that Gradescope accepts."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import jsonschema
import pytest

from tenxor.course.catalog import CATALOG
from tests.tooling.submissions import ROOT, complete_submission

pytestmark = pytest.mark.provided
SCHEMA = json.loads((Path(__file__).parent / "gradescope_results.schema.json").read_text())


@pytest.fixture(scope="module")
def autograder(tmp_path_factory) -> Path:
    """The autograder zip of the course, written by the instructor's command."""
    out = tmp_path_factory.mktemp("zip") / "autograder.zip"
    done = subprocess.run(
        [sys.executable, "-m", "instructor.cli", "autograder", "--out", str(out)]
        + ["--course", str(ROOT)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert f"Wrote {out}" in done.stdout
    return out


def test_the_zip_holds_the_scripts_the_course_and_its_wheels(autograder: Path):
    with zipfile.ZipFile(autograder) as archive:
        names = archive.namelist()
        modes = {info.filename: info.external_attr >> 16 for info in archive.infolist()}
    for script in ("setup.sh", "run_autograder"):
        assert script in names and modes[script] & stat.S_IXUSR, script
    assert {item.path for item in CATALOG} <= set(names)
    assert any(name.startswith("tests/hidden/test_") for name in names)
    grading = [
        path.relative_to(ROOT).as_posix() for path in (ROOT / "instructor" / "grading").glob("*.py")
    ]
    assert "instructor/grading/__init__.py" in grading and set(grading) <= set(names)
    assert "instructor/protections.py" in names and "pyproject.toml" in names
    wheels = {
        name.split("/")[1].split("-")[0].lower() for name in names if name.startswith("wheels/")
    }
    assert {"numpy", "pytest", "hypothesis", "ml_dtypes", "chalk_diagrams", "setuptools"} <= wheels
    assert not any(name.startswith((".venv/", "notebooks/", ".git/")) for name in names)


def gradescope_runs(script: Path, environment: dict[str, str]) -> subprocess.CompletedProcess:
    """Run one of the autograder's scripts as Gradescope does, with bash."""
    return subprocess.run(
        ["bash", str(script)], capture_output=True, text=True, env=environment, timeout=600
    )


def test_setup_needs_no_index_and_run_autograder_grades_a_submission(autograder, tmp_path):
    """Gradescope's steps in a temporary autograder root: unpack into source/, run setup.sh
    with the package index out of reach, put a submission in place, run run_autograder."""
    root = tmp_path / "autograder"
    with zipfile.ZipFile(autograder) as archive:
        archive.extractall(root / "source")
    environment = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "VIRTUAL_ENV"))},
        "AUTOGRADER_ROOT": str(root),
        "PIP_INDEX_URL": "http://127.0.0.1:9/simple",  # nothing listens there
        "TENXOR_EXAMPLES": "10",  # the packaging is on trial here, not the exercises
    }
    setup = gradescope_runs(root / "source" / "setup.sh", environment)
    assert setup.returncode == 0, setup.stdout + setup.stderr
    complete_submission(root / "submission")
    graded = gradescope_runs(root / "source" / "run_autograder", environment)
    assert graded.returncode == 0, graded.stdout + graded.stderr
    results = json.loads((root / "results" / "results.json").read_text())
    jsonschema.validate(results, SCHEMA)
    total = sum(item.points for item in CATALOG)
    assert results["score"] == pytest.approx(total)
    assert sum(entry["max_score"] for entry in results["tests"]) == pytest.approx(total)
