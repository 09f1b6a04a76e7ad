"""The pages made after grading, from made-up results: a student's report.html says what
results.json says and never what a hidden test found; the class report adds up a class as
counted by hand, escapes what submissions say, and fetches nothing."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from instructor.grading import Assembly, results_json
from instructor.grading.batch import RECORD as GRADING_RECORD
from instructor.grading.batch import Batch, UnrecordedResults
from instructor.grading.class_report import (
    ExerciseSummary,
    FailingTest,
    ModuleProblem,
    StartedExercise,
    exercise_summaries,
    failing_tests,
    reason_of,
    scores,
    started_exercises,
    ungraded_modules,
    write_class_report,
)
from instructor.grading.student_report import report_html
from instructor.sandbox.launcher import SandboxLimits
from instructor.sandbox.protections import SandboxMode
from tenxor.course.catalog import BY_ID, CATALOG
from tenxor.course.engine import Result, Run, function_of, short_name
from tenxor.course.failure import Failure
from tenxor.course.failure_words import record_in_words
from tests.tooling.browser import DevTools
from tests.tooling.pages import elements_of, page_text
from tests.tooling.submissions import ROOT

pytestmark = pytest.mark.provided

NUMEL, BYTES = "tests/test_storage.py::test_numel", "tests/test_storage.py::test_bytes"
RULE, VALUES = "tests/test_storage.py::test_rule", "tests/hidden/test_h.py::test_values"
RECORD = {"message": "numel of (2, 3): got 5, expected 6", "what": "numel of (2, 3)",
          "got": "5", "expected": "6", "call": "numel(shape=(2, 3))", "returned": "5"}  # fmt: skip


def passed(exercise_id: str, hidden: bool = False) -> dict[str, Any]:
    return {"exercise": exercise_id, "passed": True, "hidden": hidden, "reason": ""}


def failed(
    exercise_id: str, reason: str, hidden: bool = False, record: dict | None = None
) -> dict[str, Any]:
    outcome = {"exercise": exercise_id, "passed": False, "hidden": hidden, "reason": reason}
    return outcome | ({"failure": record} if record else {})


def not_done(exercise_id: str, hidden: bool = False) -> dict[str, Any]:
    reason = "not done: it still raises NotImplementedError"
    return failed(exercise_id, reason, hidden) | {"unfinished": exercise_id}


def made_up(exercises: dict[str, float], outcomes: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Results as grading writes them, for the exercises scored in `exercises` (here mostly
    1.1, worth 2 points, and 1.2, worth 3)."""
    entries = [
        {"name": f"{e} {BY_ID[e].title} (public tests)", "number": e, "score": score,
         "max_score": BY_ID[e].points, "status": "failed", "output": "", "visibility": "visible"}
        for e, score in exercises.items()
    ]  # fmt: skip
    return {
        "score": round(sum(exercises.values()), 2),
        "output": "Graded modules: tenxor/storage.py.",
        "tests": entries,
        "extra_data": {
            "max_score": sum(BY_ID[e].points for e in exercises),
            "exercises": exercises,
            "outcomes": outcomes,
        },
    }


# ada: 1.1 done, 1.2 started (one public and one hidden test wrong); bob: 1.1 started (both
# cases of one test wrong), 1.2 not done; cy: everything done.
CLASS = {
    "ada": made_up(
        {"1.1": 2, "1.2": 1.5},
        {
            f"{NUMEL}[x]": passed("1.1"), f"{NUMEL}[y]": passed("1.1"), BYTES: passed("1.1"),
            RULE: failed("1.2", f"{RECORD['message']} (storage.py:10)", record=RECORD),
            f"{VALUES}[0]": passed("1.2", hidden=True),
            f"{VALUES}[1]": failed("1.2", "got 3, expected 4 (storage.py:11)", hidden=True),
        },
    ),
    "bob": made_up(
        {"1.1": 1, "1.2": 0},
        {
            f"{NUMEL}[x]": failed("1.1", "expected ValueError, got nothing raised"),
            f"{NUMEL}[y]": failed("1.1", "expected ValueError, got nothing raised"),
            BYTES: passed("1.1"), RULE: not_done("1.2"),
            f"{VALUES}[0]": not_done("1.2", hidden=True),
            f"{VALUES}[1]": not_done("1.2", hidden=True),
        },
    ),
    "cy": made_up(
        {"1.1": 2, "1.2": 3},
        {
            f"{NUMEL}[x]": passed("1.1"), f"{NUMEL}[y]": passed("1.1"), BYTES: passed("1.1"),
            RULE: passed("1.2"), f"{VALUES}[0]": passed("1.2", hidden=True),
            f"{VALUES}[1]": passed("1.2", hidden=True),
        },
    ),
}  # fmt: skip


