"""Grading's trust boundary, proved by enumeration: during a test of exercise X only X's
function runs the submission's code, for every test of the course; whatever else a test
calls or compares runs the instructor's reference in the judge."""

from __future__ import annotations

import os
import pickle
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from instructor.authoring.regions import find_regions
from instructor.authoring.release import stubbed_source
from instructor.grading.intake import assemble
from instructor.grading.judge_run import (
    HYPOTHESIS_FOLDER,
    record_examples,
    reference_tests,
    run_judge,
    run_judges,
)
from instructor.grading.setup import GradingSetup, grading_setup
from instructor.sandbox.launcher import SandboxLimits
from instructor.sandbox.protections import SandboxMode
from tenxor.course.catalog import BY_ID, CATALOG
from tenxor.course.engine import Run
from tests.tooling.planted import PLANTED, plant
from tests.tooling.submissions import (
    ALL_TRUE_ZIP,
    FIXTURES,
    ROOT,
    Fixture,
    in_region,
)
from tests.tooling.walking import OTHER_STUDENT, walk_in_a_worker

pytestmark = pytest.mark.provided

LIMITS = SandboxLimits(call_cpu_seconds=5.0, call_wall_seconds=30.0)
WALKING = SandboxLimits(call_cpu_seconds=120.0, call_wall_seconds=300.0, answer_mb=64)
EVERY_EXERCISE = [item.id for item in CATALOG]
FIRST_CHAPTERS = [item.id for item in CATALOG if item.chapter.number <= 3]

# Chapters 1 to 3 answering tensors, and the zip kernel lying (submissions.ALL_TRUE_ZIP).
ANSWERS_TENSORS = tuple(
    in_region(exercise_id, "import tenxor\nreturn tenxor.tensor([True])")
    for exercise_id in FIRST_CHAPTERS
)
HONEST_ZIP = Fixture("answers-tensors", ANSWERS_TENSORS, tuple(FIRST_CHAPTERS), "FAIL")
LYING_ZIP = Fixture(
    "answers-tensors-and-the-judges-comparisons",
    (*ANSWERS_TENSORS, in_region("4.6", ALL_TRUE_ZIP)),
    tuple(FIRST_CHAPTERS),
    "FAIL",
)


@pytest.fixture(scope="module")
def setup() -> Iterator[GradingSetup]:
    with grading_setup(
        Path(__file__).resolve().parents[2], [], LIMITS, 1, profile="ci-quick"
    ) as made:
        yield made


def judged(setup: GradingSetup, fixture: Fixture, selection: list[str]) -> Run:
    """The judge's run of the `selection`'s tests on a fixture submission."""
    expected = reference_tests(setup.judge_tree, selection)
    with tempfile.TemporaryDirectory(prefix="submission-", dir=setup.scratch) as scratch:
        submission = fixture.build(Path(scratch) / "submission")
        assembly = assemble(setup.release_tree, submission, Path(scratch) / "package")
        run, imported = run_judge(setup, assembly.package, 0, expected)
    assert imported, f"the {fixture.name} submission did not import: {run.output}"
    return run


def crossings(run: Run) -> dict[str, set[str]]:
    """test -> the exercises whose functions it called in the worker (setup, call, teardown)."""
    found: dict[str, set[str]] = {}
    for note in run.notes:
        if note.get("event") == "crossed":
            found.setdefault(note["test"], set()).update(note["exercises"])
    return found


@pytest.fixture(scope="module")
def complete_run(setup: GradingSetup) -> Run:
    """Every test of the course, public and hidden, on the reference solutions."""
    return judged(setup, Fixture("complete", (), (), ""), EVERY_EXERCISE)


def test_a_complete_submission_passes_every_test_of_the_course(complete_run: Run) -> None:
    failed = {test: r.message for test, r in complete_run.results.items() if not r.passed}
    assert complete_run.results and not failed, f"tests that failed: {failed}"
    assert set(complete_run.results) == set(complete_run.collected)


