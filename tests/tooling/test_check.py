"""check(): one line per test function, failing cases named by their values, the first failure
in plain words, the unfinished exercise a failure comes from, what the learner's functions
returned when an error surfaces in provided code, hints one at a time, a progress table; the
warm worker (edits seen at once, loops and runaway memory stopped, restarted when killed); and
the release as a learner installs it."""

from __future__ import annotations

import importlib
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from instructor.authoring.release import write_release
from tenxor.course import check
from tenxor.course.catalog import BY_ID, CATALOG, COURSE_TESTS, prerequisites
from tenxor.course.check import (
    CHECK_LIMITS,
    DONE,
    FAILING,
    NOT_STARTED,
    cases_by_test,
    check_exercise,
    ordered_test_files,
    progress,
    public_test_options,
    summary_line,
)
from tenxor.course.engine import SEED_OPTION, Limits, Result, run_tests, warm
from tenxor.course.engine.explain import comparison_in_words
from tenxor.course.engine.runner import summary_repr
from tenxor.course.failure import Failure
from tenxor.course.failure_words import wrapped
from tenxor.course.hints import HINTS
from tenxor.course.hints_shown import HINTS_FILE, hints_so_far, next_hint
from tenxor.course.remembered import REMEMBERED_FILE, fingerprints
from tenxor.creation import tensor
from tests.tooling.submissions import (
    ROOT,
    copy_of_reference,
    replace_stub,
    restore,
)

PYTEST_ID = re.compile(r"\[[A-Za-z_]\w*\d+\]")  # how pytest names a case: [shape2], [key7]

pytestmark = pytest.mark.provided


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("learner") / "release"
    write_release(ROOT, folder)
    return folder


def checked(exercise_id: str, root: Path) -> tuple[str, str]:
    out = io.StringIO()
    status = check_exercise(exercise_id, root, out)
    return status.state, out.getvalue()


def test_a_finished_exercise_passes_every_test_one_line_per_test_function():
    state, text = checked("2.2", ROOT)
    assert state == DONE
    lines = [line for line in text.splitlines() if line.startswith("  PASS")]
    assert len(lines) >= 5 and "FAIL" not in text
    assert all("[" not in line for line in lines), "cases of one test share its line"
    cases = sum(int(re.search(r"\((\d+) cases\)$", line)[1]) if "cases)" in line else 1
                for line in lines)  # fmt: skip
    assert f"{cases} of {cases} tests passed: done (2 points)." in text


def result(test: str, passed: bool) -> Result:
    return Result(test=f"tests/{test}", exercise="9.9", outcome="passed" if passed else "failed")


def test_cases_of_one_test_share_a_line_that_names_the_first_failing_cases_by_their_values():
    results = [result("test_a.py::test_one", True)]
    results += [result(f"test_a.py::test_many[key{k}]", k not in (1, 3, 4, 6)) for k in range(8)]
    results += [result("test_b.py::test_lone", False)]
    named = [
        replace(r, failure=Failure("failed", case=f"n={k}")) for k, r in enumerate(results[1:9])
    ]
    grouped = cases_by_test([results[0], *named, results[-1]])
    assert list(grouped) == ["test_a.py::test_one", "test_a.py::test_many", "test_b.py::test_lone"]
    lines = [summary_line(test, cases) for test, cases in grouped.items()]
    assert lines == [
        "PASS  test_a.py::test_one",
        "FAIL  test_a.py::test_many  (4 of 8 cases fail: n=1; n=3; n=4; ...)",
        "FAIL  test_b.py::test_lone",
    ]
    unknown = summary_line("test_a.py::test_many", cases_by_test(results)["test_a.py::test_many"])
    assert unknown.endswith("(4 of 8 cases fail: case 2; case 4; case 5; ...)")
    assert not PYTEST_ID.search(unknown)
    for passed, summary in [(True, "PASS  test_a.py::test_many  (8 cases)"),
                            (False, "FAIL  test_a.py::test_many  (all 8 cases)")]:  # fmt: skip
        cases = [result(f"test_a.py::test_many[{k}]", passed) for k in range(8)]
        assert summary_line("test_a.py::test_many", cases) == summary


def test_an_unstarted_exercise_says_where_to_write_it(release):
    state, text = checked("2.2", release)
    assert state == NOT_STARTED
    assert "Not started: column_major_strides in tenxor/strides.py still raises" in text
    assert "Traceback" not in text


def test_a_failure_from_an_unfinished_prerequisite_names_it(tmp_path):
    """The first exercise of the catalog that builds on others, finished while they are not."""
    item = next(item for item in CATALOG if item.depends_on)
    learner = tmp_path / "release"
    write_release(ROOT, learner)
    restore(learner, item.id)
    state, text = checked(item.id, learner)
    assert state == FAILING
    named = [f"This test needs exercise {d} ({BY_ID[d].title}, {BY_ID[d].path}: " for d in
             item.depends_on]  # fmt: skip
    assert any(line in text for line in named), text


