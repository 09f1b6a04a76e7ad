"""Fixture submissions for the grading tests: each one starts from a complete submission (the
reference exercise modules) and breaks it in one way, and says which chapter-1 exercises it
must lose and what the student must be told."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from instructor.authoring.regions import find_regions
from instructor.authoring.release import LOCAL_ONLY, stubbed_source, write_tree
from instructor.grading import DEFAULT_CREDIT, JUDGE_SETTINGS, grading_options
from tenxor.course.catalog import BY_ID, CATALOG, EXERCISE_FILES, stub_line
from tenxor.course.engine import run_tests

ROOT = Path(__file__).resolve().parents[2]
MODULES = EXERCISE_FILES
CHAPTER_1 = [item.id for item in CATALOG if item.chapter.number == 1]


def complete_submission(folder: Path) -> None:
    """A submission holding the reference version of every exercise module."""
    for module in MODULES:
        target = folder / module
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes((ROOT / module).read_bytes())


def copy_of_reference(destination: Path) -> Path:
    """A copy of the instructor's course, solutions and hidden tests included."""
    write_tree(ROOT, destination, LOCAL_ONLY, rewrite=lambda path: path.read_text(), bytecode=True)
    return destination


def replace_region(path: Path, exercise_id: str, body: str) -> None:
    """Replace the solution region of one exercise in a submitted module by `body`."""
    region = next(r for r in find_regions(path) if r.exercise_id == exercise_id)
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    new = [region.indent + line + "\n" for line in body.strip("\n").splitlines()]
    lines[region.begin - 1 : region.end] = new
    path.write_text("".join(lines), encoding="utf-8")


def in_region(exercise_id: str, body: str) -> Callable[[Path], None]:
    def edit(folder: Path) -> None:
        replace_region(folder / BY_ID[exercise_id].path, exercise_id, body)

    return edit


def appended(module: str, text: str) -> Callable[[Path], None]:
    def edit(folder: Path) -> None:
        with (folder / module).open("a", encoding="utf-8") as stream:
            stream.write("\n" + text + "\n")

    return edit


def written(relative: str, data: bytes | str) -> Callable[[Path], None]:
    def edit(folder: Path) -> None:
        target = folder / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(data, str):
            target.write_text(data, encoding="utf-8")
        else:
            target.write_bytes(data)

    return edit


def recoded(module: str, change: Callable[[bytes], bytes]) -> Callable[[Path], None]:
    """The module's bytes passed through `change`, as an editor might save them."""

    def edit(folder: Path) -> None:
        (folder / module).write_bytes(change((folder / module).read_bytes()))

    return edit


