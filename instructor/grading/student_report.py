"""A student's own page, report.html: the score, each exercise's score, each unfinished
exercise's first failure explained as `check` explains it, the hidden tests counted and named
but never shown, and how the submission was graded. It is built from the results of
results.json alone and is self-contained: inline CSS, no script, nothing fetched. Every text
is escaped, since a submission decides what its failures say."""

from __future__ import annotations

from dataclasses import dataclass, field
from html import escape
from typing import Any

from tenxor.course.catalog import BY_ID
from tenxor.course.engine import Result, function_of, short_name
from tenxor.course.failure import Failure
from tenxor.course.failure_words import failure_in_words

from .credit import Credit

LISTED_FAILURES = 12  # failing public tests listed by name and reason, per exercise

# Nothing is fetched and nothing runs, even if some text escaped the escaping.
POLICY = "default-src 'none'; style-src 'unsafe-inline'"

STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif;
       margin: 0; background: #f4f5f7; color: #1d2330; line-height: 1.45; }
main { max-width: 60rem; margin: 0 auto; padding: 1.5rem 1.5rem 3rem; }
h1 { font-size: 1.6rem; margin: 0 0 .2rem; }
h2 { font-size: 1.25rem; margin: 2rem 0 .6rem; }
h3 { font-size: 1.05rem; margin: 0 0 .4rem; }
.card { background: #fff; border: 1px solid #d8dbe2; border-radius: 8px; padding: 1rem 1.2rem;
        margin: .8rem 0; }