def test_a_wrong_answer_is_explained_in_plain_words(tmp_path):
    learner = tmp_path / "release"
    write_release(ROOT, learner)
    replace_stub(learner, "1.3", "return tuple(strides)")
    restore(learner, "1.1")
    state, text = checked("1.3", learner)
    assert state == FAILING
    first = text.split("First failure, ")[1]
    assert "got (1, 3" in first and "expected (8, 24)" in first, first
    assert "Traceback" not in first and len(first.splitlines()) <= 12


def test_a_wrong_answer_found_by_hypothesis_shows_the_smallest_failing_input(tmp_path):
    learner = tmp_path / "release"
    write_release(ROOT, learner)
    zero_for_0_d = """
if any(size < 0 for size in shape):
    raise ValueError(f"shape {tuple(shape)} has a negative size: {min(shape)}")
count = 1 if shape else 0
for size in shape:
    count *= size
return count
"""
    replace_stub(learner, "1.1", zero_for_0_d)
    state, text = checked("1.1", learner)
    assert state == FAILING
    first = text.split("First failure, ")[1]
    assert "call:     numel(shape=())" in first, first  # the smallest failing input
    assert "returned: 0" in first and re.search(r"expected:? +1\b", first), first
    assert not re.search(r"^\s*\+ {4,}where", first, re.M), "nested pytest detail is left out"
    assert "reproduce_failure" not in text and "-v" not in text, "no advice check cannot follow"


def test_a_failing_case_is_named_by_its_values_never_by_a_pytest_id(tmp_path):
    """Column-major strides that multiply in each dim's own size: the parametrized cases that
    fail are named by their shapes."""
    learner = tmp_path / "release"
    write_release(ROOT, learner)
    replace_stub(learner, "2.2", """
strides, step = [], 1
for size in shape:
    step *= max(size, 1)
    strides.append(step)
return tuple(strides)
""")  # fmt: skip
    state, text = checked("2.2", learner)
    assert state == FAILING
    failing = [line for line in text.splitlines() if "cases fail:" in line]
    assert failing and all(re.search(r"cases fail: \w+=[(\[]", line) for line in failing), text
    assert not PYTEST_ID.search(text), "a case is named by its values"
    assert "Regex" not in text


class NumberedCases:
    """Collects the cases pytest named by a parameter's name and a number (shape0)."""

    def __init__(self) -> None:
        self.numbered: list[str] = []

    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        for item in items:
            spec = getattr(item, "callspec", None)
            names = "|".join(map(re.escape, getattr(spec, "params", {})))
            if names and re.search(rf"(^|-)({names})\d+(-|$)", spec.id):
                self.numbered.append(item.nodeid)


def test_every_case_of_an_exercise_test_is_named_by_its_values():
    """A parametrized case's id is its values, as reports write them: test_x[(2, -1, 4)-24],
    never pytest's numbered names such as test_x[shape0-24]."""
    found = NumberedCases()
    ignored = [f"--ignore={ROOT / 'tests' / folder}" for folder in ("tooling", "hidden")]
    options = ["--collect-only", "-q", "-p", "no:cacheprovider", str(ROOT / "tests"), *ignored]
    assert pytest.main(options, plugins=[found]) == 0
    assert not found.numbered, "cases named by numbers:\n" + "\n".join(found.numbered[:10])


def property_tests() -> dict[str, Callable[..., Any]]:
    """Every property test of an exercise in the public test files, by name."""
    files = sorted({test for item in CATALOG for test in item.chapter.tests} | set(COURSE_TESTS))
    found = {}
    for file in files:
        module = importlib.import_module(file.removesuffix(".py").replace("/", "."))
        for name, test in vars(module).items():
            exercise = [m for m in getattr(test, "pytestmark", []) if m.name == "exercise"]
            if name.startswith("test_") and getattr(test, "is_hypothesis_test", False) and exercise:
                found[f"{file}::{name}"] = test
    return found


def test_every_property_test_of_an_exercise_tries_explicit_examples_first():
    """check tries a few generated examples; the typical case and the corners its exercise
    names are explicit examples, which hypothesis tries first, in order, at any setting."""
    tests = property_tests()
    assert len(tests) > 50, sorted(tests)
    bare = [name for name, test in tests.items() if not test.hypothesis_explicit_examples]
    assert not bare, "property tests without an explicit example:\n" + "\n".join(bare)


