"""After the grades: a batch run again grades again exactly the students whose grade may have
changed; a batch graded in shards and merged equals the batch graded in one run; the grades go
to Canvas through its own gradebook format, matched to its roster."""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
import sys
import unicodedata
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from instructor.authoring.release import stubbed_source
from instructor.cli import main
from instructor.grading import GRADING_LIMITS, GradingOptions, batch, grade_batch, students_in
from instructor.grading.batch import (
    CLASS_REPORT,
    RECORD,
    RESULTS,
    SHARD_RECORD,
    Batch,
    UnrecordedResults,
    gradebook_csv,
    grading_times,
    recorded_results,
    share_of,
)
from instructor.grading.canvas import IDENTITY, RosterError, canvas_export, read_roster
from instructor.grading.class_report import class_report_html
from instructor.grading.fingerprints import exercise_tests, module_needs, text_digest
from instructor.grading.intake import EXERCISE_MODULES, STUDENT_WORK, work_of
from instructor.grading.merge import MergeError, merge_shards
from instructor.grading.shards import Shard, shares, timed
from instructor.grading.spreadsheet import FORMULA_STARTS, safe_cell
from tenxor.course.files import write_atomically
from tests.tooling.slurm import one_node_cluster
from tests.tooling.submissions import ROOT, complete_submission, copy_of_reference, stubbed

pytestmark = pytest.mark.provided

GRADED = ["1.1"]  # one exercise keeps every grading here short
STUDENTS = ("ada", "ben", "cleo", "dev", "eve", "fay")
HIDDEN_TEST = "tests/hidden/test_storage_strides_hidden.py"
PUBLIC_TEST = "tests/test_storage.py"  # where the tests of exercise 1.1 are
# A progress line names who was graded, after the time so far and the time left.
PROGRESS = re.compile(r"\] \d+/\d+ +\d+ s, (?:about \d+ (?:s|min) left|done)  (\S+): ")
TIMING = ("graded_at",)  # gradebook columns that say when, not what
ROSTER = Path(__file__).with_name("canvas_roster.csv")
# A roster as Canvas exports it: names "Last, First", accents, a one-word name, Canvas's test
# student.
NAMES_ROSTER = Path(__file__).with_name("canvas_roster_names.csv")
README = Path(__file__).resolve().parents[2] / "README.md"
# Short limits, as tenxor-instructor grade sets them: a job script grades with these too.
LIMITS = replace(GRADING_LIMITS, call_cpu_seconds=1.0, exercise_cpu_seconds=2.0, memory_mb=1024)
AS_LIMITS = ["--call-seconds", "1", "--exercise-seconds", "2", "--memory-mb", "1024",
             "--examples", "10", "--exercise", "1.1"]  # fmt: skip


def submissions_of(folder: Path) -> dict[str, Path]:
    """Six submissions: complete, except `dev`'s storage module, which is the stub."""
    for student in STUDENTS:
        complete_submission(folder / student)
    stubbed("tenxor/storage.py")(folder / "dev")
    return students_in(folder)


def graded_students(batch_output: str) -> list[str]:
    """The students a grading run graded, from its progress lines."""
    return sorted(PROGRESS.findall(batch_output))


def gradebook_rows(folder: Path) -> dict[str, dict[str, str]]:
    with (folder / "gradebook.csv").open(encoding="utf-8") as stream:
        return {row["student"]: row for row in csv.DictReader(stream)}


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Path:
    return copy_of_reference(tmp_path_factory.mktemp("after-grading") / "course")


@pytest.fixture(scope="module")
def submissions(course: Path) -> dict[str, Path]:
    return submissions_of(course.parent / "submissions")


def grade(course: Path, submissions: dict[str, Path], output: Path, capsys, **options) -> list[str]:
    """Grade the batch into `output`; the students graded."""
    capsys.readouterr()
    grade_batch(
        course,
        submissions,
        output,
        GradingOptions(selection=GRADED, limits=LIMITS, jobs=2, profile="ci-quick", **options),
    )
    return graded_students(capsys.readouterr().err)


@pytest.fixture(scope="module")
def whole(course: Path, submissions: dict[str, Path]) -> Path:
    """The batch graded in one run."""
    output = course.parent / "whole"
    grade_batch(
        course,
        submissions,
        output,
        GradingOptions(selection=GRADED, limits=LIMITS, jobs=2, profile="ci-quick"),
    )
    return output


