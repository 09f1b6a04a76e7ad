"""Grading: hostile and broken submissions get the right score with a readable reason, the
results follow Gradescope's format, and a killed batch resumes without regrading anyone."""

from __future__ import annotations

import base64
import csv
import io
import json
import os
import re
import sys
from pathlib import Path

import jsonschema
import pytest

from instructor.grading import (
    Assembly,
    GradingOptions,
    grade_batch,
    read_report_log,
    results_json,
    students_in,
)
from instructor.grading.batch import summary, time_left
from instructor.grading.class_report import write_class_report
from instructor.grading.judge_run import judge_options
from instructor.grading.setup import EXAMPLES_PER_JUDGE, GradingSetup
from instructor.grading.spreadsheet import safe_cell
from instructor.sandbox.launcher import BLOCK, BLOCKS, UID_BASE, SandboxLimits
from instructor.sandbox.leftovers import ipc_objects_of
from instructor.sandbox.protections import PROTECTIONS, SandboxMode, WorkerSettings
from instructor.sandbox.worker import STEPS
from tenxor.course.catalog import BY_ID
from tenxor.course.engine import Result, Run
from tests.tooling.browser import DevTools, ink
from tests.tooling.pages import page_text
from tests.tooling.submissions import (
    CANARY_SIZE,
    CHAPTER_1,
    FIXTURES,
    JUDGE_MARKER,
    RED_TEAM,
    ROOT,
    Fixture,
    copy_of_reference,
    plain_pytest_scores,
    with_canary,
)

pytestmark = pytest.mark.provided

# The grading machinery is on trial here, not the exercises: property tests try 10 examples.
EXAMPLES = "ci-quick"
# An exercise may use 2 s of CPU time: a few calls of the submissions that burn 0.7 s each.
LIMITS = SandboxLimits(
    call_cpu_seconds=1.0,
    call_wall_seconds=10.0,
    exercise_cpu_seconds=2.0,
    memory_mb=1024,
    group_memory_mb=2048,
)
SCHEMA = json.loads((Path(__file__).parent / "gradescope_results.schema.json").read_text())
# What a hidden entry may say: why its module was not graded, how many tests passed, and how
# the credit rule scored them.
COUNTS_ONLY = re.compile(
    r"([^\n]*; its exercises score 0\.\n)?(?P<passed>\d+) of (?P<of>\d+) tests passed\.(\n[^\n]*)?"
)


def expected_score(done: set[str]) -> int:
    """The chapter-1 points of the exercises a submission did right."""
    return sum(BY_ID[exercise_id].points for exercise_id in done)


AS_ROOT = os.geteuid() == 0
# Grading as root confines the worker; only then may a batch hold submissions that tamper.
BATCH = FIXTURES + (RED_TEAM if AS_ROOT else ())


def course_state(course: Path) -> dict[str, bytes | int]:
    """Every file of a course, and the modes of the course and of the folders beside it (the
    submissions and the output), to tell whether grading changed any."""
    files = {p.relative_to(course).as_posix(): p.read_bytes() for p in course.rglob("*.py")}
    modes = {f"mode of {p.name}": p.stat().st_mode for p in course.parent.iterdir()}
    return {**files, **modes}


@pytest.fixture(scope="module")
def batch(tmp_path_factory) -> tuple[Path, Path, dict[str, bytes]]:
    """Every fixture submission (the red team too, as root) graded in one batch, chapter 1,
    two at a time, with a copy of the course: the output, the course, and the course's
    files and the modes of its folders before grading."""
    base = tmp_path_factory.mktemp("grading")
    course = with_canary(copy_of_reference(base / "course"))
    for fixture in BATCH:
        fixture.build(base / "submissions" / fixture.name)
    output = base / "grades"
    output.mkdir()
    before = course_state(course)
    submissions = students_in(base / "submissions")
    grade_batch(
        course,
        submissions,
        output,
        GradingOptions(selection=CHAPTER_1, limits=LIMITS, jobs=2, profile=EXAMPLES),
    )
    return output, course, before


