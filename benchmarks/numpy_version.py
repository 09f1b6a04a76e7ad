"""Contender: NumPy, the practical limit. Its functions are the oracle's own."""

from __future__ import annotations

import numpy as np

from .workloads import WORKLOADS

NAME = "NumPy"


def convert(array: np.ndarray) -> np.ndarray:
    return array.copy()


def to_numpy(result: np.ndarray) -> np.ndarray:
    return result


def transposed_view(t: np.ndarray) -> np.ndarray:
    return t.T


IMPLEMENTATIONS = {workload.name: workload.numpy for workload in WORKLOADS}
