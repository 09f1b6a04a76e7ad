"""The class report: one HTML page, from every GRADES/<student>/results.json, that shows where
the class is stuck: the distribution of scores, each exercise's mean score and share of
students done, the tests that fail most with their most common reasons (hidden tests too:
this page is the instructor's), and the exercises started but not finished.

The plots are drawn with matplotlib (the `report` extra) and inlined as SVG; the page has no
script and fetches nothing. Only this module imports matplotlib, and only when it draws, so
grading (and Gradescope's autograder) never needs it."""

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

from tenxor.course.catalog import BY_ID
from tenxor.course.engine import function_of, short_name
from tenxor.course.files import write_atomically

from .batch import REPORT, recorded_results, shown
from .merge import partial_merge
from .student_report import STYLE, page, points

LISTED_TESTS = 15  # the tests that fail most, in the plot and the table
LISTED_REASONS = 3  # the most common reasons given per failing test
LISTED_STUDENTS = 30  # students named per exercise started but not finished
LOCATION = re.compile(r"\s*\([^()]*\.py:\d+[^()]*\)$")  # "(storage.py:42 in numel)" ending a reason
STUB = "a stub raised NotImplementedError (not done, or its module not graded)"
COLOURS = {"done": "#2e8b57", "partly": "#e0a526", "none": "#c8553d", "ink": "#1d2330"}

CLASS_STYLE = """
main { max-width: 72rem; }
.figure svg { max-width: 100%; height: auto; display: block; margin: 0 auto; }
.figure p.caption { color: #5a6272; font-size: .9rem; margin: .2rem 0 0; }
.numbers { display: flex; flex-wrap: wrap; gap: .8rem; }
.numbers div { background: #fff; border: 1px solid #d8dbe2; border-radius: 8px;
               padding: .6rem 1rem; min-width: 8rem; }
.numbers b { display: block; font-size: 1.6rem; }
.numbers span { color: #5a6272; font-size: .85rem; }
td.reasons { font-size: .85rem; width: 45%; overflow-wrap: anywhere; }
td code { overflow-wrap: anywhere; }
td.reasons div { margin: .1rem 0; }
.tag { font-size: .75rem; color: #5a6272; border: 1px solid #c5cad3; border-radius: 4px;
       padding: 0 .3rem; margin-left: .3rem; }
.scroll { overflow-x: auto; }
"""


@dataclass(frozen=True)
class ExerciseSummary:
    """How the class did on one exercise: its points, the mean score, the share of students
    with all its points, and how many have some but not all of them."""

    id: str
    title: str
    points: float
    students: int
    mean: float
    done: float
    started: int


@dataclass(frozen=True)
class FailingTest:
    """A test function (its cases of one exercise) and the students it failed for: how
    many, how many of them only because an exercise was not finished (its stub raised
    NotImplementedError), and the most common other reasons (a student's first failing
    case's) with how many students each."""

    test: str
    exercise: str
    hidden: bool
    cases: int
    failed: int
    unfinished: int
    reasons: list[tuple[str, int]] = field(default_factory=list)

    @property
    def wrong(self) -> int:
        """The students it failed for other than by an unfinished exercise."""
        return self.failed - self.unfinished


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


def graded_exercises(rows: dict[str, dict[str, Any]]) -> list[str]:
    """The exercises graded for any student, in the catalog's order (others last)."""
    found = {e for results in rows.values() for e in results["extra_data"].get("exercises", {})}
    order = list(BY_ID)
    return sorted(found, key=lambda e: (order.index(e) if e in order else len(order), e))


def scores(rows: dict[str, dict[str, Any]]) -> list[float]:
    """Each student's total score, in the order of the students."""
    return [float(results.get("score", 0)) for results in rows.values()]


def most_points(rows: dict[str, dict[str, Any]]) -> float:
    """The most points a student could score (the largest max_score of the results)."""
    return max((float(r["extra_data"].get("max_score", 0)) for r in rows.values()), default=0.0)


def is_done(score: float, available: float) -> bool:
    return score >= available - 1e-6


def exercise_summaries(rows: dict[str, dict[str, Any]]) -> list[ExerciseSummary]:
    """How the class did on each exercise graded, over the students graded on it."""
    summaries = []
    for exercise_id in graded_exercises(rows):
        pairs = [
            (float(r["extra_data"]["exercises"][exercise_id]), exercise_points(r, exercise_id))
            for r in rows.values()
            if exercise_id in r["extra_data"].get("exercises", {})
        ]
        item = BY_ID.get(exercise_id)
        available = max(most for _, most in pairs)
        summaries.append(
            ExerciseSummary(
                id=exercise_id,
                title=item.title if item else "",
                points=available,
                students=len(pairs),
                mean=statistics.fmean(score for score, _ in pairs),
                done=sum(is_done(score, most) for score, most in pairs) / len(pairs),
                started=sum(score > 0 and not is_done(score, most) for score, most in pairs),
            )
        )
    return summaries