@pytest.fixture(scope="module")
def graded(batch) -> Path:
    return batch[0]


def everything_said(results: dict) -> str:
    return "\n".join([results["output"], *(entry["output"] for entry in results["tests"])])


def nothing_hidden_reached_a_student(graded: Path) -> None:
    """Nothing a student sees (their results' entries and output, as Gradescope shows them,
    and their report) holds the argument of the course copy's hidden canary test, whatever
    their submission did with it (submissions.REPLAY_ARGUMENTS). (The instructor's part of
    the results, extra_data, keeps why each hidden test failed.)"""
    for folder in sorted(p for p in graded.iterdir() if (p / "results.json").exists()):
        results = json.loads((folder / "results.json").read_text())
        shown = [everything_said(results), *(entry["name"] for entry in results["tests"])]
        shown.append((folder / "report.html").read_text())
        assert str(CANARY_SIZE) not in "\n".join(shown), f"a hidden argument reached {folder.name}"


def nothing_planted_where_python_starts() -> None:
    """No .pth file a submission wrote (submissions.PLANT_PTH) in any folder this
    interpreter imports from: Python would run it at every start."""
    planted = [p for p in map(Path, sys.path) if (p / "tenxor-planted.pth").exists()]
    assert not planted, f"a submission planted a .pth file in {planted}"


def no_cell_starts_a_formula(gradebook: Path) -> None:
    """Every cell of a gradebook opens in a spreadsheet as text (the OWASP rule)."""
    with gradebook.open(newline="", encoding="utf-8") as stream:
        cells = [cell for row in csv.reader(stream) for cell in row]
    assert not [cell for cell in cells if cell[:1] in ("=", "+", "-", "@", "\t", "\r")]


def results_of(graded: Path, student: str) -> dict:
    return json.loads((graded / student / "results.json").read_text())


@pytest.mark.parametrize("fixture", BATCH, ids=[fixture.name for fixture in BATCH])
def test_each_submission_gets_the_right_score_and_a_reason(
    graded: Path, fixture: Fixture, tmp_path: Path
):
    results = json.loads((graded / fixture.name / "results.json").read_text())
    done = set(CHAPTER_1) - set(fixture.lost)
    scores = {e: BY_ID[e].points if e in done else 0 for e in CHAPTER_1}
    if fixture.plain_pytest:
        scores = plain_pytest_scores(fixture, tmp_path, CHAPTER_1, EXAMPLES)
    assert results["score"] == pytest.approx(sum(scores.values()), abs=0.01)
    for exercise_id in CHAPTER_1:
        found = results["extra_data"]["exercises"][exercise_id]
        assert found == pytest.approx(scores[exercise_id], abs=1e-3), exercise_id
    assert fixture.says in everything_said(results)


def test_results_follow_the_gradescope_schema(graded: Path):
    for fixture in BATCH:
        results = json.loads((graded / fixture.name / "results.json").read_text())
        jsonschema.validate(results, SCHEMA)
        assert sum(entry["max_score"] for entry in results["tests"]) == pytest.approx(
            expected_score(set(CHAPTER_1))
        )
        assert {"python", "tenxor", "pytest", "hypothesis"} <= set(
            results["extra_data"]["versions"]
        )
        hidden = [entry for entry in results["tests"] if "hidden" in entry["name"]]
        assert hidden and all(entry["visibility"] == "after_published" for entry in hidden)
        for entry in hidden:  # counts only: no test named, no call, value or rule shown
            counts = COUNTS_ONLY.fullmatch(entry["output"])
            assert counts, (fixture.name, entry["output"])
            every_one = counts.group("passed") == counts.group("of")
            assert entry["status"] == ("passed" if every_one else "failed"), entry


def test_the_schema_rejects_what_gradescope_would(graded: Path):
    results = json.loads((graded / "complete" / "results.json").read_text())
    results["tests"][0]["status"] = "ok"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(results, SCHEMA)


