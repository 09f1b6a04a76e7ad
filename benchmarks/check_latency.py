"""How long `check(id)` takes to answer, from one Python process, as in a notebook.

    python -m benchmarks.check_latency [--repeats 1] [--no-readme]

Three copies of the course are checked, every exercise of the catalog in each, after one
warm-up check that starts the worker:

- reference: the instructor's tree, where every check passes;
- release: the student release (`write_release`), where nothing is started;
- wrong: the reference with one wrong-but-plausible answer per chapter (WRONG_ANSWERS), where
  property tests fail and shrink, and exercises built on a wrong one fail too.

It prints a table (median and slowest check of each tree, and what the median check's time is
made of), then a second table of what a learner waits for outside a notebook and for the
progress table, each timed from start to end:

- `tenxor check ID` in a shell, for every exercise of the reference, after one that starts the
  shell's worker (which outlives each command);
- `check()` (the progress table) in the notebook's process and `tenxor check` in a shell: with
  nothing changed since the tests last ran, after an edit of one exercise's function
  (each of EDITED, whose tests and those of the exercises built on it run again), and with
  nothing remembered (every test runs).

Both tables go into benchmarks/README.md between the check-latency markers.
"""

from __future__ import annotations

import datetime
import importlib
import io
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from instructor.authoring.regions import find_regions
from instructor.authoring.release import LOCAL_ONLY, write_release, write_tree
from tenxor.course.catalog import BY_ID, CATALOG
from tenxor.course.engine import SharedWorker
from tenxor.course.remembered import REMEMBERED_FILE

from .report import README, ROOT, command_line, machine, replace_between

START = "<!-- check latency: written by python -m benchmarks.check_latency -->"
END = "<!-- end of check latency -->"
# The module, not the check() function that tenxor.course exports under the same name.
check = importlib.import_module("tenxor.course.check")
TARGET_MEDIAN, TARGET_SLOWEST = 0.3, 1.5  # seconds, after the first check
TARGET_SHELL, TARGET_PROGRESS = 0.5, 1.5  # seconds: the median shell check, progress table
# The exercises whose function is edited before a progress table: the fused kernel, and the
# permute that 14 exercises are built on, the most of any.
EDITED = ("5.4", "3.4")
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
        "for position, value in enumerate(group):\n"
        "    if value > group[best]:\n"
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


def tenxor_command() -> list[str]:
    """The `tenxor` command of this Python's environment."""
    script = Path(sys.executable).with_name("tenxor")
    return [str(script)] if script.exists() else [sys.executable, "-m", "tenxor.course.cli"]


def timed(action: Callable[[], object]) -> float:
    """Seconds `action` takes, by the clock."""
    clock = time.perf_counter()
    action()
    return time.perf_counter() - clock


def in_a_shell(root: Path, *arguments: str) -> float:
    """Seconds a `tenxor check` command takes in a new process, as from a shell."""
    command = [*tenxor_command(), "check", *arguments, "--course", str(root)]
    return timed(lambda: subprocess.run(command, capture_output=True, check=False, cwd=root))


def edit(root: Path, exercise_id: str, number: int) -> None:
    """Change the function of an exercise without changing what it does."""
    path = root / BY_ID[exercise_id].path
    region = next(r for r in find_regions(path) if r.exercise_id == exercise_id)
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    lines.insert(
        region.end - 1, f"{region.indent}_edit = {number}  # an edit that changes nothing\n"
    )
    path.write_text("".join(lines), encoding="utf-8")


def progress_rows(root: Path, repeats: int) -> dict[str, list[float]]:
    """The progress table, in the notebook's process and in a shell, each timed after nothing
    changed, after an edit of each exercise of EDITED, and with nothing remembered."""
    forget = (root / REMEMBERED_FILE).unlink
    shell = lambda: in_a_shell(root)  # noqa: E731
    notebook = lambda: timed(lambda: check.progress(root, io.StringIO()))  # noqa: E731
    found: dict[str, list[float]] = {}
    for where, run in (("check()", notebook), ("tenxor check", shell)):
        run()
        found[f"{where}, nothing changed"] = [run() for _ in range(repeats)]
        for edited in EDITED:
            samples = []
            for number in range(repeats):
                edit(root, edited, number)
                samples.append(run())
            found[f"{where}, after an edit of {edited}"] = samples
        samples = []
        for _ in range(repeats):
            forget(missing_ok=True)
            samples.append(run())
        found[f"{where}, nothing remembered"] = samples
    return found


def outside_the_notebook(root: Path, repeats: int, report: Callable[[str], None]) -> dict:
    """Seconds of `tenxor check ID` for every exercise, and of the progress tables."""
    report(f"first shell check (starts the shell's worker): {in_a_shell(root, '1.1'):.2f} s")
    found: dict[str, list[float]] = {}
    try:
        found["tenxor check ID"] = [
            in_a_shell(root, item.id) for item in CATALOG for _ in range(repeats)
        ]
        found.update(progress_rows(root, repeats))
    finally:
        SharedWorker(root.resolve()).stop()
    for name, samples in found.items():
        report(f"{name}: median {statistics.median(samples):.2f} s")
    return found


def outside_markdown(found: dict[str, list[float]]) -> list[str]:
    """The second table: what a learner waits for in a shell and for the progress table."""
    lines = ["| what | runs | median | slowest |", "| --- | ---: | ---: | ---: |"]
    for name, samples in found.items():
        median, slowest = statistics.median(samples), max(samples)
        lines.append(f"| {name} | {len(samples)} | {median:.3f} s | {slowest:.3f} s |")
    shell = statistics.median(found["tenxor check ID"])
    tables = [statistics.median(v) for k, v in found.items() if k != "tenxor check ID"]
    reached = shell <= TARGET_SHELL and max(tables) <= TARGET_PROGRESS
    return [
        *lines,
        "",
        f"Targets: the median `tenxor check ID` at most {TARGET_SHELL} s, and the median "
        f"progress table at most {TARGET_PROGRESS} s in every row: "
        f"{'reached' if reached else 'not reached'}. With nothing remembered (a copy of a "
        "finished course, or tests that changed), the tests of every started exercise run, "
        "shared among one process per CPU.",
        "",
    ]


def markdown(
    found: dict[str, list[Sample]],
    date: str,
    load: tuple[float, float],
    outside: dict[str, list[float]] | None = None,
) -> str:
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
        *(outside_markdown(outside) if outside else []),
    ])  # fmt: skip


def update_readme(text: str, readme: Path = README) -> None:
    """Put `text` between the check-latency markers of the README."""
    replace_between(readme, START, END, text)


def main(argv: list[str]) -> int:
    parser = command_line("benchmarks.check_latency", __doc__)
    parser.add_argument("--repeats", type=int, default=1, help="checks of each exercise per tree")
    options = parser.parse_args(argv)
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="tenxor-latency-") as folder:
        copies = trees(Path(folder))
        found = measure(copies, options.repeats, print)
        outside = outside_the_notebook(copies["reference"], max(3, options.repeats), print)
    load = (load_before, os.getloadavg()[0])
    text = markdown(found, datetime.date.today().isoformat(), load, outside)
    print(f"\nPython {platform.python_version()}\n{text}")
    if not options.no_readme:
        update_readme(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
