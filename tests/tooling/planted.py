"""Planted answers: one plausible wrong answer per exercise (a second for a few), planted into a
copy of the reference to prove that check's report names the call, what came back and what
was expected.

Each answer is the reference solution with one small edit, the kind of slip a learner makes:
an off-by-one, strides in the wrong order, a forgotten negative dim or keepdim, a softmax
without its maximum subtracted, padding that attends, a self loop counted twice, the wrong
error type, a list where a tuple is due. `raises` says whether the slip makes the learner's
function raise on the typical input of the exercise's first failing public test (an
exception escapes the function, the wrong error type included) or return a wrong value.

    folder = copy_of_reference(tmp_path / "course")  # from tests/tooling/submissions.py
    plant(folder, PLANTED[0])
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from instructor.authoring.regions import find_regions
from tenxor.course.catalog import exercise as catalog_exercise


@dataclass(frozen=True)
class Planted:
    """One wrong answer a learner might write: in exercise `exercise`'s solution region,
    `old` replaced by `new`.

    `raises`: whether the mistake makes the learner's function raise an exception on the
    typical input (True) or return a wrong value (False).
    """

    exercise: str
    old: str  # an exact snippet of the reference solution region (occurs exactly once there)
    new: str  # the plausible mistake
    mistake: str  # what the learner got wrong, in a few words
    raises: bool


PLANTED: tuple[Planted, ...] = (
    # -- chapter 1: storage ----------------------------------------------------------------
    Planted(
        "1.1",
        "count = 1",
        "count = 1.0",
        "starts the product at 1.0, so the count is a float, not an int",
        False,
    ),
    Planted(
        "1.1",
        "count *= size",
        "count *= size\n        if count == 0:\n            return 0",
        "stops at the first size-0 dim, so a negative size after it is never refused",
        False,
    ),
    Planted(
        "1.2",
        "if lower > 0x8000 or (lower == 0x8000 and upper & 1):",
        "if lower >= 0x8000:",
        "rounds every tie up instead of to the even pattern",
        False,
    ),
    Planted(
        "1.3",
        "return tuple(stride * itemsize for stride in strides)",
        "return [stride * itemsize for stride in strides]",
        "returns a list where a tuple is due",
        False,
    ),
    # -- chapter 2: strides ----------------------------------------------------------------
    Planted(
        "2.1",
        "return tuple(reversed(strides))",
        "return tuple(strides)",
        "builds the strides from the last dim and forgets to reverse them",
        False,
    ),
    Planted(
        "2.2",
        "strides.append(step)\n        step *= max(size, 1)",
        "step *= max(size, 1)\n        strides.append(step)",
        "multiplies before appending: each stride includes its own dim's size",
        False,
    ),
    Planted(
        "2.3",
        'raise IndexError(f"index {i} is out of range',
        'raise ValueError(f"index {i} is out of range',
        "raises ValueError where IndexError is due for an entry out of range",
        True,
    ),
    Planted(
        "2.3",
        "offset = layout.offset",
        "offset = 0",
        "forgets the layout's storage offset",
        False,
    ),
    Planted(
        "2.4",
        "if not 0 <= offset < count:",
        "if not 0 <= offset <= count:",
        "off by one: accepts the offset numel, one past the last element",
        False,
    ),
    Planted(
        "2.5",
        "return None",
        'raise IndexError(f"{tuple(index)} is the last index of shape {tuple(shape)}")',
        "raises IndexError after the last index where None is due",
        True,
    ),
    Planted(
        "2.5",
        "\n        result[dim] = 0",
        "",
        "forgets to wrap a dim back to 0 when it carries into the dim before it",
        False,
    ),
    Planted(
        "2.5",
        """result = list(index)
    for dim in reversed(range(len(shape))):
        if result[dim] + 1 < shape[dim]:
            result[dim] += 1
            return tuple(result)
        result[dim] = 0
    return None""",
        """if all(i == size - 1 for i, size in zip(index, shape)):
        return None
    result = list(index)
    result[-1] += 1
    if result[-1] == shape[-1]:
        result[-1] = 0
        result[-2] += 1
    return tuple(result)""",
        "carries into the dim before the last only, never further: (0, 2, 3) steps to (0, 3, 0)",
        False,
    ),
    Planted(
        "2.6",
        "if size != 1 and stride != expected:",
        "if stride != expected:",
        "checks the strides of size-1 dims too, which never move",
        False,
    ),
    # -- chapter 3: views ------------------------------------------------------------------
    Planted(
        "3.1",
        "if size < -1:",
        "if size < 0:",
        "rejects the -1 itself as a negative size",
        True,
    ),
    Planted(
        "3.1",
        "if numel % known != 0:",
        "if numel < known:",
        "checks that numel is large enough, not that it is a multiple of the known sizes",
        False,
    ),
    Planted(
        "3.2",
        "tuple(layout.strides[d] for d in keep),",
        "layout.strides[: len(keep)],",
        "keeps the first strides instead of the strides of the dims it keeps",
        False,
    ),
    Planted(
        "3.2",
        "drop = {d for d, size in enumerate(layout.shape) if size == 1}",
        "drop = set(normalize_dims(dim, layout.ndim))",
        "passes dim=None on to normalize_dims, so it squeezes every dim, not the size-1 ones",
        False,
    ),
    Planted(
        "3.3",
        "stride = layout.strides[dim] * layout.shape[dim] if dim < ndim else 1",
        "stride = layout.strides[dim] * layout.shape[dim]",
        "forgets that dim may be ndim (a new last dim), past the end of the strides",
        True,
    ),
    Planted(
        "3.4",
        "tuple(layout.strides[d] for d in order),",
        "layout.strides,",
        "permutes the shape but not the strides",
        False,
    ),
    Planted(
        "3.5",
        "strides.append(stride * step)",
        "strides.append(stride)",
        "forgets to multiply the stride by the slice's step",
        False,
    ),
    Planted(
        "3.6",
        "runs[-1] = (runs[-1][0] * size, stride)",
        "runs[-1] = (runs[-1][0] * size, runs[-1][1])",
        "a merged run keeps the outer dim's stride instead of the inner one's",
        False,
    ),
    Planted(
        "3.7",
        "strides = [0] * len(shape)",
        "strides = []",
        "starts the strides as an empty list, then assigns to it by index",
        True,
    ),
    # -- chapter 4: broadcasting -----------------------------------------------------------
    Planted(
        "4.1",
        "if -position > len(shape) or shape[position] == 1:",
        "if -position > len(shape):",
        "does not skip sizes of 1: a 1 after a larger size is taken for a clash",
        True,
    ),
    Planted(
        "4.2",
        "strides.append(0)",
        "strides.append(stride)",
        "a stretched size-1 dim keeps its stride instead of getting stride 0",
        False,
    ),
    Planted(
        "4.3",
        "offset -= index[dim] * strides[dim]",
        "offset -= shape[dim] * strides[dim]",
        "wraps a dim back by size * stride instead of the (size - 1) * stride it added",
        False,
    ),
    Planted(
        "4.4",
        "rows = Layout(layout.shape[:-1], layout.strides[:-1], layout.offset)",
        "rows = Layout(layout.shape[:-1], layout.strides, layout.offset)",
        "drops the last size but not the last stride from the layout of the row starts",
        True,
    ),
    Planted(
        "4.5",
        "read_values(data, layout)",
        "data",
        "maps over the whole storage instead of the elements the layout reads",
        False,
    ),
    Planted(
        "4.6",
        "b = read_values(data_b, expand_layout(layout_b, shape))",
        "b = read_values(data_b, expand_layout(layout_b, layout_a.shape))",
        "expands b to a's shape instead of the broadcast shape",
        True,
    ),
    # -- chapter 5: reductions -------------------------------------------------------------
    Planted(
        "5.1",
        "shape = tuple(1 if d in reduced else size for d, size in enumerate(layout.shape))",
        "shape = tuple(layout.shape[d] for d in kept)",
        "forgets keepdim: the reduced dims are dropped instead of kept with size 1",
        False,
    ),
    Planted(
        "5.2",
        "for d in normalize_dims(dim, t.ndim):",
        "for d in range(t.ndim):",
        "divides by the number of all elements, not by the size of the reduced groups",
        False,
    ),
    Planted(
        "5.3",
        "if value > group[best]:",
        "if value >= group[best]:",
        "takes the last largest element on a tie instead of the first",
        False,
    ),
    Planted(
        "5.4",
        "permute_layout(expand_layout(layout, shape), kept + list(reduced))",
        "expand_layout(layout, shape)",
        "walks the broadcast operands in their own dim order: the reduced dims are not moved last",
        False,
    ),
    Planted(
        "5.4",
        "if len(row_starts) == 1:  # one row (one reduced dim, as in matmul), at the group's "
        "start\n"
        "        values = [fold(row(starts)) for starts in walk]\n"
        "    else:\n"
        "        values = [fold(group(starts)) for starts in walk]",
        "values = [fold(iter(list(group(starts)))) for starts in walk]",
        "combines each group into a list and hands fold an iterator over it",
        False,
    ),
    Planted(
        "5.4",
        "return map(combine, *map(read_row, datas, starts, sizes, steps))",
        "return (\n"
        "            combine(*(d[s + k * step] for d, s, step in zip(datas, starts, steps)))\n"
        "            for k in range(row_size)\n"
        "        )",
        "reads every element at its own offset instead of a row at a time",
        False,
    ),
    Planted(
        "5.5",
        "right.transpose(-1, -2).unsqueeze(-3)",
        "right.unsqueeze(-3)",
        "multiplies by b without transposing its last two dims",
        True,
    ),
    Planted(
        "5.6",
        "shifted = t - t.max(dim, keepdim=True)",
        "shifted = t",
        "does not subtract each group's maximum before exp, so large logits overflow",
        False,
    ),
    Planted(
        "5.7",
        "masked = t.where(mask, -math.inf)",
        "masked = t.where(mask, 0.0)",
        "fills masked-out logits with 0 instead of -inf, so they still get weight",
        False,
    ),
    # -- chapter 6: GATv2 ------------------------------------------------------------------
    Planted(
        "6.1",
        "return projected if bias is None else projected + bias",
        "return projected",
        "forgets to add the bias",
        False,
    ),
    Planted(
        "6.2",
        "edges = (adjacency != 0) * both_real",
        "edges = adjacency != 0",
        "keeps the edges from and to padding nodes, so padding takes part in attention",
        False,
    ),
    Planted(
        "6.3",
        "receiver.unsqueeze(2).combine_fold(\n        feature_score(slope), sender.unsqueeze(1),",
        "receiver.unsqueeze(1).combine_fold(\n        feature_score(slope), sender.unsqueeze(2),",
        "pairs receiver j with sender i, so the logits come out transposed",
        False,
    ),
    Planted(
        "6.4",
        "attends.unsqueeze(-1)",
        "attends",
        "forgets the heads dim of the mask: [B, N, N] meets [B, N, N, H] from the right",
        True,
    ),
    Planted(
        "6.5",
        "alpha.permute(0, 3, 1, 2)",
        "alpha.permute(0, 3, 2, 1)",
        "swaps receivers and senders: each node gets the transposed attention's weights",
        False,
    ),
    Planted(
        "6.6",
        "return received.reshape(*received.shape[:-2], -1)",
        "return received.view(*received.shape[:-2], -1)",
        "uses view, which cannot merge the heads of a non-contiguous input",
        True,
    ),
    Planted(
        "6.6",
        "return received.mean(dim=-2)",
        "return received.mean(dim=-1)",
        "averages over the features instead of over the heads",
        False,
    ),
    Planted(
        "6.7",
        "return where(real, out, 0.0)",
        "return out",
        "forgets to zero the output of padding nodes, which then hold the bias",
        False,
    ),
    Planted(
        "6.8",
        "starts = [(i % rows) * width",
        "starts = [i * width",
        "forgets negative indices: -1 reads the empty slice values[-width:0]",
        True,
    ),
    Planted(
        "6.9",
        "result[start : start + width] = map(fold, result[start : start + width], row)",
        "result[start : start + width] = row",
        "overwrites the row instead of folding into it: a repeated index keeps its last row",
        False,
    ),
    Planted(
        "6.10",
        "weights = (logits - gather_rows(peak, segment)).exp()",
        "weights = logits.exp()",
        "does not subtract each segment's peak before exp, so large logits overflow",
        False,
    ),
    Planted(
        "6.11",
        "sources, targets = with_self_loops(sources, targets, nodes)",
        "loops = list(range(nodes))\n"
        "    sources = tensor(sources.tolist() + loops, dtype=int64)\n"
        "    targets = tensor(targets.tolist() + loops, dtype=int64)",
        "adds a self loop per node but keeps those in the input: a self loop counts twice",
        False,
    ),
    Planted(
        "6.11",
        "messages = sender * alpha.unsqueeze(-1)",
        "messages = sender * alpha",
        "forgets the features dim of alpha: [E, H] meets [E, H, DA] from the right",
        True,
    ),
    Planted(
        "6.11",
        "alpha = segment_softmax(logits, targets, nodes)",
        "alpha = segment_softmax(logits, sources, nodes)",
        "groups the softmax by source: the weights leaving a node sum to 1, not those reaching it",
        False,
    ),
)


def plant(root: Path, planted: Planted) -> None:
    """Rewrite the exercise's module in the course copy at `root`: `planted.old` replaced by
    `planted.new` inside that exercise's solution region only.

    Raises ValueError, naming the exercise and the file, unless `old` occurs exactly once in
    the region.
    """
    item = catalog_exercise(planted.exercise)
    path = root / item.path
    region = next(
        (r for r in find_regions(path) if r.exercise_id == planted.exercise),
        None,
    )
    if region is None:
        raise ValueError(f"{path} has no solution region for exercise {planted.exercise}")
    if not planted.old:
        raise ValueError(f"exercise {planted.exercise}: a planted answer needs an `old` snippet")
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    # The region's lines between its markers (region.begin and region.end are 1-based).
    body = "".join(lines[region.begin : region.end - 1])
    count = body.count(planted.old)
    if count != 1:
        raise ValueError(
            f"exercise {planted.exercise}: {planted.old!r} occurs {count} times in its solution "
            f"region in {path} (lines {region.begin + 1} to {region.end - 1}); expected once"
        )
    lines[region.begin : region.end - 1] = [body.replace(planted.old, planted.new)]
    path.write_text("".join(lines), encoding="utf-8")


@contextmanager
def planted(root: Path, answer: Planted) -> Iterator[None]:
    """In the block, the course copy at `root` holds `answer`; after it, the module is as it
    was."""
    module = root / catalog_exercise(answer.exercise).path
    before = module.read_text(encoding="utf-8")
    plant(root, answer)
    try:
        yield
    finally:
        module.write_text(before, encoding="utf-8")
