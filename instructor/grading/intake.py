"""Intake: the exercise modules taken from a submission, and what became of its files.

Only the exercise modules are taken, found at their place in the tree, in a tenxor/ folder at
any depth, or loose at the top. A module that is missing, a link (symbolic or hard), not a
regular file, too big, not UTF-8 or does not compile is not used; one that does not import is
set aside once the judge has said so. A submission is walked without following links and to
a bounded depth, and a module is read from the descriptor that was checked, up to a cap:
whatever a folder holds (FIFOs, devices, links out of it, folders nested a thousand deep),
intake neither hangs, nor fails, nor reads anything outside it. A folder that holds several
submissions (submissions_within) is not one to take modules from.
"""

from __future__ import annotations

import errno
import hashlib
import importlib.util
import marshal
import os
import shutil
import stat
import threading
from dataclasses import dataclass, field
from pathlib import Path
from types import CodeType

from instructor.authoring.release import compiled_files
from tenxor.course.catalog import EXERCISE_FILES

EXERCISE_MODULES = EXERCISE_FILES  # what is taken from a submission: these files
MAX_MODULE_BYTES = 1_000_000
# The work every submission costs, whatever it holds, in the unit of work_of (bytes of code
# beyond the stubs): about a fifth of what a complete submission weighs beyond them.
STUDENT_WORK = 4_000
# One compile at a time in this process: students are taken in threads, and CPython 3.11
# keeps the AST's recursion depth in state its threads share (two compiles at once end one
# of them in "SystemError: AST constructor recursion depth mismatch").
COMPILING = threading.Lock()


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


MAX_DEPTH = 16  # folders below a submission's top that intake looks into
MAX_ENTRIES = 20_000  # files and folders of a submission that intake looks at
KINDS = {stat.S_IFREG: "file", stat.S_IFLNK: "symbolic link", stat.S_IFIFO: "FIFO",
         stat.S_IFCHR: "character device", stat.S_IFBLK: "block device",
         stat.S_IFSOCK: "socket"}  # fmt: skip


def entries_of(folder: Path) -> dict[str, str]:
    """Every entry of a submission that is not a folder, relative to it, with its kind
    ("file", "symbolic link", "FIFO", ...): walked without following links, at most
    MAX_DEPTH folders down and MAX_ENTRIES entries in all."""
    found: dict[str, str] = {}
    todo, seen = [(folder, "", 0)], 0
    while todo:
        path, prefix, depth = todo.pop()
        try:
            entries = sorted(os.scandir(path), key=lambda entry: entry.name)
        except OSError:
            continue
        for entry in entries:
            seen += 1
            if seen > MAX_ENTRIES:
                return found
            try:
                mode = entry.stat(follow_symlinks=False).st_mode
            except OSError:
                continue
            relative = prefix + entry.name
            if stat.S_ISDIR(mode):
                if depth < MAX_DEPTH:
                    todo.append((Path(entry.path), relative + "/", depth + 1))
            else:
                found[relative] = KINDS.get(stat.S_IFMT(mode), "special file")
    return dict(sorted(found.items()))


def locate(entries: dict[str, str], module: str) -> str | None:
    """Where a submission keeps an exercise module, among its `entries`: at its place in the
    tree, in a tenxor/ folder at any depth (the shallowest), or loose at the top."""
    if module in entries:
        return module
    nested = [name for name in entries if name.endswith("/" + module)]
    if nested:
        return min(nested, key=lambda name: (name.count("/"), name))
    loose = Path(module).name
    return loose if loose in entries else None


def at_top(entries: dict[str, str], module: str) -> bool:
    """Whether a folder's `entries` hold an exercise module at its top: at its place in the
    tree (tenxor/views.py) or loose (views.py)."""
    return module in entries or Path(module).name in entries


def submissions_within(entries: dict[str, str]) -> list[str]:
    """The folders at the top of a folder (its `entries`, from entries_of) that each look like
    a submission of their own, when the folder holds several submissions rather than being
    one: no exercise module at its top, and one exercise module that intake would take from
    two or more of those folders. Empty for a folder that is one submission, e.g. one with
    its modules at its top, in tenxor/, or nested in a single folder (my-work/tenxor/)."""
    if any(at_top(entries, module) for module in EXERCISE_MODULES):
        return []
    inside: dict[str, dict[str, str]] = {}
    for name, kind in entries.items():
        folder, slash, rest = name.partition("/")
        if slash:
            inside.setdefault(folder, {})[rest] = kind
    holding = {
        folder: {module for module in EXERCISE_MODULES if locate(held, module)}
        for folder, held in inside.items()
    }
    shared = [m for m in EXERCISE_MODULES if sum(m in found for found in holding.values()) > 1]
    return sorted(folder for folder, found in holding.items() if found) if shared else []