def test_an_exercises_test_files_are_its_chapters_then_those_spanning_the_chapters():
    for item in CATALOG:
        files = ordered_test_files(ROOT, item)
        assert files == [*item.chapter.tests, *COURSE_TESTS], (item.id, files)


class Same:
    """Values that all print the same."""

    def __init__(self, value: int) -> None:
        self.value = value

    def __repr__(self) -> str:
        return "Same()"


class Alike(Same):
    pass


def test_two_sides_that_print_alike_are_never_shown_alike():
    long_a, long_b = list(range(60)) + [1], list(range(60)) + [2]
    assert summary_repr(long_a) == summary_repr(long_b), "pytest would print these the same"
    for left, right, said in [
        (long_a, long_b, "position 60: got 1, expected 2"),
        (Same(1), Alike(1), "Same() (a Same) == Same() (an Alike)"),
        (Same(1), Same(2), "both print as Same() but are not equal"),
    ]:
        lines = comparison_in_words(left, right)
        sides = lines[0].split(" == ")
        assert len(sides) != 2 or sides[0] != sides[1], lines
        assert said in " ".join(lines), lines


def test_two_names_are_compared_whole_and_long_texts_by_their_first_difference():
    """Type names (or any few words) differ as wholes: no letter-by-letter position; a long
    text says where it first differs."""
    assert comparison_in_words("list", "tuple") == ["'list' == 'tuple'"]
    long_a, long_b = "x" * 50 + "a", "x" * 50 + "b"
    assert "first difference at position 50" in " ".join(comparison_in_words(long_a, long_b))


def test_a_key_in_a_report_is_written_as_between_brackets():
    """A slice in a call reads as it is written in a key (::2, 1:, :), alone or in a tuple."""
    from tenxor.course.engine.explain import call_of

    def select(layout: str, key: object) -> None:
        """A function taking a key, as the indexing exercises do."""

    keys = [(slice(None, None, 2), "::2"), ((slice(1, None), 0), "(1:, 0)"),
            ((slice(None), slice(None, None, -1)), "(:, ::-1)"),
            ((slice(3, 5),), "(3:5,)")]  # fmt: skip
    for key, written in keys:
        assert call_of(select, ("L", key), {}) == f"select(layout='L', key={written})"


def test_a_call_is_never_cut_inside_an_argument():
    """A long call shows its longest arguments in brief (a tensor by shape and dtype, a long
    list by its length, a function by its name), each one whole, and keeps the short ones."""
    from tenxor.core import Layout
    from tenxor.course.engine.explain import CALL_CHARS, call_text

    def tag(value: object) -> object:
        return value

    big = tensor([[0.5] * 30] * 4)
    layout = Layout((2, 3), (1, 2), 1)
    arguments = [("fn", tag), ("data", [0.25] * 40), ("layout", layout), ("t", big),
                 ("pairs", [(list(range(24)), layout)])]  # fmt: skip
    text = call_text("zip_values", arguments)
    assert text == (
        "zip_values(fn=tag, data=<list of 40 items>, "
        "layout=Layout(shape=(2, 3), strides=(1, 2), offset=1), "
        "t=<Tenxor of shape (4, 30), dtype float64>, "
        "pairs=[(<list of 24 items>, Layout(shape=(2, 3), strides=(1, 2), offset=1))])"
    ), text
    short = call_text("numel", [("shape", (2, 3))])
    assert short == "numel(shape=(2, 3))" and len(short) < CALL_CHARS


@pytest.fixture(scope="module")
def reference_course(tmp_path_factory) -> Path:
    """A copy of the reference that the tests plant one wrong answer in at a time."""
    return copy_of_reference(tmp_path_factory.mktemp("reference") / "course")


def planted_report(course: Path, exercise_id: str, mistake: str) -> str:
    """check's report of exercise `exercise_id` with the planted answer whose mistake starts
    with `mistake`, planted in the reference copy `course` (and taken out again)."""
    from tests.tooling.planted import PLANTED, planted

    answer = next(a for a in PLANTED if a.exercise == exercise_id and a.mistake.startswith(mistake))
    with planted(course, answer):
        state, text = checked(exercise_id, course)
    assert state == FAILING, text
    return text.split("First failure, ")[1]


def test_a_walk_that_goes_wrong_shows_the_step_that_led_there(reference_course):
    """A next_index that carries one place only returns (0, 3, 0) after (0, 2, 3): the report
    shows that call and its result, not the next call raising on (0, 3, 0) as it should."""
    first = planted_report(reference_course, "2.5", "carries into the dim before the last only")
    assert "call:     next_index(index=(0, 2, 3), shape=(2, 3, 4))" in first, first
    assert "returned: (0, 3, 0)" in first, first
    assert "(0, 3, 0) is not an index of shape (2, 3, 4)" in " ".join(first.split()), first
    assert "no error is due" not in first, first


