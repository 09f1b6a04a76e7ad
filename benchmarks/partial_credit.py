"""What partial credit gives wrong answers: one-token wrong answers of the reference solutions,
scored by every credit rule.

    python -m benchmarks.partial_credit [--exercise ID] [--limit 4] [--jobs N] [--json FILE]

For each exercise it changes one token inside the exercise's solution region (a comparison
flipped, + and - swapped, an integer constant changed by one, a unary minus dropped, `and` and
`or`, True and False, min and max or list and tuple swapped, a call of list, tuple, reversed,
sorted or abs dropped, a name ending in a swapped for the one ending in b), every change the
region allows, in a fixed order. It runs the exercise's public and hidden tests on each changed
solution, in a copy of the course tree whose module holds the change, until `--limit` of them
fail at least one test: those are the wrong answers. (A change that passes every test is left
out: it may compute the same thing, as `<=` for `<` can.) Each wrong answer is scored from its
tests' outcomes by each credit rule of instructor.grading.credit, as grading scores an
exercise. The table says, per rule, the mean share of its exercise's points a wrong answer
keeps and how many keep more than half. When every exercise was measured, the table is also
written into benchmarks/README.md between the partial-credit markers. It needs the instructor's
tree (the rules, the hidden tests): the release leaves it out.
"""

from __future__ import annotations

import ast
import datetime
import hashlib
import io
import json
import keyword
import os
import queue
import statistics
import sys
import tempfile
import tokenize
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from instructor.authoring.regions import Region, find_regions
from instructor.authoring.release import NOT_NEEDED_FOR_TESTS, write_tree
from instructor.grading import EXAMPLES
from instructor.grading.credit import DEFAULT_CREDIT, Credit, share_kept
from instructor.grading.intake import COMPILING
from tenxor.course.catalog import BY_ID, CATALOG, Exercise, hidden_tests_of, tests_of
from tenxor.course.engine import Limits, run_tests

from .report import README, ROOT, command_line, machine, replace_between

START = "<!-- partial credit: written by python -m benchmarks.partial_credit -->"
END = "<!-- end of partial credit -->"
LIMIT = 4  # wrong answers kept per exercise
TRIES = 4  # changes tried per wrong answer wanted, at most (some pass every test)
# A changed solution may loop or grow without end: each test gets a few seconds.
MUTANT_LIMITS = Limits(test_seconds=5.0, run_seconds=600.0, memory_mb=2048, output_mb=8.0)

COMPARISONS = {"<": "<=", "<=": "<", ">": ">=", ">=": ">", "==": "!=", "!=": "=="}
ARITHMETIC = {"+": "-", "-": "+", "+=": "-=", "-=": "+="}
WORDS = {"and": "or", "or": "and", "True": "False", "False": "True"}
# Builtins, changed only where they are called.
CALLS = {"min": "max", "max": "min", "list": "tuple", "tuple": "list"}
DROPPED = ("list", "tuple", "reversed", "sorted", "abs")  # f(x) -> (x)
KINDS = (
    "comparison flipped",
    "+ and - swapped",
    "integer off by one",
    "unary minus dropped",
    "word swapped",
    "builtin swapped",
    "call dropped",
    "a and b swapped",
)
SKIPPED = {tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT}
# Python 3.12 splits an f-string into tokens; the text of a message is not code to change.
FSTRING_START = getattr(tokenize, "FSTRING_START", None)
FSTRING_END = getattr(tokenize, "FSTRING_END", None)


@dataclass(frozen=True)
class Mutation:
    """One token of an exercise's solution replaced: where, what it was, what it becomes."""

    exercise: str
    path: str  # the module, relative to the course root
    line: int  # 1-based, in the module
    column: int
    before: str
    after: str
    kind: str  # one of KINDS

    def apply(self, source: str) -> str:
        """The module's text with this token replaced."""
        lines = source.splitlines(keepends=True)
        text = lines[self.line - 1]
        end = self.column + len(self.before)
        if text[self.column : end] != self.before:
            raise ValueError(f"{self.describe()}: the module does not hold {self.before!r} there")
        lines[self.line - 1] = text[: self.column] + self.after + text[end:]
        return "".join(lines)

    def describe(self) -> str:
        """Where and what, e.g. tenxor/strides.py:41: `1` -> `2` (integer off by one)."""
        after = f"`{self.after}`" if self.after else "nothing"
        return f"{self.path}:{self.line}: `{self.before}` -> {after} ({self.kind})"

    def order(self, region: Region) -> str:
        """A key that shuffles the changes of a region the same way on every run, whatever
        moves above the region."""
        place = f"{self.exercise}|{self.line - region.begin}|{self.column}|{self.after}"
        return hashlib.sha256(place.encode("utf-8")).hexdigest()


