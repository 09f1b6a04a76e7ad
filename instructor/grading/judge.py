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

Each exercise is graded on its own: while a test of X runs, the worker's functions of
the exercises X builds on (the catalog's prerequisites) are bound to the instructor's, called
back in the judge, so a broken or missing module of the submission costs its own exercises
and nothing else. When a test replaces an exercise function by a stand-in, calls into the
worker carry the stand-in along for the exercises that build on it. Each report names the
exercises whose calls went to the worker (`report.crossed`) and the submission it graded
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
import gc
import importlib
import json
import os
import pickle
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
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
from tenxor.course.engine.upstream import fixture_names
from tenxor.course.failure import Failure, ints_in_hex, shown
from tenxor.course.markers import BIT_PATTERNS, exercise_of

REPLAY_FAILURE = pytest.StashKey[BaseException | None]()  # what a replayed test raised first
Slot = tuple[Any, str, str, Any]  # (module, its name, attribute, the proxy it should hold)
# A call of an exercise function: (arguments, kwargs, what it returned, whether it raised).
CallMade = tuple[tuple, dict[str, Any], Any, bool]


@dataclass
class Judging:
    """What this judge knows as it grades: its submissions' sandboxes and files, the
    examples it replays, and the test running now. One per pytest run, in its config's
    stash (JUDGING); the proxies hold it too."""

    config: SandboxConfig | None = None  # this judge's, for giving up root
    sandboxes: list[Sandbox] = field(default_factory=list)  # one per submission, in turn
    sandbox: Sandbox | None = None  # the sandbox of the submission being graded
    # The submission whose tests are running (its index in sandboxes), or None while the
    # reference solutions run every property test to record its examples (grading.replay).
    submission: int | None = 0
    import_problems: list[Path] = field(default_factory=list)  # why each does not import
    graded: list[Path] = field(default_factory=list)  # made once a submission's reports are in
    examples: dict[str, list[Example]] = field(default_factory=dict)  # test -> its examples
    example_files: list[Path] = field(default_factory=list)  # the recorders' (TENXOR_RECORDED)
    # In a recorder: the file to write, its share of the property tests and how many shares.
    recorder: dict[str, Any] = field(default_factory=dict)
    proxies: dict[str, Any] = field(default_factory=dict)  # exercise id -> its proxy
    # The exercise whose test is running (only its function's calls go to the worker), and
    # whether the test is hidden (a worker serves public tests or hidden ones, never both).
    exercise: str | None = None
    hidden: bool = False
    crossed: set[str] = field(default_factory=set)  # exercises the test called in the worker
    # The running test's last call of each exercise function, in the order they ended; put
    # in words only if the test fails.
    calls: dict[str, CallMade] = field(default_factory=dict)


JUDGING = pytest.StashKey[Judging]()


def judges_kinds() -> Kinds:
    """The judge's own tensor classes and the catalog's records, which decoded results are
    made of (and no way to find a function: nothing the worker sends may name one)."""
    return tensor_kinds(importlib.import_module("tenxor"), records=RECORDS)


def stand_ins(slots: list[Slot]) -> list[tuple[str, str, Any]]:
    """The slots that a test has given another function: (module, attribute, function)."""
    return [(name, attribute, module.__dict__.get(attribute))
            for module, name, attribute, proxy in slots
            if module.__dict__.get(attribute) is not proxy]  # fmt: skip


def bindings_of(exercise_id: str, references: dict[str, Any]) -> list[tuple[str, str, Any]]:
    """What stands in the worker for the exercises `exercise_id` builds on while its tests
    run: the instructor's function of each (`references`: exercise id -> function), called
    back in the judge. So the submission's function of the exercise is graded alone, on
    right answers from all it builds on."""
    return [(BY_ID[other].module, BY_ID[other].function, references[other])
            for other in sorted(prerequisites(exercise_id))]  # fmt: skip


def proxy(
    exercise: Exercise, references: dict[str, Any], watched: list[Slot], judging: Judging
) -> Any:
    """The judge's version of an exercise function: during a test of its exercise it calls
    the function of the submission being graded in its worker, with the instructor's
    functions of the exercises it builds on (bindings_of); during any other test (and while
    examples are recorded) the `reference`."""
    target = (exercise.module, exercise.function)
    reference, bindings = references[exercise.id], bindings_of(exercise.id, references)

    def call_in_worker(*args: Any, **kwargs: Any) -> Any:
        if judging.exercise != exercise.id or judging.sandbox is None:
            return reference(*args, **kwargs)
        judging.crossed.add(exercise.id)
        judging.sandbox.serve(hidden=judging.hidden)
        judging.sandbox.bind(bindings)
        try:
            value = judging.sandbox.call(exercise.id, target, args, kwargs, stand_ins(watched))
        except BaseException:
            judging.calls.pop(exercise.id, None)
            judging.calls[exercise.id] = (args, kwargs, None, True)
            raise
        judging.calls.pop(exercise.id, None)
        judging.calls[exercise.id] = (args, kwargs, value, False)
        return value

    def each_in_worker(cases: Iterable[tuple[Any, ...]]) -> Iterator[Any]:
        """call_in_worker(*case) for each of `cases`, in turn; in the worker, sent to it a
        window of calls at a time (Sandbox.each)."""
        if judging.exercise != exercise.id or judging.sandbox is None or stand_ins(watched):
            yield from (call_in_worker(*case) for case in cases)
            return
        judging.crossed.add(exercise.id)
        judging.sandbox.serve(hidden=judging.hidden)
        judging.sandbox.bind(bindings)
        cases = [tuple(case) for case in cases]
        answers = judging.sandbox.each(exercise.id, target, cases)
        for case in cases:
            judging.calls.pop(exercise.id, None)
            judging.calls[exercise.id] = (case, {}, None, True)
            answer = next(answers)
            if type(answer) is Raising:
                raise answer.error
            judging.calls[exercise.id] = (case, {}, answer, False)
            yield answer

    functools.update_wrapper(call_in_worker, reference)
    call_in_worker.sandbox_target = target
    call_in_worker.each = each_in_worker
    return call_in_worker


def install(judging: Judging) -> dict[str, Any]:
    """Put a proxy in every place the package holds an exercise function (the reference),
    each holding `judging`; the proxies."""
    for module in EXERCISE_MODULES:  # a chapter's module that the package does not import
        importlib.import_module(module)
    modules = [m for name, m in sorted(sys.modules.items()) if name.split(".")[0] == "tenxor"]
    watched: dict[str, list[Slot]] = {exercise.id: [] for exercise in CATALOG}
    slots: dict[str, list[Slot]] = {exercise.id: [] for exercise in CATALOG}
    references = {exercise.id: getattr(importlib.import_module(exercise.module), exercise.function)
                  for exercise in CATALOG}  # fmt: skip
    proxies = {}
    for exercise in CATALOG:
        reference = references[exercise.id]
        proxies[exercise.id] = proxy(exercise, references, watched[exercise.id], judging)
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


def paths_in(variable: str) -> list[Path]:
    """The paths in the environment variable `variable`, a JSON list."""
    return [Path(path) for path in json.loads(os.environ[variable])]


def pytest_configure(config: pytest.Config) -> None:
    judging = config.stash[JUDGING] = Judging()
    settings = os.environ.get("TENXOR_SANDBOX")
    if not settings:
        raise pytest.UsageError("the judge needs its sandbox configurations in TENXOR_SANDBOX")
    configs = [SandboxConfig.from_json(text) for text in json.loads(settings)]
    if not configs:
        raise pytest.UsageError("the judge needs a sandbox configuration")
    sandbox_config = judging.config = configs[0]
    tree = Path(sandbox_config.tree).resolve()
    if not Path(importlib.import_module("tenxor").__file__).resolve().is_relative_to(tree):
        raise pytest.UsageError(f"the judge must import tenxor from its tree {tree}")
    if os.environ.get("TENXOR_RECORD"):  # a recorder: no submission, no worker
        judging.recorder.update(json.loads(os.environ["TENXOR_RECORD"]))
        judging.proxies.update(install(judging))
        return
    judging.import_problems = paths_in("TENXOR_IMPORT_PROBLEM")
    judging.graded = paths_in("TENXOR_GRADED")
    if not len(configs) == len(judging.import_problems) == len(judging.graded):
        raise pytest.UsageError("the judge needs an import problem and a graded file each")
    judging.example_files = paths_in("TENXOR_RECORDED")
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
        judging.sandboxes.append(Sandbox(mine, kinds, launcher_for(mine)))
    judging.proxies.update(install(judging))


def pytest_collection_finish() -> None:
    """What is loaded by now (pytest, hypothesis, the tests) lives as long as the judge: the
    collector then only looks at what the tests make, and the judge's end at nothing."""
    gc.freeze()


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session: pytest.Session) -> bool | None:
    """Give up root before the first test (in an xdist controller too: its workers are up).
    A recorder records its share of the examples, and ends. One submission with no
    recorded examples: pytest's own loop runs its tests. Otherwise the property tests' examples
    are taken from the recorders' files, or recorded here (the reference solutions run the
    property tests once), then each submission's tests run in turn, the property tests on
    the recorded examples (instructor.grading.replay)."""
    judging = session.config.stash[JUDGING]
    if judging.config is not None:
        give_up_root(judging.config)
    if judging.recorder:
        record_share(session, judging)
        return True
    if len(judging.sandboxes) == 1 and not judging.example_files:
        begin(judging, 0)
        return None
    if not judging.sandboxes:
        return None  # an xdist controller
    if session.testsfailed and not session.config.option.continue_on_collection_errors:
        raise session.Interrupted(f"{session.testsfailed} errors during collection")
    judging.submission = None
    if not examples_loaded(judging):
        run_items(session, property_tests(session))
    for index, sandbox in enumerate(judging.sandboxes):
        begin(judging, index)
        run_items(session, session.items)
        sandbox.close()
        judging.graded[index].touch()  # its reports are in the log: grading may write results
    return True


