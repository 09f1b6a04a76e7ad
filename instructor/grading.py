"""Grade submissions: a Gradescope `results.json` per student and one `gradebook.csv`.

Only the exercise modules (tenxor/storage.py, tenxor/strides.py, ...) are taken from a
submission. They never run in the grading process, nor in the process that runs the tests
and decides every result (the judge, instructor.judge): they go into the release's package
and run in a sandbox worker (instructor.sandbox), which exchanges only plain data with the
judge. The judge runs the instructor's public and hidden tests in a copy of the instructor's
tree whose exercise functions are stubs, with every exercise function calling into the worker.
A module that is missing, not UTF-8, does not compile or does not import is replaced by its
stub, so it costs only its own exercises. Scores are counted against the tests collected from
the instructor's tree: a test that is missing, crashed or never ran scores 0.
"""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import hashlib
import io
import json
import os
import platform
import queue
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from tenxor.course.catalog import BY_ID, CATALOG, Exercise
from tenxor.course.check import record_in_words
from tenxor.course.engine import (
    BOOTSTRAP,
    ISOLATE,
    Limits,
    Result,
    Run,
    exit_in_words,
    record_not_run,
    run_tests,
    short_name,
    start,
    tail,
)
from tenxor.course.failure import Failure

from .launcher import BLOCK, JUDGE_USERS, SandboxConfig, SandboxLimits, grading_users, sweep
from .release import NOT_NEEDED_FOR_TESTS, write_tree

EXERCISE_MODULES: tuple[str, ...] = tuple(sorted({item.path for item in CATALOG}))
GRADING_LIMITS = SandboxLimits()
# The judge runs only the course's own code; these bound it in case of a fault of its own.
JUDGE_LIMITS = Limits(test_seconds=600.0, run_seconds=0.0, memory_mb=4096, output_mb=8.0)
JUDGE_SETTINGS = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
ENTRY_OUTPUT_CHARS = 3000
FIELD_CHARS = 4000  # each text field of a judge's failure record is cut to this
HIDDEN_TESTS = "tests/hidden/"
EXAMPLES = {"10": "ci-quick", "100": "ci", "1000": "ci-thorough"}  # per property test
RECORD = ".grading-record.json"  # what grading wrote, to resume only from its own results
OUTPUT_FILES = frozenset({"gradebook.csv", "results.json", RECORD})
MAX_MODULE_BYTES = 1_000_000
# The judge's tree: the course with every exercise stubbed, its tests and the judge itself.
JUDGE_TREE_EXCLUDED = tuple(part for part in NOT_NEEDED_FOR_TESTS if part != "instructor")
PROTECTIONS = {
    "isolated": (
        "The submission ran in a sandbox worker under a user of its own, in mount and network "
        "namespaces of its own: the course, its tests, the submissions and the output were "
        "empty to it, /tmp was its own, and it had no network. The tests ran in a judge "
        "under another user of its own, which took only plain data from the worker."
    ),
    "separate user": (
        "The submission ran in a sandbox worker under a user of its own, which could not read "
        "the course, its tests, the submissions or the output. Off here (no mount or network "
        "namespaces allowed): a /tmp of its own and cutting off the network. The tests ran in "
        "a judge under another user of its own, which took only plain data from the worker."
    ),
    "same user": (
        "The sandbox worker ran as the grading user (grading did not run as root, or was told "
        "not to change users): it could read what that user can, the course's tests included, "
        "and signal the judge. Off here: a user of its own (for the worker and for the judge), "
        "hidden folders, a /tmp of its own, cutting off the network."
    ),
}
CHECK_IMPORTS = ISOLATE + "from instructor.judge import check_imports\ncheck_imports(sys.argv[1])\n"
NAMESPACE_PROBE = (
    "import ctypes, sys\n"
    "sys.exit(ctypes.CDLL(None, use_errno=True).unshare(0x00020000 | 0x40000000) != 0)\n"
)


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


