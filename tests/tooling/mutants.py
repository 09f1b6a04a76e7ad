"""Mutants of the reference solutions, to measure whether check agrees with grading.

A mutant is the reference with one small edit inside one exercise's solution region: a
comparison turned around (`<` for `<=`), an arithmetic operator swapped (`+` for `-`), a
number off by one, `and` for `or`, a `not` dropped. For every mutant the course's tests kill
at grading's hundred examples, check at its own settings must fail it too:

    python -m tests.tooling.mutants            # every exercise
    python -m tests.tooling.mutants 1.1 3.2    # some of them

It prints each mutant that grading kills and check lets through (the test to strengthen),
then the agreement: killed by check / killed by grading.
"""

from __future__ import annotations

import argparse
import ast
import copy
import io
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from instructor.authoring.regions import find_regions
from tenxor.course.catalog import BY_ID, CATALOG, Exercise
from tenxor.course.check import FAILING, check_exercise, ordered_test_files, public_test_options
from tenxor.course.engine import Limits, run_tests
from tests.tooling.submissions import copy_of_reference

SWAPPED_COMPARISONS: dict[type, type] = {
    ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.In: ast.NotIn, ast.NotIn: ast.In,
    ast.Is: ast.IsNot, ast.IsNot: ast.Is,
}  # fmt: skip
SWAPPED_OPERATORS: dict[type, type] = {
    ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.FloorDiv, ast.FloorDiv: ast.Mult,
    ast.Mod: ast.FloorDiv, ast.BitAnd: ast.BitOr, ast.BitOr: ast.BitAnd,
    ast.LShift: ast.RShift, ast.RShift: ast.LShift,
}  # fmt: skip
GRADING_LIMITS = Limits(test_seconds=60.0, run_seconds=600.0, memory_mb=2048)


@dataclass(frozen=True)
class Mutant:
    """The reference module of `exercise` with `old` (at `line`) replaced by `new`."""

    exercise: str
    line: int
    old: str
    new: str
    source: str  # the whole mutated module

    def __str__(self) -> str:
        return f"{self.exercise} line {self.line}: {self.old}  ->  {self.new}"


def changed_versions(node: ast.AST) -> Iterator[ast.AST]:
    """Each one-edit change of `node` itself (not of the nodes inside it)."""
    if isinstance(node, ast.Compare):
        for position, op in enumerate(node.ops):
            if type(op) in SWAPPED_COMPARISONS:
                changed = copy.deepcopy(node)
                changed.ops[position] = SWAPPED_COMPARISONS[type(op)]()
                yield changed
    elif isinstance(node, ast.BinOp) and type(node.op) in SWAPPED_OPERATORS:
        yield ast.BinOp(node.left, SWAPPED_OPERATORS[type(node.op)](), node.right)
    elif isinstance(node, ast.BoolOp):
        yield ast.BoolOp(ast.Or() if isinstance(node.op, ast.And) else ast.And(), node.values)
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        yield node.operand
    elif isinstance(node, ast.Constant) and type(node.value) is int:
        yield ast.Constant(node.value + 1)
        if node.value != 0:
            yield ast.Constant(node.value - 1)


def line_offsets(source: str) -> list[int]:
    """Where each line of `source` starts, as a position in the text (line 1 at index 1)."""
    offsets, position = [0, 0], 0
    for line in source.splitlines(keepends=True):
        position += len(line)
        offsets.append(position)
    return offsets


def mutants_of(source: str, exercise_id: str, first: int, last: int) -> Iterator[Mutant]:
    """Every mutant of `source` that edits one expression between lines `first` and `last`
    and still compiles."""
    offsets = line_offsets(source)
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.expr) or not first <= node.lineno <= last:
            continue
        start = offsets[node.lineno] + node.col_offset
        end = offsets[node.end_lineno] + node.end_col_offset
        old = source[start:end]
        for changed in changed_versions(node):
            new = f"({ast.unparse(changed)})"
            mutated = source[:start] + new + source[end:]
            try:
                compile(mutated, "<mutant>", "exec")
            except SyntaxError:
                continue
            yield Mutant(exercise_id, node.lineno, old, new, mutated)


def mutants_of_exercise(root: Path, item: Exercise) -> list[Mutant]:
    """Every mutant of the solution region of `item` in the course tree at `root`."""
    path = root / item.path
    region = next(r for r in find_regions(path) if r.exercise_id == item.id)
    return list(mutants_of(path.read_text(encoding="utf-8"), item.id, region.begin, region.end))


def killed_by_check(root: Path, item: Exercise) -> bool:
    """Whether check, at its own settings, fails the exercise."""
    return check_exercise(item.id, root, io.StringIO()).state == FAILING


def killed_by_grading(root: Path, item: Exercise) -> bool:
    """Whether the exercise's public tests fail at grading's hundred examples."""
    options = [*ordered_test_files(root, item), "--exercise", item.id, "-x"]
    run = run_tests(root, options + public_test_options(root), GRADING_LIMITS, profile="ci")
    return run.problem is not None or any(not r.passed for r in run.results.values())


@dataclass
class Agreement:
    """What the mutants of some exercises showed."""

    mutants: int = 0
    killed_by_grading: int = 0
    killed_by_both: int = 0
    missed_by_check: list[Mutant] | None = None


def measure(root: Path, items: list[Exercise], out: io.TextIOBase) -> Agreement:
    """Run every mutant of `items` under check and grading in the tree at `root`."""
    agreement = Agreement(missed_by_check=[])
    for item in items:
        path = root / item.path
        reference = path.read_text(encoding="utf-8")
        try:
            for mutant in mutants_of_exercise(root, item):
                path.write_text(mutant.source, encoding="utf-8")
                agreement.mutants += 1
                by_check = killed_by_check(root, item)
                if not killed_by_grading(root, item):
                    continue
                agreement.killed_by_grading += 1
                if by_check:
                    agreement.killed_by_both += 1
                else:
                    agreement.missed_by_check.append(mutant)
                    out.write(f"check lets through: {mutant}\n")
                    out.flush()
        finally:
            path.write_text(reference, encoding="utf-8")
        out.write(
            f"after {item.id}: {agreement.mutants} mutants, grading kills "
            f"{agreement.killed_by_grading}, check {agreement.killed_by_both} of them\n"
        )
        out.flush()
    return agreement


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("exercises", nargs="*", help="exercise ids (default: every exercise)")
    ids = parser.parse_args(argv).exercises or [item.id for item in CATALOG]
    with tempfile.TemporaryDirectory(prefix="tenxor-mutants-") as scratch:
        root = copy_of_reference(Path(scratch) / "course")
        agreement = measure(root, [BY_ID[i] for i in ids], sys.stdout)
    share = agreement.killed_by_both / max(agreement.killed_by_grading, 1)
    print(
        f"check kills {agreement.killed_by_both} of the {agreement.killed_by_grading} mutants "
        f"grading kills ({share:.0%})"
    )
    return 0 if not agreement.missed_by_check else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
