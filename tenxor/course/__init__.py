"""The course tooling a learner gets: the exercise catalog, check() and its engine, hints,
the failure records tests raise, and the test markers (release, grading and verify are the
instructor's, in instructor/).

In a notebook: `from tenxor.course import check`, then `check("2.1")` or `check()`.
"""

from .check import check

__all__ = ["check"]
