"""Test results remembered between checks, so the progress table runs only what changed.

An exercise's results hold as long as its fingerprint does: the syntax of its function and of
the functions of the exercises it builds on (a comment or a blank line changes nothing), every
other line of the package (provided code, with the functions left out) and the public tests.
The check's hypothesis profile replays the same examples every time, so the same fingerprint
gives the same results; an edit anywhere else does not touch them. Results are remembered
only from runs that ended on their own, with no test stopped at a time limit (those depend on
the machine's load).
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import json
import sys
from pathlib import Path

from .catalog import CATALOG, EXERCISE_FILES, prerequisites
from .engine import Result
from .files import write_atomically

REMEMBERED_FILE = ".tenxor-results.json"  # in the course folder
TEST_FOLDERS = ("tests",)


def functions_and_rest(source: str) -> tuple[dict[str, str], str]:
    """A module's top-level functions, each as what it does (its syntax tree: an edit of a
    comment or of the layout changes nothing), and the module without them, as text (the
    whole text, if it does not parse)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return {}, source
    lines = source.splitlines(keepends=True)
    starts = [first_line(node) for node in tree.body] + [len(lines) + 1]
    functions, kept = {}, list(lines)
    for node, start, end in zip(tree.body, starts, starts[1:]):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            functions[node.name] = ast.dump(node)
            kept[start - 1 : end - 1] = [""] * (end - start)
    return functions, "".join(kept)


def first_line(node: ast.stmt) -> int:
    """The first line of a top-level statement, its decorators included."""
    decorators = getattr(node, "decorator_list", [])
    return min([node.lineno, *(decorator.lineno for decorator in decorators)])


def digest(*parts: str) -> str:
    hashed = hashlib.sha256()
    for part in parts:
        hashed.update(part.encode("utf-8", errors="replace") + b"\0")
    return hashed.hexdigest()


def fingerprints(root: Path) -> dict[str, str]:
    """Each exercise's fingerprint: what its public tests' results depend on."""
    exercise_modules = set(EXERCISE_FILES)
    own: dict[str, str] = {}  # exercise id -> the source of its function ("" if missing)
    shared = [sys.version]
    for path in sorted((root / "tenxor").rglob("*.py")):
        relative = path.relative_to(root).as_posix()
        source = path.read_text(encoding="utf-8", errors="replace")
        if relative in exercise_modules:
            functions, source = functions_and_rest(source)
            for item in CATALOG:
                if item.path == relative:
                    own[item.id] = functions.pop(item.function, "")
            source += "".join(functions[name] for name in sorted(functions))
        shared += [relative, source]
    for folder in TEST_FOLDERS:
        for path in sorted((root / folder).glob("*.py")):
            shared += [path.name, path.read_text(encoding="utf-8", errors="replace")]
    common = digest(*shared)
    return {
        item.id: digest(common, *(own[e] for e in sorted({item.id} | prerequisites(item.id))))
        for item in CATALOG
    }


def recalled(root: Path, now: dict[str, str]) -> dict[str, list[Result]]:
    """The remembered results of every exercise whose fingerprint is still `now`'s."""
    try:
        stored = json.loads((root / REMEMBERED_FILE).read_text(encoding="utf-8"))
        return {
            exercise_id: [Result(*row) for row in entry["results"]]
            for exercise_id, entry in stored.items()
            if now.get(exercise_id) == entry["fingerprint"] and entry["results"]
        }
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return {}


def settled(results: list[Result]) -> bool:
    """Whether results are the same in every run of the same code: none stopped or unrun."""
    return bool(results) and all(
        r.outcome in ("passed", "failed", "skipped") and not r.timed_out for r in results
    )


def remember(root: Path, prints: dict[str, str], results: dict[str, list[Result]]) -> None:
    """Remember the results of some exercises under the fingerprints their run started with
    (written whole, then renamed; a folder that cannot be written is left as it is)."""
    try:
        stored = json.loads((root / REMEMBERED_FILE).read_text(encoding="utf-8"))
        stored = stored if isinstance(stored, dict) else {}
    except (OSError, ValueError):
        stored = {}
    for exercise_id, found in results.items():
        if not settled(found):
            continue
        rows = [[r.test, r.exercise, r.outcome, r.message[:500], r.unfinished] for r in found]
        stored[exercise_id] = {"fingerprint": prints[exercise_id], "results": rows}
    with contextlib.suppress(OSError):
        write_atomically(root / REMEMBERED_FILE, json.dumps(stored))