def test_an_error_raised_where_a_value_is_due_shows_that_value(reference_course):
    """A next_index that raises after the last index is shown the None that was due."""
    first = planted_report(reference_course, "2.5", "raises IndexError after the last index")
    assert "call:     next_index(index=(1, 2, 3), shape=(2, 3, 4))" in first, first
    assert re.search(r"^\s+expected: +None$", first, re.M), first


def test_a_generator_is_shown_by_what_it_yielded(reference_course):
    first = planted_report(reference_course, "4.3", "wraps a dim back")
    assert "returned: a generator that yielded [1, 3, 5, 0, 2, 4]" in first, first


@pytest.mark.parametrize(
    ("mistake", "rule"),
    [("groups the softmax by source", "grouped by target"),
     ("adds a self loop per node but keeps", "each self loop counted once")],
)  # fmt: skip
def test_the_rule_shown_is_the_one_the_wrong_step_broke(reference_course, mistake, rule):
    """gatv2_edges has several steps; the report's rule is the one its output went off at."""
    first = " ".join(planted_report(reference_course, "6.11", mistake).split())
    assert rule in first, first
    other = "each self loop counted once" if rule == "grouped by target" else "grouped by target"
    assert other not in first, first


def test_bit_patterns_are_shown_in_hex_in_the_call_the_result_and_the_case(reference_course):
    """1.2's messages write patterns in hex; its call, result and case do too."""
    first = planted_report(reference_course, "1.2", "rounds every tie up")
    assert re.search(r"^\s+call: +round_to_bfloat16\(bits32=0x[0-9a-f]+\)$", first, re.M), first
    assert re.search(r"^\s+returned: +0x[0-9a-f]+$", first, re.M), first
    assert not re.search(r"\b\d{5,}\b", first), f"a pattern in decimal:\n{first}"


def test_an_error_in_provided_code_names_the_learners_function_and_what_it_returned(tmp_path):
    """A reduce kernel that swaps the group size and the number of groups returns fewer values
    than its shape holds; the mean built on it fails where provided code makes the tensor."""
    course = copy_of_reference(tmp_path / "course")
    kernel, mean = BY_ID["5.1"], next(item for item in CATALOG if "5.1" in item.depends_on)
    source = (course / kernel.path).read_text(encoding="utf-8")
    swaps = {
        "for d in reduced:\n        size *=": "for d in kept:\n        size *=",
        "for d in kept:\n        outputs *=": "for d in reduced:\n        outputs *=",
    }
    for right, wrong in swaps.items():
        assert source.count(right) == 1, right
        source = source.replace(right, wrong)
    (course / kernel.path).write_text(source, encoding="utf-8")
    state, text = checked(mean.id, course)
    assert state == FAILING
    first = text.split("First failure, ")[1]
    assert "That line is provided code." in first, first
    assert f"your {kernel.function} ({kernel.id}) returned (" in first, first
    assert f"when called as {kernel.function}(" in first


def test_an_error_inside_an_earlier_exercise_is_shown_on_the_learners_own_line(tmp_path):
    """An unsqueeze_layout (3.3) that breaks on a new last dim: matmul's (5.5) report points
    at the line of matmul that called it, and names the earlier exercise it went into."""
    course = copy_of_reference(tmp_path / "course")
    views = course / BY_ID["3.3"].path
    source = views.read_text(encoding="utf-8")
    right = "stride = layout.strides[dim] * layout.shape[dim] if dim < ndim else 1"
    assert source.count(right) == 1
    views.write_text(source.replace(right, "stride = layout.strides[dim] * layout.shape[dim]"))
    state, text = checked("5.5", course)
    assert state == FAILING
    first = text.split("First failure, ")[1]
    line = re.search(r"raised at tenxor/reductions\.py:(\d+) in matmul", first)
    assert line, first
    said = f"inside your unsqueeze_layout (3.3), called from your matmul at line {line[1]}"
    assert said in first, first
    assert re.search(r"call: +matmul\(a=", first), first


def test_hints_are_revealed_one_at_a_time_and_remembered(tmp_path):
    exercise_id, hints = next((id, hints) for id, hints in HINTS.items() if len(hints) >= 2)
    shown = [next_hint(exercise_id, tmp_path) for _ in range(len(hints) + 1)]
    for number, lines in enumerate(shown[: len(hints)], start=1):
        assert any(f"hint {number} of {len(hints)}:" in line for line in lines), lines
        assert hints[number - 1].split()[0] in " ".join(lines)
    assert "That was the last hint" in shown[-1][0]
    assert any(f"hint {len(hints)} of {len(hints)}:" in line for line in shown[-1])
    remembered = json.loads((tmp_path / HINTS_FILE).read_text(encoding="utf-8"))
    assert remembered == {exercise_id: len(hints)}
    (tmp_path / HINTS_FILE).write_text(json.dumps({exercise_id: 1}), encoding="utf-8")
    assert any(f"hint 2 of {len(hints)}:" in line for line in next_hint(exercise_id, tmp_path))