def test_only_the_tests_own_exercise_runs_submitted_code(complete_run: Run) -> None:
    """For every test of the course: the exercises whose functions went to the worker are its
    own exercise at most."""
    crossed = crossings(complete_run)
    strays = {
        test: sorted(exercises - {complete_run.collected[test]})
        for test, exercises in crossed.items()
        if exercises - {complete_run.collected[test]}
    }
    assert not strays, f"tests whose calls of other exercises ran submitted code: {strays}"


def test_every_exercise_is_graded_through_the_worker(complete_run: Run) -> None:
    """The other side of the same invariant: each exercise has tests whose calls of its
    function the submission answered (else it would be graded on the reference)."""
    crossed = crossings(complete_run)
    reached = {exercise for exercises in crossed.values() for exercise in exercises}
    assert reached == set(BY_ID), f"exercises never called in the worker: {set(BY_ID) - reached}"
    tests_of = {exercise: 0 for exercise in BY_ID}
    for test, exercise in complete_run.collected.items():
        tests_of[exercise] += exercise in crossed.get(test, set())
    assert all(tests_of.values()), f"tests per exercise that reached the worker: {tests_of}"


def test_the_judges_can_read_what_collecting_their_tests_recorded_in_their_tree(setup):
    """Collecting the tests to grade has hypothesis record the constants of the tree's
    modules in the judges' tree, readable by the judges as the tree is (its folder keeps
    the workers out), so no judge works them out again."""
    reference_tests(setup.judge_tree, ["1.1"])
    recorded = [path for path in (setup.judge_tree / HYPOTHESIS_FOLDER).rglob("*")
                if path.is_file()]  # fmt: skip
    assert recorded, f"nothing recorded in {setup.judge_tree / HYPOTHESIS_FOLDER}"
    closed = [f"{path.name} {path.stat().st_mode & 0o777:o}" for path in recorded
              if path.stat().st_mode & 0o044 != 0o044]  # fmt: skip
    assert not closed, f"recorded files the judges may not read: {closed}"


def test_comparisons_answered_by_a_lying_kernel_earn_nothing(setup: GradingSetup) -> None:
    """Chapters 1 to 3 answering tensors where tests expect other values: a zip kernel that
    says every comparison holds passes no more of their tests than the honest one, since
    their comparisons never run submitted code."""
    passed = {}
    for fixture in (HONEST_ZIP, LYING_ZIP):
        run = judged(setup, fixture, FIRST_CHAPTERS)
        assert run.results, f"no test ran for {fixture.name}: {run.output}"
        passed[fixture.name] = {test for test, result in run.results.items() if result.passed}
    gained = sorted(passed[LYING_ZIP.name] - passed[HONEST_ZIP.name])
    assert not gained, f"tests that passed only because the zip kernel lied: {gained}"
    assert len(passed[HONEST_ZIP.name]) < 10, f"tests a tensor answer passes: {passed}"


def test_a_judge_of_several_submissions_gives_each_what_a_judge_of_its_own_gives(setup):
    """One judge grading submissions in turn (each property test's examples drawn once, with
    the reference, and replayed for each) gives each submission, test by test, the outcome,
    the failure record and the crossings into its worker that grading it alone gives; one
    that does not import is told apart, and the others are graded as ever."""
    named = {fixture.name: fixture for fixture in FIXTURES}
    fixtures = [named["wrong-byte-strides"], named["complete"], HONEST_ZIP]
    fixtures.insert(1, named["exception-at-import"])
    expected = reference_tests(setup.judge_tree, [e for e in FIRST_CHAPTERS if e[0] in "12"])
    with tempfile.TemporaryDirectory(prefix="submissions-", dir=setup.scratch) as scratch:
        packages = []
        for number, fixture in enumerate(fixtures):
            submission = fixture.build(Path(scratch) / f"submission-{number}")
            package = Path(scratch) / f"package-{number}"
            packages.append(assemble(setup.release_tree, submission, package).package)
        together = run_judges(setup, packages, 0, expected)
        alone = [run_judge(setup, package, 0, expected) for package in packages]
    for fixture, (run, imported), (own, own_imported) in zip(fixtures, together, alone):
        assert imported is own_imported, f"{fixture.name}: imported {imported} ({own_imported})"
        assert set(run.results) == set(expected), f"{fixture.name}: tests not run"
        differ = {
            test: (result, own.results.get(test))
            for test, result in run.results.items()
            if result != own.results.get(test)
        }
        assert not differ, f"{fixture.name}: (in turn, alone) where they differ: {differ}"
        assert crossings(run) == crossings(own), f"{fixture.name}: other calls into the worker"
    passed = [sum(r.passed for r in run.results.values()) for run, _ in together]
    assert passed[2] == len(expected) > passed[0] > passed[3], f"tests passed: {passed}"
    assert not together[1][1], "the submission that raises at import imported"


