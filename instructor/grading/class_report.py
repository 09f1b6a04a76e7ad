"""The class report: one HTML page, from every GRADES/<student>/results.json, that shows where
the class is stuck: the distribution of scores; each chapter's exercises with their mean score
and how many students are done, started, have no points, have not started (the exercise still
raises NotImplementedError) or had its module not graded; the modules not graded (missing, not
compiling, not importing), each counted once with its students and reasons; the tests that fail
most with their most common reasons (hidden tests too: this page is the instructor's), counting
only the failures of the tests themselves, never those of a module not graded or an exercise
not started; and the exercises started but not finished.

Test names are shown in full, or in short with the full name in a `title` shown on hover. The
distribution is drawn with matplotlib (the `report` extra) and inlined as SVG; everything else
is HTML tables with bars. The page has no script and fetches nothing. Only this module imports
matplotlib, and only when it draws, so grading (and Gradescope's autograder) never needs it."""

from __future__ import annotations

import io
import os
import re
import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from typing import Any
from urllib.parse import quote

from tenxor.course.catalog import BY_ID, module_file
from tenxor.course.engine import function_of, short_name
from tenxor.course.files import write_atomically

from .batch import REPORT, recorded_results, shown
from .merge import partial_merge
from .student_report import STYLE, bar, page, points

LISTED_TESTS = 15  # the tests that fail most, in the table
LISTED_REASONS = 3  # the most common reasons given per failing test or module not graded
LISTED_CASES = 3  # the cases of a test function that fail for the most students
LISTED_STUDENTS = 30  # students named per exercise started but not finished, or module
REASON_CHARS = 240  # a reason longer than this is shown cut, in full on hover
LOCATION = re.compile(r"\s*\([^()]*\.py:\d+[^()]*\)$")  # "(storage.py:42 in numel)" ending a reason
COLOURS = {"done": "#2e8b57", "ink": "#1d2330"}  # the distribution plot's
# Where a student is with an exercise, in the order of its bar, with the class of its colour.
STATUSES = {"done": "done", "started": "partly", "no points": "none",
            "not started": "unstarted", "not graded": "ungraded"}  # fmt: skip

CLASS_STYLE = """
main { max-width: 72rem; }
.figure svg { max-width: 100%; height: auto; display: block; margin: 0 auto; }
.figure p.caption, p.caption { color: #5a6272; font-size: .9rem; margin: .2rem 0 0; }
.numbers { display: flex; flex-wrap: wrap; gap: .8rem; }
.numbers div { background: #fff; border: 1px solid #d8dbe2; border-radius: 8px;
               padding: .6rem 1rem; min-width: 8rem; }
.numbers b { display: block; font-size: 1.6rem; }
.numbers span { color: #5a6272; font-size: .85rem; }
td.reasons { font-size: .85rem; width: 45%; overflow-wrap: anywhere; }
td code, td { overflow-wrap: anywhere; }
td.reasons div, td .cases div { margin: .1rem 0; }
td .cases { font-size: .85rem; margin-top: .2rem; }
.tag { font-size: .75rem; color: #5a6272; border: 1px solid #c5cad3; border-radius: 4px;
       padding: 0 .3rem; margin-left: .3rem; }
.scroll { overflow-x: auto; }
h3.chapter { margin: 1.2rem 0 0; }
table.exercises { table-layout: fixed; }
table.exercises .id { width: 3.4rem; }
table.exercises .count { width: 3.8rem; }
table.exercises .bars { width: 8.5rem; }
.meter { display: flex; align-items: center; gap: .4rem; }
.meter .bar { flex: 1; min-width: 3rem; }
.stack { display: flex; }
.unstarted { background: #c5cad3; } .ungraded { background: #5a6272; }
.legend { font-size: .9rem; color: #5a6272; display: flex; flex-wrap: wrap; gap: .3rem 1rem; }
.legend span.swatch { display: inline-block; width: .8rem; height: .8rem; border-radius: 2px;
                      margin-right: .3rem; vertical-align: -.05rem; }
"""