def test_the_gradebook_has_one_row_per_student_matching_their_results(graded: Path):
    """One row per student, in order of their folders' names, each name a cell that no
    spreadsheet takes for a formula (=SUM(1,2) becomes '=SUM(1,2))."""
    rows = list(csv.DictReader((graded / "gradebook.csv").open()))
    names = sorted(fixture.name for fixture in BATCH)
    assert [row["student"] for row in rows] == [safe_cell(name) for name in names]
    assert list(rows[0]) == ["student", *CHAPTER_1, "total", "max", "graded_at", "fingerprint"]
    for name, row in zip(names, rows):
        results = json.loads((graded / name / "results.json").read_text())
        assert float(row["total"]) == pytest.approx(results["score"])
        assert int(row["max"]) == expected_score(set(CHAPTER_1))
        assert row["graded_at"] == results["extra_data"]["graded_at"]
        assert row["fingerprint"] == results["extra_data"]["fingerprint"]["short"]


@pytest.mark.skipif(not AS_ROOT, reason="the worker is confined only when grading as root")
def test_forging_answers_on_the_channel_earns_what_those_answers_earn(graded: Path):
    forged = results_of(graded, "forges-answers-on-the-channel")["extra_data"]["exercises"]
    honest = results_of(graded, "answers-four-honestly")["extra_data"]["exercises"]
    assert forged == honest


@pytest.mark.skipif(not AS_ROOT, reason="the worker is confined only when grading as root")
def test_nothing_the_worker_names_runs_in_the_judge(batch):
    """A worker answering with a function tag (a factory that would run `touch`, an object
    equal to anything) gets its answers refused: the judge never made the file."""
    output, _, _ = batch
    made = [str(path) for path in output.parent.rglob(JUDGE_MARKER)]
    assert not made, f"the judge ran what a worker named: {made}"
    assert results_of(output, "answers-with-function-tags")["score"] == 0


def hidden_lines() -> set[str]:
    """Every line of the hidden tests long enough to be told apart (20 characters or more)."""
    hidden = {
        line.strip()
        for path in (ROOT / "tests" / "hidden").glob("*.py")
        for line in path.read_text(encoding="utf-8").splitlines()
        if len(line.strip()) >= 20
    }
    assert len(hidden) > 100
    return hidden


@pytest.mark.skipif(not AS_ROOT, reason="the worker is confined only when grading as root")
def test_no_student_sees_a_line_of_a_hidden_test(graded: Path):
    hidden = hidden_lines()
    for fixture in BATCH:
        said = everything_said(results_of(graded, fixture.name))
        quoted = [line for line in hidden if line in said]
        assert not quoted, (fixture.name, quoted[:3])
    nothing_hidden_reached_a_student(graded)


def number(value: float) -> str:
    """A score as results.json holds it, to four decimals at most: 2.5, 5, 0.0282."""
    return f"{value:.4f}".rstrip("0").rstrip(".")


def test_every_student_has_a_report_with_their_scores_and_no_hidden_test(graded: Path):
    """report.html says the total and each exercise's score as results.json does, and of a
    hidden test never a line of its source nor what it found (unless a public test found
    the same)."""
    hidden = hidden_lines()
    for fixture in BATCH:
        results = results_of(graded, fixture.name)
        text = page_text((graded / fixture.name / "report.html").read_text(encoding="utf-8"))
        extra = results["extra_data"]
        assert f"{number(results['score'])} of {extra['max_score']} points" in text, fixture.name
        for exercise_id, score in extra["exercises"].items():
            item = BY_ID[exercise_id]
            assert f"{exercise_id} {item.title} {number(score)} of {item.points}" in text
        assert not [line for line in hidden if line in text], fixture.name
        outcomes = extra["outcomes"].values()
        public = json.dumps([o for o in outcomes if not o["hidden"]])
        found = {o["reason"] for o in outcomes if o["hidden"] and not o["passed"]}
        shown = [why for why in found if len(why) >= 20 and why not in public and why in text]
        assert not shown, (fixture.name, shown[:3])