def test_judges_replay_the_examples_the_batch_recorded_once(setup: GradingSetup):
    """The batch's recorders draw each property test's examples once, with the reference
    (record_examples); judges given their files grade each submission test by test as judges
    drawing their own examples do, and replay those files' examples and no others: with every
    example taken out, the property tests a wrong submission failed pass."""
    named = {fixture.name: fixture for fixture in FIXTURES}
    fixtures = [named["wrong-byte-strides"], named["complete"]]
    expected = reference_tests(setup.judge_tree, [e for e in FIRST_CHAPTERS if e[0] == "1"])
    with tempfile.TemporaryDirectory(prefix="submissions-", dir=setup.scratch) as scratch:
        folder = Path(scratch)
        built = [(f.build(folder / f.name), folder / str(n)) for n, f in enumerate(fixtures)]
        packages = [assemble(setup.release_tree, *each).package for each in built]
        drawn = run_judges(setup, packages, 0, expected)
        files = record_examples(setup, expected)
        try:
            assert files == setup.examples and all(f.is_file() for f in files), files
            closed = not setup.scratch.stat().st_mode & 0o007  # to every worker's user
            assert closed and all(f.parent == setup.scratch for f in files), files
            replayed = run_judges(setup, packages, 0, expected)
            tests = {test for f in files for test in pickle.loads(f.read_bytes())}
            for file in files:  # every property test recorded with no example at all
                file.write_bytes(pickle.dumps({test: pickle.dumps([]) for test in tests}))
            emptied = run_judges(setup, packages, 0, expected)
        finally:
            setup.examples = []
    assert len(tests) > 5, f"property tests recorded: {sorted(tests)}"
    for fixture, (run, _), (own, _) in zip(fixtures, replayed, drawn):
        differ = {
            t: (r, own.results.get(t)) for t, r in run.results.items() if r != own.results.get(t)
        }
        assert set(run.results) == set(expected) and not differ, f"{fixture.name}: {differ}"
    wrong, failed = emptied[0][0], {t for t, r in drawn[0][0].results.items() if not r.passed}
    now_passed = {t for t in failed if wrong.results[t].passed}
    assert now_passed and now_passed <= tests, f"failed {sorted(failed)}, now {sorted(now_passed)}"
    assert all(r.passed for r in emptied[1][0].results.values()), "the complete one failed"


WALK_TESTS = (
    "test_combine_fold_values_combines_each_element_as_fold_takes_it",
    "test_combine_fold_values_reads_a_row_at_a_time_as_fold_reaches_it",
)


@pytest.mark.parametrize(
    ("mistake", "caught_by"),
    [("combines each group into a list", WALK_TESTS[0]),
     ("reads every element at its own offset", WALK_TESTS[1])],
)  # fmt: skip
def test_the_fused_kernels_walk_is_watched_from_the_judge(setup: GradingSetup, mistake, caught_by):
    """The tests that watch how the fused kernel walks pass on the reference through the
    worker and fail its two wrong walks: fold takes the worker's iterator item by item, and
    the counting storage is read back from the judge, so what they observe is the judge's."""
    answer = next(a for a in PLANTED if a.mistake.startswith(mistake))
    wrong = judged(
        setup, Fixture(mistake, (lambda folder: plant(folder, answer),), (), ""), ["5.4"]
    )
    right = judged(setup, Fixture("reference", (), (), ""), ["5.4"])
    for run, passes in ((right, True), (wrong, False)):
        watched = {t: r for t, r in run.results.items() if caught_by in t}
        assert watched, f"no test {caught_by} ran: {run.output[-2000:]}"
        outcomes = {t: r.passed for t, r in watched.items()}
        assert all(outcomes.values()) if passes else not any(outcomes.values()), (
            f"{'reference' if passes else mistake}: {outcomes} "
            f"{[r.message for r in watched.values()][:2]}"
        )


