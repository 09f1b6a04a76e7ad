"""Plain data: what the judge and the sandbox worker send each other, and nothing else.

A value crosses as JSON built from None, bool, int, float, str and lists only. A list always
starts with a tag that says what it stands for:

    ["t", a, b]               the tuple (a, b)
    ["l", a, b]               the list [a, b]
    ["d", [k, v], ...]        a dict
    ["s", start, stop, step]  a slice          ["E"]  Ellipsis
    ["L", shape, strides, offset]              a Layout
    ["D", name]               a DType
    ["S", dtype, values]      a Storage (values: its numbers, untagged)
    ["T", storage, shape, strides, offset]     a Tenxor
    ["C", name, [field, value], ...]           a record of tenxor (a frozen dataclass such
                              as the GATv2 layer), by its class name and fields
    ["R", n]                  the n-th list, dict or Storage of the call's arguments, itself
    ["X", module, name]       an exercise function
    ["N", module, name]       a function found by name (builtins, math, operator, tenxor)
    ["M", module, factory, kwargs]  the function that factory(**kwargs) returns
    ["F", n]                  a function of the judge, called back by its number
    ["G", items, error]       what a generator yielded, and the error that ended it (or None)
    ["I", n]                  an iterator of the worker, in the arguments of a call back: the
                              judge takes its items one at a time ("next"), as it needs them
    ["P", n]                  a function of the worker, in the arguments of a call back: the
                              judge calls it in the worker ("fn"), and what it gives comes
                              as data
    ["Q", n, length]          a sequence of the judge that is no list (one that counts its
                              reads): the worker reads it key by key through function n
    ["A", dtype, shape, values]  a NumPy array (shape [] for a NumPy scalar), values flat
    ["?", type name]          a value that plain data cannot hold

Decoding builds those values and nothing else: no pickle, no class named by the sender, no
code. Functions ("X", "N", "M", "F", "Q") travel only from the judge to the worker: the judge
decodes what the worker sends as `data_only`, which refuses every function tag, so nothing
the worker sends can name a module, a function or a class for the judge to use. An iterator
("I") and a function of the worker ("P") are numbers the judge may ask the worker about, only
while the call back that received them runs; items and results come as data. Anything
malformed raises UnreadableData. The worker's encoder is `lenient` (a tuple subclass goes as
a tuple, an unknown object as "?"), since what it sends is only ever read back strictly.
"""

from __future__ import annotations

import builtins
import dataclasses
import importlib
import inspect
import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

SCALARS = (type(None), bool, int, float, str)
HEADER = 4  # the bytes of a message's length
NUMBERS = (bool, int, float)
NUMBER_TYPES = frozenset(NUMBERS)
MAX_DEPTH = 64
GENERATOR_ITEMS = 1_000_000  # what a generator result may yield before it is cut off
NAMED_MODULES = ("builtins", "math", "operator", "_operator")
FUNCTION_TAGS = frozenset("XNMFQ")  # never decoded from what the worker sends
# The NumPy array types that cross as values ("A"); any other goes as "?".
ARRAY_DTYPES = frozenset(
    {"bool", "float16", "float32", "float64"}
    | {f"{sign}int{bits}" for sign in ("", "u") for bits in (8, 16, 32, 64)}
)
# The errors a worker's "raise" may name: the built-in exceptions, and nothing else.
ERRORS: dict[str, type[Exception]] = {
    name: value
    for name, value in vars(builtins).items()
    if isinstance(value, type) and issubclass(value, Exception)
}


class UnreadableData(Exception):
    """What the other side sent is not plain data in the agreed form. (No ValueError: a
    test that expects an error must not take a garbled answer for one.)"""


@dataclass
class Kinds:
    """The tensor classes one side builds values of, and how it finds functions by name."""

    layout: type
    storage: type
    tensor: type
    dtypes: dict[str, Any]
    exercise: Callable[[str, str], Callable[..., Any]] | None = None  # (module, name) -> it
    callback: Callable[[int], Callable[..., Any]] | None = None  # handle -> a stand-in
    records: dict[str, type] = field(default_factory=dict)  # class name -> a frozen dataclass


