"""Grading a large batch on several machines: each grades a deterministic share of the
students (a shard), and `merge` joins the shards' output folders into one.

    grade --batch subs/ --out grades-2 --shard 2/3     # on the second of three machines
    merge grades --from grades-1 grades-2 grades-3     # then, anywhere

A student's shard depends on their name alone, so every machine agrees on it without
talking to the others, and adding a student moves no one else.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

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

    def takes(self, student: str) -> bool:
        """Whether this shard grades `student`."""
        number = int.from_bytes(hashlib.sha256(student.encode("utf-8")).digest()[:8], "big")
        return number % self.count == self.index - 1

    def share(self, submissions: dict[str, Path]) -> dict[str, Path]:
        """The submissions this shard grades."""
        return {student: folder for student, folder in submissions.items() if self.takes(student)}
