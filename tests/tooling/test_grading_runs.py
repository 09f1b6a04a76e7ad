"""Grading runs beyond the one batch of test_grading.py: a killed batch resumes without
regrading anyone, and the weaker sandboxes say what was off and still keep the course."""

from __future__ import annotations

import csv
import dataclasses
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from instructor.grading import GradingOptions, grade_batch, students_in
from instructor.grading.batch import OUTPUT_FILES
from instructor.sandbox.protections import SandboxMode
from instructor.sandbox.worker_group import own_cgroup
from tenxor.course.catalog import BY_ID
from tests.tooling.submissions import (
    CHAPTER_1,
    JUDGE_MARKER,
    ROOT,
    STORAGE,
    appended,
    complete_submission,
    copy_of_reference,
    replace_region,
    with_canary,
)
from tests.tooling.test_grading import (
    AS_ROOT,
    BATCH,
    EXAMPLES,
    LIMITS,
    course_state,
    everything_said,
    expected_score,
    no_cell_starts_a_formula,
    nothing_hidden_reached_a_student,
    nothing_planted_where_python_starts,
    protections_said,
    results_of,
)

pytestmark = pytest.mark.provided


# Every attack on what a worker can reach (files, processes, IPC, the grading environment),
# beside an honest submission: what each protected mode must stop in its own way.
ATTACKS = ("complete", "reads-hidden-tests-into-errors",
           "writes-into-the-output-and-other-students", "rewrites-the-judge-and-tests",
           "leaves-processes-running", "signals-the-judge", "writes-state-for-the-next-worker",
           "copies-the-installed-course", "replays-the-arguments-it-saw",
           "writes-a-pth-file-into-site-packages")  # fmt: skip
# Every attack on the verdicts and on what grading writes, which the judge alone decides in
# every mode: graded unprotected (and isolated, in test_grading's batch), they hold anywhere.
# Unprotected, a submission can read and change what the grading user can, so nothing else.
VERDICTS = ("complete", "answers-tensors-and-lies-in-comparisons",
            "forges-answers-on-the-channel", "answers-with-function-tags", "=SUM(1,2)")  # fmt: skip
CHOSEN = {
    SandboxMode.SEPARATE_USER: (*ATTACKS, "imports-lazily-loaded-modules"),  # through handles
    SandboxMode.SAME_USER: ATTACKS,
    SandboxMode.UNPROTECTED: VERDICTS,
}


@pytest.mark.skipif(not AS_ROOT, reason="only root can choose to separate users")
@pytest.mark.parametrize("mode", [SandboxMode.SEPARATE_USER, SandboxMode.SAME_USER,
                                  SandboxMode.UNPROTECTED])  # fmt: skip
def test_weaker_sandboxes_say_what_was_off_and_keep_the_course(tmp_path: Path, mode: SandboxMode):
    """Without namespaces the worker still cannot read or write the course and the output
    (grading checked that its user can open none of them); without a user of its own it
    still can, in its allowlisted view; unprotected it can, and the report says so. Either
    way each submission scores what its values earn."""
    course = with_canary(copy_of_reference(tmp_path / "course"))
    chosen = [fixture for fixture in BATCH if fixture.name in CHOSEN[mode]]
    assert len(chosen) == len(CHOSEN[mode])
    for fixture in chosen:
        fixture.build(tmp_path / "submissions" / fixture.name)
    submissions = students_in(tmp_path / "submissions")
    output = tmp_path / "grades"
    output.mkdir()
    before = course_state(course)  # its files, and the modes of the folders beside it
    grade_batch(
        course,
        submissions,
        output,
        GradingOptions(
            selection=CHAPTER_1,
            limits=LIMITS,
            jobs=2,
            sandbox=mode,
            profile=EXAMPLES,
            unprotected=True,
        ),
    )
    for fixture in chosen:
        if fixture.name not in submissions:
            continue
        results = results_of(output, fixture.name)
        done = set(CHAPTER_1) - set(fixture.lost)
        assert results["score"] == pytest.approx(expected_score(done)), fixture.name
        assert fixture.says in everything_said(results)
        assert results["extra_data"]["sandbox"] == mode.value
        protections_said(results["output"], mode)
    assert course_state(course) == before
    nothing_hidden_reached_a_student(output)
    nothing_planted_where_python_starts()
    no_cell_starts_a_formula(output / "gradebook.csv")
    assert not list(tmp_path.rglob(JUDGE_MARKER)), "the judge ran what a worker named"
    assert not processes_left_by(tmp_path), "a process a worker started still runs"


