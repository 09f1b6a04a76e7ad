"""What grading costs in CPU time: a complete submission graded alone, each of a class of
complete submissions, the class again after one hidden test changed, and a class of
realistic ones.

    python -m benchmarks.grading_cost [--class-size 30] [--jobs 2] [--no-readme]

Every submission is graded with the course's public and hidden tests at the default hundred
examples, as `tenxor-instructor grade --batch` does, into a fresh output folder (the class
again: into the class's own), in a copy of the course, in the strongest sandbox the machine
allows. CPU time is the whole machine's (the grading command, its judges, the launchers and
the workers, which run as other users, all count), read from /proc/stat before and after
each grading: run it on an otherwise idle machine. The change is to one hidden test of
exercise 1.2 (a marker added to it), so running the same command again grades that
exercise's tests again, for everyone, and nothing else. The realistic class is the red
team's submissions (complete, half done, wrong, hanging, crashing, flooding output, loose
files, missing modules, nothing at all) and two complete ones, named with spaces, accents
and apostrophes; it is graded again in three shards, one after another, dealt by the grading
times of that run (`--times-from`), to see how evenly their work was dealt. Results go into
benchmarks/README.md between the grading-cost markers. Grading needs the instructor's tree:
the release leaves this out.
"""

from __future__ import annotations

import datetime
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from instructor.grading import GradingOptions, grade_batch
from instructor.grading.batch import SHARD_RECORD
from instructor.grading.shards import Shard
from tests.tooling.submissions import FIXTURES, complete_submission, copy_of_reference

from .report import command_line, duration, machine, published

START = "<!-- grading cost: written by python -m benchmarks.grading_cost -->"
END = "<!-- end of grading cost -->"
CHANGED_TEST = "tests/hidden/test_storage_strides_hidden.py"  # holds a hidden test of 1.2
CHANGED_FUNCTION = "def test_round_to_bfloat16_for_every_sign_and_exponent("
TARGET = 10.0  # CPU-seconds for one complete submission, graded in a class
COMPLETE_NAMES = ("Zoë O'Brien", "Jean-Luc d'Arc")  # the realistic class's complete ones
SHARDS = 3  # the realistic class is graded again in this many shards, one after another
SHARD_SPREAD = 0.2  # how much longer the slowest shard may take than the fastest


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


def graded(
    course: Path,
    students: dict[str, Path],
    output: Path,
    jobs: int,
    shard: Shard | None = None,
    times_from: Path | None = None,
) -> tuple[float, float]:
    """Grade a batch of `students` (a `shard` of it, dealt by the grading times of the earlier
    output `times_from`) into `output`; (seconds, CPU-seconds)."""
    return measured(
        lambda: grade_batch(
            course, students, output, GradingOptions(jobs=jobs, shard=shard, times_from=times_from)
        )
    )


def share_size(output: Path) -> int:
    """How many students the shard graded into `output` was dealt."""
    return len(json.loads((output / SHARD_RECORD).read_text(encoding="utf-8"))["share"])


def one_hidden_test_changed(course: Path) -> None:
    """Add a marker to one hidden test of exercise 1.2: a change of that test function
    alone, which only its exercise's fingerprint holds."""
    path = course / CHANGED_TEST
    text = path.read_text(encoding="utf-8")
    if text.count(CHANGED_FUNCTION) != 1:
        raise ValueError(f"{CHANGED_TEST} holds no {CHANGED_FUNCTION.removeprefix('def ')}")
    marked = f"@pytest.mark.filterwarnings('default')\n{CHANGED_FUNCTION}"
    path.write_text(text.replace(CHANGED_FUNCTION, marked), encoding="utf-8")


def table(rows: list[tuple[str, int, float, float]], jobs: int) -> str:
    """The measurements as Markdown: per row, students, wall time, CPU time in all and each."""
    per_complete = next(cpu / count for label, count, _, cpu in rows if label.startswith("class"))
    reached = "reached" if per_complete <= TARGET else "not reached"
    shards = [wall for label, _, wall, _ in rows if label.startswith("realistic class, shard")]
    spread = (max(shards) - min(shards)) / min(shards)
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
        "",
        f"The realistic class in {len(shards)} shards, one after another: the shards took "
        f"{', '.join(duration(wall) for wall in shards)} by the clock, the slowest "
        f"{spread:.0%} longer than the fastest (target: within {SHARD_SPREAD:.0%}).",
    ])  # fmt: skip


def main(argv: list[str]) -> int:
    parser = command_line("benchmarks.grading_cost", __doc__)
    parser.add_argument("--class-size", type=int, default=30, help="complete submissions")
    parser.add_argument("--jobs", type=int, default=2, help="as `grade --jobs`")
    options = parser.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory(prefix="tenxor-grading-cost-") as folder:
        course, jobs = copy_of_reference(Path(folder) / "course"), options.jobs
        alone = complete_class(Path(folder) / "alone", 1)
        complete = complete_class(Path(folder) / "complete", options.class_size)
        realistic = realistic_class(Path(folder) / "realistic")
        gradings = [
            ("a complete submission alone", alone, Path(folder) / "alone-grades"),
            ("class of complete submissions", complete, Path(folder) / "grades"),
            ("the class again, one hidden test changed", complete, Path(folder) / "grades"),
            ("class of realistic submissions", realistic, Path(folder) / "realistic-grades"),
        ]
        for label, students, output in gradings:
            if label.startswith("the class again"):
                one_hidden_test_changed(course)
            rows.append((label, len(students), *graded(course, students, output, jobs)))
            print(f"{label}: {duration(rows[-1][2])}, {rows[-1][3]:.0f} CPU-s", flush=True)
        for shard in (Shard(k, SHARDS) for k in range(1, SHARDS + 1)):
            output = Path(folder) / f"realistic-shard-{shard.index}"
            measures = graded(course, realistic, output, jobs, shard, gradings[-1][2])
            rows.append((f"realistic class, shard {shard}", share_size(output), *measures))
            print(f"shard {shard}: {duration(measures[0])}, {measures[1]:.0f} CPU-s", flush=True)
    text = table(rows, options.jobs)
    return published(text, START, END, not options.no_readme)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