def records_named(names: Iterable[str]) -> dict[str, type]:
    """The records named "module.Class" that are frozen dataclasses, by class name."""
    found = {}
    for name in names:
        module, attribute = name.rsplit(".", 1)
        value = getattr(importlib.import_module(module), attribute, None)
        if dataclasses.is_dataclass(value) and value.__dataclass_params__.frozen:
            found[attribute] = value
    return found


def tensor_kinds(package: Any, records: Iterable[str], **more: Any) -> Kinds:
    """The kinds of a tenxor package (its layout, storage and tensor classes and its data
    types) with the records named in `records` ("module.Class")."""
    return Kinds(
        layout=package.Layout,
        storage=package.Storage,
        tensor=package.Tenxor,
        dtypes=dict(package.DTYPES),
        records=records_named(records),
        **more,
    )


@dataclass
class Call:
    """The mutable arguments of one call, in the order they were encoded, shared by both
    sides: a result may refer to them ("R"), and their changes are sent back."""

    objects: list[Any] = field(default_factory=list)
    numbers: dict[int, int] = field(default_factory=dict)  # id(object) -> its place

    def register(self, value: Any) -> int | None:
        """The place of `value` if it was registered before; otherwise registers it."""
        place = self.numbers.get(id(value))
        if place is None:
            self.numbers[id(value)] = len(self.objects)
            self.objects.append(value)
        return place


def named_function(module: str, name: str) -> Callable[..., Any]:
    """A module-level function of builtins, math, operator or tenxor, found by its name."""
    if module not in NAMED_MODULES and module.split(".")[0] != "tenxor":
        raise UnreadableData(f"functions are not looked up in module {module!r}")
    found: Any = importlib.import_module(module)
    for part in name.split("."):
        found = getattr(found, part)
    if not callable(found):
        raise UnreadableData(f"{module}.{name} is not a function")
    return found


def name_of(function: Any) -> tuple[str, str] | None:
    """(module, name) under which `named_function` finds `function` again, if it does."""
    module, name = getattr(function, "__module__", None), getattr(function, "__qualname__", "")
    if not isinstance(module, str) or not isinstance(name, str) or "<" in name:
        return None
    if module not in NAMED_MODULES and module.split(".")[0] != "tenxor":
        return None
    try:
        return (module, name) if named_function(module, name) is function else None
    except (ImportError, AttributeError, UnreadableData):
        return None


def factory_of(function: Any) -> tuple[str, str, dict[str, Any]] | None:
    """(module, factory, kwargs) when `function` is what a module-level tenxor function
    `factory(**kwargs)` returns, as the kernels' folds and converters are."""
    name, closure = getattr(function, "__qualname__", ""), getattr(function, "__closure__", None)
    outer, _, inner = name.partition(".<locals>.")
    if not inner or "<locals>" in inner or not closure:
        return None
    found = name_of(getattr(inspect.getmodule(function), outer, None))
    if found is None or found[0].split(".")[0] != "tenxor":
        return None
    parameters = inspect.signature(named_function(*found)).parameters
    names = function.__code__.co_freevars
    if not set(names) <= set(parameters):
        return None
    return found[0], found[1], {n: cell.cell_contents for n, cell in zip(names, closure)}