def is_unary(previous: tokenize.TokenInfo | None) -> bool:
    """Whether a `-` or `+` after the token `previous` is a sign, not an operator."""
    if previous is None:
        return True
    if previous.type == tokenize.OP:
        return previous.string not in (")", "]", "}")
    return (
        previous.type == tokenize.NAME
        and keyword.iskeyword(previous.string)
        and (previous.string not in ("True", "False", "None"))
    )


def integer_changes(token: str) -> list[str]:
    """An integer literal one more and one less (not below 0), written as it was."""
    try:  # int's own reading of a literal: no parse, which threads would share (compiles)
        value = int(token, 0)
    except ValueError:
        return []  # a float or a complex number
    changed = [other for other in (value + 1, value - 1) if other >= 0]
    if token.lower().startswith("0x"):
        digits = "X" if token[2:].isupper() else "x"
        return [f"{token[:2]}{other:{digits}}" for other in changed]
    return [str(other) for other in changed]


def token_changes(
    token: tokenize.TokenInfo,
    previous: tokenize.TokenInfo | None,
    following: tokenize.TokenInfo | None,
) -> Iterator[tuple[str, str]]:
    """Each one-token change of `token`, as (replacement, kind)."""
    text = token.string
    if token.type == tokenize.OP and text in COMPARISONS:
        yield COMPARISONS[text], "comparison flipped"
    elif token.type == tokenize.OP and text in ("-", "+") and is_unary(previous):
        if text == "-":
            yield "", "unary minus dropped"
    elif token.type == tokenize.OP and text in ARITHMETIC:
        yield ARITHMETIC[text], "+ and - swapped"
    elif token.type == tokenize.NUMBER:
        for changed in integer_changes(text):
            yield changed, "integer off by one"
    elif token.type == tokenize.NAME and text in WORDS:
        yield WORDS[text], "word swapped"
    elif token.type == tokenize.NAME and is_builtin_call(token, previous, following):
        if text in CALLS:
            yield CALLS[text], "builtin swapped"
        if text in DROPPED:
            yield "", "call dropped"
    elif (
        token.type == tokenize.NAME
        and (other := other_of_a_pair(text))
        and not (previous is not None and previous.string == ".")
    ):
        yield other, "a and b swapped"


def is_builtin_call(
    token: tokenize.TokenInfo,
    previous: tokenize.TokenInfo | None,
    following: tokenize.TokenInfo | None,
) -> bool:
    """Whether a name token is a call of a builtin these changes know (not a method)."""
    called = following is not None and following.string == "("
    method = previous is not None and previous.string == "."
    return token.string in (*CALLS, *DROPPED) and called and not method


def other_of_a_pair(name: str) -> str | None:
    """The other name of a pair such as a and b, or data_a and data_b; None for any other."""
    pairs = {"a": "b", "b": "a"}
    stem, _, last = name.rpartition("_")
    if name in pairs:
        return pairs[name]
    if stem and last in pairs:
        return f"{stem}_{pairs[last]}"
    return None


def code_tokens(source: str) -> list[tokenize.TokenInfo]:
    """The tokens of a module that are code: no comments, line ends, indentation, nor
    anything inside an f-string."""
    found, depth = [], 0
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if FSTRING_START is not None and token.type == FSTRING_START:
            depth += 1
        elif FSTRING_END is not None and token.type == FSTRING_END:
            depth -= 1
        elif depth == 0 and token.type not in SKIPPED and token.type != tokenize.ENDMARKER:
            found.append(token)
    return found


def mutations_in(source: str, path: str, region: Region) -> list[Mutation]:
    """Every one-token change inside a solution region of the module `source` that still
    compiles, in a fixed shuffled order."""
    tokens = code_tokens(source)
    found = []
    for position, token in enumerate(tokens):
        if not region.begin < token.start[0] < region.end:
            continue
        previous = tokens[position - 1] if position else None
        following = tokens[position + 1] if position + 1 < len(tokens) else None
        for after, kind in token_changes(token, previous, following):
            line, column = token.start
            mutation = Mutation(region.exercise_id, path, line, column, token.string, after, kind)
            if compiles(mutation.apply(source)):
                found.append(mutation)
    return sorted(found, key=lambda mutation: mutation.order(region))


def compiles(source: str) -> bool:
    """Whether a module's text is still Python (parsed with the lock intake compiles with:
    CPython 3.11 keeps the AST's recursion depth in state its threads share, and two parses
    at once end one of them in a SystemError)."""
    try:
        with COMPILING:
            ast.parse(source)
    except SyntaxError:
        return False
    return True


