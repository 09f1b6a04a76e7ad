"""Which hints a learner has seen, and the next one: `check("2.1", hint=True)` shows the first
hint of exercise 2.1 not yet shown, `check("2.1", hint="all")` every one shown so far again.

How many hints of each exercise have been shown is kept in the course folder (HINTS_FILE), so
the count holds across notebooks, kernels and the shell. The hint texts are in hints.py.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TextIO

from .catalog import Exercise, exercise
from .failure_words import wrapped
from .files import write_atomically
from .hints import HINTS

HINTS_FILE = ".tenxor-hints.json"  # in the course folder: how many hints each exercise has shown


def hints_shown(root: Path) -> dict[str, int]:
    """How many hints of each exercise this learner has seen (nothing, if the file is gone or
    unreadable)."""
    try:
        counts = json.loads((root / HINTS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(counts, dict):
        return {}
    return {key: value for key, value in counts.items() if isinstance(value, int)}


def remember_hints(root: Path, counts: dict[str, int]) -> None:
    """Save how many hints of each exercise have been shown (written whole, then renamed)."""
    write_atomically(root / HINTS_FILE, json.dumps(dict(sorted(counts.items())), indent=1) + "\n")


def hint_lines(item: Exercise, hints: tuple[str, ...], number: int) -> list[str]:
    """Hint `number` (from 1) of an exercise: a heading that says which of how many, then
    its text."""
    heading = f"Exercise {item.id} ({item.title}), hint {number} of {len(hints)}:"
    return [heading, *(f"  {line}" for line in wrapped(hints[number - 1]))]


def next_hint(exercise_id: str, root: Path, again: str | None = None) -> list[str]:
    """The lines that show the next hint of an exercise not yet shown to this learner (after
    the last one, the last one again), remembered in the course folder `root`; `again` is how
    to ask for the next one (default: the notebook's call)."""
    item = exercise(exercise_id)
    hints: tuple[str, ...] = HINTS.get(item.id, ())
    if not hints:
        return [f"Exercise {item.id} has no hints yet."]
    counts = hints_shown(root)
    seen = max(0, counts.get(item.id, 0))
    if seen < len(hints):
        number, lines = seen + 1, []
        counts[item.id] = number
        remember_hints(root, counts)
    else:
        number = len(hints)
        lines = [f"That was the last hint for exercise {item.id}; here it is again."]
    lines += hint_lines(item, hints, number)
    if number < len(hints):
        lines.append(f"""({again or f'check("{item.id}", hint=True)'} again for the next one.)""")
    if number > 1:  # the shell's command (`again`) has its own way to say it
        every = (
            again.replace("--hint", "--all-hints") if again else f'check("{item.id}", hint="all")'
        )
        lines.append(f"({every} shows the {number} so far again.)")
    return lines


def hints_so_far(exercise_id: str, root: Path) -> list[str]:
    """The lines that show again every hint of an exercise this learner has seen, in order;
    no new one is shown."""
    item = exercise(exercise_id)
    hints: tuple[str, ...] = HINTS.get(item.id, ())
    seen = min(len(hints), max(0, hints_shown(root).get(item.id, 0)))
    if not seen:
        first = f'check("{item.id}", hint=True)'
        return [f"No hint of exercise {item.id} has been shown yet: {first} shows the first."]
    return [line for number in range(1, seen + 1) for line in hint_lines(item, hints, number)]


def show_hint(
    exercise_id: str, root: Path, out: TextIO = sys.stdout, again: str | None = None
) -> None:
    """Print the next hint of an exercise."""
    out.write("".join(f"{line}\n" for line in next_hint(exercise_id, root, again)))
