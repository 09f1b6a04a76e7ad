"""The judge: a pytest plugin that grades submissions without running a line of them.

Loaded with `-p instructor.grading.judge` in the judges' tree, which holds the instructor's
reference solutions (readable by the judges alone), with a sandbox configuration for each
submission it grades (a JSON list) in the TENXOR_SANDBOX variable. Several submissions are
graded in turn, each with workers of its own, by one process: it collects the tests once,
and draws each property test's examples once (instructor.grading.replay), or takes them from
the files the batch's recorders wrote (TENXOR_RECORDED). A recorder is a judge without
submissions (TENXOR_RECORD): it draws the examples of its share of the property tests with
the reference solutions and pickles them for the judges of its batch. Before any test is
collected, every exercise function, wherever the package holds it, becomes a proxy. During a
test of exercise X, X's proxy calls the submission's function in the sandbox worker
(instructor.sandbox.worker, through instructor.sandbox.judge_side), and every other
exercise's proxy calls the instructor's reference: so only X's function runs submitted code,
and what builds a test's inputs or compares its results never does. Public tests run first;
a worker that served them is stopped before a hidden test's first call, and the next one
starts from nothing (instructor.sandbox.leftovers), so nothing of a hidden test can reach a
public one.

When a test replaces an exercise function by a stand-in, calls into the worker carry the
stand-in along for the exercises that build on it. Each report names the exercises whose
calls went to the worker (`report.crossed`) and the submission it graded
(`report.submission`), and each failing report gets the failure in plain words
(`report.failure`), which pytest-reportlog and pytest-xdist pass on with the report.

The judge starts as root when grading does, and gives root up before it runs a test (before
it reads a byte from a worker): it becomes a user of its own, which may read its own tree
and write only its own folder. Workers are started for it by a launcher process that keeps
root (instructor.sandbox.launcher) and never reads what they send. Its first worker starts before
the first test: if the submission does not import, the judge writes why to its file of those
TENXOR_IMPORT_PROBLEM lists and fails every call at once; grading then finds the modules to
blame with `check_imports`, which tries packages in workers the same way.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import importlib
import json
import os
import pickle
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

from instructor.grading.replay import Example, is_property_test, recording, replayed
from instructor.sandbox.interface import (
    Kinds,
    Raising,
    Sandbox,
    SandboxConfig,
    give_up_root,
    launcher_for,
    tensor_kinds,
)
from tenxor.course.catalog import (
    BY_ID,
    CATALOG,
    EXERCISE_MODULES,
    RECORDS,
    Exercise,
    is_hidden_test,
    prerequisites,
)
from tenxor.course.engine import Call, call_of, explained, with_calls
from tenxor.course.failure import Failure, ints_in_hex, shown
from tenxor.course.markers import BIT_PATTERNS, exercise_of

SANDBOX: Sandbox | None = None  # the sandbox of the submission being graded
SANDBOXES: list[Sandbox] = []  # one for each submission this judge grades, in turn
IMPORT_PROBLEMS: list[Path] = []  # where to write why each submission does not import
GRADED: list[Path] = []  # the file each submission's end makes, once its reports are written
# The submission whose tests are running (its index in SANDBOXES), or None while the
# reference solutions run every property test to record its examples (instructor.grading.replay).
GRADING: dict[str, int | None] = {"submission": 0}
EXAMPLES: dict[str, list[Example]] = {}  # test -> the examples recorded for it
EXAMPLE_FILES: list[Path] = []  # where the batch's recorders left examples (TENXOR_RECORDED)
# In a recorder: the file to write, its share of the property tests and how many shares.
RECORDER: dict[str, Any] = {}
PROXIES: dict[str, Any] = {}  # exercise id -> the proxy standing for its function
# The exercise whose test is running (only its function's calls go to the worker), and
# whether the test is hidden (a worker serves public tests or hidden ones, never both).
RUNNING: dict[str, Any] = {"exercise": None, "hidden": False}
CROSSED: set[str] = set()  # the exercises whose functions the running test called in the worker
CONFIG: SandboxConfig | None = None  # this judge's, for giving up root
REPLAY_FAILURE = pytest.StashKey[BaseException | None]()  # what a replayed test raised first

Slot = tuple[Any, str, str, Any]  # (module, its name, attribute, the proxy it should hold)
# The running test's last call of each exercise function: (arguments, kwargs, what it
# returned, whether it raised), in the order they ended; put in words only if the test fails.
CALLS: dict[str, tuple[tuple, dict[str, Any], Any, bool]] = {}


def judges_kinds() -> Kinds:
    """The judge's own tensor classes and the catalog's records, which decoded results are
    made of (and no way to find a function: nothing the worker sends may name one)."""
    return tensor_kinds(importlib.import_module("tenxor"), records=RECORDS)


def stand_ins(slots: list[Slot]) -> list[tuple[str, str, Any]]:
    """The slots that a test has given another function: (module, attribute, function)."""
    return [(name, attribute, module.__dict__.get(attribute))
            for module, name, attribute, proxy in slots
            if module.__dict__.get(attribute) is not proxy]  # fmt: skip


def proxy(exercise: Exercise, reference: Any, watched: list[Slot]) -> Any:
    """The judge's version of an exercise function: during a test of its exercise it calls
    the function of the submission being graded in its worker, during any other test (and
    while examples are recorded) the `reference`."""
    target = (exercise.module, exercise.function)

    def call_in_worker(*args: Any, **kwargs: Any) -> Any:
        if RUNNING["exercise"] != exercise.id or SANDBOX is None:
            return reference(*args, **kwargs)
        CROSSED.add(exercise.id)
        SANDBOX.serve(hidden=RUNNING["hidden"])
        try:
            value = SANDBOX.call(exercise.id, target, args, kwargs, stand_ins(watched))
        except BaseException:
            CALLS.pop(exercise.id, None)
            CALLS[exercise.id] = (args, kwargs, None, True)
            raise
        CALLS.pop(exercise.id, None)
        CALLS[exercise.id] = (args, kwargs, value, False)
        return value

    def each_in_worker(cases: Iterable[tuple[Any, ...]]) -> Iterator[Any]:
        """call_in_worker(*case) for each of `cases`, in turn; in the worker, sent to it a
        window of calls at a time (Sandbox.each)."""
        if RUNNING["exercise"] != exercise.id or SANDBOX is None or stand_ins(watched):
            yield from (call_in_worker(*case) for case in cases)
            return
        CROSSED.add(exercise.id)
        SANDBOX.serve(hidden=RUNNING["hidden"])
        cases = [tuple(case) for case in cases]
        answers = SANDBOX.each(exercise.id, target, cases)
        for case in cases:
            CALLS.pop(exercise.id, None)
            CALLS[exercise.id] = (case, {}, None, True)
            answer = next(answers)
            if type(answer) is Raising:
                raise answer.error
            CALLS[exercise.id] = (case, {}, answer, False)
            yield answer

    functools.update_wrapper(call_in_worker, reference)
    call_in_worker.sandbox_target = target
    call_in_worker.each = each_in_worker
    return call_in_worker


def install() -> dict[str, Any]:
    """Put a proxy in every place the package holds an exercise function (the reference);
    the proxies."""
    for module in EXERCISE_MODULES:  # a chapter's module that the package does not import
        importlib.import_module(module)
    modules = [m for name, m in sorted(sys.modules.items()) if name.split(".")[0] == "tenxor"]
    watched: dict[str, list[Slot]] = {exercise.id: [] for exercise in CATALOG}
    slots: dict[str, list[Slot]] = {exercise.id: [] for exercise in CATALOG}
    proxies = {}
    for exercise in CATALOG:
        reference = getattr(importlib.import_module(exercise.module), exercise.function)
        proxies[exercise.id] = proxy(exercise, reference, watched[exercise.id])
        for module in modules:
            for attribute, value in list(vars(module).items()):
                if value is reference:
                    setattr(module, attribute, proxies[exercise.id])
                    slots[exercise.id].append(
                        (module, module.__name__, attribute, proxies[exercise.id])
                    )
    for exercise in CATALOG:
        for other in sorted(prerequisites(exercise.id)):
            watched[exercise.id].extend(slots[other])
    return proxies


def pin(slot: int) -> None:
    """Run this judge (and the worker it starts) on one CPU: a call and its answer then pass
    between the two processes without waking another core, several times faster."""
    if hasattr(os, "sched_setaffinity"):
        cpus = sorted(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cpus[slot % len(cpus)]})


def pytest_configure(config: pytest.Config) -> None:
    global CONFIG
    settings = os.environ.get("TENXOR_SANDBOX")
    if not settings:
        raise pytest.UsageError("the judge needs its sandbox configurations in TENXOR_SANDBOX")
    configs = [SandboxConfig.from_json(text) for text in json.loads(settings)]
    if not configs:
        raise pytest.UsageError("the judge needs a sandbox configuration")
    sandbox_config = CONFIG = configs[0]
    tree = Path(sandbox_config.tree).resolve()
    if not Path(importlib.import_module("tenxor").__file__).resolve().is_relative_to(tree):
        raise pytest.UsageError(f"the judge must import tenxor from its tree {tree}")
    if os.environ.get("TENXOR_RECORD"):  # a recorder: no submission, no worker
        RECORDER.update(json.loads(os.environ["TENXOR_RECORD"]))
        PROXIES.update(install())
        return
    IMPORT_PROBLEMS[:] = [Path(path) for path in json.loads(os.environ["TENXOR_IMPORT_PROBLEM"])]
    GRADED[:] = [Path(path) for path in json.loads(os.environ["TENXOR_GRADED"])]
    if not len(configs) == len(IMPORT_PROBLEMS) == len(GRADED):
        raise pytest.UsageError("the judge needs an import problem and a graded file each")
    EXAMPLE_FILES[:] = [Path(path) for path in json.loads(os.environ["TENXOR_RECORDED"])]
    workerinput = getattr(config, "workerinput", None)  # set in an xdist worker: gw0, gw1, ...
    if (workerinput or getattr(config.option, "numprocesses", None)) and len(configs) > 1:
        raise pytest.UsageError("a judge of several submissions runs in one process")
    if workerinput is None and getattr(config.option, "numprocesses", None):
        return  # an xdist controller: it runs no test, so it needs no worker
    index = int(workerinput["workerid"].removeprefix("gw")) if workerinput else 0
    pin(sandbox_config.slot + index)  # first: the launchers, and so the workers, on one CPU
    kinds = judges_kinds()
    for each in configs:  # each launcher started while the judge is still root
        mine = dataclasses.replace(each, slot=each.slot + index)
        SANDBOXES.append(Sandbox(mine, kinds, launcher_for(mine)))
    PROXIES.update(install())


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session: pytest.Session) -> bool | None:
    """Give up root before the first test (in an xdist controller too: its workers are up).
    A recorder records its share of the examples, and ends. One submission with no
    recorded examples: pytest's own loop runs its tests. Otherwise the property tests' examples
    are taken from the recorders' files, or recorded here (the reference solutions run the
    property tests once), then each submission's tests run in turn, the property tests on
    the recorded examples (instructor.grading.replay)."""
    if CONFIG is not None:
        give_up_root(CONFIG)
    if RECORDER:
        record_share(session, RECORDER["share"], RECORDER["shares"], Path(RECORDER["file"]))
        return True
    if len(SANDBOXES) == 1 and not EXAMPLE_FILES:
        begin(0)
        return None
    if not SANDBOXES:
        return None  # an xdist controller
    if session.testsfailed and not session.config.option.continue_on_collection_errors:
        raise session.Interrupted(f"{session.testsfailed} errors during collection")
    GRADING["submission"] = None
    if not examples_loaded(EXAMPLE_FILES):
        run_items(session, property_tests(session))
    for index, sandbox in enumerate(SANDBOXES):
        begin(index)
        run_items(session, session.items)
        sandbox.close()
        GRADED[index].touch()  # its reports are all in the log: grading may write its results
    return True


def property_tests(session: pytest.Session) -> list[pytest.Item]:
    return [item for item in session.items if is_property_test(function_of(item))]


def record_share(session: pytest.Session, share: int, shares: int, file: Path) -> None:
    """Run every `shares`-th property test from the `share`-th with the reference solutions,
    recording their examples, and pickle those that pickle into `file`."""
    GRADING["submission"] = None
    run_items(session, property_tests(session)[share::shares])
    kept = {}
    for test, examples in EXAMPLES.items():
        with contextlib.suppress(pickle.PicklingError, TypeError, AttributeError):
            kept[test] = pickle.dumps(examples, pickle.HIGHEST_PROTOCOL)
    file.write_bytes(pickle.dumps(kept, pickle.HIGHEST_PROTOCOL))


def examples_loaded(files: list[Path]) -> bool:
    """Take the examples the batch's recorders wrote into `files` (written by judges of this
    batch, from the reference solutions: no submission ran where they were made); False,
    and none taken, if there are none or one cannot be read."""
    examples = {}
    try:
        for file in files:
            for test, pickled in pickle.loads(file.read_bytes()).items():  # noqa: S301
                examples[test] = pickle.loads(pickled)  # noqa: S301
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError):
        return False
    EXAMPLES.update(examples)
    return bool(files)


def begin(index: int) -> None:
    """Grade the `index`-th submission from now on: its first worker starts, and if the
    submission does not import, the judge says so and fails each of its calls at once."""
    global SANDBOX
    SANDBOX, GRADING["submission"] = SANDBOXES[index], index
    problem = SANDBOX.start()
    if problem:
        SANDBOX.broken = problem
        IMPORT_PROBLEMS[index].write_text(problem, encoding="utf-8")


def run_items(session: pytest.Session, items: list[pytest.Item]) -> None:
    """Run `items` as pytest's own loop does (each may run again for another submission)."""
    for position, item in enumerate(items):
        following = items[position + 1] if position + 1 < len(items) else None
        item.config.hook.pytest_runtest_protocol(item=item, nextitem=following)
        if session.shouldfail:
            raise session.Failed(session.shouldfail)
        if session.shouldstop:
            raise session.Interrupted(session.shouldstop)


