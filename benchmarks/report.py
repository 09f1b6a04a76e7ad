"""The benchmark's report: medians and ratios as a text table and as Markdown, the targets and
whether they are reached, and a bar chart in SVG."""

from __future__ import annotations

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


@dataclass(frozen=True)
class Target:
    """A goal for ratios of medians: `slower`'s time on each of `workloads` over `faster`'s on
    the same workload, or on the matching one of `against` when it is given; at most `limit`,
    or at least it."""

    text: str
    workloads: tuple[str, ...]
    slower: str
    faster: str
    limit: float
    at_most: bool = True
    against: tuple[str, ...] = ()

    def reached(self, ratio: float) -> bool:
        return ratio <= self.limit if self.at_most else ratio >= self.limit

    def pairs(self) -> list[tuple[str, str]]:
        """(slower's workload, faster's workload) for each ratio of the target."""
        return list(zip(self.workloads, self.against or self.workloads))


DENSE_16, EDGES_16 = "GATv2 dense, N=16", "GATv2 edges, N=16"
TARGETS = [
    Target("tenxor no slower than the plain loop (contiguous elementwise and reductions)",
           ("sum over each dim", "softmax"), TENXOR, LOOP, 1.0),
    Target("tenxor within 2x of the plain loop (non-contiguous, broadcast, matmul)",
           ("broadcast add", "transpose, contiguous", "five views, one op", "batched matmul"),
           TENXOR, LOOP, 2.0),
    Target("tenxor at least 20x faster than the wrapper design",
           ("broadcast add", "batched matmul"), WRAPPER, TENXOR, 20.0, at_most=False),
    Target("tenxor's edge-list GATv2 at least 3x faster than its dense one at N=16",
           (DENSE_16,), TENXOR, TENXOR, 3.0, at_most=False, against=(EDGES_16,)),
    Target("tenxor's edge-list GATv2 within 2x of the plain loop",
           (EDGES_16, "GATv2 edges, N=64"), TENXOR, LOOP, 2.0),
]  # fmt: skip
VIEW_LIMIT = 4096  # bytes: a view allocates a layout (a copy of 10^6 floats: 8 MB)


def extra_names(results: dict[str, Any]) -> list[str]:
    """The extra measurements some contenders make (check() latency), sorted."""
    return sorted({name for result in results.values() for name in result["extras"]})


def medians(results: dict[str, Any]) -> dict[str, dict[str, float]]:
    """For each contender, the median seconds of each workload (and extra measurement)."""
    table: dict[str, dict[str, float]] = {}
    for name, result in results.items():
        timed = {**result["workloads"], **result["extras"]}
        table[name] = {key: statistics.median(entry["seconds"]) for key, entry in timed.items()}
    return table


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
    for workload in WORKLOADS:
        cells = [workload.name, *(duration(table[n].get(workload.name)) for n in names)]
        cells += [times_text(ratio(table, a, b, workload.name)) for a, b in RATIOS]
        body.append(cells)
    for extra in extra_names(results):
        cells = [extra, *(duration(table[n].get(extra)) for n in names)]
        body.append(cells + ["-"] * len(RATIOS))
    return header, body


def peak(result: dict[str, Any], workload: str) -> str:
    """A contender's peak memory on a workload, "-" if it left the workload out."""
    measured = result["workloads"].get(workload)
    return "-" if measured is None else size(measured["peak_bytes"])


def memory_rows(results: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """The header and rows of the memory table: peak bytes per workload, then view bytes."""
    names = [name for name in ORDER if name in results]
    body = [[w.name, *(peak(results[n], w.name) for n in names)] for w in WORKLOADS]
    shape = " x ".join(map(str, VIEW_SHAPE))
    body.append([f"transposed view of {shape}", *(size(results[n]["view_bytes"]) for n in names)])
    return ["peak memory", *names], body


def target_lines(results: dict[str, Any]) -> list[str]:
    """Each target with the ratios measured and whether each is reached."""
    table = medians(results)
    lines = []
    for target in TARGETS:
        parts = []
        for workload, against in target.pairs():
            value = ratio(table, target.slower, target.faster, workload, against)
            if value is not None:
                mark = "reached" if target.reached(value) else "NOT reached"
                label = workload if against == workload else f"{workload} / {against}"
                parts.append(f"{label} {value:.2f} ({mark})")
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

    groups = [w.name for w in WORKLOADS] + extra_names(results)
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