def grades_folder(folder: Path, rows: dict[str, dict[str, Any]]) -> Path:
    """A grading output folder holding each student's results.json, as grading writes it
    (with its record of what it wrote, which the class report trusts and nothing else)."""
    batch = Batch({}, folder)
    for student, results in rows.items():
        batch.write_results(student, results)
    return folder


def test_each_exercise_is_summed_up_as_counted_by_hand():
    assert scores(CLASS) == [3.5, 1, 5]
    title = {e: BY_ID[e].title for e in ("1.1", "1.2")}
    assert exercise_summaries(CLASS) == [  # bob's 1.2 still raises NotImplementedError
        ExerciseSummary("1.1", title["1.1"], 2, 3, pytest.approx(5 / 3), 2, 1, 0, 0),
        ExerciseSummary("1.2", title["1.2"], 3, 3, pytest.approx(1.5), 1, 1, 1, 0),
    ]


def test_the_tests_that_fail_most_count_each_student_once_and_most_failed_first():
    """bob's 1.2 still raises NotImplementedError: that is 1.2 not started, not a failure of
    its tests; dan fails what ada fails."""
    wrong = "expected ValueError, got nothing raised"
    assert failing_tests({**CLASS, "dan": CLASS["ada"]}) == [
        FailingTest(RULE, "1.2", False, 1, 2, [(RECORD["message"], 2)], [(RULE, 2)]),
        FailingTest(VALUES, "1.2", True, 2, 2, [("got 3, expected 4", 2)], [(f"{VALUES}[1]", 2)]),
        FailingTest(
            NUMEL, "1.1", False, 2, 1, [(wrong, 1)], [(f"{NUMEL}[x]", 1), (f"{NUMEL}[y]", 1)]
        ),
    ]
    ties = [t.test for t in failing_tests(CLASS, limit=2)]  # 1 student each
    assert ties == [NUMEL, RULE], f"ties in the catalog's order, public tests first: {ties}"


def test_exercises_started_but_not_finished_name_the_students_and_their_failing_tests():
    assert started_exercises(CLASS) == [
        StartedExercise("1.1", BY_ID["1.1"].title, ["bob"], [(NUMEL, 1)]),
        StartedExercise("1.2", BY_ID["1.2"].title, ["ada"], [(RULE, 1), (VALUES, 1)]),
    ]


def test_a_reason_loses_the_place_it_was_raised_at_and_nothing_else():
    assert reason_of({"reason": "ValueError: no (tenxor/core.py:137 in numel)"}) == "ValueError: no"
    assert reason_of({"reason": "got (1, 2), expected (2, 1)"}) == "got (1, 2), expected (2, 1)"


def test_a_student_report_explains_public_failures_and_only_counts_hidden_ones():
    text = page_text(report_html(CLASS["ada"], "ada"))
    assert "3.5 of 5 points" in text and f"1.2 {BY_ID['1.2'].title} 1.5 of 3" in text
    assert " ".join("\n".join(record_in_words(Failure.from_dict(RECORD))).split()) in text
    assert "1 of 2 hidden tests passed" in text and "test_values" not in text  # counts only
    assert "got 3, expected 4" not in text and "storage.py:11" not in text
    assert "Graded modules: tenxor/storage.py." in text
    bob = page_text(report_html(CLASS["bob"], "bob"))
    assert "Not started: " in bob and "still raises NotImplementedError" in bob


def test_a_module_that_was_not_graded_is_named_instead_of_its_stubs_failures():
    broken = json.loads(json.dumps(CLASS["bob"]))
    why = "tenxor/storage.py has a syntax error at line 3: invalid syntax"
    broken["extra_data"]["problems"] = {"1.2": why}
    text = page_text(report_html(broken, "bob"))
    assert f"{why}; its exercises score 0" in text and "module not graded" in text
    assert "Not started: round_to_bfloat16" not in text