def test_the_restarts_an_exercise_causes_are_charged_to_it(tmp_path: Path):
    """A submission whose import sleeps 3 s and whose 1.1 ends its worker at every call.
    Each new worker's start-up is charged to 1.1, whose call stopped the last one: with 4 s
    by the clock to spend, 1.1 stops at most three workers per judge process (its first
    call's, then two more while its clock stays under 4 s: after a second 3 s start it is
    over), however many strikes it may have, and its other calls fail at once; 1.2 and 1.3,
    whose calls come in between and find the worker stopped, keep every point."""
    folder = tmp_path / "batch" / "sleeps-at-import"
    complete_submission(folder)
    appended(STORAGE, "import time\ntime.sleep(3)")(folder)
    replace_region(folder / STORAGE, "1.1", "import os\nos._exit(3)")
    limits = dataclasses.replace(LIMITS, exercise_wall_seconds=4.0, strikes=5)
    output = tmp_path / "grades"
    grade_batch(
        ROOT,
        students_in(tmp_path / "batch"),
        output,
        GradingOptions(selection=CHAPTER_1, limits=limits, profile=EXAMPLES),
    )
    results = results_of(output, "sleeps-at-import")
    points = {exercise_id: BY_ID[exercise_id].points for exercise_id in ("1.2", "1.3")}
    assert results["extra_data"]["exercises"] == {"1.1": 0, **points}
    reasons = [o["reason"] for o in results["extra_data"]["outcomes"].values()
               if o["exercise"] == "1.1"]  # fmt: skip
    stopped = [
        why for why in reasons if "worker ended (exit code 3)" in why and "not run" not in why
    ]
    judges = max(1, os.cpu_count() or 1)  # a batch of one job: a judge process per core at most
    assert 1 <= len(stopped) <= 3 * judges, reasons
    assert len(reasons) > 3 * judges and any("4 s by the clock" in why for why in reasons)


def processes_left_by(base: Path) -> list[str]:
    """Processes still running whose command line names `base`: a worker of the batch
    graded there, or a process it forked (the `sleep 600` is told apart only in the batch of
    test_grading, which runs beside this one)."""
    return [
        path.name
        for path in Path("/proc").iterdir()
        if path.name.isdigit()
        and path.name != str(os.getpid())
        and str(base).encode() in command_line(path)
    ]


def command_line(process: Path) -> bytes:
    try:
        return (process / "cmdline").read_bytes()
    except OSError:
        return b""


def test_a_student_named_like_an_output_file_is_refused_and_the_batch_goes_on(tmp_path):
    """Every name of a file grading or its after-grading commands write into the output."""
    reserved = sorted(name for name in OUTPUT_FILES if not name.startswith("."))
    for student in (*reserved, "complete"):
        complete_submission(tmp_path / "batch" / student)
    said: list[str] = []
    output = tmp_path / "grades"
    batch = students_in(tmp_path / "batch")
    grade_batch(
        ROOT,
        batch,
        output,
        GradingOptions(selection=["1.1"], limits=LIMITS, profile=EXAMPLES),
        report=said.append,
    )
    rows = list(csv.DictReader((output / "gradebook.csv").open()))
    assert [row["student"] for row in rows] == ["complete"]
    assert float(rows[0]["total"]) == BY_ID["1.1"].points
    refused = [name for name in reserved for line in said if line.startswith(f"Not graded: {name}")]
    assert refused == reserved and all(str(output) in line for line in said if "Not graded" in line)
    assert {"canvas.csv", "class-report.html", "report.html"} <= set(reserved)


def generated_submission(folder: Path, done: set[str]) -> None:
    """A complete submission with the chapter-1 exercises not in `done` left unstarted."""
    complete_submission(folder)
    for exercise_id in set(CHAPTER_1) - done:
        replace_region(folder / BY_ID[exercise_id].path, exercise_id, "raise NotImplementedError")


def wait_for(condition, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.2)


