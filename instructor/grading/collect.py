"""Canvas's download of an assignment's submissions, as a folder per student for a batch.

Canvas's "Download Submissions" gives one flat zip: every file a student uploaded, named
`<name>_<user id>_<submission id>_<file>` (`<name>_LATE_<user id>_...` when it came after the
due date), where <name> is the student's name run together, lower case. A file uploaded again
under the same name gets a number (`views-1.py`). `collect` writes a folder per student,
named after their Canvas user id (the roster's ID column, so `export` matches it), holding
their files under the names they uploaded, the latest upload of each; a zip a student
uploaded is unpacked into their folder, with no path leaving it, no link and a cap on its size.
A file that does not follow Canvas's naming is listed, never dropped in silence.

    collected = collect(Path("submissions.zip"), Path("subs"))
"""

from __future__ import annotations

import re
import shutil
import stat
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

CANVAS_NAME = re.compile(
    r"^(?P<name>[^_]+)_(?:(?P<late>LATE)_)?(?P<user>\d+)_(?P<submission>\d+)_(?P<file>.+)$"
)
UPLOADED_AGAIN = re.compile(r"^(?P<stem>.+)-(?P<number>\d+)(?P<suffix>\.[^.]+)$")
MAX_UNPACKED_BYTES = 20_000_000  # what a student's zip may hold in all, unpacked
MAX_MEMBERS = 10_000  # the files a student's zip may hold


class CollectError(ValueError):
    """A download that cannot be collected: it is not a folder or zip, or the output exists."""


@dataclass
class Collected:
    """What collect made: the students' folders, who was late, and what it left out."""

    students: dict[str, Path] = field(default_factory=dict)  # user id -> their folder
    late: list[str] = field(default_factory=list)  # user ids of late submissions
    names: dict[str, str] = field(default_factory=dict)  # user id -> name as Canvas wrote it
    left_out: list[str] = field(default_factory=list)  # files, each with why


@dataclass(frozen=True)
class Upload:
    """One file of Canvas's download, read from its name."""

    user: str
    name: str
    late: bool
    file: str  # the name the student gave it
    number: int  # 0 for a first upload, N for a file Canvas renamed "<stem>-N<suffix>"


def upload_of(filename: str) -> Upload | None:
    """What Canvas's name of a downloaded file says, or None if it is not one of Canvas's.

    >>> upload_of("lovelaceada_LATE_1001_55501_views-2.py")
    Upload(user='1001', name='lovelaceada', late=True, file='views.py', number=2)
    """
    found = CANVAS_NAME.match(filename)
    if found is None:
        return None
    file, number = found["file"], 0
    again = UPLOADED_AGAIN.match(file)
    if again is not None:
        file, number = again["stem"] + again["suffix"], int(again["number"])
    return Upload(found["user"], found["name"], found["late"] is not None, file, number)


def unpack(archive: Path, folder: Path) -> str | None:
    """Unpack a zip into `folder`; why it was not, if it was not: a member whose path leaves
    the folder or is a link, more than MAX_MEMBERS files or MAX_UNPACKED_BYTES in all."""
    try:
        with zipfile.ZipFile(archive) as opened:
            members = [m for m in opened.infolist() if not m.is_dir()]
            if len(members) > MAX_MEMBERS:
                return f"it holds more than {MAX_MEMBERS} files"
            for member in members:
                path = PurePosixPath(member.filename)
                if path.is_absolute() or ".." in path.parts or "\\" in member.filename:
                    return f"its member {member.filename!r} would leave the student's folder"
                if stat.S_ISLNK(member.external_attr >> 16):
                    return f"its member {member.filename!r} is a link"
            if sum(member.file_size for member in members) > MAX_UNPACKED_BYTES:
                return f"it holds more than {MAX_UNPACKED_BYTES} bytes unpacked"
            for member in members:
                target = folder / member.filename
                target.parent.mkdir(parents=True, exist_ok=True)
                with opened.open(member) as source, target.open("wb") as sink:
                    shutil.copyfileobj(source, sink)
    except (zipfile.BadZipFile, OSError) as error:
        return f"it cannot be unpacked ({error})"
    return None


def downloaded_files(download: Path, scratch: Path) -> list[Path]:
    """The files of Canvas's download: the zip unpacked into `scratch`, or the folder's."""
    if download.is_dir():
        return sorted(path for path in download.iterdir() if path.is_file())
    if zipfile.is_zipfile(download):
        problem = unpack(download, scratch)
        if problem:
            raise CollectError(f"{download}: {problem}")
        return sorted(path for path in scratch.rglob("*") if path.is_file())
    raise CollectError(f"{download} is neither a folder nor a zip of Canvas's download")


def collect(download: Path, out: Path) -> Collected:
    """A folder per student in `out` (which must not exist) from Canvas's `download`."""
    if out.exists():
        raise CollectError(f"{out} exists already; collect writes a new folder")
    collected = Collected()
    with tempfile.TemporaryDirectory() as scratch:
        uploads: dict[tuple[str, str], tuple[Upload, Path]] = {}
        for path in downloaded_files(download, Path(scratch)):
            upload = upload_of(path.name)
            if upload is None:
                collected.left_out.append(f"{path.name}: not named as Canvas names a download")
                continue
            kept = uploads.get((upload.user, upload.file))
            if kept is None or upload.number > kept[0].number:
                uploads[(upload.user, upload.file)] = (upload, path)
        out.mkdir(parents=True)
        for (user, file), (upload, path) in sorted(uploads.items()):
            folder = collected.students.setdefault(user, out / user)
            folder.mkdir(exist_ok=True)
            collected.names[user] = upload.name
            if upload.late and user not in collected.late:
                collected.late.append(user)
            if Path(file).suffix == ".zip":
                problem = unpack(path, folder)
                if problem:
                    collected.left_out.append(f"{path.name}: {problem}")
            else:
                shutil.copyfile(path, folder / Path(file).name)
    return collected
