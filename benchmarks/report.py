"""The benchmark's report: medians and ratios as a text table and as Markdown, the targets and
whether they are reached, and a bar chart in SVG."""

from __future__ import annotations

import argparse
import html
import math
import platform
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .workloads import VIEW_SHAPE, WORKLOADS

HERE = Path(__file__).resolve().parent  # the benchmarks folder
ROOT = HERE.parent  # the course
README = HERE / "README.md"  # where every benchmark writes its table
NUMPY, LOOP, TENXOR, WRAPPER = "NumPy", "plain loop", "tenxor", "wrapper design"
ORDER = [NUMPY, LOOP, TENXOR, WRAPPER]
COLOURS = {NUMPY: "#4c78a8", LOOP: "#72b7b2", TENXOR: "#f58518", WRAPPER: "#b279a2"}
RATIOS = [(TENXOR, LOOP), (WRAPPER, TENXOR), (LOOP, NUMPY)]  # (slower, faster) columns


TIME, MEMORY = "time", "peak memory"  # what a target compares: median seconds, peak bytes


@dataclass(frozen=True)
class Target:
    """A goal for `contender`'s `measure` (TIME: its median seconds; MEMORY: its peak bytes) on
    each of `workloads`: over `reference`'s measure on the same workload, or on the matching one
    of `against` when it is given; or, with no `reference`, the measure itself (seconds or
    bytes). At most `limit`, or at least it."""

    text: str
    workloads: tuple[str, ...]
    contender: str
    reference: str | None
    limit: float
    at_most: bool = True
    against: tuple[str, ...] = ()
    measure: str = TIME

    def reached(self, value: float) -> bool:
        return value <= self.limit if self.at_most else value >= self.limit

    def pairs(self) -> list[tuple[str, str]]:
        """(contender's workload, reference's workload) for each value of the target."""
        return list(zip(self.workloads, self.against or self.workloads))

    def value(
        self, table: dict[str, dict[str, float]], workload: str, against: str
    ) -> float | None:
        """The value compared with the limit, from `table` (one measure of each contender on
        each workload); None when a contender did not measure its workload."""
        if self.reference is None:
            return table.get(self.contender, {}).get(workload)
        return ratio(table, self.contender, self.reference, workload, against)

    def figure(self, value: float) -> str:
        """A value of the target as printed: a ratio, or a time or a number of bytes."""
        if self.reference is not None:
            return f"{value:.2f}"
        return size(round(value)) if self.measure == MEMORY else duration(value)


DENSE_16, EDGES_16 = "GATv2 dense, N=16", "GATv2 edges, N=16"
DENSE_64, EDGES_64 = "GATv2 dense, N=64", "GATv2 edges, N=64"
MATMUL = "batched matmul"
TARGETS = [
    Target("tenxor no slower than the plain loop (contiguous elementwise and reductions)",
           ("sum over each dim", "softmax"), TENXOR, LOOP, 1.0),
    Target("tenxor within 2x of the plain loop (non-contiguous, broadcast)",
           ("broadcast add", "transpose, contiguous", "five views, one op"), TENXOR, LOOP, 2.0),
    Target("tenxor's batched matmul (the fused kernel) no slower than the plain loop",
           (MATMUL,), TENXOR, LOOP, 1.0),
    Target("tenxor's batched matmul at most 2x the plain loop's peak memory",
           (MATMUL,), TENXOR, LOOP, 2.0, measure=MEMORY),
    Target("tenxor at least 20x faster than the wrapper design",
           ("broadcast add", MATMUL), WRAPPER, TENXOR, 20.0, at_most=False),
    Target("tenxor's edge-list GATv2 at least 3x faster than its dense one at N=16",
           (DENSE_16,), TENXOR, TENXOR, 3.0, at_most=False, against=(EDGES_16,)),
    Target("tenxor's edge-list GATv2 within 2x of the plain loop",
           (EDGES_16, EDGES_64), TENXOR, LOOP, 2.0),
    Target("tenxor's dense GATv2 at N=64 at most 300 MiB at peak",
           (DENSE_64,), TENXOR, None, 300 * 2**20, measure=MEMORY),
]  # fmt: skip
VIEW_LIMIT = 4096  # bytes: a view allocates a layout (a copy of 10^6 floats: 8 MB)


def extra_names(results: dict[str, Any]) -> list[str]:
    """The extra measurements some contenders make (check() latency), sorted."""
    return sorted({name for result in results.values() for name in result["extras"]})


def row_names(results: dict[str, Any]) -> list[str]:
    """The rows of the tables and the groups of the chart: each workload, followed by the extra
    measurements named after it ("batched matmul, first design"), then the other extras."""
    extras = extra_names(results)
    names = []
    for workload in WORKLOADS:
        names += [workload.name, *(e for e in extras if e.startswith(f"{workload.name}, "))]
    return names + [e for e in extras if e not in names]


