"""Before grading without an allowlisted view: nothing a worker's user can read gives the
course away.

Where bubblewrap cannot make namespaces, a worker sees the machine's file system as its own
user would. Grading then changes no file's mode; it checks, as that user, that

    the course, the submissions and the output     cannot be opened at all, and
    no file it can read, anywhere                  holds a solution region's text, a hidden
                                                   test's text or a solved function's bytecode

and refuses to start, naming the first file that does. The files looked into are those that
could hold the course: the exercise modules and hidden test files by name (in any folder, the
virtual environments' site-packages among them), their bytecode, and every zip or wheel
holding one. The check runs the way a worker starts: as root it takes a handle on each folder
its imports come from, then becomes the worker's user and walks `/` and those folders.

    secrets = course_secrets(course)                        # as the instructor
    why = exposure(secrets, uid, [course, *closed], tree)   # None, or what it could read
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import json
import marshal
import os
import stat
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import CodeType

from instructor.entry_points import EXPOSURE, boot_script

SKIPPED = ("/proc", "/sys", "/dev")  # the kernel's own; /dev/shm is walked on its own
SHARED_MEMORY = ("/dev/shm", "/dev/mqueue")
FILE_CAP = 4 * 1024 * 1024  # bytes read of one file or archive member
ARCHIVES = (".zip", ".whl")
SHORTEST = 24  # characters of a secret without its whitespace: shorter ones say too little


def compact(text: str) -> str:
    """`text` without whitespace: a copy is found however it was indented or wrapped."""
    return "".join(text.split())


@dataclass(frozen=True)
class Secrets:
    """What no worker's user may be able to read: texts (compacted) and bytecode, each with
    what it is, and the names of the files that could hold them."""

    texts: dict[str, str]
    bytecode: dict[str, str]  # "<module file>:<a solved function's bytecode digest>" -> what
    names: frozenset[str]  # .py file names; their bytecode is <stem>.<tag>.pyc

    def to_json(self) -> str:
        return json.dumps([self.texts, self.bytecode, sorted(self.names)])

    @classmethod
    def from_json(cls, text: str) -> Secrets:
        texts, bytecode, names = json.loads(text)
        return cls(texts, bytecode, frozenset(names))

    def held_in_text(self, text: str) -> str | None:
        """What secret the source `text` holds, if any."""
        text = compact(text)
        return next((what for secret, what in self.texts.items() if secret in text), None)

    def held_in_bytecode(self, source: str, data: bytes) -> str | None:
        """What solved function of the module file `source` its .pyc file `data` holds, if
        any (bytecode another interpreter version wrote is not this one's to run)."""
        if data[:4] != importlib.util.MAGIC_NUMBER:
            return None
        try:
            code = marshal.loads(data[16:])
        except (ValueError, EOFError, TypeError):
            return None
        if not isinstance(code, CodeType):
            return None
        found = (f"{source}:{bytecode_digest(c)}" for c in code_objects(code))
        return next((self.bytecode[f] for f in found if f in self.bytecode), None)

    def held_in(self, name: str, data: bytes) -> str | None:
        """What secret a file named `name` holding `data` holds, if any."""
        if name.endswith(".pyc"):
            return self.held_in_bytecode(source_of(name), data)
        return self.held_in_text(data.decode("utf-8", errors="replace"))

    def may_hold(self, name: str) -> bool:
        """Whether a file of this name could be one of the course's, or its bytecode."""
        return (source_of(name) if name.endswith(".pyc") else name) in self.names


def source_of(bytecode_name: str) -> str:
    """The module file a .pyc file was compiled from: storage.cpython-311.pyc -> storage.py."""
    return bytecode_name.split(".", 1)[0] + ".py"


def code_objects(code: CodeType) -> Iterator[CodeType]:
    """`code` and every code object within it."""
    yield code
    for constant in code.co_consts:
        if isinstance(constant, CodeType):
            yield from code_objects(constant)


def bytecode_digest(code: CodeType) -> str:
    """What tells one compiled function from another: its instructions and the names and
    variables they use."""
    parts = code.co_code + repr((code.co_names, code.co_varnames)).encode()
    return hashlib.sha256(parts).hexdigest()


def functions_code(source: str) -> dict[str, str]:
    """Each named function's qualified name in `source` -> its bytecode digest (comprehensions,
    lambdas and the module's own code are alike in too many programs to tell them apart)."""
    compiled = compile(source, "<course>", "exec")
    codes = [code for code in code_objects(compiled) if not code.co_name.startswith("<")]
    return {code.co_qualname: bytecode_digest(code) for code in codes}


def hidden_test_texts(path: Path) -> Iterator[str]:
    """Each top-level definition and assignment of a hidden test file, with its decorators
    (its imports are the public tests' too)."""
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    for node in ast.parse(text).body:
        if isinstance(node, (ast.Import, ast.ImportFrom, ast.Expr)):
            continue
        first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
        yield "\n".join(lines[first - 1 : node.end_lineno])


def region_texts(path: Path) -> Iterator[tuple[str, str]]:
    """The text of each solution region of `path`, and which exercise it solves."""
    from instructor.authoring.regions import find_regions

    lines = path.read_text(encoding="utf-8").splitlines()
    for region in find_regions(path):
        body = "\n".join(lines[region.begin : region.end - 1])
        yield body, f"the solution of exercise {region.exercise_id}"


def solved_functions(path: Path) -> dict[str, str]:
    """The bytecode digest of each function of `path` as its solution regions fill it in, and
    what it is."""
    from instructor.authoring.release import solved_source

    return {
        f"{path.name}:{code}": f"the solved {name} of {path.name}, as bytecode"
        for name, code in functions_code(solved_source(path)).items()
    }


def course_secrets(course: Path) -> Secrets:
    """The secrets of the course at `course`: every solution region's text, the bytecode of
    every function a region solves, and every top-level definition of the hidden tests; none
    shorter than SHORTEST characters, and none the release's package or public tests hold
    too (as text or as bytecode)."""
    from instructor.authoring.release import stubbed_source

    package = sorted((course / "tenxor").rglob("*.py"))
    sources = [*map(stubbed_source, package)]
    sources += [
        path.read_text(encoding="utf-8") for path in sorted((course / "tests").glob("*.py"))
    ]
    released = compact("".join(sources))
    released_code = {code for source in sources for code in functions_code(source).values()}
    texts, bytecode, names = {}, {}, set()
    for path in package:
        found = {compact(text): what for text, what in region_texts(path)}
        if found:
            texts |= found
            bytecode |= solved_functions(path)
            names.add(path.name)
    for path in sorted((course / "tests" / "hidden").glob("*.py")):
        found = {
            compact(text): f"hidden test text of {path.name}" for text in hidden_test_texts(path)
        }
        texts |= found
        names |= {path.name} if found else set()
    kept = {secret: what for secret, what in texts.items()
            if len(secret) >= SHORTEST and secret not in released}  # fmt: skip
    solved = {key: what for key, what in bytecode.items()
              if key.split(":")[1] not in released_code}  # fmt: skip
    return Secrets(kept, solved, frozenset(names))


def files_below(roots: list[str]) -> Iterator[os.DirEntry]:
    """Every regular file this process can list below `roots`, links not followed (the
    kernel's own folders left out)."""
    todo = list(reversed(roots))
    while todo:
        try:
            with os.scandir(todo.pop()) as entries:
                listed = list(entries)
        except OSError:
            continue
        for entry in listed:
            try:
                if entry.is_dir(follow_symlinks=False):
                    if entry.path not in SKIPPED:
                        todo.append(entry.path)
                elif entry.is_file(follow_symlinks=False):
                    yield entry
            except OSError:
                continue


def read_capped(path: str) -> bytes | None:
    """Up to FILE_CAP bytes of a regular file, without following a link (None if this
    process may not read it)."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(descriptor, "rb") as stream:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            return None
        return stream.read(FILE_CAP)


def held_in_archive(secrets: Secrets, path: str) -> str | None:
    """What secret a member of the zip or wheel at `path` holds, if any."""
    try:
        with zipfile.ZipFile(path) as archive:
            for member in archive.infolist():
                name = member.filename.rsplit("/", 1)[-1]
                if secrets.may_hold(name) and member.file_size <= FILE_CAP:
                    held = secrets.held_in(name, archive.read(member))
                    if held:
                        return f"{held}, in its member {member.filename}"
    except (OSError, zipfile.BadZipFile, ValueError, RuntimeError, EOFError):
        return None
    return None


def first_exposed(secrets: Secrets, roots: list[str]) -> tuple[str, str] | None:
    """The first file below `roots` this process can read that holds a secret, and what."""
    for entry in files_below(roots):
        if secrets.may_hold(entry.name):
            data = read_capped(entry.path)
            held = secrets.held_in(entry.name, data) if data is not None else None
        elif entry.name.endswith(ARCHIVES):
            held = held_in_archive(secrets, entry.path)
        else:
            continue
        if held:
            return entry.path, held
    return None


def openable(folders: list[str]) -> str | None:
    """The first of `folders` this process can list or pass through."""
    return next((f for f in folders if os.access(f, os.R_OK) or os.access(f, os.X_OK)), None)


def check(
    closed: list[str], secrets: Secrets, handles: dict[str, int], roots: list[str] | None
) -> str | None:
    """As the worker's user: why grading may not start (None when nothing is exposed), from
    a walk of `/` and the import folders (or of `roots` alone, when given)."""
    folder = openable(closed)
    if folder is not None:
        return (
            f"a worker's user can open {folder}; close it to other users "
            f"(chmod o-rwx {folder}) and grade again"
        )
    through = {f"/proc/self/fd/{handle}": folder for folder, handle in handles.items()}
    found = first_exposed(secrets, roots or ["/", *SHARED_MEMORY, *through])
    if found is None:
        return None
    path, held = found
    for handle, folder in through.items():  # the path by its name, not by its handle
        if path.startswith(handle + "/"):
            path = folder + path[len(handle) :]
    return (
        f"a worker's user can read {path}, which holds {held}; close it to other users or "
        f"remove it, and grade again"
    )


def main(settings_json: str) -> None:
    """The check's own process: as root a handle on each folder a worker imports from, then
    the worker's user; prints its answer as JSON."""
    from instructor.sandbox import reachable
    from instructor.sandbox.os_calls import become

    settings = json.loads(settings_json)
    secrets = Secrets.from_json(sys.stdin.read())
    handles = reachable.hold(reachable.import_folders(outside=settings["tree"]))
    reachable.reroute(reachable.through_descriptors(handles))
    become(settings["uid"], settings["uid"])
    print(json.dumps(check(settings["closed"], secrets, handles, settings["roots"])))


def exposure(
    secrets: Secrets, uid: int, closed: list[Path], tree: Path, roots: list[Path] | None = None
) -> str | None:
    """Why grading may not start with workers as user `uid`, whose imports come from this
    interpreter: a folder of `closed` it can open, or a file it can read holding a secret
    (None when there is neither). `tree` holds this module, for the check's process; `roots`
    narrows the walk to those folders (the whole machine's when None)."""
    settings = {"uid": uid, "closed": [str(f) for f in closed], "tree": str(tree)}
    settings["roots"] = [str(root) for root in roots] if roots else None
    done = subprocess.run(
        [sys.executable, "-I", "-c", boot_script(EXPOSURE), json.dumps(settings)],
        input=secrets.to_json(),
        capture_output=True,
        text=True,
        cwd="/",
    )
    if done.returncode != 0:
        return f"the check of what a worker's user can read failed: {done.stderr[-2000:]}"
    return json.loads(done.stdout)
