"""The `tenxor-instructor` command: publish the student release, prove every exercise is
graded, grade submissions. It lives in the instructor's tree only; the release leaves it out."""

from __future__ import annotations

import argparse
import signal
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

from tenxor.course.catalog import BY_ID, CATALOG, CHAPTERS
from tenxor.course.cli import course_option, root_of, run

from .authoring.verify import GATES
from .grading.credit import DEFAULT_CREDIT, Credit
from .sandbox.interface import SandboxMode

AUTO = "auto"  # --sandbox: the strongest sandbox this machine allows
LISTED = 10  # the folders named when a folder given as one submission holds several

DESCRIPTION = """\
The instructor's course tools (the learner's are `tenxor check` and `tenxor draw`).

  tenxor-instructor release FOLDER     write the student release (solutions stubbed)
  tenxor-instructor release --solutions FOLDER
                                       the solutions release, for after the deadline
  tenxor-instructor verify             run the gates that prove every exercise is graded
  tenxor-instructor collect ZIP --out DIR
                                       Canvas's download of submissions, a folder per student
  tenxor-instructor grade SUBMISSION   grade one submission, a folder or a zip: results.json and
                                       gradebook.csv
  tenxor-instructor grade --batch DIR  grade every sub-folder of DIR (one per student); resumable
  tenxor-instructor merge OUT SHARD... join shard outputs (grade --shard K/N) into one
  tenxor-instructor export GRADES --canvas ROSTER.csv
                                       the grades as Canvas's gradebook imports them
  tenxor-instructor report GRADES      the class report: where the class is stuck
  tenxor-instructor autograder         write autograder.zip for Gradescope
  tenxor-instructor site OUT           the course as a static site that runs in the browser
  tenxor-instructor pyodide DIR        Pyodide, checked against its lock, for a site offline

Run `tenxor-instructor COMMAND --help` for the options of a command.
"""


def command_release(arguments: argparse.Namespace) -> int:
    from .authoring.release import write_release, write_solutions

    write, name = (
        (write_solutions, "solutions release")
        if arguments.solutions
        else (write_release, "student release")
    )
    written = write(root_of(arguments), arguments.folder, replace=arguments.replace)
    print(f"Wrote the {name} to {arguments.folder} ({len(written)} files).")
    return 0


def selected_exercises(arguments: argparse.Namespace) -> list[str]:
    """The exercises named by --exercise and --chapter (all when neither is given)."""
    chosen = list(arguments.exercise or [])
    for chapter in arguments.chapter or []:
        chosen += [item.id for item in CATALOG if str(item.chapter.number) == chapter]
    unknown = [exercise_id for exercise_id in chosen if exercise_id not in BY_ID]
    if unknown or (arguments.chapter and not chosen):
        raise SystemExit(
            f"tenxor-instructor grade: no exercise {', '.join(unknown or arguments.chapter)}"
        )
    return sorted(set(chosen), key=list(BY_ID).index) or list(BY_ID)


def grading_options(arguments: argparse.Namespace) -> Any:
    """The GradingOptions that `grade`'s arguments ask for."""
    from dataclasses import replace

    from .grading import EXAMPLES, GRADING_LIMITS, GradingOptions

    limits = replace(
        GRADING_LIMITS,
        call_cpu_seconds=arguments.call_seconds or GRADING_LIMITS.call_cpu_seconds,
        exercise_cpu_seconds=arguments.exercise_seconds or GRADING_LIMITS.exercise_cpu_seconds,
        memory_mb=arguments.memory_mb or GRADING_LIMITS.memory_mb,
    )
    return GradingOptions(
        selection=selected_exercises(arguments),
        limits=limits,
        jobs=arguments.jobs,
        single=not arguments.batch,
        sandbox=None if arguments.sandbox == AUTO else SandboxMode(arguments.sandbox),
        profile=EXAMPLES[arguments.examples],
        credit=Credit(arguments.credit),
        regrade=arguments.regrade,
        shard=arguments.shard,
        unprotected=arguments.unprotected,
        times_from=arguments.times_from,
    )


