"""The wheels an autograder installs: the Python and platform they are for, the environment
markers evaluate to there, and whether a set of wheels holds everything that Python needs.

pip chooses wheels for another Python when told (`--python-version`, `--platform`), but it
evaluates the environment markers of what they require (`tomli; python_version < "3.11"`)
for the Python that runs it: what the target needs is checked here, for the target.
"""

from __future__ import annotations

import email.parser
import re
import zipfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name, parse_wheel_filename
from packaging.version import Version

COURSE = "the course's pyproject.toml"  # what requires the course's own requirements
# A platform tag's system (sys_platform, platform_system, os_name), by the tag's start.
SYSTEMS = (
    (("manylinux", "musllinux", "linux"), ("linux", "Linux", "posix")),
    (("macosx",), ("darwin", "Darwin", "posix")),
    (("win",), ("win32", "Windows", "nt")),
)
# platform_machine of the Windows tags, which name the machine otherwise than Windows does.
WINDOWS_MACHINES = {"win32": "x86", "win_amd64": "AMD64", "win_arm64": "ARM64"}


@dataclass(frozen=True)
class Target:
    """The Python and platform the wheels are for: a CPython version (X.Y or X.Y.Z) and pip
    platform tags (e.g. manylinux2014_x86_64); None and none for the running Python's."""

    python_version: str | None = None
    platforms: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        version = self.python_version
        if version is not None and not re.fullmatch(r"3\.\d+(\.\d+)?", version):
            raise ValueError(f"--python-version {version!r} is not a version 3.Y or 3.Y.Z")
        platform_environment(self.platforms)  # refuses a tag it cannot read


def pip_options(target: Target) -> list[str]:
    """The options of `pip download` that choose wheels for `target`."""
    options = []
    if target.python_version is not None:
        options += ["--python-version", target.python_version, "--implementation", "cp"]
    for platform in target.platforms:
        options += ["--platform", platform]
    return options


def platform_environment(platforms: Sequence[str]) -> dict[str, str]:
    """The environment markers' values that the platform tags `platforms` fix (none for no
    tag); a ValueError for a tag of no known system, or tags of different machines."""
    found = {}
    for tag in platforms:
        system = next((names for starts, names in SYSTEMS if tag.startswith(starts)), None)
        if system is None:
            raise ValueError(f"--platform {tag!r} is not a Linux, macOS or Windows wheel tag")
        machine = WINDOWS_MACHINES.get(tag) or re.sub(r"^[a-z]+(\d+|_\d+_\d+)?_", "", tag)
        found[tag] = (*system, machine)
    if len(set(found.values())) > 1:
        raise ValueError(f"--platform tags {', '.join(found)} name different machines")
    if not found:
        return {}
    sys_platform, system, os_name, machine = next(iter(found.values()))
    return {
        "sys_platform": sys_platform,
        "platform_system": system,
        "os_name": os_name,
        "platform_machine": machine,
        "platform_release": "",  # the target's kernel is unknown here
        "platform_version": "",
    }


def marker_environment(target: Target) -> dict[str, str]:
    """What environment markers evaluate to on `target`: the running Python's values where
    the target does not differ from it."""
    environment = {**default_environment(), **platform_environment(target.platforms)}
    if target.python_version is not None:
        full = Version(target.python_version)
        environment["python_version"] = f"{full.major}.{full.minor}"
        environment["python_full_version"] = f"{full.major}.{full.minor}.{full.micro}"
        environment["implementation_version"] = environment["python_full_version"]
        environment["implementation_name"] = "cpython"
        environment["platform_python_implementation"] = "CPython"
    return environment


@dataclass(frozen=True)
class Wheel:
    """A wheel's distribution: its file name, project name, version and requirements."""

    file: str
    name: str
    version: Version
    requires: tuple[Requirement, ...]


def read_wheel(path: Path) -> Wheel:
    """The distribution in the wheel at `path`, from its name and its METADATA file."""
    name, version, _, _ = parse_wheel_filename(path.name)
    with zipfile.ZipFile(path) as archive:
        metadata = next(
            entry
            for entry in archive.namelist()
            if re.fullmatch(r"[^/]+\.dist-info/METADATA", entry)
        )
        headers = email.parser.BytesHeaderParser().parsebytes(archive.read(metadata))
    requires = tuple(Requirement(text) for text in headers.get_all("Requires-Dist") or ())
    return Wheel(path.name, name, version, requires)


def applies(requirement: Requirement, environment: Mapping[str, str], extra: str = "") -> bool:
    """Whether `requirement` holds in `environment` when the extra `extra` ("" for none) is
    installed."""
    return requirement.marker is None or requirement.marker.evaluate(
        {**environment, "extra": extra}
    )


def without_marker(requirement: Requirement) -> str:
    """`requirement` as pip reads it, without its environment marker."""
    unmarked = Requirement(str(requirement))
    unmarked.marker = None
    return str(unmarked)


@dataclass(frozen=True, order=True)
class Missing:
    """A requirement that no wheel of a set satisfies, what requires it, and the version the
    set has of it (None: none)."""

    requirement: str
    required_by: str
    found: str | None = None

    def __str__(self) -> str:
        has = "no wheel of it" if self.found is None else f"only version {self.found}"
        return f"{self.requirement} (required by {self.required_by}): the set has {has}"


def missing_requirements(
    wheels: Iterable[Path], wanted: Iterable[str], environment: Mapping[str, str]
) -> list[Missing]:
    """What the wheels `wheels` lack in `environment`: each requirement in `wanted` (the
    course's) and in a wheel's Requires-Dist (with the extras asked of it) whose marker holds
    there and which no wheel satisfies; none for a complete set."""
    by_name = {canonicalize_name(wheel.name): wheel for wheel in map(read_wheel, wheels)}
    pending = [(Requirement(text), COURSE, "") for text in wanted]
    pending += [(req, wheel.file, "") for wheel in by_name.values() for req in wheel.requires]
    extras_asked: set[tuple[str, str]] = set()
    missing = set()
    while pending:
        requirement, required_by, extra = pending.pop()
        if not applies(requirement, environment, extra):
            continue
        wheel = by_name.get(canonicalize_name(requirement.name))
        if wheel is None or not requirement.specifier.contains(wheel.version, prereleases=True):
            found = None if wheel is None else str(wheel.version)
            missing.add(Missing(str(requirement), required_by, found))
            continue
        for asked in sorted({(wheel.name, e) for e in requirement.extras} - extras_asked):
            extras_asked.add(asked)
            pending += [(req, wheel.file, asked[1]) for req in wheel.requires]
    return sorted(missing)


class IncompleteWheels(ValueError):
    """A set of wheels that lacks requirements of the Python it is for."""

    def __init__(self, missing: Sequence[Missing], target: Target) -> None:
        self.missing = list(missing)
        python = f"Python {target.python_version}" if target.python_version else "this Python"
        platforms = ", ".join(target.platforms) or "this platform"
        lines = "".join(f"\n  {item}" for item in missing)
        super().__init__(f"the wheels for {python} on {platforms} lack:{lines}")