class Encoder:
    """Turns values into plain data. `call` numbers the lists, dicts and Storages met; with
    `refer`, objects already numbered in `call` are sent as references ("R")."""

    def __init__(self, kinds: Kinds, call: Call, lenient: bool, refer: bool = False) -> None:
        self.kinds, self.call, self.lenient, self.refer = kinds, call, lenient, refer
        self.functions: Callable[[Any], list[Any]] | None = None
        self.iterators: Callable[[Iterator[Any]], int] | None = None  # lends them by number
        self.procedures: Callable[[Any], int] | None = None  # lends functions by number

    def encode(self, value: Any, depth: int = 0) -> Any:
        kind = type(value)
        if kind in SCALARS:
            return value
        if depth > MAX_DEPTH:
            raise ValueError(f"a value nested more than {MAX_DEPTH} deep")
        depth += 1
        kinds = self.kinds
        if kind is tuple:
            return ["t", *[self.encode(item, depth) for item in value]]
        if kind is list or kind is dict or kind is kinds.storage:
            return self.mutable(value, depth)
        if kind is kinds.layout:
            return ["L", list(value.shape), list(value.strides), value.offset]
        if kind is kinds.tensor:
            layout = value.layout
            storage = self.encode(value.storage, depth)
            return ["T", storage, list(layout.shape), list(layout.strides), layout.offset]
        if value is Ellipsis:
            return ["E"]
        if kind is slice:
            return ["s", *[self.encode(v, depth) for v in (value.start, value.stop, value.step)]]
        if kinds.dtypes.get(getattr(value, "name", None)) is value:
            return ["D", value.name]
        if kinds.records.get(kind.__name__) is kind:
            return self.record(value, depth)
        if self.lenient:
            return self.lenient_value(value, depth)
        if isinstance(value, Iterator):  # a generator of the judge goes as what it yields
            return self.drained(value, depth)
        if callable(value) and self.functions is not None:
            return self.functions(value)
        if isinstance(value, Sequence) and not isinstance(value, (str, bytes)):
            return self.sequence(value)
        raise TypeError(f"a {kind.__name__} cannot be sent as plain data")

    def sequence(self, value: Sequence[Any]) -> list[Any]:
        """A sequence of the judge that is no list: its length, and its reads as calls back."""
        if self.functions is None:
            raise TypeError(f"a {type(value).__name__} cannot be sent as plain data")
        handle = self.functions(value.__getitem__)
        if handle[0] != "F":
            raise TypeError(f"a {type(value).__name__} cannot be sent as plain data")
        return ["Q", handle[1], len(value)]

    def lenient_value(self, value: Any, depth: int) -> Any:
        """The worker's way with what is not exactly plain: a subclass as its base class, a
        NumPy number as a Python number, an iterator as what it yields, else "?"."""
        kinds = self.kinds
        for base in (int, float, str):
            if isinstance(value, base):
                return base(value)
        if isinstance(value, (list, dict, kinds.storage)):
            return self.mutable(value, depth)
        if isinstance(value, tuple):
            return ["t", *[self.encode(item, depth) for item in tuple.__iter__(value)]]
        if isinstance(value, kinds.layout):
            return ["L", list(value.shape), list(value.strides), value.offset]
        if isinstance(value, kinds.tensor):
            layout = value.layout
            storage = self.encode(value.storage, depth)
            return ["T", storage, list(layout.shape), list(layout.strides), layout.offset]
        record = next((r for r in kinds.records.values() if isinstance(value, r)), None)
        if record is not None:
            return self.record(value, depth, record)
        if isinstance(value, Iterator):
            if self.iterators is not None:
                return ["I", self.iterators(value)]
            return self.drained(value, depth)
        if callable(value) and self.procedures is not None:
            return ["P", self.procedures(value)]
        if type(value).__module__ == "numpy":
            return array_data(value)
        return ["?", type(value).__name__]

    def record(self, value: Any, depth: int, kind: type | None = None) -> list[Any]:
        """A frozen dataclass of tenxor as its class name and the values of its fields."""
        fields = [f.name for f in dataclasses.fields(kind or type(value))]
        encoded = [[name, self.encode(getattr(value, name), depth)] for name in fields]
        return ["C", (kind or type(value)).__name__, *encoded]

    def mutable(self, value: Any, depth: int) -> list[Any]:
        """A list, dict or Storage: a reference if the call has it, else its contents."""
        place = self.call.numbers.get(id(value)) if self.refer else self.call.register(value)
        return ["R", place] if place is not None else self.contents(value, depth)

    def contents(self, value: Any, depth: int) -> list[Any]:
        """What a list, dict or Storage holds, never as a reference to itself."""
        if isinstance(value, list):
            return ["l", *[self.encode(item, depth) for item in list.__iter__(value)]]
        if isinstance(value, dict):
            items = dict.items(value)
            return ["d", *[[self.encode(k, depth), self.encode(v, depth)] for k, v in items]]
        values = numbers(value.data) if self.lenient else value.data
        return ["S", value.dtype.name, values]

    def drained(self, iterator: Iterator[Any], depth: int) -> list[Any]:
        items, error = [], None
        try:
            for item in iterator:
                if len(items) == GENERATOR_ITEMS:
                    raise RuntimeError(f"it yielded more than {GENERATOR_ITEMS} items")
                items.append(self.encode(item, depth))
        except Exception as raised:  # the generator's own error, raised where it happened
            error = error_data(raised)
        return ["G", items, error]


