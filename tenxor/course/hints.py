"""Hints for every exercise, revealed one at a time by `check("2.1", hint=True)`.

Each exercise has at least two. The first points at the idea, the middle ones at the cases
the tests try, and the last comes close to a plan in words, never to the code itself.
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
        "Split the pattern with a right shift by 16 and a mask of the low 16 bits. Compare the "
        "dropped half with 0x8000, the half-way point: above it rounds up, below it rounds "
        "down, and exactly on it the last bit of the upper half decides (ties go to even).",
        "Rounding up adds 1 to the upper half, and that may carry into the exponent: let it. "
        "That is how a value just below a power of two rounds up to it, and how the largest "
        "float32 values become infinity. Check the range first: below 0, or 2**32 and above, "
        "raises ValueError naming the number.",
        "A NaN has its 8 exponent bits (bits 23 to 30) all ones and its 23 fraction bits not "
        "all zero. If its only fraction bits sit in the dropped half, rounding gives infinity. "
        "So test for NaN before rounding, and answer with the upper half with fraction bit "
        "0x0040 switched on: a quiet NaN with the same sign.",
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
        "A size-0 dim counts as size 1 in the running product, as in NumPy: (2, 0, 3) gives "
        "(3, 3, 1), not (0, 3, 1). A size-1 dim still gets its stride. Collecting the strides "
        "right to left means reversing them at the end; return a tuple.",
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
        "Peel the dims off from the right: the remainder of the offset divided by the last size "
        "is the last entry of the index, and the quotient carries on to the dim before it. "
        "divmod gives both at once.",
        "Count the elements first and refuse an offset below 0 or not below that count: a shape "
        "with a size-0 dim holds none, so every offset is refused. The 0-d shape holds one "
        "element, and offset 0 gives the empty index ().",
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
        "strides. A 0-d layout is contiguous too.",
        "Walk from the last dim with an expected stride that starts at 1. Skip the size-1 dims; "
        "every other dim must have exactly the expected stride, after which the expected stride "
        "grows by that dim's size. A negative stride, or stride 0 on a dim bigger than 1, is "
        "never contiguous.",
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
        "naming it. A clash names every shape in the order given, then the two sizes that meet, "
        "the earlier shape's first: keep the size the column holds so far and compare each "
        "next size that is not 1 with it.",
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
        "If the reduced dims were the last ones, the elements of each output's run would be a "
        "block of neighbours in row-major order. How can you make them the last dims without "
        "copying anything?",
        "normalize_dims gives the reduced dims, sorted (None means every dim); the kept dims "
        "are the others, in order. permute_layout (3.4) with the kept dims first and the "
        "reduced dims last is a view, and read_values (4.4) of it lists the runs one after "
        "the other.",
        "The run length is the product of the reduced sizes and the number of outputs the "
        "product of the kept sizes: output i folds the i-th block of that length. An empty run "
        "(a size-0 reduced dim) is still folded, so sum gives 0. The shape lists the kept "
        "sizes, or, with keepdim, every size with the reduced ones replaced by 1.",
        "A 0-d layout with dims=None reduces nothing and keeps nothing: one run holding its "
        "one element, and shape ().",
    ),
    "5.2": (
        "A mean is a sum divided by how many elements went into it. How many elements fold "
        "into each value of t.sum(dim)?",
        "The count is the product of t.shape[d] over the reduced dims, and normalize_dims(dim, "
        "t.ndim) lists them (None means every dim). Pass keepdim on to the sum.",
        "Divide the tensor the sum gives by the count once, with the tensor's division: it "
        "gives float64 for int and bool tensors, keeps float32 as float32, and turns the 0 / 0 "
        "of an empty run into nan, as NumPy does.",
    ),
    "5.3": (
        "Walk the run once, keeping the position of the best value seen so far. Which "
        "comparison keeps the first of two equal values, > or >=?",
        "A NaN compares false with everything, so > never picks it, yet it must win. A value "
        "v is NaN exactly when v != v: the first NaN you meet is the answer, at once.",
        "The run has at least one element, so position 0 is a fine first best. By hand: "
        "[1, 3, 3, 2] gives 1, [1.0, nan, 5.0, nan] gives 1, [4] gives 0. Ints and bools "
        "compare the same way.",
    ),
    "5.4": (
        "For matrices, c[i, j] is the sum over p of a[i, p] * b[p, j]. If the three letters i, "
        "p and j each had a dim of their own, one broadcast multiply would form every product "
        "at once, and a sum over p would finish the job. Which size-1 dims must a [n, k] and "
        "b [k, m] gain?",
        "A 1-D a is a row [1, k] (a new dim in front) and a 1-D b a column [k, 1] (a new dim at "
        "the end); remember which you added and squeeze those dims out of the result. A 0-d "
        "operand raises ValueError naming both shapes.",
        "Errors before any arithmetic: the inner sizes (a's last, b's second to last) must be "
        "equal, and the batch dims (all but the last two) must broadcast. Call broadcast_shapes "
        "on the batch dims and re-raise its ValueError as one that names both original shapes.",
        "The plan: with a as [..., n, k] and b as [..., k, m], give a a new dim at the end "
        "([..., n, k, 1]) and b one before its last two ([..., 1, k, m]); multiply, which also "
        "broadcasts the batch dims; sum over the k dim, second to last; squeeze the dims added "
        "for 1-D operands. Transposing b and summing over the last dim works as well.",
    ),
    "5.5": (
        "softmax(x) = exp(x) / sum(exp(x)), and it does not change when the same number is "
        "subtracted from every element of a run. Which number makes every argument of exp 0 or "
        "below, so that nothing overflows?",
        "Only tensor operations along dim, each reduction with keepdim=True so that its result "
        "broadcasts back against t: the run's max, a subtraction, exp, the run's sum, a "
        "division. No Python loop over elements.",
        "Huge logits like [1000, 1000, 1000] must give a third each, not nan; an entry of -inf "
        "gets weight 0; an int tensor gives float64 weights. A negative dim counts from the "
        "end, and a dim out of range is refused by max and sum themselves.",
    ),
    "5.6": (
        "Give every left-out logit the value -inf and exp turns it into exactly 0. Then it is "
        "the softmax of 5.5. What goes wrong in a run where every element is left out?",
        "t.where(mask, value) keeps t where mask holds and puts value elsewhere, broadcasting "
        "the mask. After that come the steps of softmax: the run's max with keepdim, a "
        "subtraction, exp, the run's sum with keepdim, a division.",
        "A fully masked run has max -inf, and -inf minus -inf is nan. Replace such a max by 0 "
        "before subtracting (comparing the max with -inf gives the bool tensor of where it is "
        "real). That run's weights are then all 0 and so is its sum: divide by 1 there instead, "
        "with one more where. Huge masked-out logits disappear before the max.",
    ),
    # Chapter 6: a batched GATv2 layer
    "6.1": (
        "edge_mask[b, i, j] says 'node i is real and node j is real': an outer product of each "
        "graph's mask with itself. How do you pair every i with every j without a loop?",
        "Turn the mask into bools first by comparing it with 0, so that a mask of 0.0 and 1.0 "
        "works. Then lay one copy of the [B, N] mask along dims (b, i) and the other along "
        "(b, j), each with a size-1 dim where the other node goes.",
        "Recipe: unsqueeze the bool mask at its end to get [B, N, 1] (node i along dim 1) and "
        "in its middle to get [B, 1, N] (node j along dim 2), and combine them with one "
        "elementwise operation that is 'and' for bools, such as a product: broadcasting gives "
        "[B, N, N].",
    ),
    "6.2": (
        "Three things must hold at [b, i, j]: there is an edge, both nodes are real, and j is "
        "not i. Which tensor already says each of them?",
        "Any nonzero adjacency entry is an edge (compare with 0). edge_mask (6.1) says both "
        "ends are real. self_loops(n), provided above the exercises, is the [N, N] diagonal, "
        "and it broadcasts against [B, N, N].",
        "Recipe: combine the edge test and the edge mask elementwise into one bool [B, N, N] "
        "tensor; then clear its diagonal with one call to where: the condition is self_loops of "
        "the node count, the value where it holds is False, and elsewhere the combined mask.",
    ),
    "6.3": (
        "Off the diagonal, node i attends to its neighbours. On the diagonal, node i attends to "
        "itself exactly when it is real. Which tensor already holds 'node i is real' at "
        "[b, i, i]?",
        "edge_mask(node_mask) at [b, i, i] is true exactly for a real node i. A padding node "
        "attends to nobody, not even itself, and a self loop in the input must not count "
        "twice (the neighbour mask has none).",
        "Recipe: one where, with the diagonal self_loops(N) as the condition, the edge mask as "
        "the value where it holds and the neighbour mask elsewhere.",
    ),
    "6.4": (
        "For every pair (i, j) you need x_source[b, i] + x_target[b, j]: a [B, N, N, DA] "
        "tensor. As in 6.1, put node i and node j on different dims and let broadcasting form "
        "every pair.",
        "Check the shapes as you go: [B, N, 1, DA] plus [B, 1, N, DA] is [B, N, N, DA]. "
        "LeakyReLU is the tensor method leaky_relu(slope). Then a_h . v for every head h is a "
        "matmul of the last dim with attention [DA, H], which gives [B, N, N, H].",
        "Recipe: unsqueeze x_source at dim 2 and x_target at dim 1, add them, apply leaky_relu "
        "with the slope you were given (the tests try another one), and matmul the result with "
        "attention. Every pair gets a score, real or not: masking comes next.",
    ),
    "6.5": (
        "For one graph b, node i and head h, the weights are a softmax over j, taken only where "
        "attends[b, i, j] holds. Which chapter-5 function is a softmax over part of a run, and "
        "along which dim of the [B, N, N, H] logits does j run?",
        "The mask is [B, N, N] but the logits are [B, N, N, H]: give the mask a size-1 dim for "
        "the heads at the end and it covers every head. A node that attends to nobody gets all "
        "zeros and large logits must not overflow: masked softmax already does both.",
        "Recipe: the logits' masked_softmax method, with the attends mask unsqueezed at its "
        "last dim, along dim 2.",
    ),
    "6.6": (
        "For one graph b and head h, the sum over j of alpha[b, i, j, h] * x_target[b, j] is "
        "row i of a matrix product: the [N, N] weights times the [N, DA] target features. Only "
        "neighbours count, so first zero every weight that is not a neighbour's, the diagonal "
        "included.",
        "To zero the weights, multiply alpha by the neighbour mask with a size-1 dim for the "
        "heads at the end. For the matmul the heads must become a batch dim and j the last dim "
        "of the weights, where it meets the node dim of x_target; x_target needs a size-1 dim "
        "where node i goes, so that it broadcasts over every receiving node.",
        "Recipe: the weights are alpha times the neighbour mask unsqueezed at its end "
        "([B, N, N, H]); permute them to [B, N, H, N] (graph, node i, head, then j); unsqueeze "
        "x_target at dim 1 to get [B, 1, N, DA]; the batched matmul of the two is "
        "[B, N, H, DA]. The features that alpha[b, i, j, h] weights are those of the sender j.",
    ),
    "6.7": (
        "You need alpha[b, i, i, h], the diagonal of alpha over its two node dims, without "
        "indexing with two equal positions. How can a mask and a sum pick one element out of "
        "each run?",
        "Multiplying alpha by the diagonal mask (with a size-1 dim for the heads) zeroes every "
        "weight but j == i; summing over j (dim 2) leaves [B, N, H]. Then broadcast that "
        "against the source features with heads and features on dims of their own.",
        "Recipe: multiply alpha by self_loops(N) unsqueezed at its end and sum over dim 2, "
        "giving [B, N, H]; unsqueeze that at its end ([B, N, H, 1]) and multiply by x_source "
        "unsqueezed at dim 2 ([B, N, 1, DA]): the messages are [B, N, H, DA].",
    ),
    "6.8": (
        "Follow the equation with the functions of steps 1 to 7: projections, neighbours, "
        "whom each node attends to, logits, weights, messages, and the mean over heads. Write "
        "the shape of every intermediate tensor beside it.",
        "The projections are x matmul theta_source and x matmul theta_target, both [B, N, DA]. "
        "Compute the neighbour mask once: the attends mask and the neighbour messages both need "
        "it. Pass slope on to attention_logits. check_shapes already runs at the top.",
        "Recipe: the neighbour mask from neighbours; the attends mask from neighbours_and_self; "
        "the logits from attention_logits of the source and target projections; alpha from "
        "attention_weights; then self_messages (with the source projection) plus "
        "neighbour_messages (with the target projection), averaged over the heads, dim 2. "
        "Padding nodes come out as zeros by themselves.",
    ),
}
