"""The tenxor and tenxor-instructor commands: help a TA can follow, clear errors for bad
arguments, hints."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from instructor.authoring.release import write_release
from tenxor.course.catalog import CATALOG
from tenxor.course.hints import HINTS
from tenxor.course.hints_shown import HINTS_FILE
from tests.tooling.submissions import ROOT

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