def array_data(value: Any) -> list[Any]:
    """A NumPy array or scalar of a plain dtype as ["A", dtype, shape, flat values]."""
    dtype, shape = getattr(value, "dtype", None), getattr(value, "shape", None)
    name = getattr(dtype, "name", None)
    if name not in ARRAY_DTYPES or type(shape) is not tuple:
        return ["?", type(value).__name__]
    flat = value.reshape(-1).tolist() if shape else [value.item()]
    return ["A", name, list(shape), flat]


def numbers(values: Any) -> list[Any]:
    """A storage's values as JSON numbers (anything else marked, for the judge to refuse)."""
    if all(type(v) in NUMBERS for v in values):
        return values
    return [v if type(v) in NUMBERS else number(v) for v in values]


def number(value: Any) -> Any:
    """A number of a subclass or of NumPy as a Python number; anything else marked "?"."""
    if isinstance(value, (int, float)):
        return int(value) if isinstance(value, int) else float(value)
    item = getattr(value, "item", None)
    if callable(item) and type(value).__module__ == "numpy":
        return number(item())
    return ["?", type(value).__name__]


def error_data(error: BaseException) -> list[Any]:
    """An exception as [type name, message]: the nearest built-in exception class it derives
    from, so that a subclass reads as the error it claims to be."""
    kind = next(
        (k for k in type(error).__mro__ if getattr(builtins, k.__name__, None) is k),
        BaseException,
    )
    try:
        message = str(error)
    except Exception:  # noqa: BLE001 - a message that cannot even be read
        message = "(its message could not be read)"
    return [kind.__name__, message[:4000]]