def whole_page(browser: DevTools):
    """A PIL image of the whole page open in `browser`, beyond the window too."""
    from PIL import Image

    size = browser.call("Page.getLayoutMetrics")["cssContentSize"]
    clip = {"x": 0, "y": 0, "width": size["width"], "height": min(size["height"], 8000)}
    shot = browser.call(
        "Page.captureScreenshot", format="png", clip={**clip, "scale": 1},
        captureBeyondViewport=True,
    )  # fmt: skip
    return Image.open(io.BytesIO(base64.b64decode(shot["data"])))


def shown_in_chromium(browser: DevTools, page: Path, name: str) -> tuple[str, list]:
    """Open `page`, keep a screenshot of it (in $TENXOR_SCREENSHOTS, when set) after making
    sure it is not blank; the text the page shows, and a picture of each of its plots."""
    browser.call("Page.navigate", url=page.as_uri())
    loaded = f"location.href === {json.dumps(page.as_uri())} && document.readyState === 'complete'"
    assert browser.wait_for(loaded, seconds=60), f"{name} did not load"
    image = whole_page(browser)
    if os.environ.get("TENXOR_SCREENSHOTS"):
        folder = Path(os.environ["TENXOR_SCREENSHOTS"])
        folder.mkdir(parents=True, exist_ok=True)
        image.save(folder / f"{name}.png")
    share, colours = ink(image)
    assert share > 0.02 and colours > 16, f"{name} looks blank in Chromium"
    boxes = browser.evaluate(
        "[...document.querySelectorAll('svg')].map(e => e.getBoundingClientRect())"
        ".map(r => [r.left + scrollX, r.top + scrollY, r.right + scrollX, r.bottom + scrollY])"
    )
    plots = [image.crop(tuple(round(side) for side in box)) for box in boxes]
    return " ".join(browser.evaluate("document.body.innerText").split()), plots


def test_a_student_report_and_the_class_report_render_in_chromium(graded: Path, tmp_path: Path):
    """Both pages show their totals; the class report shows chapter 1's exercises under their
    chapter and draws its one plot, the distribution of scores. With
    TENXOR_SCREENSHOTS=FOLDER, the screenshots are kept there (student-report.png,
    class-report.png) for a person to look at."""
    page = write_class_report(graded, tmp_path / "class-report.html")
    rows = {fixture.name: results_of(graded, fixture.name) for fixture in BATCH}
    most = expected_score(set(CHAPTER_1))
    browser = DevTools(tmp_path / "profile", width=1280, height=1000)
    try:
        mine = rows["wrong-byte-strides"]
        text, _ = shown_in_chromium(browser, graded / "wrong-byte-strides" / "report.html",
                                    "student-report")  # fmt: skip
        assert f"{number(mine['score'])} of {most} points" in text
        assert "First failure" in text and "expected" in text
        text, plots = shown_in_chromium(browser, page, "class-report")
        assert f"{len(rows)} students graded" in text
        missing = [s for s, r in rows.items() if f"{s} {number(r['score'])} of {most}" not in text]
        assert not missing, f"the class report lacks the totals of {missing}"
        assert "Chapter 1: tenxor/storage.py" in text and all(e in text for e in CHAPTER_1)
        assert len(plots) == 1, f"{len(plots)} plots drawn, expected the distribution alone"
        for k, plot in enumerate(plots):
            share, colours = ink(plot)
            assert share > 0.03 and colours > 8, f"plot {k} of the class report looks blank"
    finally:
        browser.close()


