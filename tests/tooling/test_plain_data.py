"""Plain data between judge and worker: records of tenxor (the GATv2 layer) cross as their
fields and come back as the judge's own class; anything else named a record is refused."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace

import pytest

from instructor.grading.judge import judges_kinds
from instructor.sandbox.plain_data import FUNCTION_TAGS, Call, Decoder, Encoder, UnreadableData
from tenxor.graph_attention import GATv2

pytestmark = pytest.mark.provided


def sent(value: object) -> object:
    """`value` as the judge encodes it, through JSON, as the other side reads it."""
    return json.loads(json.dumps(Encoder(judges_kinds(), Call(), lenient=False).encode(value)))


def received(data: object) -> object:
    """What the worker decodes from `data` (numbering storages, as it numbers arguments)."""
    return Decoder(judges_kinds(), Call(), register=True).decode(data)


@pytest.mark.parametrize("share_weights", [False, True])
@pytest.mark.parametrize("bias", [True, False])
def test_a_layer_crosses_as_its_fields_and_comes_back_equal(share_weights, bias):
    layer = GATv2.random(3, 2, 2, seed=4, concat=False, share_weights=share_weights, bias=bias)
    back = received(sent(layer))
    assert type(back) is GATv2 and (back.concat, back.slope) == (False, layer.slope)
    for name in ("theta_receiver", "theta_sender", "attention", "bias_receiver", "bias"):
        mine, theirs = getattr(layer, name), getattr(back, name)
        assert (mine is None and theirs is None) or mine.tolist() == theirs.tolist()


def test_a_record_of_an_unknown_class_or_with_other_fields_is_refused():
    data = sent(GATv2.random(3, 2, 1, seed=1))
    with pytest.raises(UnreadableData, match="Popen"):
        received(["C", "Popen", *data[2:]])
    with pytest.raises(UnreadableData, match="theta_receiver"):
        received(data[:3])  # fields missing
    with pytest.raises(UnreadableData):
        received(["C", "GATv2", ["concat", True], *data[2:]])  # fields in another order


def from_worker(data: object) -> object:
    """What the judge decodes from `data` sent by a worker: data only."""
    return Decoder(judges_kinds(), Call(), register=False, data_only=True).decode(data)


@pytest.mark.parametrize(
    "data",
    [
        ["M", "tenxor.course.engine.running", "os.system", ["d", ["command", "true"]]],
        ["X", "unittest.mock", "ANY"],
        ["N", "builtins", "print"],
        ["F", 0],
        ["Q", 0, 3],
        ["t", 1, ["l", ["X", "tenxor.storage", "numel"]]],  # nested too
    ],
)
def test_the_judge_refuses_every_function_a_worker_names(data):
    with pytest.raises(UnreadableData, match=repr(data[0] if data[0] != "t" else "X")):
        from_worker(data)


def test_every_tag_the_judge_decodes_from_a_worker_is_data_or_refused():
    """Enumerated over every tag plain data knows: a function tag from the worker is refused,
    and an iterator only comes in the arguments of a call back."""
    for tag in Decoder.BUILDERS:
        if tag in FUNCTION_TAGS:
            with pytest.raises(UnreadableData, match="a function"):
                from_worker([tag, 0, 0])
    with pytest.raises(UnreadableData, match="only comes in the arguments of a call back"):
        from_worker(["I", 0])
    assert set(FUNCTION_TAGS) == set("XNMFQ")


class Counted(Sequence):
    """A sequence of the judge that notes every key it is read with."""

    def __init__(self, values: list[float]) -> None:
        self.values, self.keys = values, []

    def __len__(self) -> int:
        return len(self.values)

    def __getitem__(self, key):
        self.keys.append(key)
        return self.values[key]


def test_a_judge_sequence_is_read_back_key_by_key_from_the_judge():
    """A sequence that is no list crosses as reads back: the worker's slice is one read of
    the judge's own object, which sees it."""
    counted, functions = Counted([1.0, 2.0, 3.0, 4.0]), []
    encoder = Encoder(judges_kinds(), Call(), lenient=False)
    encoder.functions = lambda function: ["F", functions.append(function) or len(functions) - 1]
    data = json.loads(json.dumps(encoder.encode(counted)))
    assert data == ["Q", 0, 4]
    kinds = replace(judges_kinds(), callback=lambda number: functions[number])
    back = Decoder(kinds, Call(), register=True).decode(data)
    assert len(back) == 4 and back[1:4:2] == [2.0, 4.0] and counted.keys == [slice(1, 4, 2)]
    with pytest.raises(IndexError):
        back[4]


def test_numpy_arrays_and_scalars_cross_as_values():
    import numpy as np

    kinds = judges_kinds()
    for value in (np.arange(6, dtype=np.int32).reshape(2, 3), np.float32(1.5), np.bool_(True)):
        data = json.loads(json.dumps(Encoder(kinds, Call(), lenient=True).encode(value)))
        back = from_worker(data)
        assert type(back) is type(value) and back.dtype == value.dtype
        assert np.array_equal(back, value)
    assert Encoder(kinds, Call(), lenient=True).encode(np.array(["a"]))[0] == "?"
    with pytest.raises(UnreadableData, match="shape"):
        from_worker(["A", "int64", [2, 2], [1, 2, 3]])
    with pytest.raises(UnreadableData):
        from_worker(["A", "object", [1], [1]])


def test_a_worker_error_is_a_built_in_exception_or_a_worker_error():
    from instructor.sandbox.plain_data import WorkerError, raised

    assert type(raised(["ValueError", "bad"])) is ValueError
    for name in ("SystemExit", "KeyboardInterrupt", "Popen", "__import__"):
        assert type(raised([name, "x"])) is WorkerError