def reason_of(outcome: dict[str, Any]) -> str:
    """A failing test's reason without the place it was raised at, which differs from one
    student's code to the next."""
    return LOCATION.sub("", str(outcome.get("reason", ""))) or "failed"


def failing_tests(rows: dict[str, dict[str, Any]], limit: int = LISTED_TESTS) -> list[FailingTest]:
    """The test functions that fail most for an exercise, public and hidden, a student
    counted once however many of its cases fail for them: first by the students they fail
    for other than by an unfinished exercise, then by all the students they fail for."""
    failed: Counter[tuple[str, str]] = Counter()
    unfinished: Counter[tuple[str, str]] = Counter()
    reasons: dict[tuple[str, str], Counter[str]] = {}
    hidden: dict[tuple[str, str], bool] = {}
    cases: dict[tuple[str, str], set[str]] = {}
    for results in rows.values():
        mine: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for test, outcome in results["extra_data"].get("outcomes", {}).items():
            key = (function_of(test), str(outcome.get("exercise", "")))
            cases.setdefault(key, set()).add(test)
            hidden[key] = bool(outcome.get("hidden"))
            if not outcome.get("passed"):
                mine.setdefault(key, []).append(outcome)
        for key, outcomes in mine.items():
            failed[key] += 1
            why = [reason_of(o) for o in outcomes if not o.get("unfinished")]
            unfinished[key] += not why
            reasons.setdefault(key, Counter()).update(why[:1])
    ranked = sorted(failed, key=lambda k: (unfinished[k] - failed[k], -failed[k], k))
    return [
        FailingTest(
            test=function,
            exercise=exercise_id,
            hidden=hidden[(function, exercise_id)],
            cases=len(cases[(function, exercise_id)]),
            failed=failed[(function, exercise_id)],
            unfinished=unfinished[(function, exercise_id)],
            reasons=reasons[(function, exercise_id)].most_common(LISTED_REASONS),
        )
        for function, exercise_id in ranked[:limit]
    ]


def started_exercises(rows: dict[str, dict[str, Any]]) -> list[StartedExercise]:
    """The exercises some students have some but not all points of: who, and the test
    functions that fail for most of them."""
    found = []
    for exercise_id in graded_exercises(rows):
        students, tests = [], Counter()
        for student, results in rows.items():
            score = results["extra_data"].get("exercises", {}).get(exercise_id)
            if score is None or score <= 0 or is_done(score, exercise_points(results, exercise_id)):
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


def exercise_plot(summaries: list[ExerciseSummary]) -> str:
    """Per exercise, the mean score as a share of its points and the share of students
    done, side by side."""
    figure = new_figure(max(6.0, 0.55 * len(summaries) + 2), 3.4)
    axes = figure.add_subplot()
    places = range(len(summaries))
    mean = [100 * s.mean / s.points if s.points else 0 for s in summaries]
    done = [100 * s.done for s in summaries]
    axes.bar([p - 0.2 for p in places], mean, 0.4, color=COLOURS["partly"], label="mean score")
    axes.bar([p + 0.2 for p in places], done, 0.4, color=COLOURS["done"], label="students done")
    axes.set_xticks(list(places), [s.id for s in summaries])
    axes.set_ylim(0, 105)
    axes.set_ylabel("% (of points, of students)")
    axes.set_xlabel("exercise")
    axes.legend(frameon=False, ncols=2, loc="lower center", bbox_to_anchor=(0.5, 1.0))
    styled(axes)
    return inline_svg(figure, "exercises", "Each exercise's mean score and share of students done")


def failing_plot(failing: list[FailingTest]) -> str:
    """The tests that fail most, as horizontal bars: students with another reason, then
    students whose unfinished exercise failed it."""
    figure = new_figure(9, 0.32 * len(failing) + 1.2)
    axes = figure.add_subplot()
    labels = [
        f"{t.exercise}  {shortened(short_name(t.test), 60)}" + (" (hidden)" if t.hidden else "")
        for t in failing
    ]
    places = list(range(len(failing)))[::-1]
    wrong = [t.wrong for t in failing]
    axes.barh(places, wrong, color=COLOURS["none"], label="wrong answer, error or limit")
    axes.barh(places, [t.unfinished for t in failing], left=wrong, color="#c5cad3",
              label=STUB)  # fmt: skip
    axes.set_yticks(places, labels, fontsize=8)
    axes.set_xlabel("students it fails for")
    axes.xaxis.get_major_locator().set_params(integer=True)
    axes.legend(frameon=False, ncols=2, loc="lower center", bbox_to_anchor=(0.5, 1.0), fontsize=8)
    styled(axes)
    axes.grid(axis="y", visible=False)
    axes.grid(axis="x", color="#e3e6ec")
    return inline_svg(figure, "failing", "The tests that fail for the most students")


