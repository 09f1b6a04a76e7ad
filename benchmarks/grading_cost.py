"""What grading costs in CPU time: a complete submission graded alone, each of a class of
complete submissions, and a class of realistic ones.

    python -m benchmarks.grading_cost [--class-size 30] [--jobs 2] [--no-readme]

Every submission is graded with the course's public and hidden tests at the default hundred
examples, as `tenxor-instructor grade --batch` does, into a fresh output folder, in the
strongest sandbox the machine allows. CPU time is the whole machine's (the grading command,
its judges, the launchers and the workers, which run as other users, all count), read from
/proc/stat before and after each grading: run it on an otherwise idle machine. The realistic
class is the red team's submissions (complete, half done, wrong, hanging, crashing, flooding
output, loose files, missing modules, nothing at all) and two complete ones, named with
spaces, accents and apostrophes. Results go into benchmarks/README.md between the
grading-cost markers. Grading needs the instructor's tree: the release leaves this out.
"""

from __future__ import annotations

import datetime
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from instructor.grading import grade_batch
from tests.tooling.submissions import FIXTURES, complete_submission

from .report import ROOT, command_line, duration, machine, published

START = "<!-- grading cost: written by python -m benchmarks.grading_cost -->"
END = "<!-- end of grading cost -->"
TARGET = 10.0  # CPU-seconds for one complete submission, graded in a class
COMPLETE_NAMES = ("Zoë O'Brien", "Jean-Luc d'Arc")  # the realistic class's complete ones


def machine_cpu_seconds() -> float:
    """CPU time the whole machine has spent busy since it started (all CPUs, all users)."""
    fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    user, nice, system, _idle, _iowait, irq, softirq, steal = map(int, fields[:8])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def measured(grade: Callable[[], None]) -> tuple[float, float]:
    """(seconds by the clock, CPU-seconds of the whole machine) that `grade` took."""
    cpu, started = machine_cpu_seconds(), time.perf_counter()
    grade()
    return time.perf_counter() - started, machine_cpu_seconds() - cpu


def complete_class(folder: Path, size: int) -> dict[str, Path]:
    """`size` students, each with a complete submission."""
    students = {}
    for number in range(size):
        students[f"student {number:02d}"] = submission = folder / f"student {number:02d}"
        complete_submission(submission)
    return students


def realistic_class(folder: Path) -> dict[str, Path]:
    """The red team's submissions, and complete ones named as people are."""
    students = {f"{n:02d} {fixture.name}": fixture for n, fixture in enumerate(FIXTURES)}
    built = {name: fixture.build(folder / name) for name, fixture in students.items()}
    for name in COMPLETE_NAMES:
        complete_submission(folder / name)
        built[name] = folder / name
    return built


def graded(students: dict[str, Path], jobs: int) -> tuple[float, float]:
    """Grade a batch of `students` into a fresh output folder; (seconds, CPU-seconds)."""
    with tempfile.TemporaryDirectory(prefix="tenxor-grading-cost-") as output:
        return measured(lambda: grade_batch(ROOT, students, Path(output) / "grades", jobs=jobs))


def table(rows: list[tuple[str, int, float, float]], jobs: int) -> str:
    """The measurements as Markdown: per row, students, wall time, CPU time in all and each."""
    per_complete = next(cpu / count for label, count, _, cpu in rows if label.startswith("class"))
    reached = "reached" if per_complete <= TARGET else "not reached"
    return "\n".join([
        f"Measured on {datetime.date.today()}: {machine()}; `--jobs {jobs}`.",
        "",
        "| grading | students | by the clock | CPU time | CPU time each |",
        "| --- | ---: | ---: | ---: | ---: |",
        *[f"| {label} | {count} | {duration(wall)} | {duration(cpu)} | {duration(cpu / count)} |"
          for label, count, wall, cpu in rows],
        "",
        f"Target: a complete submission graded in a class costs at most {TARGET:g} CPU-seconds: "
        f"{reached} ({per_complete:.1f}).",
    ])  # fmt: skip


def main(argv: list[str]) -> int:
    parser = command_line("benchmarks.grading_cost", __doc__)
    parser.add_argument("--class-size", type=int, default=30, help="complete submissions")
    parser.add_argument("--jobs", type=int, default=2, help="as `grade --jobs`")
    options = parser.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory(prefix="tenxor-grading-cost-") as folder:
        classes = {
            "a complete submission alone": complete_class(Path(folder) / "alone", 1),
            "class of complete submissions": complete_class(
                Path(folder) / "complete", options.class_size
            ),
            "class of realistic submissions": realistic_class(Path(folder) / "realistic"),
        }
        for label, students in classes.items():
            rows.append((label, len(students), *graded(students, options.jobs)))
            print(f"{label}: {duration(rows[-1][2])}, {rows[-1][3]:.0f} CPU-s", flush=True)
    text = table(rows, options.jobs)
    return published(text, START, END, not options.no_readme)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
