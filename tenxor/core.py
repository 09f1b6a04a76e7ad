"""The Tenxor class: a storage plus a layout.

Every method is a thin delegation to the chapter modules: views call the layout functions of
chapters 2 and 3, arithmetic calls the kernels of chapter 4, reductions call chapter 5. This
module is provided; the exercises live in the chapter modules, and the constructors (`tensor`,
`zeros`, `arange`, ...) in tenxor/creation.py.

How a tensor is shown. The layers of the library read one way, and the printer
(tenxor/printing.py) and the diagrams (tenxor/diagrams/) sit above this class: they use
tensors, so this module never imports them. A tensor finds them in `SHOWN` instead, which
the package top (tenxor/__init__.py, the one module that assembles every layer) fills when
`import tenxor` runs: `SHOWN.text` is the printer behind repr(t), str(t) and print(t), and
`SHOWN.drawing` draws t.draw(), importing tenxor.diagrams only when a first diagram is asked
for.
"""

from __future__ import annotations

import functools
import math
import operator
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from . import broadcasting as bc
from . import reductions as rd
from .python_values import converter, dtype_of_number, int_args, nest, read_data, shape_args
from .row_major import is_row_major, row_major_strides, row_major_values
from .storage import (
    DType,
    Number,
    Storage,
    as_dtype,
    bool_,
    byte_strides,
    float64,
    int64,
    numel,
    promote,
    to_bytes,
)
from .strides import Layout, Shape, is_contiguous, normalize_dims, offset_range
from .views import (
    index_layout,
    movedim_layout,
    permute_layout,
    squeeze_layout,
    transpose_layout,
    unsqueeze_layout,
    view_layout,
)

Operand = Any  # a Tenxor, a Python number, nested lists of numbers or a NumPy array


@dataclass
class Shown:
    """How a tensor is shown: as text and as a diagram (see the module docstring)."""

    text: Callable[[Tenxor], str] | None = None  # repr(t), str(t), print(t)
    drawing: Callable[..., Any] | None = None  # t.draw(arrows, values, name, max_cells)


SHOWN = Shown()  # filled by the package top, tenxor/__init__.py


def shown_by(way: str) -> Callable[..., Any]:
    """The function that shows a tensor `way` ("text" or "drawing"), or an error saying what
    to import when nothing has filled it in."""
    show = getattr(SHOWN, way)
    if show is None:
        raise RuntimeError(
            f"nothing shows a tensor as {way} yet: `import tenxor` connects the printer and "
            "the diagrams to the Tenxor class (see SHOWN in tenxor/core.py)"
        )
    return show