def medians(results: dict[str, Any]) -> dict[str, dict[str, float]]:
    """For each contender, the median seconds of each workload (and extra measurement)."""
    table: dict[str, dict[str, float]] = {}
    for name, result in results.items():
        timed = {**result["workloads"], **result["extras"]}
        table[name] = {key: statistics.median(entry["seconds"]) for key, entry in timed.items()}
    return table


def peaks(results: dict[str, Any]) -> dict[str, dict[str, float]]:
    """For each contender, the peak bytes of each workload (and extra measurement) that has
    them."""
    return {
        name: {key: entry["peak_bytes"]
               for key, entry in {**result["workloads"], **result["extras"]}.items()
               if "peak_bytes" in entry}
        for name, result in results.items()
    }  # fmt: skip


def duration(seconds: float | None) -> str:
    """A time with three significant digits in a fitting unit."""
    if seconds is None:
        return "-"
    unit, scale = next((u, s) for u, s in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6))
                       if seconds >= s or u == "µs")  # fmt: skip
    value = seconds / scale
    return f"{value:.3g} {unit}" if value < 1000 else f"{value:.0f} {unit}"


def size(count: int | None) -> str:
    """A number of bytes in a fitting unit."""
    if count is None:
        return "no views"
    for unit, scale in (("MiB", 2**20), ("KiB", 2**10)):
        if count >= scale:
            value = count / scale
            return f"{value:.3g} {unit}" if value < 1000 else f"{value:.0f} {unit}"
    return f"{count} B"


def ratio(table: dict[str, dict[str, float]], slower: str, faster: str, key: str,
          faster_key: str | None = None) -> float | None:  # fmt: skip
    """`slower`'s median on `key` over `faster`'s on `faster_key` (default `key`); None when
    either was not measured."""
    numerator = table.get(slower, {}).get(key)
    denominator = table.get(faster, {}).get(key if faster_key is None else faster_key)
    if numerator is None or denominator is None:
        return None
    return numerator / denominator


def times_text(value: float | None) -> str:
    return "-" if value is None else f"{value:.3g}x" if value < 100 else f"{value:.0f}x"