@dataclass(frozen=True)
class ExerciseSummary:
    """How the class did on one exercise: its points, the students graded on it, their mean
    score (over those whose module was graded; None if none was), and how many are done (all
    its points), started (some but not all), have not started it (0 points, it still raises
    NotImplementedError) or had its module not graded; the others have no points."""

    id: str
    title: str
    points: float
    students: int
    mean: float | None
    done: int
    started: int
    not_started: int
    not_graded: int

    @property
    def no_points(self) -> int:
        """The students who wrote it and scored nothing."""
        return self.students - self.done - self.started - self.not_started - self.not_graded

    def counts(self) -> dict[str, int]:
        """How many students are at each status (STATUSES), in its order."""
        found = (self.done, self.started, self.no_points, self.not_started, self.not_graded)
        return dict(zip(STATUSES, found))


@dataclass(frozen=True)
class FailingTest:
    """A test function (its cases of one exercise) and the students it failed for itself
    (not because its module was not graded or its exercise is not started): how many, the
    most common reasons (a student's first failing case's) and the cases that failed for
    the most students, with how many students each."""

    test: str
    exercise: str
    hidden: bool
    cases: int
    failed: int
    reasons: list[tuple[str, int]] = field(default_factory=list)
    failing_cases: list[tuple[str, int]] = field(default_factory=list)


@dataclass(frozen=True)
class ModuleProblem:
    """A module that was not graded (missing, not compiling, not importing) for some
    students: who, its exercises that scored 0 for it, and the reasons with how many students
    each, most common first."""

    module: str
    students: list[str]
    exercises: list[str]
    reasons: list[tuple[str, int]]


@dataclass(frozen=True)
class StartedExercise:
    """An exercise some students started but did not finish (some but not all its points):
    who, and the test functions that fail for most of them, with how many each."""

    id: str
    title: str
    students: list[str]
    tests: list[tuple[str, int]]


def exercise_points(results: dict[str, Any], exercise_id: str) -> float:
    """The points an exercise graded was worth, from the test entries (the catalog's when
    they do not say)."""
    entries = [e for e in results.get("tests", []) if str(e.get("number")) == exercise_id]
    if entries:
        return sum(float(entry.get("max_score", 0)) for entry in entries)
    item = BY_ID.get(exercise_id)
    return float(item.points) if item else 0.0


def catalog_place(exercise_id: str) -> int:
    """Where an exercise comes in the catalog (after every exercise of it, if not in it)."""
    order = list(BY_ID)
    return order.index(exercise_id) if exercise_id in BY_ID else len(order)


def graded_exercises(rows: dict[str, dict[str, Any]]) -> list[str]:
    """The exercises graded for any student, in the catalog's order (others last)."""
    found = {e for results in rows.values() for e in results["extra_data"].get("exercises", {})}
    return sorted(found, key=lambda e: (catalog_place(e), e))


def scores(rows: dict[str, dict[str, Any]]) -> list[float]:
    """Each student's total score, in the order of the students."""
    return [float(results.get("score", 0)) for results in rows.values()]


def most_points(rows: dict[str, dict[str, Any]]) -> float:
    """The most points a student could score (the largest max_score of the results)."""
    return max((float(r["extra_data"].get("max_score", 0)) for r in rows.values()), default=0.0)


def is_done(score: float, available: float) -> bool:
    return score >= available - 1e-6


def problems_of(results: dict[str, Any]) -> dict[str, str]:
    """Why the module of an exercise was not graded, by exercise, for one student."""
    return results["extra_data"].get("problems") or {}


def is_own_failure(outcome: dict[str, Any], problems: dict[str, str]) -> bool:
    """Whether a test failed for what its exercise's code does: not because the module of
    its exercise was not graded (`problems`, by exercise) or because the exercise still
    raises NotImplementedError (those are counted at the module and at the exercise)."""
    cascaded = outcome.get("problem") or outcome.get("unfinished")
    return not outcome.get("passed") and not cascaded and outcome.get("exercise") not in problems


