"""What tenxor/course/engine/upstream.py names in pytest, hypothesis, NumPy, setuptools and
CPython still holds for the installed versions: real pytest runs, real hypothesis failures,
real NumPy assertions and frames of this Python. When one stops matching, the test names the
package, its version and the name in upstream.py that must follow it."""

from __future__ import annotations

import importlib
import importlib.metadata
import json
import operator
import os
import platform
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from tenxor.course.engine import upstream
from tenxor.course.engine.explain import function_name
from tenxor.course.engine.running import FORGET_EDITABLE_INSTALLS

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.provided


def moved(package: str, what: str, name: str) -> str:
    """The message of a test whose upstream has changed: which package, which version, what it
    no longer does, and the name in upstream.py that must follow it."""
    version = (
        platform.python_version() if package == "Python" else importlib.metadata.version(package)
    )
    return (
        f"{package} {version} no longer {what}: "
        f"tenxor/course/engine/upstream.py's {name} must follow it"
    )


@pytest.mark.parametrize("package", ["pytest", "hypothesis"])
def test_pyproject_stops_before_the_next_major_version_of_what_upstream_reads(package):
    """A new major version is taken on once this file passes with it: lift the cap then."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:
        import tomli as tomllib
    from packaging.requirements import Requirement
    from packaging.version import Version

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    listed = [*project["dependencies"], *sum(project["optional-dependencies"].values(), [])]
    found = [Requirement(text) for text in listed if Requirement(text).name == package]
    installed = Version(importlib.metadata.version(package))
    assert found, f"pyproject.toml does not list {package}"
    for requirement in found:
        caps = [Version(s.version) for s in requirement.specifier if s.operator == "<"]
        assert caps == [Version(f"{installed.major + 1}")], (
            f"pyproject.toml's {requirement} must stop before {package} {installed.major + 1}"
        )
        assert installed in requirement.specifier, (
            f"{package} {installed} is installed, outside pyproject.toml's {requirement}: once "
            "this file passes with it, tenxor/course/engine/upstream.py follows it; move the cap"
        )


# ---------------------------------------------------------------------------------------------
# pytest: real runs of a small test file, in a new process
# ---------------------------------------------------------------------------------------------

# The test process writes, for each test, what upstream.py finds in its report and error.
RECORDING_CONFTEST = """\
import json
import os

import pytest

from tenxor.course.engine import upstream

RECORDS = open(os.environ["UPSTREAM_RECORDS"], "a", encoding="utf-8")


def write(**record):
    RECORDS.write(json.dumps(record) + "\\n")
    RECORDS.flush()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    report = (yield).get_result()
    if call.when != "call":
        return
    error = call.excinfo.value if call.excinfo is not None else None
    case = upstream.parametrized_case(item)
    write(
        test=item.originalname,
        name=item.name,
        case=None if case is None else [{k: repr(v) for k, v in case[0].items()}, case[1]],
        skip_reason=upstream.skip_reason(report) if report.skipped else None,
        message=str(error),
        kept=upstream.without_pytest_detail(str(error).splitlines()),
        did_not_raise=upstream.did_not_raise(error) if error is not None else None,
        rejected=repr(upstream.rejected_by_raises(error)) if error is not None else None,
    )


def pytest_collectreport(report):
    if report.failed:
        write(test=report.nodeid, collect_error=upstream.collect_error_line(report))
"""
LEFT_LIST, RIGHT_LIST = [0] * 50 + [1], [0] * 50 + [2]
LEFT_TEXT, RIGHT_TEXT = "a" * 40 + "b", "a" * 40 + "c"
TESTS = """\
import pytest


def plus_one(x):
    return x + 1


def test_long_lists():
    assert [0] * 50 + [1] == [0] * 50 + [2]


def test_long_texts():
    assert "a" * 40 + "b" == "a" * 40 + "c"


def test_nested_where():
    assert plus_one(plus_one(1)) == 5


def test_nothing_raised():
    with pytest.raises(ValueError):
        pass


def test_nothing_of_two_raised():
    with pytest.raises((ValueError, TypeError)):
        pass


def test_message_rejected():
    with pytest.raises(ValueError, match="shape"):
        raise ValueError("wrong size")


@pytest.mark.parametrize("shape, dim", [((2, 3), 1)])
def test_case(shape, dim):
    assert shape[dim] == 4


