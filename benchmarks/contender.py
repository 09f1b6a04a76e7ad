"""One contender, in a process of its own: check every workload against NumPy, then time it.

    python -m benchmarks.contender <module> <size> <repeats>

prints one JSON object: for each workload the contender runs, the seconds of each timed run
and the peak bytes allocated while it ran; the bytes a transposed view of a 1,000,000-element
tensor allocates; and the contender's extra measurements. A result that differs from NumPy's
stops the run with exit code 1 and a message naming the contender, the workload and the
difference.
"""

from __future__ import annotations

import gc
import importlib
import json
import sys
import time
import tracemalloc
from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np

from .workloads import VIEW_SHAPE, WORKLOADS, Workload, inputs

CONTENDERS = ["numpy_version", "loop_version", "tenxor_version", "wrapper"]
RELATIVE, ABSOLUTE = 1e-9, 1e-12
SLOW = 5.0  # seconds: a workload this slow is timed MIN_REPEATS times only
MIN_REPEATS = 3


class WrongResult(AssertionError):
    """A contender's result differs from NumPy's."""


def contender(module: str) -> ModuleType:
    """The contender module `module` of this package."""
    if module not in CONTENDERS:
        raise ValueError(f"unknown contender {module!r}; the contenders are {CONTENDERS}")
    return importlib.import_module(f"{__package__}.{module}")


def compare(name: str, workload: Workload, got: Any, expected: Any, to_numpy: Callable) -> None:
    """Raise WrongResult unless `got` (converted to NumPy) matches NumPy's `expected`."""
    pairs = zip(got, expected) if isinstance(expected, tuple) else [(got, expected)]
    if isinstance(expected, tuple) and len(got) != len(expected):
        count = f"{len(got)} results, NumPy gives {len(expected)}"
        raise WrongResult(f"{name}, {workload.name}: {count}")
    for part, want in pairs:
        have = to_numpy(part)
        if have.shape != want.shape:
            raise WrongResult(f"{name}, {workload.name}: shape {have.shape}, NumPy {want.shape}")
        if not np.allclose(have, want, rtol=RELATIVE, atol=ABSOLUTE):
            worst = float(np.max(np.abs(have - want)))
            raise WrongResult(f"{name}, {workload.name}: differs from NumPy by up to {worst:.3g}")


def seconds(run: Callable[[], Any]) -> float:
    """How long one call of `run` takes, with the garbage collector paused."""
    gc.collect()
    gc.disable()
    try:
        start = time.perf_counter()
        run()
        return time.perf_counter() - start
    finally:
        gc.enable()


def traced(run: Callable[[], Any]) -> tuple[int, int]:
    """The bytes `run` leaves allocated (its result still held) and the most it allocated at
    once, by tracemalloc, which counts NumPy's data too."""
    gc.collect()
    tracemalloc.start()
    try:
        result = run()
        current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    del result
    return current, peak


def peak_bytes(run: Callable[[], Any]) -> int:
    """The most memory allocated at once while `run` runs."""
    return traced(run)[1]


def view_bytes(module: ModuleType) -> int | None:
    """The bytes a transposed view of a 1,000,000-element tensor allocates (None: no views)."""
    if module.transposed_view is None:
        return None
    base = module.convert(np.zeros(VIEW_SHAPE))
    return traced(lambda: module.transposed_view(base))[0]


def measure(module: ModuleType, size: str, repeats: int) -> dict[str, Any]:
    """Check and time every workload of `module`; its extra measurements and view bytes too.

    A workload missing from the module's IMPLEMENTATIONS is left out. A function in its
    PREPARE turns the converted inputs into the ones the implementation takes (the padded
    batch into an edge list, say), before the checked run and untimed.
    """
    results: dict[str, Any] = {"name": module.NAME, "workloads": {}, "extras": {}}
    prepare = getattr(module, "PREPARE", {})
    for workload in WORKLOADS:
        implementation = module.IMPLEMENTATIONS.get(workload.name)
        if implementation is None:
            continue
        arrays = inputs(workload, size)
        converted = [module.convert(a) for a in arrays]
        if workload.name in prepare:
            converted = list(prepare[workload.name](*converted))

        def run(implementation=implementation, converted=converted) -> Any:
            return implementation(*converted)

        first = time.perf_counter()
        compare(module.NAME, workload, run(), workload.numpy(*arrays), module.to_numpy)
        slow = time.perf_counter() - first > SLOW
        count = min(repeats, MIN_REPEATS) if slow else repeats
        results["workloads"][workload.name] = {
            "seconds": [seconds(run) for _ in range(count)],
            "peak_bytes": peak_bytes(run),
        }
    for name, make in getattr(module, "EXTRAS", {}).items():
        extra = make(size)
        extra()  # once before timing: it must succeed
        results["extras"][name] = {"seconds": [seconds(extra) for _ in range(repeats)]}
        if name in getattr(module, "EXTRA_MEMORY", ()):  # the extras whose peak means something
            results["extras"][name]["peak_bytes"] = peak_bytes(extra)
    results["view_bytes"] = view_bytes(module)
    return results


def main(argv: list[str]) -> int:
    module, size, repeats = contender(argv[0]), argv[1], int(argv[2])
    try:
        results = measure(module, size, repeats)
    except WrongResult as wrong:
        print(f"wrong result: {wrong}", file=sys.stderr)
        return 1
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