def property_tests(session: pytest.Session) -> list[pytest.Item]:
    return [item for item in session.items if is_property_test(function_of(item))]


def record_share(session: pytest.Session, judging: Judging) -> None:
    """Run the recorder's share of the property tests (every `shares`-th from the `share`-th)
    with the reference solutions, recording their examples, and pickle those that pickle
    into its `file`."""
    share, shares, file = (judging.recorder[key] for key in ("share", "shares", "file"))
    judging.submission = None
    run_items(session, property_tests(session)[share::shares])
    kept = {}
    for test, examples in judging.examples.items():
        with contextlib.suppress(pickle.PicklingError, TypeError, AttributeError):
            kept[test] = pickle.dumps(examples, pickle.HIGHEST_PROTOCOL)
    Path(file).write_bytes(pickle.dumps(kept, pickle.HIGHEST_PROTOCOL))


def examples_loaded(judging: Judging) -> bool:
    """Take the examples the batch's recorders wrote into their files (written by judges of this
    batch, from the reference solutions: no submission ran where they were made); False,
    and none taken, if there are none or one cannot be read."""
    examples = {}
    try:
        for file in judging.example_files:
            for test, pickled in pickle.loads(file.read_bytes()).items():  # noqa: S301
                examples[test] = pickle.loads(pickled)  # noqa: S301
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError):
        return False
    judging.examples.update(examples)
    return bool(judging.example_files)