def test_a_batch_run_again_grades_again_only_whom_a_change_concerns(whole, tmp_path, capsys):
    # A copy of the course, the submissions and the graded batch: the same files, so the
    # same fingerprints, which the changes below then change.
    course = shutil.copytree(whole.parent / "course", tmp_path / "course")
    submissions = students_in(shutil.copytree(whole.parent / "submissions", tmp_path / "subs"))
    output = shutil.copytree(whole, tmp_path / "grades")
    first = gradebook_rows(output)
    assert {row["1.1"] for name, row in first.items() if name != "dev"} == {"2"}
    assert first["dev"]["1.1"] == "0" and all(row["graded_at"] for row in first.values())

    (output / "cleo" / "report.html").unlink()  # as in a folder graded before reports
    assert grade(course, submissions, output, capsys) == [], "nothing changed, nobody graded"
    assert gradebook_rows(output) == first
    assert "cleo: grading report" in (output / "cleo" / "report.html").read_text()

    with (submissions["ben"] / "tenxor" / "storage.py").open("a") as stream:
        stream.write("\n# ben looked at it again\n")
    assert grade(course, submissions, output, capsys) == ["ben"]
    second = gradebook_rows(output)
    assert second["ben"]["fingerprint"] != first["ben"]["fingerprint"]
    assert {name: row for name, row in second.items() if name != "ben"} == {
        name: row for name, row in first.items() if name != "ben"
    }

    with (course / HIDDEN_TEST).open("a") as stream:  # a comment changes no test
        stream.write("\n# the instructor looked at a hidden test\n")
    assert grade(course, submissions, output, capsys) == []
    with (course / HIDDEN_TEST).open("a") as stream:  # it holds no test of 1.1
        stream.write("\nTHE_INSTRUCTORS_FIX = 1\n")
    assert grade(course, submissions, output, capsys) == [], "1.1's tests did not change"
    with (course / PUBLIC_TEST).open("a") as stream:  # a helper each test of 1.1 may use
        stream.write("\nTHE_INSTRUCTORS_FIX = 1\n")
    assert grade(course, submissions, output, capsys) == sorted(STUDENTS)
    third = gradebook_rows(output)
    assert all(third[name]["fingerprint"] != second[name]["fingerprint"] for name in STUDENTS)
    assert {name: row["total"] for name, row in third.items()} == {
        name: row["total"] for name, row in first.items()
    }

    alone = {"ada": submissions["ada"]}  # unchanged since, and graded again when asked
    assert grade(course, alone, output, capsys, regrade=True) == ["ada"]


def test_a_late_submission_graded_alone_joins_the_class_in_the_gradebook(whole, tmp_path, capsys):
    """A student who submits after the batch was graded is graded alone into the batch's
    output: the gradebook then lists them beside the class, every earlier row as it was, as
    export and the class report (which read every recorded result) list them too."""
    output = shutil.copytree(whole, tmp_path / "grades")
    before = gradebook_rows(output)
    late = tmp_path / "late" / "gus"
    complete_submission(late)
    course = whole.parent / "course"
    assert grade(course, {"gus": late}, output, capsys) == ["gus"]
    after = gradebook_rows(output)
    assert sorted(after) == sorted([*STUDENTS, "gus"]), f"the gradebook lists {sorted(after)}"
    assert {name: row for name, row in after.items() if name != "gus"} == before, (
        "grading a late student changed the rows of the class"
    )
    assert after["gus"]["1.1"] == before["ada"]["1.1"], f"gus, complete, got {after['gus']}"
    assert sorted(recorded_results(output)) == sorted(after)