def test_the_hints_shown_so_far_can_be_read_again_without_a_new_one(tmp_path, capsys):
    """check(id, hint="all") shows every hint seen so far, in order, and reveals no new one;
    before any, it says how to see the first."""
    exercise_id, hints = next((id, hints) for id, hints in HINTS.items() if len(hints) >= 3)
    assert "No hint" in hints_so_far(exercise_id, tmp_path)[0]
    next_hint(exercise_id, tmp_path)
    second = next_hint(exercise_id, tmp_path)
    assert any('hint="all") shows the 2 so far again' in line for line in second), second
    again = "\n".join(hints_so_far(exercise_id, tmp_path))
    first_words, second_words = (" ".join(wrapped(hint)[0].split()[:4]) for hint in hints[:2])
    assert again.index(f"hint 1 of {len(hints)}:") < again.index(f"hint 2 of {len(hints)}:")
    assert first_words in again and second_words in again
    assert f"hint 3 of {len(hints)}" not in again
    assert json.loads((tmp_path / HINTS_FILE).read_text()) == {exercise_id: 2}
    shell = subprocess.run(
        [sys.executable, "-m", "tenxor_shell.command", "check", exercise_id, "--all-hints"]
        + ["--course", str(tmp_path)],
        capture_output=True, text=True, cwd=ROOT, timeout=120,
    )  # fmt: skip
    assert shell.returncode == 0 and shell.stdout.strip() == again, shell.stdout + shell.stderr


def test_a_hint_for_an_unknown_exercise_lists_the_known_ones(tmp_path):
    with pytest.raises(KeyError) as error:
        next_hint("9.9", tmp_path)
    assert f"known exercises: {', '.join(BY_ID)}" in error.value.args[0]
    assert not (tmp_path / HINTS_FILE).exists()


def test_check_in_a_notebook_answers_an_unknown_id_or_a_missing_one_in_words(capsys):
    check("9.9")
    check("9.9", hint=True)
    check(hint=True)
    printed = capsys.readouterr().out.splitlines()
    assert printed[:2] == [f"no exercise '9.9'; known exercises: {', '.join(BY_ID)}"] * 2
    assert printed[2] == 'Say which exercise the hint is for, for example check("2.1", hint=True).'


def numel_starting_at(start: str) -> str:
    """A numel that starts counting at `start`: right with "1", wrong with "0" (same size)."""
    return f"""
count = {start}
for size in shape:
    if size < 0:
        raise ValueError(f"shape {{tuple(shape)}} has a negative size {{size}}")
    count *= size
return count
"""


def test_an_edit_counts_at_the_next_check_in_the_same_process(tmp_path):
    """The file changes between two checks of one process, keeping its size (and, likely, its
    modification second): the second check sees the new code, from the same worker."""
    learner = tmp_path / "release"
    write_release(ROOT, learner)
    module = learner / BY_ID["1.1"].path
    replace_stub(learner, "1.1", numel_starting_at("0"))
    assert checked("1.1", learner)[0] == FAILING
    worker = warm.worker_for(learner).process.pid
    wrong = module.read_text(encoding="utf-8")
    module.write_text(wrong.replace("count = 0", "count = 1"), encoding="utf-8")
    assert module.stat().st_size == len(wrong.encode("utf-8"))
    assert checked("1.1", learner)[0] == DONE
    assert warm.worker_for(learner).process.pid == worker


def test_a_loop_that_never_ends_is_stopped_with_the_exercise_and_the_limit(tmp_path):
    learner = tmp_path / "release"
    write_release(ROOT, learner)
    replace_stub(learner, "1.1", "count = 1\nwhile count:\n    count += 1\nreturn count")
    out = io.StringIO()
    status = check_exercise("1.1", learner, out, Limits(run_seconds=2.0))
    text = out.getvalue()
    assert status.state == FAILING
    assert "The tests of exercise 1.1 were stopped after 2 s" in text, text
    assert f"raised at {BY_ID['1.1'].path}:" in text  # the line the loop was on
    first = text.split("First failure, ")[1]
    assert re.search(r"^\s+call: +numel\(shape=.*\)\n\s+\(still running when it was stopped\)$",
                     first, re.M), first  # fmt: skip