def exercise_status(results: dict[str, Any], exercise_id: str) -> str | None:
    """Where a student is with an exercise graded for them (a key of STATUSES), None if it
    was not graded for them."""
    score = results["extra_data"].get("exercises", {}).get(exercise_id)
    if score is None:
        return None
    if exercise_id in problems_of(results):
        return "not graded"
    if is_done(float(score), exercise_points(results, exercise_id)):
        return "done"
    if score > 0:
        return "started"
    failing = [
        outcome
        for outcome in results["extra_data"].get("outcomes", {}).values()
        if outcome.get("exercise") == exercise_id and not outcome.get("passed")
    ]
    return "not started" if failing and all(o.get("unfinished") for o in failing) else "no points"


def exercise_summaries(rows: dict[str, dict[str, Any]]) -> list[ExerciseSummary]:
    """How the class did on each exercise graded, over the students graded on it."""
    summaries = []
    for exercise_id in graded_exercises(rows):
        graded = [r for r in rows.values() if exercise_id in r["extra_data"].get("exercises", {})]
        status = Counter(exercise_status(results, exercise_id) for results in graded)
        marks = [
            float(results["extra_data"]["exercises"][exercise_id])
            for results in graded
            if exercise_id not in problems_of(results)
        ]
        item = BY_ID.get(exercise_id)
        summaries.append(
            ExerciseSummary(
                id=exercise_id,
                title=item.title if item else "",
                points=max(exercise_points(results, exercise_id) for results in graded),
                students=len(graded),
                mean=statistics.fmean(marks) if marks else None,
                done=status["done"],
                started=status["started"],
                not_started=status["not started"],
                not_graded=status["not graded"],
            )
        )
    return summaries


def reason_of(outcome: dict[str, Any]) -> str:
    """A failing test's reason without the place it was raised at, which differs from one
    student's code to the next."""
    return LOCATION.sub("", str(outcome.get("reason", ""))) or "failed"


def failing_tests(rows: dict[str, dict[str, Any]], limit: int = LISTED_TESTS) -> list[FailingTest]:
    """The test functions that fail most for an exercise, public and hidden, a student
    counted once however many of its cases fail for them, and only for failures of the test
    itself (is_own_failure): most students first, then in the catalog's order."""
    failed: Counter[tuple[str, str]] = Counter()
    reasons: dict[tuple[str, str], Counter[str]] = {}
    failing_cases: dict[tuple[str, str], Counter[str]] = {}
    hidden: dict[tuple[str, str], bool] = {}
    cases: dict[tuple[str, str], set[str]] = {}
    for results in rows.values():
        problems = problems_of(results)
        mine: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}
        for test, outcome in results["extra_data"].get("outcomes", {}).items():
            key = (function_of(test), str(outcome.get("exercise", "")))
            cases.setdefault(key, set()).add(test)
            hidden[key] = bool(outcome.get("hidden"))
            if is_own_failure(outcome, problems):
                mine.setdefault(key, {})[test] = outcome
        for key, outcomes in mine.items():
            failed[key] += 1
            reasons.setdefault(key, Counter()).update([reason_of(next(iter(outcomes.values())))])
            failing_cases.setdefault(key, Counter()).update(outcomes.keys())
    ranked = sorted(failed, key=lambda k: (-failed[k], catalog_place(k[1]), hidden[k], k))
    return [
        FailingTest(
            test=key[0],
            exercise=key[1],
            hidden=hidden[key],
            cases=len(cases[key]),
            failed=failed[key],
            reasons=reasons[key].most_common(LISTED_REASONS),
            failing_cases=failing_cases[key].most_common(LISTED_CASES),
        )
        for key in ranked[:limit]
    ]


def module_of(exercise_id: str) -> str:
    """The file of the module that holds an exercise."""
    item = BY_ID.get(exercise_id)
    return item.path if item else f"the module of exercise {exercise_id}"


