"""How long `check(id)` takes to answer, from one Python process, as in a notebook.

    python -m benchmarks.check_latency [--repeats 1] [--no-readme]

Three copies of the course are checked, every exercise of the catalog in each, after one
warm-up check that starts the worker:

- reference: the instructor's tree, where every check passes;
- release: the student release (`write_release`), where nothing is started;
- wrong: the reference with one wrong-but-plausible answer per chapter (WRONG_ANSWERS), where
  property tests fail and shrink, and exercises built on a wrong one fail too.

It prints a table (median and slowest check of each tree, and what the median check's time is
made of) and writes it into benchmarks/README.md between the check-latency markers.
"""

from __future__ import annotations

import argparse
import datetime
import importlib
import io
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from instructor.regions import find_regions
from instructor.release import LOCAL_ONLY, write_release, write_tree
from tenxor.course.catalog import BY_ID, CATALOG

from .report import machine, replace_between

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
README = HERE / "README.md"
START = "<!-- check latency: written by python -m benchmarks.check_latency -->"
END = "<!-- end of check latency -->"
# The module, not the check() function that tenxor.course exports under the same name.
check = importlib.import_module("tenxor.course.check")
TARGET_MEDIAN, TARGET_SLOWEST = 0.3, 1.5  # seconds, after the first check
PHASES = ("before the fork", "pytest start-up", "collection", "tests", "report")

# One wrong-but-plausible answer per chapter: (exercise id, the body that replaces its
# solution), each a mistake learners make.
WRONG_ANSWERS = {
    "1.1": (  # the 0-d shape () taken for an empty tensor
        "count = 1 if len(shape) > 0 else 0\n"
        "for size in shape:\n"
        "    if size < 0:\n"
        '        raise ValueError(f"shape {tuple(shape)} has a negative size {size}")\n'
        "    count *= size\n"
        "return count\n"
    ),
    "2.1": (  # each dim's stride counts its own size too
        "strides = []\n"
        "for d in range(len(shape)):\n"
        "    step = 1\n"
        "    for size in shape[d:]:\n"
        "        step *= max(size, 1)\n"
        "    strides.append(step)\n"
        "return tuple(strides)\n"
    ),
    "3.4": (  # the inverse permutation: dim d goes to position dims[d]
        "shape, strides = [0] * layout.ndim, [0] * layout.ndim\n"
        "for position, d in enumerate(dims):\n"
        "    shape[d], strides[d] = layout.shape[position], layout.strides[position]\n"
        "return Layout(tuple(shape), tuple(strides), layout.offset)\n"
    ),
    "4.6": (  # only the first operand is expanded to the broadcast shape
        "shape = broadcast_shapes(layout_a.shape, layout_b.shape)\n"
        "a = read_values(data_a, expand_layout(layout_a, shape))\n"
        "b = read_values(data_b, layout_b)\n"
        "return shape, [fn(x, y) for x, y in zip(a, b)]\n"
    ),
    "5.3": (  # a NaN never wins, since every comparison with it is false
        "best = 0\n"
        "for position, value in enumerate(run):\n"
        "    if value > run[best]:\n"
        "        best = position\n"
        "return best\n"
    ),
    "6.2": (  # only the receiving node i is asked to be real: padding senders count
        "receiving = (node_mask != 0).unsqueeze(2).expand(-1, -1, node_mask.shape[1])\n"
        "edges = (adjacency != 0) * receiving\n"
        "return where(self_loops(adjacency.shape[-1]), receiving, edges)\n"
    ),
}


@dataclass(frozen=True)
class Sample:
    """One timed check: its exercise, the seconds it took and what they were spent on."""

    exercise: str
    seconds: float
    cpu: float  # CPU seconds of the child that ran the tests
    phases: tuple[float, ...]  # seconds, in the order of PHASES
    state: str


def copy_of_course(destination: Path) -> Path:
    """A copy of the course as it is in this tree, solutions included."""
    write_tree(ROOT, destination, LOCAL_ONLY, rewrite=lambda path: path.read_text())
    return destination


def put_wrong_answers(root: Path) -> None:
    """Replace the solution of each exercise of WRONG_ANSWERS in the tree at `root`."""
    for exercise_id, body in WRONG_ANSWERS.items():
        path = root / BY_ID[exercise_id].path
        region = next(r for r in find_regions(path) if r.exercise_id == exercise_id)
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        lines[region.begin - 1 : region.end] = [
            region.indent + line for line in body.splitlines(True)
        ]
        path.write_text("".join(lines), encoding="utf-8")


