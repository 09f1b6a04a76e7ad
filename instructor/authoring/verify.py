"""The gates that prove every exercise is graded.

1. reference: the instructor's tree passes every test, public and hidden (run in gate 3's
   probe tree, whose every line is where the tree has it: the same run shows which solution
   regions each test reaches).
2. release: in the student release every exercise test fails with a NotImplementedError
   naming an exercise.
3. stubs: stubbing one exercise fails its own tests, and never a test of an exercise that does
   not depend on it. Two runs of a probe tree (the reference with a probe call at the top of
   every solution region) prove it for all exercises at once: with each test's own exercise
   stubbed, every test must fail; with nothing stubbed, a test may only reach the regions of
   its own exercise and the exercises it depends on. A test that never reaches a region runs
   exactly as before when that region is stubbed, so it stays green. (The run with nothing
   stubbed is gate 1's, where both gates run.)
4. catalog: catalog, solution regions and test markers match one to one; points add to 100.
5. notebooks: the release imports, and each of its notebooks runs up to its first unfinished
   exercise with nothing but NotImplementedErrors that name exercises.
6. chapters: a learner who has finished chapter k can run notebook k top to bottom: in a tree
   where the exercises of chapters up to k are the reference and every later one is a stub,
   no cell of notebook k raises, predictions and timings included, and every cell shows its
   stored output again (nbval runs it; cells tagged nbval-ignore-output are not compared).
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from instructor.entry_points import CELL_FINDINGS, PROBE, module_files
from tenxor.course.catalog import (
    BY_ID,
    CATALOG,
    CHAPTERS,
    COURSE_HIDDEN,
    COURSE_TESTS,
    HIDDEN_TESTS,
    RECORDS,
    TOOLING_TESTS,
    Chapter,
    catalog_problems,
    chapter_of_notebook,
    hidden_tests,
    hidden_tests_of,
    module_file,
    prerequisites,
    public_tests,
    tests_of,
)
from tenxor.course.engine import (
    BOOTSTRAP,
    ISOLATE,
    UNFINISHED,
    Limits,
    Run,
    exit_in_words,
    run_tests,
    start,
    tail,
)

from .regions import RegionError, regions_in
from .release import (
    INSTRUCTOR_ONLY,
    LOCAL_ONLY,
    NOT_NEEDED_FOR_TESTS,
    probed_source,
    stubbed_source,
    write_release,
    write_tree,
)

VERIFY_LIMITS = Limits(test_seconds=60.0, run_seconds=1800.0, memory_mb=4096, output_mb=64.0)
GATES = ("reference", "release", "stubs", "catalog", "notebooks", "chapters")
SHOWN = 12


@dataclass
class Gate:
    """The verdict of one gate: its name, what it checked, and every problem it found."""

    name: str
    checked: str = ""
    problems: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.problems


@dataclass(frozen=True)
class Scope:
    """The chapters a run of the gates covers: every one, or a few (while one is written)."""

    chapters: tuple[int, ...] = ()  # (): every chapter

    def covers(self, chapter: Chapter) -> bool:
        return not self.chapters or chapter.number in self.chapters

    def test_options(self, root: Path) -> list[str]:
        """pytest options for the tests of the covered chapters' exercises."""
        if not self.chapters:
            return []
        chosen = [item for item in CATALOG if self.covers(item.chapter)]
        files = {path: None for item in chosen for path in tests_of(item) + hidden_tests_of(item)}
        present = [path for path in files if (root / path).is_file()]
        return present + [option for item in chosen for option in ("--exercise", item.id)]

    def notebooks(self, root: Path) -> list[str]:
        """The notebooks of the covered chapters that the course at `root` holds."""
        return [chapter.notebook for chapter in CHAPTERS
                if self.covers(chapter) and (root / chapter.notebook).is_file()]  # fmt: skip


EVERY_CHAPTER = Scope()


def exercise_tests_of(run: Run) -> dict[str, str]:
    """The collected tests of a run that grade an exercise (tooling tests left out)."""
    return {test: owner for test, owner in run.collected.items() if owner in BY_ID}


def suite_options(root: Path) -> list[str]:
    """Every test of the course but the tooling's own (which run verify themselves)."""
    return [f"--ignore={root / TOOLING_TESTS}", "-q"]


def run_problems(run: Run) -> list[str]:
    """Problems of a run as a whole: test files that did not load, a run that ended early."""
    found = [
        f"{path} could not be loaded: {message}" for path, message in run.collect_errors.items()
    ]
    if run.problem:
        found.append(f"the test run ended early: {run.problem}")
    if not run.collected:
        found.append("no tests were collected")
    return found


