"""The `tenxor` command: check exercises, publish the student release, grade, verify, draw."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from .catalog import BY_ID, CATALOG

if TYPE_CHECKING:
    from tenxor import Tenxor
    from tenxor.diagrams import Picture

DESCRIPTION = """\
The tenxor course tools.

learners:     tenxor check 2.1          run the tests of exercise 2.1 and explain the first failure
              tenxor check 2.1 --hint   the next hint for exercise 2.1
              tenxor check              progress table of every exercise
instructors:  tenxor release FOLDER     write the student release (solutions stubbed)
              tenxor grade SUBMISSION   grade one submission folder: results.json + gradebook.csv
              tenxor grade --batch DIR  grade every sub-folder of DIR (one per student); resumable
              tenxor verify             run the gates that prove every exercise is graded
diagrams:     tenxor draw --shape 3,4 --strides 1,3 -o layout.svg
              tenxor draw --tensor "arange(12).view(3, 4)" --view "x.T" -o transpose.svg
              tenxor draw --gallery diagrams/   render the whole gallery with its index

Run `tenxor COMMAND --help` for the options of a command.
"""


def course_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--course",
        type=Path,
        default=None,
        metavar="ROOT",
        help="the instructor's course tree (default: the tree this tenxor is installed from)",
    )


def root_of(arguments: argparse.Namespace) -> Path:
    from .check import course_root

    return (arguments.course or course_root()).resolve()


def command_check(arguments: argparse.Namespace) -> int:
    from .check import DONE, check_exercise, progress, show_hint

    if arguments.hint:
        if arguments.exercise is None:
            raise ValueError("--hint needs an exercise id, for example: tenxor check 2.1 --hint")
        again = f"tenxor check {arguments.exercise} --hint"
        show_hint(arguments.exercise, root_of(arguments), again=again)
        return 0
    if arguments.exercise is None:
        statuses = progress(root_of(arguments))
        return 0 if all(status.state == DONE for status in statuses) else 1
    return 0 if check_exercise(arguments.exercise, root_of(arguments)).state == DONE else 1


def command_release(arguments: argparse.Namespace) -> int:
    from .release import write_release

    written = write_release(root_of(arguments), arguments.folder, replace=arguments.replace)
    print(f"Wrote the student release to {arguments.folder} ({len(written)} files).")
    return 0


def selected_exercises(arguments: argparse.Namespace) -> list[str]:
    """The exercises named by --exercise and --chapter (all when neither is given)."""
    chosen = list(arguments.exercise or [])
    for chapter in arguments.chapter or []:
        chosen += [item.id for item in CATALOG if item.id.split(".")[0] == chapter]
    unknown = [exercise_id for exercise_id in chosen if exercise_id not in BY_ID]
    if unknown or (arguments.chapter and not chosen):
        raise SystemExit(f"tenxor grade: no exercise {', '.join(unknown or arguments.chapter)}")
    return sorted(set(chosen), key=list(BY_ID).index) or list(BY_ID)


def command_grade(arguments: argparse.Namespace) -> int:
    from .grading import GRADING_LIMITS, grade_batch, students_in
    from .running import Limits

    limits = Limits(
        test_seconds=arguments.test_timeout or GRADING_LIMITS.test_seconds,
        run_seconds=arguments.time_limit or GRADING_LIMITS.run_seconds,
        memory_mb=arguments.memory_mb or GRADING_LIMITS.memory_mb,
        output_mb=GRADING_LIMITS.output_mb,
    )
    source = arguments.submission.resolve()
    if not source.is_dir():
        raise SystemExit(f"tenxor grade: {source} is not a folder")
    if arguments.batch:
        submissions = students_in(source)
        if not submissions:
            raise SystemExit(f"tenxor grade: {source} holds no submission folders")
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
    )
    print(f"Gradebook: {gradebook}")
    return 0


def command_verify(arguments: argparse.Namespace) -> int:
    from .verify import GATES, verify

    gates = tuple(arguments.gate or GATES)
    verdicts = verify(root_of(arguments), gates)
    failed = [gate.name for gate in verdicts if not gate.passed]
    print("verify: every gate passed" if not failed else f"verify: FAILED: {', '.join(failed)}")
    return 1 if failed else 0


def ints(text: str) -> tuple[int, ...]:
    """A comma-separated list of ints, as in "3,4" (an empty string is the shape ())."""
    try:
        return tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        message = f"expected ints separated by commas, got {text!r}"
        raise argparse.ArgumentTypeError(message) from None


def floats(text: str) -> tuple[float, ...]:
    """A comma-separated list of numbers."""
    try:
        return tuple(float(part) for part in text.split(","))
    except ValueError:
        message = f"expected numbers separated by commas, got {text!r}"
        raise argparse.ArgumentTypeError(message) from None


def evaluated(expression: str, x: object = None) -> object:
    """The value of a tenxor expression such as "arange(12).view(3, 4)" (x: the tensor)."""
    import tenxor

    names = {name: getattr(tenxor, name) for name in tenxor.__all__}
    names.update(x=x, __builtins__={})
    try:
        return eval(expression, names)  # noqa: S307 - the instructor's own command line
    except Exception as error:
        raise ValueError(f"cannot evaluate {expression!r}: {error}") from None


def tensor_of(expression: str, x: object = None) -> Tenxor:
    """The tensor an expression makes, or a ValueError."""
    from tenxor import Tenxor

    t = evaluated(expression, x)
    if not isinstance(t, Tenxor):
        raise ValueError(f"{expression!r} gives a {type(t).__name__}, not a tensor")
    return t


def drawn(arguments: argparse.Namespace) -> Picture:
    """The one diagram the options of `tenxor draw` ask for."""
    from tenxor import diagrams
    from tenxor.diagrams.figures import contiguous

    if arguments.broadcast:
        return diagrams.broadcast_diagram(*arguments.broadcast)
    if arguments.bytes:
        return diagrams.bytes_diagram(arguments.bytes)
    if arguments.reduce is not None:
        return diagrams.reduction_diagram(
            arguments.reduce, arguments.dim, keepdim=arguments.keepdim
        )
    if arguments.tensor and arguments.view:
        x = tensor_of(arguments.tensor)
        return diagrams.view_diagram(x, tensor_of(arguments.view, x), "x", arguments.view,
                                     arguments.arrows)  # fmt: skip
    if arguments.tensor:
        return diagrams.tensor_diagram(tensor_of(arguments.tensor), arguments.arrows, name="x")
    strides = arguments.strides if arguments.strides is not None else contiguous(arguments.shape)
    return diagrams.layout_diagram(arguments.shape, strides, arguments.offset,
                                   arguments.storage_size, arrows=arguments.arrows)  # fmt: skip


def command_draw(arguments: argparse.Namespace) -> int:
    from tenxor.diagrams.gallery import write_gallery
    from tenxor.diagrams.render import PngUnavailable

    if arguments.gallery is not None:
        written = write_gallery(arguments.gallery)
        print(f"Wrote {len(written) - 1} diagrams and their index to {arguments.gallery}.")
        return 0
    if arguments.out is None:
        raise ValueError("say where to write the diagram with -o FILE.svg (or FILE.png)")
    if arguments.view and not arguments.tensor:
        raise ValueError("--view needs --tensor: the tensor x that the view expression reads")
    try:
        drawn(arguments).save(arguments.out)
    except PngUnavailable as error:
        print(f"tenxor draw: {error}", file=sys.stderr)
        return 2
    print(f"Wrote {arguments.out}.")
    return 0


def draw_parser(commands: argparse._SubParsersAction) -> None:
    """The options of `tenxor draw`."""
    draw = commands.add_parser(
        "draw",
        help="render a stride diagram (or the whole gallery) to SVG or PNG",
        description=(
            "Render one diagram to a file for slides: a layout (--shape with --strides, "
            "--offset), a tensor or a view given as tenxor expressions (names such as arange, "
            "tensor, zeros are available; the view reads the tensor as x), the broadcasting of "
            "shapes, a reduction, or the bytes of values. The file name's suffix picks SVG or "
            "PNG (PNG needs CairoSVG and the cairo library). --gallery renders every figure."
        ),
    )
    what = draw.add_mutually_exclusive_group(required=True)
    what.add_argument("--gallery", type=Path, metavar="DIR", help="render the gallery into DIR")
    what.add_argument("--shape", type=ints, help="a layout's shape, e.g. 3,4")
    what.add_argument("--tensor", metavar="EXPR", help='e.g. "arange(12).view(3, 4)"')
    what.add_argument("--broadcast", type=ints, nargs="+", metavar="SHAPE", help="e.g. 3,1 4")
    what.add_argument("--reduce", type=ints, metavar="SHAPE", help="reduce SHAPE along --dim")
    what.add_argument("--bytes", type=floats, metavar="VALUES", help="float32 and bfloat16 bytes")
    draw.add_argument("--strides", type=ints, help="with --shape (default: row-major)")
    draw.add_argument("--offset", type=int, default=0, help="with --shape: storage offset")
    draw.add_argument("--storage-size", type=int, help="with --shape (default: just enough)")
    draw.add_argument("--view", metavar="EXPR", help='with --tensor: a view of x, e.g. "x.T"')
    draw.add_argument("--dim", type=int, default=-1, help="with --reduce (default -1)")
    draw.add_argument("--keepdim", action="store_true", help="with --reduce")
    draw.add_argument(
        "--arrows", default=None, choices=("all", "none", "strides"),
        help="which cells get an arrow (default: all of a small tensor, else strides)",
    )  # fmt: skip
    draw.add_argument("-o", "--out", type=Path, metavar="FILE", help="FILE.svg or FILE.png")
    draw.set_defaults(run=command_draw)


def parser() -> argparse.ArgumentParser:
    """The command-line interface."""
    top = argparse.ArgumentParser(
        prog="tenxor", description=DESCRIPTION, formatter_class=argparse.RawTextHelpFormatter
    )
    commands = top.add_subparsers(dest="command", metavar="COMMAND")

    check = commands.add_parser("check", help="check an exercise, or show your progress")
    check.add_argument("exercise", nargs="?", help="exercise id, e.g. 2.1 (omit for a table)")
    check.add_argument(
        "--hint", action="store_true", help="show the next hint for the exercise, run no tests"
    )
    course_option(check)
    check.set_defaults(run=command_check)

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
        "--test-timeout", type=float, metavar="S", help="seconds per test (default 10)"
    )
    grade.add_argument(
        "--time-limit", type=float, metavar="S", help="seconds per submission (default 600)"
    )
    grade.add_argument(
        "--memory-mb", type=int, metavar="MB", help="memory per submission (default 2048)"
    )
    course_option(grade)
    grade.set_defaults(run=command_grade)

    verify = commands.add_parser("verify", help="run the gates that prove every exercise is graded")
    verify.add_argument(
        "--gate",
        action="append",
        choices=("reference", "release", "stubs", "catalog", "notebooks", "chapters"),
        help="run only this gate (repeatable; default: all six)",
    )
    course_option(verify)
    verify.set_defaults(run=command_verify)
    draw_parser(commands)
    return top


def main(argv: list[str] | None = None) -> int:
    """Run the `tenxor` command; its exit code."""
    top = parser()
    arguments = top.parse_args(argv)
    if arguments.command is None:
        top.print_help()
        return 2
    try:
        return arguments.run(arguments)
    except (KeyError, OSError, ValueError) as error:  # RegionError is a ValueError
        message = error.args[0] if isinstance(error, KeyError) else error
        print(f"tenxor {arguments.command}: {message}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