def ungraded_modules(rows: dict[str, dict[str, Any]]) -> list[ModuleProblem]:
    """The modules not graded for some students, each once: for the most students first,
    then in the catalog's order."""
    students: dict[str, list[str]] = {}
    exercises: dict[str, set[str]] = {}  # the module's exercises that were not graded
    reasons: dict[str, Counter[str]] = {}
    for student, results in rows.items():
        mine: dict[str, set[str]] = {}
        for exercise_id, why in problems_of(results).items():
            mine.setdefault(module_of(exercise_id), set()).add(str(why))
            exercises.setdefault(module_of(exercise_id), set()).add(exercise_id)
        for module, whys in mine.items():
            students.setdefault(module, []).append(student)
            reasons.setdefault(module, Counter()).update(sorted(whys))
    first = {module: min(map(catalog_place, found)) for module, found in exercises.items()}
    return [
        ModuleProblem(
            module,
            students[module],
            sorted(exercises[module], key=lambda e: (catalog_place(e), e)),
            reasons[module].most_common(),
        )
        for module in sorted(students, key=lambda m: (-len(students[m]), first[m], m))
    ]


def started_exercises(rows: dict[str, dict[str, Any]]) -> list[StartedExercise]:
    """The exercises some students have some but not all points of: who, and the test
    functions that fail for most of them."""
    found = []
    for exercise_id in graded_exercises(rows):
        students, tests = [], Counter()
        for student, results in rows.items():
            if exercise_status(results, exercise_id) != "started":
                continue
            students.append(student)
            failing = [
                function_of(test)
                for test, outcome in results["extra_data"].get("outcomes", {}).items()
                if outcome.get("exercise") == exercise_id and not outcome.get("passed")
            ]
            tests.update(dict.fromkeys(failing, 1))  # a student counts once per function
        if students:
            item = BY_ID.get(exercise_id)
            title = item.title if item else ""
            found.append(StartedExercise(exercise_id, title, students, tests.most_common(5)))
    return found


def inline_svg(figure: Any, name: str, label: str) -> str:
    """A matplotlib figure as an SVG element to put in a page: its ids prefixed by `name`
    (so that two figures' ids never clash), labelled for screen readers, the same bytes on
    every run."""
    import matplotlib

    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": "tenxor", "svg.fonttype": "path"}):
        figure.savefig(buffer, format="svg", metadata={"Date": None}, bbox_inches="tight")
    text = buffer.getvalue()
    text = text[text.index("<svg") :]
    text = re.sub(r'(\bid="|href="#|url\(#)', lambda m: f"{m[1]}{name}-", text)
    return text.replace("<svg ", f'<svg role="img" aria-label="{escape(label)}" ', 1)


def new_figure(width: float, height: float) -> Any:
    """An empty matplotlib figure drawn by the Agg canvas (no display, no pyplot state)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(figure)
    return figure


def styled(axes: Any) -> None:
    """Axes with the page's colours: no top or right frame, a light grid."""
    for side in ("top", "right"):
        axes.spines[side].set_visible(False)
    axes.grid(axis="y", color="#e3e6ec")
    axes.set_axisbelow(True)


def distribution_plot(totals: list[float], most: float) -> str:
    """A histogram of the students' scores, with the mean and median marked."""
    figure = new_figure(8, 3.2)
    axes = figure.add_subplot()
    top = most or max(totals, default=1.0) or 1.0
    axes.hist(totals, bins=10, range=(0, top), color=COLOURS["done"], edgecolor="white")
    for value, word, style in ((statistics.fmean(totals), "mean", "--"),
                               (statistics.median(totals), "median", ":")):  # fmt: skip
        axes.axvline(value, color=COLOURS["ink"], linestyle=style, linewidth=1.2,
                     label=f"{word} {value:.1f}")  # fmt: skip
    axes.set_xlim(0, top)
    axes.set_xlabel(f"score (of {points(top)} points)")
    axes.set_ylabel("students")
    axes.yaxis.get_major_locator().set_params(integer=True)
    axes.legend(frameon=False, ncols=2, loc="lower center", bbox_to_anchor=(0.5, 1.0))
    styled(axes)
    return inline_svg(figure, "distribution", "The distribution of the students' scores")


def shortened(text: str, limit: int) -> str:
    """`text`, cut in the middle when it is longer than `limit`."""
    if len(text) <= limit:
        return text
    half = (limit - 3) // 2
    return f"{text[:half]}...{text[-half:]}"