def probe_tree(root: Path, scratch: Path) -> Path:
    """The probe tree of the course at `root`, written into `scratch` once: the tree with a
    probe call at the top of every solution region (each line where it was) and the probe
    plugin those calls reach."""
    probe = scratch / "probe"
    if probe.exists():
        return probe
    write_tree(root, probe, NOT_NEEDED_FOR_TESTS, rewrite=probed_source, bytecode=True)
    for relative in module_files(PROBE):
        (probe / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(root / relative, probe / relative)
    return probe


def probed_run(root: Path, scratch: Path, scope: Scope, *options: str) -> Run:
    """The tests of `scope` run on the probe tree with the probe plugin and `options`; each
    test's result records the solution regions it reached."""
    probe = probe_tree(root, scratch)
    arguments = [*suite_options(probe), *scope.test_options(probe), "-p", PROBE, *options]
    return run_tests(probe, arguments, VERIFY_LIMITS)


def gate_reference(run: Run) -> Gate:
    """Gate 1: the reference passes every public and hidden test, in the `run` of every test
    on the probe tree (its probe calls record which regions each test reaches, for gate 3)."""
    gate = Gate("reference", f"{len(run.collected)} tests on the reference tree")
    gate.problems += run_problems(run)
    for result in run.results.values():
        if not result.passed:
            gate.problems.append(
                f"{result.test} ({result.exercise}) {result.outcome}: {result.message}"
            )
    return gate


def gate_release(root: Path, scratch: Path, scope: Scope = EVERY_CHAPTER) -> Gate:
    """Gate 2: every exercise test fails in the release with a NotImplementedError naming an
    exercise (hidden tests are copied in for this gate only)."""
    release = scratch / "release"
    write_release(root, release)
    if (root / HIDDEN_TESTS).is_dir():
        shutil.copytree(
            root / HIDDEN_TESTS,
            release / HIDDEN_TESTS,
            ignore=shutil.ignore_patterns("__pycache__"),
        )
    options = [*suite_options(release), *scope.test_options(release), "-m", "not provided"]
    run = run_tests(release, options, VERIFY_LIMITS)
    tests = exercise_tests_of(run)
    gate = Gate("release", f"{len(tests)} exercise tests on the student release")
    gate.problems += run_problems(run)
    for test, owner in tests.items():
        result = run.results[test]
        if result.passed:
            gate.problems.append(f"exercise {owner}: {test} passes in the release")
        elif not result.unfinished:
            gate.problems.append(
                f"exercise {owner}: {test} fails in the release without a NotImplementedError "
                f"naming an exercise: {result.message.splitlines()[0] if result.message else ''}"
            )
    return gate


def gate_stubs(
    root: Path, scratch: Path, scope: Scope = EVERY_CHAPTER, reached: Run | None = None
) -> Gate:
    """Gate 3: each exercise's tests fail with it stubbed; tests only reach the regions of
    their own exercise and of the exercises it depends on (as the run `reached`, on the
    probe tree with nothing stubbed, recorded them: gate 1's run, else one of its own)."""
    stubbed = probed_run(root, scratch, scope, "-m", "not provided", "--stub-own")
    reached = reached or probed_run(root, scratch, scope, "-m", "not provided")
    tests = {t: owner for t, owner in exercise_tests_of(reached).items() if t in stubbed.collected}
    gate = Gate("stubs", f"{len(tests)} exercise tests, each with its own exercise stubbed")
    gate.problems += run_problems(reached) + run_problems(stubbed)
    for test, owner in tests.items():
        result = stubbed.results.get(test)
        if result is not None and result.passed:
            gate.problems.append(f"exercise {owner}: {test} still passes with {owner} stubbed")
        allowed = {owner} | prerequisites(owner)
        for other in sorted(set(reached.results[test].properties.get("reached", ())) - allowed):
            gate.problems.append(
                f"exercise {other}: stubbing it would fail {test}, a test of {owner}, "
                f"which does not depend on {other}"
            )
        if not reached.results[test].passed:
            gate.problems.append(f"{test} fails on the probe tree: {reached.results[test].message}")
    return gate


def chapter_files(chapter: Chapter) -> list[str]:
    """Every file a chapter of the manifest names: notebook, modules, test files."""
    modules = [module_file(module) for module in chapter.modules]
    return [chapter.notebook, *modules, *chapter.tests, *chapter.hidden]


def misplaced_test(test: str, owner: str) -> str | None:
    """What is wrong with where a test of exercise `owner` lives, or None: it must be in a
    test file of the exercise's chapter or in one that spans the chapters."""
    path, chapter = test.split("::")[0], BY_ID[owner].chapter
    if path in (*chapter.tests, *chapter.hidden, *COURSE_TESTS, *COURSE_HIDDEN):
        return None
    return (f"{test} tests exercise {owner}, but {path} is not a test file of chapter "
            f"{chapter.number} nor one that spans the chapters")  # fmt: skip


def manifest_problems(root: Path, owners: dict[str, str]) -> list[str]:
    """Problems of the chapter manifest against the course at `root`: a file it names that
    does not exist, a test file it does not name, a hidden test file outside the hidden
    folder, a test (by `owners`: test -> exercise) in the wrong chapter's file, a record that
    is not a frozen dataclass."""
    found = [f"chapter {chapter.number}: {path} does not exist"
             for chapter in CHAPTERS for path in chapter_files(chapter)
             if not (root / path).is_file()]  # fmt: skip
    on_disk = {path.relative_to(root).as_posix() for path in (root / "tests").rglob("test_*.py")}
    exercise_tests = {path for path in on_disk if not path.startswith(TOOLING_TESTS + "/")}
    named = set(public_tests() + hidden_tests())
    found += [f"{path} is in no chapter of the catalog" for path in sorted(exercise_tests - named)]
    notebooks = {path.relative_to(root).as_posix() for path in (root / "notebooks").glob("*.ipynb")}
    taught = {chapter.notebook for chapter in CHAPTERS}
    found += [f"{path} is in no chapter of the catalog" for path in sorted(notebooks - taught)]
    found += [f"hidden test file {path} is not in {HIDDEN_TESTS}/"
              for path in hidden_tests() if not path.startswith(HIDDEN_TESTS + "/")]  # fmt: skip
    found += [problem for test, owner in sorted(owners.items())
              if (problem := misplaced_test(test, owner))]  # fmt: skip
    found += [f"record {name} is not a frozen dataclass" for name in RECORDS
              if not is_frozen_dataclass(named_object(name))]  # fmt: skip
    return found


def named_object(name: str) -> object:
    """The object a dotted "module.attribute" name stands for (None when there is none)."""
    module, attribute = name.rsplit(".", 1)
    return getattr(importlib.import_module(module), attribute, None)


def is_frozen_dataclass(value: object) -> bool:
    """Whether `value` is a dataclass whose instances cannot be changed."""
    return dataclasses.is_dataclass(value) and value.__dataclass_params__.frozen


def region_problems(root: Path) -> list[str]:
    """Problems of the solution regions: each exercise has exactly one, inside its function."""
    try:
        regions = regions_in(root / "tenxor", set(BY_ID))
    except RegionError as error:
        return [str(error)]
    found = []
    for item in CATALOG:
        mine = [region for region in regions if region.exercise_id == item.id]
        if len(mine) != 1:
            found.append(f"exercise {item.id} has {len(mine)} solution regions, not 1")
            continue
        region = mine[0]
        if region.path != root / item.path:
            found.append(f"exercise {item.id}: its region is in {region.path}, not {item.path}")
            continue
        functions = [
            node
            for node in ast.walk(ast.parse(region.path.read_text(encoding="utf-8")))
            if isinstance(node, ast.FunctionDef) and node.name == item.function
        ]
        if not any(f.lineno < region.begin < region.end <= f.end_lineno + 1 for f in functions):
            found.append(
                f"exercise {item.id}: region at {item.path}:{region.begin} is not inside "
                f"function {item.function}"
            )
    return found


def gate_catalog(root: Path, reference: Run) -> Gate:
    """Gate 4: catalog, regions and test markers match one to one; points add up to 100."""
    gate = Gate("catalog", f"{len(CATALOG)} exercises, their regions and their tests")
    owners = exercise_tests_of(reference)
    gate.problems += catalog_problems() + region_problems(root) + manifest_problems(root, owners)
    tested = set(owners.values())
    gate.problems += [f"exercise {i.id} has no tests" for i in CATALOG if i.id not in tested]
    return gate


# The kernel's own log keeps to errors: its warnings (that it talks over TCP on this machine)
# are no finding of verify's, and would bury its findings.
KERNEL_QUIET = ["--IPKernelApp.log_level=ERROR"]
CELL_SECONDS = 120  # how long a notebook's cell may run, under nbclient or nbval


def first_check_cell(document: Any) -> int | None:
    """The position of a notebook's first cell that calls check(), if any."""
    for position, cell in enumerate(document.cells):
        if cell.cell_type == "code" and "check(" in cell.source:
            return position
    return None


def setup_cell(tree: Path) -> Any:
    """A code cell that makes a kernel import the package of `tree`, and nothing installed."""
    import nbformat

    return nbformat.v4.new_code_cell(ISOLATE.replace("sys.argv.pop(1)", repr(str(tree))))


def execute_notebook(notebook: Path, tree: Path) -> tuple[Any, Any]:
    """Run a notebook in a fresh kernel on the package of `tree`, from its own folder, until
    its first error; the executed notebook (a set-up cell added in front) and that error
    (a CellExecutionError), or None."""
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    document = nbformat.read(notebook, as_version=4)
    document.cells.insert(0, setup_cell(tree))
    client = NotebookClient(
        document, timeout=CELL_SECONDS, kernel_name="python3", extra_arguments=KERNEL_QUIET
    )
    client.resources = {"metadata": {"path": str(notebook.parent)}}
    try:
        client.execute()
    except CellExecutionError as error:
        return document, error
    return document, None


def first_error_cell(document: Any) -> int:
    """The position of the first cell with an error output in a notebook executed by
    execute_notebook: with its set-up cell in front, the cell's number counting from 1."""
    return next(
        position
        for position, cell in enumerate(document.cells)
        if any(output.get("output_type") == "error" for output in cell.get("outputs", []))
    )


def notebook_problems(notebook: Path, tree: Path) -> list[str]:
    """Run a notebook of the release in a fresh kernel until its first error; problems if that
    error is anything but a NotImplementedError naming an exercise, or if it comes before the
    notebook's first check() cell (a learner must get that far without finishing anything)."""
    document, error = execute_notebook(notebook, tree)
    name = notebook.relative_to(tree).as_posix()
    if error is not None:
        if error.ename != "NotImplementedError" or not UNFINISHED.match(error.evalue):
            return [
                f"{name}: a cell raised something else than an unfinished exercise: "
                f"{error.ename}: {error.evalue}"
            ]
        failed = first_error_cell(document)
        first_check = first_check_cell(document)
        if first_check is None or failed < first_check:
            return [
                f"{name}: cell {failed} raised before the notebook's first check() cell "
                f"({error.evalue}); a learner must get there without finishing an exercise"
            ]
    return []


IMPORTED = "tenxor imported"


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


def gate_notebooks(root: Path, scratch: Path, scope: Scope = EVERY_CHAPTER) -> Gate:
    """Gate 5: the release imports; its notebooks raise only NotImplementedErrors naming
    exercises."""
    release = scratch / "release"
    if not release.exists():
        write_release(root, release)
    notebooks = [release / notebook for notebook in scope.notebooks(release)]
    gate = Gate("notebooks", f"the release's import and its {len(notebooks)} notebooks")
    problem = import_problem(release, VERIFY_LIMITS)
    if problem:
        gate.problems.append(f"the release does not import: {problem}")
    for notebook in notebooks:
        gate.problems += notebook_problems(notebook, release)
    return gate


def chapter_tree(root: Path, destination: Path, chapter: Chapter) -> Path:
    """Write the course at `root` to `destination` as a learner has it after finishing
    `chapter`: the exercises of that chapter and of earlier ones keep their reference code,
    every later exercise is a stub."""
    later = {item.id for item in CATALOG if item.chapter.number > chapter.number}
    write_tree(
        root,
        destination,
        LOCAL_ONLY + INSTRUCTOR_ONLY,
        rewrite=lambda path: stubbed_source(path, stubbed=later),
    )
    return destination


def isolated(notebook: Path, tree: Path) -> list[int]:
    """Put setup_cell(tree) in front of `notebook` (in place). For each code cell, in nbval's
    numbering (the set-up cell is its cell 0), its place in the notebook as it was, counting
    every cell from 1 (the set-up cell's place is 0)."""
    import nbformat

    document = nbformat.read(notebook, as_version=4)
    document.cells.insert(0, setup_cell(tree))  # stored unrun: nbval compares no output of it
    nbformat.write(document, notebook)
    return [place for place, cell in enumerate(document.cells) if cell.cell_type == "code"]


# The tree of the instructor package running this, whose cell_findings plugin nbval loads.
INSTRUCTOR_TREE = Path(__file__).resolve().parents[2]


def nbval_findings(notebooks: list[Path], scratch: Path) -> tuple[list[dict], str]:
    """Run `notebooks` under nbval, each in a fresh kernel, comparing every stored output
    but those of cells tagged to be ignored; the failed cells (cell_findings' records), and
    pytest's output when it could not run them at all (else "")."""
    findings = scratch / "cell-findings.jsonl"
    command = [sys.executable, "-c", BOOTSTRAP, str(INSTRUCTOR_TREE), "-p", CELL_FINDINGS]
    command += ["--nbval", f"--nbval-cell-timeout={CELL_SECONDS}", "-p", "no:cacheprovider"]
    command += ["--color=no", "-q", f"--cell-findings={findings}", *map(str, notebooks)]
    done = subprocess.run(command, cwd=scratch, capture_output=True, text=True)
    lines = findings.read_text(encoding="utf-8").splitlines() if findings.exists() else []
    found = [json.loads(line) for line in lines]
    ran = done.returncode == 0 or (done.returncode == 1 and found)
    return found, "" if ran else (done.stdout + done.stderr).strip()[-2000:]


def cell_problem(name: str, place: int, finding: dict) -> str:
    """A problem of gate 6: the cell at `place` (counting from 1) of notebook `name` failed
    as cell_findings' `finding` says."""
    where = f"{name}: cell {place} (counting from 1)"
    if finding["raised"]:
        ename, evalue = finding["raised"]
        return f"{where} raised {ename}: {evalue}; the exercises up to this chapter are done"
    if finding["difference"]:
        return (f"{where} shows other output than the notebook stores (nbval: "
                f"{finding['difference']}, the stored output first); run the notebook again "
                "and save it")  # fmt: skip
    return f"{where} failed: {finding['why']}"


def gate_chapters(root: Path, scratch: Path, scope: Scope = EVERY_CHAPTER) -> Gate:
    """Gate 6: for every chapter k, notebook k runs top to bottom under nbval, reproducing its
    stored outputs, in a tree where the exercises of chapters up to k are done and the later
    ones are not."""
    notebooks = scope.notebooks(root)
    gate = Gate("chapters", f"{len(notebooks)} notebooks, each with its chapter finished, "
                "under nbval")  # fmt: skip
    places: dict[str, tuple[str, list[int]]] = {}
    for name in notebooks:
        chapter = chapter_of_notebook(name)
        tree = chapter_tree(root, scratch / f"chapter-{chapter.number}", chapter)
        places[str((tree / name).resolve())] = (name, isolated(tree / name, tree))
    if not places:
        return gate
    found, failure = nbval_findings(list(map(Path, places)), scratch)
    if failure:
        gate.problems.append(f"nbval could not run the notebooks: {failure}")
    first: dict[str, dict] = {}
    for finding in sorted(found, key=lambda finding: finding["code_cell"]):
        first.setdefault(str(Path(finding["notebook"]).resolve()), finding)
    for path, (name, cells) in places.items():
        if path in first:
            gate.problems.append(cell_problem(name, cells[first[path]["code_cell"]], first[path]))
    return gate


def verify(
    root: Path,
    gates: tuple[str, ...] = GATES,
    say: Callable[[str], None] = print,
    scope: Scope = EVERY_CHAPTER,
) -> list[Gate]:
    """Run the chosen gates on the course at `root` for the chapters of `scope` (the catalog
    gate always checks the whole catalog), saying each verdict as it comes."""
    unknown = [name for name in gates if name not in GATES]
    if unknown:
        raise ValueError(f"no gate {', '.join(unknown)}; the gates are {', '.join(GATES)}")
    verdicts, reference = [], None
    with tempfile.TemporaryDirectory(prefix="tenxor-verify-") as folder:
        scratch = Path(folder)
        for number, name in enumerate(GATES, start=1):
            if name not in gates:
                continue
            say(f"gate {number} ({name}) ...")
            if name == "reference":
                reference = probed_run(root, scratch, scope)
                gate = gate_reference(reference)
            elif name == "stubs":
                gate = gate_stubs(root, scratch, scope, reference)
            elif name == "catalog":
                whole = reference if reference and not scope.chapters else None
                collected = whole or run_tests(root, ["--collect-only", *suite_options(root)])
                gate = gate_catalog(root, collected)
            else:
                gate = SCRATCH_GATES[name](root, scratch, scope)
            verdicts.append(gate)
            say(describe(gate))
    return verdicts


def describe(gate: Gate) -> str:
    """A gate's verdict in a few lines."""
    verdict = "passed" if gate.passed else f"FAILED ({len(gate.problems)} problems)"
    lines = [f"gate {gate.name}: {verdict}: {gate.checked}"]
    lines += [f"  - {problem}" for problem in gate.problems[:SHOWN]]
    if len(gate.problems) > SHOWN:
        lines.append(f"  ... and {len(gate.problems) - SHOWN} more")
    return "\n".join(lines)


SCRATCH_GATES = {
    "release": gate_release,
    "stubs": gate_stubs,
    "notebooks": gate_notebooks,
    "chapters": gate_chapters,
}
