"""How long grading one complete, correct submission of the whole course takes.

    python -m benchmarks.grading_time [--repeats 3] [--mode MODE] [--calls N] [--no-readme]

Each run grades a submission holding the reference version of every exercise module, with
the course's public and hidden tests, as `tenxor-instructor grade` does, into a fresh output
folder, in the strongest sandbox the machine allows. Then it grades the same submission once
in each sandbox mode this machine can use, and times one call of a submitted function from
the judge to the worker and back. It prints the results and writes them into
benchmarks/README.md between the grading-time markers. Grading needs the instructor's tree:
the release leaves this out.
"""

from __future__ import annotations

import datetime
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from instructor.authoring.release import write_tree
from instructor.grading import (
    EXERCISE_MODULES,
    JUDGE_TREE_EXCLUDED,
    GradingOptions,
    grade_batch,
    namespaces_allowed,
)
from instructor.grading.judge import pin
from instructor.sandbox.judge_side import Sandbox
from instructor.sandbox.launcher import SandboxConfig
from instructor.sandbox.protections import SandboxMode
from tenxor.course.catalog import BY_ID, CATALOG

from .report import ROOT, command_line, duration, machine, published

START = "<!-- grading time: written by python -m benchmarks.grading_time -->"
END = "<!-- end of grading time -->"
TARGET = 20.0  # seconds for one complete submission


def complete_submission(folder: Path) -> Path:
    """A submission folder holding the reference version of every exercise module."""
    for module in EXERCISE_MODULES:
        (folder / module).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / module, folder / module)
    return folder


def grading_seconds(
    folder: Path, selection: list[str], sandbox: SandboxMode | None = None
) -> tuple[float, float]:
    """Grade one complete submission into a fresh output folder, in the `sandbox` mode (None:
    the strongest this machine allows); the seconds it took and the score it got."""
    submission = complete_submission(folder / "submission")
    output = folder / "grades"
    started = time.perf_counter()
    grade_batch(
        ROOT,
        {"submission": submission},
        output,
        GradingOptions(selection=selection, single=True, sandbox=sandbox),
    )
    seconds = time.perf_counter() - started
    return seconds, json.loads((output / "results.json").read_text(encoding="utf-8"))["score"]


def usable_modes() -> list[SandboxMode]:
    """The sandbox modes this machine can grade in, strongest first."""
    if os.geteuid() != 0:
        return [SandboxMode.SAME_USER]
    allowed = namespaces_allowed()
    return [mode for mode in SandboxMode if allowed or not mode.namespaces]


def call_microseconds(calls: int = 20_000) -> float:
    """Microseconds for one call of a submitted function (exercise 1.2, an int in and out)
    from the judge to the worker and back, both on one CPU as in grading."""
    with tempfile.TemporaryDirectory(prefix="tenxor-call-time-") as folder:
        tree = Path(folder) / "judge"
        write_tree(ROOT, tree, JUDGE_TREE_EXCLUDED)
        shutil.copytree(tree / "tenxor", Path(folder) / "package" / "tenxor")
        complete_submission(Path(folder) / "package")
        package = str(Path(folder) / "package")
        config = SandboxConfig(package, str(tree), SandboxMode.SAME_USER, slot=0)
        pin(0)
        sandbox = Sandbox(config, kinds=None)
        rounding = BY_ID["1.2"]  # bfloat16 rounding: one integer in, one out
        try:
            started = time.perf_counter()
            for bits in range(calls):
                sandbox.call(rounding.id, (rounding.module, rounding.function), (bits,), {}, [])
            return (time.perf_counter() - started) / calls * 1e6
        finally:
            sandbox.stop()


def table(
    runs: list[float],
    score: float,
    selection: list[str],
    by_mode: dict[SandboxMode, float],
    call: float,
) -> str:
    """The measurements as Markdown, with the machine, the date and the target."""
    median = statistics.median(runs)
    scope = "the whole course" if len(selection) == len(CATALOG) else ", ".join(selection)
    reached = "reached" if median <= TARGET else "not reached"
    return "\n".join([
        f"Measured on {datetime.date.today()}: {machine()}; load average "
        f"{os.getloadavg()[0]:.2f}.",
        "",
        "| submission | runs | median | each run | score |",
        "| --- | ---: | ---: | --- | ---: |",
        f"| complete and correct, {scope} | {len(runs)} | {duration(median)} | "
        f"{', '.join(duration(r) for r in runs)} | {score:g} |",
        "",
        f"Target: one complete submission graded in at most {TARGET:g} s: {reached}.",
        "",
        "| sandbox mode | one grading |",
        "| --- | ---: |",
        *[f"| {mode} | {duration(seconds)} |" for mode, seconds in by_mode.items()],
        "",
        f"One call of a submitted function, judge to worker and back: {call:.0f} µs.",
    ])  # fmt: skip


def main(argv: list[str]) -> int:
    parser = command_line("benchmarks.grading_time", __doc__)
    parser.add_argument("--repeats", type=int, default=3, help="gradings of the submission")
    parser.add_argument("--exercise", action="append", help="grade only these (default: all)")
    parser.add_argument(
        "--mode",
        action="append",
        type=SandboxMode,
        choices=list(SandboxMode),
        help="time only these sandbox modes (default: every usable)",
    )
    parser.add_argument("--calls", type=int, default=20_000, help="calls timed one by one")
    options = parser.parse_args(argv)
    selection = options.exercise or [item.id for item in CATALOG]
    runs, score = [], 0.0
    for number in range(options.repeats):
        with tempfile.TemporaryDirectory(prefix="tenxor-grading-time-") as folder:
            seconds, score = grading_seconds(Path(folder), selection)
        runs.append(seconds)
        print(f"run {number + 1}: {duration(seconds)}, score {score:g}", flush=True)
    by_mode = {}
    for mode in options.mode or usable_modes():
        with tempfile.TemporaryDirectory(prefix="tenxor-grading-time-") as folder:
            by_mode[mode] = grading_seconds(Path(folder), selection, mode)[0]
        print(f"{mode}: {duration(by_mode[mode])}", flush=True)
    text = table(runs, score, selection, by_mode, call_microseconds(options.calls))
    return published(text, START, END, not options.no_readme)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