def submissions_of(arguments: argparse.Namespace, scratch: Path) -> dict[str, Path]:
    """The submissions `grade` is given, by student: one folder or zip (unpacked into
    `scratch`, the student named after it), or each of a batch's folders."""
    from .grading import students_in
    from .grading.collect import unpack

    source = arguments.submission.resolve()
    if not arguments.batch and source.is_file() and zipfile.is_zipfile(source):
        folder = scratch / source.stem
        problem = unpack(source, folder)
        if problem:
            raise SystemExit(f"tenxor-instructor grade: {source}: {problem}")
        return {source.stem: folder}
    if not source.is_dir():
        raise SystemExit(f"tenxor-instructor grade: {source} is not a folder or a zip")
    if not arguments.batch:
        if not arguments.single:
            refuse_several(source)
        return {source.name: source}
    submissions = students_in(source)
    if not submissions:
        raise SystemExit(f"tenxor-instructor grade: {source} holds no submission folders")
    return submissions


def refuse_several(source: Path) -> None:
    """Exit, naming them, if the folder `source`, given as one submission, holds several."""
    from .grading.batch import shown
    from .grading.intake import entries_of, submissions_within

    folders = submissions_within(entries_of(source))
    if folders:
        listed = ", ".join(map(shown, folders[:LISTED]))
        more = f" and {len(folders) - LISTED} more" if len(folders) > LISTED else ""
        raise SystemExit(
            f"tenxor-instructor grade: {source} holds several submissions, not one: its "
            f"folders {listed}{more} each hold exercise modules. Nothing was graded. Grade "
            f"each folder as a student with `tenxor-instructor grade --batch {source}`; if it "
            "is one student's submission after all, --single grades it as one (the shallowest "
            "copy of each module)."
        )


def command_grade(arguments: argparse.Namespace) -> int:
    from .grading import grade_batch
    from .grading.batch import UnrecordedResults
    from .grading.setup import GradingRefused

    options, output = grading_options(arguments), arguments.out.resolve()
    signal.signal(signal.SIGTERM, interrupted)  # a scheduler's stop, as Ctrl-C
    try:
        with tempfile.TemporaryDirectory(prefix="tenxor-unpacked-") as scratch:
            submissions = submissions_of(arguments, Path(scratch))
            gradebook = grade_batch(root_of(arguments), submissions, output, options, report=print)
    except (GradingRefused, OSError, UnrecordedResults) as error:
        raise SystemExit(f"tenxor-instructor grade: {error}") from None
    except KeyboardInterrupt:
        print(
            f"Stopped before every student was graded. The results of those graded are kept "
            f"in {output}; run the same command again to grade the others."
        )
        return 130
    print(f"Gradebook: {gradebook}")
    return 0


def interrupted(signum: int, frame: Any) -> None:
    """SIGTERM while grading: stop as Ctrl-C does, cleaning up on the way out."""
    raise KeyboardInterrupt


def command_merge(arguments: argparse.Namespace) -> int:
    from .grading.batch import GRADEBOOK
    from .grading.merge import MergeError, merge_shards

    shards = [folder.resolve() for folder in arguments.shards]
    try:
        merged = merge_shards(shards, arguments.out, partial=arguments.partial)
    except MergeError as error:
        raise SystemExit(f"tenxor-instructor merge: {error}") from None
    print(f"Gradebook: {arguments.out / GRADEBOOK} ({len(merged.students)} students)")
    if merged.missing:
        print(f"Partial: {'; '.join(merged.missing)}.")
        print(f"Not in {arguments.out}: {len(merged.not_merged)} students of the batch.")
    return write_report(arguments.out.resolve(), None, "merge")


def command_collect(arguments: argparse.Namespace) -> int:
    from .grading.collect import CollectError, collect

    try:
        collected = collect(arguments.download, arguments.out)
    except CollectError as error:
        raise SystemExit(f"tenxor-instructor collect: {error}") from None
    print(f"{len(collected.students)} students in {arguments.out}, a folder each named after "
          "their Canvas user id (the roster's ID column)")  # fmt: skip
    if collected.late:
        print(f"Late (Canvas marked them LATE): {len(collected.late)}")
        for user in collected.late:
            print(f"  {user} ({collected.names[user]})")
    if collected.left_out:
        print(f"Left out: {len(collected.left_out)}")
        for line in collected.left_out:
            print(f"  {line}")
    return 0