@dataclass
class Bench:
    """What grading a batch needs once: the judge's tree, the sandbox mode, what the worker
    must not see, and which worker users and CPUs are free."""

    course: Path
    scratch: Path
    mode: str
    hidden: tuple[str, ...]
    limits: SandboxLimits
    judges: int  # test processes (pytest-xdist) per submission
    users: int  # the first of the worker users this grading claimed
    profile: str = "ci"  # the hypothesis profile of the tests (tests/conftest.py)
    slots: queue.Queue = field(default_factory=queue.Queue)

    @property
    def judge_tree(self) -> Path:
        return self.scratch / "judge"

    def config(self, package: Path, slot: int) -> SandboxConfig:
        return SandboxConfig(
            package=str(package),
            tree=str(self.judge_tree),
            mode=self.mode,
            slot=slot * self.judges,
            hidden=self.hidden,
            users=self.users,
            judge=None if self.mode == "same user" else self.users + JUDGE_USERS + slot,
            limits=self.limits,
        )

    @contextlib.contextmanager
    def judge_folder(self, slot: int) -> Iterator[Path]:
        """A folder of the judge's own for one run: the only one it may write."""
        judge = self.config(Path(), slot)
        with tempfile.TemporaryDirectory(prefix="tenxor-judge-", dir=self.scratch) as folder:
            if judge.judge is not None:
                os.chown(folder, judge.judge, judge.judges_group)
            try:
                yield Path(folder)
            finally:
                sweep(judge.judge)  # whatever a judge of this slot left running


def namespaces_allowed() -> bool:
    """Whether this process may make mount and network namespaces (root, and a platform
    that allows them)."""
    if not sys.platform.startswith("linux") or os.geteuid() != 0:
        return False
    probe = subprocess.run([sys.executable, "-c", NAMESPACE_PROBE], capture_output=True)
    return probe.returncode == 0


def sandbox_mode(requested: str = "auto") -> str:
    """The strongest sandbox this machine allows, or the weaker one `requested`."""
    if os.geteuid() != 0:
        return "same user"
    if requested == "auto":
        return "isolated" if namespaces_allowed() else "separate user"
    if requested == "isolated" and not namespaces_allowed():
        raise OSError("an isolated sandbox needs mount and network namespaces, not allowed here")
    return requested


def hide(folders: list[Path]) -> dict[Path, int]:
    """Take every permission of other users off `folders` (the worker is such a user); the
    modes they had, for `restore`."""
    modes = {folder: folder.stat().st_mode & 0o7777 for folder in folders if folder.exists()}
    for folder, mode in modes.items():
        folder.chmod(mode & ~0o007)
    return modes


def restore(modes: dict[Path, int]) -> None:
    """Give folders back the modes they had."""
    for folder, mode in modes.items():
        with contextlib.suppress(FileNotFoundError):
            folder.chmod(mode)


def scratch_base(mode: str) -> str:
    """Where grading makes its scratch folder: the temporary folder, unless a judge's user
    could not reach it (a TMPDIR below a private home folder), then /tmp."""
    base = Path(tempfile.gettempdir()).resolve()
    if mode == "same user" or all(p.stat().st_mode & 0o001 for p in (base, *base.parents)):
        return str(base)
    return "/tmp"