def test_a_loop_that_swallows_the_stop_is_killed_from_outside(tmp_path):
    learner = tmp_path / "release"
    write_release(ROOT, learner)
    replace_stub(learner, "1.1", """
while True:
    try:
        while True:
            pass
    except BaseException:
        pass
""")  # fmt: skip
    out = io.StringIO()
    status = check_exercise("1.1", learner, out, Limits(run_seconds=1.0))
    assert status.state == FAILING
    assert "The tests of exercise 1.1 were stopped after 1 s" in out.getvalue(), out.getvalue()
    assert checked("1.2", learner)[0] == NOT_STARTED, "the worker serves the next check"


def test_memory_that_grows_without_end_is_stopped_with_the_limit(tmp_path):
    learner = tmp_path / "release"
    write_release(ROOT, learner)
    # Untouched zero pages: the address space grows to the limit, the machine's memory does not.
    replace_stub(learner, "1.1", "blocks = []\nwhile True:\n    blocks.append(bytes(10**8))")
    state, text = checked("1.1", learner)
    assert state == FAILING
    assert f"ran out of memory (a check may use {CHECK_LIMITS.memory_mb} MB)" in text, text


def test_a_killed_worker_is_replaced_by_the_next_check(release):
    assert checked("1.1", release)[0] == NOT_STARTED
    killed = warm.worker_for(release).process
    os.kill(killed.pid, signal.SIGKILL)
    killed.wait()
    assert checked("1.1", release)[0] == NOT_STARTED
    assert warm.worker_for(release).process.pid != killed.pid


SHELL_CHECK = """
import sys
from pathlib import Path
from tenxor.course.engine import warm
from tenxor.course.check import public_test_options
warm.use_the_shells_worker()
root = Path(sys.argv[1])
run = warm.run_checked(root, ["tests/test_storage.py", *public_test_options(root)], 60.0, 2048)
child = next(note for note in run.notes if note["event"] == "child")
print(child["worker"], sum(r.passed for r in run.results.values()))
"""


def test_a_second_shell_check_is_answered_by_the_worker_the_first_one_left_warm(release):
    """Each `tenxor check` in a shell is a new process; the worker it starts outlives it and
    answers the next one, until it is asked to stop."""
    answers = [
        subprocess.run(
            [sys.executable, "-c", SHELL_CHECK, str(release)],
            capture_output=True, text=True, check=True, cwd=release,
        ).stdout.split()
        for _ in range(2)
    ]  # fmt: skip
    shared = warm.SharedWorker(release)
    try:
        assert answers[0] == answers[1], "the same worker, the same results"
        assert int(answers[0][0]) not in (0, os.getpid())
        assert shared.address.is_socket()
        assert shared.address.parent.stat().st_mode & 0o777 == 0o700, "no other user enters"
    finally:
        shared.stop()
    for _ in range(200):  # it ends once it has read the request to stop
        if not shared.address.exists():
            break
        time.sleep(0.05)
    assert not shared.address.exists() and shared.connect() is None


def test_the_shells_worker_ends_by_itself_when_its_course_folder_is_gone(tmp_path):
    course = tmp_path / "course"
    write_release(ROOT, course)
    subprocess.run([sys.executable, "-c", SHELL_CHECK, str(course)], check=True, cwd=tmp_path,
                   capture_output=True)  # fmt: skip
    shared = warm.SharedWorker(course)
    assert shared.connect() is not None
    shutil.rmtree(course)
    for _ in range(600):  # it looks every few seconds
        if not shared.address.exists():
            break
        time.sleep(0.05)
    assert shared.connect() is None and not shared.address.exists()


def test_a_test_process_starts_where_python_has_no_resource_module():
    """The preamble of a new test process (the path check takes without fork, as on Windows)
    runs where `import resource` fails, and then without an address-space limit."""
    from tenxor.course.engine.running import LIMITED

    script = "import sys\nsys.modules['resource'] = None\n" + LIMITED + "print('started')\n"
    environment = {**os.environ, "TENXOR_MEMORY_MB": "64", "TENXOR_PARENT": str(os.getpid())}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env=environment, check=False)  # fmt: skip
    assert done.returncode == 0 and done.stdout == "started\n", done.stderr


def test_without_fork_the_tests_run_in_a_new_process_with_the_same_report(monkeypatch):
    warm_text = checked("2.2", ROOT)[1]
    monkeypatch.delattr(warm.os, "fork")
    state, text = checked("2.2", ROOT)
    assert state == DONE and text == warm_text