def command_export(arguments: argparse.Namespace) -> int:
    from tenxor.course.files import write_atomically

    from .grading.batch import CANVAS, UnrecordedResults, recorded_results, shown
    from .grading.canvas import RosterError, canvas_export, read_roster

    try:
        roster = read_roster(arguments.canvas)
        export = canvas_export(recorded_results(arguments.grades), roster, arguments.assignment)
    except (RosterError, UnrecordedResults, OSError) as error:
        raise SystemExit(f"tenxor-instructor export: {error}") from None
    out = arguments.out or arguments.grades / CANVAS
    try:
        write_atomically(out, export.text)
    except OSError as error:
        raise SystemExit(f"tenxor-instructor export: cannot write {out}: {error}") from None
    print(f"Canvas gradebook import: {out} ({len(roster) - len(export.not_graded)} grades)")
    if export.not_in_roster:
        print(f"Graded but in no roster row (not exported): {len(export.not_in_roster)}")
        for student in export.not_in_roster:
            closest = export.closest.get(student)
            print(f"  {shown(student)}" + (f"  (closest roster row: {closest})" if closest else ""))
    if export.not_graded:
        print(f"In the roster but not graded (left empty): {len(export.not_graded)}")
        for name in export.not_graded:
            print(f"  {shown(name)}")
    return 1 if export.not_in_roster else 0


