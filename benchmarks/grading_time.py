"""How long grading one complete, correct submission of the whole course takes.

    python -m benchmarks.grading_time [--repeats 3] [--no-readme]

Each run grades a submission holding the reference version of every exercise module, with
the course's public and hidden tests, as `tenxor-instructor grade` does, into a fresh output
folder. It prints the median and every run, and writes them into benchmarks/README.md between
the grading-time markers. Grading needs the instructor's tree: the release leaves this out.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from instructor.grading import EXERCISE_MODULES, grade_batch
from tenxor.course.catalog import CATALOG

from .report import duration, machine, replace_between

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
README = HERE / "README.md"
START = "<!-- grading time: written by python -m benchmarks.grading_time -->"
END = "<!-- end of grading time -->"
TARGET = 20.0  # seconds for one complete submission


def complete_submission(folder: Path) -> Path:
    """A submission folder holding the reference version of every exercise module."""
    for module in EXERCISE_MODULES:
        (folder / module).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / module, folder / module)
    return folder


def grading_seconds(folder: Path, selection: list[str]) -> tuple[float, float]:
    """Grade one complete submission into a fresh output folder; the seconds it took and the
    score it got."""
    submission = complete_submission(folder / "submission")
    output = folder / "grades"
    started = time.perf_counter()
    grade_batch(ROOT, {"submission": submission}, output, selection, single=True)
    seconds = time.perf_counter() - started
    return seconds, json.loads((output / "results.json").read_text(encoding="utf-8"))["score"]


def table(runs: list[float], score: float, selection: list[str]) -> str:
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
    ])  # fmt: skip


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.grading_time", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--repeats", type=int, default=3, help="gradings of the submission")
    parser.add_argument("--exercise", action="append", help="grade only these (default: all)")
    parser.add_argument("--no-readme", action="store_true", help="leave the README as it is")
    options = parser.parse_args(argv)
    selection = options.exercise or [item.id for item in CATALOG]
    runs, score = [], 0.0
    for number in range(options.repeats):
        with tempfile.TemporaryDirectory(prefix="tenxor-grading-time-") as folder:
            seconds, score = grading_seconds(Path(folder), selection)
        runs.append(seconds)
        print(f"run {number + 1}: {duration(seconds)}, score {score:g}", flush=True)
    text = table(runs, score, selection)
    print(text)
    if not options.no_readme:
        replace_between(README, START, END, text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