def function_of(item: pytest.Item) -> Any:
    return getattr(item, "obj", None)


def pytest_unconfigure(config: pytest.Config) -> None:
    for sandbox in SANDBOXES:
        sandbox.close()


@pytest.hookimpl(tryfirst=True, specname="pytest_pyfunc_call")
def pytest_pyfunc_call_replayed(pyfuncitem: pytest.Function) -> bool | None:
    """A property test whose examples were recorded runs on them alone; if the submission
    fails one, hypothesis runs the test in full (pytest's own call), for the shrunk example."""
    examples = EXAMPLES.get(pyfuncitem.nodeid)
    if examples is None or GRADING["submission"] is None:
        return None
    names = pyfuncitem._fixtureinfo.argnames
    fixtures = {name: pyfuncitem.funcargs[name] for name in names}
    failure = replayed(pyfuncitem.obj, fixtures, examples)
    if failure is None:
        return True
    pyfuncitem.stash[REPLAY_FAILURE] = failure
    return None


@pytest.hookimpl(hookwrapper=True, specname="pytest_pyfunc_call")
def pytest_pyfunc_call_recorded(pyfuncitem: pytest.Function):
    """While the reference runs a property test, record its examples (kept if it passed);
    a test run in full after its replay failed fails, if it passed in full."""
    function = pyfuncitem.obj
    if GRADING["submission"] is None and is_property_test(function):
        examples: list[Example] = []
        with recording(function, examples):
            outcome = yield
        if outcome.excinfo is None:
            EXAMPLES[pyfuncitem.nodeid] = examples
        return
    outcome = yield
    failure = pyfuncitem.stash.get(REPLAY_FAILURE, None)
    if failure is not None and outcome.excinfo is None:
        outcome.force_exception(failure)


