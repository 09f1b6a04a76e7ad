"""What decided a student's grade, as fingerprints: their submitted modules, the instructor's
tests, the reference (the course's package: solutions and provided code) and the grading
settings. A batch run again grades a student again when any of them changed, and only then.

    >>> course = course_fingerprint(Path("."), settings={"credit": "functions"})
    >>> Fingerprint(submission_digest(folder), **course).short   # e.g. '3f9c2a1b7d04'
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from tenxor.course.catalog import TOOLING_TESTS

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
