"""The course tooling a learner gets: the exercise catalog, check() and its engine, hints,
the failure records tests raise, and the test markers (release, grading and verify are the
instructor's, in instructor/).

In a notebook: `from tenxor.course import check`, then `check("2.1")` or `check()`; and
`hand_in()` for your exercise modules in one zip, to hand in.
"""

from .check import check
from .hand_in import hand_in

__all__ = ["check", "hand_in"]