def not_graded(results: dict[str, Any], why: str) -> dict[str, Any]:
    """`results` as grading writes them when the module of their exercises was not graded:
    every exercise scores 0, and each of its tests failed for that alone."""
    broken = json.loads(json.dumps(results))
    extra = broken["extra_data"]
    extra["exercises"] = dict.fromkeys(extra["exercises"], 0)
    extra["problems"] = dict.fromkeys(extra["exercises"], why)
    extra["outcomes"] = {
        test: failed(outcome["exercise"], f"not graded: {why}", outcome["hidden"])
        | {"problem": why}
        for test, outcome in extra["outcomes"].items()
    }
    broken["score"] = 0
    for entry in broken["tests"]:
        entry["score"] = 0
    return broken


def test_a_module_not_graded_is_counted_once_at_the_module_and_never_at_its_tests(tmp_path):
    whys = {s: f"tenxor/storage.py has a syntax error at line {n}: invalid syntax"
            for s, n in (("dee", 3), ("eve", 9))}  # fmt: skip
    rows = {**CLASS, **{student: not_graded(CLASS["cy"], why) for student, why in whys.items()}}
    assert failing_tests(rows) == failing_tests(CLASS), "dee and eve failed nothing themselves"
    found = ungraded_modules(rows)
    assert found == [
        ModuleProblem("tenxor/storage.py", ["dee", "eve"], ["1.1", "1.2"],
                      [(whys["dee"], 1), (whys["eve"], 1)])
    ], f"ungraded_modules gave {found!r}"  # fmt: skip
    first = exercise_summaries(rows)[0]
    assert (first.students, first.not_graded, first.mean) == (5, 2, pytest.approx(5 / 3)), (
        f"1.1 over the 3 students whose storage.py was graded, 2 not graded: {first!r}"
    )
    html = write_class_report(grades_folder(tmp_path / "grades", rows), tmp_path / "class.html")
    text = page_text(html.read_text(encoding="utf-8"))
    assert "tenxor/storage.py not graded for 2 students" in text, text
    assert [text.count(why) for why in whys.values()] == [1, 1], f"each reason once: {text}"
    assert "not graded:" not in text, f"a test's reason names the module problem: {text}"


LONG = (
    "tests/test_storage.py::test_round_to_bfloat16_rounds_every_float32_to_its_nearest"
    "[value=3.4028234663852886e+38-rounding=nearest_even-expected=inf-why=overflow]"
)


def test_a_long_parametrized_test_name_is_in_the_class_report_in_full(tmp_path):
    ada = json.loads(json.dumps(CLASS["ada"]))
    ada["extra_data"]["outcomes"][LONG] = failed("1.2", "got 3.39e+38, expected inf")
    rows = {**CLASS, "ada": ada}
    html = write_class_report(grades_folder(tmp_path / "grades", rows), tmp_path / "class.html")
    html = html.read_text(encoding="utf-8")
    text, titles = page_text(html), [a.get("title") for _, a in elements_of(html)]
    assert short_name(function_of(LONG)) in text, f"the test's function is cut: {text}"
    assert LONG in text or LONG in titles, f"{LONG} neither shown nor in a title: {text}"


READABLE = 10.0  # px: the smallest label an instructor reads without zooming
PAGE_WIDTH = 1280  # px: a window wider than the page's largest width
MATPLOTLIB_LABEL = 10 * 4 / 3  # px: the size of matplotlib's labels (10 points) drawn 1:1


def whole_course(student: int) -> dict[str, Any]:
    """Results for every exercise of the catalog, by turns done, half done and not started
    (shifted by `student`), each graded by a test of two cases."""
    scores, outcomes = {}, {}
    for k, item in enumerate(CATALOG):
        share = ((k + student) % 3) / 2
        scores[item.id] = item.points * share
        test = f"tests/test_{item.module.rsplit('.', 1)[-1]}.py::test_{item.function}"
        half = failed(item.id, "got 1, expected 2") if share else not_done(item.id)
        outcomes[f"{test}[a]"] = passed(item.id) if share else not_done(item.id)
        outcomes[f"{test}[b]"] = passed(item.id) if share == 1 else half
    return made_up(scores, outcomes)