def mutations_of(item: Exercise, root: Path = ROOT) -> list[Mutation]:
    """The one-token changes of an exercise's reference solution, in a fixed shuffled order."""
    path = root / item.path
    region = next(r for r in find_regions(path, set(BY_ID)) if r.exercise_id == item.id)
    return mutations_in(path.read_text(encoding="utf-8"), item.path, region)


@dataclass
class WrongAnswer:
    """A change that fails at least one of its exercise's tests, and every test's outcome."""

    mutation: Mutation
    outcomes: dict[str, bool]  # test node id -> passed

    def kept(self, credit: Credit) -> float:
        """The share of the exercise's points this answer keeps under `credit`."""
        return share_kept(credit, self.outcomes)


@dataclass
class Measured:
    """One exercise's wrong answers, and how many changes were tried to find them."""

    exercise: str
    wrong: list[WrongAnswer] = field(default_factory=list)
    tried: int = 0


def exercise_test_files(item: Exercise, tree: Path) -> list[str]:
    """The public and hidden test files that may test an exercise, as the tree holds them."""
    files = dict.fromkeys([*tests_of(item), *hidden_tests_of(item)])
    return [path for path in files if (tree / path).is_file()]


def outcomes_in(tree: Path, item: Exercise, profile: str) -> dict[str, bool]:
    """Run an exercise's public and hidden tests on the course tree at `tree`; whether each
    passed (a test that crashed, hung or never ran did not)."""
    options = [*exercise_test_files(item, tree), "-m", "not provided", "--exercise", item.id, "-q"]
    run = run_tests(tree, options, MUTANT_LIMITS, profile)
    if run.collect_errors or not run.collected:
        problems = "; ".join(f"{p}: {m}" for p, m in run.collect_errors.items()) or run.problem
        raise RuntimeError(f"exercise {item.id}: its tests cannot be collected: {problems}")
    mine = [test for test, owner in run.collected.items() if owner == item.id]
    return {test: run.results[test].passed for test in mine}


def measure_exercise(item: Exercise, tree: Path, limit: int, tries: int, profile: str) -> Measured:
    """Try the changes of one exercise in `tree` (a copy of the course) until `limit` of
    them fail a test or `tries` were tried; the tree's module is put back after each."""
    module = tree / item.path
    original = module.read_text(encoding="utf-8")
    measured = Measured(item.id)
    for mutation in mutations_of(item)[:tries]:
        module.write_text(mutation.apply(original), encoding="utf-8")
        try:
            outcomes = outcomes_in(tree, item, profile)
        finally:
            module.write_text(original, encoding="utf-8")
        measured.tried += 1
        failing = sum(not passed for passed in outcomes.values())
        said = f"{failing} of {len(outcomes)} tests fail"
        print(f"{item.id} {mutation.describe()}: {said}", file=sys.stderr, flush=True)
        if failing:
            measured.wrong.append(WrongAnswer(mutation, outcomes))
            if len(measured.wrong) >= limit:
                break
    return measured


def measure(
    exercises: list[str],
    limit: int = LIMIT,
    tries: int | None = None,
    jobs: int = 1,
    profile: str = "ci",
) -> list[Measured]:
    """The wrong answers of each exercise: up to `limit` each, from at most `tries` changes
    (default TRIES per answer wanted), `jobs` exercises at a time, each in a course copy of
    its own."""
    tries = tries or TRIES * limit
    jobs = max(1, min(jobs, len(exercises)))
    with tempfile.TemporaryDirectory(prefix="tenxor-partial-credit-") as folder:
        trees: queue.Queue[Path] = queue.Queue()
        for number in range(jobs):
            tree = Path(folder) / f"course-{number}"
            write_tree(ROOT, tree, NOT_NEEDED_FOR_TESTS, rewrite=lambda path: path.read_text())
            trees.put(tree)

        def one(exercise_id: str) -> Measured:
            tree = trees.get()
            try:
                return measure_exercise(BY_ID[exercise_id], tree, limit, tries, profile)
            finally:
                trees.put(tree)

        with ThreadPoolExecutor(max_workers=jobs) as pool:
            return list(pool.map(one, exercises))


def percent(share: float) -> str:
    return f"{100 * share:.0f}%"


