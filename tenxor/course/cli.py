"""The `tenxor` command: check exercises and draw stride diagrams. (The instructor's tree also
has `tenxor-instructor`, for releasing, verifying and grading the course.)"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tenxor import Tenxor
    from tenxor.diagrams import Picture

DESCRIPTION = """\
The tenxor course tools.

exercises:    tenxor check 2.1          run the tests of exercise 2.1 and explain the first failure
              tenxor check 2.1 --hint   the next hint for exercise 2.1
              tenxor check 2.1 --all-hints   every hint of 2.1 shown so far, again
              tenxor check              progress table of every exercise
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
    from .check import DONE, check_exercise, progress
    from .engine import use_the_shells_worker
    from .hints_shown import hints_so_far, show_hint

    use_the_shells_worker()
    if arguments.all_hints and arguments.exercise is not None:
        print("\n".join(hints_so_far(arguments.exercise, root_of(arguments))))
        return 0
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
    from tenxor.row_major import row_major_strides

    if arguments.broadcast:
        return diagrams.broadcast_diagram(*arguments.broadcast)
    if arguments.bytes:
        return diagrams.bytes_diagram(arguments.bytes)
    if arguments.reduce is not None:
        return diagrams.reduction_diagram(
            arguments.reduce, arguments.dim, keepdim=arguments.keepdim
        )
    if arguments.fold_walk:
        if arguments.index is None:
            raise ValueError("--fold-walk needs --index: the output element, e.g. --index 0,1")
        operands = [tensor_of(expression) for expression in arguments.fold_walk]
        try:
            return diagrams.fold_walk_diagram(operands, arguments.dim, arguments.index,
                                              keepdim=arguments.keepdim)  # fmt: skip
        except IndexError as error:  # a dim or an index that does not fit: bad input
            raise ValueError(str(error)) from None
    if arguments.tensor and arguments.view:
        x = tensor_of(arguments.tensor)
        return diagrams.view_diagram(x, tensor_of(arguments.view, x), "x", arguments.view,
                                     arguments.arrows)  # fmt: skip
    if arguments.tensor:
        return diagrams.tensor_diagram(tensor_of(arguments.tensor), arguments.arrows, name="x")
    strides = arguments.strides
    if strides is None:
        strides = row_major_strides(arguments.shape)
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
            "shapes, a reduction, the fused kernel's walk for one output element, or the bytes of "
            "values. The file name's suffix picks SVG or PNG (PNG needs CairoSVG and the cairo "
            "library). --gallery renders every figure."
        ),
    )
    what = draw.add_mutually_exclusive_group(required=True)
    what.add_argument("--gallery", type=Path, metavar="DIR", help="render the gallery into DIR")
    what.add_argument("--shape", type=ints, help="a layout's shape, e.g. 3,4")
    what.add_argument("--tensor", metavar="EXPR", help='e.g. "arange(12).view(3, 4)"')
    what.add_argument("--broadcast", type=ints, nargs="+", metavar="SHAPE", help="e.g. 3,1 4")
    what.add_argument("--reduce", type=ints, metavar="SHAPE", help="reduce SHAPE along --dim")
    what.add_argument("--bytes", type=floats, metavar="VALUES", help="float32 and bfloat16 bytes")
    what.add_argument(
        "--fold-walk", nargs="+", metavar="EXPR",
        help="the fused kernel's walk for one output element (--index) of operands given as "
        'tenxor expressions, folding --dim, e.g. "arange(6).view(2, 3).unsqueeze(-2)" '
        '"arange(6).view(3, 2).T.unsqueeze(-3)" --index 0,1',
    )  # fmt: skip
    draw.add_argument("--strides", type=ints, help="with --shape (default: row-major)")
    draw.add_argument("--offset", type=int, default=0, help="with --shape: storage offset")
    draw.add_argument("--storage-size", type=int, help="with --shape (default: just enough)")
    draw.add_argument("--view", metavar="EXPR", help='with --tensor: a view of x, e.g. "x.T"')
    draw.add_argument("--dim", type=int, default=-1, help="with --reduce, --fold-walk (default -1)")
    draw.add_argument("--keepdim", action="store_true", help="with --reduce or --fold-walk")
    draw.add_argument("--index", type=ints, help="with --fold-walk: the output element, e.g. 0,1")
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
    check.add_argument(
        "--all-hints", action="store_true", help="show again every hint shown so far, no new one"
    )
    course_option(check)
    check.set_defaults(run=command_check)

    draw_parser(commands)
    return top


def run(top: argparse.ArgumentParser, argv: list[str] | None) -> int:
    """Parse `argv` with `top` and run the chosen command; its exit code. Bad input to a
    command is said in one line, naming the command."""
    arguments = top.parse_args(argv)
    if arguments.command is None:
        top.print_help()
        return 2
    try:
        return arguments.run(arguments)
    except (KeyError, OSError, ValueError) as error:  # RegionError is a ValueError
        message = error.args[0] if isinstance(error, KeyError) else error
        print(f"{top.prog} {arguments.command}: {message}", file=sys.stderr)
        return 2


def main(argv: list[str] | None = None) -> int:
    """Run the `tenxor` command; its exit code."""
    return run(parser(), argv)


if __name__ == "__main__":
    sys.exit(main())