.total { font-size: 2.4rem; font-weight: 700; margin: .4rem 0; }
.total small { font-size: 1.1rem; font-weight: 400; color: #5a6272; }
.bar { background: #e3e6ec; border-radius: 4px; height: .7rem; min-width: 6rem; overflow: hidden; }
.bar span { display: block; height: 100%; }
.done { background: #2e8b57; } .partly { background: #e0a526; } .none { background: #c8553d; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .35rem .5rem; border-bottom: 1px solid #e3e6ec;
         vertical-align: middle; }
th { font-size: .85rem; color: #5a6272; font-weight: 600; }
td.points { white-space: nowrap; font-variant-numeric: tabular-nums; }
.status { font-size: .8rem; font-weight: 600; padding: .1rem .45rem; border-radius: 99px;
          color: #fff; white-space: nowrap; }
pre { background: #f6f7f9; border: 1px solid #e3e6ec; border-radius: 6px; padding: .6rem .8rem;
      overflow-x: auto; white-space: pre-wrap; word-break: break-word;
      font-family: ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace;
      font-size: .85rem; }
ul.fails { padding-left: 1.2rem; margin: .3rem 0; }
ul.fails li { margin: .15rem 0; }
code { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace;
       font-size: .85rem; }
.muted { color: #5a6272; }
.problem { background: #fbeae6; border-left: 4px solid #c8553d; padding: .5rem .8rem;
           border-radius: 4px; }
footer { margin-top: 2rem; font-size: .8rem; color: #5a6272; }
"""


@dataclass
class ExerciseScore:
    """One exercise of a submission: its score and points, and its tests' outcomes."""

    id: str
    title: str
    score: float
    points: float
    public: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    hidden: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    problem: str | None = None  # why its module was not graded, if it was not

    @property
    def done(self) -> bool:
        return self.score >= self.points - 1e-6

    @property
    def not_started(self) -> bool:
        """Whether every test failed on this exercise's own stub."""
        tests = self.public + self.hidden
        return bool(tests) and all(o.get("unfinished") == self.id for _, o in tests)

    @property
    def status(self) -> tuple[str, str]:
        """A word for how far the exercise got, and the CSS class of its colour."""
        if self.done:
            return "done", "done"
        if self.problem:
            return "module not graded", "none"
        if self.not_started:
            return "not started", "none"
        return ("partly done", "partly") if self.score > 0 else ("no points yet", "none")


def points(value: float) -> str:
    """A score to four decimals at most, as results.json holds it: 2.5, 5, 1.6667."""
    return f"{round(float(value), 4) + 0.0:.4f}".rstrip("0").rstrip(".")  # + 0.0: never -0


def exercise_scores(results: dict[str, Any]) -> list[ExerciseScore]:
    """The exercises graded, in the order of the results, each with its score, its points,
    its tests' outcomes and why its module was not graded (if it was not)."""
    extra = results.get("extra_data", {})
    problems = extra.get("problems", {})
    available: dict[str, float] = {}
    for entry in results.get("tests", []):
        number = str(entry.get("number", ""))
        available[number] = available.get(number, 0.0) + float(entry.get("max_score", 0))
    scores = []
    for exercise_id, score in extra.get("exercises", {}).items():
        item = BY_ID.get(exercise_id)
        total = available.get(exercise_id, item.points if item else 0)
        title = item.title if item else ""
        problem = problems.get(exercise_id)
        scores.append(ExerciseScore(exercise_id, title, score, total, problem=problem))
    mine = {score.id: score for score in scores}
    for test, outcome in extra.get("outcomes", {}).items():
        owner = mine.get(outcome.get("exercise"))
        if owner is not None:
            (owner.hidden if outcome.get("hidden") else owner.public).append((test, outcome))
    return scores


def bar(share: float, kind: str) -> str:
    """A horizontal bar filled to `share` (0 to 1)."""
    width = max(0.0, min(1.0, share)) * 100
    return f'<div class="bar"><span class="{kind}" style="width:{width:.1f}%"></span></div>'


def result_of(test: str, exercise_id: str, outcome: dict[str, Any]) -> Result:
    """A failed test's result, from its outcome in the results."""
    if isinstance(outcome.get("failure"), dict):
        record = Failure.from_dict(outcome["failure"])
        return Result.of_record(test, exercise_id, "failed", record)
    unfinished = outcome.get("unfinished")
    unfinished = unfinished if unfinished in BY_ID else None  # check names only exercises
    return Result(test, exercise_id, "failed", str(outcome.get("reason", "")), unfinished)


def first_failure(exercise: ExerciseScore) -> tuple[str, list[str]] | None:
    """The first failing public test and check's words for it: a test that found something
    wrong before one that ran into an unfinished exercise."""
    failing = [(test, o) for test, o in exercise.public if not o.get("passed")]
    ranked = sorted(
        failing, key=lambda pair: (bool(pair[1].get("unfinished")), not pair[1].get("failure"))
    )
    for test, outcome in ranked[:1]:
        return short_name(test), failure_in_words(result_of(test, exercise.id, outcome))
    return None


def by_function(tests: list[tuple[str, dict[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
    """The outcomes of tests grouped by test function (its short name without the case),
    in the order of the tests."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for test, outcome in tests:
        groups.setdefault(function_of(short_name(test)), []).append({"test": test, **outcome})
    return groups


def failing_function(name: str, cases: list[dict[str, Any]]) -> str:
    """A test function with failing cases, as a list item: its first failing case's reason,
    and how many of its cases fail."""
    failing = [case for case in cases if not case.get("passed")]
    first = failing[0]
    why = escape(str(first.get("reason", "")))
    if len(cases) == 1:
        return f"<li><code>{escape(name)}</code>: {why}</li>"
    case = escape(short_name(first["test"])[len(name) :])
    return (
        f"<li><code>{escape(name)}</code>: {len(failing)} of {len(cases)} cases fail; "
        f"the first, <code>{case}</code>: {why}</li>"
    )


def public_part(exercise: ExerciseScore) -> str:
    """What the public tests of an unfinished exercise found: counts, the first failure
    in check's words, and each failing test function with a reason."""
    if not exercise.public:
        return ""
    passed = sum(1 for _, o in exercise.public if o.get("passed"))
    parts = [f"<p>{passed} of {len(exercise.public)} public tests passed.</p>"]
    explained = first_failure(exercise)
    if explained:
        name, lines = explained
        parts.append(f"<p>First failure, <code>{escape(name)}</code>:</p>")
        parts.append(f"<pre>{escape(chr(10).join(lines))}</pre>")
    groups = by_function(exercise.public)
    failing = [name for name, cases in groups.items() if not all(c.get("passed") for c in cases)]
    items = [failing_function(name, groups[name]) for name in failing[:LISTED_FAILURES]]
    if len(failing) > LISTED_FAILURES:
        items.append(f"<li>... and {len(failing) - LISTED_FAILURES} more failing tests</li>")
    if items:
        parts.append(f'<ul class="fails">{"".join(items)}</ul>')
    return "".join(parts)


def hidden_part(exercise: ExerciseScore) -> str:
    """The hidden tests of an exercise counted: never which failed, what they check, call or
    found."""
    if not exercise.hidden:
        return ""
    passed = sum(1 for _, o in exercise.hidden if o.get("passed"))
    text = f"<p>{passed} of {len(exercise.hidden)} hidden tests passed"
    if passed == len(exercise.hidden):
        return text + ".</p>"
    return (
        text + ". What hidden tests check is not shown: the exercise's docstring and its "
        "public tests say what is due.</p>"
    )


def without_outcomes(exercise_id: str, results: dict[str, Any]) -> str:
    """What results written before outcomes were recorded say of an exercise: the public
    entry's text and the hidden entry's score."""
    parts = []
    for entry in results.get("tests", []):
        if str(entry.get("number")) != exercise_id:
            continue
        if entry.get("visibility") == "after_published":
            score, most = points(entry.get("score", 0)), points(entry.get("max_score", 0))
            parts.append(f"<p>Hidden tests: {score} of {most} points.</p>")
        else:
            parts.append(f"<pre>{escape(str(entry.get('output', '')))}</pre>")
    return "".join(parts)


def exercise_card(exercise: ExerciseScore, results: dict[str, Any]) -> str:
    """The card of an exercise that has not all its points: what failed and why."""
    word, kind = exercise.status
    heading = (
        f"<h3>{escape(exercise.id)} {escape(exercise.title)}: {points(exercise.score)} of "
        f'{points(exercise.points)} points <span class="status {kind}">{word}</span></h3>'
    )
    if exercise.problem:
        body = (
            f'<p class="problem">{escape(exercise.problem)}; its exercises score 0 (their tests '
            "ran against the exercise's stub). Fix that first.</p>"
        ) + hidden_part(exercise)
    elif exercise.public or exercise.hidden:
        body = public_part(exercise) + hidden_part(exercise)
    else:
        body = without_outcomes(exercise.id, results)
    return f'<section class="card" id="exercise-{escape(exercise.id)}">{heading}{body}</section>'


def score_table(exercises: list[ExerciseScore]) -> str:
    """One row per exercise: its score of its points, a bar and a word for how far it got."""
    rows = []
    for exercise in exercises:
        word, kind = exercise.status
        share = exercise.score / exercise.points if exercise.points else 0.0
        rows.append(
            f"<tr><td>{escape(exercise.id)}</td><td>{escape(exercise.title)}</td>"
            f'<td class="points">{points(exercise.score)} of {points(exercise.points)}</td>'
            f"<td>{bar(share, kind)}</td>"
            f'<td><span class="status {kind}">{word}</span></td></tr>'
        )
    head = "<tr><th>Exercise</th><th></th><th>Score</th><th></th><th>Status</th></tr>"
    return f'<table class="scores">{head}{"".join(rows)}</table>'


def page(title: str, body: str, style: str = STYLE) -> str:
    """A complete, self-contained HTML page."""
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{POLICY}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)}</title><style>{style}</style></head>"
        f"<body><main>{body}</main></body></html>\n"
    )


def credit_in_words(extra: dict[str, Any]) -> str:
    """How the exercises' points were given, as grading recorded it ("" if it did not)."""
    try:
        credit = Credit(extra.get("credit"))
    except ValueError:
        return ""
    return f"Partial credit ({credit}): {credit.rule}."


def report_html(results: dict[str, Any], student: str) -> str:
    """The report.html of one student, from their Gradescope results."""
    extra = results.get("extra_data", {})
    exercises = exercise_scores(results)
    score, most = float(results.get("score", 0)), float(extra.get("max_score", 0))
    done = sum(exercise.done for exercise in exercises)
    summary = (
        f'<section class="card"><h1>{escape(student)}: grading report</h1>'
        f'<p class="total">{points(score)} <small>of {points(most)} points</small></p>'
        f"{bar(score / most if most else 0.0, 'done')}"
        f'<p class="muted">{done} of {len(exercises)} exercises done. {credit_in_words(extra)}'
        "</p></section>"
    )
    unfinished = [exercise_card(e, results) for e in exercises if not e.done]
    to_fix = (
        "<h2>What is left to fix</h2>" + "".join(unfinished)
        if unfinished
        else "<h2>Every exercise is done</h2>"
    )
    versions = ", ".join(f"{name} {version}" for name, version in extra.get("versions", {}).items())
    body = (
        summary
        + f'<h2>Exercises</h2><section class="card">{score_table(exercises)}</section>'
        + to_fix
        + "<h2>How your submission was graded</h2>"
        + f"<pre>{escape(str(results.get('output', '')))}</pre>"
        + f"<footer>Graded in {points(float(results.get('execution_time', 0)))} s with "
        + f"{escape(versions)}.</footer>"
    )
    return page(f"{student}: grading report", body)