def batch_scratch(request, name: str) -> tuple[Path, dict[str, str]]:
    """Where a batch's judges and workers run: a folder of its own, which every user may
    enter (the judges' users must reach their tree), removed with the test; and the
    environment that makes a grading command use it."""
    scratch = Path(tempfile.mkdtemp(prefix=f"tenxor-{name}-batch-", dir="/tmp"))
    scratch.chmod(0o755)
    request.addfinalizer(lambda: shutil.rmtree(scratch, ignore_errors=True))
    return scratch, {**os.environ, "TMPDIR": str(scratch)}


def test_a_killed_batch_of_50_resumes_without_regrading_finished_students(tmp_path, request):
    generator = random.Random(7)
    done = {}
    graded = ["1.1", "1.3"]  # two quick exercises: the batch, not the tests, is on trial
    for number in range(50):
        student = f"student{number:02d}"
        done[student] = {e for e in graded if generator.random() < 0.5}
        generated_submission(tmp_path / "batch" / student, done[student])
    output = tmp_path / "grades"
    command = [
        sys.executable, "-m", "instructor.cli", "grade", str(tmp_path / "batch"), "--batch",
        "--out", str(output), "--exercise", "1.1", "--exercise", "1.3", "--jobs", "2",
        "--course", str(ROOT), "--examples", "10",
    ]  # fmt: skip
    scratch, environment = batch_scratch(request, "killed")
    batch = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=environment
    )
    wait_for(lambda: len(list(output.glob("*/results.json"))) >= 20, 300)
    batch.send_signal(signal.SIGKILL)
    batch.wait()

    def orphans() -> bytes:
        return subprocess.run(["pgrep", "-f", str(scratch)], capture_output=True).stdout

    wait_for(lambda: orphans() == b"", 10)  # its test processes die with it
    finished = {path.parent.name: path.stat().st_mtime_ns for path in output.glob("*/results.json")}
    assert 20 <= len(finished) < 50
    for student in finished:  # a results file is there whole, or not at all
        json.loads((output / student / "results.json").read_text())
    # The kill may cut a write short, leaving its temporary file; one is planted so that the
    # run resumed is always seen to remove them.
    cut_short = output / "student49" / ".results.json.k1ll3d0x.partial"
    cut_short.parent.mkdir(exist_ok=True)
    cut_short.write_text('{"score": 10')
    # A results file grading did not write as it is (here: a raised score) is graded again.
    forged = sorted(finished)[0]
    results = json.loads((output / forged / "results.json").read_text())
    results["score"] = 100
    (output / forged / "results.json").write_text(json.dumps(results, indent=1))
    del finished[forged]

    resumed = subprocess.run(command, capture_output=True, text=True, timeout=600, env=environment)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert not list(output.rglob(".*.*.*")), "a write cut short by the kill was left"
    assert f"{len(finished)} students graded before and unchanged" in resumed.stdout
    graded_now = len(done) - len(finished)
    assert f"Graded {graded_now} students, kept {len(finished)} graded before, refused 0." in (
        resumed.stdout
    ), resumed.stdout
    assert "Slowest: " in resumed.stdout and "about " in resumed.stderr, resumed.stderr[-2000:]
    for student, mtime in finished.items():
        assert (output / student / "results.json").stat().st_mtime_ns == mtime, student
    rows = list(csv.DictReader((output / "gradebook.csv").open()))
    assert [row["student"] for row in rows] == sorted(done)
    assert json.loads((output / forged / "results.json").read_text())["score"] != 100
    for row in rows:
        assert float(row["total"]) == pytest.approx(expected_score(done[row["student"]]))
        for exercise_id in graded:
            wanted = BY_ID[exercise_id].points if exercise_id in done[row["student"]] else 0
            assert float(row[exercise_id]) == pytest.approx(wanted)
    assert "[" in resumed.stderr and f"/{50 - len(finished)}" in resumed.stderr  # progress bar


def orphaned_cgroups() -> list[str]:
    """The cgroups of grading's workers whose launcher has ended (each is named
    tenxor-worker-USERS-LAUNCHER-N): a launcher closes its own before it ends."""
    roots = [own_cgroup(""), own_cgroup("memory")]
    found = [path for root in roots if root for path in root.glob("tenxor-worker-6*-*-*")]
    return [str(path) for path in found if not Path(f"/proc/{path.name.split('-')[3]}").exists()]


