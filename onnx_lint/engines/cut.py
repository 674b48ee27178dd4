"""The part of the main graph that answers for a few tensors when its input dims are pinned.

A pinned inference (``oracle.py``) asks ONNX's inference what a handful of tensors become when
the graph's dynamic input dims are set to numbers. On the whole graph that costs as much as the
first inference (0.8 s on 100k nodes) for answers about a few tensors. ONNX's inference runs
forward, node by node, so a tensor's answer depends only on what its producers hand it; and where
the first, unpinned inference gave a tensor a *settled* type (element type known, rank 2 or more,
every dim a number or the name of a graph input's dim), pinning turns that type into numbers
without running anything. The cut walks back from the asked-for tensors and stops at settled
tensors, which become inputs of the cut with the type inference derived. It never stops at a
tensor whose value may matter (rank 0 or 1: shapes, axes, sizes and counts, which data
propagation carries), nor at one with an anonymous dim or an unknown rank.

Where the whole graph, pinned, infers every producer up to a settled tensor, the cut's answer is
the whole graph's. Where it does not (a node upstream contradicts the pinned sizes, so ONNX leaves
its output untyped), the graph cannot run at those sizes, and the cut gives what the graph computes
wherever it does run: the settled tensor's type holds for every input size.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field

import onnx

from onnx_lint.base.errors import first_line
from onnx_lint.engines.onnx_inference import run_onnx_inference
from onnx_lint.engines.strip import INLINE_ELEMENTS, strip_model
from onnx_lint.model.graphs import ROOT
from onnx_lint.model.shapes import value_tensor_info

# A cut larger than this share of the graph is not worth its bookkeeping: the whole graph runs instead.
MAX_CUT_SHARE = 0.1
# ... and never fewer nodes than this may be cut, however small the graph.
MIN_CUT_NODES = 64


@dataclass
class CutSource:
    """What a cut is made from: the main graph, where each tensor is produced, and the first inference's
    answers (which decide where the walk back may stop)."""

    model: onnx.ModelProto
    producers: Mapping[str, int]
    derived: Mapping[str, onnx.ValueInfoProto]
    initializers: Mapping[str, onnx.TensorProto | onnx.SparseTensorProto]
    _input_dims: frozenset[str] | None = field(default=None, repr=False)

    @property
    def input_dims(self) -> frozenset[str]:
        """Every dim name the main graph's inputs declare: the only names pinning turns into numbers."""
        if self._input_dims is None:
            self._input_dims = frozenset(dim.dim_param for value in self.model.graph.input
                                         for dim in value.type.tensor_type.shape.dim if dim.dim_param)
        return self._input_dims

    def settled(self, name: str) -> bool:
        """Whether pinning can only substitute numbers for input dim names in ``name``'s derived type."""
        info = value_tensor_info(self.derived.get(name))
        if info is None or not info.elem_type or info.dims is None or len(info.dims) < 2:
            return False
        names = self.input_dims
        return all(isinstance(dim, int) or (isinstance(dim, str) and dim in names) for dim in info.dims)

    def nodes_for(self, targets: Iterable[str], limit: int) -> list[int] | None:
        """Indexes of the nodes the cut keeps, in graph order; ``None`` past ``limit`` nodes or where the
        walk meets a node that holds a graph (its body reads names this walk does not follow)."""
        graph, producers = self.model.graph, self.producers
        kept: set[int] = set()
        stack = [producers[t] for t in targets if t in producers]
        while stack:
            index = stack.pop()
            if index in kept:
                continue
            kept.add(index)
            if len(kept) > limit:
                return None
            node = graph.node[index]
            if any(a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS) for a in node.attribute):
                return None
            for name in node.input:
                producer = producers.get(name) if name else None
                if producer is not None and producer not in kept and not self.settled(name):
                    stack.append(producer)
        return sorted(kept)

    def build(self, indexes: list[int], targets: Iterable[str]) -> onnx.ModelProto:
        """The cut as a model stripped like the whole copy: the graph inputs with a dynamic dim (in their
        order, so pins give each the size the whole graph's would get), the inputs and initializers the
        kept nodes read, each settled tensor they read as an input of its derived type, the targets as
        outputs."""
        source = self.model
        cut = onnx.ModelProto(ir_version=source.ir_version)
        cut.opset_import.extend(source.opset_import)
        cut.functions.extend(source.functions)
        graph, nodes = cut.graph, source.graph.node
        graph.name = "onnx-lint-cut"
        graph.node.extend(nodes[i] for i in indexes)
        produced = {out for i in indexes for out in nodes[i].output if out}
        read = {name for i in indexes for name in nodes[i].input if name and name not in produced}
        for value in source.graph.input:
            dims = value.type.tensor_type.shape.dim
            if value.name in read or any(d.WhichOneof("value") != "dim_value" for d in dims):
                graph.input.append(value)
                read.discard(value.name)
        for name in sorted(read):
            tensor = self.initializers.get(name)
            if isinstance(tensor, onnx.TensorProto):
                if tensor.data_location != onnx.TensorProto.EXTERNAL and math.prod(tensor.dims) > INLINE_ELEMENTS:
                    graph.input.append(onnx.helper.make_tensor_value_info(name, tensor.data_type, list(tensor.dims)))
                else:  # small, or external (no bytes held): stripping below treats it as the whole copy's does
                    graph.initializer.append(tensor)
            elif isinstance(tensor, onnx.SparseTensorProto):
                graph.sparse_initializer.append(tensor)
            elif name in self.producers:
                value = graph.input.add()
                value.CopyFrom(self.derived[name])
            # else: read but defined nowhere (the checker's finding); inference leaves the reader untyped
        graph.output.extend(onnx.ValueInfoProto(name=t) for t in targets)
        strip_model(cut, [ROOT])
        return cut


