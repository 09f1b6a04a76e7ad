"""Contender: tenxor, the course's reference solutions."""

from __future__ import annotations

import io

import numpy as np

import tenxor
from tenxor import Tenxor
from tenxor.course.check import DONE, check_exercise

NAME = "tenxor"


def convert(array: np.ndarray) -> Tenxor:
    return tenxor.tensor(array)


def to_numpy(result: Tenxor) -> np.ndarray:
    return np.array(result.values(), dtype=float).reshape(result.shape)


def transposed_view(t: Tenxor) -> Tenxor:
    return t.T


def view_chain(a: Tenxor) -> Tenxor:
    v = a.permute(2, 0, 1)[:, ::2, 1:][::-1].unsqueeze(1)
    return v.expand(-1, 3, -1, -1) * 2.0


IMPLEMENTATIONS = {
    "broadcast add": lambda a, b: a + b,
    "transpose, contiguous": lambda a: a.T.contiguous(),
    "sum over each dim": lambda a: tuple(a.sum(dim) for dim in range(a.ndim)),
    "batched matmul": lambda a, b: a @ b,
    "softmax": lambda a: a.softmax(-1),
    "five views, one op": view_chain,
    "GATv2 forward": tenxor.gatv2,
}


def check_latency() -> None:
    """One `check("2.1")` as a learner runs it in a notebook, its printout swallowed. The run
    before the timed ones starts the warm worker, as a notebook's first check does."""
    status = check_exercise("2.1", out=io.StringIO())
    if status.state != DONE:
        raise AssertionError(f'check("2.1") should pass on the reference, got {status.state}')


EXTRAS = {"check() latency": check_latency}  # measured for tenxor only
