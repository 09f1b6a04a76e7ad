"""The check engine: runs a course tree's tests in a separate, limited process (`running`),
with the pytest plugin that records every test's result and failure record (`runner`,
`explain`), and, for `check()`, in a fresh child of a warm worker (`warm`, `worker`). What
they rely on in pytest, hypothesis, NumPy and CPython that those may change is named in one
module, `upstream`.

What the rest of the course and the instructor's tooling use of it is named here. The plugin
itself (`runner`, which imports pytest) is loaded only by the test processes, so a `tenxor
check` in a shell starts without pytest.
"""

from .explain import UNFINISHED, Call, TimeLimitExceeded, call_of, explained, with_calls
from .in_process import tree_to_read
from .running import (
    BOOTSTRAP,
    ISOLATE,
    PLUGIN_OPTIONS,
    SEED_OPTION,
    Limits,
    Result,
    Run,
    exit_in_words,
    function_of,
    record_not_run,
    run_tests,
    short_name,
    start,
    tail,
)
from .warm import SharedWorker, run_checked, stop_worker, use_the_shells_worker, worker_for

__all__ = [
    "BOOTSTRAP",
    "ISOLATE",
    "PLUGIN_OPTIONS",
    "SEED_OPTION",
    "UNFINISHED",
    "Call",
    "Limits",
    "Result",
    "Run",
    "SharedWorker",
    "TimeLimitExceeded",
    "call_of",
    "exit_in_words",
    "explained",
    "record_not_run",
    "run_checked",
    "run_tests",
    "function_of",
    "short_name",
    "start",
    "stop_worker",
    "tail",
    "tree_to_read",
    "use_the_shells_worker",
    "with_calls",
    "worker_for",
]