def secrets() -> list[str]:
    """What no worker may find: lines of the reference solutions and of the hidden tests
    (distinct, 25 characters or more, not imports, and not in the release), and another
    student's file."""
    reference = []
    for path in sorted((ROOT / "tenxor").glob("*.py")):
        released = stubbed_source(path)
        for region in find_regions(path):
            body = path.read_text(encoding="utf-8").splitlines()[region.begin : region.end - 1]
            reference += [line.strip() for line in body if len(line.strip()) >= 25
                          and line.strip() not in released][:2]  # fmt: skip
    # The hidden tests' lines but imports: an import tells nothing, and a library may hold it.
    hidden = sorted({
        line.strip() for path in sorted((ROOT / "tests" / "hidden").glob("*.py"))
        for line in path.read_text(encoding="utf-8").splitlines() if len(line.strip()) >= 25
        and not line.startswith(("from ", "import "))
    })[::12]  # fmt: skip
    released = "\n".join(stubbed_source(path) for path in sorted((ROOT / "tenxor").rglob("*.py")))
    reference, hidden = ([line for line in lines if line not in released]  # the release's own
                         for lines in (reference, hidden))  # fmt: skip
    assert len(reference) > 30 and len(hidden) > 30
    return [OTHER_STUDENT, *reference, *hidden]


def strays_written(walked: dict) -> list[str]:
    """The folders a walking worker may write that are not its own: in an allowlisted view,
    all but its /tmp and /dev/shm; without one, all but its own folder and the machine's
    shared temporary folders (world-writable and sticky: it may remove no file of another's,
    and what it leaves there is removed when it stops)."""
    if SandboxMode(walked["mode"]).namespaces:
        return [f for f, _ in walked["writable"] if not f.startswith(("/tmp", "/dev/shm"))]
    own = f"{tempfile.gettempdir()}/tenxor-worker-"
    return [f for f, mode in walked["writable"]
            if not f.startswith(own) and mode & 0o1002 != 0o1002]  # fmt: skip


def found_in(walked: dict, needles: list[str]) -> list:
    """Where a walking worker found which needles, readably."""
    return [(path, [needles[n][:60] for n in held]) for path, held in walked["found"]]


@pytest.mark.skipif(os.geteuid() != 0, reason="workers get users of their own as root")
@pytest.mark.parametrize(
    "mode", [SandboxMode.ISOLATED, SandboxMode.SAME_USER, SandboxMode.SEPARATE_USER]
)
def test_a_worker_finds_nothing_of_the_course_and_writes_only_its_own_scratch(
    mode: SandboxMode, tmp_path: Path
):
    """Enumeration, not sampling: a worker walks every path it can open and reads every file
    (but what the operating system's packages installed), in each sandbox as grading sets it
    up for a batch whose submissions hold another student's file. Nothing holds a solution,
    a hidden test's text or another student's file (in an allowlisted view, not even one its
    user may read outside it), and it may write only its own scratch."""
    needles = secrets()
    other = tmp_path / "submissions" / "other" / "tenxor" / "storage.py"
    other.parent.mkdir(parents=True)
    other.write_text(f"{OTHER_STUDENT}\n", encoding="utf-8")
    closed = [tmp_path / "submissions", tmp_path / "grades"]
    walked = walk_in_a_worker(ROOT, mode, needles, closed, other=mode.namespaces)
    assert walked["mode"] == mode.value
    assert walked["files"] > 1000, f"the worker read only {walked['files']} files"
    assert not walked["found"], found_in(walked, needles)
    strays = strays_written(walked)
    assert not strays, f"folders outside its own scratch that the worker may write: {strays}"
