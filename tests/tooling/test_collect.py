"""Canvas's download of submissions becomes a folder per student, named after the Canvas user
id that the roster's ID column holds: the latest upload of each file, a student's zip
unpacked where it cannot leave their folder, late students named, and every file that is not
Canvas's listed."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest

from instructor.cli import main
from instructor.grading.collect import CollectError, collect

pytestmark = pytest.mark.provided


def zipped(files: dict[str, bytes]) -> bytes:
    """A zip holding `files` (name -> bytes), as Canvas or a student makes one."""
    data = io.BytesIO()
    with zipfile.ZipFile(data, "w") as archive:
        for name, content in files.items():
            archive.writestr(name, content)
    return data.getvalue()


DOWNLOAD = {
    "lovelaceada_1001_55501_views.py": b"first = 1\n",
    "lovelaceada_1001_55501_views-1.py": b"second = 2\n",  # uploaded again: the latest
    "lovelaceada_1001_55501_storage.py": b"storage = 1\n",
    "leezoe_LATE_1002_55502_tenxor.zip": zipped({"tenxor/strides.py": b"strides = 1\n"}),
    "dropbob_1003_55503_work.zip": zipped({"../escaped.py": b"outside = 1\n"}),
    "notes.txt": b"not a submission\n",
}


@pytest.fixture
def download(tmp_path: Path) -> Path:
    path = tmp_path / "submissions.zip"
    path.write_bytes(zipped(DOWNLOAD))
    return path


def test_each_student_gets_a_folder_of_their_latest_uploads(download: Path, tmp_path: Path):
    out = tmp_path / "subs"
    collected = collect(download, out)
    assert sorted(path.name for path in out.iterdir()) == ["1001", "1002", "1003"]
    assert (out / "1001" / "views.py").read_bytes() == DOWNLOAD["lovelaceada_1001_55501_views-1.py"]
    assert (out / "1001" / "storage.py").read_bytes() == b"storage = 1\n"
    assert sorted(p.name for p in (out / "1001").iterdir()) == ["storage.py", "views.py"]
    assert (out / "1002" / "tenxor" / "strides.py").read_bytes() == b"strides = 1\n"
    assert collected.late == ["1002"] and collected.names["1002"] == "leezoe"
    assert list((out / "1003").iterdir()) == [], "a zip whose member leaves the folder is kept out"
    assert not list(tmp_path.rglob("escaped.py")), "a member escaped the student's folder"
    left_out = "\n".join(collected.left_out)
    assert "dropbob_1003_55503_work.zip" in left_out and "../escaped.py" in left_out, left_out
    assert "notes.txt" in left_out, left_out


def test_collect_writes_only_a_new_folder(download: Path, tmp_path: Path):
    (tmp_path / "subs").mkdir()
    with pytest.raises(CollectError, match="exists already"):
        collect(download, tmp_path / "subs")
    (tmp_path / "plain.txt").write_text("hello")
    with pytest.raises(CollectError, match="neither a folder nor a zip"):
        collect(tmp_path / "plain.txt", tmp_path / "new")


def test_the_collect_command_lists_late_students_and_what_it_left_out_a_line_each(
    download: Path, tmp_path: Path, capsys
):
    code = main(["collect", str(download), "--out", str(tmp_path / "subs")])
    said = capsys.readouterr().out.splitlines()
    assert code == 0, said
    assert said[0].startswith("3 students in "), said
    late = said.index("Late (Canvas marked them LATE): 1")
    assert said[late + 1] == "  1002 (leezoe)", said
    left = said.index("Left out: 2")
    files = sorted(line.split(":")[0] for line in said[left + 1 : left + 3])
    assert files == ["  dropbob_1003_55503_work.zip", "  notes.txt"], said