def test_skipped():
    pytest.skip("no GPU here")
"""
BROKEN_TESTS = "import a_module_nobody_installed\n"


def pytest_run(folder: Path, *options: str) -> dict[str, dict[str, Any]]:
    """Run pytest (as check's test processes call it, plus `options`) on the small test files
    in `folder`, in a new process; what the recording conftest wrote, by test."""
    folder.mkdir()
    (folder / "conftest.py").write_text(RECORDING_CONFTEST, encoding="utf-8")
    (folder / "test_upstream_sample.py").write_text(TESTS, encoding="utf-8")
    (folder / "test_upstream_broken.py").write_text(BROKEN_TESTS, encoding="utf-8")
    records = folder / "records.jsonl"
    environment = {**os.environ, "PYTHONPATH": str(ROOT), "UPSTREAM_RECORDS": str(records)}
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--tb=no"]
    command += ["--continue-on-collection-errors", "-p", "no:xdist", "-p", "no:nbval"]
    command += [*options, str(folder)]
    done = subprocess.run(
        command, cwd=folder, env=environment, capture_output=True, text=True, check=False
    )
    assert records.exists(), done.stdout + done.stderr
    lines = records.read_text(encoding="utf-8").splitlines()
    return {record["test"]: record for record in map(json.loads, lines)}


@pytest.fixture(scope="module")
def quiet_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """The records of a run at check's verbosity (-q)."""
    return pytest_run(tmp_path_factory.mktemp("upstream") / "quiet", "-q")


@pytest.fixture(scope="module")
def verbose_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """The records of a run at -v, where pytest adds a full diff."""
    return pytest_run(tmp_path_factory.mktemp("upstream") / "verbose", "-v")


@pytest.mark.parametrize(
    "test, left, right",
    [("test_long_lists", LEFT_LIST, RIGHT_LIST), ("test_long_texts", LEFT_TEXT, RIGHT_TEXT)],
)
def test_summary_repr_writes_the_sides_of_a_failed_equality_as_pytest_does(
    quiet_run, test, left, right
):
    written = [upstream.summary_side(left), upstream.summary_side(right)]
    assert None not in written, moved("pytest", "has _pytest._io.saferepr.saferepr", "summary_side")
    first = quiet_run[test]["message"].splitlines()[0]
    assert first == f"assert {written[0]} == {written[1]}", moved(
        "pytest", f"writes a failed == as {first!r}", "SUMMARY_CHARS"
    )


def test_nested_explanations_are_left_out_and_the_first_one_kept(quiet_run):
    record = quiet_run["test_nested_where"]
    lines = record["message"].splitlines()
    assert len(lines) == 3 and "where" in lines[2], moved(
        "pytest", f"explains a nested call in 3 lines, but {lines}", "NESTED_DETAIL"
    )
    assert record["kept"] == lines[:2], moved(
        "pytest", f"indents its deeper '+ where' lines as {lines[2]!r}", "NESTED_DETAIL"
    )


@pytest.mark.parametrize("run", ["quiet_run", "verbose_run"])
def test_the_advice_to_rerun_with_v_is_left_out(request, run):
    record = request.getfixturevalue(run)["test_long_lists"]
    advice = [line for line in record["kept"] if "-v" in line]
    assert not advice, moved("pytest", f"advises as ADVICE reads it: {advice}", "ADVICE")


def test_the_full_diff_is_left_out(verbose_run):
    record = verbose_run["test_long_lists"]
    lines = record["message"].splitlines()
    starts = [k for k, line in enumerate(lines) if "full diff" in line.lower()]
    assert starts, moved("pytest", f"shows a 'Full diff' at -v: {lines}", "FULL_DIFF")
    before = lines[: starts[0]]
    kept_of_the_diff = [line for line in record["kept"] if line.strip() and line not in before]
    assert not kept_of_the_diff, moved(
        "pytest", f"starts its full diff as FULL_DIFF reads it: {lines[starts[0]]!r}", "FULL_DIFF"
    )


@pytest.mark.parametrize(
    "test, names",
    [
        ("test_nothing_raised", "ValueError"),
        ("test_nothing_of_two_raised", "ValueError, TypeError"),
    ],
)
def test_did_not_raise_names_the_exceptions_pytest_waited_for(quiet_run, test, names):
    record = quiet_run[test]
    assert record["did_not_raise"] == names, moved(
        "pytest", f"says a raises block saw nothing as {record['message']!r}", "DID_NOT_RAISE"
    )


def test_the_exception_a_raises_block_rejected_is_found_in_its_frame(quiet_run):
    record = quiet_run["test_message_rejected"]
    assert record["rejected"] == repr(ValueError("wrong size")), moved(
        "pytest",
        f"keeps what a raises block caught in {upstream.RAISES_MODULE}'s frame, as "
        f"{upstream.RAISES_CAUGHT!r}",
        "RAISES_MODULE and RAISES_CAUGHT",
    )


def test_a_parametrized_case_gives_its_values_and_id(quiet_run):
    record = quiet_run["test_case"]
    case_id = record["name"].partition("[")[2].removesuffix("]")
    assert record["case"] == [{"shape": "(2, 3)", "dim": "1"}, case_id], moved(
        "pytest", f"gives a case's values as item.callspec: {record['case']}", "parametrized_case"
    )


def test_a_skip_gives_its_reason(quiet_run):
    reason = quiet_run["test_skipped"]["skip_reason"]
    assert reason is not None and "no GPU here" in reason, moved(
        "pytest", f"reports a skip as a (path, line, reason) tuple: {reason!r}", "skip_reason"
    )


def test_a_test_file_that_cannot_be_collected_ends_its_report_with_the_error(quiet_run):
    found = [record for test, record in quiet_run.items() if "broken" in test]
    line = found[0]["collect_error"] if found else None
    assert line and "ModuleNotFoundError" in line and "a_module_nobody_installed" in line, moved(
        "pytest", f"ends a collection error's report with the error, but with {line!r}",
        "collect_error_line",
    )  # fmt: skip


def test_the_hypothesis_plugin_is_named_with_p_where_plugins_do_not_load(tmp_path):
    """The warm worker turns pytest's plugin autoload off and names hypothesis's plugin."""
    (tmp_path / "test_seeded.py").write_text("def test_one():\n    pass\n", encoding="utf-8")
    environment = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    command += ["-p", upstream.HYPOTHESIS_PLUGIN, "--hypothesis-seed=0", str(tmp_path)]
    done = subprocess.run(
        command, cwd=tmp_path, env=environment, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, (
        moved(
            "hypothesis",
            f"has its pytest plugin at {upstream.HYPOTHESIS_PLUGIN}",
            "HYPOTHESIS_PLUGIN",
        )
        + f"\n{done.stdout[-2000:]}{done.stderr[-2000:]}"
    )


# ---------------------------------------------------------------------------------------------
# hypothesis: a real failing property test
# ---------------------------------------------------------------------------------------------


def failing_property(drawn: list[tuple[int, int]]) -> Callable[[], None]:
    """A property test that fails once its labelled draw reaches 3; every draw goes to `drawn`."""

    @settings(database=None, derandomize=True, print_blob=True, max_examples=200,
              phases=[Phase.generate, Phase.shrink])  # fmt: skip
    @given(st.data())
    def test(data: st.DataObject) -> None:
        dim = data.draw(st.integers(0, 10), label="dim")
        other = data.draw(st.integers(0, 10))
        drawn.append((dim, other))
        assert dim < 3

    return test


def failure_of(test: Callable[[], None]) -> BaseException:
    """The exception a property test ends with."""
    try:
        test()
    except AssertionError as error:
        return error
    version = importlib.metadata.version("hypothesis")
    raise AssertionError(f"hypothesis {version} found no dim >= 3 in 200 examples")


def test_the_notes_give_the_example_and_the_draws_by_label():
    error = failure_of(failing_property([]))
    notes = [note for note in getattr(error, "__notes__", []) if isinstance(note, str)]
    described = upstream.example_notes(notes)
    assert described, moved("hypothesis", f"notes a failing example as {notes}", "EXAMPLE_NOTES")
    assert described[1:2] == ["dim: 3"], moved(
        "hypothesis", f"notes a labelled draw as LABELLED_DRAW reads it: {notes}", "LABELLED_DRAW"
    )
    assert len(described) == 3 and described[2].startswith("drawn: "), moved(
        "hypothesis", f"notes a draw without a label as {notes}", "UNLABELLED_DRAW"
    )


def test_the_blob_replays_the_failing_example_alone():
    import hypothesis

    drawn: list[tuple[int, int]] = []
    test = failing_property(drawn)
    error = failure_of(test)
    failing = drawn[-1]
    found = upstream.reproduction(error)
    assert found is not None and found[0] == hypothesis.__version__, moved(
        "hypothesis", f"notes @reproduce_failure as REPRODUCE reads it: {error.__notes__}",
        "REPRODUCE",
    )  # fmt: skip
    assert upstream.can_replay(test), moved(
        "hypothesis", f"gives a test {upstream.REPLAY_ATTRIBUTE}", "REPLAY_ATTRIBUTE"
    )
    drawn.clear()
    with upstream.replaying_example(test, found), pytest.raises(AssertionError):
        test()
    assert drawn and set(drawn) == {failing}, moved(
        "hypothesis",
        f"replays the example of {upstream.REPLAY_ATTRIBUTE} alone",
        "REPLAY_ATTRIBUTE",
    )
    drawn.clear()
    failure_of(test)
    assert len(set(drawn)) > 1, moved(
        "hypothesis",
        f"searches again once {upstream.REPLAY_ATTRIBUTE} is None",
        "replaying_example",
    )


def test_bound_shrinking_cuts_the_shrinking_short(monkeypatch):
    from hypothesis.internal.conjecture import engine

    assert hasattr(engine, "MAX_SHRINKING_SECONDS"), moved(
        "hypothesis", "has engine.MAX_SHRINKING_SECONDS", "bound_shrinking"
    )
    monkeypatch.setattr(engine, "MAX_SHRINKING_SECONDS", engine.MAX_SHRINKING_SECONDS)

    def example_found() -> list[int]:
        found: list[list[int]] = []

        @settings(database=None, derandomize=True, max_examples=200,
                  phases=[Phase.generate, Phase.shrink])  # fmt: skip
        @given(st.lists(st.integers(), min_size=1))
        def test(values: list[int]) -> None:
            found.append(values)
            assert sum(values) < 1000

        with pytest.raises(AssertionError):
            test()
        return found[-1]

    upstream.bound_shrinking(60.0)
    shrunk = example_found()
    upstream.bound_shrinking(0.0)
    cut_short = example_found()
    version = importlib.metadata.version("hypothesis")
    assert shrunk == [1000], f"hypothesis {version} shrinks sum >= 1000 to {shrunk}, not [1000]"
    assert cut_short != shrunk, moved(
        "hypothesis", "stops shrinking after engine.MAX_SHRINKING_SECONDS", "bound_shrinking"
    )


# ---------------------------------------------------------------------------------------------
# NumPy, setuptools, CPython
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "assertion",
    [np.testing.assert_array_equal, np.testing.assert_allclose],
    ids=lambda f: f.__name__,
)
def test_compared_arrays_are_found_in_numpys_frame(assertion):
    actual, desired = np.array([[1.0, np.nan], [2.0, 3.0]]), np.array([[1.0, np.nan], [2.0, 4.0]])
    with pytest.raises(AssertionError) as caught:
        assertion(actual, desired)
    found = upstream.compared_arrays(caught.value)
    assert found is not None, moved(
        "numpy", f"compares arrays in {upstream.NUMPY_COMPARISON}", "NUMPY_COMPARISON"
    )
    same = [np.array_equal(got, due, equal_nan=True) for got, due in zip(found, (actual, desired))]
    assert same == [True, True], moved(
        "numpy",
        f"holds the arrays it compares, as given, in the locals {upstream.NUMPY_COMPARED} "
        f"(found {found})",
        "NUMPY_COMPARED",
    )


# In a new process: which finder on sys.meta_path finds tenxor (the first one that does), what
# built the installed tenxor, and whether that finder is still there after the lines a test
# process starts with.
FINDER_OF_TENXOR = """\
import importlib.machinery
import importlib.metadata
import json
import sys


def finder_of_tenxor():
    for finder in sys.meta_path:
        try:
            if finder.find_spec("tenxor", None) is not None:
                return finder
        except Exception:
            continue
    return None


finder = finder_of_tenxor()
wheels = [d.read_text("WHEEL") or "" for d in importlib.metadata.distributions(name="tenxor")]
built_by = [line for text in wheels for line in text.splitlines() if line.startswith("Generator")]
editable = finder is not None and finder is not importlib.machinery.PathFinder
exec(sys.argv[1])
print(json.dumps({
    "editable": editable,
    "module": getattr(finder, "__module__", ""),
    "built_by": built_by[0].split(":", 1)[1].strip() if built_by else "an unknown build backend",
    "forgotten": finder not in sys.meta_path,
}))
"""


def test_a_test_process_forgets_the_finder_of_an_editable_install(tmp_path):
    environment = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(
        [sys.executable, "-c", FINDER_OF_TENXOR, FORGET_EDITABLE_INSTALLS],
        cwd=tmp_path, env=environment, capture_output=True, text=True, check=True,
    )  # fmt: skip
    found = json.loads(done.stdout)
    if not found["editable"]:
        pytest.skip("tenxor is not installed here in editable mode with an import finder")
    assert found["forgotten"], (
        f"{found['built_by']} no longer names the module of an editable install's finder with "
        f"{upstream.EDITABLE_FINDER_MARK!r} (it is {found['module']}): "
        "tenxor/course/engine/upstream.py's EDITABLE_FINDER_MARK must follow it"
    )


def instructions_leaving(function: Callable[[], Any]) -> list[tuple[bool, bool]]:
    """For each time a frame of `function` is left while it runs: whether `yields` and whether
    `returns_normally` say so."""
    codes = [function.__code__]
    codes += [c for c in function.__code__.co_consts if hasattr(c, "co_code")]  # inner functions
    seen: list[tuple[bool, bool]] = []

    def watch(frame: Any, event: str, value: Any) -> None:
        if event == "return" and frame.f_code in codes:
            seen.append((upstream.yields(frame), upstream.returns_normally(frame)))

    sys.setprofile(watch)
    try:
        function()
    except ValueError:
        pass
    finally:
        sys.setprofile(None)
    return seen


def returns_a_constant() -> int:
    return 1


def returns_a_value() -> int:
    value = len("ab")
    return value + 1


def raises() -> None:
    raise ValueError("no")


def two_items() -> list[int]:
    def items():
        yield 1
        yield 2

    return list(items())


@pytest.mark.parametrize(
    "function, leaving",
    [
        (returns_a_constant, [(False, True)]),
        (returns_a_value, [(False, True)]),
        (raises, [(False, False)]),
        (two_items, [(True, False), (True, False), (False, True), (False, True)]),
    ],
    ids=["returns_a_constant", "returns_a_value", "raises", "two_items"],
)
def test_a_frame_that_is_left_says_whether_it_yields_or_returns(function, leaving):
    seen = instructions_leaving(function)
    assert seen == leaving, moved(
        "Python", f"leaves {function.__name__} by the instructions YIELDING and RETURNING name "
        f"(it gives {seen})", "YIELDING and RETURNING",
    )  # fmt: skip


def test_operator_functions_come_from_the_module_named():
    assert operator.mul.__module__ == upstream.OPERATOR_MODULE, moved(
        "Python", f"has operator.mul come from {operator.mul.__module__}", "OPERATOR_MODULE"
    )
    assert function_name(operator.mul) == "operator.mul"


def test_a_property_tests_body_runs_outside_the_engine_with_its_drawn_arguments():
    from hypothesis import assume, given, note
    from hypothesis import strategies as st

    @given(size=st.integers(0, 3), data=st.data())
    def sized(size, data):
        note(f"size {size}")
        assume(size > 0)

    assert upstream.given_arguments(sized) == {"size", "data"}, moved(
        "hypothesis", "keeps the drawn arguments' names in _given_kwargs", "given_arguments"
    )
    context = upstream.outside_the_engine()
    assert context is not None, moved(
        "hypothesis", "offers BuildContext and ConjectureData.for_choices", "outside_the_engine"
    )
    body = sized.hypothesis.inner_test
    with context(body):
        body(size=2, data=None)  # note() needs the context; assume(True) passes
    with pytest.raises(BaseException) as rejected, context(body):
        body(size=0, data=None)
    assert upstream.is_hypothesis_stop(rejected.value), moved(
        "hypothesis",
        f"raises its own exception for assume(False): {rejected.value!r}",
        "is_hypothesis_stop",
    )


def test_a_test_functions_fixtures_are_named(this_item):
    assert upstream.fixture_names(this_item) == ["this_item"], moved(
        "pytest", "lists a test function's fixtures in _fixtureinfo.argnames", "fixture_names"
    )


@pytest.fixture
def this_item(request):
    return request.node