def test_the_latency_benchmarks_wrong_answers_apply_one_per_chapter_and_fail(tmp_path):
    from benchmarks.check_latency import WRONG_ANSWERS, copy_of_course, put_wrong_answers

    chapters = {item.id.split(".")[0] for item in CATALOG}
    assert sorted(id.split(".")[0] for id in WRONG_ANSWERS) == sorted(chapters)
    course = copy_of_course(tmp_path / "course")
    put_wrong_answers(course)
    for exercise_id in WRONG_ANSWERS:
        state, text = checked(exercise_id, course)
        assert state == FAILING, text
        assert "Traceback" not in text and not PYTEST_ID.search(text)


def test_progress_table_lists_every_exercise_with_points(release):
    out = io.StringIO()
    statuses = progress(release, out)
    assert [status.exercise.id for status in statuses] == list(BY_ID)
    assert all(status.state == NOT_STARTED for status in statuses)
    text = out.getvalue()
    for item in CATALOG:
        assert any(
            line.split()[:1] == [item.id] and str(item.points) in line for line in text.splitlines()
        )
    assert f"Done: 0 of {len(CATALOG)} exercises, 0 of 100 points." in text


def test_the_progress_table_runs_again_only_the_exercises_whose_code_changed(tmp_path):
    """Results are remembered with each exercise's fingerprint: in a fresh release nothing is
    started and nothing runs; finishing 3.3 runs 3.3; editing it again (its prerequisites'
    functions too count) runs it again; an unchanged tree runs nothing."""
    learner = tmp_path / "release"
    write_release(ROOT, learner)
    first = io.StringIO()
    statuses = progress(learner, first)
    assert "Running the tests of 0 of the 0 exercises you have started" in first.getvalue()
    assert all(status.state == NOT_STARTED for status in statuses)
    for exercise_id in ("3.1", "3.3"):
        restore(learner, exercise_id)
    again = io.StringIO()
    statuses = {status.exercise.id: status.state for status in progress(learner, again)}
    assert "Running the tests of 2 of the 2 exercises you have started" in again.getvalue()
    assert statuses["3.3"] == DONE and statuses["3.1"] == DONE
    assert list(statuses.values()).count(NOT_STARTED) == len(CATALOG) - 2
    assert json_fingerprints(learner).items() <= fingerprints(learner).items()
    views = learner / BY_ID["3.3"].path
    views.write_text(views.read_text(encoding="utf-8").replace("dim = dim % (ndim + 1)",
                                                             "dim %= ndim + 1"))  # fmt: skip
    edited = io.StringIO()
    assert {s.exercise.id: s.state for s in progress(learner, edited)} == statuses
    assert "Running the tests of 1 of the 2 exercises you have started" in edited.getvalue()
    unchanged = io.StringIO()
    assert {s.exercise.id: s.state for s in progress(learner, unchanged)} == statuses
    assert "Running the tests of 0 of the 2 exercises" in unchanged.getvalue()


def test_the_progress_table_counts_the_tests_check_counts_without_explaining_them(tmp_path):
    """The table runs the same examples as check, without shrinking a failure or explaining
    it: each exercise's passed and total tests are check's, for right and wrong answers."""
    from tests.tooling.planted import PLANTED, plant

    course = copy_of_reference(tmp_path / "course")
    for mistake in ("walks the broadcast operands", "forgets to add the bias"):
        plant(course, next(answer for answer in PLANTED if answer.mistake.startswith(mistake)))
    table = {s.exercise.id: (s.state, s.passed, s.total) for s in progress(course, io.StringIO())}
    for exercise_id in ("5.4", "5.5", "6.1", "6.2"):
        status = check_exercise(exercise_id, course, io.StringIO())
        assert table[exercise_id] == (status.state, status.passed, status.total), exercise_id
    assert table["5.4"][0] == FAILING and table["6.2"][0] == DONE


def test_tests_split_among_processes_give_every_result_once_and_the_same(tmp_path):
    """`--split 3` runs every third test in each of three processes writing to one event
    file: the same results as one process, each test once."""
    options = ["tests/test_strides.py", "tests/test_storage.py", *public_test_options(ROOT)]
    options.append(SEED_OPTION)
    alone = run_tests(ROOT, options, profile="check")
    shared = run_tests(ROOT, [*options, "--split=3"], profile="check")
    assert not alone.problem and not shared.problem
    assert len(alone.results) > 100
    outcomes = {test: result.outcome for test, result in alone.results.items()}
    assert {test: result.outcome for test, result in shared.results.items()} == outcomes
    assert set(shared.collected) == set(alone.collected)


def json_fingerprints(root: Path) -> dict[str, str]:
    """The fingerprints the results file holds."""
    stored = json.loads((root / REMEMBERED_FILE).read_text(encoding="utf-8"))
    return {exercise_id: entry["fingerprint"] for exercise_id, entry in stored.items()}


