"""check(): one line per test function, the first failure in plain words, the unfinished exercise a
failure comes from, and a progress table; and the release as a learner installs it."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tenxor.course.catalog import BY_ID, CATALOG
from tenxor.course.check import (
    DONE,
    FAILING,
    NOT_STARTED,
    cases_by_test,
    check_exercise,
    progress,
    summary_line,
)
from tenxor.course.release import write_release
from tenxor.course.running import Result
from tests.tooling.submissions import ROOT, replace_stub, restore

pytestmark = pytest.mark.provided


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("learner") / "release"
    write_release(ROOT, folder)
    return folder


def checked(exercise_id: str, root: Path) -> tuple[str, str]:
    out = io.StringIO()
    status = check_exercise(exercise_id, root, out)
    return status.state, out.getvalue()


def test_a_finished_exercise_passes_every_test_one_line_per_test_function():
    state, text = checked("2.2", ROOT)
    assert state == DONE
    lines = [line for line in text.splitlines() if line.startswith("  PASS")]
    assert len(lines) >= 5 and "FAIL" not in text
    assert all("[" not in line for line in lines), "cases of one test share its line"
    cases = sum(int(re.search(r"\((\d+) cases\)$", line)[1]) if "cases)" in line else 1
                for line in lines)  # fmt: skip
    assert f"{cases} of {cases} tests passed: done (2 points)." in text


def result(test: str, passed: bool) -> Result:
    return Result(test=f"tests/{test}", exercise="9.9", outcome="passed" if passed else "failed")


def test_cases_of_one_test_share_a_line_that_names_the_first_failing_cases():
    results = [result("test_a.py::test_one", True)]
    results += [result(f"test_a.py::test_many[{k}]", k not in (1, 3, 4, 6)) for k in range(8)]
    results += [result("test_b.py::test_lone", False)]
    grouped = cases_by_test(results)
    assert list(grouped) == ["test_a.py::test_one", "test_a.py::test_many", "test_b.py::test_lone"]
    lines = [summary_line(test, cases) for test, cases in grouped.items()]
    assert lines == [
        "PASS  test_a.py::test_one",
        "FAIL  test_a.py::test_many  (4 of 8 cases fail: [1], [3], [4], ...)",
        "FAIL  test_b.py::test_lone",
    ]
    for passed, summary in [(True, "PASS  test_a.py::test_many  (8 cases)"),
                            (False, "FAIL  test_a.py::test_many  (all 8 cases)")]:  # fmt: skip
        cases = [result(f"test_a.py::test_many[{k}]", passed) for k in range(8)]
        assert summary_line("test_a.py::test_many", cases) == summary


def test_an_unstarted_exercise_says_where_to_write_it(release):
    state, text = checked("2.2", release)
    assert state == NOT_STARTED
    assert "Not started: column_major_strides in tenxor/strides.py still raises" in text
    assert "Traceback" not in text


def test_a_failure_from_an_unfinished_prerequisite_names_it(tmp_path, release):
    learner = tmp_path / "release"
    write_release(ROOT, learner)
    restore(learner, "3.1")
    restore(learner, "3.6")  # reshape without a copy, but not 2.1 (row-major strides) yet
    state, text = checked("3.6", learner)
    assert state == FAILING
    assert "This test needs exercise 2.1 (Row-major strides, tenxor/strides.py: " in text


def test_a_wrong_answer_is_explained_in_plain_words(tmp_path):
    learner = tmp_path / "release"
    write_release(ROOT, learner)
    replace_stub(learner, "1.3", "return tuple(strides)")
    restore(learner, "1.1")
    state, text = checked("1.3", learner)
    assert state == FAILING
    first = text.split("First failure, ")[1]
    assert "Error" in first and "Traceback" not in first
    assert len(first.splitlines()) <= 12


def test_a_wrong_answer_found_by_hypothesis_shows_the_smallest_failing_input(tmp_path):
    learner = tmp_path / "release"
    write_release(ROOT, learner)
    zero_for_0_d = """
if any(size < 0 for size in shape):
    raise ValueError(f"shape {tuple(shape)} has a negative size: {min(shape)}")
count = 1 if shape else 0
for size in shape:
    count *= size
return count
"""
    replace_stub(learner, "1.1", zero_for_0_d)
    state, text = checked("1.1", learner)
    assert state == FAILING
    first = text.split("First failure, ")[1]
    assert "assert 0 == 1" in first and "where 0 = numel(())" in first
    assert "shape=()" in first  # the example hypothesis shrank the failure to
    assert not re.search(r"^\s*\+ {4,}where", first, re.M), "nested pytest detail is left out"


def test_progress_table_lists_every_exercise_with_points(release):
    out = io.StringIO()
    statuses = progress(release, out)
    assert [status.exercise.id for status in statuses] == list(BY_ID)
    assert all(status.state == NOT_STARTED for status in statuses)
    text = out.getvalue()
    for item in CATALOG:
        assert any(
            line.split()[:1] == [item.id] and str(item.points) in line for line in text.splitlines()
        )
    assert f"Done: 0 of {len(CATALOG)} exercises, 0 of 100 points." in text


def learner_python(release: Path) -> Path:
    return release / ".venv" / "bin" / "python"


def test_the_release_installed_as_a_learner_does_tracks_progress(tmp_path):
    """A fresh virtual environment made by the release's own `course.py`; check() reports every
    exercise not started, and finishing exercise 1.3 flips exactly that one to done."""
    learner = tmp_path / "course"
    write_release(ROOT, learner)
    environment = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    setup = subprocess.run(
        [sys.executable, "course.py", "test", "--exercise", "1.3", "-q"],
        cwd=learner,
        capture_output=True,
        text=True,
        env=environment,
        timeout=900,
    )
    assert setup.returncode == 1, setup.stdout[-2000:] + setup.stderr[-2000:]
    assert "failed" in setup.stdout

    def table() -> dict[str, str]:
        done = subprocess.run(
            [str(learner_python(learner)), "-m", "tenxor.course.cli", "check"],
            cwd=learner,
            capture_output=True,
            text=True,
            env=environment,
            timeout=300,
        )
        rows = [line.split() for line in done.stdout.splitlines() if line[:1].isdigit()]
        return {row[0]: " ".join(row[-2:]) if row[-1] == "started" else row[-1] for row in rows}

    before = table()
    assert before == {item.id: NOT_STARTED for item in CATALOG}
    restore(learner, "1.3")
    after = table()
    assert after == {**before, "1.3": DONE}


def test_a_short_test_name_drops_only_the_folders():
    from tenxor.course.running import short_name

    assert short_name("tests/hidden/test_views.py::test_x[a/b]") == "test_views.py::test_x[a/b]"
    assert short_name("tests/test_views.py") == "test_views.py"
