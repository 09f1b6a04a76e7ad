"""Files written whole or not at all (tenxor.course.files): the one way the course, check()
and grading write a file that someone may read while it is written."""

from __future__ import annotations

import os

import pytest

from tenxor.course.files import partial_files, write_atomically

pytestmark = pytest.mark.provided


def test_a_file_is_written_whole_and_takes_the_old_ones_place(tmp_path):
    path = tmp_path / "grades" / "gradebook.csv"
    write_atomically(path, "old\n")
    write_atomically(path, "new, and longer than the old\n")
    assert path.read_text(encoding="utf-8") == "new, and longer than the old\n"
    assert [p.name for p in path.parent.iterdir()] == ["gradebook.csv"], "a partial file stayed"


def test_a_write_that_fails_keeps_the_old_file_and_leaves_nothing(tmp_path, monkeypatch):
    path = tmp_path / ".tenxor-hints.json"
    write_atomically(path, "old")

    def full_disk(source: str, target: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", full_disk)
    with pytest.raises(OSError, match="No space left on device"):
        write_atomically(path, "new")
    assert path.read_text(encoding="utf-8") == "old"
    assert [p.name for p in tmp_path.iterdir()] == [".tenxor-hints.json"]


def test_the_partial_file_of_a_write_cut_short_is_found_by_its_files_name(tmp_path):
    for name in (".results.json.k3x.partial", ".report.html.k3x.partial", "results.json"):
        (tmp_path / name).write_text("{", encoding="utf-8")
    assert partial_files(tmp_path, "results.json") == [tmp_path / ".results.json.k3x.partial"]
