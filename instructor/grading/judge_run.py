"""Running the judge (instructor.grading.judge) on submissions, and reading what it
reported; and the recorders, judges without submissions that draw a batch's examples once
for all its judges.

The judge is a pytest run in the judge's tree, under a user of its own where grading has one,
against the submissions' packages in sandbox workers. Grading reads nothing a worker sends:
only the judge's report log and the files the judge wrote, as data.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from instructor.entry_points import JUDGE, call_script
from tenxor.course.catalog import BY_ID, TOOLING_TESTS
from tenxor.course.engine import (
    BOOTSTRAP,
    ISOLATE,
    Limits,
    Result,
    Run,
    exit_in_words,
    record_not_run,
    run_tests,
    start,
    tail,
)
from tenxor.course.engine.upstream import HYPOTHESIS_PLUGIN
from tenxor.course.failure import Failure

from .intake import Assembly
from .preloaded import Started, Starts
from .setup import GradingSetup

# The judge runs only the course's own code; these bound it in case of a fault of its own.
JUDGE_LIMITS = Limits(test_seconds=600.0, run_seconds=0.0, memory_mb=4096, output_mb=8.0)
JUDGE_SETTINGS = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
FIELD_CHARS = 4000  # each text field of a judge's failure record is cut to this
POLL_SECONDS = 1.0  # how often grading looks for submissions a judge is done with
CHECK_IMPORTS = ISOLATE + call_script(JUDGE, "check_imports")


class Judges:
    """The judge processes running now, so that an interrupted batch can end them: each is
    sent SIGTERM with its process group, and its launchers, which end with it, stop their
    workers and close their groups. Once stopping, no judge starts."""

    lock = threading.Lock()
    running: set[subprocess.Popen | Started] = set()
    stopping = False

    @classmethod
    def start(cls, starts: Starts, *arguments: Any) -> subprocess.Popen | Started:
        """starts(*arguments), registered; JudgesStopped once stopping."""
        with cls.lock:
            if cls.stopping:
                raise JudgesStopped("grading was interrupted")
            process = starts(*arguments)
            cls.running.add(process)
            return process

    @classmethod
    def finished(cls, process: subprocess.Popen | Started) -> None:
        with cls.lock:
            cls.running.discard(process)

    @classmethod
    def stop_all(cls) -> None:
        with cls.lock:
            cls.stopping = True
            for process in cls.running:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGTERM)

    @classmethod
    def allow(cls) -> None:
        """A new batch: judges may start again."""
        with cls.lock:
            cls.stopping = False


class JudgesStopped(Exception):
    """Grading was interrupted: no judge starts any more."""


def judged(
    command: list[str],
    tree: Path,
    output_path: Path,
    profile: str,
    settings: dict[str, str],
    starts: Starts,
    meanwhile: Callable[[], None] = lambda: None,
) -> int:
    """Run a judge process, started by `starts` (GradingSetup.starts), to its end, its output
    into `output_path`, calling `meanwhile` every POLL_SECONDS while it runs; its exit code."""
    with output_path.open("wb") as output:
        process = Judges.start(starts, command, tree, output, JUDGE_LIMITS, profile, settings)
        try:
            while True:
                try:
                    return process.wait(timeout=POLL_SECONDS)
                except subprocess.TimeoutExpired:
                    meanwhile()
        finally:
            Judges.finished(process)


def grading_options(selection: list[str]) -> list[str]:
    """pytest options for the exercise tests of the selected exercises."""
    chosen = [option for exercise_id in selection for option in ("--exercise", exercise_id)]
    return ["-m", "not provided", *chosen]


# Where hypothesis keeps what it records: a folder in the directory it runs in (the judges
# run in their tree).
HYPOTHESIS_FOLDER = ".hypothesis"


def readable_as_the_tree(folder: Path) -> None:
    """Let whoever may read the tree read `folder` in it (hypothesis writes files that only
    their writer may read): the tree's own folder keeps the workers out."""
    for path in [folder, *folder.rglob("*")] if folder.is_dir() else []:
        path.chmod(0o755 if path.is_dir() else 0o644)


