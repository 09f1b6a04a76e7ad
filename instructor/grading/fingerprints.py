"""What decided a student's grade, as fingerprints: their submitted modules, the instructor's
tests, the reference (the course's package: solutions and provided code) and the grading
settings. A batch run again grades a student again when any of them changed, and only then.

    >>> course = course_fingerprint(Path("."), settings={"credit": "functions"})
    >>> Fingerprint(submission_digest(folder), **course).short   # e.g. '3f9c2a1b7d04'

Each exercise has a fingerprint of its own, of what can change its score alone: the
submitted modules its module needs (itself and those it imports), its own tests (public and
hidden, with the rest of their files and the tests' support), the reference and the
settings. So a change to one exercise's tests grades that exercise again, and nothing else:

    >>> tests = exercise_tests(Path("."), expected)          # {"2.3": "9b1e...", ...}
    >>> exercise_fingerprints(module_digests(folder), needs, tests, course)
"""

from __future__ import annotations

import ast
import hashlib
import json
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from tenxor.course.catalog import BY_ID, EXERCISE_FILES, TOOLING_TESTS

PARTS = ("submission", "tests", "reference", "settings")
COURSE_PARTS = PARTS[1:]  # those that come from the course and the settings
SHORT = 12  # hex digits of the fingerprint the gradebook shows
TESTS_FOLDER = "tests"
PACKAGE_FOLDER = "tenxor"


@dataclass(frozen=True)
class Fingerprint:
    """The digests of what one grading of one student depended on."""

    submission: str
    tests: str
    reference: str
    settings: str

    @property
    def short(self) -> str:
        """One short digest of all four parts, as the gradebook shows it."""
        return text_digest(json.dumps(asdict(self), sort_keys=True))[:SHORT]

    def changed_since(self, earlier: dict[str, Any]) -> list[str]:
        """The parts that differ from an `earlier` fingerprint's dict (all, if it is none)."""
        if not isinstance(earlier, dict):
            return list(PARTS)
        return [part for part in PARTS if earlier.get(part) != getattr(self, part)]


def text_digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def files_digest(root: Path, paths: Iterable[Path]) -> str:
    """A digest of files by their paths relative to `root` and their bytes."""
    digest = hashlib.sha256()
    for path in sorted(paths):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def source_files(folder: Path, left_out: tuple[Path, ...] = ()) -> list[Path]:
    """The files under `folder` that a run reads, without compiled caches or `left_out`."""
    return [
        path
        for path in folder.rglob("*")
        if path.is_file()
        and "__pycache__" not in path.parts
        and not any(path.is_relative_to(other) for other in left_out)
    ]


def course_fingerprint(course: Path, settings: dict[str, Any]) -> dict[str, str]:
    """The fingerprint parts that come from the course at `course` and the grading settings:
    its tests (public and hidden, with their support code; the tooling's own left out), its
    package (reference solutions and provided code) and `settings`."""
    tests = course / TESTS_FOLDER
    return {
        "tests": files_digest(course, source_files(tests, (course / TOOLING_TESTS,))),
        "reference": files_digest(course, source_files(course / PACKAGE_FOLDER)),
        "settings": text_digest(json.dumps(settings, sort_keys=True)),
    }


def exercise_tests(course: Path, expected: dict[str, str]) -> dict[str, str]:
    """Per exercise of `expected` (test -> exercise), a digest of its tests: its own test
    functions (a function some of whose cases test another exercise counts for both), the
    rest of each file holding one (imports, helpers, strategies) and the support every test
    file shares (the test folders' modules that are not test files). Written as syntax, so a
    comment or a blank line changes nothing."""
    owners: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for test, exercise_id in expected.items():
        path, _, name = test.partition("::")
        owners[path][name.split("[")[0]].add(exercise_id)
    tests = course / TESTS_FOLDER
    support = [p for p in source_files(tests, (course / TOOLING_TESTS,)) if p.suffix == ".py"]
    shared = files_digest(course, [p for p in support if not p.name.startswith("test_")])
    parts: dict[str, list[str]] = defaultdict(list)
    for path, functions in sorted(owners.items()):
        rest, own = [path], defaultdict(list)
        for node in ast.parse((course / path).read_bytes()).body:
            mine = functions.get(getattr(node, "name", ""), set())
            for exercise_id in mine:
                own[exercise_id].append(ast.dump(node))
            if not mine:
                rest.append(ast.dump(node))
        for exercise_id in sorted({e for exercises in functions.values() for e in exercises}):
            parts[exercise_id] += [text_digest("\n".join(rest)), *own[exercise_id]]
    return {e: text_digest("\n".join([shared, *digests])) for e, digests in parts.items()}


def module_needs(package: Path) -> dict[str, set[str]]:
    """Per exercise module's file (tenxor/views.py), the exercise modules' files it needs to
    import: itself, and those it imports, directly or through other modules of `package`."""
    imports = {file: imported_files(package, file) for file in python_files(package)}
    needs = {}
    for exercise_file in EXERCISE_FILES:
        seen, todo = set(), [exercise_file]
        while todo:
            file = todo.pop()
            if file not in seen:
                seen.add(file)
                todo += imports.get(file, ())
        needs[exercise_file] = seen & set(EXERCISE_FILES)
    return needs


def python_files(package: Path) -> list[str]:
    """The modules of the package in `package` (the folder holding tenxor/), as their files
    relative to it."""
    return [p.relative_to(package).as_posix() for p in (package / PACKAGE_FOLDER).rglob("*.py")]


def imported_files(package: Path, file: str) -> set[str]:
    """The files of the package's modules that `file` imports, anywhere in it."""
    dotted = file.removesuffix(".py").removesuffix("/__init__").split("/")
    own_package = dotted if file.endswith("__init__.py") else dotted[:-1]
    names = set()
    for node in ast.walk(ast.parse((package / file).read_bytes())):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = own_package[: len(own_package) - node.level + 1] if node.level else []
            module = [*base, *(node.module.split(".") if node.module else [])]
            names.add(".".join(module))
            names |= {".".join([*module, alias.name]) for alias in node.names}
    found = set()
    for name in names:
        for candidate in (name.replace(".", "/") + ".py", name.replace(".", "/") + "/__init__.py"):
            if (package / candidate).is_file():
                found.add(candidate)
    return found


def exercise_fingerprints(
    modules: dict[str, str],
    needs: dict[str, set[str]],
    tests: dict[str, str],
    course: dict[str, str],
) -> dict[str, str]:
    """Per exercise with tests, a short digest of what its score depends on: the digests of
    the submitted modules it `needs` (from `modules`), its `tests`, and the `course`'s
    reference and settings."""
    return {
        exercise_id: text_digest(json.dumps([
            [modules.get(file, "missing") for file in sorted(needs[BY_ID[exercise_id].path])],
            digest, course["reference"], course["settings"],
        ]))[:SHORT]
        for exercise_id, digest in sorted(tests.items())
    }  # fmt: skip