SHOWN_IDS = """(ids => {
  const found = [];
  let heading = "";
  const walker = document.createTreeWalker(document.body,
                                           NodeFilter.SHOW_ELEMENT | NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (node.nodeType === Node.ELEMENT_NODE) {
      if (/^H[1-6]$/.test(node.tagName)) heading = node.textContent.trim();
      continue;
    }
    const text = node.textContent.trim();
    if (ids.includes(text))
      found.push([text, heading, parseFloat(getComputedStyle(node.parentElement).fontSize)]);
  }
  return found;
})"""


def test_each_exercise_is_shown_under_its_chapter_readable_at_the_pages_full_width(tmp_path):
    """The whole course graded for three students, shown in Chromium: each exercise's id is
    text under the heading of its chapter, at least READABLE px tall; every plot is drawn at
    a scale that keeps matplotlib's 10-point labels READABLE; the page is no wider than the
    window."""
    rows = {name: whole_course(k) for k, name in enumerate(("ada", "bob", "cy"))}
    page = write_class_report(grades_folder(tmp_path / "grades", rows), tmp_path / "class.html")
    html = page.read_text(encoding="utf-8")
    browser = DevTools(tmp_path / "profile", width=PAGE_WIDTH, height=1000)
    try:
        browser.call("Page.navigate", url=page.as_uri())
        loaded = (
            f"location.href === {json.dumps(page.as_uri())} && document.readyState === 'complete'"
        )
        assert browser.wait_for(loaded, seconds=60), "the class report did not load"
        shown = browser.evaluate(f"{SHOWN_IDS}({json.dumps(list(BY_ID))})")
        drawn = browser.evaluate(
            "[...document.querySelectorAll('svg')].map(e => e.getBoundingClientRect().width)"
        )
        widths = browser.evaluate("[document.documentElement.scrollWidth, innerWidth]")
    finally:
        browser.close()
    unreadable = [
        item.id
        for item in CATALOG
        if not any(
            shown_id == item.id and re.match(rf"Chapter {item.chapter.number}\b", heading)
            and size >= READABLE
            for shown_id, heading, size in shown
        )
    ]  # fmt: skip
    assert not unreadable, (
        f"exercises not shown as text of at least {READABLE} px under their chapter's heading: "
        f"{unreadable}; shown (id, heading, px): {shown}"
    )
    natural = [
        float(width) * 4 / 3 for width in re.findall(r'<svg\b[^>]*\swidth="([\d.]+)pt"', html)
    ]
    assert len(natural) == len(drawn), f"{len(drawn)} plots drawn, {len(natural)} sized in points"
    small = [(n, d) for n, d in zip(natural, drawn) if MATPLOTLIB_LABEL * d / n < READABLE]
    assert not small, (
        f"plots (natural px, drawn px) whose labels come out under {READABLE} px: {small}"
    )
    assert widths[0] <= widths[1], f"the page is {widths[0]} px wide in a {widths[1]} px window"


def test_the_results_record_each_tests_outcome_without_a_hidden_tests_record():
    hidden = "tests/hidden/test_storage_strides_hidden.py::test_h"
    record = Failure("got 5, expected 6", got="5", expected="6", call="numel(shape=(2, 3))")
    results = {
        NUMEL: Result(NUMEL, "1.1", "passed"),
        BYTES: Result.of_record(BYTES, "1.1", "failed", record),
        hidden: Result.of_record(hidden, "1.1", "failed", record),
        RULE: Result(RULE, "1.2", "failed", "NotImplementedError", unfinished="1.2"),
    }
    never = "tests/test_storage.py::test_never_run"
    expected = {NUMEL: "1.1", BYTES: "1.1", hidden: "1.1", RULE: "1.2", never: "1.2"}
    run = Run(collected=dict(expected), results=results)
    limits = SandboxLimits(1.0, 10.0, 2.0, 1024, 2048)
    found = results_json(expected, run, Assembly(ROOT), limits, SandboxMode.ISOLATED, 1.0)
    assert found["extra_data"]["outcomes"] == {
        NUMEL: {"exercise": "1.1", "passed": True, "hidden": False, "reason": ""},
        BYTES: {"exercise": "1.1", "passed": False, "hidden": False,
                "reason": "got 5, expected 6", "failure": record.to_dict()},
        hidden: {"exercise": "1.1", "passed": False, "hidden": True,
                 "reason": "got 5, expected 6"},
        RULE: {"exercise": "1.2", "passed": False, "hidden": False, "unfinished": "1.2",
               "reason": "not done: it still raises NotImplementedError"},
        never: {"exercise": "1.2", "passed": False, "hidden": False, "reason": "never ran"},
    }  # fmt: skip