def reference_tests(tree: Path, selection: list[str], starts: Starts = start) -> dict[str, str]:
    """The tests (and their exercises) collected from a tree of the instructor's tests (the
    course, or the judges' copy of it): what is graded. Collecting writes pytest's rewritten
    test modules into the tree, and hypothesis's record of the constants in the tree's
    modules, which the judges then read instead of working both out again in each judge
    (they may not write their tree)."""
    options = ["--collect-only", f"--ignore={tree / TOOLING_TESTS}"]
    options += ["-p", HYPOTHESIS_PLUGIN, *grading_options(selection)]
    settings = {**JUDGE_SETTINGS, "PYTHONDONTWRITEBYTECODE": ""}
    run = run_tests(tree, options, settings=settings, starts=starts)
    readable_as_the_tree(tree / HYPOTHESIS_FOLDER)
    if run.problem or run.collect_errors or not run.collected:
        problems = "; ".join(f"{p}: {m}" for p, m in run.collect_errors.items()) or run.problem
        raise RuntimeError(f"the instructor's tests cannot be collected: {problems}")
    return run.collected


def import_problems(setup: GradingSetup, packages: list[Path], slot: int) -> list[str | None]:
    """Why each package does not import in a sandbox worker (None where it does). The
    workers are tried by a process of the judge's user (instructor.grading.judge.check_imports):
    grading itself reads nothing a worker sends, only what that process wrote, as data."""
    with setup.judge_folder(slot) as folder:
        configs = [setup.config(package, slot).to_json() for package in packages]
        (folder / "configs.json").write_text(json.dumps(configs), encoding="utf-8")
        command = [sys.executable, "-c", CHECK_IMPORTS, str(setup.judge_tree), str(folder)]
        output = folder / "output.txt"
        judged(command, setup.judge_tree, output, "ci", JUDGE_SETTINGS, setup.starts)
        try:
            problems = json.loads((folder / "problems.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            problems = None
    if type(problems) is not list or len(problems) != len(packages):
        return ["the import check ended without an answer"] * len(packages)
    return [p[:1000] if type(p) is str else None if p is None else "?" for p in problems]


def set_aside_broken(setup: GradingSetup, assembly: Assembly, slot: int) -> None:
    """The submission does not import: find which of its modules do not, each on its own
    among stubs, and put their stubs in their place."""
    assembly.set_aside(import_problems(setup, assembly.each_alone(), slot))


def judge_options(
    setup: GradingSetup, expected: dict[str, str], log: Path, processes: int = 1
) -> list:
    """The judge's pytest options: its plugin, pytest-reportlog's log of every report,
    pytest-timeout's limit per test, pytest-xdist's `processes` (when the tests of one
    submission are spread over several), and the tests of `expected` to run. Only these
    plugins load (JUDGE_SETTINGS turns pytest's automatic loading off)."""
    selection = sorted(set(expected.values()), key=list(BY_ID).index)
    files = sorted({test.split("::")[0] for test in expected})
    plugins = [JUDGE, HYPOTHESIS_PLUGIN, "pytest_timeout"]
    plugins += ["pytest_reportlog.plugin", "no:cacheprovider"]
    options = [option for plugin in plugins for option in ("-p", plugin)]
    options += ["-W", "ignore::pytest.PytestAssertRewriteWarning", "-q", "--tb=no"]
    options += [f"--report-log={log}", f"--timeout={JUDGE_LIMITS.test_seconds:g}"]
    if processes > 1:
        options += ["-p", "xdist.plugin", "-n", str(processes), "--dist", "load"]
        options.append("--max-worker-restart=0")  # a new worker would take a used slot
    return [*options, *files, *grading_options(selection)]


def failure_of(report: dict[str, Any]) -> Failure:
    """What a failed report of the log says: the judge's record, else pytest's last lines
    (strings only, each bounded: the log is the judge's, read as data)."""
    words = report.get("failure")
    if isinstance(words, dict):
        said = {k: v[:FIELD_CHARS] if isinstance(v, str) else v for k, v in words.items()}
        said = {k: v for k, v in said.items() if isinstance(v, (str, bool, int))}
        record = Failure.from_dict(said)
        return dataclasses.replace(
            record, unfinished=record.unfinished if record.unfinished in BY_ID else None
        )
    longrepr = report.get("longrepr")
    text = longrepr if isinstance(longrepr, str) else json.dumps(longrepr)[-600:]
    return Failure("\n".join(str(text).strip().splitlines()[-6:])[:600])


def read_report_log(log: Path, expected: dict[str, str], judge: int, submission: int = 0) -> Run:
    """The results of the `submission`-th submission in a pytest-reportlog file (see
    results_of)."""
    return results_of(report_lines(log), expected, judge, submission)


def results_of(
    reports: Iterable[dict[str, Any]], expected: dict[str, str], judge: int, submission: int
) -> Run:
    """The results of the `submission`-th submission in a judge's `reports`: a test passes
    when none of its setup, call and teardown failed and its call passed. Only reports of
    the `expected` tests made by the judge's user for that submission count. The run's notes
    say which exercises' functions each test called in the worker ("crossed")."""
    run = Run(collected=dict(expected))
    for report in reports:
        kind, test = report.get("$report_type"), report.get("nodeid", "")
        if kind == "TestReport" and report.get("judge_user") != judge:
            continue
        if kind == "TestReport" and report.get("submission", 0) != submission:
            continue
        if kind == "TestReport" and type(report.get("duration")) is float:
            run.seconds += report["duration"]
        if kind == "TestReport" and test in expected and report.get("crossed"):
            run.notes.append({"event": "crossed", "test": test, "exercises": report["crossed"]})
        if kind == "CollectReport" and report.get("outcome") == "failed":
            run.collect_errors[test] = failure_of(report).message
        if kind != "TestReport" or test not in expected:
            continue
        owner, outcome, known = expected[test], report.get("outcome"), run.results.get(test)
        if known is not None and not known.passed:
            continue  # the first failure stands
        if outcome == "failed":
            run.results[test] = Result.of_record(test, owner, "failed", failure_of(report))
        elif outcome == "skipped":
            reason = report.get("longrepr")
            message = reason[-1] if isinstance(reason, list) and reason else "skipped"
            run.results[test] = Result(test, owner, "skipped", str(message))
        elif report.get("when") == "call":
            run.results[test] = Result(test, owner, "passed")
    return run


def report_lines(log: Path) -> Iterator[dict[str, Any]]:
    """The JSON objects of a report log, one a line; any other line is passed over."""
    return json_objects(log.read_text(encoding="utf-8").splitlines() if log.exists() else [])


def json_objects(lines: Iterable[str]) -> Iterator[dict[str, Any]]:
    """The lines that are JSON objects, as such; any other line is passed over."""
    for line in lines:
        try:
            report = json.loads(line)
        except ValueError:
            continue
        if isinstance(report, dict):
            yield report


class ReportLog:
    """A judge's report log read as it grows, each line once: its test reports sorted by
    the submission they name, every other report kept for all (a collection error is every
    submission's)."""

    def __init__(self, path: Path) -> None:
        self.path, self.offset = path, 0
        self.shared: list[dict[str, Any]] = []
        self.tests: dict[int | None, list[dict[str, Any]]] = {}

    def read(self, to_the_end: bool = False) -> None:
        """Read the lines written since the last read: whole lines only, unless the judge
        has ended (`to_the_end`)."""
        if not self.path.exists():
            return
        with self.path.open("rb") as stream:
            stream.seek(self.offset)
            data = stream.read()
        if not to_the_end:
            data = data[: data.rfind(b"\n") + 1]
        self.offset += len(data)
        for report in json_objects(data.decode("utf-8").splitlines()):
            number = report.get("submission", 0)
            if report.get("$report_type") == "TestReport" and type(number) in (int, type(None)):
                self.tests.setdefault(number, []).append(report)
            else:
                self.shared.append(report)

    def reports_of(self, submission: int) -> list[dict[str, Any]]:
        """The reports read so far that may be the `submission`-th submission's."""
        return [*self.shared, *self.tests.get(submission, [])]


def run_judge(
    setup: GradingSetup, package: Path, slot: int, expected: dict[str, str]
) -> tuple[Run, bool]:
    """Run the tests of `expected` in the judge, against the submission in `package`; the
    run, and whether the package imported (the judge's first worker tells)."""
    return run_judges(setup, [package], slot, expected)[0]


Graded = Callable[[int, Run, bool], None]  # told (index, run, imported) as each is graded


def run_judges(
    setup: GradingSetup,
    packages: list[Path],
    slot: int,
    expected: dict[str, str],
    graded: Graded = lambda index, run, imported: None,
) -> list[tuple[Run, bool]]:
    """Run the tests of `expected` in one judge, against each submission of `packages` in
    turn; for each, its run and whether its package imported (its first worker tells),
    each also handed to `graded` as soon as the judge is done with it."""
    started = time.monotonic()
    configs = [setup.config(package, slot) for package in packages]
    judge = os.geteuid() if configs[0].judge is None else configs[0].judge
    done: dict[int, tuple[Run, bool]] = {}
    with setup.judge_folder(slot) as folder:
        log, output_path = folder / "reports.jsonl", folder / "output.txt"
        command = [sys.executable, "-c", BOOTSTRAP, str(setup.judge_tree)]
        processes = setup.judges_for(len(expected)) if len(packages) == 1 else 1
        command += judge_options(setup, expected, log, processes)
        not_imported = [folder / f"does-not-import-{index}.txt" for index in range(len(packages))]
        ended = [folder / f"graded-{index}" for index in range(len(packages))]

        reports = ReportLog(log)

        def hand_on(index: int, returncode: int | None = None) -> None:
            reports.read(to_the_end=returncode is not None)
            run = results_of(reports.reports_of(index), expected, judge, index)
            if returncode not in (None, 0, 1):  # 1: some tests failed, as expected of most
                run.problem = f"the judge ended ({exit_in_words(returncode)})"
            record_not_run(run, "the judge did not run it")
            if len(packages) == 1:  # never one student's words in another's
                run.output, run.seconds = tail(output_path), time.monotonic() - started
            done[index] = (run, not not_imported[index].exists())
            graded(index, *done[index])

        def hand_on_ended() -> None:
            for index, path in enumerate(ended):
                if index not in done and path.exists():
                    hand_on(index)

        settings = {**JUDGE_SETTINGS, "TENXOR_SANDBOX": json.dumps([c.to_json() for c in configs])}
        settings["TENXOR_IMPORT_PROBLEM"] = json.dumps([str(path) for path in not_imported])
        settings["TENXOR_GRADED"] = json.dumps([str(path) for path in ended])
        recorded = [] if processes > 1 else [str(path) for path in setup.examples]
        settings.update(TENXOR_RECORDED=json.dumps(recorded), TENXOR_RECORD="")  # none inherited
        returncode = judged(
            command, setup.judge_tree, output_path, setup.profile, settings, setup.starts,
            hand_on_ended,
        )  # fmt: skip
        hand_on_ended()
        for index in range(len(packages)):
            if index not in done:
                hand_on(index, returncode)
    return [done[index] for index in range(len(packages))]


def record_examples(setup: GradingSetup, expected: dict[str, str]) -> list[Path]:
    """Draw the examples of the property tests of `expected` once for the batch, with the
    reference solutions: a recorder (a judge without submissions) on each of the set-up's
    slots draws a share of them, all at once. Their files, put where the judges (and no
    worker) may read them, are the judges' examples (setup.examples); none if a recorder
    failed, and each judge then draws the examples for itself."""
    slots = [setup.slots.get() for _ in range(setup.slots.qsize())]
    try:
        with ThreadPoolExecutor(max_workers=len(slots)) as pool:
            futures = [
                pool.submit(record_share, setup, expected, slot, share, len(slots))
                for share, slot in enumerate(slots)
            ]
            try:
                files = [future.result() for future in futures]
            except BaseException:  # interrupted: end the recorders at work
                Judges.stop_all()
                raise
    finally:
        for slot in slots:
            setup.slots.put(slot)
    setup.examples = [] if None in files else files
    return setup.examples


def record_share(
    setup: GradingSetup, expected: dict[str, str], slot: int, share: int, shares: int
) -> Path | None:
    """Run the recorder of one share of the examples in `slot`; the file it wrote, moved
    to the set-up's scratch folder (None if it wrote none)."""
    with setup.judge_folder(slot) as folder:
        written = folder / "examples.pickle"
        command = [sys.executable, "-c", BOOTSTRAP, str(setup.judge_tree)]
        command += judge_options(setup, expected, folder / "reports.jsonl")
        settings = {
            **JUDGE_SETTINGS,
            "TENXOR_SANDBOX": json.dumps([setup.config(Path(), slot).to_json()]),
        }
        settings["TENXOR_RECORD"] = json.dumps(
            {"file": str(written), "share": share, "shares": shares}
        )
        output = folder / "output.txt"
        judged(command, setup.judge_tree, output, setup.profile, settings, setup.starts)
        if not written.is_file():
            return None
        examples = setup.scratch / f"examples-{share}.pickle"
        examples.write_bytes(written.read_bytes())
        return examples
