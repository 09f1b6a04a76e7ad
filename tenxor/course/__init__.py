"""The course tooling, provided: the exercise catalog, check(), release, grading and verify.

In a notebook: `from tenxor.course import check`, then `check("2.1")` or `check()`.
"""

from .check import check

__all__ = ["check"]
