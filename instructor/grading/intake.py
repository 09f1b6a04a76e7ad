"""Intake: the exercise modules taken from a submission, and what became of its files.

Only the exercise modules are taken, found at their place in the tree, in a tenxor/ folder at
any depth, or loose at the top. A module that is missing, a link, too big, not UTF-8 or does
not compile is not used; one that does not import is set aside once the judge has said so.
"""

from __future__ import annotations

import hashlib
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from tenxor.course.catalog import EXERCISE_FILES

EXERCISE_MODULES = EXERCISE_FILES  # what is taken from a submission: these files
MAX_MODULE_BYTES = 1_000_000


@dataclass
class Assembly:
    """A submission's exercise modules put into the release's package, and what happened to
    its files."""

    package: Path
    sources: dict[str, bytes] = field(default_factory=dict)  # module -> the submitted source
    stubs: dict[str, bytes] = field(default_factory=dict)  # module -> its stub
    taken: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    broken: dict[str, str] = field(default_factory=dict)  # module -> why it was not used
    ignored: list[str] = field(default_factory=list)

    def problem_of(self, module: str) -> str | None:
        """Why a module of the submission was not graded, if it was not."""
        if module in self.missing:
            return f"{module} is missing from the submission"
        return self.broken.get(module)

    def each_alone(self) -> list[Path]:
        """A package per submitted module, holding it alone among stubs, beside this one."""
        alone = []
        for number, module in enumerate(self.sources):
            alone.append(self.package.parent / f"alone-{number}")
            shutil.copytree(self.package / "tenxor", alone[-1] / "tenxor")
            put(alone[-1], {**self.stubs, module: self.sources[module]})
        return alone

    def set_aside(self, problems: list[str | None]) -> None:
        """Put back the stub of each submitted module that does not import (`problems`, in
        the order of `each_alone`: why each does not, None where it does)."""
        for module, problem in zip(self.sources, problems):
            if problem:
                self.broken[module] = f"{module} does not import: {problem}"
                put(self.package, {module: self.stubs[module]})
        self.taken = [module for module in self.taken if module not in self.broken]


def locate(folder: Path, module: str) -> Path | None:
    """Where a submission keeps an exercise module: at its place in the tree, in a tenxor/
    folder at any depth, or loose at the top."""
    direct = folder / module
    if direct.is_file():
        return direct
    nested = sorted(folder.rglob(module), key=lambda path: (len(path.parts), str(path)))
    if nested:
        return nested[0]
    loose = folder / Path(module).name
    return loose if loose.is_file() else None


def file_problem(folder: Path, found: Path, module: str) -> str | None:
    """Why a submitted file cannot be taken at all (a link, too big), if so."""
    inside = found.resolve().is_relative_to(folder.resolve())
    if found.is_symlink() or not inside:
        return f"{module} is a symbolic link; submit the file itself"
    size = found.stat().st_size
    if size > MAX_MODULE_BYTES:
        return f"{module} is {size} bytes, more than the {MAX_MODULE_BYTES} a module may have"
    return None


def source_problem(module: str, data: bytes) -> str | None:
    """Why a module's source cannot be used as it is (not UTF-8, a syntax error), if so."""
    try:
        text = data.decode(
            "utf-8-sig"
        )  # Python reads a byte-order mark too, as some editors save one
    except UnicodeDecodeError as error:
        return f"{module} is not valid UTF-8 (byte {data[error.start]:#04x} at {error.start})"
    try:
        compile(text, module, "exec")
    except SyntaxError as error:
        return f"{module} has a syntax error at line {error.lineno}: {error.msg}"
    except ValueError as error:
        return f"{module} cannot be compiled: {error}"
    return None


def submitted_files(folder: Path) -> list[str]:
    """Every file of a submission, relative to it."""
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())


def put(tree: Path, modules: dict[str, bytes]) -> None:
    """Write modules (path relative to the tree -> source) into a tree."""
    for module, data in modules.items():
        (tree / module).write_bytes(data)


def assemble(release_tree: Path, folder: Path, package: Path) -> Assembly:
    """Put the submission's usable exercise modules into a copy of the release's package
    (where every exercise is a stub)."""
    ignored = shutil.ignore_patterns("__pycache__")
    shutil.copytree(release_tree / "tenxor", package / "tenxor", ignore=ignored)
    assembly, submitted, used = Assembly(package), {}, set()
    for module in EXERCISE_MODULES:
        found = locate(folder, module)
        if found is None:
            assembly.missing.append(module)
            continue
        used.add(found.relative_to(folder).as_posix())
        problem = file_problem(folder, found, module)
        data = b"" if problem else found.read_bytes()
        problem = problem or source_problem(module, data)
        if problem:
            assembly.broken[module] = problem
        else:
            submitted[module] = data
    assembly.stubs = {module: (package / module).read_bytes() for module in submitted}
    assembly.sources = submitted
    put(package, submitted)
    assembly.taken = sorted(submitted)
    assembly.ignored = [name for name in submitted_files(folder) if name not in used]
    return assembly


def submission_digest(folder: Path) -> str:
    """A fingerprint of the exercise modules a submission holds."""
    digest = hashlib.sha256()
    for module in EXERCISE_MODULES:
        found = locate(folder, module)
        data = found.read_bytes() if found and not file_problem(folder, found, module) else b"-"
        digest.update(module.encode() + b"\0" + data + b"\0")
    return digest.hexdigest()