def calls_made(proxies: dict[str, Any]) -> list[Call]:
    """The running test's last call of each exercise function, in words, oldest first."""
    made = []
    for exercise_id, (args, kwargs, value, raised) in CALLS.items():
        text = call_of(proxies[exercise_id], args, kwargs)
        returned = None if raised else shown(value)
        made.append(Call(BY_ID[exercise_id], text, returned, raised))
    return made


def is_hidden(item: pytest.Item) -> bool:
    return is_hidden_test(item.nodeid)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The public tests first, then the hidden ones: so each judge process needs one worker
    for its public tests and one more for its hidden tests (pytest-xdist's load scheduling
    hands each process its tests in this order)."""
    items.sort(key=is_hidden)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Before the test's fixtures: its exercise is the one whose calls go to the worker."""
    CALLS.clear()
    CROSSED.clear()
    item.stash[REPLAY_FAILURE] = None
    exercise = None if GRADING["submission"] is None else exercise_of(item)  # None: recording
    RUNNING.update(exercise=exercise, hidden=is_hidden(item))


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    RUNNING["exercise"] = None  # between tests, nothing goes to the worker


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    report = (yield).get_result()
    report.judge_user = os.geteuid()  # grading takes only reports of the user it chose
    report.submission = GRADING["submission"]  # None: the reference, recording examples
    report.crossed = sorted(CROSSED)
    if report.failed and call.excinfo is not None and not hasattr(report, "failure"):
        with ints_in_hex(item.get_closest_marker(BIT_PATTERNS) is not None):
            report.failure = failure_record(item, call.excinfo.value).to_dict()


def failure_record(item: pytest.Item, error: BaseException) -> Failure:
    """The record of a failed test, with the calls the worker made for it."""
    exercise = exercise_of(item)
    record = explained(error, Path(str(item.config.rootpath)), exercise)
    if SANDBOX is not None and PROXIES:
        record = with_calls(record, exercise, calls_made(PROXIES), provided=False)
    return record


def check_imports(folder: str) -> None:
    """Try each package of folder/configs.json in a sandbox worker, as the judge's user, and
    write why each did not import (null where it did) to folder/problems.json."""
    texts = json.loads((Path(folder) / "configs.json").read_text(encoding="utf-8"))
    configs = [SandboxConfig.from_json(text) for text in texts]
    launchers = [launcher_for(config) for config in configs]  # while still root
    give_up_root(configs[0])
    problems = []
    for config, launcher in zip(configs, launchers):
        sandbox = Sandbox(config, None, launcher)
        try:
            problems.append(sandbox.start())
        finally:
            sandbox.close()
    (Path(folder) / "problems.json").write_text(json.dumps(problems), encoding="utf-8")
