"""The modules of the instructor package that a process loads by name, written as a string
(a boot script, a command line, a pytest plugin, a line of generated source): their names
are written here and nowhere else, and a test imports each one.

    command = [python, "-I", "-c", boot_script(WORKER), settings.to_json()]
"""

from __future__ import annotations

WORKER = "instructor.sandbox.worker"  # the sandbox worker: the one process that runs a submission
LAUNCHER = "instructor.sandbox.launcher"  # keeps root: starts, stops and kills workers
SWEEPER = "instructor.sandbox.os_calls"  # as root, kills every process of a block of users
EXPOSURE = "instructor.sandbox.exposure"  # checks, as a worker's user, what it could read
JUDGE = "instructor.grading.judge"  # the pytest plugin that decides every result of grading
PROBE = "instructor.authoring.probe"  # the pytest plugin verify probes the stubbed package with
CELL_FINDINGS = "instructor.authoring.cell_findings"  # the pytest plugin of verify's nbval runs
CLI = "instructor.cli"  # the `tenxor-instructor` command
CI = "instructor.ci"  # the instructor's test run, and the instructor's set-up


def boot_script(module: str) -> str:
    """A script that puts the judges' tree (the "tree" of its first argument, JSON settings)
    first on the path and calls `module`'s main with those settings."""
    return (
        "import json, sys\n"
        'sys.path.insert(0, json.loads(sys.argv[1])["tree"])\n'
        f"from {module} import main\n"
        "main(sys.argv[1])\n"
    )


def serve_script(module: str) -> str:
    """A script, started in the judges' tree, that calls `module`'s main with its arguments."""
    return f'import sys\nsys.path.insert(0, ".")\nfrom {module} import main\nmain(*sys.argv[1:])\n'


def call_script(module: str, function: str) -> str:
    """Python lines that call `function` of `module` with the script's first argument."""
    return f"from {module} import {function}\n{function}(sys.argv[1])\n"


def probe_line(indent: str, exercise_id: str) -> str:
    """The line the probed package runs first in the exercise `exercise_id`'s function."""
    return f'{indent}__import__("importlib").import_module("{PROBE}").reach("{exercise_id}")\n'


def module_files(module: str) -> list[str]:
    """The files, relative to the tree, that importing `module` reads: its packages'
    __init__.py and its own."""
    parts = module.split(".")
    packages = [f"{'/'.join(parts[:n])}/__init__.py" for n in range(1, len(parts))]
    return [*packages, f"{'/'.join(parts)}.py"]