def test_a_changed_hidden_test_grades_its_exercise_again_for_everyone_and_nothing_else(
    tmp_path, capsys, monkeypatch
):
    """Two exercises graded; then one hidden test of exercise 1.2 changes (it now expects
    the opposite): only 1.2's tests run again, for every student, and its score is the only
    one that moves; 1.1's outcomes are kept as they were."""
    course = copy_of_reference(tmp_path / "course")
    submissions = submissions_of(tmp_path / "submissions")
    output, selection = tmp_path / "grades", ["1.1", "1.2"]
    grade_batch(
        course,
        submissions,
        output,
        GradingOptions(selection=selection, limits=LIMITS, jobs=2, profile="ci-quick"),
    )
    first = {name: json.loads((output / name / "results.json").read_text()) for name in STUDENTS}
    judged: list[set[str]] = []
    real = batch.run_judges

    def watched(setup, packages, slot, expected, graded):
        judged.append(set(expected.values()))
        return real(setup, packages, slot, expected, graded)

    monkeypatch.setattr(batch, "run_judges", watched)
    hidden = course / HIDDEN_TEST
    text = hidden.read_text()
    name = "def test_round_to_bfloat16_for_every_sign_and_exponent("
    assert text.count(name) == 1, f"{HIDDEN_TEST} has no {name}"
    hidden.write_text(text.replace(name, f"@pytest.mark.xfail(strict=True)\n{name}"))
    capsys.readouterr()
    grade_batch(
        course,
        submissions,
        output,
        GradingOptions(selection=selection, limits=LIMITS, jobs=2, profile="ci-quick"),
    )
    assert graded_students(capsys.readouterr().err) == sorted(STUDENTS)
    assert judged and all(exercises == {"1.2"} for exercises in judged), f"judged: {judged}"
    for name in STUDENTS:
        now = json.loads((output / name / "results.json").read_text())
        before = first[name]["extra_data"]
        assert now["extra_data"]["regraded"] == ["1.2"], name
        assert now["extra_data"]["exercises"]["1.1"] == before["exercises"]["1.1"], name
        kept = {t: o for t, o in before["outcomes"].items() if o["exercise"] == "1.1"}
        assert {t: o for t, o in now["extra_data"]["outcomes"].items() if t in kept} == kept
        assert [e["number"] for e in now["tests"]] == [e["number"] for e in first[name]["tests"]]
        if before["exercises"]["1.2"]:  # the changed test now fails where it passed
            assert now["extra_data"]["exercises"]["1.2"] < before["exercises"]["1.2"], name
        assert now["score"] == round(sum(now["extra_data"]["exercises"].values()), 2), name
    rows = gradebook_rows(output)
    for name in STUDENTS:
        assert float(rows[name]["total"]) == pytest.approx(
            json.loads((output / name / "results.json").read_text())["score"]
        )


def test_an_exercises_tests_fingerprint_moves_with_its_own_tests_and_their_files_only(tmp_path):
    """The digest of an exercise's tests: a comment moves nothing, a change to one of its
    own test functions moves its own alone, a change to the rest of a file moves that of
    every exercise tested in it, and support every test file shares moves every one."""
    folder = tmp_path / "tests"
    folder.mkdir()
    (folder / "support.py").write_text("HELPER = 1\n")
    (folder / "test_two.py").write_text(
        "import pytest\n\nLIMIT = 3\n\n"
        "def test_a():\n    assert LIMIT\n\n"
        "@pytest.mark.parametrize('n', [1, 2])\ndef test_b(n):\n    assert n\n"
    )
    (folder / "test_other.py").write_text("def test_c():\n    assert True\n")
    owners = {"test_two.py::test_a": "1.1", "test_two.py::test_b[1]": "1.2",
              "test_two.py::test_b[2]": "1.2", "test_other.py::test_c": "1.3"}  # fmt: skip
    expected = {f"tests/{test}": exercise for test, exercise in owners.items()}

    def moved(path: str, old: str, new: str) -> set[str]:
        before = exercise_tests(tmp_path, expected)
        file = folder / path
        file.write_text(file.read_text().replace(old, new))
        after = exercise_tests(tmp_path, expected)
        return {exercise for exercise in before if before[exercise] != after[exercise]}

    assert moved("test_two.py", "LIMIT = 3\n", "LIMIT = 3  # at most\n\n") == set()
    assert moved("test_two.py", "[1, 2]", "[1, 2, 3]") == {"1.2"}
    assert moved("test_two.py", "assert LIMIT", "assert LIMIT > 0") == {"1.1"}
    assert moved("test_two.py", "LIMIT = 3", "LIMIT = 4") == {"1.1", "1.2"}
    assert moved("support.py", "HELPER = 1", "HELPER = 2") == {"1.1", "1.2", "1.3"}


def test_an_exercise_needs_the_submitted_modules_its_module_imports():
    needs = module_needs(Path(__file__).resolve().parents[2])
    assert needs["tenxor/storage.py"] == {"tenxor/storage.py"}
    assert needs["tenxor/views.py"] == {"tenxor/views.py", "tenxor/strides.py"}
    assert {"tenxor/broadcasting.py", "tenxor/views.py"} <= needs["tenxor/reductions.py"]
    assert "tenxor/reductions.py" not in needs["tenxor/broadcasting.py"]


def without_timing(results: dict) -> dict:
    """Results without what says when or how long (two runs never agree on those)."""
    extra = {key: value for key, value in results["extra_data"].items() if key not in TIMING}
    return {**results, "execution_time": None, "extra_data": extra}