class Decoder:
    """Builds values from plain data; `strict` refuses everything out of form. References
    ("R") name objects of `call`; new lists, dicts and Storages are numbered into it when
    `register` is set (the worker numbers the arguments as the judge did). A `data_only`
    decoder (the judge's, for everything the worker sends) refuses every function tag."""

    def __init__(
        self,
        kinds: Kinds,
        call: Call,
        register: bool,
        data_only: bool = False,
        iterators: Callable[[int], Iterator[Any]] | None = None,
        procedures: Callable[[int], Callable[..., Any]] | None = None,
    ):
        self.kinds, self.call, self.register = kinds, call, register
        self.data_only = data_only
        self.iterators = iterators  # the judge's, in a call back's arguments: number -> it
        self.procedures = procedures  # likewise: number -> what calls it in the worker

    def decode(self, data: Any, depth: int = 0) -> Any:
        if type(data) is not list:
            if type(data) in SCALARS:
                return data
            raise UnreadableData(f"a JSON {type(data).__name__} is not plain data")
        if not data or type(data[0]) is not str:
            raise UnreadableData("a list without a tag")
        if depth > MAX_DEPTH:
            raise UnreadableData(f"a value nested more than {MAX_DEPTH} deep")
        tag, body, depth = data[0], data[1:], depth + 1
        builder = self.BUILDERS.get(tag)
        if builder is None:
            raise UnreadableData(f"unknown tag {tag!r}"[:100])
        if self.data_only and tag in FUNCTION_TAGS:
            raise UnreadableData(f"a function ({tag!r}) where only data may come")
        return builder(self, body, depth)

    def decode_kwargs(self, data: Any) -> dict[str, Any]:
        """Keyword arguments: a dict of names, itself no argument (never numbered)."""
        if type(data) is not list or not data or data[0] != "d":
            raise UnreadableData("keyword arguments must be a dict")
        pairs = [(self.decode(p[0], 1), self.decode(p[1], 1)) for p in data[1:] if len(p) == 2]
        if len(pairs) != len(data) - 1 or not all(type(k) is str for k, _ in pairs):
            raise UnreadableData("keyword arguments must be [name, value] pairs")
        return dict(pairs)

    def build_tuple(self, body: list[Any], depth: int) -> tuple[Any, ...]:
        return tuple([self.decode(item, depth) for item in body])

    def build_list(self, body: list[Any], depth: int) -> list[Any]:
        result: list[Any] = []
        self.number(result)
        result.extend(self.decode(item, depth) for item in body)
        return result

    def build_dict(self, body: list[Any], depth: int) -> dict[Any, Any]:
        result: dict[Any, Any] = {}
        self.number(result)
        for pair in body:
            if type(pair) is not list or len(pair) != 2:
                raise UnreadableData("a dict entry that is not a [key, value] pair")
            key = self.decode(pair[0], depth)
            try:
                result[key] = self.decode(pair[1], depth)
            except TypeError as error:
                raise UnreadableData(f"a dict key that cannot be a key: {error}") from None
        return result

    def build_slice(self, body: list[Any], depth: int) -> slice:
        if len(body) != 3:
            raise UnreadableData("a slice needs start, stop and step")
        return slice(*[self.decode(item, depth) for item in body])

    def build_ellipsis(self, body: list[Any], depth: int) -> Any:
        return Ellipsis

    def build_layout(self, body: list[Any], depth: int) -> Any:
        """A Layout, checked here as its class checks it: sizes and offset not negative, one
        stride per dim."""
        if len(body) != 3:
            raise UnreadableData("a Layout needs shape, strides and offset")
        shape, strides, offset = (
            ints(body[0], "Layout shape"),
            ints(body[1], "Layout strides"),
            body[2],
        )
        if type(offset) is not int or offset < 0 or len(shape) != len(strides):
            raise UnreadableData(f"not a valid Layout: {body!r}"[:200])
        if shape and min(shape) < 0:
            raise UnreadableData(f"a Layout shape with a negative size: {shape}")
        layout = object.__new__(self.kinds.layout)  # a frozen dataclass, checked above
        for name, value in (("shape", shape), ("strides", strides), ("offset", offset)):
            object.__setattr__(layout, name, value)
        return layout

    def build_dtype(self, body: list[Any], depth: int) -> Any:
        if len(body) != 1 or not isinstance(body[0], str) or body[0] not in self.kinds.dtypes:
            raise UnreadableData(f"unknown dtype {body!r}")
        return self.kinds.dtypes[body[0]]

    def build_storage(self, body: list[Any], depth: int) -> Any:
        if len(body) != 2 or type(body[1]) is not list:
            raise UnreadableData("a Storage needs a dtype and a list of numbers")
        dtype = self.build_dtype(body[:1], depth)
        values = body[1]
        if not set(map(type, values)) <= NUMBER_TYPES:
            bad = next(v for v in values if type(v) not in NUMBERS)
            raise UnreadableData(f"a Storage holds {bad!r}, which is not a number"[:200])
        storage = object.__new__(self.kinds.storage)  # its values as they are, unconverted
        storage.dtype, storage.data = dtype, values
        self.number(storage)
        return storage

    def build_tensor(self, body: list[Any], depth: int) -> Any:
        if len(body) != 4:
            raise UnreadableData("a Tenxor needs a storage, shape, strides and offset")
        storage = self.decode(body[0], depth)
        if type(storage) is not self.kinds.storage:
            raise UnreadableData("a Tenxor's storage must be a Storage")
        layout = self.build_layout(body[1:], depth)
        try:
            return self.kinds.tensor(storage, layout)
        except (IndexError, ValueError) as error:
            raise UnreadableData(f"not a valid Tenxor: {error}") from None

    def build_record(self, body: list[Any], depth: int) -> Any:
        kind = self.kinds.records.get(body[0]) if body and isinstance(body[0], str) else None
        if kind is None:
            raise UnreadableData(f"no record of that name: {body[:1]!r}"[:200])
        pairs = body[1:]
        if not all(type(p) is list and len(p) == 2 and isinstance(p[0], str) for p in pairs):
            raise UnreadableData("a record's fields must be [name, value] pairs")
        names = [f.name for f in dataclasses.fields(kind)]
        if [name for name, _ in pairs] != names:
            raise UnreadableData(f"a {body[0]} needs exactly the fields {names}")
        return kind(**{name: self.decode(value, depth) for name, value in pairs})

    def build_reference(self, body: list[Any], depth: int) -> Any:
        place = body[0] if len(body) == 1 else None
        if type(place) is not int or not 0 <= place < len(self.call.objects):
            raise UnreadableData(f"a reference to no argument: {body!r}")
        return self.call.objects[place]

    def build_exercise(self, body: list[Any], depth: int) -> Any:
        if len(body) != 2 or not all(isinstance(part, str) for part in body):
            raise UnreadableData("an exercise function needs a module and a name")
        if self.kinds.exercise is None:
            raise UnreadableData("no exercise functions are looked up on this side")
        return self.kinds.exercise(body[0], body[1])

    def build_named(self, body: list[Any], depth: int) -> Any:
        if len(body) != 2 or not all(isinstance(part, str) for part in body):
            raise UnreadableData("a named function needs a module and a name")
        return named_function(body[0], body[1])

    def build_made(self, body: list[Any], depth: int) -> Any:
        if len(body) != 3:
            raise UnreadableData("a made function needs a module, a factory and its arguments")
        kwargs = self.decode(body[2], depth)
        if type(kwargs) is not dict or not all(isinstance(k, str) for k in kwargs):
            raise UnreadableData("a factory's arguments must be a dict of names")
        return self.build_named(body[:2], depth)(**kwargs)

    def build_callback(self, body: list[Any], depth: int) -> Any:
        if self.kinds.callback is None or len(body) != 1 or type(body[0]) is not int:
            raise UnreadableData("no functions are called back from this side")
        return self.kinds.callback(body[0])

    def build_generator(self, body: list[Any], depth: int) -> Iterator[Any]:
        if len(body) != 2 or type(body[0]) is not list:
            raise UnreadableData("a generator needs its items and its error")
        items = [self.decode(item, depth) for item in body[0]]
        error = None if body[1] is None else raised(body[1])
        return replay(items, error)

    def build_iterator(self, body: list[Any], depth: int) -> Iterator[Any]:
        if self.iterators is None or len(body) != 1 or type(body[0]) is not int:
            raise UnreadableData("an iterator only comes in the arguments of a call back")
        return self.iterators(body[0])

    def build_procedure(self, body: list[Any], depth: int) -> Callable[..., Any]:
        if self.procedures is None or len(body) != 1 or type(body[0]) is not int:
            raise UnreadableData("a function of the worker only comes in a call back's arguments")
        return self.procedures(body[0])

    def build_sequence(self, body: list[Any], depth: int) -> Sequence[Any]:
        if self.kinds.callback is None or len(body) != 2 or set(map(type, body)) != {int}:
            raise UnreadableData("no sequences are read back from this side")
        return ReadBack(self.kinds.callback(body[0]), body[1])

    def build_array(self, body: list[Any], depth: int) -> Any:
        """A NumPy array of a plain dtype, its values checked as a Storage's are."""
        if len(body) != 3 or body[0] not in ARRAY_DTYPES or type(body[2]) is not list:
            raise UnreadableData("an array needs a plain dtype, a shape and its values")
        shape, values = ints(body[1], "array shape"), body[2]
        import numpy

        size = int(numpy.prod(shape)) if shape else 1
        if min(shape, default=0) < 0 or size != len(values):
            raise UnreadableData(f"an array of shape {shape} cannot hold {len(values)} values")
        if not set(map(type, values)) <= NUMBER_TYPES:
            raise UnreadableData("an array holds a value that is not a number")
        try:
            array = numpy.array(values, dtype=body[0])
        except (OverflowError, ValueError, TypeError) as error:
            raise UnreadableData(f"not a valid {body[0]} array: {error}"[:200]) from None
        return array.reshape(shape) if shape else array[0]

    def build_opaque(self, body: list[Any], depth: int) -> Any:
        name = body[0] if body and isinstance(body[0], str) else "object"
        return Unreadable(name[:100])

    def number(self, value: Any) -> None:
        if self.register:
            self.call.register(value)

    BUILDERS: dict[str, Callable[[Decoder, list[Any], int], Any]] = {
        "t": build_tuple,
        "l": build_list,
        "d": build_dict,
        "s": build_slice,
        "E": build_ellipsis,
        "L": build_layout,
        "D": build_dtype,
        "S": build_storage,
        "T": build_tensor,
        "C": build_record,
        "R": build_reference,
        "X": build_exercise,
        "N": build_named,
        "M": build_made,
        "F": build_callback,
        "G": build_generator,
        "I": build_iterator,
        "P": build_procedure,
        "Q": build_sequence,
        "A": build_array,
        "?": build_opaque,
    }