@pytest.mark.skipif(not AS_ROOT, reason="the worker is confined only when grading as root")
def test_grading_changes_nothing_of_the_course_and_leaves_no_process(batch):
    output, course, before = batch
    assert course_state(course) == before
    nothing_planted_where_python_starts()
    no_cell_starts_a_formula(output / "gradebook.csv")
    users = range(UID_BASE, UID_BASE + BLOCK * BLOCKS)
    left = [
        path.name
        for path in Path("/proc").iterdir()
        if path.name.isdigit() and owner_of(path) in users and left_by(path, output.parent)
    ]
    assert not left, f"processes the batch's workers started still run: {left}"
    leftovers = [
        *Path("/tmp").glob("tenxor-carried-state-*"),
        *Path("/dev/shm").glob("tenxor-carried-state-*"),
        *Path("/tmp").glob("tenxor-replayed"),
        *Path("/dev/shm").glob("tenxor-replayed"),
        *(f"{kind} {number}" for kind, number in ipc_objects_of(set(users))),
    ]
    assert not leftovers, f"what the batch's workers left: {leftovers}"


def left_by(process: Path, base: Path) -> bool:
    """Whether a process is one the batch graded in `base` left: a worker of it (its
    command line names the batch's folders) or the sleeper a submission started."""
    try:
        command = (process / "cmdline").read_bytes()
    except OSError:
        return False
    return str(base).encode() in command or b"time.sleep(600)  # left running" in command


def owner_of(process: Path) -> int | None:
    """The real user ID of a process in /proc (None if it has ended)."""
    try:
        status = (process / "status").read_text()
    except OSError:
        return None
    return int(next(line for line in status.splitlines() if line.startswith("Uid:")).split()[1])


