"""The tenxor and tenxor-instructor commands: help a TA can follow, clear errors for bad
arguments, hints, and grade refusing a folder of submissions given as one."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import instructor.grading as grading
from instructor.authoring.release import write_release
from instructor.cli import main as instructor_main
from instructor.grading.autograder import RUN_AUTOGRADER
from tenxor.course.catalog import CATALOG
from tenxor.course.hints import HINTS
from tenxor.course.hints_shown import HINTS_FILE
from tests.tooling.submissions import MODULES, ROOT, complete_submission

pytestmark = pytest.mark.provided


def tenxor(*arguments: str, module: str = "tenxor.course.cli") -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", module, *arguments], capture_output=True, text=True
    )


def instructor(*arguments: str) -> subprocess.CompletedProcess:
    return tenxor(*arguments, module="instructor.cli")


def test_help_lists_every_command_with_an_example():
    learner, teacher = tenxor("--help"), instructor("--help")
    assert learner.returncode == teacher.returncode == 0
    assert "tenxor check 2.1" in learner.stdout and "tenxor draw" in learner.stdout
    for example in ("release FOLDER", "grade --batch DIR", "verify"):
        assert f"tenxor-instructor {example}" in teacher.stdout
        assert example not in learner.stdout


@pytest.mark.parametrize("command", ["check", "draw"])
def test_each_learner_command_has_its_own_help(command):
    done = tenxor(command, "--help")
    assert done.returncode == 0 and f"usage: tenxor {command}" in done.stdout


@pytest.mark.parametrize("command", ["release", "grade", "verify"])
def test_each_instructor_command_has_its_own_help_and_is_not_the_learners(command):
    done = instructor(command, "--help")
    assert done.returncode == 0 and f"usage: tenxor-instructor {command}" in done.stdout
    assert tenxor(command, "--help").returncode != 0


@pytest.mark.parametrize(
    "command, arguments, message",
    [
        (tenxor, ["check", "9.9"], "tenxor check: no exercise '9.9'; known exercises: 1.1, 1.2"),
        (tenxor, ["check", "9.9", "--hint"], "tenxor check: no exercise '9.9'; known exercises"),
        (tenxor, ["check", "--hint"], "tenxor check: --hint needs an exercise id"),
        (instructor, ["grade", "no/such/folder"], "tenxor-instructor grade: "),
        (instructor, ["grade", ".", "--chapter", "8"], "tenxor-instructor grade: no exercise 8"),
        (instructor, ["verify", "--gate", "speed"], "invalid choice: 'speed'"),
    ],
)
def test_bad_arguments_get_a_clear_message_and_no_traceback(command, arguments, message):
    done = command(*arguments)
    assert done.returncode != 0
    assert message in done.stderr and "Traceback" not in done.stderr


def test_no_command_prints_the_help():
    done = tenxor()
    assert done.returncode == 2 and "tenxor check 2.1" in done.stdout


def test_check_hint_shows_the_next_hint_without_running_tests(tmp_path):
    course = tmp_path / "course"
    write_release(ROOT, course)
    item = CATALOG[0]
    count = len(HINTS[item.id])
    first = tenxor("check", item.id, "--hint", "--course", str(course))
    second = tenxor("check", item.id, "--hint", "--course", str(course))
    assert first.returncode == second.returncode == 0, first.stderr
    assert f"hint 1 of {count}:" in first.stdout and f"hint 2 of {count}:" in second.stdout
    assert "PASS" not in first.stdout + second.stdout and "tests passed" not in first.stdout
    assert json.loads(Path(course, HINTS_FILE).read_text()) == {item.id: 2}


def nested_in(*folders: str) -> Callable[[Path], None]:
    """A layout of a folder: a complete submission in each of `folders` (its top for "")."""

    def build(folder: Path) -> None:
        for inner in folders:
            complete_submission(folder / inner)

    return build


def loose(folder: Path) -> None:
    """The exercise modules at the folder's top, without their tenxor/ folder."""
    for module in MODULES:
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / module, folder / Path(module).name)


def grade_called(argv: list[str], monkeypatch) -> tuple[list[dict[str, Any]], str | None]:
    """Run `tenxor-instructor grade` with `argv`, grading nothing: the calls of grade_batch
    it made (its submissions and options) and the message it exited with (None if none)."""
    calls: list[dict[str, Any]] = []

    def recorded(course, submissions, output, options, report=None) -> Path:
        calls.append({"submissions": submissions, "options": options})
        return output / "gradebook.csv"

    monkeypatch.setattr(grading, "grade_batch", recorded)
    monkeypatch.setattr(signal, "signal", lambda *handler: None)  # grade's SIGTERM handler
    try:
        instructor_main(["grade", *argv])
    except SystemExit as error:
        return calls, str(error.code)
    return calls, None


