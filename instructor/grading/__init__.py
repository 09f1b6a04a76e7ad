"""Grade submissions: a Gradescope `results.json` per student and one `gradebook.csv`.

Only the exercise modules (tenxor/storage.py, tenxor/strides.py, ...) are taken from a
submission. They never run in the grading process, nor in the process that runs the tests
and decides every result (the judge, instructor.grading.judge): they go into the release's
package and run in a sandbox worker (instructor.sandbox.worker), which exchanges only plain
data with the judge. The judge runs the instructor's public and hidden tests in a copy of the
instructor's tree whose exercise functions are stubs, each exercise function calling into the
worker.
A module that is missing, not UTF-8, does not compile or does not import is replaced by its
stub, so it costs only its own exercises. Scores are counted against the tests collected from
the instructor's tree: a test that is missing, crashed or never ran scores 0.

In layers, each importing only those above it:

    credit      the partial-credit rules (cases, functions, all-or-nothing) as pure scoring
    intake      the exercise modules taken from a submission, and what became of its files
    preloaded   the batch's starter: forks its judges with their libraries imported once
    setup       the sandbox mode, the judge's tree and the folders a worker must not see
    judge_run   the judges' runs and their report logs read as data; the examples' recorders
    gradescope  the results.json of one submission: entries, summary, protections, limits
    student_report  a student's report.html, from their results alone
    batch       a batch of students: resume, results files, gradebook, progress
"""

from typing import Any

__all__ = [
    "DEFAULT_CREDIT",
    "EXAMPLES",
    "GradingOptions",
    "EXERCISE_MODULES",
    "GRADING_LIMITS",
    "JUDGE_SETTINGS",
    "JUDGE_TREE_EXCLUDED",
    "Assembly",
    "Credit",
    "grade_batch",
    "grading_options",
    "namespaces_allowed",
    "read_report_log",
    "results_json",
    "students_in",
]


def __getattr__(name: str) -> Any:
    """The names of __all__, imported when one is first asked for: a judge process loads
    this package for its module judge.py alone, and needs none of them."""
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from instructor.sandbox.interface import namespaces_allowed

    from .batch import GradingOptions, grade_batch, students_in
    from .credit import DEFAULT_CREDIT, Credit
    from .gradescope import results_json
    from .intake import EXERCISE_MODULES, Assembly
    from .judge_run import JUDGE_SETTINGS, grading_options, read_report_log
    from .setup import EXAMPLES, GRADING_LIMITS, JUDGE_TREE_EXCLUDED

    exported = {
        "DEFAULT_CREDIT": DEFAULT_CREDIT, "EXAMPLES": EXAMPLES, "GradingOptions": GradingOptions,
        "EXERCISE_MODULES": EXERCISE_MODULES, "GRADING_LIMITS": GRADING_LIMITS,
        "JUDGE_SETTINGS": JUDGE_SETTINGS, "JUDGE_TREE_EXCLUDED": JUDGE_TREE_EXCLUDED,
        "Assembly": Assembly, "Credit": Credit, "grade_batch": grade_batch,
        "grading_options": grading_options, "namespaces_allowed": namespaces_allowed,
        "read_report_log": read_report_log, "results_json": results_json,
        "students_in": students_in,
    }  # fmt: skip
    globals().update(exported)
    return exported[name]
