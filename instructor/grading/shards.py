"""Grading a large batch on several machines: each grades a deterministic share of the
students (a shard), and `merge` joins the shards' output folders into one.

    grade --batch subs/ --out grades-2 --shard 2/3     # on the second of three machines
    merge grades grades-1 grades-2 grades-3            # then, anywhere

The shares balance the work of grading, not the number of students: a student weighs what
their submission asks of the judges (see intake.work_of), or the seconds an earlier grading
of the batch took for them (`timed`), and the heaviest are dealt first, each to the lightest
share so far. Every machine reads the same batch folder (and the same earlier grading), so
every one deals the same shares without talking to the others:

    >>> shares({"ada": 9, "ben": 5, "cleo": 4, "dev": 1}, 2)
    [['ada', 'dev'], ['ben', 'cleo']]
"""

from __future__ import annotations

import re
from dataclasses import dataclass

SHARD = re.compile(r"^(\d+)/(\d+)$")


@dataclass(frozen=True)
class Shard:
    """The `index`-th of `count` shares of a batch (counting from 1)."""

    index: int
    count: int

    @classmethod
    def parse(cls, text: str) -> Shard:
        """A shard from "K/N", or a ValueError naming the text."""
        found = SHARD.match(text.strip())
        if not found or not 1 <= int(found[1]) <= int(found[2]):
            raise ValueError(f"a shard is K/N with 1 <= K <= N, got {text!r}")
        return cls(int(found[1]), int(found[2]))

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def share(self, work: dict[str, float]) -> list[str]:
        """The students this shard grades, given every student's work."""
        return shares(work, self.count)[self.index - 1]


def shares(work: dict[str, float], count: int) -> list[list[str]]:
    """`count` shares of the students of `work` (student -> work) whose totals are as even
    as dealing the heaviest first to the lightest share makes them; each share by name."""
    totals, members = [0.0] * count, [[] for _ in range(count)]
    for student in sorted(work, key=lambda name: (-work[name], name)):
        lightest = min(range(count), key=lambda k: (totals[k], k))
        totals[lightest] += work[student]
        members[lightest].append(student)
    return [sorted(share) for share in members]


def timed(work: dict[str, int], seconds: dict[str, float]) -> dict[str, float]:
    """Each student's work in seconds: what an earlier grading took for them where it says,
    else their `work` at the seconds a unit of work took the students it timed. A grading
    time sees what sizes cannot: a submission that hangs or crashes costs its limits.

        >>> timed({"ada": 10, "ben": 20}, {"ada": 5.0})
        {'ada': 5.0, 'ben': 10.0}
    """
    seconds = {student: time for student, time in seconds.items() if student in work}
    known = sum(work[student] for student in seconds)
    if not known:
        return dict(work)
    rate = sum(seconds.values()) / known
    return {student: seconds.get(student, work[student] * rate) for student in work}