def job_script() -> str:
    """The README's grade.sh: its one bash block that holds #SBATCH lines."""
    blocks = re.findall(r"```bash\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    scripts = [block for block in blocks if "#SBATCH" in block]
    assert len(scripts) == 1, f"README.md has {len(scripts)} bash blocks with #SBATCH, not 1"
    return scripts[0]


def without_times(gradebook: Path) -> str:
    """A gradebook's text with each time it says when a student was graded blanked."""
    return re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", "(time)", gradebook.read_text())


def test_a_batch_graded_as_a_slurm_job_array_and_merged_equals_one_run(
    course, submissions, whole, tmp_path
):
    """The README's grade.sh, run by sbatch as a job array of three tasks on a one-node
    Slurm cluster, grades three shares that merge into the gradebook of one run, byte for
    byte apart from the times of grading."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "subs").symlink_to(course.parent / "submissions", target_is_directory=True)
    (work / "grade.sh").write_text(job_script())
    options = [*AS_LIMITS, "--course", str(course)]
    with one_node_cluster() as cluster:
        path = f"{Path(sys.executable).parent}:{cluster.environment['PATH']}"
        environment = {**cluster.environment, "PATH": path}  # where tenxor-instructor is
        done = cluster.sbatch_wait(["grade.sh", *options], work, environment)
    logs = "\n".join(f"--- {log.name}\n{log.read_text()}" for log in sorted(work.glob("*.log")))
    assert done.returncode == 0, (
        f"sbatch --wait grade.sh exited {done.returncode}: {done.stderr}{logs}"
    )
    shards = [work / f"grades-{k}" for k in (1, 2, 3)]
    dealt = [json.loads((shard / SHARD_RECORD).read_text())["share"] for shard in shards]
    assert sorted(sum(dealt, [])) == sorted(STUDENTS), f"each student in one share: {dealt}"
    assert all(dealt), f"each shard grades someone: {dealt}"

    assert main(["merge", str(work / "grades"), *map(str, shards)]) == 0
    merged = work / "grades"
    assert without_times(merged / "gradebook.csv") == without_times(whole / "gradebook.csv")
    assert {s: without_timing(r) for s, r in recorded_results(merged).items()} == {
        s: without_timing(r) for s, r in recorded_results(whole).items()
    }
    as_one = Path("grades")  # the class report names its folder: the same name for both
    pages = [class_report_html(recorded_results(f), as_one, as_one / CLASS_REPORT)
             for f in (whole, merged)]  # fmt: skip
    assert (merged / CLASS_REPORT).is_file() and pages[0] == pages[1]

    for chosen, named in (([1, 1, 2, 3], "1/3"), ([1, 3], "2/3")):  # given twice, missing
        with pytest.raises(MergeError, match=re.escape(named)):
            merge_shards([shards[k - 1] for k in chosen], tmp_path / "refused")
    with pytest.raises(MergeError, match=re.escape(str(whole))):  # not a shard's output
        merge_shards([*shards, whole], tmp_path / "refused")


def shard_outputs(folder: Path, count: int, name: str = "grades") -> list[Path]:
    """The batch of STUDENTS (complete submissions in folder/subs) dealt into `count`
    shards as grade --shard deals them, into folder/<name>-K: each output holds what
    grading writes for every student of its share (here 1 of 2 points on 1.1 each)."""
    submissions = {student: folder / "subs" / student for student in STUDENTS}
    for path in submissions.values():
        if not path.exists():
            complete_submission(path)
    outputs = [folder / f"{name}-{k}" for k in range(1, count + 1)]
    for k, output in enumerate(outputs, start=1):
        batch = Batch({}, output)
        for student in share_of(ROOT, submissions, Shard(k, count), output):
            results = {"score": 1, "extra_data": {"max_score": 2, "exercises": {"1.1": 1}}}
            batch.write_results(student, results)
    return outputs


def share_in(shard: Path) -> list[str]:
    """The students of a shard's share, as its output records them."""
    return json.loads((shard / SHARD_RECORD).read_text(encoding="utf-8"))["share"]


def merge_said(arguments: list[str], capsys) -> tuple[str | None, str]:
    """Run tenxor-instructor merge: the message it exited with (None if it ended well)
    and what it printed."""
    try:
        code = main(["merge", *arguments])
    except SystemExit as error:
        return str(error.code), capsys.readouterr().out
    assert code == 0, f"merge {arguments} returned {code}"
    return None, capsys.readouterr().out


def partial_section(class_report: Path) -> str:
    """The text of a class report's warning that it is of part of the batch ("" if none)."""
    found = re.search(r"<strong>Partial:.*?</section>", class_report.read_text(), re.S)
    return re.sub(r"<[^>]+>", " ", found[0]) if found else ""


def test_merge_refuses_a_missing_shard_unless_partial_which_says_what_is_missing(tmp_path, capsys):
    """Shards 1 and 3 of 3: merge refuses them, naming shard 2/3 and --partial, and writes
    nothing; with --partial it merges their students and says what is missing, in its
    output and in the class report, which stops saying so once the missing students are
    graded into the merged folder."""
    shards = shard_outputs(tmp_path, 3)
    given, out = [shards[0], shards[2]], tmp_path / "grades"
    said, _ = merge_said([str(out), *map(str, given)], capsys)
    assert said and "shard 2/3 is missing" in said and "--partial" in said, said
    assert not out.exists(), f"a refused merge wrote {sorted(out.rglob('*'))}"
    said, printed = merge_said([str(out), *map(str, given), "--partial"], capsys)
    assert said is None, f"merge --partial exited: {said}"
    assert "shard 2/3 is missing" in printed, f"merge --partial printed {printed!r}"
    merged = sorted(recorded_results(out))
    assert merged == sorted(share_in(shards[0]) + share_in(shards[2])), merged
    warning = partial_section(out / CLASS_REPORT)
    absent = share_in(shards[1])
    assert "shard 2/3 is missing" in warning, f"the class report's warning: {warning!r}"
    assert all(re.search(rf"\b{student}\b", warning) for student in absent), (absent, warning)
    batch = Batch({}, out)  # grading the missing students into the merged folder
    for student, results in recorded_results(shards[1]).items():
        batch.write_results(student, results)
    assert main(["report", str(out)]) == 0
    assert partial_section(out / CLASS_REPORT) == "", "the missing students are graded now"


def test_merge_refuses_a_shard_given_twice_or_shards_of_different_counts_naming_them(
    tmp_path, capsys
):
    """Two outputs of shard 1/3 (a copy of one), or shards of a deal in 2 and one in 3: each
    refused, --partial or not, naming the folders and the shards they hold."""
    shards = shard_outputs(tmp_path, 3)
    again = tmp_path / "grades-1-again"
    shutil.copytree(shards[0], again)
    halves = shard_outputs(tmp_path, 2, name="halves")
    for partial in ([], ["--partial"]):
        out = tmp_path / "out"
        said, _ = merge_said([str(out), *map(str, [*shards, again]), *partial], capsys)
        assert said and "shard 1/3" in said, f"merge with 1/3 twice said {said!r}"
        assert str(shards[0]) in said and str(again) in said, said
        said, _ = merge_said([str(out), str(halves[0]), str(shards[1]), *partial], capsys)
        for folder, shard in ((halves[0], "1/2"), (shards[1], "2/3")):
            assert f"{folder} is shard {shard}" in (said or ""), f"merge said {said!r}"
        assert not out.exists(), f"a refused merge wrote {sorted(out.rglob('*'))}"


def test_merge_refuses_a_shard_without_results_for_part_of_its_share(tmp_path, capsys):
    """A shard whose grading stopped before one student of its share: merge refuses it,
    naming the shard and the student; with --partial it merges the rest and names them."""
    shards = shard_outputs(tmp_path, 2)
    dropped = share_in(shards[1])[0]
    record = json.loads((shards[1] / RECORD).read_text())
    del record[dropped]  # as if grading had stopped before this student
    write_atomically(shards[1] / RECORD, json.dumps(record))
    shutil.rmtree(shards[1] / dropped)
    out = tmp_path / "grades"
    said, _ = merge_said([str(out), *map(str, shards)], capsys)
    named = said and str(shards[1]) in said and re.search(rf"\b{dropped}\b", said)
    assert named, f"merge of {shards[1]} without {dropped}'s results said {said!r}"
    assert not out.exists(), f"a refused merge wrote {sorted(out.rglob('*'))}"
    said, printed = merge_said([str(out), *map(str, shards), "--partial"], capsys)
    assert said is None and re.search(rf"\b{dropped}\b", printed), (said, printed)
    assert sorted(recorded_results(out)) == sorted(set(STUDENTS) - {dropped})


def test_shards_deal_the_work_evenly_and_each_student_once():
    """Dealt heaviest first to the lightest share, shares differ by at most one student's
    work; whatever order the batch is listed in, every machine deals the same shares."""

    @given(
        work=st.dictionaries(st.text(min_size=1, max_size=8), st.integers(1, 10**6), max_size=60),
        count=st.integers(1, 8),
    )
    def dealt(work: dict[str, int], count: int) -> None:
        dealt = shares(work, count)
        assert sorted(sum(dealt, [])) == sorted(work), f"shares({work}, {count}) = {dealt}"
        totals = [sum(work[name] for name in share) for share in dealt]
        heaviest = max(work.values(), default=0)
        assert max(totals) - min(totals) <= heaviest, f"totals {totals}, heaviest {heaviest}"
        backwards = dict(reversed(list(work.items())))
        assert shares(backwards, count) == dealt
        assert [Shard(k, count).share(work) for k in range(1, count + 1)] == dealt

    dealt()
    assert Shard.parse("2/3") == Shard(2, 3) and str(Shard(2, 3)) == "2/3"
    for text in ("0/3", "4/3", "2", "a/b"):
        with pytest.raises(ValueError, match=re.escape(repr(text))):
            Shard.parse(text)


def test_shards_dealt_by_an_earlier_gradings_times_split_the_slow_students(course, tmp_path):
    """Two students whose grading took long (a hang, a crash) weigh the same as the rest by
    size; dealt by an earlier grading's times (--times-from) they go to different shards, a
    student it did not grade weighs their size at the others' seconds per unit of work, a
    folder that is no output is refused, and so are shards from two different deals."""
    students = {f"s{n}": tmp_path / "subs" / f"s{n}" for n in range(6)}
    for folder in students.values():
        complete_submission(folder)
    times = {"s0": 5.0, "s1": 30.0, "s2": 5.0, "s3": 29.0, "s4": 5.0}  # s5 never graded
    earlier, record = tmp_path / "earlier", {}  # an output as grading writes one: results
    for student, seconds in times.items():  # and the record of what it wrote
        text = json.dumps({"execution_time": seconds})
        write_atomically(earlier / student / RESULTS, text)
        record[student] = text_digest(text)
    (earlier / "stray").mkdir()  # a results file grading did not write counts for nothing
    (earlier / "stray" / RESULTS).write_text(json.dumps({"execution_time": 99.0}))
    with pytest.raises(UnrecordedResults, match=re.escape(str(earlier))):
        grading_times(earlier)
    write_atomically(earlier / RECORD, json.dumps(record))
    assert grading_times(earlier) == times
    assert timed({"ada": 10, "ben": 20}, {"ada": 5.0}) == {"ada": 5.0, "ben": 10.0}
    outputs = [tmp_path / f"shard-{k}" for k in (1, 2)]
    dealt = [share_of(course, students, Shard(k, 2), outputs[k - 1], earlier) for k in (1, 2)]
    assert [len({"s1", "s3"} & set(share)) for share in dealt] == [1, 1], dealt
    assert sorted([*dealt[0], *dealt[1]]) == sorted(students)
    nowhere = tmp_path / "nowhere"
    with pytest.raises(NotADirectoryError, match=re.escape(str(nowhere))):
        share_of(course, students, Shard(1, 2), tmp_path / "refused", nowhere)
    by_size = share_of(course, students, Shard(2, 2), outputs[1])  # this shard by size
    astray = (set(dealt[0]) & set(by_size)) | (set(students) - set(dealt[0]) - set(by_size))
    assert astray, "the two deals are the same"
    with pytest.raises(MergeError) as refused:
        merge_shards(outputs, tmp_path / "merged")
    assert all(re.search(rf"\b{name}\b", str(refused.value)) for name in astray), refused.value


def test_a_submissions_work_is_its_code_beyond_the_stubs(course, tmp_path):
    """A stubbed submission weighs what any student does; each module's code beyond its
    stub adds its bytes; a module that is a link, or absent, adds nothing."""
    stubs = {module: len(stubbed_source(course / module).encode()) for module in EXERCISE_MODULES}
    written = {m: (course / m).stat().st_size - stubs[m] for m in EXERCISE_MODULES}
    complete, half, linked = (tmp_path / name for name in ("complete", "half", "linked"))
    for folder in (complete, half, linked):
        complete_submission(folder)
    assert work_of(complete, stubs) == STUDENT_WORK + sum(written.values())
    assert work_of(complete, stubs) > 4 * STUDENT_WORK, "a complete submission is heavy"
    stubbed("tenxor/storage.py")(half)
    assert work_of(half, stubs) == work_of(complete, stubs) - written["tenxor/storage.py"]
    (linked / "tenxor" / "views.py").unlink()
    (linked / "tenxor" / "views.py").symlink_to(course / "tenxor" / "views.py")
    assert work_of(linked, stubs) == work_of(complete, stubs) - written["tenxor/views.py"]
    (tmp_path / "nothing").mkdir()
    assert work_of(tmp_path / "nothing", stubs) == STUDENT_WORK


def results_of(scores: dict[str, float], most: int = 10) -> dict[str, dict]:
    return {
        name: {"score": score, "extra_data": {"max_score": most}} for name, score in scores.items()
    }


def test_the_canvas_export_matches_the_roster_and_reports_who_is_missing():
    roster = read_roster(ROSTER)
    assert [row["Student"] for row in roster] == [
        "Lovelace, Ada", "Bell, Ben", "Okafor, Cleo", "Shah, Dev", "Zhou, Min",
    ]  # fmt: skip
    # ada by SIS login, ben by SIS user id (any case), cleo by Canvas id, "Shah, Dev" by name
    graded = results_of({"ada": 9, "S0002": 7.5, "3003": 10, "Shah, Dev": 0, "nobody": 4})
    export = canvas_export(graded, roster, "tenxor (5501)")
    rows = list(csv.reader(io.StringIO(export.text)))
    assert rows[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "tenxor (5501)"]
    assert rows[1] == ["Points Possible", "", "", "", "", "10"]
    scores = {row[0]: row[5] for row in rows[2:]}
    assert scores == {"Lovelace, Ada": "9", "Bell, Ben": "7.5", "Okafor, Cleo": "10",
                      "Shah, Dev": "0", "Zhou, Min": ""}  # fmt: skip
    assert [row[1:5] for row in rows[2:4]] == [
        ["1001", "S0001", "ada", "Section A"], ["1002", "S0002", "ben", "Section A"],
    ]  # fmt: skip
    assert export.not_in_roster == ["nobody"] and export.not_graded == ["Zhou, Min"]


def nfd(text: str) -> str:
    """`text` in Unicode's decomposed form, as macOS names folders."""
    return unicodedata.normalize("NFD", text)


def test_students_match_canvas_rows_written_last_first_whatever_the_unicode_form_or_case():
    """Folders named "First Last" (in any case, decomposed or not) or "Last, First", or after
    a login or SIS id, each match their row of a roster Canvas wrote as "Last, First"."""
    folders = {
        "Ada Lovelace": 7,  # "First Last" against "Lovelace, Ada"
        nfd("Zoë Lee"): 8,  # decomposed, as macOS names folders
        "JOSÉ LUIS GARCÍA MÁRQUEZ": 9,  # case and a two-word last name
        "O'Neil, Cathy": 6,  # written as Canvas writes it
        "ngozi": 5,  # a one-word name
    }
    assert nfd("Zoë") != "Zoë", "the folder name must really be decomposed"
    export = canvas_export(results_of(folders), read_roster(NAMES_ROSTER), "tenxor")
    rows = read_back(export.text)
    scores = {row[0]: row[5] for row in rows[2:]}
    assert scores == {
        "Lovelace, Ada": "7", "Lee, Zoë": "8", "García Márquez, José Luis": "9",
        "O'Neil, Cathy": "6", "Ngozi": "5", "Student, Test": "",
    }, scores  # fmt: skip
    assert export.not_in_roster == [] and export.not_graded == ["Student, Test"]


def test_two_students_on_one_row_or_one_student_on_two_rows_are_refused(tmp_path):
    roster = read_roster(NAMES_ROSTER)
    with pytest.raises(RosterError) as refused:
        canvas_export(results_of({"Zoë Lee": 1, "zlee": 2}), roster)
    said = str(refused.value)
    assert "'Lee, Zoë'" in said and "Zoë Lee and zlee" in said, said
    twins = tmp_path / "twins.csv"
    text = NAMES_ROSTER.read_text(encoding="utf-8")
    twins.write_text(text + '"Lee, Zoë",2007,S1007,zlee2,Section C,,,\n', encoding="utf-8")
    with pytest.raises(RosterError) as refused:
        canvas_export(results_of({"Zoë Lee": 1}), read_roster(twins))
    said = str(refused.value)
    assert "2 roster rows" in said and "S1002" in said and "S1007" in said, said


def test_the_export_command_lists_each_unmatched_student_on_a_line_with_the_closest_row(
    tmp_path, capsys
):
    """Names hold commas: each unmatched student has a line of their own, with the roster row
    most like them; so has each roster row left ungraded."""
    grades = tmp_path / "grades"
    batch = Batch({}, grades)
    for student in ("Ada Lovelace", "Lee, Zoey", "Cathy ONeil"):
        batch.write_results(student, {"score": 1, "extra_data": {"max_score": 2, "exercises": {}}})
    code = main(["export", str(grades), "--canvas", str(NAMES_ROSTER)])
    said = capsys.readouterr().out.splitlines()
    assert code == 1, said
    start = said.index("Graded but in no roster row (not exported): 2")
    assert said[start + 1].startswith('  Cathy ONeil  (closest roster row: "O\'Neil, Cathy"'), said
    assert said[start + 2].startswith("  Lee, Zoey  (closest roster row: 'Lee, Zoë'"), said
    start = said.index("In the roster but not graded (left empty): 5")
    ungraded = ["Lee, Zoë", "García Márquez, José Luis", "O'Neil, Cathy", "Ngozi", "Student, Test"]
    assert said[start + 1 : start + 6] == [f"  {name}" for name in ungraded], said


def read_back(text: str) -> list[list[str]]:
    """The cells of a CSV text; none may start a formula (else the test fails naming it)."""
    rows = list(csv.reader(io.StringIO(text)))
    formulas = [cell for row in rows for cell in row if cell.startswith(FORMULA_STARTS)]
    assert not formulas, f"cells a spreadsheet would run as formulas: {formulas}"
    return rows


@given(
    names=st.lists(
        st.text(st.characters(blacklist_categories=["Cs"]), min_size=1),
        min_size=1,
        max_size=4,
        unique_by=lambda name: " ".join(unicodedata.normalize("NFC", name).casefold().split()),
    ),
    section=st.sampled_from(["=1+1", "+SUM(1,2)", "-2", "@SUM(1,2)", "\t=1", "\r=1", "A"]),
)
def test_no_cell_of_the_gradebook_or_the_canvas_export_starts_a_formula(names, section):
    """Whatever students name their folders and whatever a roster holds, no cell starts a
    formula: each is the text it was, with an apostrophe before it where it would have
    (OWASP's rule), and a line break in a cell stays inside its cell."""
    names = [name.strip() for name in names if name.strip()] or ["ada"]
    graded = {
        name: {"score": 1, "extra_data": {"max_score": 2, "exercises": {"1.1": 1}}}
        for name in names
    }
    rows = read_back(gradebook_csv(graded, ["1.1"]))
    assert sorted(row[0] for row in rows[1:]) == sorted(map(safe_cell, names))
    assert all(row[1:3] == ["1", "1"] for row in rows[1:])
    roster = [dict.fromkeys(IDENTITY, section) | {"Student": name, "SIS Login ID": name}
              for name in names]  # fmt: skip
    rows = read_back(canvas_export(graded, roster, '=HYPERLINK("x")').text)
    assert rows[0][-1] == safe_cell('=HYPERLINK("x")')
    assert [row[0] for row in rows[2:]] == [safe_cell(name) for name in names]
    assert all(row[4] == safe_cell(section) and row[5] == "1" for row in rows[2:])


def test_a_roster_that_is_not_canvas_export_or_matches_twice_is_refused(tmp_path):
    wrong = tmp_path / "roster.csv"
    wrong.write_text("name,email\nAda,ada@example.org\n", encoding="utf-8")
    with pytest.raises(RosterError, match="no column Student, ID, SIS User ID"):
        read_roster(wrong)
    with pytest.raises(RosterError, match="'Lovelace, Ada'"):
        canvas_export(results_of({"ada": 1, "S0001": 2}), read_roster(ROSTER))


def test_the_export_command_writes_canvas_csv_from_a_grading_output(tmp_path, capsys):
    grades = tmp_path / "grades"
    batch = Batch({}, grades)
    for student, score in (("ada", 2), ("ben", 1.5), ("stranger", 2)):
        batch.write_results(
            student, {"score": score, "extra_data": {"max_score": 2, "exercises": {}}}
        )
    code = main(["export", str(grades), "--canvas", str(ROSTER)])
    said = capsys.readouterr().out
    assert code == 1, "a graded student missing from the roster makes the command fail"
    assert "Graded but in no roster row (not exported): 1\n  stranger  (closest roster row:" in said
    lines = said.split("In the roster but not graded (left empty): 3\n")[1].splitlines()
    assert lines[:3] == ["  Okafor, Cleo", "  Shah, Dev", "  Zhou, Min"], said
    with (grades / "canvas.csv").open(encoding="utf-8") as stream:
        rows = list(csv.reader(stream))
    assert {row[3]: row[5] for row in rows[2:]} == {
        "ada": "2", "ben": "1.5", "cleo": "", "dev": "", "min": "",
    }  # fmt: skip
