"""Run the benchmarks: every contender in its own process, then the report.

    python -m benchmarks [--repeats 5] [--size full|tiny] [--out benchmarks/results]

prints the table and the targets, and writes results.md, chart.svg and results.json into the
output folder; at full size into the default folder, it also updates the table in
benchmarks/README.md. A contender whose result differs from NumPy's fails the run (exit 1).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from . import report
from .contender import CONTENDERS

RESULTS = report.HERE / "results"
START, END = "<!-- results: written by python -m benchmarks -->", "<!-- end of results -->"


def run_contender(module: str, size: str, repeats: int) -> dict[str, Any]:
    """One contender's measurements, from a fresh Python process."""
    print(f"running {module} ...", file=sys.stderr, flush=True)
    done = subprocess.run(
        [sys.executable, "-m", f"{__package__}.contender", module, size, str(repeats)],
        capture_output=True, text=True, cwd=report.ROOT,
    )  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"benchmark failed in {module}:\n{done.stderr.strip()}")
    return json.loads(done.stdout)


def run_all(size: str, repeats: int, modules: list[str] = CONTENDERS) -> dict[str, Any]:
    """Every contender's measurements, keyed by the contender's name."""
    results = {}
    for module in modules:
        measured = run_contender(module, size, repeats)
        results[measured["name"]] = measured
    return results


def write(
    results: dict[str, Any], out: Path, repeats: int, load: tuple[float, float] | None = None
) -> str:
    """Write results.md, chart.svg and results.json into `out`; the Markdown report."""
    out.mkdir(parents=True, exist_ok=True)
    date = datetime.date.today().isoformat()
    markdown = report.markdown_report(results, date, repeats, load)
    (out / "results.md").write_text("# Benchmark results\n\n" + markdown, encoding="utf-8")
    (out / "chart.svg").write_text(report.chart(results), encoding="utf-8")
    (out / "results.json").write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    return markdown


def update_readme(markdown: str, readme: Path = report.README) -> None:
    """Put `markdown` between the results markers of the README."""
    report.replace_between(readme, START, END, markdown)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--repeats", type=int, default=5, help="timed runs per workload")
    parser.add_argument("--size", choices=["full", "tiny"], default="full")
    parser.add_argument("--out", type=Path, default=RESULTS, help="where the results go")
    options = parser.parse_args(argv)
    load_before = os.getloadavg()[0]
    results = run_all(options.size, options.repeats)
    load = (load_before, os.getloadavg()[0])
    print(report.text_report(results))
    if options.size == "tiny":
        print("\n(tiny inputs time the overheads, not the kernels: the targets are for full size)")
    markdown = write(results, options.out, options.repeats, load)
    if options.size == "full" and options.out.resolve() == RESULTS:
        update_readme(markdown)
    print(f"\nwritten: {options.out / 'results.md'}, {options.out / 'chart.svg'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