def cut(text: str, limit: int = REASON_CHARS) -> str:
    """`text` as HTML, cut in the middle when longer than `limit` with all of it shown on
    hover."""
    short = shortened(text, limit)
    return (
        escape(short) if short == text else f'<span title="{escape(text)}">{escape(short)}</span>'
    )


def test_name(test: str, shown_as: str) -> str:
    """A test's name as HTML: `shown_as` (a short form of it), all of it shown on hover."""
    return f'<code title="{escape(test)}">{escape(shown_as)}</code>'


def case_of(test: str) -> str:
    """The case of a parametrized test's node id ("[shape0]"), "" for a test without one."""
    return test[len(function_of(test)) :]


def students_word(count: int) -> str:
    return f"{count} student" + ("" if count == 1 else "s")


def named(students: list[str]) -> str:
    """Students' names as HTML, the first LISTED_STUDENTS of them, and how many more."""
    names = ", ".join(escape(shown(name)) for name in students[:LISTED_STUDENTS])
    more = len(students) - LISTED_STUDENTS
    return names + (f" and {more} more" if more > 0 else "")


def figure_card(svg: str, caption: str) -> str:
    return f'<section class="card figure">{svg}<p class="caption">{escape(caption)}</p></section>'


def numbers_part(totals: list[float], most: float) -> str:
    """The class at a glance: students, mean, median, lowest and highest score, full marks."""
    shown = [
        (str(len(totals)), "students graded"),
        (f"{statistics.fmean(totals):.1f}", f"mean score (of {points(most)})"),
        (f"{statistics.median(totals):.1f}", "median score"),
        (f"{points(min(totals))} to {points(max(totals))}", "lowest to highest"),
        (str(sum(is_done(total, most) for total in totals)), "full marks"),
    ]
    cells = "".join(f"<div><b>{escape(value)}</b><span>{escape(label)}</span></div>"
                    for value, label in shown)  # fmt: skip
    return f'<section class="numbers">{cells}</section>'


def chapters(summaries: list[ExerciseSummary]) -> list[tuple[str, list[ExerciseSummary]]]:
    """The exercises grouped by chapter, in the catalog's order, each group with its heading
    (the chapter's number and modules); exercises not in the catalog last."""
    groups: dict[str, list[ExerciseSummary]] = {}
    for summary in summaries:
        item = BY_ID.get(summary.id)
        heading = "Exercises not in the catalog"
        if item is not None:
            modules = ", ".join(module_file(module) for module in item.chapter.modules)
            heading = f"Chapter {item.chapter.number}: {modules}"
        groups.setdefault(heading, []).append(summary)
    return list(groups.items())


def status_bar(summary: ExerciseSummary) -> str:
    """The students of an exercise as one bar, a part per status (STATUSES) as wide as its
    share of them, each part saying its count on hover."""
    parts = "".join(
        f'<span class="{kind}" style="width:{100 * count / summary.students:.1f}%" '
        f'title="{count} {status}"></span>'
        for (status, count), kind in zip(summary.counts().items(), STATUSES.values())
        if count
    )
    return f'<div class="bar stack">{parts}</div>'


def legend() -> str:
    """What the colours of the students' bars mean."""
    said = {"done": "done (all its points)", "started": "started, not done",
            "no points": "no points", "not started": "not started (still raises "
            "NotImplementedError)", "not graded": "its module not graded"}  # fmt: skip
    return (
        "<p class='legend'>"
        + "".join(
            f'<span><span class="swatch {kind}"></span>{escape(said[status])}</span>'
            for status, kind in STATUSES.items()
        )
        + "</p>"
    )