@pytest.mark.parametrize(
    "layout, named",
    [
        (nested_in("ada", "ben", "cleo/my-work"), ["ada", "ben", "cleo"]),
        (nested_in("project", "old"), ["old", "project"]),  # one student's, two copies
    ],
    ids=["class-folder", "two-copies"],
)
def test_a_folder_of_several_submissions_given_as_one_is_refused_naming_them(
    tmp_path, monkeypatch, layout, named
):
    """A folder without exercise modules at its top whose folders each hold a copy of them is
    not graded as one student (intake would take one folder's modules for all): grade exits
    naming those folders, suggesting --batch, with nothing graded and no output written."""
    layout(tmp_path / "subs")
    (tmp_path / "subs" / "notes").mkdir()  # a folder without modules is no submission
    out = tmp_path / "grades"
    calls, said = grade_called([str(tmp_path / "subs"), "--out", str(out)], monkeypatch)
    assert said is not None and not calls, f"grade subs/ graded {calls}, said {said!r}"
    listed = said.split("its folders ")[-1].split(" each hold")[0]
    assert listed == ", ".join(named), f"grade subs/ named {listed!r}, not {named}: {said}"
    assert "--batch" in said and "--single" in said, said
    assert not out.exists(), f"grade subs/ wrote {sorted(out.rglob('*'))}"


@pytest.mark.parametrize(
    "layout",
    [nested_in(""), loose, nested_in("my-work"), nested_in("", "backup")],
    ids=["tenxor-at-top", "loose", "nested-once", "with-a-backup"],
)
def test_one_submission_grades_as_one_and_several_with_batch_or_single(
    tmp_path, monkeypatch, layout
):
    """Modules at the top (in tenxor/ or loose), in one folder, or at the top with a copy in
    another folder: one submission, graded as one. A folder of several grades with --batch
    (a student each) or --single (as one), and the two options exclude each other."""
    layout(tmp_path / "one")
    calls, said = grade_called([str(tmp_path / "one")], monkeypatch)
    assert said is None and len(calls) == 1, f"grade one/ said {said!r}, graded {calls}"
    assert calls[0]["submissions"] == {"one": tmp_path / "one"}, calls
    nested_in("ada", "ben")(tmp_path / "subs")
    subs = str(tmp_path / "subs")
    ways = (("--batch", ["ada", "ben"], False), ("--single", ["subs"], True))
    for option, graded, single in ways:
        calls, said = grade_called([subs, option], monkeypatch)
        assert said is None and len(calls) == 1, f"grade subs/ {option} said {said!r}: {calls}"
        submissions, options = calls[0]["submissions"], calls[0]["options"]
        assert sorted(submissions) == graded, f"grade subs/ {option} graded {submissions}"
        assert options.single is single, f"grade subs/ {option}: single={options.single}"
    with pytest.raises(SystemExit) as both:
        instructor_main(["grade", subs, "--batch", "--single"])
    assert both.value.code == 2, f"grade --batch --single exited {both.value.code}"


def test_gradescopes_upload_with_two_copies_is_graded_as_one_submission(tmp_path, monkeypatch):
    """run_autograder grades /autograder/submission as one upload: one that holds two copies
    of the package (project/tenxor/ and old/tenxor/) is graded, not refused, while grade
    without --single refuses that folder."""
    root = tmp_path / "autograder"
    for folder in ("source", "venv/bin"):
        (root / folder).mkdir(parents=True)
    nested_in("project", "old")(root / "submission")
    recorder = root / "venv" / "bin" / "tenxor-instructor"  # says what it was asked
    recorder.write_text('#!/bin/sh\nprintf \'%s\\0\' "$@" > "$AUTOGRADER_ROOT/argv"\n')
    recorder.chmod(0o755)
    script = root / "source" / "run_autograder"
    script.write_text(RUN_AUTOGRADER)
    environment = {"PATH": "/usr/bin:/bin", "AUTOGRADER_ROOT": str(root)}
    done = subprocess.run(["bash", str(script)], env=environment, capture_output=True, text=True)
    assert done.returncode == 0, f"run_autograder exited {done.returncode}: {done.stderr}"
    argv = (root / "argv").read_text().split("\0")[:-1]
    assert argv[:2] == ["grade", str(root / "submission")], f"run_autograder ran {argv}"
    calls, said = grade_called(argv[1:], monkeypatch)
    assert said is None and len(calls) == 1, f"{argv} said {said!r}, graded {calls}"
    assert calls[0]["submissions"] == {"submission": root / "submission"}, calls
    calls, said = grade_called([str(root / "submission")], monkeypatch)
    assert said and not calls, f"grade submission/ without --single said {said!r}: {calls}"
