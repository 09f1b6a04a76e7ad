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


def test_targets_say_which_ratios_reach_them():
    def timed(seconds: float, **other: float) -> dict:
        workloads = {w.name: {"seconds": [other.get(w.name, seconds)]} for w in WORKLOADS}
        return {"workloads": workloads, "extras": {}}

    edges = {report.EDGES_16: 0.4, "GATv2 edges, N=64": 3.5}
    results = {report.LOOP: timed(1.0), report.TENXOR: {**timed(1.5, **edges), "view_bytes": 100},
               report.WRAPPER: timed(45.0)}  # fmt: skip
    lines = report.target_lines(results)
    assert lines[0].count("NOT reached") == 2  # 1.5x the loop: slower than the floor
    assert "NOT reached" not in lines[1] and lines[1].count("1.50 (reached)") == 4
    assert lines[2].count("30.00 (reached)") == 2
    assert lines[3].endswith(f"{report.DENSE_16} / {report.EDGES_16} 3.75 (reached)")
    assert "0.40 (reached)" in lines[4] and "3.50 (NOT reached)" in lines[4]
    assert lines[5].endswith("100 B (reached)")


def test_a_target_whose_contender_left_a_workload_out_is_not_measured():
    results = {report.TENXOR: {"workloads": {}, "extras": {}, "view_bytes": 100}}
    assert report.target_lines(results)[3].endswith(": not measured")
    assert report.ratio(report.medians(results), report.TENXOR, report.LOOP, "softmax") is None


def test_the_grading_benchmark_grades_a_complete_submission_to_full_marks(capsys):
    from benchmarks import grading_time
    from instructor.protections import SandboxMode

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
