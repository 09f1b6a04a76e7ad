"""A pytest plugin for verify's notebook runs under nbval: what went wrong in a cell, as data.

nbval runs a notebook's code cells in one kernel, each an item named "Cell N" (N counts the
code cells from 0), and fails a cell that raised or whose outputs differ from the stored
ones. This plugin writes one JSON line per failed cell to the file `--cell-findings` names:

    {"notebook": "/.../02_strides.ipynb", "code_cell": 3,
     "raised": ["NotImplementedError", "Exercise 2.1: ..."],   # or null
     "why": "Cell outputs differ",
     "difference": "mismatch 'stdout' ... failed: '(3, 9)\\n' == '(3, 1)\\n'"}
"""

from __future__ import annotations

import json
from typing import Any

import pytest

OPTION = "--cell-findings"
DIFFERENCE_CHARACTERS = 600  # of nbval's account of two outputs that differ
DIFF_MARKS = ("-", "+", "?")  # what begins each line of a line-by-line diff


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(OPTION, metavar="PATH", help="write each failed notebook cell to PATH")


def without_diff(account: list[str]) -> str:
    """nbval's account of two outputs that differ, on one line: the stored value and the
    new one (each a repr on a line of its own), without the line-by-line diff of the two
    that follows them (lines that begin with "-", "+" or "?")."""
    kept = [line.strip() for line in account if not line.strip().startswith(DIFF_MARKS)]
    return " ".join(line for line in kept if line)


def finding(item: Any, error: BaseException) -> dict[str, Any]:
    """What went wrong in the cell of nbval's `item`, which failed with `error`."""
    outputs = item.test_outputs or []
    raised = next((o for o in outputs if o.get("output_type") == "error"), None)
    account = "\n".join(getattr(item, "comparison_traceback", [])).splitlines()
    return {
        "notebook": str(item.path),
        "code_cell": item.cell_num,
        "raised": [raised["ename"], raised["evalue"]] if raised else None,
        "why": str(error),
        "difference": without_diff(account)[:DIFFERENCE_CHARACTERS],
    }


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Any:
    report = (yield).get_result()
    path = item.config.getoption(OPTION)
    if path and report.failed and call.excinfo is not None and hasattr(item, "cell_num"):
        with open(path, "a", encoding="utf-8") as findings:
            findings.write(json.dumps(finding(item, call.excinfo.value)) + "\n")