def begin(judging: Judging, index: int) -> None:
    """Grade the `index`-th submission from now on: its first worker starts, and if the
    submission does not import, the judge says so and fails each of its calls at once."""
    judging.sandbox, judging.submission = judging.sandboxes[index], index
    problem = judging.sandbox.start()
    if problem:
        judging.sandbox.broken = problem
        judging.import_problems[index].write_text(problem, encoding="utf-8")


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
    for sandbox in config.stash.get(JUDGING, Judging()).sandboxes:
        sandbox.close()


@pytest.hookimpl(tryfirst=True, specname="pytest_pyfunc_call")
def pytest_pyfunc_call_replayed(pyfuncitem: pytest.Function) -> bool | None:
    """A property test whose examples were recorded runs on them alone; if the submission
    fails one, hypothesis runs the test in full (pytest's own call), for the shrunk example."""
    judging = pyfuncitem.config.stash[JUDGING]
    examples = judging.examples.get(pyfuncitem.nodeid)
    if examples is None or judging.submission is None:
        return None
    names = fixture_names(pyfuncitem)
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
    judging = pyfuncitem.config.stash[JUDGING]
    function = pyfuncitem.obj
    if judging.submission is None and is_property_test(function):
        examples: list[Example] = []
        with recording(function, examples):
            outcome = yield
        if outcome.excinfo is None:
            judging.examples[pyfuncitem.nodeid] = examples
        return
    outcome = yield
    failure = pyfuncitem.stash.get(REPLAY_FAILURE, None)
    if failure is not None and outcome.excinfo is None:
        outcome.force_exception(failure)


def calls_made(judging: Judging) -> list[Call]:
    """The running test's last call of each exercise function, in words, oldest first."""
    made = []
    for exercise_id, (args, kwargs, value, raised) in judging.calls.items():
        text = call_of(judging.proxies[exercise_id], args, kwargs)
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
    judging = item.config.stash[JUDGING]
    judging.calls.clear()
    judging.crossed.clear()
    item.stash[REPLAY_FAILURE] = None
    exercise = None if judging.submission is None else exercise_of(item)  # None: recording
    judging.exercise, judging.hidden = exercise, is_hidden(item)


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    judging = item.config.stash[JUDGING]
    judging.exercise = None  # between tests, nothing goes to the worker


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    report = (yield).get_result()
    judging = item.config.stash[JUDGING]
    report.judge_user = os.geteuid()  # grading takes only reports of the user it chose
    report.submission = judging.submission  # None: the reference, recording examples
    report.crossed = sorted(judging.crossed)
    if report.failed and call.excinfo is not None and not hasattr(report, "failure"):
        with ints_in_hex(item.get_closest_marker(BIT_PATTERNS) is not None):
            report.failure = failure_record(item, call.excinfo.value).to_dict()


def failure_record(item: pytest.Item, error: BaseException) -> Failure:
    """The record of a failed test, with the calls the worker made for it."""
    exercise = exercise_of(item)
    record = explained(error, Path(str(item.config.rootpath)), exercise)
    judging = item.config.stash[JUDGING]
    if judging.sandbox is not None and judging.proxies:
        record = with_calls(record, exercise, calls_made(judging), provided=False)
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