def test_what_a_submission_says_is_escaped_and_the_pages_fetch_and_run_nothing(tmp_path):
    hostile = "<img src=x onerror=alert(1)><script>alert(2)</script>"
    bob = json.loads(json.dumps(CLASS["bob"]))
    bob["extra_data"]["outcomes"][f"{NUMEL}[x]"] = failed(
        "1.1", hostile, record={"message": hostile}
    )
    bob["output"] += hostile
    rows = {**CLASS, "bob": bob, "<b>eve": CLASS["cy"]}  # a folder name holds no /
    report = report_html(bob, "<b>bob</b>")
    page = write_class_report(grades_folder(tmp_path / "grades", rows), tmp_path / "class.html")
    html = page.read_text(encoding="utf-8")
    for text in (report, html):
        elements = elements_of(text)
        assert not {tag for tag, _ in elements} & {"script", "img", "link", "iframe", "object"}
        named = {name for _, attributes in elements for name in attributes}
        assert not [name for name in named if name == "src" or name.startswith("on")]
        assert "@import" not in text and "Content-Security-Policy" in text
    assert hostile in page_text(report) and "<b>bob</b>" in page_text(report)
    assert hostile in page_text(html) and "<b>eve" in page_text(html)
    links = [a.get("href") or a.get("xlink:href") for _, a in elements_of(html)]
    inside = [link for link in links if link and not link.startswith("#")]
    assert all(
        link.endswith("/report.html") and ":" not in link and not link.startswith("/")
        for link in inside
    ), inside  # the page itself, or a student's report beside it


def test_the_class_report_is_the_same_bytes_every_time_and_links_each_report(tmp_path):
    grades = grades_folder(tmp_path / "grades", CLASS)
    for student, results in CLASS.items():
        (grades / student / "report.html").write_text(report_html(results, student))
    first = write_class_report(grades, tmp_path / "one.html").read_bytes()
    assert write_class_report(grades, tmp_path / "two.html").read_bytes() == first
    html = first.decode()
    ids = [a["id"] for _, a in elements_of(html) if "id" in a]
    assert html.count("<svg ") == 1 and len(set(ids)) == len(ids)
    assert 'href="grades/ada/report.html"' in html
    text = page_text(html)
    assert "3 students graded" in text and "ada 3.5 of 5" in text and "bob 1 of 5" in text


def test_an_output_folder_without_results_gets_a_page_that_says_so(tmp_path):
    grades = tmp_path / "grades"
    grades.mkdir()
    (grades / GRADING_RECORD).write_text("{}", encoding="utf-8")  # grading that graded nobody
    page = write_class_report(grades, grades / "class-report.html")
    assert "No results.json found" in page_text(page.read_text())
    (tmp_path / "forged").mkdir()
    with pytest.raises(UnrecordedResults, match="holds no grading record"):
        write_class_report(tmp_path / "forged", tmp_path / "forged" / "class-report.html")


def test_the_report_command_writes_the_class_report_into_the_grades(tmp_path):
    grades = grades_folder(tmp_path / "grades", CLASS)
    command = [sys.executable, "-m", "instructor.cli", "report", str(grades)]
    done = subprocess.run(command, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert (grades / "class-report.html").is_file() and "Class report:" in done.stdout
    done = subprocess.run([*command[:-1], str(tmp_path / "none")], capture_output=True, text=True)
    assert done.returncode != 0 and "is not a folder" in done.stderr


def test_grading_and_its_reports_never_import_matplotlib():
    """The autograder installs the grading extra only: grading, report.html and even the
    class report's module load without matplotlib."""
    script = (
        "import sys, instructor.cli, instructor.grading, instructor.grading.class_report\n"
        "from instructor.grading.student_report import report_html\n"
        "print(sorted(m for m in sys.modules if m.startswith('matplotlib')))"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0 and done.stdout.strip() == "[]", done.stderr