@contextlib.contextmanager
def bench_for(
    course: Path,
    seen: list[Path],
    limits: SandboxLimits,
    jobs: int,
    mode: str = "auto",
    profile: str = "ci",
) -> Iterator[Bench]:
    """Set up grading: the judge's tree, the sandbox mode, and the folders (`seen`: the
    output and the submissions) that the worker must not see, nor the course."""
    mode = sandbox_mode(mode)
    judges = max(1, (os.cpu_count() or 1) // max(1, jobs))
    if max(1, jobs) * judges > JUDGE_USERS or jobs >= BLOCK - JUDGE_USERS:
        raise ValueError(f"--jobs {jobs} needs more than the {BLOCK} users of a block")
    with (
        tempfile.TemporaryDirectory(prefix="tenxor-grading-", dir=scratch_base(mode)) as scratch,
        contextlib.ExitStack() as claimed,
    ):
        users = claimed.enter_context(grading_users()) if mode != "same user" else 0
        if mode != "same user":  # the judges may read their tree; workers nothing of it
            os.chown(scratch, 0, users + BLOCK - 1)
            os.chmod(scratch, 0o750)
        hidden = [course.resolve(), Path(scratch), *[p.resolve() for p in seen]]
        if mode == "separate user":
            claimed.callback(restore, hide([course.resolve(), *[p.resolve() for p in seen]]))
        bench = Bench(
            course, Path(scratch), mode, tuple(map(str, hidden)), limits, judges, users, profile
        )
        write_tree(course, bench.judge_tree, JUDGE_TREE_EXCLUDED)
        for slot in range(max(1, jobs)):
            bench.slots.put(slot)
        yield bench


def import_problems(bench: Bench, packages: list[Path], slot: int) -> list[str | None]:
    """Why each package does not import in a sandbox worker (None where it does). The
    workers are tried by a process of the judge's user (instructor.judge.check_imports):
    grading itself reads nothing a worker sends, only what that process wrote, as data."""
    with bench.judge_folder(slot) as folder:
        configs = [bench.config(package, slot).to_json() for package in packages]
        (folder / "configs.json").write_text(json.dumps(configs), encoding="utf-8")
        command = [sys.executable, "-c", CHECK_IMPORTS, str(bench.judge_tree), str(folder)]
        with (folder / "output.txt").open("wb") as output:
            start(command, bench.judge_tree, output, JUDGE_LIMITS, "ci", JUDGE_SETTINGS).wait()
        try:
            problems = json.loads((folder / "problems.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            problems = None
    if type(problems) is not list or len(problems) != len(packages):
        return ["the import check ended without an answer"] * len(packages)
    return [p[:1000] if type(p) is str else None if p is None else "?" for p in problems]


def assemble(bench: Bench, folder: Path, package: Path) -> Assembly:
    """Put the submission's usable exercise modules into a copy of the release's package (the
    judge's tree's, where every exercise is a stub)."""
    shutil.copytree(bench.judge_tree / "tenxor", package / "tenxor")
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


def set_aside_broken(bench: Bench, assembly: Assembly, slot: int) -> None:
    """The submission does not import: find which of its modules do not, each on its own
    among stubs, and put their stubs in their place."""
    alone = []
    for number, module in enumerate(assembly.sources):
        alone.append(assembly.package.parent / f"alone-{number}")
        shutil.copytree(assembly.package / "tenxor", alone[-1] / "tenxor")
        put(alone[-1], {**assembly.stubs, module: assembly.sources[module]})
    for module, problem in zip(assembly.sources, import_problems(bench, alone, slot)):
        if problem:
            assembly.broken[module] = f"{module} does not import: {problem}"
            put(assembly.package, {module: assembly.stubs[module]})
    assembly.taken = [module for module in assembly.taken if module not in assembly.broken]


def grading_options(selection: list[str]) -> list[str]:
    """pytest options for the exercise tests of the selected exercises."""
    chosen = [option for exercise_id in selection for option in ("--exercise", exercise_id)]
    return ["-m", "not provided", *chosen]


def reference_tests(course: Path, selection: list[str]) -> dict[str, str]:
    """The tests (and their exercises) collected from the instructor's tree: what is graded."""
    options = ["--collect-only", f"--ignore={course / 'tests' / 'tooling'}"]
    options += ["-p", "_hypothesis_pytestplugin", *grading_options(selection)]
    run = run_tests(course, options, settings=JUDGE_SETTINGS)
    if run.problem or run.collect_errors or not run.collected:
        problems = "; ".join(f"{p}: {m}" for p, m in run.collect_errors.items()) or run.problem
        raise RuntimeError(f"the instructor's tests cannot be collected: {problems}")
    return run.collected


def reason(result: Result | None) -> str:
    """Why a test did not pass, in one line."""
    if result is None:
        return "never ran"
    if result.unfinished and result.unfinished == result.exercise:
        return "not done: it still raises NotImplementedError"
    if result.unfinished:
        return f"needs exercise {result.unfinished}, which still raises NotImplementedError"
    if result.message.startswith("MemoryError"):
        return "MemoryError: it went over the memory limit"
    first = result.message.splitlines()[0] if result.message else result.outcome
    line = result.failure.line if result.failure else None
    return f"{first[:200]} ({line})" if line else first[:200]


def entry_output(
    passed: int,
    failed: list[tuple[str, str]],
    problem: str | None,
    explained: list[tuple[str, Failure]] = (),
) -> str:
    """The text of one Gradescope test entry: counts, module problem, the first failure's
    record in full (the call, what came back, what was expected), then the failing tests."""
    lines = [problem + "; its exercises score 0."] if problem else []
    lines.append(f"{passed} of {passed + len(failed)} tests passed.")
    for name, record in explained[:1]:
        lines += [f"First failure, {name}:", *(f"  {line}" for line in record_in_words(record))]
        lines.append("")
    lines += [f"FAIL {name}: {why}" for name, why in failed[:8]]
    if len(failed) > 8:
        lines.append(f"... and {len(failed) - 8} more failing tests")
    text = "\n".join(lines)
    return text if len(text) <= ENTRY_OUTPUT_CHARS else text[:ENTRY_OUTPUT_CHARS] + "\n..."


def exercise_entries(
    item: Exercise, tests: list[str], run: Run, assembly: Assembly
) -> list[dict[str, Any]]:
    """The Gradescope test entries of one exercise: its public tests and its hidden tests,
    each test worth an equal share of the exercise's points."""
    entries, share = [], item.points / len(tests)
    problem = assembly.problem_of(item.path)
    for hidden in (False, True):
        part = [test for test in tests if test.startswith(HIDDEN_TESTS) == hidden]
        if not part:
            continue
        results = [run.results.get(test) for test in part]
        passed = sum(1 for result in results if result is not None and result.passed)
        failed = [
            (short_name(test), reason(result))
            for test, result in zip(part, results)
            if result is None or not result.passed
        ]
        records = [
            (short_name(test), r.failure)
            for test, r in zip(part, results)
            if r is not None and not r.passed and r.failure and not r.failure.unfinished
        ]
        entries.append(
            {
                "name": f"{item.id} {item.title} ({'hidden' if hidden else 'public'} tests)",
                "number": item.id,
                "score": round(share * passed, 4),
                "max_score": round(share * len(part), 4),
                "status": "passed" if not failed else "failed",
                "output": entry_output(passed, failed, problem, records[:1]),
                "visibility": "after_published" if hidden else "visible",
                "tags": [f"chapter {item.id.split('.')[0]}"],
            }
        )
    return entries


def tool_versions() -> dict[str, str]:
    """The versions of what graded the submission."""
    versions = {"python": platform.python_version()}
    for package in ("tenxor", "pytest", "hypothesis", "numpy"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = "not installed"
    return versions


def summary_output(assembly: Assembly, run: Run, limits: SandboxLimits, mode: str) -> str:
    """What the whole submission's grading should tell the student."""
    lines = [f"Graded modules: {', '.join(assembly.taken) or 'none'}."]
    lines += [f"Not graded: {assembly.problem_of(module)}." for module in assembly.missing]
    lines += [f"Not graded: {why}." for why in assembly.broken.values()]
    if assembly.ignored:
        shown = ", ".join(assembly.ignored[:10]) + (" ..." if len(assembly.ignored) > 10 else "")
        lines.append(
            f"Ignored {len(assembly.ignored)} other files (only exercise modules are graded, "
            f"with the course's own tests): {shown}."
        )
    if run.problem:
        lines.append(f"The test run stopped early: {run.problem}.")
    lines += [
        f"Test file {path} could not be loaded: {m}" for path, m in run.collect_errors.items()
    ]
    lines.append(PROTECTIONS[mode])
    lines.append(
        f"Limits: {limits.call_cpu_seconds:g} s of CPU time per call of your functions "
        f"({limits.call_wall_seconds:g} s by the clock), {limits.exercise_cpu_seconds:g} s "
        f"per exercise, {limits.memory_mb} MB of memory per process ({limits.group_memory_mb} "
        f"MB for all your processes together); after {limits.strikes} calls of an "
        "exercise that crash or hang, its other tests fail without running."
    )
    return "\n".join(lines)


def results_json(
    expected: dict[str, str],
    run: Run,
    assembly: Assembly,
    limits: SandboxLimits,
    mode: str,
    seconds: float,
) -> dict[str, Any]:
    """The Gradescope results of one submission, scored against the `expected` tests."""
    tests, per_exercise = [], {}
    for item in CATALOG:
        mine = [test for test, owner in expected.items() if owner == item.id]
        if mine:
            entries = exercise_entries(item, mine, run, assembly)
            tests += entries
            per_exercise[item.id] = round(sum(entry["score"] for entry in entries), 4)
    max_score = sum(BY_ID[exercise_id].points for exercise_id in per_exercise)
    return {
        "score": round(sum(per_exercise.values()), 2),
        "execution_time": round(seconds, 2),
        "output": summary_output(assembly, run, limits, mode),
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": tests,
        "extra_data": {
            "max_score": max_score,
            "exercises": per_exercise,
            "versions": tool_versions(),
            "taken": assembly.taken,
            "ignored_files": len(assembly.ignored),
            "sandbox": mode,
        },
    }


def write_atomically(path: Path, text: str) -> None:
    """Write a file so that it is either absent, or complete."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(handle, "w", encoding="utf-8", newline="") as stream:
        stream.write(text)
        stream.flush()
        os.fsync(stream.fileno())
    os.replace(temporary, path)


def submission_digest(folder: Path) -> str:
    """A fingerprint of the exercise modules a submission holds."""
    digest = hashlib.sha256()
    for module in EXERCISE_MODULES:
        found = locate(folder, module)
        data = found.read_bytes() if found and not file_problem(folder, found, module) else b"-"
        digest.update(module.encode() + b"\0" + data + b"\0")
    return digest.hexdigest()


def judge_options(bench: Bench, files: list[str], selection: list[str], log: Path) -> list:
    """The judge's pytest options: its plugin, pytest-reportlog's log of every report,
    pytest-timeout's limit per test, pytest-xdist's processes, and the tests to run. Only
    these plugins load (JUDGE_SETTINGS turns pytest's automatic loading off)."""
    plugins = ["instructor.judge", "_hypothesis_pytestplugin", "pytest_timeout"]
    plugins += ["pytest_reportlog.plugin", "no:cacheprovider"]
    options = [option for plugin in plugins for option in ("-p", plugin)]
    options += ["-W", "ignore::pytest.PytestAssertRewriteWarning", "-q", "--tb=no"]
    options += [f"--report-log={log}", f"--timeout={JUDGE_LIMITS.test_seconds:g}"]
    if bench.judges > 1:
        options += ["-p", "xdist.plugin", "-n", str(bench.judges), "--dist", "load"]
        options.append("--max-worker-restart=0")  # a new worker would take a used slot
    return [*options, *files, *grading_options(selection)]


def failure_of(report: dict[str, Any]) -> Failure:
    """What a failed report of the log says: the judge's record, else pytest's last lines
    (strings only, each bounded: the log is the judge's, read as data)."""
    words = report.get("failure")
    if isinstance(words, dict):
        said = {k: v[:FIELD_CHARS] if isinstance(v, str) else v for k, v in words.items()}
        said = {k: v for k, v in said.items() if isinstance(v, (str, bool, int))}
        record = Failure.from_dict(said)
        return dataclasses.replace(
            record, unfinished=record.unfinished if record.unfinished in BY_ID else None
        )
    longrepr = report.get("longrepr")
    text = longrepr if isinstance(longrepr, str) else json.dumps(longrepr)[-600:]
    return Failure("\n".join(str(text).strip().splitlines()[-6:])[:600])


def read_report_log(log: Path, expected: dict[str, str], judge: int) -> Run:
    """The results in a pytest-reportlog file: a test passes when none of its setup, call
    and teardown failed and its call passed. Only reports of the `expected` tests made by
    the judge's user count; a line that is not such a report is passed over."""
    run = Run(collected=dict(expected))
    lines = log.read_text(encoding="utf-8").splitlines() if log.exists() else []
    for line in lines:
        try:
            report = json.loads(line)
        except ValueError:
            continue
        if not isinstance(report, dict):
            continue
        kind, test = report.get("$report_type"), report.get("nodeid", "")
        if kind == "TestReport" and report.get("judge_user") != judge:
            continue
        if kind == "CollectReport" and report.get("outcome") == "failed":
            run.collect_errors[test] = failure_of(report).message
        if kind != "TestReport" or test not in expected:
            continue
        owner, outcome, known = expected[test], report.get("outcome"), run.results.get(test)
        if known is not None and not known.passed:
            continue  # the first failure stands
        if outcome == "failed":
            run.results[test] = Result.of_record(test, owner, "failed", failure_of(report))
        elif outcome == "skipped":
            reason = report.get("longrepr")
            message = reason[-1] if isinstance(reason, list) and reason else "skipped"
            run.results[test] = Result(test, owner, "skipped", str(message))
        elif report.get("when") == "call":
            run.results[test] = Result(test, owner, "passed")
    return run


def run_judge(bench: Bench, package: Path, slot: int, expected: dict[str, str]) -> tuple[Run, bool]:
    """Run the tests of `expected` in the judge, against the submission in `package`; the
    run, and whether the package imported (the judge's first worker tells)."""
    selection = sorted(set(expected.values()), key=list(BY_ID).index)
    files = sorted({test.split("::")[0] for test in expected})
    started = time.monotonic()
    config = bench.config(package, slot)
    with bench.judge_folder(slot) as folder:
        log, output_path = folder / "reports.jsonl", folder / "output.txt"
        command = [sys.executable, "-c", BOOTSTRAP, str(bench.judge_tree)]
        command += judge_options(bench, files, selection, log)
        not_imported = folder / "does-not-import.txt"
        settings = {**JUDGE_SETTINGS, "TENXOR_SANDBOX": config.to_json()}
        settings["TENXOR_IMPORT_PROBLEM"] = str(not_imported)
        with output_path.open("wb") as output:
            process = start(
                command, bench.judge_tree, output, JUDGE_LIMITS, bench.profile, settings
            )
            process.wait()
        judge = os.geteuid() if config.judge is None else config.judge
        run = read_report_log(log, expected, judge)
        run.output = tail(output_path)
        imported = not not_imported.exists()
    if process.returncode not in (0, 1):  # 1: some tests failed, as expected of most
        run.problem = f"the judge ended ({exit_in_words(process.returncode)})"
    record_not_run(run, "the judge did not run it")
    run.seconds = time.monotonic() - started
    return run, imported


def grade_submission(bench: Bench, folder: Path, expected: dict[str, str]) -> dict[str, Any]:
    """Grade one submission folder against the `expected` tests; its Gradescope results."""
    started, slot = time.monotonic(), bench.slots.get()
    try:
        with tempfile.TemporaryDirectory(prefix="submission-", dir=bench.scratch) as scratch:
            assembly = assemble(bench, folder, Path(scratch) / "package")
            run, imported = run_judge(bench, assembly.package, slot, expected)
            if not imported and assembly.sources:  # again, without the modules that break it
                set_aside_broken(bench, assembly, slot)
                run, _ = run_judge(bench, assembly.package, slot, expected)
    finally:
        bench.slots.put(slot)
    seconds = time.monotonic() - started
    results = results_json(expected, run, assembly, bench.limits, bench.mode, seconds)
    results["extra_data"]["submission"] = submission_digest(folder)
    return results


def gradebook_csv(rows: dict[str, dict[str, Any]], selection: list[str]) -> str:
    """The gradebook: one row per student, one column per exercise, total and max."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["student", *selection, "total", "max"])
    for student in sorted(rows):
        results = rows[student]
        scores = results["extra_data"]["exercises"]
        cells = [f"{scores.get(exercise_id, 0):g}" for exercise_id in selection]
        max_score = results["extra_data"]["max_score"]
        writer.writerow([student, *cells, f"{results['score']:g}", max_score])
    return buffer.getvalue()


class ProgressBar:
    """A one-line progress bar on stderr (one line per step when not on a terminal)."""

    def __init__(self, total: int, stream: Any = None) -> None:
        self.total, self.done, self.stream = total, 0, stream or sys.stderr
        self.started = time.monotonic()

    def step(self, label: str) -> None:
        self.done += 1
        width = 30
        filled = width * self.done // max(self.total, 1)
        elapsed = time.monotonic() - self.started
        bar = "#" * filled + "." * (width - filled)
        line = f"[{bar}] {self.done}/{self.total} {elapsed:5.0f} s  {label}"
        if self.stream.isatty():
            end = "\n" if self.done == self.total else ""
            self.stream.write("\r" + line[:120].ljust(120) + end)
        else:
            self.stream.write(line + "\n")
        self.stream.flush()


def students_in(folder: Path) -> dict[str, Path]:
    """The submissions of a batch: each sub-folder is one student, named after it."""
    return {
        path.name: path
        for path in sorted(folder.iterdir())
        if path.is_dir() and not path.name.startswith(".")
    }


def refused_names(submissions: dict[str, Path]) -> list[str]:
    """The students whose folder name is that of a file grading writes beside their results
    (their results would overwrite it, or it theirs)."""
    return [student for student in submissions if student in OUTPUT_FILES]


def text_digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def read_record(output: Path) -> dict[str, str]:
    """Grading's own record of the results files it wrote: student -> digest of the text."""
    try:
        record = json.loads((output / RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return record if isinstance(record, dict) else {}


def earlier_results(
    submissions: dict[str, Path],
    results_path: Callable[[str], Path],
    graded: list[str],
    record: dict[str, str],
) -> tuple[dict[str, dict[str, Any]], dict[str, Path]]:
    """The results already written for the same submitted modules and the same exercises,
    exactly as grading recorded writing them, and the submissions still to grade."""
    rows, pending = {}, {}
    for student, folder in submissions.items():
        previous = results_path(student)
        text = previous.read_text(encoding="utf-8") if previous.is_file() else None
        if text is not None and record.get(student) == text_digest(text):
            results = json.loads(text)
            same = results.get("extra_data", {}).get("submission") == submission_digest(folder)
            if same and sorted(results["extra_data"]["exercises"]) == sorted(graded):
                rows[student] = results
                continue
        pending[student] = folder
    return rows, pending


def grade_batch(
    course: Path,
    submissions: dict[str, Path],
    output: Path,
    selection: list[str] | None = None,
    limits: SandboxLimits = GRADING_LIMITS,
    jobs: int = 1,
    report: Callable[[str], None] | None = None,
    single: bool = False,
    sandbox: str = "auto",
    profile: str = "ci",
) -> Path:
    """Grade every submission into output/<student>/results.json (output/results.json for a
    `single` submission, as Gradescope expects) and output/gradebook.csv.

    `profile` is the tests' hypothesis profile (EXAMPLES): "ci" (100 examples a property),
    "ci-quick" (10) or "ci-thorough" (1000), each the same examples on every run. A student
    whose results.json already exists for the same submitted modules, as grading recorded
    writing it, is not graded again, so an interrupted batch resumes where it stopped. A
    student folder named like a file of the output is refused (`report` says so). Returns
    the gradebook's path.
    """

    def results_path(student: str) -> Path:
        return output / "results.json" if single else output / student / "results.json"

    selection = selection or [item.id for item in CATALOG]
    for student in refused_names(submissions):
        if report:
            report(f"Not graded: {student}: grading writes a file of that name into {output}.")
        submissions = {name: folder for name, folder in submissions.items() if name != student}
    seen = [output, *{folder.parent if not single else folder for folder in submissions.values()}]
    with ThreadPoolExecutor(max_workers=1) as collector:
        collecting = collector.submit(reference_tests, course, selection)
        with (
            bench_for(course, seen, limits, jobs, sandbox, profile) as bench,  # set up meanwhile
            ThreadPoolExecutor(max_workers=max(1, jobs)) as pool,
        ):
            expected = collecting.result()
            graded = sorted(set(expected.values()), key=list(BY_ID).index)
            record = read_record(output)
            rows, pending = earlier_results(submissions, results_path, graded, record)
            if report and rows:
                report(f"{len(rows)} students already graded; grading the other {len(pending)}.")
            bar = ProgressBar(len(pending))
            futures = {
                pool.submit(grade_submission, bench, folder, expected): student
                for student, folder in pending.items()
            }
            for future in as_completed(futures):
                student = futures[future]
                results = future.result()
                text = json.dumps(results, indent=1)
                record[student] = text_digest(text)  # first: a results file it lacks is redone
                write_atomically(output / RECORD, json.dumps(record, indent=1))
                write_atomically(results_path(student), text)
                rows[student] = results
                write_atomically(output / "gradebook.csv", gradebook_csv(rows, graded))
                bar.step(f"{student}: {results['score']:g}/{results['extra_data']['max_score']}")
    gradebook = output / "gradebook.csv"
    write_atomically(gradebook, gradebook_csv(rows, graded))
    return gradebook