class Tenxor:
    """A tensor: elements in a Storage, read through a Layout `(shape, strides, offset)`."""

    __hash__ = object.__hash__  # == compares elementwise, so hash by identity

    def __init__(self, storage: Storage, layout: Layout) -> None:
        if 0 not in layout.shape:
            low, high = offset_range(layout)
            if low < 0 or high >= len(storage):
                raise IndexError(
                    f"layout {layout} reaches offsets {low} to {high}, "
                    f"but the storage has {len(storage)} elements"
                )
        self.storage = storage
        self.layout = layout

    @classmethod
    def from_values(cls, values: Sequence[Number], shape: Sequence[int], dtype: DType) -> Tenxor:
        """A contiguous tensor of `shape` holding `values` in row-major order (a copy)."""
        shape = tuple(shape)
        if len(values) != math.prod(shape):
            raise ValueError(f"{len(values)} values cannot fill shape {shape}")
        return cls(Storage(values, dtype), Layout(shape, row_major_strides(shape)))

    # -- what it is ---------------------------------------------------------------------------

    @property
    def shape(self) -> Shape:
        return self.layout.shape

    @property
    def strides(self) -> tuple[int, ...]:
        return self.layout.strides

    @property
    def offset(self) -> int:
        """The storage offset: where the element at index (0, ..., 0) lives."""
        return self.layout.offset

    @property
    def dtype(self) -> DType:
        return self.storage.dtype

    @property
    def ndim(self) -> int:
        return self.layout.ndim

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def byte_strides(self) -> tuple[int, ...]:
        """Strides in bytes, as NumPy reports them."""
        return byte_strides(self.strides, self.itemsize)

    def numel(self) -> int:
        """The number of elements."""
        return numel(self.shape)

    def is_contiguous(self) -> bool:
        return is_contiguous(self.layout)

    def __len__(self) -> int:
        if self.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    # -- reading elements -----------------------------------------------------------------------

    def values(self) -> list[Number]:
        """Every element in row-major order of the indices."""
        return row_major_values(self.storage.values(), self.layout)

    def tolist(self) -> Any:
        """The elements as nested lists (a plain number for a 0-d tensor)."""
        return nest(self.values(), self.shape)

    def item(self) -> Number:
        """The one element of a tensor that holds exactly one."""
        values = self.values()
        if len(values) != 1:
            raise ValueError(
                f"item() needs exactly one element, but shape {self.shape} holds {len(values)}"
            )
        return values[0]

    def tobytes(self) -> bytes:
        """The raw bytes of the elements in row-major order, as a contiguous copy stores them."""
        return to_bytes(self.values(), self.dtype)

    def __bool__(self) -> bool:
        if math.prod(self.shape) != 1:
            raise ValueError(
                f"the truth value of a tensor of shape {self.shape} is ambiguous; "
                "use .any()-style reductions or compare elements"
            )
        return bool(self.item())

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __repr__(self) -> str:
        """The printer's text of this tensor (tenxor/printing.py, found through SHOWN)."""
        return shown_by("text")(self)

    def draw(
        self, arrows: Any = None, values: bool = True, name: str = "t", max_cells: int = 64
    ) -> Any:
        """A stride diagram of this tensor: its cells over its storage, joined by offset.

        `arrows` is "all", "none", "strides" or a list of indices (default: all arrows of a
        small tensor, index 0 and one step along each dim for a bigger one). Tensors of more
        than `max_cells` elements are refused: draw a slice instead. The diagram comes from
        tenxor.diagrams, found through SHOWN.
        """
        return shown_by("drawing")(self, arrows, values, name, max_cells)

    def __iter__(self) -> Iterator[Tenxor]:
        for i in range(len(self)):
            yield self[i]

    # -- views ----------------------------------------------------------------------------------

    def _with_layout(self, layout: Layout) -> Tenxor:
        """A view: the same storage read through another layout."""
        return Tenxor(self.storage, layout)

    def view(self, *shape: int | Sequence[int]) -> Tenxor:
        """The same elements in a new shape, as a view; raises if only a copy could do it."""
        shape = shape_args(shape, allow_minus_one=True)
        layout = view_layout(self.layout, shape)
        if layout is None:
            raise ValueError(
                f"view of shape {self.shape} with strides {self.strides} as {shape} needs a "
                "copy; use reshape(), or contiguous() first"
            )
        return self._with_layout(layout)

    def reshape(self, *shape: int | Sequence[int]) -> Tenxor:
        """The same elements in a new shape: a view when the strides allow it, else a copy."""
        shape = shape_args(shape, allow_minus_one=True)
        layout = view_layout(self.layout, shape)
        if layout is None:
            return self.contiguous().view(shape)
        return self._with_layout(layout)

    def flatten(self) -> Tenxor:
        return self.reshape(-1)

    def squeeze(self, dim: int | Sequence[int] | None = None) -> Tenxor:
        return self._with_layout(squeeze_layout(self.layout, dim))

    def unsqueeze(self, dim: int) -> Tenxor:
        return self._with_layout(unsqueeze_layout(self.layout, dim))

    def permute(self, *dims: int | Sequence[int]) -> Tenxor:
        return self._with_layout(permute_layout(self.layout, int_args(dims, "dims")))

    def transpose(self, dim0: int, dim1: int) -> Tenxor:
        return self._with_layout(transpose_layout(self.layout, dim0, dim1))

    swapaxes = transpose

    def movedim(self, source: int, destination: int) -> Tenxor:
        return self._with_layout(movedim_layout(self.layout, source, destination))

    @property
    def T(self) -> Tenxor:  # noqa: N802 - the conventional name
        """The tensor with its dims in reverse order (the transpose of a matrix)."""
        return self.permute(tuple(reversed(range(self.ndim))))

    def expand(self, *shape: int | Sequence[int]) -> Tenxor:
        """A view stretched to `shape`: size-1 dims repeat with stride 0; -1 keeps a dim's size."""
        target = int_args(shape, "sizes in a shape")
        extra = len(target) - self.ndim
        target = tuple(
            self.shape[i - extra] if size == -1 and i >= extra else size
            for i, size in enumerate(target)
        )
        return self._with_layout(bc.expand_layout(self.layout, target))

    def broadcast_to(self, shape: Sequence[int]) -> Tenxor:
        return self.expand(shape)

    def contiguous(self) -> Tenxor:
        """This tensor if it is contiguous, else a row-major copy."""
        if is_row_major(self.layout):
            return self
        return self.clone()

    def clone(self) -> Tenxor:
        """A contiguous copy with its own storage."""
        return Tenxor.from_values(self.values(), self.shape, self.dtype)

    def __getitem__(self, key: Any) -> Tenxor:
        items = key if isinstance(key, tuple) else (key,)
        lists = [i for i, item in enumerate(items) if _is_list_index(item)]
        if not lists:
            return self._with_layout(index_layout(self.layout, key))
        if len(lists) > 1:
            raise IndexError(f"only one list index is supported, got {len(lists)} in {key!r}")
        return self._gather(items, lists[0])

    def _gather(self, items: tuple[Any, ...], position: int) -> Tenxor:
        """The copy that a key with one list index selects (duplicates allowed)."""
        chosen = _as_index_list(items[position])
        full = items[:position] + (slice(None),) + items[position + 1 :]
        picked = self[full]
        dim = _result_dim(items, position, self.ndim)
        size = picked.shape[dim]
        for i in chosen:
            if not -size <= i < size:
                raise IndexError(f"index {i} is out of range for dim {dim} of size {size}")
        front = picked.movedim(dim, 0)
        values = [v for i in chosen for v in front[i].values()]
        stacked = Tenxor.from_values(values, (len(chosen),) + front.shape[1:], self.dtype)
        moved = stacked.movedim(0, _gathered_dim(items, position, dim))
        return (
            moved if moved.ndim < 2 or _gathered_dim(items, position, dim) == 0 else moved.clone()
        )

    # -- elementwise ----------------------------------------------------------------------------

    def map(self, fn: Callable[[Any], Any], dtype: DType | str | None = None) -> Tenxor:
        """A new tensor of fn(x) for every element x, of `dtype` (default: this tensor's)."""
        dtype = self.dtype if dtype is None else as_dtype(dtype)
        return Tenxor.from_values(
            bc.map_values(fn, self.storage.values(), self.layout), self.shape, dtype
        )

    def zip(self, other: Operand, fn: Callable[[Any, Any], Any], dtype: DType) -> Tenxor:
        """A new tensor of fn(a, b) for every pair of elements of the broadcast operands."""
        other = as_tensor(other, like=self)
        shape, values = bc.zip_values(
            fn, self.storage.values(), self.layout, other.storage.values(), other.layout
        )
        return Tenxor.from_values(values, shape, dtype)

    def _arithmetic(self, other: Operand, fn: Callable[[Any, Any], Any], name: str) -> Tenxor:
        other = as_tensor(other, like=self)
        dtype = promote(self.dtype, other.dtype)
        if dtype is bool_ and name in ("-", "**"):
            raise TypeError(f"'{name}' is not defined for two bool tensors")
        return self.zip(other, fn, dtype)

    def _true_division(self, other: Operand, reverse: bool = False) -> Tenxor:
        other = as_tensor(other, like=self)
        dtype = promote(self.dtype, other.dtype)
        dtype = dtype if dtype.kind == "float" else float64
        a, b = (other, self) if reverse else (self, other)
        try:  # Python's own division, until a zero divisor needs IEEE's answer
            return a.zip(b, operator.truediv, dtype)
        except ZeroDivisionError:
            return a.zip(b, bc.divide, dtype)

    def _compare(self, other: Operand, fn: Callable[[Any, Any], bool]) -> Tenxor:
        return self.zip(other, fn, bool_)

    def _logical(self, other: Operand, fn: Callable[[bool, bool], bool], name: str) -> Tenxor:
        """`and`, `or` or `xor` of two bool tensors, as PyTorch's & | ^ on bool tensors."""
        other = as_tensor(other, like=self)
        if self.dtype is not bool_ or other.dtype is not bool_:
            raise TypeError(
                f"'{name}' needs two bool tensors, got {self.dtype.name} and {other.dtype.name}"
            )
        return self.zip(other, fn, bool_)

    def __and__(self, other: Operand) -> Tenxor:
        return self._logical(other, operator.and_, "&")

    def __rand__(self, other: Operand) -> Tenxor:
        return as_tensor(other, like=self)._logical(self, operator.and_, "&")

    def __or__(self, other: Operand) -> Tenxor:
        return self._logical(other, operator.or_, "|")

    def __ror__(self, other: Operand) -> Tenxor:
        return as_tensor(other, like=self)._logical(self, operator.or_, "|")

    def __xor__(self, other: Operand) -> Tenxor:
        return self._logical(other, operator.xor, "^")

    def __rxor__(self, other: Operand) -> Tenxor:
        return as_tensor(other, like=self)._logical(self, operator.xor, "^")

    def __add__(self, other: Operand) -> Tenxor:
        return self._arithmetic(other, operator.add, "+")

    def __radd__(self, other: Operand) -> Tenxor:
        return as_tensor(other, like=self)._arithmetic(self, operator.add, "+")

    def __sub__(self, other: Operand) -> Tenxor:
        return self._arithmetic(other, operator.sub, "-")

    def __rsub__(self, other: Operand) -> Tenxor:
        return as_tensor(other, like=self)._arithmetic(self, operator.sub, "-")

    def __mul__(self, other: Operand) -> Tenxor:
        return self._arithmetic(other, operator.mul, "*")

    def __rmul__(self, other: Operand) -> Tenxor:
        return as_tensor(other, like=self)._arithmetic(self, operator.mul, "*")

    def __truediv__(self, other: Operand) -> Tenxor:
        return self._true_division(other)

    def __rtruediv__(self, other: Operand) -> Tenxor:
        return self._true_division(other, reverse=True)

    def __pow__(self, other: Operand) -> Tenxor:
        return self._arithmetic(other, bc.power, "**")

    def __rpow__(self, other: Operand) -> Tenxor:
        return as_tensor(other, like=self)._arithmetic(self, bc.power, "**")

    def __neg__(self) -> Tenxor:
        if self.dtype is bool_:
            raise TypeError("unary '-' is not defined for a bool tensor; use ~ (logical not)")
        return self.map(operator.neg)

    def __invert__(self) -> Tenxor:
        if self.dtype is not bool_:
            raise TypeError(f"'~' needs a bool tensor, got {self.dtype.name}")
        return self.map(operator.not_)

    def __matmul__(self, other: Tenxor) -> Tenxor:
        return rd.matmul(self, as_tensor(other, like=self))

    def __rmatmul__(self, other: Tenxor) -> Tenxor:
        return rd.matmul(as_tensor(other, like=self), self)

    def __eq__(self, other: Operand) -> Tenxor:  # type: ignore[override]
        return self._compare(other, operator.eq)

    def __ne__(self, other: Operand) -> Tenxor:  # type: ignore[override]
        return self._compare(other, operator.ne)

    def __lt__(self, other: Operand) -> Tenxor:
        return self._compare(other, operator.lt)

    def __le__(self, other: Operand) -> Tenxor:
        return self._compare(other, operator.le)

    def __gt__(self, other: Operand) -> Tenxor:
        return self._compare(other, operator.gt)

    def __ge__(self, other: Operand) -> Tenxor:
        return self._compare(other, operator.ge)

    def _float_map(self, fn: Callable[[Any], Any]) -> Tenxor:
        """fn over every element, into a float tensor (float64 unless already float)."""
        return self.map(fn, self.dtype if self.dtype.kind == "float" else float64)

    def exp(self) -> Tenxor:
        try:  # Python's own exp, until a result too large for a float needs inf
            return self._float_map(math.exp)
        except OverflowError:
            return self._float_map(bc.exp)

    def log(self) -> Tenxor:
        return self._float_map(bc.log)

    def relu(self) -> Tenxor:
        if self.dtype is bool_:
            raise TypeError("relu is not defined for a bool tensor")
        return self.map(bc.relu)

    def leaky_relu(self, slope: float = 0.01) -> Tenxor:
        return self._float_map(bc.leaky_relu_fn(slope))

    def where(self, condition: Operand, other: Operand) -> Tenxor:
        """This tensor's element where `condition` holds, `other`'s elsewhere (all three
        broadcast)."""
        other = as_tensor(other, like=self)
        condition = as_tensor(condition)
        shape, values = bc.where_values(
            condition.storage.values(), condition.layout,
            self.storage.values(), self.layout,
            other.storage.values(), other.layout,
        )  # fmt: skip
        return Tenxor.from_values(values, shape, promote(self.dtype, other.dtype))

    def to(self, dtype: DType | str) -> Tenxor:
        """A copy converted to `dtype` (floats to ints truncate toward zero)."""
        dtype = as_dtype(dtype)
        return self.map(converter(dtype), dtype)

    # -- reductions -----------------------------------------------------------------------------

    def reduce(
        self, fold: rd.Fold, dim: rd.Dims = None, keepdim: bool = False, dtype: DType | None = None
    ) -> Tenxor:
        """Fold each group of elements along `dim` into one value (see reduce_values)."""
        shape, values = rd.reduce_values(fold, self.storage.values(), self.layout, dim, keepdim)
        return Tenxor.from_values(values, shape, self.dtype if dtype is None else dtype)

    def combine_fold(
        self,
        combine: rd.Combine,
        *others: Operand,
        fold: rd.Accumulate = sum,
        dim: rd.Dims = None,
        keepdim: bool = False,
        dtype: DType | None = None,
    ) -> Tenxor:
        """`fold` of `combine(x, y, ...)` along `dim`, for the elements x of this tensor and y,
        ... of `others` that meet when all are broadcast, without ever holding the combined
        tensor (see combine_fold_values). Of `dtype`, by default the operands' promoted one.

        >>> a, b = tensor([[1, 2], [3, 4]]), tensor([10, 100])
        >>> a.combine_fold(operator.mul, b, dim=-1).tolist()  # (a * b).sum(-1), fused
        [210, 430]
        """
        operands = [self, *(as_tensor(other, like=self) for other in others)]
        if dtype is None:
            dtype = functools.reduce(promote, (operand.dtype for operand in operands))
        shape, values = rd.combine_fold_values(
            combine, fold, [(t.storage.values(), t.layout) for t in operands], dim, keepdim
        )
        return Tenxor.from_values(values, shape, dtype)

    def sum(self, dim: rd.Dims = None, keepdim: bool = False) -> Tenxor:
        dtype = self.dtype if self.dtype.kind == "float" else int64
        return self.reduce(sum, dim, keepdim, dtype)

    def mean(self, dim: rd.Dims = None, keepdim: bool = False) -> Tenxor:
        return rd.mean(self, dim, keepdim)

    def max(self, dim: rd.Dims = None, keepdim: bool = False) -> Tenxor:
        self._require_elements("max", dim)
        return self.reduce(rd.largest, dim, keepdim)

    def min(self, dim: rd.Dims = None, keepdim: bool = False) -> Tenxor:
        self._require_elements("min", dim)
        return self.reduce(rd.smallest, dim, keepdim)

    def argmax(self, dim: int | None = None, keepdim: bool = False) -> Tenxor:
        """The position of the largest element along `dim` (None: in the flattened tensor)."""
        if dim is not None and not isinstance(dim, int):
            raise TypeError(f"argmax takes one dim or None, got {dim!r}")
        self._require_elements("argmax", dim)
        return self.reduce(rd.first_largest_position, dim, keepdim, int64)

    def _require_elements(self, name: str, dim: rd.Dims) -> None:
        """Raise if the reduction `name` would fold an empty group (it has no identity)."""
        for d in normalize_dims(dim, self.ndim):
            if self.shape[d] == 0:
                raise ValueError(
                    f"{name} over dim {d} of size 0 in shape {self.shape}: "
                    "an empty group has no " + name
                )
        if dim is None and 0 in self.shape:
            raise ValueError(f"{name} of a tensor with no elements (shape {self.shape})")

    def softmax(self, dim: int) -> Tenxor:
        return rd.softmax(self, dim)

    def masked_softmax(self, mask: Operand, dim: int) -> Tenxor:
        return rd.masked_softmax(self, as_tensor(mask, like=self), dim)

    def matmul(self, other: Tenxor) -> Tenxor:
        return rd.matmul(self, as_tensor(other, like=self))