def test_an_exercises_fingerprint_follows_its_code_its_prerequisites_and_the_provided_code(
    tmp_path,
):
    course = copy_of_reference(tmp_path / "course")
    before = fingerprints(course)
    views = course / BY_ID["3.3"].path
    source = views.read_text(encoding="utf-8")
    views.write_text(source.replace("    dim = dim % (ndim + 1)", "    dim %= ndim + 1"))
    changed = {key for key, value in fingerprints(course).items() if value != before[key]}
    assert changed == {"3.3"} | {i.id for i in CATALOG if "3.3" in prerequisites(i.id)}
    commented = source.replace("    dim = dim % (ndim + 1)", "    dim = dim % (ndim + 1)  # wrap\n")
    views.write_text(commented)
    assert fingerprints(course) == before, "a comment and a blank line change nothing"
    views.write_text(source + "\nPROVIDED = 1\n")
    assert all(value != before[key] for key, value in fingerprints(course).items())
    views.write_text(source)
    assert fingerprints(course) == before


def learner_python(release: Path) -> Path:
    return release / ".venv" / "bin" / "python"


def test_the_release_installed_as_a_learner_does_tracks_progress(tmp_path):
    """A fresh virtual environment made by the release's own `course.py`; check() reports every
    exercise not started, and finishing exercise 1.3 flips exactly that one to done."""
    learner = tmp_path / "course"
    write_release(ROOT, learner)
    environment = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    setup = subprocess.run(
        [sys.executable, "course.py", "test", "--exercise", "1.3", "-q"],
        cwd=learner,
        capture_output=True,
        text=True,
        env=environment,
        timeout=900,
    )
    assert setup.returncode == 1, setup.stdout[-2000:] + setup.stderr[-2000:]
    assert "failed" in setup.stdout

    def table() -> dict[str, str]:
        done = subprocess.run(
            [str(learner_python(learner)), "-m", "tenxor.course.cli", "check"],
            cwd=learner,
            capture_output=True,
            text=True,
            env=environment,
            timeout=300,
        )
        rows = [line.split() for line in done.stdout.splitlines() if line[:1].isdigit()]
        return {row[0]: " ".join(row[-2:]) if row[-1] == "started" else row[-1] for row in rows}

    try:
        before = table()
        assert before == {item.id: NOT_STARTED for item in CATALOG}
        restore(learner, "1.3")
        after = table()
        assert after == {**before, "1.3": DONE}
    finally:
        warm.SharedWorker(learner.resolve()).stop()  # the shell's worker the table started


def test_a_short_test_name_drops_only_the_folders():
    from tenxor.course.engine import short_name

    assert short_name("tests/hidden/test_views.py::test_x[a/b]") == "test_views.py::test_x[a/b]"
    assert short_name("tests/test_views.py") == "test_views.py"


BREAKS_THE_IMPORT = [
    pytest.param(lambda text: text.replace("def numel(", "def numel((", 1),
                 "SyntaxError", "def numel((", id="syntax-error"),
    pytest.param(lambda text: text + "\nfrom .views import not_a_name\n",
                 "ImportError", "from .views import not_a_name", id="import-error"),
    pytest.param(lambda text: text + "\nscale = 1 / 0\n", "ZeroDivisionError", "scale = 1 / 0",
                 id="error-at-import"),
]  # fmt: skip


@pytest.mark.parametrize(("edit", "error", "line"), BREAKS_THE_IMPORT)
def test_a_module_that_does_not_import_is_said_first_and_alone(tmp_path, edit, error, line):
    """check(), the progress table and the shell's `tenxor check` each print where the
    package stops importing (file, line, error), the line itself and what to do, and
    nothing else: no test summary, no traceback of the checker."""
    root = tmp_path / "release"
    write_release(ROOT, root)
    storage = root / "tenxor" / "storage.py"
    storage.write_text(edit(storage.read_text(encoding="utf-8")), encoding="utf-8")
    lines = storage.read_text(encoding="utf-8").splitlines()
    number = next(n for n, text in enumerate(lines, start=1) if line in text)
    head = f"tenxor/storage.py line {number}: {error}: "
    state, text = checked("1.1", root)
    table = io.StringIO()
    progress(root, table)
    shell = subprocess.run([sys.executable, "-m", "tenxor_shell.command", "check", "1.1"],
                           capture_output=True, text=True, cwd=root, timeout=300)  # fmt: skip
    assert shell.returncode == 1 and not shell.stderr, shell.stderr
    for said in (text, table.getvalue(), shell.stdout):
        lines = said.splitlines()
        assert lines[0].startswith(head), said
        assert line in lines[1], said
        assert lines[3].startswith("No test can run until every module of tenxor imports")
        assert len(lines) == 4 and "Traceback" not in said, said
    assert state == FAILING