def exercise_table(summaries: list[ExerciseSummary]) -> str:
    """One row per exercise of a chapter: points, mean score, the students at each status."""
    head = (
        '<tr><th class="id">Exercise</th><th></th><th class="count">Points</th>'
        '<th class="bars">Mean score</th><th class="bars">Students</th>'
        '<th class="count">Done</th><th class="count">Started, not done</th>'
        '<th class="count">No points</th><th class="count">Not started</th>'
        '<th class="count">Module not graded</th></tr>'
    )
    rows = []
    for s in summaries:
        mean = "&ndash;" if s.mean is None else f"{s.mean:.2f}"
        share = s.mean / s.points if s.mean is not None and s.points else 0.0
        counts = "".join(f'<td class="points">{count}</td>' for count in s.counts().values())
        rows.append(
            f"<tr><td>{escape(s.id)}</td><td>{escape(s.title)}</td>"
            f'<td class="points">{points(s.points)}</td>'
            f'<td><div class="meter">{bar(share, "partly")}<span>{mean}</span></div></td>'
            f"<td>{status_bar(s)}</td>{counts}</tr>"
        )
    return f'<table class="exercises">{head}{"".join(rows)}</table>'


def exercises_part(summaries: list[ExerciseSummary]) -> str:
    """Each chapter's exercises, a heading and a table per chapter."""
    parts = [legend()]
    for heading, group in chapters(summaries):
        parts.append(f'<h3 class="chapter">{escape(heading)}</h3>')
        parts.append(f'<section class="card scroll">{exercise_table(group)}</section>')
    return "".join(parts)


def modules_table(problems: list[ModuleProblem]) -> str:
    """One row per module not graded: for how many students and whom, its exercises, and
    the most common reasons."""
    rows = []
    for m in problems:
        reasons = "".join(
            f"<div>{count} &times; {cut(reason)}</div>"
            for reason, count in m.reasons[:LISTED_REASONS]
        )
        others = sum(count for _, count in m.reasons[LISTED_REASONS:])
        reasons += f"<div>{others} &times; another reason</div>" if others else ""
        rows.append(
            f"<tr><td><code>{escape(m.module)}</code> not graded for "
            f"{students_word(len(m.students))}</td><td>{escape(', '.join(m.exercises))}</td>"
            f'<td>{named(m.students)}</td><td class="reasons">{reasons}</td></tr>'
        )
    head = "<tr><th>Module</th><th>Its exercises</th><th>Who</th><th>Why (students)</th></tr>"
    return f'<section class="card scroll"><table>{head}{"".join(rows)}</table></section>'


def failing_table(failing: list[FailingTest], students: int) -> str:
    """One row per test that fails most: its exercise, the students it fails for (a bar of
    the `students` graded), its cases that fail most and its most common reasons."""
    rows = []
    for t in failing:
        tag = '<span class="tag">hidden</span>' if t.hidden else ""
        tag += f'<span class="tag">{t.cases} cases</span>' if t.cases > 1 else ""
        cases = "".join(
            f"<div>{test_name(case, case_of(case))} &times; {count}</div>"
            for case, count in t.failing_cases
            if case_of(case)
        )
        cases = f'<div class="cases">{cases}</div>' if cases else ""
        reasons = "".join(
            f"<div>{count} &times; {cut(reason)}</div>" for reason, count in t.reasons
        )
        rows.append(
            f"<tr><td>{test_name(t.test, short_name(t.test))}{tag}{cases}</td>"
            f"<td>{escape(t.exercise)}</td>"
            f'<td><div class="meter">{bar(t.failed / students, "none")}'
            f"<span>{t.failed}</span></div></td>"
            f'<td class="reasons">{reasons}</td></tr>'
        )
    head = (
        '<tr><th>Test (its cases that fail most)</th><th>Exercise</th><th class="bars">'
        "Students it fails for</th><th>Most common reasons (students)</th></tr>"
    )
    return f'<section class="card scroll"><table>{head}{"".join(rows)}</table></section>'


def started_table(started: list[StartedExercise]) -> str:
    """One row per exercise started but not finished: who, and the tests they fail most."""
    rows = []
    for s in started:
        tests = "".join(
            f"<div>{count} &times; {test_name(test, short_name(test))}</div>"
            for test, count in s.tests
        )
        rows.append(
            f"<tr><td>{escape(s.id)} {escape(s.title)}</td><td class='points'>"
            f"{len(s.students)}</td><td>{named(s.students)}</td>"
            f"<td class='reasons'>{tests}</td></tr>"
        )
    head = "<tr><th>Exercise</th><th>Students</th><th>Who</th><th>Tests they fail most</th></tr>"
    return f'<section class="card scroll"><table>{head}{"".join(rows)}</table></section>'