class PinnedValues(Mapping[str, onnx.ValueInfoProto]):
    """One pinned inference's answers for the main graph, each found on the cut that answers for it.

    ``pin`` sets the dynamic input dims of a graph in place and returns each dim name's size; ``whole``
    is the whole graph's pinned inference, run once where cuts stop paying (a cut too large, too many
    cuts, a cut inference that fails) and for any question a cut cannot answer; ``note`` files a cut's
    failure.
    """

    def __init__(self, source: CutSource, pin: Callable[[onnx.GraphProto], dict[str, int]],
                 whole: Callable[[], Mapping[str, onnx.ValueInfoProto]], note: Callable[[str], None]) -> None:
        self._source, self._pin, self._whole_run = source, pin, whole
        self._answers: dict[str, onnx.ValueInfoProto] = {}
        self._whole: Mapping[str, onnx.ValueInfoProto] | None = None
        self._budget = max(MIN_CUT_NODES, int(MAX_CUT_SHARE * len(source.model.graph.node)))
        self._note = note
        inputs = onnx.GraphProto()
        inputs.input.extend(source.model.graph.input)
        strip = onnx.ModelProto()
        strip.graph.CopyFrom(inputs)
        strip_model(strip, [ROOT])  # the whole copy's inputs as its stripping leaves them
        self.sizes = pin(strip.graph)

    def _whole_values(self) -> Mapping[str, onnx.ValueInfoProto]:
        if self._whole is None:
            self._whole = self._whole_run()
        return self._whole

    def get(self, name: str, default: onnx.ValueInfoProto | None = None) -> onnx.ValueInfoProto | None:  # type: ignore[override]
        if self._whole is not None:
            return self._whole.get(name, default)
        found = self._answers.get(name)
        if found is None and name in self._source.producers:
            self._answer(name)
            if self._whole is not None:
                return self._whole.get(name, default)
            found = self._answers.get(name)
        elif found is None:  # an input or an initializer: the whole graph answers (rarely asked)
            return self._whole_values().get(name, default)
        return found if found is not None else default

    def _answer(self, name: str) -> None:
        indexes = self._source.nodes_for([name], self._budget)
        if indexes is None:
            self._whole_values()
            return
        self._budget -= len(indexes)
        cut = self._source.build(indexes, [name])
        self._pin(cut.graph)
        try:
            inferred = run_onnx_inference(cut)
        except Exception as exc:  # the whole graph says what goes wrong, in its own words
            self._note(first_line(exc))
            self._whole_values()
            return
        for group in (inferred.graph.input, inferred.graph.value_info, inferred.graph.output):
            for value in group:
                if value.HasField("type"):
                    self._answers[value.name] = value

    def __getitem__(self, name: str) -> onnx.ValueInfoProto:
        found = self.get(name)
        if found is None:
            raise KeyError(name)
        return found

    def __iter__(self) -> Iterator[str]:
        return iter(self._whole_values())

    def __len__(self) -> int:
        return len(self._whole_values())