def rows(results: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """The header and rows of the timing table: medians, then the ratio columns."""
    table = medians(results)
    names = [name for name in ORDER if name in table]
    header = ["workload", *names, *(f"{a} / {b}" for a, b in RATIOS)]
    body = []
    for row in row_names(results):  # an extra's ratios are "-": only one contender makes it
        cells = [row, *(duration(table[n].get(row)) for n in names)]
        body.append(cells + [times_text(ratio(table, a, b, row)) for a, b in RATIOS])
    return header, body


def memory_rows(results: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """The header and rows of the memory table: peak bytes per workload (and per extra
    measurement that has them; "-" where a contender left one out), then view bytes."""
    names = [name for name in ORDER if name in results]
    table = peaks(results)
    workloads = {w.name for w in WORKLOADS}
    shown = [r for r in row_names(results) if r in workloads or any(r in t for t in table.values())]
    body = [[r, *(size(table[n][r]) if r in table[n] else "-" for n in names)] for r in shown]
    shape = " x ".join(map(str, VIEW_SHAPE))
    body.append([f"transposed view of {shape}", *(size(results[n]["view_bytes"]) for n in names)])
    return ["peak memory", *names], body


def target_lines(results: dict[str, Any]) -> list[str]:
    """Each target with the values measured (ratios, or seconds or bytes) and whether each is
    reached."""
    tables = {TIME: medians(results), MEMORY: peaks(results)}
    lines = []
    for target in TARGETS:
        parts = []
        for workload, against in target.pairs():
            value = target.value(tables[target.measure], workload, against)
            if value is not None:
                mark = "reached" if target.reached(value) else "NOT reached"
                label = workload if against == workload else f"{workload} / {against}"
                parts.append(f"{label} {target.figure(value)} ({mark})")
        lines.append(f"{target.text}: {'; '.join(parts) or 'not measured'}")
    if TENXOR in results:
        view = results[TENXOR]["view_bytes"]
        mark = "reached" if view is not None and view <= VIEW_LIMIT else "NOT reached"
        lines.append(f"a tenxor view allocates no per-element memory: {size(view)} ({mark})")
    return lines


def text_table(header: list[str], body: list[list[str]]) -> str:
    widths = [max(len(row[k]) for row in [header, *body]) for k in range(len(header))]
    lines = [
        "  ".join(c.ljust(w) if k == 0 else c.rjust(w) for k, (c, w) in enumerate(zip(row, widths)))
        for row in [header, *body]
    ]
    return "\n".join(lines)


def markdown_table(header: list[str], body: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "| --- |" + " ---: |" * (len(header) - 1)]
    lines += ["| " + " | ".join(row) + " |" for row in body]
    return "\n".join(lines)


def machine() -> str:
    """The machine the run is on: CPU, cores, system, Python and NumPy versions."""
    import os

    import numpy

    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            models = [line.split(":", 1)[1] for line in info if line.startswith("model name")]
        cpu = models[0].strip() if models else cpu
    except OSError:
        pass
    return (f"{cpu}, {os.cpu_count()} cores, {platform.system()} {platform.release()}, "
            f"Python {platform.python_version()}, NumPy {numpy.__version__}")  # fmt: skip


def text_report(results: dict[str, Any]) -> str:
    """Everything the run prints: the timing table, the memory table and the targets."""
    timing, memory = rows(results), memory_rows(results)
    return "\n\n".join([
        "Median time of each workload (ratios of medians: how many times slower)",
        text_table(*timing), text_table(*memory), "Targets", "\n".join(target_lines(results)),
    ])  # fmt: skip


def markdown_report(results: dict[str, Any], date: str, repeats: int,
                    load: tuple[float, float] | None = None) -> str:  # fmt: skip
    """The same report in Markdown, with the machine, the date and the load average before and
    after the run."""
    busy = "" if load is None else (
        f"; load average {load[0]:.2f} before and {load[1]:.2f} after (the machine's other "
        "work slows the contenders down)"
    )  # fmt: skip
    return "\n".join([
        f"Measured on {date}: {machine()}{busy}. Each contender ran in its own process; each",
        f"time is the median of {repeats} runs (3 for a workload slower than 5 s) after one "
        "checked run.",
        "",
        markdown_table(*rows(results)),
        "",
        markdown_table(*memory_rows(results)),
        "",
        "Targets:",
        "",
        *(f"- {line}" for line in target_lines(results)),
        "",
    ])  # fmt: skip


def chart(results: dict[str, Any]) -> str:
    """A horizontal bar chart (SVG) of the medians on a log scale, one group per workload."""
    table = medians(results)
    names = [name for name in ORDER if name in table]
    times = [t for n in names for t in table[n].values()]
    low = 10 ** math.floor(math.log10(min(times)))
    high = 10 ** math.ceil(math.log10(max(times)))
    left, width, bar, gap, top = 190, 560, 11, 14, 50
    decades = round(math.log10(high / low))

    def x(seconds: float) -> float:
        return left + width * math.log10(seconds / low) / decades

    groups = row_names(results)
    height = top + len(groups) * (len(names) * bar + gap) + 30
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + width + 40}" height="{height}" '
        'font-family="sans-serif" font-size="12">',
        f'<rect width="{left + width + 40}" height="{height}" fill="#ffffff"/>',
        '<text x="10" y="18" font-weight="bold">Median time per workload (log scale; shorter '
        "is faster)</text>",
    ]
    for k, name in enumerate(names):
        swatch = f'<rect x="{10 + 150 * k}" y="28" width="10" height="10" fill="{COLOURS[name]}"/>'
        parts.append(f'{swatch}<text x="{24 + 150 * k}" y="37">{name}</text>')
    for d in range(decades + 1):
        tick = low * 10**d
        parts.append(f'<line x1="{x(tick):.1f}" y1="{top - 4}" x2="{x(tick):.1f}" '
                     f'y2="{height - 26}" stroke="#dddddd"/><text x="{x(tick):.1f}" '
                     f'y="{height - 12}" text-anchor="middle">{duration(tick)}</text>')  # fmt: skip
    y = top
    for group in groups:
        parts.append(f'<text x="{left - 8}" y="{y + len(names) * bar / 2 + 4:.1f}" '
                     f'text-anchor="end">{html.escape(group)}</text>')  # fmt: skip
        for name in names:
            if group in table[name]:
                seconds = table[name][group]
                parts.append(f'<rect x="{left}" y="{y}" width="{x(seconds) - left:.1f}" '
                             f'height="{bar - 2}" fill="{COLOURS[name]}"><title>{name}: '
                             f"{duration(seconds)}</title></rect>")  # fmt: skip
            y += bar
        y += gap
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def replace_between(readme: Path, start: str, end: str, text: str) -> None:
    """Put `text` between the marker lines `start` and `end` of a README, in place of what was
    there."""
    content = readme.read_text(encoding="utf-8")
    before, rest = content.split(start, 1)
    _, after = rest.split(end, 1)
    readme.write_text(f"{before}{start}\n{text}\n{end}{after}", encoding="utf-8")


def command_line(module: str, doc: str) -> argparse.ArgumentParser:
    """The options of the benchmark `module` (described by the first line of its `doc`),
    with the --no-readme every benchmark takes."""
    parser = argparse.ArgumentParser(prog=f"python -m {module}", description=doc.splitlines()[0])
    parser.add_argument("--no-readme", action="store_true", help="leave the README as it is")
    return parser


def published(text: str, start: str, end: str, into_readme: bool) -> int:
    """Print a benchmark's `text` and, if `into_readme`, put it between its markers of the
    README; the command's exit code."""
    print(text)
    if into_readme:
        replace_between(README, start, end, text)
    return 0