def trees(folder: Path) -> dict[str, Path]:
    """The three trees to check, written into `folder`."""
    reference = copy_of_course(folder / "reference")
    release = folder / "release"
    write_release(ROOT, release)
    wrong = copy_of_course(folder / "wrong")
    put_wrong_answers(wrong)
    return {"reference": reference, "release": release, "wrong": wrong}


def timed_check(exercise_id: str, root: Path) -> Sample:
    """Run `check(exercise_id)` on the tree at `root` (its printout swallowed) and time it."""
    runs = []
    original = check.run_checked

    def keeping(*arguments, **options):
        runs.append(original(*arguments, **options))
        return runs[-1]

    check.run_checked = keeping
    try:
        began, clock = time.time(), time.perf_counter()
        status = check.check_exercise(exercise_id, root, io.StringIO())
        seconds, ended = time.perf_counter() - clock, time.time()
    finally:
        check.run_checked = original
    notes = {note["event"]: note for note in runs[-1].notes}
    child, timing = notes.get("child", {}), notes.get("timing", {})
    marks = [began, child.get("forked"), timing.get("started"), timing.get("collected"),
             timing.get("finished"), ended]  # fmt: skip
    phases = tuple(
        (later - earlier) if earlier is not None and later is not None else float("nan")
        for earlier, later in zip(marks, marks[1:])
    )
    return Sample(exercise_id, seconds, child.get("cpu", float("nan")), phases, status.state)


def measure(trees: dict[str, Path], repeats: int, report: Callable[[str], None]) -> dict:
    """Every exercise checked `repeats` times on every tree, after one warm-up check."""
    first = next(iter(trees.values()))
    clock = time.perf_counter()
    check.check_exercise(CATALOG[0].id, first, io.StringIO())
    report(f"warm-up check (starts the worker): {time.perf_counter() - clock:.2f} s")
    found: dict[str, list[Sample]] = {}
    for name, root in trees.items():
        found[name] = [timed_check(item.id, root) for item in CATALOG for _ in range(repeats)]
        slowest = max(found[name], key=lambda sample: sample.seconds)
        report(f"{name}: slowest {slowest.exercise} in {slowest.seconds:.2f} s")
    return found


def table(found: dict[str, list[Sample]]) -> list[list[str]]:
    """Rows: each tree's median and slowest check, its median CPU time and median phases."""
    body = []
    for name, samples in found.items():
        slowest = max(samples, key=lambda sample: sample.seconds)
        median = statistics.median(sample.seconds for sample in samples)
        phases = [statistics.median(sample.phases[k] for sample in samples) for k in range(5)]
        cpu = statistics.median(sample.cpu for sample in samples)
        body.append([
            name, str(len(samples)), f"{median:.3f} s",
            f"{slowest.seconds:.3f} s ({slowest.exercise})", f"{cpu:.3f} s",
            *(f"{phase * 1000:.0f} ms" for phase in phases),
        ])  # fmt: skip
    return body


HEADER = ["tree", "checks", "median", "slowest", "median CPU", *PHASES]


def markdown(found: dict[str, list[Sample]], date: str, load: tuple[float, float]) -> str:
    """The table in Markdown, with the machine, the date, the load and the targets."""
    rows = table(found)
    lines = ["| " + " | ".join(HEADER) + " |", "| --- |" + " ---: |" * (len(HEADER) - 1)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    every = [sample.seconds for samples in found.values() for sample in samples]
    medians = [statistics.median(s.seconds for s in samples) for samples in found.values()]
    reached = max(medians) <= TARGET_MEDIAN and max(every) <= TARGET_SLOWEST
    return "\n".join([
        f"Measured on {date}: {machine()}; load average {load[0]:.2f} before and "
        f"{load[1]:.2f} after (the machine's other work slows a check down).",
        "",
        *lines,
        "",
        f"Targets: the median check of each tree at most {TARGET_MEDIAN} s and the slowest at "
        f"most {TARGET_SLOWEST} s: {'reached' if reached else 'not reached'}.",
        "",
    ])  # fmt: skip


def update_readme(text: str, readme: Path = README) -> None:
    """Put `text` between the check-latency markers of the README."""
    replace_between(readme, START, END, text)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.check_latency", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--repeats", type=int, default=1, help="checks of each exercise per tree")
    parser.add_argument("--no-readme", action="store_true", help="leave the README as it is")
    options = parser.parse_args(argv)
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="tenxor-latency-") as folder:
        found = measure(trees(Path(folder)), options.repeats, print)
    text = markdown(found, datetime.date.today().isoformat(), (load_before, os.getloadavg()[0]))
    print(f"\nPython {platform.python_version()}\n{text}")
    if not options.no_readme:
        update_readme(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
