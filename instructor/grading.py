"""Grade submissions: a Gradescope `results.json` per student and one `gradebook.csv`.

Only the exercise modules (tenxor/storage.py, tenxor/strides.py, ...) are taken from a
submission; they go into a fresh copy of the instructor's tree, whose other modules and
public and hidden tests are used as they are. A module that is missing, not UTF-8, does not
compile or does not import is replaced by its stub, so it costs only its own exercises.
Scores are counted against the tests collected from the instructor's tree: a test that is
missing, crashed or never ran scores 0.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import platform
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from tenxor.course.catalog import BY_ID, CATALOG, Exercise
from tenxor.course.running import (
    ISOLATE,
    Limits,
    Result,
    Run,
    exit_in_words,
    run_tests,
    short_name,
    start,
    tail,
)

from .release import NOT_NEEDED_FOR_TESTS, write_tree

EXERCISE_MODULES: tuple[str, ...] = tuple(sorted({item.path for item in CATALOG}))
GRADING_LIMITS = Limits(test_seconds=10.0, run_seconds=600.0, memory_mb=2048, output_mb=8.0)
IMPORTED = "tenxor imported"
ENTRY_OUTPUT_CHARS = 3000
HIDDEN_TESTS = "tests/hidden/"
MAX_MODULE_BYTES = 1_000_000


@dataclass
class Assembly:
    """A submission put together with the instructor's tree, and what happened to its files."""

    tree: Path
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


def import_problem(tree: Path, limits: Limits) -> str | None:
    """Why `import tenxor` fails in a grading tree (in a limited process), if it does. Whatever
    the import prints is its own business: success is a line written to a file of its own."""
    script = ISOLATE + f"import tenxor\nopen(sys.argv[1], 'w').write({IMPORTED!r})\n"
    seconds = min(30.0, limits.run_seconds)
    with tempfile.TemporaryDirectory(prefix="tenxor-import-") as folder:
        done, output_path = Path(folder) / "imported", Path(folder) / "output"
        with output_path.open("wb") as output:
            command = [sys.executable, "-c", script, str(tree), str(done)]
            process = start(command, tree, output, limits, "ci")
            try:
                process.wait(timeout=seconds)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
                return f"importing it did not finish within {seconds:g} s"
        imported = done.exists() and done.read_text(encoding="utf-8") == IMPORTED
        printed = tail(output_path).strip().splitlines()
    if process.returncode == 0 and imported:
        return None
    if process.returncode == 0 or not printed:
        return f"importing it ended the process ({exit_in_words(process.returncode)})"
    return f"importing it raised {printed[-1][:300]}"


def submitted_files(folder: Path) -> list[str]:
    """Every file of a submission, relative to it."""
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())


def put(tree: Path, modules: dict[str, bytes]) -> None:
    """Write modules (path relative to the tree -> source) into a tree."""
    for module, data in modules.items():
        (tree / module).write_bytes(data)


def assemble(course: Path, folder: Path, tree: Path, limits: Limits) -> Assembly:
    """Build the grading tree for one submission: the instructor's tree with every exercise
    stubbed, then each usable exercise module of the submission copied over its stub."""
    write_tree(course, tree, NOT_NEEDED_FOR_TESTS)
    assembly, submitted, used = Assembly(tree), {}, set()
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
    stubs = {module: (tree / module).read_bytes() for module in submitted}
    put(tree, submitted)
    if import_problem(tree, limits):
        for module in submitted:  # which modules break the import, each on its own
            put(tree, {**stubs, module: submitted[module]})
            problem = import_problem(tree, limits)
            if problem:
                assembly.broken[module] = f"{module} does not import: {problem}"
        put(tree, {m: stubs[m] if m in assembly.broken else d for m, d in submitted.items()})
    assembly.taken = sorted(m for m in submitted if m not in assembly.broken)
    assembly.ignored = [name for name in submitted_files(folder) if name not in used]
    return assembly


def grading_options(selection: list[str]) -> list[str]:
    """pytest options for the exercise tests of the selected exercises."""
    chosen = [option for exercise_id in selection for option in ("--exercise", exercise_id)]
    return ["-m", "not provided", *chosen]


def reference_tests(course: Path, selection: list[str]) -> dict[str, str]:
    """The tests (and their exercises) collected from the instructor's tree: what is graded."""
    ignore = f"--ignore={course / 'tests' / 'tooling'}"
    run = run_tests(course, ["--collect-only", ignore, *grading_options(selection)])
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
    return f"{first[:200]} ({result.where})" if result.where else first[:200]


