"""Solution regions: the `# BEGIN SOLUTION <id>` ... `# END SOLUTION <id>` lines around the
reference code of each exercise."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

MARKER = re.compile(r"^(?P<indent>\s*)# (?P<kind>BEGIN|END) SOLUTION (?P<id>\S+)\s*$")


class RegionError(ValueError):
    """Unbalanced, nested or unknown solution markers."""


@dataclass(frozen=True)
class Region:
    """One solution region: the file, the exercise, and its marker lines (1-based)."""

    path: Path
    exercise_id: str
    begin: int
    end: int
    indent: str


def find_regions(path: Path, known_ids: set[str] | None = None) -> list[Region]:
    """The solution regions of one file; raises RegionError naming file and line on bad
    markers (an END without its BEGIN, a region inside a region, an id not in `known_ids`)."""
    regions, open_region = [], None
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        match = MARKER.match(line)
        if not match:
            if re.match(r"\s*#\s*(BEGIN|END)\s+SOLUTION", line):
                raise RegionError(f"{path}:{number}: malformed solution marker: {line.strip()}")
            continue
        kind, exercise_id = match["kind"], match["id"]
        if known_ids is not None and exercise_id not in known_ids:
            raise RegionError(f"{path}:{number}: unknown exercise {exercise_id!r}")
        if kind == "BEGIN":
            if open_region:
                raise RegionError(
                    f"{path}:{number}: BEGIN SOLUTION {exercise_id} inside the region of "
                    f"{open_region[0]} opened at line {open_region[1]}"
                )
            open_region = (exercise_id, number, match["indent"])
        else:
            if not open_region or open_region[0] != exercise_id:
                raise RegionError(
                    f"{path}:{number}: END SOLUTION {exercise_id} without a matching BEGIN"
                )
            regions.append(Region(path, exercise_id, open_region[1], number, open_region[2]))
            open_region = None
    if open_region:
        raise RegionError(
            f"{path}:{open_region[1]}: BEGIN SOLUTION {open_region[0]} is never closed"
        )
    return regions


def regions_in(package: Path, known_ids: set[str] | None = None) -> list[Region]:
    """Every solution region in the .py files below `package`."""
    return [
        region for path in sorted(package.rglob("*.py")) for region in find_regions(path, known_ids)
    ]