def indented_with_tabs(data: bytes) -> bytes:
    """Every four spaces of indentation as one tab."""
    lines = data.decode("utf-8").splitlines(keepends=True)
    tabbed = []
    for line in lines:
        body = line.lstrip(" ")
        tabbed.append(
            "\t" * ((len(line) - len(body)) // 4) + " " * ((len(line) - len(body)) % 4) + body
        )
    return "".join(tabbed).encode("utf-8")


def removed(*modules: str) -> Callable[[Path], None]:
    def edit(folder: Path) -> None:
        for module in modules:
            (folder / module).unlink()

    return edit


def stubbed(module: str) -> Callable[[Path], None]:
    """The module as the release gives it: every exercise of it not started."""

    def edit(folder: Path) -> None:
        (folder / module).write_text(stubbed_source(ROOT / module), encoding="utf-8")

    return edit


def linked_to_solution(module: str) -> Callable[[Path], None]:
    def edit(folder: Path) -> None:
        (folder / module).unlink()
        os.symlink(ROOT / module, folder / module)

    return edit


PASS_EVERYTHING = """\
import pytest

@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    report.outcome = "passed"
    report.longrepr = None
"""
FAKE_TESTS = """\
import pytest

@pytest.mark.exercise("1.1")
def test_numel():
    assert True
"""


@dataclass(frozen=True)
class Fixture:
    """A submission, the chapter-1 exercises it must lose, and a phrase its report names."""

    name: str
    edits: tuple[Callable[[Path], None], ...]
    lost: tuple[str, ...]
    says: str
    plain_pytest: bool = False  # its true score is what plain pytest gives it

    def build(self, folder: Path) -> Path:
        complete_submission(folder)
        for edit in self.edits:
            edit(folder)
        for module in MODULES:  # where the red team's code finds its own folder
            path = folder / module
            if (
                path.is_file()
                and not path.is_symlink()
                and b"SUBMISSION_FOLDER" in path.read_bytes()
            ):
                text = path.read_text(encoding="utf-8")
                path.write_text(text.replace("SUBMISSION_FOLDER", repr(str(folder))), "utf-8")
        return folder


def plain_pytest_scores(
    fixture: Fixture, folder: Path, selection: list[str], profile: str
) -> dict[str, float]:
    """The points plain pytest gives each exercise of `selection` in a submission, each
    exercise on its own: the fixture's edits made to a copy of the course (so the edited
    exercises run among the instructor's versions of all they build on), the public and
    hidden tests run there as pytest runs them, scored by the default credit rule, counted
    here: each test function (its node id before any "[") is worth an equal share of its
    exercise's points, and earns it only when all its cases pass."""
    assert DEFAULT_CREDIT == "functions", "count these scores by the new default rule"
    tree = copy_of_reference(folder / "course")
    for edit in fixture.edits:
        edit(tree)
    options = [f"--ignore={tree / 'tests' / 'tooling'}", "-p", "_hypothesis_pytestplugin"]
    options += grading_options(selection)
    run = run_tests(tree, options, profile=profile, settings=JUDGE_SETTINGS)
    scores = {}
    for exercise_id in selection:
        functions: dict[str, bool] = {}
        for result in run.results.values():
            if result.exercise == exercise_id:
                name = result.test.split("[")[0]
                functions[name] = functions.get(name, True) and result.passed
        passed = sum(functions.values())
        scores[exercise_id] = BY_ID[exercise_id].points * passed / len(functions)
    return scores


STORAGE = "tenxor/storage.py"
FIXTURES = (
    Fixture("complete", (), (), "Graded modules: tenxor/broadcasting.py"),
    Fixture("half-done", (in_region("1.2", stub_line(BY_ID["1.2"], "")),), ("1.2",),
            "not done: it still raises NotImplementedError"),
    Fixture("wrong-byte-strides",  # the first failure is explained with its call
            (in_region("1.3", "return tuple(stride * itemsize + 1 for stride in strides)"),),
            ("1.3",), "  call:     byte_strides(strides=", plain_pytest=True),
    Fixture("not-started", (stubbed(STORAGE),), tuple(CHAPTER_1), "not done"),
    Fixture("infinite-loop", (in_region("1.1", "while True:\n    pass"),), ("1.1",),
            "CPU time"),
    Fixture("unbounded-recursion",
            (in_region("1.3", "return byte_strides(strides, itemsize)"),), ("1.3",),
            "RecursionError"),
    Fixture("memory-blow-up",
            (in_region("1.1", "blocks = []\nwhile True:\n    blocks.append(bytes(10**7))"),),
            ("1.1",), "memory limit"),
    Fixture("syntax-error-in-storage", (appended(STORAGE, "def broken(:"),), tuple(CHAPTER_1),
            "tenxor/storage.py has a syntax error at line"),
    Fixture("syntax-error-elsewhere", (appended("tenxor/views.py", "def broken(:"),), (),
            "tenxor/views.py has a syntax error"),
    Fixture("exception-at-import", (appended(STORAGE, "raise RuntimeError('boom')"),),
            tuple(CHAPTER_1), "RuntimeError: boom"),
    Fixture("sys-exit-at-import", (appended(STORAGE, "import sys\nsys.exit(0)"),),
            tuple(CHAPTER_1), "importing it raised SystemExit"),
    Fixture("os-exit-at-import", (appended(STORAGE, "import os\nos._exit(0)"),),
            tuple(CHAPTER_1), "the worker ended (exit code 0)"),
    Fixture("sys-exit-in-function", (in_region("1.3", "import sys\nsys.exit(0)"),), ("1.3",),
            "SystemExit"),
    Fixture("os-exit-in-function", (in_region("1.1", "import os\nos._exit(0)"),), ("1.1",),
            "the worker ended (exit code 0)"),
    Fixture("planted-conftest",
            (stubbed(STORAGE), written("conftest.py", PASS_EVERYTHING),
             written("tests/conftest.py", PASS_EVERYTHING)),
            tuple(CHAPTER_1), "conftest.py"),
    Fixture("edited-tests",
            (stubbed(STORAGE), written("tests/test_storage.py", FAKE_TESTS)),
            tuple(CHAPTER_1), "tests/test_storage.py"),
    Fixture("prints-50-MB", (appended(STORAGE, "print('x' * 50_000_000)"),), (),
            "Graded modules: tenxor/broadcasting.py"),
    Fixture("missing-files", (removed(*[m for m in MODULES if m != STORAGE]),), (),
            "tenxor/views.py is missing"),
    Fixture("no-modules-at-all", (removed(*MODULES),), tuple(CHAPTER_1),
            "tenxor/storage.py is missing"),
    Fixture("not-utf-8", (written(STORAGE, b"def numel(shape):\n    return '\xff'\n"),),
            tuple(CHAPTER_1), "not valid UTF-8"),
    Fixture("symlink-to-the-solution", (linked_to_solution(STORAGE),), tuple(CHAPTER_1),
            "symbolic link"),
    Fixture("segfault-in-storage",
            (in_region("1.1", "import ctypes\nreturn ctypes.string_at(0)"),), ("1.1",),
            "crashed or hung the worker 2 times"),
    Fixture("recursion-past-the-c-stack",
            (in_region("1.3", "import sys\nsys.setrecursionlimit(10**8)\n"
                              "def deeper(n):\n    return deeper(n + 1) + 1\n"
                              "return deeper(0)"),), ("1.3",), "1.3"),
    Fixture("byte-order-mark", (recoded(STORAGE, lambda data: b"\xef\xbb\xbf" + data),), (),
            "Graded modules: tenxor/broadcasting.py"),
    Fixture("crlf-line-endings", (recoded(STORAGE, lambda data: data.replace(b"\n", b"\r\n")),),
            (), "Graded modules: tenxor/broadcasting.py"),
    Fixture("indented-with-tabs", (recoded(STORAGE, indented_with_tabs),), (),
            "Graded modules: tenxor/broadcasting.py"),
    Fixture("prints-5-MB-to-stderr-at-import",
            (appended(STORAGE, "import sys\nsys.stderr.write('x' * 5_000_000)"),), (),
            "Graded modules: tenxor/broadcasting.py"),
)  # fmt: skip


def replace_stub(folder: Path, exercise_id: str, body: str) -> None:
    """In a release, put `body` (lines without indentation) in place of an exercise's stub."""
    module = BY_ID[exercise_id].path
    region = next(r for r in find_regions(ROOT / module) if r.exercise_id == exercise_id)
    stub = stub_line(BY_ID[exercise_id], region.indent)
    text = (folder / module).read_text(encoding="utf-8")
    assert stub in text, f"exercise {exercise_id} is not a stub in {folder / module}"
    lines = "".join(region.indent + line + "\n" for line in body.strip("\n").splitlines())
    (folder / module).write_text(text.replace(stub, lines), encoding="utf-8")


def restore(folder: Path, exercise_id: str) -> None:
    """In a release, put the reference solution of one exercise back in place of its stub."""
    module = BY_ID[exercise_id].path
    region = next(r for r in find_regions(ROOT / module) if r.exercise_id == exercise_id)
    solution = (ROOT / module).read_text(encoding="utf-8").splitlines(keepends=True)
    body = "".join(
        line.removeprefix(region.indent) for line in solution[region.begin : region.end - 1]
    )
    replace_stub(folder, exercise_id, body)


# -- the red team: submissions that tamper with grading --------------------------------------
#
# Each knows what a submission can learn about its worker: its configuration (sys.argv[1])
# names the folder of the worker's own modules (the judges' tree outside bubblewrap), and,
# as a student who knows the course would, where the folders it must not see are: the course,
# the output and the submissions beside its own (which the fixture's build writes in for
# SUBMISSION_FOLDER). Each must score exactly what its exercises earn.

CONFIG = """\
import json, os, sys
config = json.loads(sys.argv[1])
base = os.path.dirname(os.path.dirname(SUBMISSION_FOLDER))
config["hidden"] = [os.path.join(base, "course"), config["tree"],
                    os.path.join(base, "grades"), os.path.join(base, "submissions")]
"""
PATCH_PYTEST = """\
try:
    import _pytest.python
    _pytest.python.Function.runtest = lambda self: None
except Exception:
    pass
"""
REWRITE_EVERYTHING = (
    CONFIG
    + """\
for root in [config["tree"], *config["hidden"]]:
    for folder, _, names in os.walk(root):
        for name in names:
            try:
                with open(os.path.join(folder, name), "w") as stream:
                    stream.write("raise SystemExit(0)")
            except OSError:
                pass
"""
)
FORGE_RESULTS = (
    CONFIG
    + """\
for root in [*config["hidden"], ".", "/tmp", "/dev/shm"]:
    for name in ("results.json", "complete/results.json", "gradebook.csv", "reports.jsonl"):
        try:
            with open(os.path.join(root, name), "w") as stream:
                stream.write('{"score": 100, "tests": []}')
        except OSError:
            pass
"""
)
ALWAYS_EQUAL_INT = """\
class Liar(int):
    def __eq__(self, other):
        return True
    __hash__ = int.__hash__
return Liar(-1)
"""
ALWAYS_EQUAL_TUPLE = """\
class Liar(tuple):
    def __eq__(self, other):
        return True
    __hash__ = tuple.__hash__
return Liar(("anything",))
"""
CUSTOM_RESULT = """\
class Anything:
    def __eq__(self, other):
        return True
    def __index__(self):
        return 0
    def __int__(self):
        return 0
return Anything()
"""
READ_HIDDEN_INTO_ERROR = (
    CONFIG
    + """\
texts = []
for root in config["hidden"][:2]:
    for relative in ("tests/hidden/test_storage_strides_hidden.py",
                     "judge/tests/hidden/test_storage_strides_hidden.py"):
        try:
            with open(os.path.join(root, relative)) as stream:
                texts.append(stream.read())
        except OSError as error:
            texts.append(f"unreadable: {error}")
raise ValueError("; ".join(texts))
"""
)
READ_PUBLIC_INTO_RESULT = (
    CONFIG
    + """\
try:
    with open(os.path.join(config["hidden"][0], "tests", "test_storage.py"), "rb") as stream:
        return tuple(stream.read())
except OSError as error:
    raise ValueError(f"unreadable: {error}")
"""
)
WRITE_INTO_OUTPUT = (
    CONFIG
    + """\
failures = []
for root in config["hidden"][2:]:
    for name in ("results.json", "complete/results.json", "gradebook.csv"):
        try:
            with open(os.path.join(root, name), "w") as stream:
                stream.write("{}")
        except OSError as error:
            failures.append(f"unwritable: {error}")
raise PermissionError("; ".join(failures))
"""
)
LEAVE_PROCESSES = """\
import os, sys, time
def sleep_on():
    named = "import time; time.sleep(600)  # left running"  # for whoever looks for it
    try:  # where the interpreter is this user's to run
        os.execv(sys.executable, [sys.executable, "-c", named])
    except OSError:
        time.sleep(600)
    os._exit(0)
if os.fork() == 0:  # a session of its own
    os.setsid()
    if os.fork() == 0:  # and its child, orphaned when the session's leader is killed
        sleep_on()
    sleep_on()
"""
LEAVE_THREADS = """\
import threading, time
threading.Thread(target=time.sleep, args=(600,)).start()
threading.Thread(target=time.sleep, args=(600,), daemon=True).start()
"""
CLOSE_DESCRIPTORS = """\
import os
for descriptor in range(3, 256):
    try:
        os.close(descriptor)
    except OSError:
        pass
"""
REDIRECT_STREAMS = """\
import os, sys
nowhere = os.open(os.devnull, os.O_RDWR)
for descriptor in (0, 1, 2):
    os.dup2(nowhere, descriptor)
print("printed where nobody reads")
"""
SIGNAL_THE_JUDGE = """\
import os, signal
for attempt in (lambda: os.kill(os.getppid(), signal.SIGKILL),
                lambda: os.killpg(os.getpgid(os.getppid()), signal.SIGKILL)):
    try:
        attempt()
    except OSError:
        pass
"""
FORGE_ANSWERS = """\
import instructor.sandbox.worker as worker
send = worker.Channel.send
def four(data):
    return ["ret", 4, []] if data and data[0] == "raise" else data
def answer_four(self, data):
    batch = data and data[0] == "batch"
    send(self, ["batch", [four(each) for each in data[1]]] if batch else four(data))
worker.Channel.send = answer_four
"""
# The file a forged answer would make the judge write, if the judge ever ran what the worker
# names: the worker itself never writes it.
JUDGE_MARKER = "written-from-the-judge"


# Every call answered, in turn, with each tag that names something for the other side to run
# or look up (a factory that would make the judge run `touch`, an object equal to anything, a
# function by name, a callback), whatever the submission's function did.
FORGE_FUNCTION_TAGS = (
    CONFIG
    + f"""\
import itertools
import instructor.sandbox.worker as worker
marker = os.path.join(config["hidden"][2], "{JUDGE_MARKER}")
tags = itertools.cycle([
    ["M", "tenxor.course.engine.running", "os.system", ["d", ["command", "touch " + marker]]],
    ["X", "unittest.mock", "ANY"],
    ["N", "tenxor.course.engine.running", "os.abort"],
    ["F", 0],
])
send = worker.Channel.send
def tagged(data):
    return ["ret", next(tags), []] if data and data[0] in ("ret", "raise") else data
def forged(self, data):
    batch = data and data[0] == "batch"
    send(self, ["batch", [tagged(each) for each in data[1]]] if batch else tagged(data))
worker.Channel.send = forged
"""
)
BURN = """\
import time
end = time.thread_time() + 0.7
while time.thread_time() < end:
    pass
"""
BURN_IN_A_CHILD = """\
import os
child = os.fork()
if child == 0:
    BURN
    os._exit(0)
os.waitpid(child, 0)
"""
# Honest code that imports lazily loaded modules once the worker is confined: a thread pool,
# a self-check with NumPy's random generator, a pool of forked processes.
LAZY_IMPORTS = """\
from concurrent.futures import ThreadPoolExecutor
with ThreadPoolExecutor(2) as pool:
    assert list(pool.map(abs, [-1, -2])) == [1, 2]
import numpy as np
assert np.random.default_rng(0).integers(0, 10, size=3).shape == (3,)
import multiprocessing
with multiprocessing.get_context("fork").Pool(2) as pool:
    assert pool.map(abs, [-1, -2]) == [1, 2]
"""
NUMPY_STRIDES = """\
import numpy as np
if itemsize <= 0:
    raise ValueError(f"itemsize must be positive, got {itemsize}")
return np.array(strides, dtype=np.int64) * itemsize
"""
# A worker that counted its own CPU time would read this clock: it says no time passes.
CLAIM_NO_CPU = """\
import time
time.process_time = lambda: 0.0
"""
DEEP_RESULT = """\
value = []
for _ in range(100_000):
    value = [value]
return value
"""
END_THE_JUDGE = """\
import os, sys
if "instructor.grading.judge" in sys.modules:  # only if the judge itself imported this module
    os._exit(99)
"""

# At import, looks for what an earlier worker of its user left (a file in each shared
# temporary folder, a System V shared-memory segment) and leaves the same for the next one:
# the public tests' worker for the hidden tests' one, a student's for the next student's.
# Where it finds any, every chapter-1 exercise fails, saying what it found.
CARRY_STATE = """\
import ctypes, os
_found = []
for _folder in ("/tmp", "/var/tmp", "/dev/shm"):
    _path = os.path.join(_folder, f"tenxor-carried-state-{os.getuid()}")
    if os.path.exists(_path):
        _found.append(_path)
    try:
        with open(_path, "w") as _stream:
            _stream.write("left by an earlier worker")
    except OSError:
        pass
_libc = ctypes.CDLL(None, use_errno=True)
_key = 0x7E4E0000 + os.getuid() % 0x10000
if _libc.shmget(_key, 0, 0) >= 0:
    _found.append(f"shared memory {_key:#x}")
_libc.shmget(_key, 4096, 0o1600)  # IPC_CREAT, readable and writable by its user
if _found:
    def _carried(*args, **kwargs):
        raise ValueError(f"found what an earlier worker left: {_found}")
    numel = round_to_bfloat16 = byte_strides = _carried
"""

# A module with no code of its own: it runs the installed course's copy of itself, found in
# any folder its worker imports from (outside bubblewrap the worker keeps a handle on each,
# the grader's virtual environment included), as long as that copy is not a stub.
COPYCAT = """\
import os, sys
_name = os.path.basename(__file__)
for _folder in list(sys.path):
    _twin = os.path.join(_folder, "tenxor", _name)
    try:
        with open(_twin, encoding="utf-8") as _stream:
            _text = _stream.read()
    except OSError:
        continue
    _stub = 'NotImplementedError("Exercise' in _text
    if os.path.realpath(_twin) != os.path.realpath(__file__) and not _stub:
        exec(compile(_text, _twin, "exec"), globals())
        break
"""


def copycat(folder: Path) -> None:
    """Every exercise module a COPYCAT."""
    for module in MODULES:
        (folder / module).write_text(COPYCAT, encoding="utf-8")


# Chapter 1 answering tensors, whatever a test expects, and a zip kernel (4.6, which a
# tensor's `==` runs) that says every pair of elements compares true: were the judge's
# comparisons ever to run submitted code, the lie would pass tests.
ANSWERS_A_TENSOR = tuple(
    in_region(exercise_id, "import tenxor\nreturn tenxor.tensor([True])")
    for exercise_id in CHAPTER_1
)
ALL_TRUE_ZIP = """\
shape = broadcast_shapes(layout_a.shape, layout_b.shape)
count = 1
for size in shape:
    count *= size
return shape, [True] * count
"""
# A hidden test of the course copy graded in the batches: the arguments of its one call
# must never reach a student (CANARY_SIZE in any output would mean they did).
CANARY_SIZE = 987653
CANARY_TEST = f"""\
import pytest

from tenxor.storage import numel


@pytest.mark.exercise("1.1")
def test_numel_of_a_canary_shape():
    assert numel((1, {CANARY_SIZE})) == {CANARY_SIZE}
"""
# Every chapter-1 function records the arguments of each call (in the module, in /tmp and
# in /dev/shm) and raises them, hidden ones first if it ever saw any.
REPLAY_ARGUMENTS = f"""\
_SEEN = []
_PLACES = ("/tmp/tenxor-replayed", "/dev/shm/tenxor-replayed")
def _replaying(function):
    def replay(*args, **kwargs):
        _SEEN.append(repr(args))
        for place in _PLACES:
            try:
                with open(place, "a") as stream:
                    stream.write(repr(args) + "\\n")
                with open(place) as stream:
                    _SEEN.extend(stream.read().splitlines())
            except OSError:
                pass
        hidden = [seen for seen in _SEEN if "{CANARY_SIZE}" in seen]
        raise RuntimeError("replayed: " + ", ".join(hidden or _SEEN[-3:]))
    return replay
numel, round_to_bfloat16, byte_strides = map(_replaying, (numel, round_to_bfloat16, byte_strides))
"""
# At import: a .pth file (which Python runs at every start) in every folder it imports from.
PLANT_PTH = """\
import os, sys
for _folder in list(sys.path):
    try:
        with open(os.path.join(_folder, "tenxor-planted.pth"), "w") as _stream:
            _stream.write("import os; os.environ['TENXOR_PLANTED'] = '1'\\n")
    except OSError:
        pass
"""


def with_canary(course: Path) -> Path:
    """The course with CANARY_TEST among its hidden tests."""
    (course / "tests" / "hidden" / "test_canary_hidden.py").write_text(CANARY_TEST)
    return course


def answering(value: str) -> tuple[Callable[[Path], None], ...]:
    """Every chapter-1 exercise answering `value` to every call."""
    return tuple(in_region(exercise_id, f"return {value}") for exercise_id in CHAPTER_1)


RED_TEAM = (
    Fixture("patches-pytest-at-import", (stubbed(STORAGE), appended(STORAGE, PATCH_PYTEST)),
            tuple(CHAPTER_1), "not done"),
    Fixture("rewrites-the-judge-and-tests", (stubbed(STORAGE),
            appended(STORAGE, REWRITE_EVERYTHING)), tuple(CHAPTER_1), "not done"),
    Fixture("forges-result-files", (stubbed(STORAGE), appended(STORAGE, FORGE_RESULTS)),
            tuple(CHAPTER_1), "not done"),
    Fixture("always-equal-results", (in_region("1.1", ALWAYS_EQUAL_INT),
            in_region("1.3", ALWAYS_EQUAL_TUPLE)), ("1.1", "1.3"), "FAIL"),
    Fixture("custom-class-result", (in_region("1.2", CUSTOM_RESULT),), ("1.2",), "Unreadable"),
    Fixture("reads-hidden-tests-into-errors", (in_region("1.1", READ_HIDDEN_INTO_ERROR),),
            ("1.1",), "unreadable: "),
    Fixture("reads-public-tests-into-results", (in_region("1.3", READ_PUBLIC_INTO_RESULT),),
            ("1.3",), "unreadable: "),
    Fixture("writes-into-the-output-and-other-students", (in_region("1.1", WRITE_INTO_OUTPUT),),
            ("1.1",), "unwritable: "),
    Fixture("leaves-processes-running", (appended(STORAGE, LEAVE_PROCESSES),), (),
            "Graded modules: tenxor/broadcasting.py"),
    Fixture("leaves-threads-running", (appended(STORAGE, LEAVE_THREADS),), (),
            "Graded modules: tenxor/broadcasting.py"),
    Fixture("closes-every-descriptor-at-import", (appended(STORAGE, CLOSE_DESCRIPTORS),),
            tuple(CHAPTER_1), "importing it stopped the worker"),
    Fixture("redirects-the-standard-streams", (appended(STORAGE, REDIRECT_STREAMS),), (),
            "Graded modules: tenxor/broadcasting.py"),
    Fixture("signals-the-judge", (appended(STORAGE, SIGNAL_THE_JUDGE),), (),
            "Graded modules: tenxor/broadcasting.py"),
    Fixture("forges-answers-on-the-channel", (stubbed(STORAGE), appended(STORAGE, FORGE_ANSWERS)),
            tuple(CHAPTER_1), "FAIL"),
    Fixture("answers-four-honestly", answering("4"), tuple(CHAPTER_1), "FAIL"),
    Fixture("returns-data-nested-too-deep", (in_region("1.1", DEEP_RESULT),), ("1.1",), "FAIL"),
    Fixture("ends-the-judge-if-imported-there", (appended(STORAGE, END_THE_JUDGE),), (),
            "Graded modules: tenxor/broadcasting.py"),
    Fixture("answers-with-function-tags",
            (stubbed(STORAGE), appended(STORAGE, FORGE_FUNCTION_TAGS)), tuple(CHAPTER_1),
            "UnreadableData"),
    Fixture("burns-cpu", (in_region("1.1", BURN + "return -1"),), ("1.1",), "used up its"),
    Fixture("burns-cpu-in-a-child",
            (in_region("1.1", BURN_IN_A_CHILD.replace("BURN", BURN.replace("\n", "\n    ")
                                                     .strip()) + "return -1"),),
            ("1.1",), "used up its"),
    Fixture("burns-cpu-and-claims-none",
            (in_region("1.1", BURN + "return -1"), appended(STORAGE, CLAIM_NO_CPU)),
            ("1.1",), "used up its"),
    Fixture("imports-lazily-loaded-modules", (appended(STORAGE, LAZY_IMPORTS),), (),
            "Graded modules: tenxor/broadcasting.py"),
    Fixture("returns-a-numpy-array-for-a-tuple", (in_region("1.3", NUMPY_STRIDES),), (),
            "Graded modules: tenxor/broadcasting.py", plain_pytest=True),
    Fixture("answers-60-MB", (in_region("1.1", "return 'x' * 60_000_000"),), ("1.1",),
            "more than the 32 MB an answer may have"),
    Fixture("writes-state-for-the-next-worker", (appended(STORAGE, CARRY_STATE),), (),
            "Graded modules: tenxor/broadcasting.py"),
    Fixture("copies-the-installed-course", (copycat,), tuple(CHAPTER_1), "does not import"),
    Fixture("answers-tensors-and-lies-in-comparisons", (*ANSWERS_A_TENSOR,
            in_region("4.6", ALL_TRUE_ZIP)), tuple(CHAPTER_1), "FAIL"),
    Fixture("replays-the-arguments-it-saw", (appended(STORAGE, REPLAY_ARGUMENTS),),
            tuple(CHAPTER_1), "replayed: "),
    Fixture("writes-a-pth-file-into-site-packages", (appended(STORAGE, PLANT_PTH),), (),
            "Graded modules: tenxor/broadcasting.py"),
    Fixture("=SUM(1,2)", (), (), "Graded modules: tenxor/broadcasting.py"),
)  # fmt: skip
