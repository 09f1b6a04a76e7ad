"""The instructor's set-up installs with uv (pip where uv cannot) and runs no test, the
instructor's test run keeps its tests' files in memory, and the README's term guide uses
only commands and options that exist: each of its command lines parses with the real
tenxor-instructor parser."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

import pytest

import course
from instructor import ci
from instructor.cli import parser

pytestmark = pytest.mark.provided

README = Path(__file__).resolve().parents[2] / "README.md"
COMMAND = re.compile(r"^\s*(?:\.venv/bin/)?tenxor-instructor (?P<arguments>.+)$")


def section(title: str) -> str:
    """The README's section under the heading `### title`, up to the next heading of its kind."""
    text = README.read_text(encoding="utf-8")
    start = text.index(f"\n### {title}\n")
    end = text.index("\n### ", start + 1)
    return text[start:end]


def command_lines(text: str) -> list[list[str]]:
    """The arguments of every `tenxor-instructor ...` line of the code blocks of `text`."""
    blocks = re.findall(r"```\n(.*?)```", text, flags=re.DOTALL)
    found = []
    for line in "\n".join(blocks).splitlines():
        match = COMMAND.match(line)
        if match:
            arguments = match["arguments"].split("  ")[0]  # a comment may follow two spaces
            found.append(shlex.split(arguments))
    return found


def test_every_command_of_the_term_guide_exists_with_its_options():
    commands = command_lines(section("A term, step by step"))
    used = {arguments[0] for arguments in commands}
    expected = {"verify", "release", "autograder", "collect", "grade", "report", "export"}
    assert used >= expected, f"the guide's commands {sorted(used)} lack {expected - used}"
    for arguments in commands:
        try:
            parser().parse_args(arguments)
        except SystemExit:
            pytest.fail(f"the guide's `tenxor-instructor {shlex.join(arguments)}` does not parse")


def test_the_set_up_installs_the_instructors_extra_runs_no_test_and_says_what_next(
    monkeypatch, capsys
):
    installed: list[tuple] = []
    monkeypatch.setattr(course, "set_up", lambda *how: installed.append(how))

    def ran(*args, **kwargs):
        raise AssertionError(f"the set-up ran {args}")

    monkeypatch.setattr(course, "run", ran)
    monkeypatch.setattr(ci.subprocess, "run", ran)
    monkeypatch.setattr(ci.subprocess, "Popen", ran)
    assert ci.main(["--set-up"]) == 0
    said = capsys.readouterr().out
    assert installed == [(ci.EXTRA, ci.uv_install)] and ci.EXTRA == "dev", installed
    named = command_lines(f"```\n{said}\n```")
    assert ["--help"] in named and ["verify"] in named, named
    for arguments in named:
        if arguments != ["--help"]:
            parser().parse_args(arguments)  # each command it names exists
    assert "tenxor-instructor verify" in said and "A term, step by step" in said, said
    assert "python3 -m instructor.ci --set-up" in section("Set up"), "README names the set-up"
    assert ci.main(["--nonsense"]) == 2 and not installed[1:]


@pytest.mark.parametrize(
    "failing, steps, code",
    [((), "fetch uv", 0), (("fetch",), "fetch pip", 0), (("uv",), "fetch uv pip", 0),
     (("uv", "pip"), "fetch uv pip", 1)],
)  # fmt: skip
def test_uv_installs_the_instructors_extra_and_pip_does_where_uv_cannot(
    monkeypatch, failing, steps, code
):
    """uv (which pip puts into .venv first) installs the dev extra editable into .venv; where
    either step fails, course.py's pip install does it instead, and pip's exit code counts."""
    python = str(course.venv_python())
    commands = {
        "fetch": [python, "-m", "pip", "install", "--quiet", ci.UV],
        "uv": [python, "-m", "uv", "pip", "install", "--quiet", "--python", python, "-e", ".[dev]"],
        "pip": [python, "-m", "pip", "install", "--quiet", "--no-compile", "-e", ".[dev]"],
    }
    ran: list[list[str]] = []

    def run(*args):
        ran.append([str(arg) for arg in args])
        return 1 if any(commands[step] == ran[-1] for step in failing) else 0

    monkeypatch.setattr(course, "run", run)
    assert ci.uv_install("dev") == code, f"with {failing} failing"
    assert ran == [commands[step] for step in steps.split()], f"with {failing} failing: {ran}"


def test_what_compiling_leaves_out_of_the_installed_packages_is_never_imported():
    """The packages' tests and vendored copies are left uncompiled; nothing this process
    imported (pytest, hypothesis, NumPy, the course and its tooling) lies there."""
    site = sysconfig.get_paths()["purelib"]
    for left_out in ("numpy/_core/tests/test_umath.py", "debugpy/_vendored/force_pydevd.py"):
        assert re.search(ci.NEVER_IMPORTED, f"{site}/{left_out}"), left_out
    for compiled in ("numpy/testing/__init__.py", "_pytest/python.py", "hypothesis/core.py"):
        assert not re.search(ci.NEVER_IMPORTED, f"{site}/{compiled}"), compiled
    files = [getattr(module, "__file__", None) or "" for module in list(sys.modules.values())]
    imported = [file for file in files if file.startswith(site)]
    assert len(imported) > 100 and not [f for f in imported if re.search(ci.NEVER_IMPORTED, f)]


def test_the_tests_scratch_is_a_folder_in_memory_as_open_as_tmp_and_gone_afterwards(
    monkeypatch, tmp_path
):
    """With room in MEMORY, TMPDIR (here and in the processes started) is a fresh folder
    there, writable by every user and sticky as /tmp, and removed with what it holds; the
    TMPDIR before comes back. Without room, or without the folder, nothing changes."""
    memory = tmp_path / "memory"
    memory.mkdir()
    monkeypatch.setattr(ci, "MEMORY", memory)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    with ci.scratch_in_memory() as folder:
        assert folder is not None and folder.parent == memory, folder
        assert oct(folder.stat().st_mode & 0o7777) == oct(0o1777)
        assert tempfile.gettempdir() == str(folder)
        made = "import tempfile; print(tempfile.mkdtemp())"
        started = subprocess.run([sys.executable, "-c", made], capture_output=True, text=True)
        assert Path(started.stdout.strip()).parent == folder, started.stdout
    assert list(memory.iterdir()) == [], "the scratch folder outlived the run"
    assert os.environ["TMPDIR"] == str(tmp_path) and tempfile.gettempdir() == str(tmp_path)
    for room, where in ((2**70, memory), (1, tmp_path / "no such folder")):
        monkeypatch.setattr(ci, "MEMORY_ROOM", room)
        monkeypatch.setattr(ci, "MEMORY", where)
        with ci.scratch_in_memory() as folder:
            assert folder is None and tempfile.gettempdir() == str(tmp_path), (room, where)
    assert list(memory.iterdir()) == []