def shard_of(text: str) -> Any:
    """--shard K/N as a Shard."""
    from .grading.shards import Shard

    try:
        return Shard.parse(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def command_verify(arguments: argparse.Namespace) -> int:
    from .authoring.verify import Scope, verify

    gates = tuple(arguments.gate or GATES)
    known = {chapter.number for chapter in CHAPTERS}
    unknown = [number for number in arguments.chapter or [] if number not in known]
    if unknown:
        raise SystemExit(f"tenxor-instructor verify: no chapter {', '.join(map(str, unknown))}")
    verdicts = verify(root_of(arguments), gates, scope=Scope(tuple(arguments.chapter or ())))
    failed = [gate.name for gate in verdicts if not gate.passed]
    print("verify: every gate passed" if not failed else f"verify: FAILED: {', '.join(failed)}")
    return 1 if failed else 0


def command_report(arguments: argparse.Namespace) -> int:
    return write_report(arguments.grades.resolve(), arguments.out, "report")


def write_report(grades: Path, out: Path | None, command: str) -> int:
    """Write the class report of the grading output `grades` (to `out`, by default into it),
    or exit saying, as tenxor-instructor `command`, why it cannot."""
    import importlib.util

    from .grading.batch import CLASS_REPORT, UnrecordedResults
    from .grading.class_report import write_class_report

    if not grades.is_dir():
        raise SystemExit(f"tenxor-instructor {command}: {grades} is not a folder")
    if importlib.util.find_spec("matplotlib") is None:
        raise SystemExit(
            f"tenxor-instructor {command}: the class report draws with matplotlib: "
            "pip install 'tenxor[report]'"
        )
    try:
        written = write_class_report(grades, out or grades / CLASS_REPORT)
    except UnrecordedResults as error:
        raise SystemExit(f"tenxor-instructor {command}: {error}") from None
    print(f"Class report: {written}")
    return 0


def command_autograder(arguments: argparse.Namespace) -> int:
    from .grading.autograder import write_autograder
    from .grading.wheels import Target

    target = Target(arguments.python_version, tuple(arguments.platform or ()))
    names = write_autograder(root_of(arguments), arguments.out, target)  # IncompleteWheels
    wheels = sum(name.startswith("wheels/") for name in names)
    print(f"Wrote {arguments.out}: the course, setup.sh, run_autograder and {wheels} wheels.")
    print("Upload it as the autograder of a Gradescope assignment (Configure Autograder).")
    return 0


def command_site(arguments: argparse.Namespace) -> int:
    from .authoring.site import build_site

    pyodide = arguments.pyodide.resolve() if arguments.pyodide else None
    try:
        out = build_site(root_of(arguments), arguments.out, pyodide)
    except (OSError, ValueError, RuntimeError) as error:
        raise SystemExit(f"tenxor-instructor site: {error}") from None
    where = "its own copy of Pyodide" if pyodide else "Pyodide from its CDN"
    print(f"Wrote the course's browser site to {out}, with {where}.")
    print(f"Try it: python3 -m http.server -d {out} 8000, then open http://127.0.0.1:8000/")
    return 0


def command_pyodide(arguments: argparse.Namespace) -> int:
    from .authoring.pyodide import PYODIDE_VERSION, assemble_pyodide

    try:
        names = assemble_pyodide(arguments.folder)
    except (OSError, ValueError, KeyError, RuntimeError) as error:
        raise SystemExit(f"tenxor-instructor pyodide: {error}") from None
    print(f"Wrote Pyodide {PYODIDE_VERSION} to {arguments.folder} with {len(names)} packages, "
          "each checked against its lock.")  # fmt: skip
    print(f"Use it: tenxor-instructor site OUT --pyodide {arguments.folder}")
    return 0


def add_site(commands: Any) -> None:
    """The `site` and `pyodide` commands: the course in the browser."""
    site = commands.add_parser(
        "site",
        help="write the course as a static site that runs in the browser",
        description=(
            "Write the student release as a JupyterLite site: the notebooks, the tenxor "
            "package and its public tests as files learners edit in the browser, and the "
            "wheels check() needs. Serve the folder as it is (GitHub Pages, any web server)."
        ),
    )
    site.add_argument("out", type=Path, help="where to write it (replaced if it exists)")
    site.add_argument(
        "--pyodide",
        type=Path,
        metavar="DIR",
        help="a copy of Pyodide (from `tenxor-instructor pyodide DIR`) to host with the site, "
        "instead of loading it from its CDN",
    )
    course_option(site)
    site.set_defaults(run=command_site)
    pyodide = commands.add_parser(
        "pyodide", help="fetch Pyodide, checked against its lock, for a site hosted offline"
    )
    pyodide.add_argument("folder", type=Path, help="where to write it")
    pyodide.set_defaults(run=command_pyodide)


def add_release(commands: Any) -> None:
    """The `release` command: the student release, or the solutions."""
    release = commands.add_parser("release", help="write the student release into a folder")
    release.add_argument("folder", type=Path, help="where to write it (must not exist yet)")
    release.add_argument("--replace", action="store_true", help="replace an existing release")
    release.add_argument(
        "--solutions",
        action="store_true",
        help="write the solutions release instead: every solution filled in (after the deadline)",
    )
    course_option(release)
    release.set_defaults(run=command_release)


def add_grade(commands: Any) -> None:
    """The `grade` command: one submission, or a folder of them."""
    grade = commands.add_parser(
        "grade",
        help="grade one submission, or a folder of them",
        description=(
            "Grade submissions with the course's public and hidden tests. A submission is a "
            "folder or a zip (as hand_in() writes it). Only the exercise "
            "modules (tenxor/storage.py, tenxor/strides.py, ...) are taken from a submission, "
            "found at their place, in a tenxor/ folder at any depth, or loose at its top. "
            "A folder given as one submission that holds several (none of the modules at its "
            "top, the same module in two or more of its folders) is refused: grade it with "
            "--batch, or with --single if it is one student's. "
            "Writes a Gradescope results.json and a report.html (the student's page) per student "
            "and a gradebook.csv into --out. "
            "A batch that is interrupted resumes where it stopped when run again."
        ),
    )
    grade.add_argument(
        "submission",
        type=Path,
        help="a submission folder or zip (or, with --batch, a folder of submission folders)",
    )
    kind = grade.add_mutually_exclusive_group()
    kind.add_argument(
        "--batch", action="store_true", help="SUBMISSION holds one folder per student"
    )
    kind.add_argument(
        "--single",
        action="store_true",
        help="SUBMISSION is one student's, even where several of its folders hold exercise "
        "modules (taking the shallowest copy of each); without it, such a folder is refused "
        "as a folder of submissions",
    )
    grade.add_argument(
        "--out", type=Path, default=Path("grades"), help="output folder (default: grades)"
    )
    grade.add_argument(
        "--exercise", action="append", metavar="ID", help="grade only this exercise (repeatable)"
    )
    grade.add_argument(
        "--chapter", action="append", metavar="N", help="grade only this chapter (repeatable)"
    )
    grade.add_argument("--jobs", type=int, default=1, help="submissions graded at once (default 1)")
    limit_options(grade)
    scoring_options(grade)
    shard_options(grade)
    course_option(grade)
    grade.set_defaults(run=command_grade)


def limit_options(grade: argparse.ArgumentParser) -> None:
    """`grade`'s options of the sandbox: its mode and the limits of submitted code."""
    grade.add_argument(
        "--call-seconds",
        type=float,
        metavar="S",
        help="CPU seconds per call of a submitted function (default 10)",
    )
    grade.add_argument(
        "--exercise-seconds",
        type=float,
        metavar="S",
        help="CPU seconds for all calls of one exercise (default 60)",
    )
    grade.add_argument(
        "--memory-mb", type=int, metavar="MB", help="memory of the sandbox worker (default 2048)"
    )
    grade.add_argument(
        "--sandbox",
        choices=[AUTO, *SandboxMode],
        default=AUTO,
        help="how far to confine submitted code (default: the most this machine allows)",
    )
    grade.add_argument(
        "--unprotected",
        action="store_true",
        help="grade a batch even where no sandbox can hide anything from submitted code "
        "(without root, where bubblewrap may not make user namespaces)",
    )


def scoring_options(grade: argparse.ArgumentParser) -> None:
    """`grade`'s options of scoring: the examples, partial credit, grading again."""
    grade.add_argument(
        "--examples",
        choices=["10", "100", "1000"],
        default="100",
        help="examples each property test tries, the same on every run (default 100)",
    )
    grade.add_argument(
        "--credit",
        choices=list(Credit),
        default=DEFAULT_CREDIT.value,
        help="partial credit of an exercise: each test case counts once (cases), each test "
        "function counts once and only when all its cases pass (functions), or the points "
        f"only when every test passes (all-or-nothing); default {DEFAULT_CREDIT}",
    )
    grade.add_argument(
        "--regrade",
        action="store_true",
        help="grade every student again (otherwise only those whose submission, the tests, the "
        "reference or the settings changed since their last grading)",
    )


def shard_options(grade: argparse.ArgumentParser) -> None:
    """`grade`'s options for a batch graded in shards, on several machines."""
    grade.add_argument(
        "--shard",
        type=shard_of,
        metavar="K/N",
        help="grade only the K-th of N deterministic shares of the batch (join them with merge)",
    )
    grade.add_argument(
        "--times-from",
        type=Path,
        metavar="DIR",
        help="deal the shards by the grading times of an earlier output of this batch (whole "
        "or merged), where it has them; give every shard the same DIR",
    )


def add_merge(commands: Any) -> None:
    """The `merge` command: the shards of a batch joined into one output."""
    merge = commands.add_parser(
        "merge", help="join the output folders of a batch graded in shards into one"
    )
    merge.add_argument("out", type=Path, help="the folder to write (new or empty)")
    merge.add_argument("shards", type=Path, nargs="+", metavar="SHARD", help="shard outputs")
    merge.add_argument(
        "--partial",
        action="store_true",
        help="merge shards that lack part of the batch (a shard, or students a shard has no "
        "results for), saying what is missing, in the output and its class report too",
    )
    merge.set_defaults(run=command_merge)


def add_export(commands: Any) -> None:
    """The `export` command: the grades as Canvas imports them."""
    export = commands.add_parser("export", help="write the grades as Canvas imports them")
    export.add_argument("grades", type=Path, help="a grading output folder")
    export.add_argument(
        "--canvas",
        type=Path,
        required=True,
        metavar="ROSTER.csv",
        help="Canvas's gradebook export, whose rows the students are matched to",
    )
    export.add_argument("--out", type=Path, help="default: GRADES/canvas.csv")
    export.add_argument(
        "--assignment",
        default="tenxor",
        help='the grade column: a new assignment, or an existing one as "Name (id)"',
    )
    export.set_defaults(run=command_export)


def add_collect(commands: Any) -> None:
    """The `collect` command: Canvas's download of submissions, a folder per student."""
    collect = commands.add_parser(
        "collect", help="turn Canvas's download of submissions into a folder per student"
    )
    collect.add_argument(
        "download", type=Path, help="Canvas's submissions.zip (Download Submissions), or its folder"
    )
    collect.add_argument(
        "--out", type=Path, required=True, help="the folder to write (must not exist yet)"
    )
    collect.set_defaults(run=command_collect)


def add_verify(commands: Any) -> None:
    """The `verify` command: the gates that prove every exercise is graded."""
    verify = commands.add_parser("verify", help="run the gates that prove every exercise is graded")
    verify.add_argument(
        "--gate",
        action="append",
        choices=GATES,
        help="run only this gate (repeatable; default: all of them)",
    )
    verify.add_argument(
        "--chapter",
        action="append",
        type=int,
        metavar="N",
        help="run the gates for this chapter only (repeatable; the catalog gate still checks "
        "the whole catalog)",
    )
    course_option(verify)
    verify.set_defaults(run=command_verify)


def add_report(commands: Any) -> None:
    """The `report` command: the class report."""
    report = commands.add_parser(
        "report",
        help="write the class report: scores, exercises by chapter, modules not graded, "
        "failing tests",
        description=(
            "Read every GRADES/<student>/results.json and write one self-contained HTML page: "
            "the distribution of scores (drawn with matplotlib, inlined as SVG), each "
            "chapter's exercises with their mean score and how many students are done, "
            "started, not started or had their module not graded, the modules not graded "
            "(each once, with its students and why), the tests that fail most for what the "
            "students' code does with their most common reasons (hidden tests included) and "
            "the exercises started but not finished. Needs the report extra: "
            "pip install 'tenxor[report]'."
        ),
    )
    report.add_argument("grades", type=Path, help="a grading output folder")
    report.add_argument("--out", type=Path, help="default: GRADES/class-report.html")
    report.set_defaults(run=command_report)


def add_autograder(commands: Any) -> None:
    """The `autograder` command: Gradescope's autograder.zip."""
    autograder = commands.add_parser(
        "autograder",
        help="write Gradescope's autograder.zip",
        description=(
            "Write the zip to upload as a Gradescope autograder: setup.sh, run_autograder, the "
            "course with its hidden tests, and a wheel of every package the grader installs, "
            "so that setup.sh needs no package index. The wheels are for this Python and "
            "platform unless --python-version and --platform name Gradescope's; the build "
            "refuses a set of wheels that lacks a requirement of that Python."
        ),
    )
    autograder.add_argument(
        "--out", type=Path, default=Path("autograder.zip"), help="default: autograder.zip"
    )
    autograder.add_argument("--python-version", metavar="X.Y", help="e.g. 3.10")
    autograder.add_argument(
        "--platform",
        metavar="TAG",
        action="append",
        help="a wheel platform tag the target accepts, e.g. manylinux_2_28_x86_64; repeat it "
        "for every kind of wheel the target accepts (pip's --platform)",
    )
    course_option(autograder)
    autograder.set_defaults(run=command_autograder)


def parser() -> argparse.ArgumentParser:
    """The command-line interface."""
    top = argparse.ArgumentParser(
        prog="tenxor-instructor",
        description=DESCRIPTION,
        formatter_class=argparse.RawTextHelpFormatter,
    )
    commands = top.add_subparsers(dest="command", metavar="COMMAND")
    for add in (add_release, add_grade, add_collect, add_merge, add_export, add_verify,
                add_report, add_autograder, add_site):  # fmt: skip
        add(commands)
    return top


def main(argv: list[str] | None = None) -> int:
    """Run the `tenxor-instructor` command; its exit code."""
    return run(parser(), argv)


if __name__ == "__main__":
    sys.exit(main())
