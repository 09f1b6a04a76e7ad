"""The benchmarks keep working: every contender runs every workload at a tiny size and matches
NumPy, a wrong result stops the run, and the report is written. Nothing here is timed."""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from benchmarks import __main__ as bench
from benchmarks import contender, loop_version, numpy_version, report, tenxor_version, wrapper
from benchmarks.workloads import NEIGHBOURS, WORKLOADS, inputs

pytestmark = pytest.mark.provided

ROOT = Path(__file__).resolve().parents[2]
NAMES = [report.NUMPY, report.LOOP, report.TENXOR, report.WRAPPER]
MODULES = {report.NUMPY: numpy_version, report.LOOP: loop_version,
           report.TENXOR: tenxor_version, report.WRAPPER: wrapper}  # fmt: skip
GATV2 = [w for w in WORKLOADS if w.name.startswith("GATv2")]


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory) -> tuple[Path, str]:
    """`python -m benchmarks` at the tiny size, one timed run each: its folder and output."""
    out = tmp_path_factory.mktemp("results")
    readme = (ROOT / "benchmarks" / "README.md").read_text(encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--size", "tiny", "--repeats", "1", "--out", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert (ROOT / "benchmarks" / "README.md").read_text(encoding="utf-8") == readme
    return out, done.stdout


def test_every_contender_runs_every_workload_and_matches_numpy(tiny_run):
    out, printed = tiny_run
    results = bench.json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert sorted(results) == sorted(NAMES)
    for name, result in results.items():
        assert sorted(result["workloads"]) == sorted(MODULES[name].IMPLEMENTATIONS), name
        for measured in result["workloads"].values():
            assert len(measured["seconds"]) == 1 and measured["seconds"][0] > 0
            assert measured["peak_bytes"] > 0
    for name in (report.NUMPY, report.LOOP, report.TENXOR):  # every workload, both forms
        assert sorted(results[name]["workloads"]) == sorted(w.name for w in WORKLOADS), name
    assert sorted(results[report.TENXOR]["extras"]) == sorted(tenxor_version.EXTRAS)
    assert results[report.LOOP]["view_bytes"] is None  # flat lists have no views
    for workload in WORKLOADS:
        assert workload.name in printed
    assert "Targets" in printed and "edge-list GATv2" in printed
    assert "tenxor's dense GATv2 at N=64 at most 300 MiB at peak: GATv2 dense, N=64 " in printed


def test_the_first_design_matmul_is_timed_in_the_row_after_the_fused_one(tiny_run):
    out, printed = tiny_run
    results = bench.json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert results[report.TENXOR]["extras"][tenxor_version.FIRST_DESIGN]["seconds"][0] > 0
    rows = [line.split("  ")[0] for line in printed.splitlines()]
    assert rows[rows.index(report.MATMUL) + 1] == tenxor_version.FIRST_DESIGN


def test_the_first_design_matmul_is_checked_against_numpy(monkeypatch):
    tenxor_version.first_design("tiny")()  # the reference design matches NumPy
    monkeypatch.setattr(tenxor_version, "first_design_matmul", lambda a, b: a @ b + 1.0)
    with pytest.raises(contender.WrongResult, match="tenxor, batched matmul, first design: diff"):
        tenxor_version.first_design("tiny")


def test_the_wrapper_design_runs_the_dense_gatv2_at_n16_only(tiny_run):
    out, printed = tiny_run
    results = bench.json.loads((out / "results.json").read_text(encoding="utf-8"))
    gatv2 = [name for name in results[report.WRAPPER]["workloads"] if name.startswith("GATv2")]
    assert gatv2 == [report.DENSE_16]
    row = next(line for line in printed.splitlines() if line.startswith(report.EDGES_16))
    assert " - " in row  # a workload a contender leaves out is a "-" in the table


@pytest.mark.parametrize(
    "name, workload",
    [(name, w) for name in NAMES for w in GATV2 if w.name in MODULES[name].IMPLEMENTATIONS],
    ids=lambda value: getattr(value, "name", value),
)
def test_each_gatv2_layer_matches_numpy_on_the_tiny_graphs(name, workload):
    module = MODULES[name]
    arrays = inputs(workload, "tiny")
    x, adjacency, node_mask = arrays[:3]
    assert 0 < node_mask.sum() < node_mask.size  # some padding, some real nodes
    assert (adjacency.sum(axis=2) == NEIGHBOURS * node_mask).all()  # each real node hears 3
    assert not np.einsum("bii->", adjacency)  # no self loops
    converted = [module.convert(a) for a in arrays]
    if workload.name in getattr(module, "PREPARE", {}):
        converted = list(module.PREPARE[workload.name](*converted))
    got = module.to_numpy(module.IMPLEMENTATIONS[workload.name](*converted))
    expected = workload.numpy(*arrays)
    rows = int(node_mask.sum()) if "edges" in workload.name else x.shape[0]
    assert expected.shape[0] == rows  # the edge-list layer answers at the real nodes only
    np.testing.assert_allclose(got, expected, rtol=contender.RELATIVE, atol=contender.ABSOLUTE)


def test_the_report_holds_the_tables_and_a_chart_of_every_median(tiny_run):
    out, _ = tiny_run
    results = bench.json.loads((out / "results.json").read_text(encoding="utf-8"))
    markdown = (out / "results.md").read_text(encoding="utf-8")
    for name in NAMES:
        assert f"| {name} |" in markdown or f" {name} |" in markdown
    bars = ET.fromstring((out / "chart.svg").read_text(encoding="utf-8")).iter(
        "{http://www.w3.org/2000/svg}rect"
    )
    titled = [bar for bar in bars if bar.find("{http://www.w3.org/2000/svg}title") is not None]
    measured = sum(len(r["workloads"]) + len(r["extras"]) for r in results.values())
    assert len(titled) == measured  # tenxor's extra measurements too


def wrong(name: str, implementation) -> SimpleNamespace:
    """NumPy's contender with one workload replaced."""
    return SimpleNamespace(**{**vars(numpy_version), "NAME": "broken",
                              "IMPLEMENTATIONS": {**numpy_version.IMPLEMENTATIONS,
                                                  name: implementation}})  # fmt: skip


@pytest.mark.parametrize(
    "name, implementation, message",
    [
        ("broadcast add", lambda a, b: a - b, r"broken, broadcast add: differs from NumPy by up"),
        ("softmax", lambda a: a[:, :-1], r"broken, softmax: shape \(3, 4\), NumPy \(3, 5\)"),
        (
            "sum over each dim",
            lambda a: (a.sum(0),),
            r"sum over each dim: 1 results, NumPy gives 3",
        ),
    ],
)
def test_a_result_that_differs_from_numpy_stops_the_run(name, implementation, message):
    with pytest.raises(contender.WrongResult, match=message):
        contender.measure(wrong(name, implementation), "tiny", 1)


def test_a_tenxor_view_allocates_no_memory_per_element():
    view = contender.view_bytes(tenxor_version)
    assert view <= report.VIEW_LIMIT
    copy = contender.peak_bytes(lambda: tenxor_version.convert(np.zeros((1000, 1000))).T.clone())
    assert copy >= 8 * 1_000_000  # a copy holds each float64 of the million


def test_the_readme_table_is_replaced_between_its_markers(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text(f"intro\n{bench.START}\nold table\n{bench.END}\nreading\n", encoding="utf-8")
    bench.update_readme("| new | table |", readme)
    assert readme.read_text(encoding="utf-8") == (
        f"intro\n{bench.START}\n| new | table |\n{bench.END}\nreading\n"
    )


def made_up(seconds: float, peak: int = 1000, times: dict | None = None,
            peaks: dict | None = None) -> dict:  # fmt: skip
    """One contender's made-up results: `seconds` and `peak` bytes on every workload, but for
    the workloads named in `times` and `peaks`."""
    times, peaks = times or {}, peaks or {}
    workloads = {w.name: {"seconds": [times.get(w.name, seconds)],
                          "peak_bytes": peaks.get(w.name, peak)} for w in WORKLOADS}  # fmt: skip
    return {"workloads": workloads, "extras": {}, "view_bytes": 100}


def line_of(lines: list[str], target: report.Target) -> str:
    return lines[report.TARGETS.index(target)]


MEMORY_TARGETS = [t for t in report.TARGETS if t.measure == report.MEMORY]
MATMUL_MEMORY = next(t for t in MEMORY_TARGETS if t.reference == report.LOOP)
DENSE_MEMORY = next(t for t in MEMORY_TARGETS if t.reference is None)


def test_targets_say_which_ratios_reach_them():
    edges = {report.EDGES_16: 0.4, report.EDGES_64: 3.5}
    results = {report.LOOP: made_up(1.0), report.TENXOR: made_up(1.5, times=edges),
               report.WRAPPER: made_up(45.0)}  # fmt: skip
    lines = report.target_lines(results)
    assert len(lines) == len(report.TARGETS) + 1  # and the view's line
    assert lines[0].count("NOT reached") == 2  # 1.5x the loop: slower than the floor
    assert "NOT reached" not in lines[1] and lines[1].count("1.50 (reached)") == 3
    assert lines[2].endswith(": batched matmul 1.50 (NOT reached)")  # the fused matmul: at most 1x
    assert "matmul" not in lines[0] + lines[1]
    assert lines[4].count("30.00 (reached)") == 2
    assert lines[5].endswith(f"{report.DENSE_16} / {report.EDGES_16} 3.75 (reached)")
    assert "0.40 (reached)" in lines[6] and "3.50 (NOT reached)" in lines[6]
    assert lines[-1].endswith("100 B (reached)")


@pytest.mark.parametrize(
    "matmul, dense, matmul_figure, dense_figure",
    [
        (1_500, 250 * 2**20, "1.50 (reached)", "250 MiB (reached)"),
        (2_000, 300 * 2**20, "2.00 (reached)", "300 MiB (reached)"),  # at most: the limit holds
        (2_500, 1100 * 2**20, "2.50 (NOT reached)", "1100 MiB (NOT reached)"),
        (500_000, 300 * 2**20 + 4096, "500.00 (NOT reached)", "300 MiB (NOT reached)"),
    ],
)  # fmt: skip
def test_memory_targets_compare_peak_bytes_with_the_loop_or_with_a_limit(
    matmul: int, dense: int, matmul_figure: str, dense_figure: str
):
    peaks = {report.MATMUL: matmul, report.DENSE_64: dense}
    fast = {report.MATMUL: 0.5}  # the time target of the same workload is reached
    results = {report.LOOP: made_up(1.0, peak=1000),
               report.TENXOR: made_up(0.5, peak=1000, times=fast, peaks=peaks)}  # fmt: skip
    lines = report.target_lines(results)
    assert line_of(lines, MATMUL_MEMORY) == (
        f"tenxor's batched matmul at most 2x the plain loop's peak memory: batched matmul "
        f"{matmul_figure}"
    )
    assert line_of(lines, DENSE_MEMORY) == (
        f"tenxor's dense GATv2 at N=64 at most 300 MiB at peak: GATv2 dense, N=64 {dense_figure}"
    )
    assert lines[2].endswith(": batched matmul 0.50 (reached)")
    markdown = report.markdown_report(results, "2026-11-26", 1)
    text = report.text_report(results)
    for line in (line_of(lines, MATMUL_MEMORY), line_of(lines, DENSE_MEMORY)):
        assert f"\n- {line}\n" in markdown and f"\n{line}\n" in text
    assert "\nTargets:\n" in markdown and "\nTargets\n" in text


def test_a_target_against_a_limit_prints_the_measure_itself():
    peak = report.Target("peak", ("softmax",), report.TENXOR, None, 2**20, measure=report.MEMORY)
    time = report.Target("time", ("softmax",), report.TENXOR, None, 0.01)
    table = {report.TENXOR: {"softmax": 2048.0}}
    assert peak.value(table, "softmax", "softmax") == 2048.0 and peak.reached(2048.0)
    assert peak.figure(2048.0) == "2 KiB" and time.figure(0.005) == "5 ms"
    assert peak.value(table, "broadcast add", "broadcast add") is None
    assert not time.reached(0.02)


def test_a_target_whose_contender_left_a_workload_out_is_not_measured():
    results = {report.TENXOR: {"workloads": {}, "extras": {}, "view_bytes": 100}}
    lines = report.target_lines(results)
    assert lines[3].endswith(": not measured")
    assert all(line.endswith(": not measured") for line in lines[:-1])
    assert report.ratio(report.medians(results), report.TENXOR, report.LOOP, "softmax") is None
    timed_only = {name: {**result, "workloads": {w: {"seconds": entry["seconds"]}
                                                 for w, entry in result["workloads"].items()}}
                  for name, result in {report.LOOP: made_up(1.0),
                                       report.TENXOR: made_up(1.0)}.items()}  # fmt: skip
    lines = report.target_lines(timed_only)  # results with no peak bytes: memory not measured
    assert all(line_of(lines, t).endswith(": not measured") for t in MEMORY_TARGETS)


def test_an_extra_named_after_a_workload_follows_its_row_and_shows_its_peak_when_measured():
    results = {report.LOOP: made_up(1.0), report.TENXOR: made_up(1.0)}
    results[report.TENXOR]["extras"] = {
        tenxor_version.FIRST_DESIGN: {"seconds": [2.0], "peak_bytes": 4096},
        "check() latency": {"seconds": [0.1]},
    }
    _, timing = report.rows(results)
    names = [row[0] for row in timing]
    after = timing[names.index(report.MATMUL) + 1]
    assert after == [tenxor_version.FIRST_DESIGN, "-", "2 s", "-", "-", "-"]
    assert names[-1] == "check() latency"
    _, memory = report.memory_rows(results)
    names = [row[0] for row in memory]
    assert memory[names.index(report.MATMUL) + 1] == [tenxor_version.FIRST_DESIGN, "-", "4 KiB"]
    assert "check() latency" not in names  # no peak measured: no memory row


def test_the_grading_benchmark_grades_a_complete_submission_to_full_marks(capsys):
    from benchmarks import grading_time
    from instructor.sandbox.protections import SandboxMode

    options = ["--repeats", "1", "--exercise", "1.1", "--mode", SandboxMode.SAME_USER.value]
    options += ["--calls", "500"]
    assert grading_time.main([*options, "--no-readme"]) == 0
    printed = capsys.readouterr().out
    from tenxor.course.catalog import BY_ID

    assert "run 1: " in printed and f", score {BY_ID['1.1'].points}\n" in printed
    assert "| complete and correct, 1.1 | 1 |" in printed and "Target: one complete" in printed
    assert "| same user |" in printed and "| isolated |" not in printed


@pytest.mark.parametrize(
    "cold, shell, verdict",
    [(1.4, 0.3, "every row: reached."), (1.6, 0.3, "every row: not reached."),
     (1.4, 0.6, "every row: not reached.")],
)  # fmt: skip
def test_the_latency_targets_hold_only_when_every_progress_row_and_the_shell_do(
    cold: float, shell: float, verdict: str
):
    from benchmarks.check_latency import TARGET_PROGRESS, TARGET_SHELL, outside_markdown

    assert (TARGET_SHELL, TARGET_PROGRESS) == (0.5, 1.5)
    found = {"tenxor check ID": [0.1, shell, shell], "check(), nothing changed": [0.01],
             "tenxor check, nothing remembered": [cold]}  # fmt: skip
    lines = outside_markdown(found)
    assert lines[2] == f"| tenxor check ID | 3 | {shell:.3f} s | {shell:.3f} s |"
    assert verdict in lines[-2]