@pytest.mark.parametrize("profile, per_test", [("ci-quick", 10), ("ci", 100)])
def test_judge_processes_start_only_where_they_spare_more_than_they_cost(
    tmp_path: Path, profile: str, per_test: int
):
    """A judge process costs about EXAMPLES_PER_JUDGE examples to start: one submission's
    tests go to as many of the set-up's 3 judge processes as get that many each, and a
    batch's examples are recorded once (a recorder on each slot) only where the judges of
    its other groups would draw more than the recorders cost."""
    setup = GradingSetup(ROOT, tmp_path, SandboxMode.UNPROTECTED, LIMITS, 3, 0, profile)
    tests_for = {judges: judges * EXAMPLES_PER_JUDGE // per_test for judges in (1, 2, 3)}
    assert setup.judges_for(0) == 1 and setup.judges_for(tests_for[1] - 1) == 1
    assert setup.judges_for(tests_for[2] - 1) == 1 and setup.judges_for(tests_for[2]) == 2
    assert setup.judges_for(tests_for[3]) == 3 and setup.judges_for(10 * tests_for[3]) == 3
    for slot in range(2):
        setup.slots.put(slot)
    for groups in (2, 3):  # the examples a recorder on each of 2 slots draws once for all
        assert setup.records_for(groups, 2 * tests_for[1] // (groups - 1) + 1)
        assert not setup.records_for(groups, 2 * tests_for[1] // (groups - 1))
    assert not setup.records_for(1, 100 * tests_for[3])
    expected = {"tests/test_storage.py::test_a": "1.1"}
    alone, spread = (judge_options(setup, expected, tmp_path / "log", n) for n in (1, 3))
    assert "xdist.plugin" not in alone and "-n" not in alone, alone
    assert spread[spread.index("-n") + 1] == "3", spread


def test_tests_that_never_ran_score_zero():
    first, second = "tests/test_storage.py::test_1", "tests/test_storage.py::test_2"
    expected = {first: "1.1", second: "1.1"}
    run = Run(collected=dict(expected), results={first: Result(first, "1.1", "passed")})
    results = results_json(expected, run, Assembly(ROOT), LIMITS, SandboxMode.ISOLATED, 1.0)
    assert results["score"] == pytest.approx(BY_ID["1.1"].points / 2)
    assert "test_storage.py::test_2: never ran" in results["tests"][0]["output"]


# The protections each sandbox mode turns off, every other one on: only what it must.
TURNED_OFF = {
    SandboxMode.ISOLATED: set(),
    SandboxMode.SEPARATE_USER: {"an allowlisted file system", "processes of its own",
                                "a /tmp of its own", "cut off from the network", "IPC of its own"},
    SandboxMode.SAME_USER: {"a user of its own", "a cap on processes",
                            "a judge under a user of its own"},
    SandboxMode.UNPROTECTED: {
        "an allowlisted file system", "hidden folders", "processes of its own",
        "a /tmp of its own", "cut off from the network", "IPC of its own", "a user of its own",
        "a cap on processes", "nothing left behind", "a judge under a user of its own",
    },
}  # fmt: skip


def protections_said(said: str, mode: SandboxMode) -> None:
    """`said` names each protection, on as the mode turns it on (with what it did), or off
    (with what that allowed), and why the mode leaves any off."""
    for step in PROTECTIONS:
        assert step.is_on(mode) == (step.name not in TURNED_OFF[mode]), (mode, step.name)
        assert step.describe(mode) in said, (mode, step.name)
        assert (step.description in said) == step.is_on(mode), (mode, step.name)
    assert mode.why_weaker is None or mode.why_weaker in said


@pytest.mark.parametrize("mode", list(SandboxMode))
def test_the_results_say_which_protections_were_on_and_which_off(mode: SandboxMode):
    results = results_json({}, Run(), Assembly(ROOT), LIMITS, mode, 1.0)
    protections_said(results["output"], mode)
    assert results["extra_data"]["sandbox"] == mode.value


def test_the_worker_takes_its_steps_by_the_names_of_protections():
    names = [step.name for step in PROTECTIONS]
    assert len(set(names)) == len(names)
    assert set(STEPS) <= set(names)


def test_sandbox_modes_are_named_in_one_place():
    """The enum holds the names of the modes: no other source file spells one out."""
    spelled = [f'"{mode.value}"' for mode in SandboxMode]
    sources = [*ROOT.glob("instructor/**/*.py"), *ROOT.glob("benchmarks/*.py")]
    for path in sources:
        if path.name != "protections.py":
            text = path.read_text(encoding="utf-8")
            assert not [name for name in spelled if name in text], path


def test_worker_settings_go_to_json_and_back_and_refuse_unknown_or_missing_fields():
    settings = WorkerSettings(
        package="package", tree="judge", mode=SandboxMode.SEPARATE_USER,
        modules=("tenxor",), records=(), uid=61000, home="home", parent=1, commands=3, replies=4,
        memory_mb=1024, file_mb=64, processes=32, call_cpu_seconds=1.0,
    )  # fmt: skip
    text = settings.to_json()
    assert WorkerSettings.from_json(text) == settings
    assert WorkerSettings.from_json(text).mode is SandboxMode.SEPARATE_USER
    data = json.loads(text)
    del data["file_mb"]
    data["fds"] = [3, 4]
    with pytest.raises(ValueError, match="missing file_mb; unknown fds"):
        WorkerSettings.from_json(json.dumps(data))


def test_grading_counts_only_reports_the_judges_user_made(tmp_path: Path):
    """The judge marks each report with its user; a report of any other process (written
    into the judge's folder, or out of form) does not count."""
    test = "tests/test_storage.py::test_numel_matches_numpy_size"
    log = tmp_path / "reports.jsonl"
    lines = [
        {"$report_type": "TestReport", "nodeid": test, "when": "call", "outcome": "passed",
         "judge_user": 0},
        ["not", "a", "report"],
        {"$report_type": "TestReport", "nodeid": test, "when": "call", "outcome": "failed",
         "judge_user": 61032, "failure": {"message": ["not text"], "unfinished": "os.system"}},
    ]  # fmt: skip
    log.write_text("\n".join(json.dumps(line) for line in lines) + "\nnot json\n")
    run = read_report_log(log, {test: "1.1"}, judge=61032)
    assert run.results[test].outcome == "failed"
    assert run.results[test].message == "failed" and run.results[test].unfinished is None
    assert read_report_log(log, {test: "1.1"}, judge=0).results[test].passed


def test_a_judge_of_several_submissions_has_each_reported_under_its_own_number(tmp_path):
    """One judge's log holds the reports of every submission it graded: each is read back
    under its own number only (the reference's own run, which records examples, under none),
    with the time its tests took."""
    test = "tests/test_storage.py::test_numel_matches_numpy_size"
    log = tmp_path / "reports.jsonl"
    outcomes = [(None, "failed", 0.5), (0, "passed", 0.25), (1, "failed", 1.5), (2, "passed", 2.0)]
    reports = [
        {"$report_type": "TestReport", "nodeid": test, "when": "call", "outcome": outcome,
         "judge_user": 0, "submission": number, "duration": seconds}
        for number, outcome, seconds in outcomes
    ]  # fmt: skip
    log.write_text("".join(json.dumps(report) + "\n" for report in reports))
    for number, outcome, seconds in outcomes[1:]:
        run = read_report_log(log, {test: "1.1"}, judge=0, submission=number)
        assert run.results[test].outcome == outcome, f"submission {number}: {run.results}"
        assert run.seconds == seconds, f"submission {number} took {run.seconds} s"
    assert not read_report_log(log, {test: "1.1"}, judge=0, submission=3).results


@pytest.mark.parametrize(
    ("elapsed", "done", "total", "said"),
    [(10.0, 1, 4, "about 30 s left"), (60.0, 2, 6, "about 2 min left"),
     (5.0, 0, 3, "about 15 s left"), (42.0, 5, 5, "done")],
)  # fmt: skip
def test_the_progress_bar_tells_the_time_left_at_the_pace_so_far(elapsed, done, total, said):
    assert time_left(elapsed, done, total) == said, (elapsed, done, total)


def test_the_summary_counts_the_batch_and_names_the_slowest_students():
    graded = {
        name: {"score": score, "execution_time": seconds}
        for name, score, seconds in [("Zoë", 90, 12.0), ("Ann", 40, 30.5), ("Bo", 20, 4.0),
                                     ("Cy d'Arc", 100, 20.2)]
    }  # fmt: skip
    lines = summary(graded, kept=3, refused={"gradebook.csv": "grading writes a file of that name"})
    assert lines == [
        "Graded 4 students, kept 3 graded before, refused 1.",
        f"Mean score of those graded: {sum(r['score'] for r in graded.values()) / 4:.1f}.",
        "Refused: gradebook.csv: grading writes a file of that name.",
        "Slowest: Ann 30 s, Cy d'Arc 20 s, Zoë 12 s.",
    ]


def test_no_process_is_started_with_preexec_fn():
    """Grading starts test processes from several threads at once, where Python documents
    preexec_fn as unsafe: children limit themselves instead (running.LIMITED)."""
    sources = [*ROOT.glob("tenxor/**/*.py"), *ROOT.glob("instructor/**/*.py")]
    assert sources
    for path in sources:
        assert "preexec_fn=" not in path.read_text(encoding="utf-8"), path


@pytest.mark.skipif(not AS_ROOT, reason="the blocks of users are root's to claim")
def test_a_lock_folder_another_user_made_is_refused(tmp_path: Path, monkeypatch):
    """A local user who makes the blocks' lock folder first (in world-writable /run/lock)
    could hold every block, or hand two gradings the same one: grading refuses it, naming
    it, before it claims anything."""
    import instructor.sandbox.launcher as launcher

    theirs = tmp_path / "locks"
    theirs.mkdir(mode=0o777)
    os.chown(theirs, 65534, 65534)
    monkeypatch.setattr(launcher, "USERS_LOCKS", theirs)
    with pytest.raises(OSError, match=f"{theirs}.*owner 65534"), launcher.grading_users():
        pass
    os.chown(theirs, 0, 0)  # root's, but open to every user
    theirs.chmod(0o777)
    with pytest.raises(OSError, match=f"{theirs}.*mode 777"), launcher.grading_users():
        pass
    theirs.chmod(0o700)
    assert launcher.users_locks() == theirs