def students_table(rows: dict[str, dict[str, Any]], grades: Path, out: Path) -> str:
    """The gradebook: one row per student, their total and each exercise's score, linked
    to their report.html when it is there."""
    exercises = graded_exercises(rows)
    lines = []
    for student, results in rows.items():
        report = grades / student / REPORT
        name = escape(shown(student))
        if report.is_file():  # the link's bytes as the file system has them
            link = quote(os.fsencode(Path(os.path.relpath(report, out.parent)).as_posix()))
            name = f'<a href="{escape(link)}">{name}</a>'
        scores = results["extra_data"].get("exercises", {})
        cells = "".join(
            f'<td class="points">{points(scores[e]) if e in scores else ""}</td>' for e in exercises
        )
        total = f"{points(float(results.get('score', 0)))} of "
        total += points(float(results["extra_data"].get("max_score", 0)))
        lines.append(f'<tr><td>{name}</td><td class="points">{total}</td>{cells}</tr>')
    head = "".join(f"<th>{escape(e)}</th>" for e in exercises)
    head = f"<tr><th>Student</th><th>Total</th>{head}</tr>"
    return f'<section class="card scroll"><table>{head}{"".join(lines)}</table></section>'


def partial_part(missing: Sequence[str]) -> str:
    """The warning that the report is of part of the batch, saying what is missing."""
    if not missing:
        return ""
    items = "".join(f"<li>{escape(line)}</li>" for line in missing)
    return (
        '<section class="card"><p><strong>Partial: these grades lack part of the batch.'
        f"</strong></p><ul>{items}</ul></section>"
    )


def class_report_html(
    rows: dict[str, dict[str, Any]], grades: Path, out: Path, missing: Sequence[str] = ()
) -> str:
    """The class report's page for the students' results in `rows`, saying first what
    the grades lack of the batch (`missing`: one line each, from a partial merge)."""
    title = f"Class report: {grades.name}"
    heading = f"<h1>{escape(title)}</h1>{partial_part(missing)}"
    if not rows:
        return page(title, f"{heading}<p>No results.json found.</p>")
    totals, most = scores(rows), most_points(rows)
    failing, problems, started = (
        failing_tests(rows),
        ungraded_modules(rows),
        started_exercises(rows),
    )
    parts = [
        heading,
        numbers_part(totals, most),
        "<h2>Scores</h2>",
        figure_card(distribution_plot(totals, most), "Students per score, in ten bins."),
        "<h2>Exercises by chapter</h2>",
        "<p class='caption'>The mean score is over the students whose module was graded.</p>",
        exercises_part(exercise_summaries(rows)),
        "<h2>Modules not graded</h2>",
        modules_table(problems)
        if problems
        else "<p>Every module was graded for every student.</p>",
        "<h2>Tests that fail most</h2>",
    ]
    if failing:
        parts += [
            "<p class='caption'>Hidden tests included. Only a test's own failures count: a "
            "module not graded is counted once above, and an exercise that still raises "
            "NotImplementedError as not started.</p>",
            failing_table(failing, len(rows)),
        ]
    else:
        parts.append("<p>No test failed for what a student's code does.</p>")
    parts.append("<h2>Started, not finished</h2>")
    if started:
        parts.append(started_table(started))
    else:
        parts.append("<p>No student has some but not all of an exercise's points.</p>")
    parts += ["<h2>Students</h2>", students_table(rows, grades, out)]
    return page(title, "".join(parts), STYLE + CLASS_STYLE)


def write_class_report(grades: Path, out: Path) -> Path:
    """Write the class report of the grading output folder `grades` (the results grading
    recorded writing there) to `out`; its path."""
    rows = recorded_results(grades)
    html = class_report_html(rows, grades, out, partial_merge(grades, rows))
    write_atomically(out, html)
    return out
