"""Exercise tests judge behaviour, not wording.

A learner's error message may say anything as long as it names the offending values. To
prove the tests accept that, this test writes a copy of the course in which every message
raised inside a solution region keeps only its values, in reverse order, behind other words:

    raise IndexError(f"index {i} is out of range for dim {dim} of size {size}")

becomes

    raise IndexError(f"rewritten: {size} / {dim} / {i}")

and every exercise test, public and hidden, must still pass on that copy. A second, small
copy drops one value from one message, and the tests of that exercise must notice.
"""

from __future__ import annotations

import ast
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from instructor.authoring.regions import Region, find_regions
from instructor.authoring.release import NOT_NEEDED_FOR_TESTS, write_tree
from instructor.authoring.verify import suite_options
from tenxor.course.catalog import BY_ID
from tenxor.course.engine import SEED_OPTION, Limits, run_tests

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.provided
LIMITS = Limits(test_seconds=60.0, run_seconds=900.0)
# Fewer property examples than a full run, always the same ones: the rewording changes only
# messages, and the parametrized rows of bad input are where most messages are checked.
PROFILE = "check"
REWORDED = "rewritten: "


def message_fields(node: ast.expr, names: dict[str, ast.expr]) -> list[ast.FormattedValue] | None:
    """The replacement fields of a message: an f-string, a plain string, a `+` of those, or a
    name assigned one of those earlier in the block; None for anything else."""
    if isinstance(node, ast.JoinedStr):
        return [value for value in node.values if isinstance(value, ast.FormattedValue)]
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return []
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = message_fields(node.left, names), message_fields(node.right, names)
        return None if left is None or right is None else left + right
    if isinstance(node, ast.Name) and node.id in names:
        return message_fields(names[node.id], names)
    return None


def reworded_message(fields: list[ast.FormattedValue]) -> ast.JoinedStr:
    """An f-string holding `fields` in reverse order (each with its own conversion and
    format spec) behind other words."""
    parts: list[ast.expr] = [ast.Constant(REWORDED)]
    for number, field in enumerate(reversed(fields)):
        if number:
            parts.append(ast.Constant(" / "))
        parts.append(field)
    return ast.JoinedStr(parts)


def inner_blocks(statement: ast.stmt) -> Iterator[list[ast.stmt]]:
    """The blocks of statements directly inside a statement (bodies, branches, handlers)."""
    for name in ("body", "orelse", "finalbody"):
        block = getattr(statement, name, None)
        if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
            yield block
    for part in (*getattr(statement, "handlers", ()), *getattr(statement, "cases", ())):
        yield part.body


def raises_in_blocks(
    statements: list[ast.stmt], names: dict[str, ast.expr]
) -> Iterator[tuple[ast.Raise, dict[str, ast.expr]]]:
    """Every raise statement below `statements`, with the values assigned to plain names
    before it (in its own block or an enclosing one)."""
    names = dict(names)
    for statement in statements:
        if isinstance(statement, ast.Raise):
            yield statement, names
        elif isinstance(statement, ast.Assign):
            for target in statement.targets:
                if isinstance(target, ast.Name):
                    names[target.id] = statement.value
        for block in inner_blocks(statement):
            yield from raises_in_blocks(block, names)


def region_of(line: int, regions: list[Region]) -> Region | None:
    """The solution region that holds `line`, if any."""
    return next((region for region in regions if region.begin < line < region.end), None)


def reworded_source(path: Path, strip: tuple[str, str] | None = None) -> tuple[str, int]:
    """The text of the module at `path` with every message raised inside a solution region
    reworded (see the module docstring), and how many raises were reworded. With `strip`,
    (exercise id, source of a field), that field is left out of that exercise's messages."""
    source = path.read_text(encoding="utf-8")
    lines = source.splitlines(keepends=True)
    regions = find_regions(path, set(BY_ID))
    edits = []
    for raise_, names in raises_in_blocks(ast.parse(source).body, {}):
        region = region_of(raise_.lineno, regions)
        call = raise_.exc
        if region is None or not isinstance(call, ast.Call) or not call.args:
            continue
        fields = message_fields(call.args[0], names)
        if fields is None:
            continue
        if strip and region.exercise_id == strip[0]:
            fields = [field for field in fields if ast.unparse(field.value) != strip[1]]
        indent = lines[raise_.lineno - 1][: raise_.col_offset]
        assert not indent.strip(), f"{path}:{raise_.lineno}: a raise that shares its line"
        reworded = ast.Call(call.func, [reworded_message(fields), *call.args[1:]], call.keywords)
        cause = f" from {ast.unparse(raise_.cause)}" if raise_.cause else ""
        edits.append((raise_, f"{indent}raise {ast.unparse(reworded)}{cause}\n"))
    for raise_, line in sorted(edits, key=lambda edit: edit[0].lineno, reverse=True):
        lines[raise_.lineno - 1 : raise_.end_lineno] = [line]
    return "".join(lines), len(edits)


