"""environment.yml offers conda users the same packages as pyproject.toml."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from instructor.ci import COMPILE_INSTALLED

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.provided


def requirement(text: str) -> tuple[str, str]:
    """A requirement as (normalised name, version specifier)."""
    match = re.fullmatch(r"\s*([A-Za-z0-9_.\-]+)\s*(.*?)\s*", text)
    assert match, f"cannot read requirement {text!r}"
    return re.sub(r"[-_.]+", "-", match[1]).lower(), match[2].replace(" ", "")


def pyproject_requirements() -> dict[str, str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    listed = project["dependencies"] + project["optional-dependencies"]["course"]
    return dict(requirement(text) for text in listed)


def conda_requirements() -> tuple[dict[str, str], str]:
    """Packages named in environment.yml (conda and pip sections) and its python spec."""
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    found, python = {}, ""
    for entry in env["dependencies"]:
        if isinstance(entry, dict):
            for line in entry["pip"]:
                if line.strip() != "-e .":
                    found.update([requirement(line)])
            continue
        name, spec = requirement(entry)
        if name == "python":
            python = spec
        elif name != "pip":
            found[name] = spec
    return found, python


def test_environment_lists_the_same_packages_and_versions_as_pyproject():
    found, _ = conda_requirements()
    assert found == pyproject_requirements()


def test_environment_python_matches_requires_python():
    _, python = conda_requirements()
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert python == project["requires-python"]


def test_environment_installs_the_package_itself():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip_section = next(e for e in env["dependencies"] if isinstance(e, dict))["pip"]
    assert "-e ." in pip_section


def test_ci_runs_the_readme_test_command():
    command = (ROOT / ".ci" / "run").read_text().strip().splitlines()[-1]
    assert command == "python3 -m instructor.ci"
    assert command in (ROOT / "README.md").read_text()


def test_ci_compiles_the_installed_packages_where_no_process_writes_bytecode(tmp_path):
    """Set-up installs packages uncompiled; where PYTHONDONTWRITEBYTECODE is set, no process
    ever writes their bytecode, and each (every notebook's kernel) would compile them anew.
    CI compiles them once: a process there then loads an installed module from bytecode."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    paths = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    purelib = Path(subprocess.check_output([python, "-c", paths], text=True).strip())
    (purelib / "installed_module.py").write_text("VALUE = 1\n", encoding="utf-8")
    environment = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}

    def loaded_from() -> str:
        done = subprocess.run([python, "-v", "-c", "import installed_module"], env=environment,
                              capture_output=True, text=True, check=True)  # fmt: skip
        said = done.stderr.splitlines()  # -v: where each module's code came from
        return next(line for line in said if "code object from" in line and "installed_" in line)

    assert loaded_from().rstrip("'").endswith(".py"), "compiled before CI compiled it"
    subprocess.run([python, "-c", COMPILE_INSTALLED], env=environment, check=True)
    assert loaded_from().rstrip("'").endswith(".pyc"), loaded_from()