def started_plot(started: list[StartedExercise]) -> str:
    """Per exercise, the students who have some but not all of its points."""
    figure = new_figure(max(5.0, 0.55 * len(started) + 2), 2.8)
    axes = figure.add_subplot()
    axes.bar([s.id for s in started], [len(s.students) for s in started], 0.6,
             color=COLOURS["partly"])  # fmt: skip
    axes.set_xlim(-1, max(len(started), 3))  # a lone bar stays a bar, not a wall
    axes.set_xlabel("exercise")
    axes.set_ylabel("students started, not done")
    axes.yaxis.get_major_locator().set_params(integer=True)
    styled(axes)
    return inline_svg(figure, "started", "Students who started an exercise but did not finish it")


def shortened(text: str, limit: int) -> str:
    """`text`, cut in the middle when it is longer than `limit`."""
    if len(text) <= limit:
        return text
    half = (limit - 3) // 2
    return f"{text[:half]}...{text[-half:]}"


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


def exercise_table(summaries: list[ExerciseSummary]) -> str:
    """One row per exercise: points, mean score, share done, students started not done."""
    rows = "".join(
        f"<tr><td>{escape(s.id)}</td><td>{escape(s.title)}</td>"
        f'<td class="points">{points(s.points)}</td><td class="points">{s.mean:.2f}</td>'
        f'<td class="points">{100 * s.done:.0f}%</td><td class="points">{s.started}</td></tr>'
        for s in summaries
    )
    head = (
        "<tr><th>Exercise</th><th></th><th>Points</th><th>Mean score</th><th>Done</th>"
        "<th>Started, not done</th></tr>"
    )
    return f'<section class="card scroll"><table>{head}{rows}</table></section>'


def failing_table(failing: list[FailingTest]) -> str:
    """One row per test that fails most: its exercise, the students it fails for, and
    the most common reasons."""
    rows = []
    for t in failing:
        tag = '<span class="tag">hidden</span>' if t.hidden else ""
        tag += f'<span class="tag">{t.cases} cases</span>' if t.cases > 1 else ""
        reasons = "".join(
            f"<div>{count} &times; {escape(shortened(reason, 240))}</div>"
            for reason, count in t.reasons
        )
        if t.unfinished:
            reasons += f"<div>{t.unfinished} &times; {STUB}</div>"
        rows.append(
            f"<tr><td><code>{escape(short_name(t.test))}</code>{tag}</td>"
            f"<td>{escape(t.exercise)}</td><td class='points'>{t.failed}</td>"
            f'<td class="reasons">{reasons}</td></tr>'
        )
    head = (
        "<tr><th>Test</th><th>Exercise</th><th>Students it fails for</th>"
        "<th>Most common reasons (students)</th></tr>"
    )
    return f'<section class="card scroll"><table>{head}{"".join(rows)}</table></section>'


def started_table(started: list[StartedExercise]) -> str:
    """One row per exercise started but not finished: who, and the tests they fail most."""
    rows = []
    for s in started:
        names = ", ".join(escape(shown(name)) for name in s.students[:LISTED_STUDENTS])
        if len(s.students) > LISTED_STUDENTS:
            names += f" and {len(s.students) - LISTED_STUDENTS} more"
        tests = "".join(
            f"<div>{count} &times; <code>{escape(short_name(test))}</code></div>"
            for test, count in s.tests
        )
        rows.append(
            f"<tr><td>{escape(s.id)} {escape(s.title)}</td><td class='points'>"
            f"{len(s.students)}</td><td>{names}</td><td class='reasons'>{tests}</td></tr>"
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
    summaries, failing = exercise_summaries(rows), failing_tests(rows)
    started = started_exercises(rows)
    parts = [
        heading,
        numbers_part(totals, most),
        "<h2>Scores</h2>",
        figure_card(distribution_plot(totals, most), "Students per score, in ten bins."),
        "<h2>Exercises</h2>",
        figure_card(
            exercise_plot(summaries),
            "Per exercise: the mean score as a share of its points, and the share of "
            "students with all its points.",
        ),
        exercise_table(summaries),
        "<h2>Tests that fail most</h2>",
    ]
    if failing:
        parts += [
            figure_card(
                failing_plot(failing),
                "First by the students a test fails for other than by an unfinished exercise; "
                "hidden tests included.",
            ),
            failing_table(failing),
        ]
    else:
        parts.append("<p>Every test passed for every student.</p>")
    parts.append("<h2>Started, not finished</h2>")
    if started:
        parts += [
            figure_card(
                started_plot(started), "Students with some but not all of an exercise's points."
            ),
            started_table(started),
        ]
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