def write_reworded_tree(destination: Path, strip: tuple[str, str] | None = None) -> int:
    """Write the course with reworded messages into `destination`; how many raises were
    reworded."""
    counts = []

    def rewrite(path: Path) -> str:
        text, count = reworded_source(path, strip)
        counts.append(count)
        return text

    write_tree(ROOT, destination, NOT_NEEDED_FOR_TESTS, rewrite=rewrite)
    return sum(counts)


def region_text(path: Path) -> str:
    """The lines inside the solution regions of a module."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    return "".join("".join(lines[r.begin : r.end - 1]) for r in find_regions(path, set(BY_ID)))


def test_reworded_messages_rewrite_only_the_raise_and_keep_its_values(tmp_path):
    """One raise with a message built from two f-strings in a variable, one with `from None`:
    each becomes one line with its fields reversed; code outside regions stays as it was."""
    module = tmp_path / "module.py"
    module.write_text(
        "def f(i, n):\n"
        '    raise ValueError(f"outside {i}")\n'
        "\n"
        "\n"
        "def g(i, n):\n"
        "    # BEGIN SOLUTION 2.3\n"
        '    message = f"index {i!r} is past " + f"the end {n:>3}"\n'
        "    if i > n:\n"
        "        raise IndexError(message)\n"
        "    raise ValueError(\n"
        '        f"index {i} and {n}"\n'
        "    ) from None\n"
        "    # END SOLUTION 2.3\n",
        encoding="utf-8",
    )
    text, count = reworded_source(module)
    assert count == 2
    assert 'raise ValueError(f"outside {i}")' in text
    assert "raise IndexError(f'rewritten: {n:>3} / {i!r}')" in text
    assert "raise ValueError(f'rewritten: {n} / {i}') from None" in text
    namespace: dict = {}
    exec(compile(text, str(module), "exec"), namespace)
    with pytest.raises(IndexError, match=r"^rewritten:   3 / 5$"):
        namespace["g"](5, 3)
    stripped, _ = reworded_source(module, strip=("2.3", "n"))
    assert "raise ValueError(f'rewritten: {i}') from None" in stripped


def test_every_exercise_test_passes_with_reworded_messages(tmp_path):
    """Every exercise test, public and hidden, passes on the course whose solution messages
    keep only their values, reversed, behind other words."""
    tree = tmp_path / "reworded"
    count = write_reworded_tree(tree)
    assert count >= 25, f"only {count} raises were reworded"
    strides = region_text(tree / "tenxor" / "strides.py")
    assert REWORDED in strides and "is out of range" not in strides
    assert "is out of range" in region_text(ROOT / "tenxor" / "strides.py")

    started = time.monotonic()
    run = run_tests(
        tree, [*suite_options(tree), "-m", "not provided", SEED_OPTION], LIMITS, PROFILE
    )
    print(f"{len(run.collected)} exercise tests in {time.monotonic() - started:.1f} s")
    assert not run.collect_errors and run.problem is None, (run.collect_errors, run.problem)
    assert len(run.collected) > 500
    failed = [f"{r.test}: {r.message}" for r in run.results.values() if not r.passed]
    assert not failed, "\n".join(failed[:20])


def test_a_message_without_a_value_it_must_name_fails_its_tests(tmp_path):
    """The same rewording, but 2.3's message for an index out of range loses the dim's size:
    some test of 2.3 must fail (so the test above could fail too)."""
    tree = tmp_path / "stripped"
    write_reworded_tree(tree, strip=("2.3", "size"))
    run = run_tests(
        tree,
        [*suite_options(tree), "-m", "not provided", "--exercise", "2.3", SEED_OPTION],
        LIMITS,
        PROFILE,
    )
    assert run.collected and set(run.collected.values()) == {"2.3"}
    failed = [test for test, result in run.results.items() if not result.passed]
    assert failed, "no test of 2.3 noticed a message without the size of the dim"