# ---------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------


def _is_list_index(item: Any) -> bool:
    return isinstance(item, list | Tenxor)


def _as_index_list(item: list[Any] | Tenxor) -> list[int]:
    """A list index (or 1-D integer tensor) as a list of ints."""
    chosen = item.tolist() if isinstance(item, Tenxor) else item
    if not isinstance(chosen, list):
        raise IndexError(f"a tensor used as an index must be 1-D, got {item!r}")
    for i in chosen:
        if isinstance(i, bool) or not isinstance(i, int):
            raise IndexError(
                f"a list index must hold ints, got {i!r}; boolean masks are not supported"
            )
    return chosen


def _result_dim(items: tuple[Any, ...], position: int, ndim: int) -> int:
    """Which dim of the indexed view comes from the item at `position` of the key."""
    used = sum(item is not None and item is not Ellipsis for item in items)
    dim = 0
    for item in items[:position]:
        if item is Ellipsis:
            dim += ndim - used
        elif item is None or isinstance(item, slice):
            dim += 1
    return dim


def _gathered_dim(items: tuple[Any, ...], position: int, dim: int) -> int:
    """Where NumPy puts the gathered dim: in place (`dim`) when the list and the ints of the
    key stand next to each other, else first (ints count as list-like indices here)."""
    picks = [i for i, item in enumerate(items) if i == position or _is_int_index(item)]
    return dim if picks == list(range(picks[0], picks[-1] + 1)) else 0


def _is_int_index(item: Any) -> bool:
    return not isinstance(item, bool) and hasattr(item, "__index__")


def as_tensor(value: Operand, like: Tenxor | None = None) -> Tenxor:
    """`value` as a tensor: a Tenxor as it is, nested lists or a NumPy array copied as
    tenxor.tensor copies them, a Python number as a 0-d tensor. A number partnered with the
    tensor `like` takes its dtype unless it needs a wider kind (a float with an int tensor
    becomes float64)."""
    if isinstance(value, Tenxor):
        return value
    if not isinstance(value, int | float):
        values, shape, dtype = read_data(value)
        return Tenxor.from_values(values, shape, dtype)
    dtype = dtype_of_number(value)
    if like is not None:
        kinds = ("bool", "int", "float")
        if kinds.index(like.dtype.kind) >= kinds.index(dtype.kind):
            dtype = like.dtype
    return Tenxor.from_values([converter(dtype)(value)], (), dtype)