def entry_output(passed: int, failed: list[tuple[str, str]], problem: str | None) -> str:
    """The text of one Gradescope test entry: counts, module problem, failing tests."""
    lines = [problem + "; its exercises score 0."] if problem else []
    lines.append(f"{passed} of {passed + len(failed)} tests passed.")
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
        entries.append(
            {
                "name": f"{item.id} {item.title} ({'hidden' if hidden else 'public'} tests)",
                "number": item.id,
                "score": round(share * passed, 4),
                "max_score": round(share * len(part), 4),
                "status": "passed" if not failed else "failed",
                "output": entry_output(passed, failed, problem),
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


def summary_output(assembly: Assembly, run: Run, limits: Limits) -> str:
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
    if run.output_dropped:
        lines.append(f"The tests printed more than {limits.output_mb:g} MB; the rest was dropped.")
    lines += [
        f"Test file {path} could not be loaded: {m}" for path, m in run.collect_errors.items()
    ]
    lines.append(
        f"Limits: {limits.test_seconds:g} s per test, {limits.run_seconds:g} s in all, "
        f"{limits.memory_mb} MB of memory."
    )
    return "\n".join(lines)


def results_json(
    expected: dict[str, str], run: Run, assembly: Assembly, limits: Limits, seconds: float
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
        "output": summary_output(assembly, run, limits),
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": tests,
        "extra_data": {
            "max_score": max_score,
            "exercises": per_exercise,
            "versions": tool_versions(),
            "taken": assembly.taken,
            "ignored_files": len(assembly.ignored),
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


def grade_submission(
    course: Path,
    folder: Path,
    expected: dict[str, str],
    limits: Limits = GRADING_LIMITS,
) -> dict[str, Any]:
    """Grade one submission folder against the `expected` tests; its Gradescope results."""
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="tenxor-grade-") as scratch:
        assembly = assemble(course, folder, Path(scratch) / "course", limits)
        selection = sorted(set(expected.values()), key=list(BY_ID).index)
        files = sorted({test.split("::")[0] for test in expected})
        options = [*files, *grading_options(selection)]
        run = run_tests(assembly.tree, options, limits, "ci", list(expected))
    results = results_json(expected, run, assembly, limits, time.monotonic() - started)
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


def grade_batch(
    course: Path,
    submissions: dict[str, Path],
    output: Path,
    selection: list[str] | None = None,
    limits: Limits = GRADING_LIMITS,
    jobs: int = 1,
    report: Callable[[str], None] | None = None,
    single: bool = False,
) -> Path:
    """Grade every submission into output/<student>/results.json (output/results.json for a
    `single` submission, as Gradescope expects) and output/gradebook.csv.

    A student whose results.json already exists for the same submitted modules is not graded
    again, so an interrupted batch resumes where it stopped. Returns the gradebook's path.
    """

    def results_path(student: str) -> Path:
        return output / "results.json" if single else output / student / "results.json"

    selection = selection or [item.id for item in CATALOG]
    expected = reference_tests(course, selection)
    graded = sorted(set(expected.values()), key=list(BY_ID).index)
    rows, pending = {}, {}
    for student, folder in submissions.items():
        previous = results_path(student)
        if previous.exists():
            results = json.loads(previous.read_text(encoding="utf-8"))
            same = results.get("extra_data", {}).get("submission") == submission_digest(folder)
            if same and sorted(results["extra_data"]["exercises"]) == sorted(graded):
                rows[student] = results
                continue
        pending[student] = folder
    if report and rows:
        report(f"{len(rows)} students already graded; grading the other {len(pending)}.")
    bar = ProgressBar(len(pending))
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = {
            pool.submit(grade_submission, course, folder, expected, limits): student
            for student, folder in pending.items()
        }
        for future in as_completed(futures):
            student = futures[future]
            results = future.result()
            write_atomically(results_path(student), json.dumps(results, indent=1))
            rows[student] = results
            write_atomically(output / "gradebook.csv", gradebook_csv(rows, graded))
            bar.step(f"{student}: {results['score']:g}/{results['extra_data']['max_score']}")
    gradebook = output / "gradebook.csv"
    write_atomically(gradebook, gradebook_csv(rows, graded))
    return gradebook
