"""The tenxor command: help a TA can follow, clear errors for bad arguments, hints."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tenxor.course.catalog import CATALOG
from tenxor.course.check import HINTS_FILE
from tenxor.course.hints import HINTS
from tenxor.course.release import write_release
from tests.tooling.submissions import ROOT

pytestmark = pytest.mark.provided


def tenxor(*arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "tenxor.course.cli", *arguments], capture_output=True, text=True
    )


def test_help_lists_every_command_with_an_example():
    done = tenxor("--help")
    assert done.returncode == 0
    for example in ("tenxor check 2.1", "tenxor release FOLDER", "tenxor grade --batch DIR"):
        assert example in done.stdout
    assert "tenxor verify" in done.stdout


@pytest.mark.parametrize("command", ["check", "release", "grade", "verify"])
def test_each_command_has_its_own_help(command):
    done = tenxor(command, "--help")
    assert done.returncode == 0 and f"usage: tenxor {command}" in done.stdout


@pytest.mark.parametrize(
    "arguments, message",
    [
        (["check", "9.9"], "tenxor check: no exercise '9.9'; known exercises: 1.1, 1.2"),
        (["check", "9.9", "--hint"], "tenxor check: no exercise '9.9'; known exercises: 1.1"),
        (["check", "--hint"], "tenxor check: --hint needs an exercise id"),
        (["grade", "no/such/folder"], "tenxor grade: "),
        (["grade", ".", "--chapter", "8"], "tenxor grade: no exercise 8"),
        (["verify", "--gate", "speed"], "invalid choice: 'speed'"),
    ],
)
def test_bad_arguments_get_a_clear_message_and_no_traceback(arguments, message):
    done = tenxor(*arguments)
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