def summary_rows(measured: list[Measured]) -> list[str]:
    """Per credit rule: the mean share a wrong answer keeps, the mean over exercises, how
    many wrong answers keep more than half and how many keep nothing, as table rows."""
    wrong = [answer for one in measured for answer in one.wrong]
    rows = []
    for credit in Credit:
        kept = [answer.kept(credit) for answer in wrong]
        by_exercise = [
            statistics.mean(answer.kept(credit) for answer in one.wrong)
            for one in measured
            if one.wrong
        ]
        default = " (default)" if credit is DEFAULT_CREDIT else ""
        rows.append(
            f"| {credit}{default} | {percent(statistics.mean(kept))} | "
            f"{percent(statistics.mean(by_exercise))} | {sum(k > 0.5 for k in kept)} | "
            f"{sum(k == 0 for k in kept)} |"
        )
    return rows


def exercise_rows(measured: list[Measured]) -> list[str]:
    """Per exercise: the wrong answers found, the changes tried, and the mean share kept
    under each rule, as table rows."""
    rows = []
    for one in measured:
        means = [
            percent(statistics.mean(a.kept(credit) for a in one.wrong)) if one.wrong else "-"
            for credit in Credit
        ]
        rows.append(f"| {one.exercise} | {len(one.wrong)} | {one.tried} | {' | '.join(means)} |")
    return rows


def table(measured: list[Measured], examples: str) -> str:
    """The measurements as Markdown: the summary per rule, then one row per exercise."""
    wrong = sum(len(one.wrong) for one in measured)
    tried = sum(one.tried for one in measured)
    short = [one.exercise for one in measured if len(one.wrong) < 2]
    lines = [
        f"Measured on {datetime.date.today()}: {machine()}; {examples} examples per property "
        f"test. {wrong} wrong answers of {len(measured)} exercises, from {tried} one-token "
        f"changes tried ({tried - wrong} passed every test and were left out).",
        "",
        "| credit rule | mean share kept | mean over exercises | keep more than half | keep "
        "nothing |",
        "| --- | ---: | ---: | ---: | ---: |",
        *summary_rows(measured),
        "",
    ]
    if short:
        lines += [f"Fewer than two wrong answers found for: {', '.join(short)}.", ""]
    heads = " | ".join(str(credit) for credit in Credit)
    lines += [
        "<details><summary>Each exercise: the mean share its wrong answers keep</summary>",
        "",
        f"| exercise | wrong answers | changes tried | {heads} |",
        "| --- | ---: | ---: |" + " ---: |" * len(Credit),
        *exercise_rows(measured),
        "",
        "</details>",
    ]
    return "\n".join(lines)


def as_json(measured: list[Measured]) -> dict:
    """Every wrong answer with its change, its tests' outcomes and the share each rule keeps."""
    return {
        "exercises": {
            one.exercise: {
                "tried": one.tried,
                "wrong": [
                    {
                        "change": answer.mutation.describe(),
                        "line": answer.mutation.line,
                        "before": answer.mutation.before,
                        "after": answer.mutation.after,
                        "outcomes": answer.outcomes,
                        "kept": {credit.value: answer.kept(credit) for credit in Credit},
                    }
                    for answer in one.wrong
                ],
            }
            for one in measured
        }
    }


def main(argv: list[str]) -> int:
    parser = command_line("benchmarks.partial_credit", __doc__)
    parser.add_argument(
        "--exercise", action="append", metavar="ID", help="measure only these (repeatable)"
    )
    parser.add_argument(
        "--limit", type=int, default=LIMIT, help=f"wrong answers per exercise (default {LIMIT})"
    )
    parser.add_argument(
        "--tries", type=int, help=f"changes tried per exercise at most (default {TRIES} x limit)"
    )
    parser.add_argument(
        "--jobs", type=int, default=os.cpu_count() or 1, help="exercises measured at once"
    )
    parser.add_argument(
        "--examples", choices=sorted(EXAMPLES, key=int), default="100",
        help="examples each property test tries, as grading's --examples (default 100)",
    )  # fmt: skip
    parser.add_argument("--json", type=Path, metavar="FILE", help="write every wrong answer here")
    options = parser.parse_args(argv)
    unknown = [exercise_id for exercise_id in options.exercise or [] if exercise_id not in BY_ID]
    if unknown or options.limit < 1:
        parser.error(f"no exercise {', '.join(unknown)}" if unknown else "--limit must be >= 1")
    exercises = options.exercise or [item.id for item in CATALOG]
    measured = measure(
        exercises, options.limit, options.tries, options.jobs, EXAMPLES[options.examples]
    )
    text = table(measured, options.examples)
    print(text)
    if options.json:
        options.json.write_text(json.dumps(as_json(measured), indent=1), encoding="utf-8")
    if not options.no_readme and len(exercises) == len(CATALOG):
        replace_between(README, START, END, text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