def read_module(folder: Path, relative: str, module: str) -> bytes | str:
    """The bytes of a submitted module, or why it cannot be taken: it is read only as a
    regular file with one name, up to MAX_MODULE_BYTES, opened one folder at a time without
    following a link anywhere, and checked on the very descriptor it is read from."""
    parts = relative.split("/")
    descriptors = [os.open(folder, os.O_RDONLY | os.O_DIRECTORY)]
    try:
        for part in parts[:-1]:
            flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
            descriptors.append(os.open(part, flags, dir_fd=descriptors[-1]))
        flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK  # a FIFO must not block
        descriptors.append(os.open(parts[-1], flags, dir_fd=descriptors[-1]))
        status = os.fstat(descriptors[-1])
        if not stat.S_ISREG(status.st_mode):
            kind = KINDS.get(stat.S_IFMT(status.st_mode), "special file")
            return f"{module} is a {kind}, not a file; submit the file itself"
        if status.st_nlink != 1:
            return f"{module} is a hard link ({status.st_nlink} names); submit the file itself"
        with os.fdopen(descriptors.pop(), "rb") as stream:
            data = stream.read(MAX_MODULE_BYTES + 1)
    except OSError as error:
        if error.errno == errno.ELOOP:
            return f"{module} is a symbolic link; submit the file itself"
        return f"{module} cannot be read: {error.strerror}"
    finally:
        for descriptor in descriptors:
            os.close(descriptor)
    if len(data) > MAX_MODULE_BYTES:
        return f"{module} is larger than the {MAX_MODULE_BYTES} bytes a module may have"
    return data


def compiled(module: str, data: bytes) -> CodeType | str:
    """A module's code, compiled as importing it compiles it; or why its source cannot be
    used as it is (not UTF-8, a syntax error)."""
    try:
        data.decode("utf-8-sig")  # Python reads a byte-order mark too, as some editors save one
    except UnicodeDecodeError as error:
        return f"{module} is not valid UTF-8 (byte {data[error.start]:#04x} at {error.start})"
    try:
        with COMPILING:
            return compile(data, module, "exec", dont_inherit=True)
    except SyntaxError as error:
        return f"{module} has a syntax error at line {error.lineno}: {error.msg}"
    except ValueError as error:
        return f"{module} cannot be compiled: {error}"


def cache_bytecode(path: Path, code: CodeType) -> None:
    """Write `code`, compiled from the module at `path`, where Python looks for that module's
    bytecode, stamped with the module's time and size as Python checks them (PEP 552): the
    workers that import the module run it without compiling it again."""
    source = path.stat()
    stamp = [0, int(source.st_mtime), source.st_size]  # flags 0: checked by time and size
    header = importlib.util.MAGIC_NUMBER + b"".join(
        (field & 0xFFFFFFFF).to_bytes(4, "little") for field in stamp
    )
    cached = Path(importlib.util.cache_from_source(str(path)))
    cached.parent.mkdir(exist_ok=True)
    cached.write_bytes(header + marshal.dumps(code))


def put(tree: Path, modules: dict[str, bytes]) -> None:
    """Write modules (path relative to the tree -> source) into a tree, dropping the bytecode
    cached for them there (the release's, which a module written in the same second with
    the stub's size would otherwise pass for)."""
    for module, data in modules.items():
        path = tree / module
        path.write_bytes(data)
        for cached in compiled_files(path):
            cached.unlink()


def assemble(release_tree: Path, folder: Path, package: Path) -> Assembly:
    """Put the submission's usable exercise modules into a copy of the release's package
    (where every exercise is a stub), with the bytecode of the modules it keeps (copied
    with their times, which that bytecode is checked against) and of those it takes
    (compiled here, where each is checked)."""
    shutil.copytree(release_tree / "tenxor", package / "tenxor")
    assembly, submitted, used = Assembly(package), {}, set()
    codes: dict[str, CodeType] = {}
    entries = entries_of(folder)
    for module in EXERCISE_MODULES:
        found = locate(entries, module)
        if found is None:
            assembly.missing.append(module)
            continue
        used.add(found)
        data = read_module(folder, found, module)
        code = data if isinstance(data, str) else compiled(module, data)
        if isinstance(code, str):
            assembly.broken[module] = code
        else:
            submitted[module], codes[module] = data, code
    assembly.stubs = {module: (package / module).read_bytes() for module in submitted}
    assembly.sources = submitted
    put(package, submitted)
    for module, code in codes.items():
        cache_bytecode(package / module, code)
    assembly.taken = sorted(submitted)
    assembly.ignored = [name for name in entries if name not in used]
    return assembly


def work_of(folder: Path, stubs: dict[str, int]) -> int:
    """What grading a submission asks of the judges, in bytes: the code its exercise modules
    hold beyond the release's stubs (`stubs`: each module's size as a stub), and the
    STUDENT_WORK every submission costs. Sizes are read from the files' entries alone."""
    entries, written = entries_of(folder), 0
    for module in EXERCISE_MODULES:
        found = locate(entries, module)
        try:
            status = os.lstat(folder / found) if found else None
        except OSError:
            status = None
        if status and stat.S_ISREG(status.st_mode):
            written += max(0, min(status.st_size, MAX_MODULE_BYTES) - stubs[module])
    return STUDENT_WORK + written


def module_digests(folder: Path) -> dict[str, str]:
    """A fingerprint of each exercise module a submission holds (or of why it cannot be
    taken), by the module's file: {"tenxor/storage.py": "3f9c...", ...}."""
    entries, digests = entries_of(folder), {}
    for module in EXERCISE_MODULES:
        found = locate(entries, module)
        data = read_module(folder, found, module) if found else "missing"
        data = data.encode("utf-8", "surrogateescape") if isinstance(data, str) else data
        digests[module] = hashlib.sha256(data).hexdigest()
    return digests


def submission_digest(folder: Path) -> str:
    """A fingerprint of the exercise modules a submission holds (and why any cannot be
    taken)."""
    return modules_digest(module_digests(folder))


def modules_digest(digests: dict[str, str]) -> str:
    """One fingerprint of a submission's modules, from each one's (module_digests)."""
    return hashlib.sha256("".join(f"{m}\0{d}\0" for m, d in digests.items()).encode()).hexdigest()
