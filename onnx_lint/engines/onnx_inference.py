"""ONNX's own shape inference, run on a model or its bytes, and the values it derived by graph.

Data propagation can fail where plain inference succeeds; a model of 2 GiB or more cannot be
serialized and goes through a file.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import partial
from typing import TypeVar

import onnx
import onnx.shape_inference
from onnx.onnx_cpp2py_export import shape_inference as onnx_cpp_inference

from onnx_lint.engines import scoped_names
from onnx_lint.engines.limits import engine_headroom, memory_ceiling
from onnx_lint.model.graphs import ROOT, scopes_at

# protobuf serializes no message of 2 GiB or more; larger models go through files.
_PROTOBUF_LIMIT = 2**31 - 1
T = TypeVar("T")


def run_onnx_inference(model: onnx.ModelProto | bytes, strict: bool = False,
                       check_type: bool = False) -> onnx.ModelProto:
    """ONNX's C++ inference with data propagation; large models through the path API.

    Runs under a memory ceiling; if data propagation runs out of it (a huge 1-D
    tensor can ask for a dim per element), inference runs again without it.
    A serialized model is passed on as it is (onnx would serialize a ModelProto again).
    """
    size = len(model) if isinstance(model, bytes) else model.ByteSize()
    return _with_data_prop_fallback(size, partial(_onnx_inference, model, size, strict, check_type=check_type))


def run_onnx_inference_serialized(data: bytes) -> bytes:
    """``run_onnx_inference(data)``, serialized: the C++ engine's own bytes, which a forked child hands
    on without the parse and the serialization that a ``ModelProto`` in between would cost."""
    if len(data) >= _PROTOBUF_LIMIT:
        return run_onnx_inference(data).SerializeToString()
    return _with_data_prop_fallback(len(data), partial(_serialized_inference, data))


def _serialized_inference(data: bytes, data_prop: bool) -> bytes:
    return onnx_cpp_inference.infer_shapes(data, False, False, data_prop)


def _with_data_prop_fallback(size: int, infer: Callable[..., T]) -> T:
    """``infer(data_prop=True)`` under the engines' memory ceiling, and without data propagation if
    that ran out of memory."""
    try:
        with memory_ceiling(engine_headroom(size)):
            return infer(data_prop=True)
    except MemoryError:
        with memory_ceiling(engine_headroom(size)):
            return infer(data_prop=False)


def _onnx_inference(model: onnx.ModelProto | bytes, size: int, strict: bool, data_prop: bool,
                    check_type: bool = False) -> onnx.ModelProto:
    if size < _PROTOBUF_LIMIT:
        return onnx.shape_inference.infer_shapes(model, check_type=check_type, strict_mode=strict,
                                                 data_prop=data_prop)
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory(prefix="onnx-lint-") as tmp:
        src, dst = Path(tmp, "in.onnx"), Path(tmp, "out.onnx")
        if isinstance(model, bytes):
            src.write_bytes(model)
        else:
            onnx.save_model(model, src)
        onnx.shape_inference.infer_shapes_path(str(src), str(dst), check_type=check_type, strict_mode=strict,
                                               data_prop=data_prop)
        return onnx.load_model(dst, load_external_data=False)


class GraphValues(Mapping[str, onnx.ValueInfoProto]):
    """Tensor name -> the ValueInfoProto inference left for it in one graph (outputs over inputs over
    value_info, as a dict updated in that order would hold them).

    value_info (an entry per node output: 100k on a large model) is looked up where ``order``
    (``listing_order``) says inference put the name, the entry there checked by name, and else
    through a table of positions, built on the first miss: a table of the entries themselves would
    keep a wrapper object per entry alive, three times the cost (~0.1 s on 100k entries). The
    rules on a model without value_info of its own never ask for one.
    """

    def __init__(self, graph: onnx.GraphProto, order: Mapping[str, int] | None = None) -> None:
        self._graph = graph
        self._ends = {v.name: v for v in graph.input}
        self._ends.update((v.name, v) for v in graph.output if v.HasField("type"))
        self._positions: dict[str, int] | None = None
        # ``listing_order``: where each entry should be, checked by name on use. More entries than names
        # means a list inference did not write alone (a name may repeat): then only the table answers.
        self._order = order if order is not None and len(graph.value_info) <= len(order) else None

    def _table(self) -> dict[str, int]:
        if self._positions is None:  # the last entry of a name wins, as in a dict built in order
            self._positions = {n: i for i, n in enumerate([v.name for v in self._graph.value_info])}
        return self._positions

    def get(self, name: str, default: onnx.ValueInfoProto | None = None) -> onnx.ValueInfoProto | None:  # type: ignore[override]
        found = self._ends.get(name)
        if found is not None:
            return found
        if self._order is not None and self._positions is None:
            guess = self._order.get(name)
            if guess is not None and guess < len(self._graph.value_info):
                entry = self._graph.value_info[guess]
                if entry.name == name:
                    return entry
        position = self._table().get(name)
        return self._graph.value_info[position] if position is not None else default

    def __getitem__(self, name: str) -> onnx.ValueInfoProto:
        found = self.get(name)
        if found is None:
            raise KeyError(name)
        return found

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.get(name) is not None

    def _names(self) -> set[str]:
        return set(self._table()) | set(self._ends)

    def __iter__(self) -> Iterator[str]:
        return iter(self._names())

    def __len__(self) -> int:
        return len(self._names())

    def elem_types(self) -> dict[str, int]:
        """Tensor name -> element type (0 for a sequence, map or optional, or where inference left none)
        of every value, read in one pass: a rule that needs the types of most tensors pays ~1 µs per
        entry, not a lookup per name."""
        table = {v.name: v.type.tensor_type.elem_type for v in self._graph.value_info}
        table.update((name, value.type.tensor_type.elem_type) for name, value in self._ends.items())
        return table

    def listed(self) -> int:
        """How many value_info entries inference wrote (the stripped graph had none; each names one node
        output, graph outputs included), counted without building the table."""
        return len(self._graph.value_info)


def collect_values(model: onnx.ModelProto, paths: list[str],
                   order: Mapping[str, int] | None = None) -> dict[str, GraphValues]:
    """Per graph path: tensor name -> the ValueInfoProto inference left for it (the model's own names:
    the stripped copy's subgraph names are restored in place). ``order`` is the main graph's
    ``listing_order``, for an inference of the stripped copy."""
    if len(paths) > 1:
        scoped_names.restore(model)
    return {scope.path: GraphValues(scope.graph, order if scope.path == ROOT else None)
            for scope in scopes_at(model, paths)}


def listing_order(outputs: Sequence[str]) -> dict[str, int] | None:
    """Where inference of a stripped graph (no value_info of its own; ``outputs`` are its node outputs in
    order) lists each node output in value_info: in node order, the graph's own outputs included.
    Built while a large model's inference runs, it spares the table of 100k names (~35 ms) a lookup
    would otherwise build once inference is done. Only a guess, each use checked by name: an output
    inference cannot type is not listed and moves every later one (a graph output may not be
    listed either), and then lookups fall back to the table. ``None`` where a name is produced
    twice (inference might list it twice, and the table keeps the last)."""
    names = [name for name in outputs if name]
    order = dict(zip(names, range(len(names))))
    return order if len(order) == len(names) else None


def elem_types(values: Mapping[str, onnx.ValueInfoProto]) -> dict[str, int]:
    """``GraphValues.elem_types`` for any mapping of values (an engine that answered nothing gives ``{}``)."""
    if isinstance(values, GraphValues):
        return values.elem_types()
    return {name: value.type.tensor_type.elem_type for name, value in values.items()}
