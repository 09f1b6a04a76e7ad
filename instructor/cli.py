"""The `tenxor-instructor` command: publish the student release, prove every exercise is
graded, grade submissions. It lives in the instructor's tree only; the release leaves it out."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tenxor.course.catalog import BY_ID, CATALOG, CHAPTERS
from tenxor.course.cli import course_option, root_of, run

from .protections import SandboxMode
from .verify import GATES

AUTO = "auto"  # --sandbox: the strongest sandbox this machine allows

DESCRIPTION = """\
The instructor's course tools (the learner's are `tenxor check` and `tenxor draw`).

  tenxor-instructor release FOLDER     write the student release (solutions stubbed)
  tenxor-instructor verify             run the gates that prove every exercise is graded
  tenxor-instructor grade SUBMISSION   grade one submission folder: results.json + gradebook.csv
  tenxor-instructor grade --batch DIR  grade every sub-folder of DIR (one per student); resumable
  tenxor-instructor autograder         write autograder.zip for Gradescope

Run `tenxor-instructor COMMAND --help` for the options of a command.
"""


def command_release(arguments: argparse.Namespace) -> int:
    from .release import write_release

    written = write_release(root_of(arguments), arguments.folder, replace=arguments.replace)
    print(f"Wrote the student release to {arguments.folder} ({len(written)} files).")
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


def command_grade(arguments: argparse.Namespace) -> int:
    from dataclasses import replace

    from .grading import EXAMPLES, GRADING_LIMITS, grade_batch, students_in

    limits = replace(
        GRADING_LIMITS,
        call_cpu_seconds=arguments.call_seconds or GRADING_LIMITS.call_cpu_seconds,
        exercise_cpu_seconds=arguments.exercise_seconds or GRADING_LIMITS.exercise_cpu_seconds,
        memory_mb=arguments.memory_mb or GRADING_LIMITS.memory_mb,
    )
    source = arguments.submission.resolve()
    if not source.is_dir():
        raise SystemExit(f"tenxor-instructor grade: {source} is not a folder")
    if arguments.batch:
        submissions = students_in(source)
        if not submissions:
            raise SystemExit(f"tenxor-instructor grade: {source} holds no submission folders")
    else:
        submissions = {source.name: source}
    output = arguments.out.resolve()
    gradebook = grade_batch(
        root_of(arguments),
        submissions,
        output,
        selected_exercises(arguments),
        limits,
        jobs=arguments.jobs,
        report=print,
        single=not arguments.batch,
        sandbox=None if arguments.sandbox == AUTO else SandboxMode(arguments.sandbox),
        profile=EXAMPLES[arguments.examples],
    )
    print(f"Gradebook: {gradebook}")
    return 0


def command_verify(arguments: argparse.Namespace) -> int:
    from .verify import Scope, verify

    gates = tuple(arguments.gate or GATES)
    known = {chapter.number for chapter in CHAPTERS}
    unknown = [number for number in arguments.chapter or [] if number not in known]
    if unknown:
        raise SystemExit(f"tenxor-instructor verify: no chapter {', '.join(map(str, unknown))}")
    verdicts = verify(root_of(arguments), gates, scope=Scope(tuple(arguments.chapter or ())))
    failed = [gate.name for gate in verdicts if not gate.passed]
    print("verify: every gate passed" if not failed else f"verify: FAILED: {', '.join(failed)}")
    return 1 if failed else 0


def command_autograder(arguments: argparse.Namespace) -> int:
    from .autograder import write_autograder

    pip_options = []
    if arguments.python_version:
        pip_options += ["--python-version", arguments.python_version]
    if arguments.platform:
        pip_options += ["--platform", arguments.platform]
    names = write_autograder(root_of(arguments), arguments.out, pip_options)
    wheels = sum(name.startswith("wheels/") for name in names)
    print(f"Wrote {arguments.out}: the course, setup.sh, run_autograder and {wheels} wheels.")
    print("Upload it as the autograder of a Gradescope assignment (Configure Autograder).")
    return 0


def parser() -> argparse.ArgumentParser:
    """The command-line interface."""
    top = argparse.ArgumentParser(
        prog="tenxor-instructor",
        description=DESCRIPTION,
        formatter_class=argparse.RawTextHelpFormatter,
    )
    commands = top.add_subparsers(dest="command", metavar="COMMAND")

    release = commands.add_parser("release", help="write the student release into a folder")
    release.add_argument("folder", type=Path, help="where to write it (must not exist yet)")
    release.add_argument("--replace", action="store_true", help="replace an existing release")
    course_option(release)
    release.set_defaults(run=command_release)

    grade = commands.add_parser(
        "grade",
        help="grade one submission, or a folder of them",
        description=(
            "Grade submissions with the course's public and hidden tests. Only the exercise "
            "modules (tenxor/storage.py, tenxor/strides.py, ...) are taken from a submission, "
            "found at their place, in a tenxor/ folder at any depth, or loose at its top. "
            "Writes a Gradescope results.json per student and a gradebook.csv into --out. "
            "A batch that is interrupted resumes where it stopped when run again."
        ),
    )
    grade.add_argument(
        "submission", type=Path, help="a submission folder (or, with --batch, a folder of them)"
    )
    grade.add_argument(
        "--batch", action="store_true", help="SUBMISSION holds one folder per student"
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
        "--examples",
        choices=["10", "100", "1000"],
        default="100",
        help="examples each property test tries, the same on every run (default 100)",
    )
    course_option(grade)
    grade.set_defaults(run=command_grade)

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
    autograder = commands.add_parser(
        "autograder",
        help="write Gradescope's autograder.zip",
        description=(
            "Write the zip to upload as a Gradescope autograder: setup.sh, run_autograder, the "
            "course with its hidden tests, and a wheel of every package the grader installs, "
            "so that setup.sh needs no package index. The wheels are for this Python and "
            "platform unless --python-version and --platform name Gradescope's."
        ),
    )
    autograder.add_argument(
        "--out", type=Path, default=Path("autograder.zip"), help="default: autograder.zip"
    )
    autograder.add_argument("--python-version", metavar="X.Y", help="e.g. 3.10")
    autograder.add_argument("--platform", metavar="TAG", help="e.g. manylinux2014_x86_64")
    course_option(autograder)
    autograder.set_defaults(run=command_autograder)
    return top


def main(argv: list[str] | None = None) -> int:
    """Run the `tenxor-instructor` command; its exit code."""
    return run(parser(), argv)


if __name__ == "__main__":
    sys.exit(main())
