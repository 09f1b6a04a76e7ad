"""The warm worker behind `check()`: a Python process that keeps pytest, hypothesis and NumPy
imported, and forks a fresh child to run the tests of each check.

It runs as a script (see `warm.py`, which starts it) and never imports `tenxor` or the tests
itself, so every child imports the learner's files as they are at that moment (upstream.py,
which names the plugin it warms up, and lifeline.py, which bounds its children, it loads by
their paths). A child runs pytest in-process with the course's plugins, writes its events to
the file the request names (as `tenxor.course.engine.runner` does) and its printed output to
another, and exits; the worker then says how it ended.

The notebook's worker reads one request per line on its standard input and answers on the
channel it was given; the shell's worker (`--socket`) takes one request per connection on a
Unix socket and answers on it. Answers are JSON lines: {"child": pid} once the child runs,
then {"ended": pid, "code": n} (n < 0: killed by signal -n), with the time of the fork and
the child's CPU seconds. The end of its input ends the notebook's worker; the shell's ends
when asked to ({"stop": true}) or after a while without a request.
"""

from __future__ import annotations

import ast
import contextlib
import gc
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import socket
import struct
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType
from typing import Any


def load_beside(name: str) -> ModuleType:
    """The engine's module `name` (upstream, lifeline), beside this file, loaded by its path:
    the worker never imports the tenxor package."""
    path = Path(__file__).with_name(f"{name}.py")
    spec = importlib.util.spec_from_file_location(f"tenxor_engine_{name}", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


HYPOTHESIS_PLUGIN = load_beside("upstream").HYPOTHESIS_PLUGIN
LIFELINE = load_beside("lifeline")  # limit_memory, die_with_parent
LOOK_AGAIN_SECONDS = 5.0  # how often the shell's worker looks whether it is still wanted
ALWAYS_IMPORTED = ("pytest", "hypothesis", "numpy", HYPOTHESIS_PLUGIN)
# The warm-up session: a test of each kind a check meets, so that pytest imports the
# modules it would otherwise import on a child's first use of them.
WARM_UP_TESTS = """\
import pytest
from hypothesis import given, settings, strategies as st

@pytest.mark.parametrize("n", [1, 2])
def test_parametrized(n):
    assert [n] * 3 == [n, n, n]

@settings(database=None, max_examples=5)
@given(st.lists(st.integers()))
def test_property(values):
    assert sorted(values) == sorted(values)

def test_failing_comparison():
    assert (1, 2, 3) == (1, 2, 4)

def test_raises():
    with pytest.raises(ValueError, match="x"):
        raise ValueError("x")
"""


def top_level_imports(path: Path) -> set[str]:
    """The absolute module names a Python file imports at its top level."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return set()
    names = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
    return names


def modules_to_warm(root: Path) -> list[str]:
    """The modules the course's tests and package import, other than the course's own."""
    files = [*sorted((root / "tests").glob("*.py")), *sorted((root / "tenxor").glob("*.py"))]
    found = set(ALWAYS_IMPORTED).union(*(top_level_imports(path) for path in files))
    own = ("tenxor", "tests", "__future__")
    return sorted(name for name in found if name.split(".")[0] not in own)


def warm_up(root: Path) -> None:
    """Import what the tests need and run one small pytest session, quietly."""
    for name in modules_to_warm(root):
        with contextlib.suppress(Exception):
            importlib.import_module(name)
    import pytest

    with tempfile.TemporaryDirectory(prefix="tenxor-warm-") as folder:
        (Path(folder) / "test_warm_up.py").write_text(WARM_UP_TESTS, encoding="utf-8")
        options = ["-q", "-p", "no:cacheprovider", "-p", HYPOTHESIS_PLUGIN]
        options += ["--tb=short", "-W", "ignore"]
        with contextlib.suppress(BaseException):
            pytest.main([folder, *options])
        sys.modules.pop("test_warm_up", None)


def use_the_tree(root: str) -> None:
    """Make `import tenxor` and `import tests` find the tree at `root`, and nothing else (the
    worker started without the finders of an editable install: see warm.START)."""
    sys.path[:] = [root, *(p for p in sys.path if p not in ("", root))]
    sys.path_importer_cache.clear()
    os.chdir(root)


class SourceOnlyLoader(importlib.machinery.SourceFileLoader):
    """Loads a module by compiling its source, never from a cached .pyc (which is trusted by
    its source's size and modification second, and so can miss an edit saved within the same
    second as the one before)."""

    def get_code(self, fullname: str) -> Any:
        return self.source_to_code(self.get_data(self.path), self.path)


class FromSource(importlib.abc.MetaPathFinder):
    """Finds the modules a learner edits and loads them with SourceOnlyLoader."""

    def __init__(self, names: list[str]) -> None:
        self.names = set(names)

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name not in self.names:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is not None and spec.origin and spec.origin.endswith(".py"):
            spec.loader = SourceOnlyLoader(name, spec.origin)
        return spec


def run_child(request: dict[str, Any], channel: int) -> None:
    """In the forked child: limit memory, send output to the request's file, run pytest, exit."""
    code = 70
    try:
        os.setpgid(0, 0)
        LIFELINE.die_with_parent()
        os.close(channel)
        output = os.open(request["output"], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        quiet = os.open(os.devnull, os.O_RDONLY)
        os.dup2(quiet, 0)
        os.dup2(output, 1)
        os.dup2(output, 2)
        LIFELINE.limit_memory(request["memory_mb"])
        os.environ.update(request["environment"])
        use_the_tree(request["root"])
        sys.meta_path.insert(0, FromSource(request["fresh_modules"]))
        # pytest keeps the test files it rewrote, as a run in a shell does.
        sys.dont_write_bytecode = False
        import pytest

        code = pytest.main(request["args"])
    except BaseException:  # noqa: BLE001 - whatever happened, the child must exit here
        import traceback

        traceback.print_exc()
    finally:
        with contextlib.suppress(BaseException):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(int(code))


def answer(channel: int, **message: Any) -> None:
    os.write(channel, (json.dumps(message) + "\n").encode("utf-8"))


def run_one(request: dict[str, Any], channel: int, *others: int) -> None:
    """Fork a child for one request, answer when it runs and when it has ended. The child
    closes the channel and `others` (descriptors only the worker needs)."""
    forked = time.time()
    pid = os.fork()
    if pid == 0:
        for descriptor in others:
            os.close(descriptor)
        run_child(request, channel)
    answer(channel, child=pid, forked=forked, worker=os.getpid())
    _, status, usage = os.wait4(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    answer(channel, ended=pid, code=code, cpu=usage.ru_utime + usage.ru_stime)


def serve(channel: int) -> None:
    """Run one child per request line until the input ends."""
    for line in sys.stdin:
        if line.strip():
            run_one(json.loads(line), channel)


def same_user(connection: socket.socket) -> bool:
    """Whether the process at the other end of a Unix socket runs as this process's user."""
    credentials = connection.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12)
    _, uid, _ = struct.unpack("3i", credentials)
    return uid == os.getuid()


def owns_socket(address: str, socket_inode: int) -> bool:
    """Whether the socket at `address` is still this worker's (not removed, nor replaced by
    another worker's)."""
    try:
        return os.stat(address).st_ino == socket_inode
    except OSError:
        return False


def still_wanted(root: str, address: str, socket_inode: int) -> bool:
    """Whether the shell's worker should go on: its course folder is there, and so is its
    own socket."""
    return os.path.isdir(root) and owns_socket(address, socket_inode)


def serve_socket(root: str, address: str, idle_seconds: float) -> None:
    """Answer one request per connection on the Unix socket at `address` (a request
    {"stop": true} ends the worker), until none comes for `idle_seconds` or the course
    folder at `root` or the socket is gone."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(address)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(address)
    server.listen(8)
    server.settimeout(min(LOOK_AGAIN_SECONDS, idle_seconds))
    inode, last = os.stat(address).st_ino, time.monotonic()
    try:
        while True:
            try:
                connection, _ = server.accept()
            except TimeoutError:
                idle = time.monotonic() - last > idle_seconds
                if idle or not still_wanted(root, address, inode):
                    return
                continue
            last = time.monotonic()
            with connection:
                connection.settimeout(10.0)
                line = connection.makefile("rb").readline() if same_user(connection) else b""
                request = json.loads(line) if line.strip() else {}
                if request.get("stop"):
                    return
                if request:
                    connection.settimeout(None)
                    run_one(request, connection.fileno(), server.fileno())
    finally:
        if owns_socket(address, inode):
            with contextlib.suppress(OSError):
                os.unlink(address)


def main() -> None:
    """Warm up, then serve: the notebook's worker on its pipes (it takes the answer channel
    off standard output and dies with the notebook), the shell's on a socket (`--socket
    ADDRESS IDLE_SECONDS`: it outlives the command that started it, for the next one)."""
    root, *shared = sys.argv[1:]
    if not shared:
        LIFELINE.die_with_parent()
        channel = os.dup(1)
        os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
    sys.path[:] = [path for path in sys.path if path not in ("", os.getcwd())]
    warm_up(Path(root))
    # What the worker holds now stays as it is: the collector of a child then only looks at
    # the objects that child makes.
    gc.collect()
    gc.freeze()
    if shared:
        serve_socket(root, shared[1], float(shared[2]))
        return
    answer(channel, ready=True)
    serve(channel)


if __name__ == "__main__":
    main()
