"""Hints for every exercise, revealed one at a time by `check("2.1", hint=True)`.

Each exercise has at least two. The first points at the idea, the middle ones at the cases
the tests try, and the last is the plan: the steps, with the expressions they need where
words would not say it (the notebook and the docstring never give them), but never a line
of the solution as written. `check("2.1", hint="all")` shows every hint seen so far again.
"""

from __future__ import annotations

HINTS: dict[str, tuple[str, ...]] = {
    # Chapter 1: storage
    "1.1": (
        "What is the product of no numbers at all? Start a running count at the number that "
        "leaves every product unchanged, and the 0-d shape () comes out right by itself.",
        "Multiply the sizes in one by one. A size of 0 makes the count 0, but a negative size "
        "anywhere in the shape must still raise: look at every size, do not stop early.",
        "Check each size before you multiply it in. The ValueError shows the shape as a tuple "
        "(even when you were given a list) and then the negative size. Leave the shape you were "
        "given as it was.",
    ),
    "1.2": (
        "bfloat16 keeps the upper 16 bits of a float32 pattern. Try 0x3F808000 by hand: what "
        "is the upper half, what is the dropped half, and is the dropped half exactly one half "
        "of the last bit you keep?",
        "The tests try dropped halves just below, exactly at and just above the half-way point "
        "0x8000, after even and after odd upper halves, with either sign; values just below a "
        "power of two and the largest float32 (whose rounding carries into the exponent, up to "
        "infinity); subnormals, zeros and infinities; and -1 and 2**32, which must raise "
        "ValueError naming the number.",
        "Every kind of NaN comes too: the 8 exponent bits (bits 23 to 30) all ones and the 23 "
        "fraction bits not all zero. Rounded like a number, a NaN whose only fraction bits sit "
        "in the dropped half becomes infinity, and one with every fraction bit set carries into "
        "the sign. So recognise a NaN before rounding and answer a bfloat16 NaN.",
        "Plan: refuse bits32 outside 0 <= bits32 < 2**32 first. A NaN has (bits32 >> 23) & 0xFF "
        "equal to 0xFF and bits32 & 0x7FFFFF not 0; answer (bits32 >> 16) | 0x0040 for it, the "
        "quiet NaN with the same sign. Otherwise the upper half is bits32 >> 16 and the dropped "
        "half bits32 & 0xFFFF: add 1 to the upper half when the dropped half is above 0x8000, "
        "or equal to 0x8000 while the upper half is odd (its lowest bit, & 1, is 1), and return "
        "it; a carry needs no special case.",
    ),
    "1.3": (
        "A stride counts the elements one step along a dim skips. How many bytes do that many "
        "elements take, when each takes `itemsize` bytes?",
        "Keep every stride's sign: a reversed view has a negative stride and so a negative byte "
        "stride, and a stride of 0 stays 0. No strides at all (a 0-d tensor) give ().",
        "Refuse an itemsize of 0 or below first, with a ValueError naming it. Then multiply "
        "each stride by the itemsize and return a tuple, even when the strides came as a list.",
    ),
    # Chapter 2: strides
    "2.1": (
        "In row-major order the last dim moves fastest. Work out shape (2, 3, 4) by hand: how "
        "many elements lie between index (0, 0, 0) and (0, 0, 1)? Between (0, 0, 0) and "
        "(0, 1, 0)? And (1, 0, 0)?",
        "Each dim's stride is the product of the sizes after it: walk the shape from the right "
        "with a running product that starts at 1. The 0-d shape () has no strides: ().",
        "A size-0 dim counts as size 1 in the running product, as in PyTorch: (2, 0, 3) gives "
        "(3, 3, 1), not (0, 3, 1). (A fresh NumPy array of that shape reports strides of 0 "
        "instead: no element is read, so both are valid, and the tests follow PyTorch.) A "
        "size-1 dim still gets its stride. Collecting the strides right to left means reversing "
        "them at the end; return a tuple.",
    ),
    "2.2": (
        "Column-major is row-major seen in a mirror: now the first dim moves fastest. For shape "
        "(2, 3, 4), the first dim has stride 1; how far does one step along the second dim "
        "jump?",
        "The same running product as in 2.1, walking the shape from the left this time: each "
        "dim's stride is the product of the sizes before it. The 0-d shape gives ().",
        "A size-0 dim counts as size 1 in the product, and a size-1 dim still gets the product "
        "of the sizes before it: (3, 1, 2) gives (1, 3, 3), as NumPy's order='F' does.",
    ),
    "2.3": (
        "Start at the storage offset, where index (0, ..., 0) lives; every entry i of the index "
        "moves i steps along its dim, i times that dim's stride. Try index (1, 2) with strides "
        "(4, 1) and storage offset 5 by hand.",
        "Check the length first: one entry per dim. A 0-d layout takes the empty index () and "
        "reads its storage offset. The message names the index, how many entries it has, the "
        "shape and how many dims it has, in any words you like.",
        "Then each entry must lie in 0 to size - 1 for its dim. A negative entry is an error "
        "here, not a position counted from the end; the message names the entry, the dim "
        "number and its size. Negative strides and stride 0 need no special case.",
    ),
    "2.4": (
        "This undoes 2.3 for a row-major tensor at storage offset 0. Try offset 47 in shape "
        "(3, 4, 5) by hand: how many whole rows of 5 fit in 47, and how much is left over?",
        "Count the elements first and refuse an offset below 0 or not below that count: a shape "
        "with a size-0 dim holds none, so every offset is refused. The 0-d shape holds one "
        "element, and offset 0 gives the empty index (). Size-1 dims and a list shape come too.",
        "Plan: peel the dims off from the right. For each size, from the last to the first, "
        "divmod(offset, size) gives the quotient and the remainder: the remainder is that dim's "
        "entry, and the quotient, the whole rows before it, goes on as the offset for the dim "
        "to its left. The entries come out last first: reverse them, and return a tuple.",
    ),
    "2.5": (
        "Think of an odometer: the last wheel turns; when it passes its size it goes back to 0 "
        "and the wheel to its left turns by one. What comes after (0, 2, 4) in shape (2, 3, 5)?",
        "Validate the index first with the two checks of 2.3 (its length, then each entry's "
        "range); with a size-0 dim no index fits at all. Work on a copy of the index: the "
        "caller may pass a list and expects it unchanged.",
        "From the last dim to the first: if that entry plus one is still below its size, raise "
        "it by one and return the whole index as a tuple; otherwise set it to 0 and look at "
        "the dim to its left. When every dim has wrapped there is no next index: None. The 0-d "
        "index () has no next index either.",
    ),
    "2.6": (
        "A contiguous layout has the strides contiguous_strides would give its shape, with two "
        "freedoms: the storage offset does not matter, and neither do the strides of size-1 "
        "dims. Is Layout((2, 1, 3), (3, 99, 1)) contiguous? And Layout((3, 2), (1, 3))?",
        "A layout with a size-0 dim has no elements and counts as contiguous, whatever its "
        "strides. A 0-d layout is contiguous too. The tests also try negative strides, stride "
        "0, offsets other than 0, and NumPy's verdict on random layouts.",
        "Plan: return True at once when a size is 0. Then walk the dims from the last to the "
        "first with an expected stride that starts at 1: skip a size-1 dim; any other dim whose "
        "stride is not the expected one gives False; after each dim, multiply the expected "
        "stride by its size. A negative stride, or stride 0 on a dim bigger than 1, then fails "
        "by itself.",
    ),
    # Chapter 3: views
    "3.1": (
        "Multiply the sizes you know, leaving out the -1: the -1 stands for the element count "
        "divided by that product. For 24 elements, (-1, 3, 2) gives (4, 3, 2).",
        "Errors first, in this order: more than one -1; any other negative size; then, without "
        "a -1, a shape that does not hold exactly `numel` elements. Each message names the "
        "shape as a tuple.",
        "With a -1: if the known sizes hold 0 elements, no size can be inferred (every size "
        "would do), so (0, -1) is an error even for 0 elements. Otherwise `numel` must be a "
        "multiple of the known product. Return a tuple, also for a list shape.",
    ),
    "3.2": (
        "A size-1 dim has only index 0, so its stride is always multiplied by 0. Removing its "
        "size and its stride leaves every element where it was, and the storage offset stays.",
        "With dim=None drop every size-1 dim. Otherwise normalize_dims (in tenxor/strides.py) "
        "turns an int or a sequence of dims into sorted non-negative dims and raises the "
        "IndexError and TypeError the tests expect.",
        "Refuse, with a ValueError naming the dim, its size and the shape, any chosen dim whose "
        "size is not 1. Then keep the shape and strides of the other dims, in order. Squeezing "
        "shape (1,) gives a 0-d layout; a layout without size-1 dims comes back unchanged.",
    ),
    "3.3": (
        "Inserting a size-1 dim moves no element: only the shape and the strides gain one entry "
        "at position dim. Any stride would do; pick the one a row-major tensor would have "
        "there, so that a contiguous tensor stays contiguous.",
        "For shape (3, 4), strides (4, 1), the new dim gets stride 12 at position 0, 4 at "
        "position 1 and 1 at position 2: the stride of the dim it lands in front of times that "
        "dim's size, or 1 at the very end.",
        "A negative dim counts positions of the result, so the valid range is -(ndim + 1) to "
        "ndim; after checking it, take dim modulo ndim + 1. A dim that is not an int raises "
        "TypeError. A 0-d layout unsqueezed at 0 or -1 has shape (1,) and stride (1,).",
    ),
    "3.4": (
        "Dim k of the result is dim dims[k] of the input, and its stride travels with it. "
        "Shape (2, 3, 4), strides (12, 4, 1) with dims (2, 0, 1): what are the new shape and "
        "strides?",
        "Check the length of dims against the number of dims first. normalize_dim (in "
        "tenxor/strides.py) turns one dim into its non-negative form and raises the IndexError "
        "for a dim out of range.",
        "After normalising, no dim may appear twice: -1 and 2 are the same dim of a 3-d layout. "
        "Then read the shape and the strides in the order dims gives; the storage offset stays. "
        "A 0-d layout takes the empty permutation ().",
    ),
    "3.5": (
        "Handle one item of the key at a time, each against one dim of the input: an int moves "
        "the storage offset and drops the dim, a slice keeps the dim, None adds a new size-1 "
        "dim, and ... stands for full slices. Try x[1:, 1:3] on shape (3, 4), strides (4, 1) by "
        "hand.",
        "Normalise the key first: a single item becomes a tuple of one; refuse two ...; count "
        "the items that use up a dim (everything but None and ...) and refuse more than ndim; "
        "then replace the ... (or pad at the end) with as many full slices as dims are left.",
        "For a slice, slice.indices(size) clips start, stop and step for you, and the length "
        "of the range they describe is the new size. The stride becomes stride times step "
        "(negative for a negative step). Move the storage offset by start times stride only "
        "when at least one position is kept: an empty slice must not move it.",
        "An int may count from the end (-1 is size - 1); outside -size to size - 1 it raises "
        "IndexError naming the int as given, its dim counted in the input and the size. "
        "_as_int_index, at the bottom of views.py, refuses floats, strings and bools. A None "
        "gets size 1 and stride 0, as in NumPy, and uses up no dim of the input.",
    ),
    "3.6": (
        "Two neighbouring dims d and d + 1 step through storage as one longer dim when one step "
        "along d lands exactly where a full pass along d + 1 would continue: "
        "strides[d] == shape[d + 1] * strides[d + 1]. Is shape (4, 4), strides (6, 1) (the "
        "left part of a (4, 6) tensor) one run or two? And a row-major (2, 3, 4)?",
        "A run is (size, stride): the product of the sizes of its dims and the stride of its "
        "innermost dim. Walk the dims from the outermost: each dim either extends the last run "
        "(its size multiplies in, its stride becomes the run's stride) or starts a new one.",
        "Size-1 dims never move: skip them, so they neither start a run nor break one. "
        "Shape (2, 1, 3) with strides (3, 99, 1) is the single run (6, 1), and a layout of one "
        "element has no runs at all. A layout with no elements (a size-0 dim anywhere) has "
        "exactly one run, (0, 1), whatever its strides.",
        "Stride 0 and negative strides need no special case: the rule decides. An expanded dim "
        "(stride 0) in front of a dim of size 4 and stride 1 stays a run of its own, since "
        "0 is not 4 * 1; two stride-0 dims in a row join. A reversed (2, 3) matrix with strides "
        "(-3, -1) is one run of size 6 and stride -1.",
    ),
    "3.7": (
        "Think of each run as a 1-d tensor with one stride. A new dim of size k cut from the "
        "inner end of a run takes the run's stride, the dim cut next takes k times that, and so "
        "on, as long as the sizes divide what is left of the run. By hand: the runs "
        "[(4, 6), (4, 1)] and the new shape (4, 2, 2).",
        "Check first that the new shape holds as many elements as the runs (the product of the "
        "run sizes); otherwise raise ValueError naming the shape and what the runs hold. The "
        "runs hold at least two elements: view_layout deals with one element or none itself.",
        "Go from the innermost new dim outwards with two numbers, starting from the innermost "
        "run (the last in the list): how many of its elements are not cut yet, and the stride "
        "the next dim gets. When a run is used up and a new dim of size above 1 comes, take the "
        "next run inwards-out: its size is what is left, its stride the next stride.",
        "A new dim whose size does not divide what is left would span two runs: return None, "
        "only a copy can have that shape ([(4, 6), (4, 1)] cannot become (2, 8)). A new size-1 "
        "dim takes nothing from a run: it gets the stride you would hand to the next dim, "
        "as in PyTorch, where torch.empty(6).view(2, 1, 3).stride() is (3, 3, 1). Try a stride-0 "
        "run, [(3, 0), (4, 1)] into (3, 2, 2), and a negative one, [(6, -1)] into (2, 3).",
    ),
    # Chapter 4: broadcasting and the elementwise kernels
    "4.1": (
        "Line the shapes up on the right and look at one column (a dim counted from the end) "
        "at a time. In one column, which sizes can live together? Try (5, 1, 4) with (3, 1) "
        "by hand.",
        "A shape too short to reach a column counts as size 1 there, and 1s always fit. The "
        "other sizes in the column must all be equal; the column's result is that size, or 1 "
        "when there is none. No shapes, or only 0-d ones, broadcast to ().",
        "Size 0 is an ordinary size: it meets 1 and 0, not 3. A negative size raises ValueError "
        "naming it. A clash raises ValueError naming every shape and the two sizes that meet, "
        "in any order and any words. Plan: keep the size the column holds so far and compare "
        "each next size that is not 1 with it.",
    ),
    "4.2": (
        "Expanding moves no data: index (0, ..., 0) still reads the storage offset, and a "
        "stretched dim must read the same element whatever its index. Which stride makes a "
        "step along a dim add nothing to the offset?",
        "Line the layout's dims up with the target's from the right. The target's extra dims on "
        "the left get stride 0; a dim whose size equals its target size keeps its stride; a "
        "size-1 dim with another target size gets stride 0.",
        "Errors: a target with fewer dims; a dim whose size is neither 1 nor its target size, "
        "named by its position in the layout's own dims; a negative target size. Size 1 may "
        "grow to 0 (stride 0), size 3 may not. The storage offset never changes.",
    ),
    "4.3": (
        "Carry two things through the walk: the index (a list of ints) and the offset it reads. "
        "One step along the last dim adds its stride. What must happen to the offset when the "
        "last dim wraps from size - 1 back to 0?",
        "A dim that wraps gives back what it added, its last index times its stride, and then "
        "the dim to its left steps by one and adds its own stride. Never rebuild the offset "
        "from the whole index.",
        "A layout with a size-0 dim yields nothing; a 0-d layout yields its storage offset "
        "once. Negative strides and stride 0 need no special case. Each round: yield the "
        "offset, then find the innermost dim that is not at its last index, wrapping the dims "
        "inside it; when no dim can step, the walk is over.",
    ),
    "4.4": (
        "Cut the layout in two: the innermost dim (one row: its size and stride) and the outer "
        "dims. Every offset the outer dims reach is where one row starts.",
        "walk_offsets (4.3) on a Layout of the outer dims alone, with the same storage offset, "
        "gives the start of every row. read_row(data, start, size, stride), provided (imported "
        "at the top of broadcasting.py), reads one row, stride 0 and negative strides included.",
        "A 0-d layout has no rows: it reads the one element at its storage offset. A 1-d layout "
        "has a 0-d outer layout, so one row starting at the storage offset. A size-0 dim "
        "anywhere gives an empty list. Extend one list with each row, in walking order.",
    ),
    "4.5": (
        "Which of your functions already reads every element of a layout, in row-major order, "
        "whatever its strides?",
        "Apply fn to each value read_values (4.4) gives, in that order, and return a new list. "
        "An empty layout gives an empty list without calling fn. Let whatever fn raises "
        "propagate unchanged: no try/except.",
    ),
    "4.6": (
        "Four steps, each already written: the broadcast shape, each operand stretched to it, "
        "both read in row-major order, and the pairs combined. Which function does each step?",
        "broadcast_shapes (4.1), called with a's shape first, gives the shape and the error the "
        "tests expect. expand_layout (4.2) stretches each layout to it, and read_values (4.4) "
        "reads each stretched layout into lists of the same length.",
        "The k-th element of a's list meets the k-th of b's: call fn with a's element first "
        "(subtraction and division care) and return the shape together with the list. Shapes "
        "that are already equal take the same path; a broadcast shape with a size-0 dim gives "
        "an empty list.",
    ),
    # Chapter 5: reductions, matmul and softmax
    "5.1": (
        "If the reduced dims were the last ones, the elements of each output's group would be "
        "a block of neighbours in row-major order. How can you make them the last dims without "
        "copying anything?",
        "normalize_dims gives the reduced dims, sorted (None means every dim); the kept dims "
        "are the others, in order. permute_layout (3.4) with the kept dims first and the "
        "reduced dims last is a view, and read_values (4.4) of it lists the groups one after "
        "the other.",
        "A group's size is the product of the reduced sizes and the number of outputs the "
        "product of the kept sizes: output i folds the i-th block of that size. An empty group "
        "(a size-0 reduced dim) is still folded, so sum gives 0. The shape lists the kept "
        "sizes, or, with keepdim, every size with the reduced ones replaced by 1.",
        "A 0-d layout with dims=None reduces nothing and keeps nothing: one group holding its "
        "one element, and shape ().",
    ),
    "5.2": (
        "A mean is a sum divided by how many elements went into it. How many elements fold "
        "into each value of t.sum(dim)?",
        "The count is the product of t.shape[d] over the reduced dims, and normalize_dims(dim, "
        "t.ndim) lists them (None means every dim). Pass keepdim on to the sum.",
        "Divide the tensor the sum gives by the count once, with the tensor's division: it "
        "gives float64 for int and bool tensors, keeps float32 as float32, and turns the 0 / 0 "
        "of an empty group into nan, as NumPy does.",
    ),
    "5.3": (
        "Walk the group once, keeping the position of the best value seen so far. Which "
        "comparison keeps the first of two equal values, > or >=?",
        "A NaN compares false with everything, so > never picks it, yet it must win. A value "
        "v is NaN exactly when v != v: the first NaN you meet is the answer, at once.",
        "The group has at least one element, so position 0 is a fine first best. By hand: "
        "[1, 3, 3, 2] gives 1, [1.0, nan, 5.0, nan] gives 1, [4] gives 0. Ints and bools "
        "compare the same way.",
    ),
    "5.4": (
        "Walk one output element at a time, and inside it one row at a time. Once the operands "
        "are broadcast to one shape with the reduced dims moved last, an output element's group "
        "starts at one offset in each operand, and from there it is a series of rows along the "
        "last reduced dim, each row equally spaced offsets. Which provided function reads such "
        "a row in one slice, and which of Python's lazy tools makes the combined elements only "
        "as fold takes them?",
        "The tests watch the walk, not only the values: fold must get an iterator; combine may "
        "make element k + 1 of a group only after fold has taken element k; each operand's "
        "storage is read once per row, when fold reaches that row (a row read element by "
        "element, or a group read whole first, fails); and a group of a million elements is "
        "folded by any, which stops early, without a list of it. An iterator over a list you "
        "filled first is still a list.",
        "The edges: no operands at all is a ValueError naming the count, 0, checked first; "
        "broadcast_shapes (4.1) refuses shapes that do not fit and normalize_dims refuses bad "
        "dims, so let them raise. A group with no elements (a size-0 reduced dim) is still "
        "folded, and sum gives 0; a size-0 kept dim means no output element at all; with no "
        "reduced dim each group is one element, a row of 1. Catch nothing: what combine and "
        "fold raise passes through.",
        "Each operand goes through expand_layout (4.2) to the broadcast shape and "
        "permute_layout (3.4) with the kept dims first: views only, all of one shape. Cut each "
        "moved layout in two. Its kept dims, with its storage offset, make a layout whose "
        "walk_offsets (4.3) gives each group's start, output element after output element; walk "
        "every operand's side by side. Its reduced dims but the last, at storage offset 0, give "
        "where each row starts counted from the group's start; the last reduced dim gives the "
        "rows' size and each operand's step along them (0 where it is stretched).",
        "A plan. Per output element, with starts = one group start per operand (from "
        "zip(*map(walk_offsets, outputs))): a row is map(combine, *rows), where each operand's "
        "row is read_row(data, start + row_start, size, step), so map makes an element only "
        "when fold takes it; a group is itertools.chain.from_iterable over a generator of those "
        "rows, so the next row is read only when chain needs it; the value is fold(group). The "
        "shape is the kept sizes, or with keepdim every size with the reduced ones replaced by "
        "1.",
    ),
    "5.5": (
        "On the fused kernel (5.4), matmul is combine = operator.mul and fold = sum over one "
        "dim, the inner one, as the last dim. So look for two views of a and b, nothing copied, "
        "that broadcast to [..., n, m, k]: a's row i read at [..., i, j, :] for every column j, "
        "and b's column j read there for every row i. Which size-1 dim lets each stretch "
        "(stride 0) over the dim it lacks, and what brings b's inner dim last?",
        "A 1-D a is a row [1, k] (a new dim in front) and a 1-D b a column [k, 1] (a new dim at "
        "the end); remember which you added and squeeze those dims out of the result. A 0-d "
        "operand raises ValueError naming both shapes.",
        "Errors before any arithmetic: the inner sizes (a's last, b's second to last) must be "
        "equal, and the batch dims (all but the last two) must broadcast. Call broadcast_shapes "
        "on the batch dims and re-raise its ValueError as one that names both original shapes.",
        "The dtype: float operands give their promoted dtype (promote, from tenxor/storage.py) "
        "and int or bool operands int64, as sum gives; combine_fold takes it as dtype=. The "
        "batch dims need nothing of their own: the kernel broadcasts them with the rest.",
        "A plan, with a as [..., n, k] and b as [..., k, m] after the 1-D cases: rows = "
        "a.unsqueeze(-2) is [..., n, 1, k] and columns = b.transpose(-1, -2).unsqueeze(-3) is "
        "[..., 1, m, k]; row i and column j meet at [..., i, j, :], so "
        "rows.combine_fold(operator.mul, columns, dim=-1, dtype=...) multiplies and sums over k "
        "as it walks. Then squeeze the dims of 1-D operands.",
    ),
    "5.6": (
        "softmax(x) = exp(x) / sum(exp(x)), and it does not change when the same number is "
        "subtracted from every element of a group. Which number makes every argument of exp 0 or "
        "below, so that nothing overflows?",
        "Only tensor operations along dim, each reduction with keepdim=True so that its result "
        "broadcasts back against t: the group's max, a subtraction, exp, the group's sum, a "
        "division. No Python loop over elements.",
        "Huge logits like [1000, 1000, 1000] must give a third each, not nan; an entry of -inf "
        "gets weight 0; an int tensor gives float64 weights. A negative dim counts from the "
        "end, and a dim out of range is refused by max and sum themselves.",
        "Recipe: each group's max along dim with keepdim=True; t minus that max, so the largest "
        "argument of exp is 0; exp of the difference; the sum of those exps along dim with "
        "keepdim=True; the exps divided by their sum.",
    ),
    "5.7": (
        "Give every left-out logit the value -inf and exp turns it into exactly 0. Then it is "
        "the softmax of 5.6. What goes wrong in a group where every element is left out?",
        "t.where(mask, value) keeps t where mask holds and puts value elsewhere, broadcasting "
        "the mask. After that come the steps of softmax: the group's max with keepdim, a "
        "subtraction, exp, the group's sum with keepdim, a division.",
        "A fully masked group has max -inf, and -inf minus -inf is nan. Replace such a max by 0 "
        "before subtracting (comparing the max with -inf gives the bool tensor of where it is "
        "real). That group's weights are then all 0 and so is its sum: divide by 1 there instead, "
        "with one more where. Huge masked-out logits disappear before the max.",
    ),
    # Chapter 6: GATv2 on padded batches and on edge lists
    "6.1": (
        "For one head this is chapter 5's matmul: [..., DI] @ [DI, DA]. Can one matmul do every "
        "head at once? Look at theta's last two dims as one dim of H * DA columns.",
        "Column h * DA + d of theta seen as [DI, H * DA] is theta[:, h, d], so one matmul gives "
        "every head's features side by side, head 0's first; a reshape splits them into "
        "[..., H, DA]. Keep whatever leading dims x has ([V, DI], [B, N, DI], a view). theta "
        "may be a view with stride 0 (the same matrix for every head): reshape copies when it "
        "must, view would refuse.",
        "Recipe: reshape theta to [DI, H * DA]; matmul x with it; reshape the product to x's "
        "leading dims followed by H and DA; then add the bias, whose [H, DA] broadcasts against "
        "the last two dims, unless it is None. float32 in gives float32 out.",
    ),
    "6.2": (
        "Three things decide attends[b, i, j]: node i is real, node j is real, and j is i or "
        "there is an edge j -> i. Which of them can you get for every pair at once, by pairing "
        "the node mask with itself as in an outer product?",
        "Compare the mask and the adjacency with 0 first, so that numbers work like bools. "
        "'Both real' pairs the [B, N] mask with itself: one copy with a size-1 dim where node "
        "j goes, the other with a size-1 dim where node i goes. self_loops(N), provided, is "
        "the [N, N] diagonal and broadcasts against [B, N, N].",
        "Whatever the adjacency's diagonal holds, the answer there is 'both real', which is "
        "'i is real'. Recipe: the [B, N, N] both-real mask; the edges, the nonzero adjacency "
        "and both-real together (& of two bool tensors is an 'and', as is their product); then "
        "one where, with self_loops(N) as the condition, both-real where it holds and the "
        "edges elsewhere.",
    ),
    "6.3": (
        "You need a score for every pair (i, j): receiver[b, i, h] and sender[b, j, h] meet "
        "at [b, i, j, h, :]. As in the outer product of 6.2, put node i and node j on "
        "different dims and let broadcasting pair them; then fold over the DA features.",
        "The tests try several B, N, H and DA, among them N equal to H, where a dim in the wrong "
        "place raises nothing and gives wrong numbers; receivers and senders that differ, so "
        "swapping i and j shows; the slopes 0, 0.2, 0.5 and 1; and no slope at all, which "
        "means 0.2.",
        "A sum of the pairs, its leaky_relu and its product with attention would each be a "
        "[B, N, N, H, DA] tensor. Your fused kernel needs none of them: combine_fold with the "
        "three operands and a combine that scores one feature, feature_score(slope).",
        "Recipe: receiver.unsqueeze(2) is [B, N, 1, H, DA] (i along dim 1), "
        "sender.unsqueeze(1) is [B, 1, N, H, DA] (j along dim 2), and attention [H, DA] "
        "broadcasts against the last two dims. Call combine_fold on receiver.unsqueeze(2), "
        "with feature_score(slope) as the combine and sender.unsqueeze(1) and attention as "
        "the other operands, folding dim=-1: that is [B, N, N, H].",
    ),
    "6.4": (
        "For each b, i and h the weights are a softmax over j, dim 2 of the logits, taken only "
        "where attends[b, i, j] holds. Chapter 5 has a softmax over part of a group.",
        "The tests try 1 and 3 heads, a row where i listens to nobody (all zeros, not nan), "
        "logits in the thousands, and a masked-out logit larger than every kept one. The mask "
        "is [B, N, N] and the logits [B, N, N, H]: lined up from the right, the mask's dims "
        "would meet the wrong ones of the logits. It has to cover every head.",
        "Recipe: the logits' masked_softmax along dim=2, with attends.unsqueeze(-1), which is "
        "[B, N, N, 1], as the mask. Chapter 5's masked softmax already gives zeros to a row "
        "with nothing kept and never overflows.",
    ),
    "6.5": (
        "Fix a graph b and a head h: the sum over j of alpha[b, i, j, h] * sender[b, j, h] is "
        "row i of a matrix product, the [N, N] weights (i, j) times the [N, DA] senders "
        "(j, features).",
        "matmul multiplies the last two dims and broadcasts the others as batch dims. So move "
        "the head dim in front of the node dims on both sides: the weights as [B, H, N (i), "
        "N (j)] and the senders as [B, H, N (j), DA]. permute is a view: nothing is copied "
        "before the matmul.",
        "Recipe: permute alpha with (0, 3, 1, 2) and sender with (0, 2, 1, 3); matmul them into "
        "[B, H, N, DA]; permute that back with (0, 2, 1, 3) to [B, N, H, DA]. A broadcast "
        "product summed over j gives the same numbers, but builds a [B, N, N, H, DA] tensor.",
    ),
    "6.6": (
        "In row-major order the features of [..., H, DA] already come head 0 first, then head "
        "1, and so on: concatenating the heads changes the shape and nothing else. Averaging "
        "is a reduction over the head dim.",
        "Keep every leading dim: the input may be [B, N, H, DA], [V, H, DA] or a permuted view "
        "(the tests try one), and reshape copies when a view will not do. The mean over dim -2 "
        "gives [..., DA]. float32 stays float32.",
        "Recipe: when concat, reshape to the leading dims followed by -1; otherwise take the "
        "mean over dim -2.",
    ),
    "6.7": (
        "The layer is steps 1 to 6 in order, with the weights the layer holds. Write each "
        "intermediate's shape beside it before you write code: [B, N, H, DA] twice, then "
        "[B, N, N], [B, N, N, H], [B, N, N, H], [B, N, H, DA], [B, N, H * DA].",
        "The receiver projection uses theta_receiver with bias_receiver, the sender projection "
        "theta_sender with bias_sender, and the messages are sender projections. Pass "
        "layer.slope to the logits and layer.concat to combine_heads, and add layer.bias "
        "unless it is None.",
        "The tests fill the padding rows of x with values like 1e300 and want the real rows "
        "unchanged and the padding rows exactly 0. Safest: set the features of padding nodes "
        "to 0 first (where, with the node mask given a size-1 dim at its end), so no sum ever "
        "sees them, and set the output rows of padding nodes to 0 the same way at the end, "
        "since the bias lands on every row.",
        "Recipe: zero the padding features; project twice; attention_logits of the two "
        "projections; attention_weights with the mask from attends; aggregate the weights with "
        "the sender projection; combine_heads; add the bias; zero the padding rows.",
    ),
    "6.8": (
        "In the row-major values of t, row r is the block of row_width(t) values that starts "
        "at r * row_width(t). The result is the blocks that the index names, one after "
        "another, in the row-major order of the index's elements.",
        "Checks first: a 0-d t has no rows (ValueError naming its shape). index_values(index, "
        "rows), provided above the exercises, raises the TypeError and the IndexError the "
        "tests want and returns the indices as a list. A negative index counts from the end: "
        "i % rows is its row. t.values() reads any view in row-major order.",
        "Recipe: the number of rows and the row width; t's values; for every index from "
        "index_values, the block of width values starting at (i % rows) * width, all appended "
        "to one list; then Tenxor.from_values with that list, the shape index.shape + "
        "t.shape[1:] and t's dtype.",
    ),
    "6.9": (
        "Work on plain lists: a copy of t's values and the values of source, both row-major. "
        "Row k of source is its k-th block of row_width(t) values, and it folds, element by "
        "element, into the block of row index[k] of the copy.",
        "Check the shapes first: t needs a dim, index must be 1-D, and source must have the "
        "shape index.shape + t.shape[1:] (one ValueError naming the three shapes). "
        "index_values does the dtype and range checks. Fold in the order of k: the tests use "
        "folds where order matters. The dtype of the result is promote(t.dtype, "
        "source.dtype).",
        "Recipe: the copy of t's values; for each position k and its row i from index_values, "
        "the block starting at (i % rows) * width becomes fold(old, new) element by element "
        "with block k of source; then a tensor of t's shape with the promoted dtype, built by "
        "Tenxor.from_values.",
    ),
    "6.10": (
        "A stable softmax subtracts the largest logit before exp and divides by the sum of the "
        "exps after. Here both are per segment, and every row must read back its own "
        "segment's value.",
        "index_amax folds the logits into a [segments, ...] tensor that starts full of -inf: "
        "each segment's max. index_add folds rows into zeros: each segment's sum. gather_rows "
        "with the segment tensor as the index gives every row its segment's value, back at "
        "[K, ...]. A segment without rows keeps -inf and 0, but no row reads them. Keep the "
        "logits' dtype.",
        "Recipe: the maxima from index_amax, starting from full of -inf with the logits' "
        "dtype; exp of the logits minus the gathered maxima; the sums from index_add of those "
        "exps, starting from zeros; the exps divided by the gathered sums.",
    ),
    "6.11": (
        "The same layer with edges instead of pairs: project the V nodes once, then give edge "
        "k the receiver projection of its target and the sender projection of its source. "
        "Each [B, N, N, ...] tensor of the dense layer becomes an [E, ...] one.",
        "Start with with_self_loops(sources, targets, V): the tests give lists with self "
        "loops, and lists with no edges at all. Node i's softmax runs over the edges into i, "
        "so the segments are the targets, V of them. The messages are the edges' sender "
        "projections, each weighted by its alpha (a size-1 dim at its end for the features).",
        "Recipe: the edges with one self loop per node; receiver projections [V, H, DA]; sender "
        "projections gathered by sources [E, H, DA]; the logits [E, H]: the receiver projections "
        "gathered by targets, the senders' and attention folded over the last dim by "
        "combine_fold with feature_score(layer.slope); segment_softmax over the targets with V "
        "segments; the "
        "weighted messages folded by index_add into zeros of [V, H, DA] at the targets; "
        "combine_heads; add layer.bias unless it is None.",
    ),
}