@pytest.mark.skipif(not AS_ROOT, reason="grading's users and cgroups are root's")
def test_a_batch_stopped_by_sigterm_says_how_to_resume_and_leaves_nothing(tmp_path, request):
    """A scheduler stops a batch with SIGTERM while a student whose import sleeps is being
    graded: the judges at work are ended at once, the command says how to resume, with no
    traceback, and leaves no scratch folder, process or cgroup; run again, it grades the
    others without grading anyone twice."""
    for number in range(4):
        complete_submission(tmp_path / "batch" / f"student{number}")
    sleeper = tmp_path / "batch" / "sleeps-at-import"
    complete_submission(sleeper)
    appended(STORAGE, "import time\ntime.sleep(600)")(sleeper)
    output = tmp_path / "grades"
    command = [
        sys.executable, "-m", "instructor.cli", "grade", str(tmp_path / "batch"), "--batch",
        "--out", str(output), "--exercise", "1.1", "--jobs", "2", "--course", str(ROOT),
        "--examples", "10",
    ]  # fmt: skip
    scratch, environment = batch_scratch(request, "stopped")
    batch = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment
    )
    wait_for(lambda: len(list(output.glob("*/results.json"))) >= 1, 300)
    batch.send_signal(signal.SIGTERM)
    # The sleeper's judge alone would take 60 s (its import is given that long): ended, the
    # batch stops in seconds.
    said, errors = batch.communicate(timeout=45)
    assert batch.returncode == 130, said + errors
    assert "run the same command again" in said and "Traceback" not in errors, errors
    assert not (output / "sleeps-at-import" / "results.json").exists()
    assert not list(scratch.iterdir()), f"left behind: {list(scratch.iterdir())}"
    wait_for(lambda: not subprocess.run(["pgrep", "-f", str(scratch)], capture_output=True)
             .stdout, 10)  # fmt: skip
    assert not orphaned_cgroups(), f"cgroups left: {orphaned_cgroups()}"
    graded = {path.parent.name for path in output.glob("*/results.json")}
    shutil.rmtree(sleeper)
    resumed = subprocess.run(command, capture_output=True, text=True, timeout=600, env=environment)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert f"{len(graded)} students graded before and unchanged" in resumed.stdout
    assert {path.parent.name for path in output.glob("*/results.json")} == {
        f"student{number}" for number in range(4)
    }


@pytest.mark.skipif(not AS_ROOT, reason="grading's users and cgroups are root's")
def test_two_batches_at_once_grade_right_and_leave_the_machine_as_they_found_it(tmp_path):
    """Two grading commands started together on one machine, over one course: each claims a
    block of users of its own, both score every student right, and neither changes the
    course or leaves a process, a file of its users or a cgroup behind."""
    course = copy_of_reference(tmp_path / "course")
    commands, expected = [], {}
    for batch in ("first", "second"):
        for number, done in enumerate(({"1.1"}, set(), {"1.1"})):
            student = f"{batch}{number}"
            generated_submission(tmp_path / batch / student, done)
            expected[student] = expected_score(done & {"1.1"})
        commands.append([
            sys.executable, "-m", "instructor.cli", "grade", str(tmp_path / batch), "--batch",
            "--out", str(tmp_path / f"{batch}-grades"), "--exercise", "1.1", "--course",
            str(course), "--examples", "10",
        ])  # fmt: skip
        (tmp_path / f"{batch}-grades").mkdir()
    before = course_state(course)  # its files, and the modes of the folders beside it
    running = [subprocess.Popen(c, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
               for c in commands]  # fmt: skip
    for process in running:
        said, errors = process.communicate(timeout=600)
        assert process.returncode == 0, said + errors
    for batch in ("first", "second"):
        rows = csv.DictReader((tmp_path / f"{batch}-grades" / "gradebook.csv").open())
        assert {row["student"]: float(row["total"]) for row in rows} == {
            student: score for student, score in expected.items() if student.startswith(batch)
        }
    assert course_state(course) == before
    assert not processes_left_by(tmp_path), "a process of a batch still runs"
    assert not orphaned_cgroups(), f"cgroups left: {orphaned_cgroups()}"