class ReadBack(Sequence):
    """A sequence of the judge, in the worker: each read is a call back, so the judge sees
    every read its own object gets."""

    def __init__(self, read: Callable[[Any], Any], length: int) -> None:
        self.read, self.length = read, length

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, int) and not -self.length <= key < self.length:
            raise IndexError(f"index {key} is out of range for {self.length} items")
        return self.read(key)


def ints(data: Any, what: str) -> tuple[int, ...]:
    """A list of ints (never bools) as a tuple."""
    if type(data) is not list or not set(map(type, data)) <= {int}:
        raise UnreadableData(f"a {what} must be a list of ints, not {data!r}"[:200])
    return tuple(data)


def replay(items: list[Any], error: BaseException | None) -> Iterator[Any]:
    """A generator yielding `items` and then raising `error`, as the original did."""
    yield from items
    if error is not None:
        raise error


class Unreadable:
    """Stands in the judge for a value that plain data cannot hold: it equals nothing."""

    __hash__ = object.__hash__

    def __init__(self, type_name: str) -> None:
        self.type_name = type_name

    def __eq__(self, other: object) -> bool:
        return other is self

    def __repr__(self) -> str:
        return f"<a {self.type_name} object, which grading reads as no value>"


def raised(data: Any) -> BaseException:
    """The exception that [type name, message] describes, as a built-in exception of the
    judge (an error that is no Exception, such as SystemExit, as a plain Exception that
    names it)."""
    if type(data) is not list or len(data) != 2 or not all(isinstance(p, str) for p in data):
        raise UnreadableData(f"an error must be [type name, message], not {data!r}"[:200])
    name, message = data
    kind = ERRORS.get(name)
    if kind is not None:
        try:
            return kind(message)
        except TypeError:  # an error class whose constructor wants more than a message
            pass
    return WorkerError(f"{name}: {message}" if message else name)


class WorkerError(Exception):
    """An error of the submission's code that the judge does not raise as itself."""


ENCODER = json.JSONEncoder(separators=(",", ":"))


def dumps(data: Any) -> bytes:
    """Plain data as the bytes of one message, its length first (4 bytes, big-endian)."""
    payload = ENCODER.encode(data).encode("utf-8")
    return len(payload).to_bytes(HEADER, "big") + payload


def loads(payload: bytes) -> Any:
    """The plain data of one message; UnreadableData when it is not JSON."""
    try:
        return json.loads(payload)
    except (ValueError, RecursionError) as error:
        raise UnreadableData(f"a message that is not JSON: {str(error)[:200]}") from None
