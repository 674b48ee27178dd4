"""The shape oracle (docs/design.md): what the graph computes, independent of its annotations.

Inference runs on a *stripped* copy: output types and value_info are removed so
a stale annotation cannot feed back into its own check, and large or external
initializers are turned into graph inputs of the same type and dims, so no
weight byte is read, copied or serialized. ONNX's own inference answers first;
the slower engines (dims pinned, ONNX Runtime's symbolic inference, strict-mode
messages) run lazily and only for the facts a rule asks about.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import re
import time
import weakref
from collections.abc import Callable, Iterator, Mapping
from dataclasses import InitVar, dataclass, field
from functools import partial
from typing import TypeVar

import onnx
import onnx.shape_inference
from onnx.onnx_cpp2py_export import shape_inference as onnx_cpp_inference

from onnx_lint.base import timings
from onnx_lint.base.errors import first_line, untagged
from onnx_lint.engines import scoped_names
from onnx_lint.engines.engine import Engine
from onnx_lint.engines.forked import ForkedCall
from onnx_lint.engines.limits import engine_headroom, memory_ceiling
from onnx_lint.engines.loop_ranks import carried_rank_hints
from onnx_lint.engines.probe import ProbeResult, probe
from onnx_lint.engines.symbolic import SymbolicFailure, run_symbolic_budgeted, run_symbolic_inference
from onnx_lint.model.dim_expressions import DimExpression, affine_text, parse_dim_expression
from onnx_lint.model.graphs import ROOT, iter_scopes, resolve_graph, scopes_at
from onnx_lint.model.load import LoadedModel
from onnx_lint.model.shapes import TensorInfo, tensor_info, value_tensor_info

__all__ = ["ShapeOracle", "run_symbolic_inference"]


# protobuf serializes no message of 2 GiB or more; larger models go through files.
_PROTOBUF_LIMIT = 2**31 - 1
# Initializers above this many elements never hold shape data; inference sees them as inputs.
INLINE_ELEMENTS = 4096
# Two pin sizes for dynamic input dims; a dim that follows them depends on the input.
PIN_SIZES = (7, 13)
# Sizes for the name check: a distinct prime per dynamic input dim, so that a derived value names
# the one input dim it follows (or none). Large enough that few constants coincide with one.
NAME_PIN_PRIMES = (37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83, 89, 97, 101, 103, 107, 109, 113, 127)
# One node's line in strict inference's error text, for a node named onnx-lint-root-N.
_STRICT_LINE = re.compile(r"\(op_type:[^,)]+, node name: (onnx-lint-root-\d+)\): (.*)")

Key = tuple[str, str]  # (graph path, tensor name)
T = TypeVar("T")



_FLOAT_TYPES = frozenset(getattr(onnx.TensorProto, name) for name in (
    "FLOAT", "DOUBLE", "FLOAT16", "BFLOAT16", "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2", "FLOAT8E5M2FNUZ",
    "FLOAT4E2M1", "FLOAT8E8M0") if hasattr(onnx.TensorProto, name))
# The longest float tensor whose values inference reads: Resize's roi (two per axis) and scales,
# Upsample's scales, Range's scalars. Every other value it reads is an integer shape, axis or count.
_READ_FLOAT_ELEMENTS = 16


def swap_heavy_initializers(model: onnx.ModelProto, paths: list[str], all_external: bool = False) -> None:
    """Turn large initializers, and external ones that inference may read, into graph inputs of the same
    type and dims.

    Inference only needs their types; their bytes would be read, copied and serialized.
    An external initializer holds no bytes in memory; inference cannot read its values
    and would fail the node that asks (a vector of integers, or of at most 16 floats,
    may be asked for): only those become inputs. Large exports hold tens of thousands of external
    weights and biases, which stay as they are (``all_external`` swaps them too: ONNX
    Runtime's engine reads any initializer it uses, from the working folder).
    """
    external, floats, prod = onnx.TensorProto.EXTERNAL, _FLOAT_TYPES, math.prod
    for scope in scopes_at(model, paths):
        graph = scope.graph
        heavy: list[int] = []
        for index, init in enumerate(graph.initializer):  # tens of thousands in a large export: cheap tests first
            if init.data_location == external:
                if all_external:
                    heavy.append(index)
                    continue
                dims = init.dims
                if len(dims) > 1:  # a matrix is never read
                    continue
                if init.data_type not in floats or prod(dims) <= _READ_FLOAT_ELEMENTS:
                    heavy.append(index)
            elif prod(init.dims) > INLINE_ELEMENTS:
                heavy.append(index)
        if not heavy:
            continue
        initializers = list(graph.initializer)
        swapped = set(heavy)
        keep = [t for i, t in enumerate(initializers) if i not in swapped]
        heavy_tensors = [initializers[i] for i in heavy]
        del graph.initializer[:]
        graph.initializer.extend(keep)
        declared = {v.name for v in graph.input}
        add = graph.input.add  # field by field: a large export has tens of thousands of these
        for init in heavy_tensors:
            if init.name not in declared:
                value = add()
                value.name = init.name
                tensor_type = value.type.tensor_type
                tensor_type.elem_type = init.data_type
                shape = tensor_type.shape
                shape.SetInParent()
                for size in init.dims:
                    shape.dim.add().dim_value = size


def strip_model(model: onnx.ModelProto, paths: list[str]) -> None:
    """Remove the annotations under test and the weight bytes, in place; give the tensor names that
    subgraphs repeat names of their own (``scoped_names``), so data propagation keeps them apart."""
    for scope in scopes_at(model, paths):
        del scope.graph.value_info[:]
        for output in scope.graph.output:
            output.ClearField("type")
        for value in scope.graph.input:
            for dim in value.type.tensor_type.shape.dim:
                if dim.WhichOneof("value") == "dim_value" and dim.dim_value < 0:
                    dim.Clear()  # exporters write -1 for "dynamic"; inference would propagate it
    swap_heavy_initializers(model, paths)
    if len(paths) > 1:
        scoped_names.separate(model)


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

    The value_info table (an entry per node output: 100k on a large model, ~0.1 s to
    build) is built only when a name is not among the inputs and outputs; the rules
    on a model without value_info of its own never ask for one.
    """

    def __init__(self, graph: onnx.GraphProto) -> None:
        self._graph = graph
        self._ends = {v.name: v for v in graph.input}
        self._ends.update((v.name, v) for v in graph.output if v.HasField("type"))
        self._all: dict[str, onnx.ValueInfoProto] | None = None

    def _table(self) -> dict[str, onnx.ValueInfoProto]:
        if self._all is None:
            self._all = {v.name: v for v in self._graph.value_info}
            self._all.update(self._ends)
        return self._all

    def get(self, name: str, default: onnx.ValueInfoProto | None = None) -> onnx.ValueInfoProto | None:  # type: ignore[override]
        found = self._ends.get(name)
        return found if found is not None else self._table().get(name, default)

    def __getitem__(self, name: str) -> onnx.ValueInfoProto:
        found = self.get(name)
        if found is None:
            raise KeyError(name)
        return found

    def __contains__(self, name: object) -> bool:
        return name in self._ends or name in self._table()

    def __iter__(self) -> Iterator[str]:
        return iter(self._table())

    def __len__(self) -> int:
        return len(self._table())

    def listed(self) -> int:
        """How many value_info entries inference wrote (the stripped graph had none; each names one node
        output, graph outputs included), counted without building the table."""
        return len(self._graph.value_info)


def collect_values(model: onnx.ModelProto, paths: list[str]) -> dict[str, GraphValues]:
    """Per graph path: tensor name -> the ValueInfoProto inference left for it (the model's own names:
    the stripped copy's subgraph names are restored in place)."""
    if len(paths) > 1:
        scoped_names.restore(model)
    return {scope.path: GraphValues(scope.graph) for scope in scopes_at(model, paths)}


@dataclass
class EngineNote:
    """An engine that failed or was skipped, with its own words."""

    engine: str
    message: str


@dataclass(frozen=True)
class Expiry:
    """An engine stopped at its budget: what it would have derived stays unproven."""

    engine: str
    budget_s: float


# From this many nodes and initializers in the main graph on, ONNX's inference runs in a child process.
PREFETCH_MIN_ENTRIES = 20_000
# An AttributeProto's ``type`` field (20) on the wire, set to GRAPH (5) or GRAPHS (10).
_GRAPH_ATTRIBUTE, _GRAPHS_ATTRIBUTE = b"\xa0\x01\x05", b"\xa0\x01\x0a"
Prefetch = ForkedCall[tuple[bytes | None, str | None]]
_PREFETCHED: dict[int, tuple[weakref.ref, Prefetch]] = {}


def prefetch_inference(loaded: LoadedModel) -> Prefetch | None:
    """Start ONNX's inference of a large model, parsed but not yet scanned or validated, in a forked
    child, whose answer ``ShapeOracle`` collects; ``None`` where nothing started. A caller whose
    model the loader then refuses stops the child (``abandon``).

    Inference is the largest single cost of a lint and a C++ call that holds the GIL: in a child
    it runs on a second core while this process scans the nodes, validates the model and runs
    the checker (on 100k nodes ~0.2 s embedded, ~0.5 s with 50k external tensors). The child
    strips its own copy-on-write copy of the parse, so nothing is copied; this process has
    written nothing yet that the child's pages would have to copy. Measured on this engine's
    benchmark models: 100k nodes 1.31-1.43x baseline in-process, 1.17-1.20x forked; 30k nodes
    break even; up to 10k nodes, and a 49-node resnet18 with 45 MB of weights, the fork costs
    0.03-0.05 s more than it overlaps, so small models stay in-process. A crash or runaway
    allocation of the child (inference runs under a memory ceiling) can never take this process
    down.
    """
    graph = loaded.model.graph
    if len(graph.node) + len(graph.initializer) < PREFETCH_MIN_ENTRIES:
        return None
    call = ForkedCall.start(partial(_infer_serialized, loaded.model, loaded.data))
    if call is None:
        return None
    key = id(loaded)

    def stop(_: weakref.ref) -> None:
        _PREFETCHED.pop(key, None)
        call.abandon()

    _PREFETCHED[key] = (weakref.ref(loaded, stop), call)
    return call


def collect_prefetched_inference(loaded: LoadedModel) -> onnx.ModelProto | str | None:
    """The prefetched inference of ``loaded``: the inferred model, the engine's error, or ``None``
    (nothing prefetched, or the child died: the caller infers in-process)."""
    pending = _PREFETCHED.pop(id(loaded), None)
    if pending is None or pending[0]() is not loaded:
        return None
    done, answer = pending[1].result()
    if not done or answer is None:
        return None
    data, error = answer
    return onnx.ModelProto.FromString(data) if data is not None else error


def _infer_serialized(model: onnx.ModelProto, data: bytes) -> tuple[bytes | None, str | None]:
    """In the child: strip ``model`` (the child's own copy), infer, and hand back the inferred model's
    bytes or the engine's error."""
    # The pass that finds subgraphs costs ~0.1 s on 100k nodes; a file with no graph attribute needs none.
    graph_typed = _GRAPH_ATTRIBUTE in data or _GRAPHS_ATTRIBUTE in data
    strip_model(model, [scope.path for scope in iter_scopes(model)] if graph_typed else [ROOT])
    try:
        return run_onnx_inference_serialized(model.SerializeToString()), None
    except Exception as exc:  # onnx raises bare RuntimeErrors for malformed graphs
        return None, first_line(exc)


@dataclass
class ShapeOracle:
    """Derived facts for one model; cheap facts eagerly, expensive ones on request."""

    loaded: LoadedModel
    notes: list[EngineNote] = field(default_factory=list)
    _stripped_cache: bytes | None = None
    _values: dict[str, GraphValues] = field(default_factory=dict)
    _info_cache: dict[Key, TensorInfo | None] = field(default_factory=dict)
    _symbolic: dict[str, TensorInfo] | None = None
    _pinned: dict[int, dict[str, GraphValues]] = field(default_factory=dict)
    _named_pins: dict[int, tuple[dict[str, int], Mapping[str, onnx.ValueInfoProto]]] = field(default_factory=dict)
    probe_result: ProbeResult | None = None
    _annotated: dict[str, GraphValues] | None = None
    inferred: onnx.ModelProto | None = None
    paths: list[str] = field(default_factory=list)
    _initializers: dict[str, dict[str, onnx.TensorProto | onnx.SparseTensorProto]] | None = None
    # Seconds ONNX's own inference took here (the yardstick of the slower engines' budget).
    bare_seconds: float = 0.0
    expired: list[Expiry] = field(default_factory=list)
    # The main graph's values inferred again with Loop-carried ranks from the bodies (see loop_ranks).
    _loop_ranked: Mapping[str, onnx.ValueInfoProto] | None = None
    # False only for ``rebind``, which hands over the facts derived for the original model.
    derive: InitVar[bool] = True

    def __post_init__(self, derive: bool) -> None:
        if not derive:
            return
        self.paths = self.loaded.scope_paths
        started = time.perf_counter()
        with timings.step(timings.ONNX_INFERENCE):
            inferred = collect_prefetched_inference(self.loaded)
            if inferred is None:  # nothing prefetched: infer here
                try:
                    inferred = run_onnx_inference(self._stripped_bytes)
                except Exception as exc:  # onnx raises bare RuntimeErrors for malformed graphs
                    inferred = first_line(exc)
        self.bare_seconds = time.perf_counter() - started
        if isinstance(inferred, str):
            self.notes.append(EngineNote(Engine.ONNX, inferred))
            inferred = onnx.ModelProto.FromString(self._stripped_bytes)
        self.inferred = inferred
        self._values = collect_values(inferred, self.paths)

    @property
    def _stripped_bytes(self) -> bytes:
        """The stripped copy, serialized (made on first use: prefetched inference needs none here)."""
        if self._stripped_cache is None:
            stripped = self.loaded.fresh_copy()
            strip_model(stripped, self.paths)
            self._stripped_cache = stripped.SerializeToString()
        return self._stripped_cache

    # -- ONNX inference ---------------------------------------------------------
    def values(self, graph: str) -> Mapping[str, onnx.ValueInfoProto]:
        return self._values.get(graph, {})

    def inferred_entries(self, graph: str) -> int:
        """How many node outputs inference listed in a graph (at most one entry each)."""
        values = self._values.get(graph)
        return values.listed() if values is not None else 0

    def derived(self, graph: str, name: str) -> tuple[TensorInfo | None, str | None]:
        """Derived type of a tensor and the engine that derived it."""
        key = (graph, name)
        if key not in self._info_cache:
            values = self._values.get(graph)
            value = values.get(name) if values is not None else None
            if value is not None and value.HasField("type"):
                self._info_cache[key] = tensor_info(value.type)
            else:  # an initializer's type is the file's own fact (dynamo exports annotate them)
                self._info_cache[key] = self._initializer_info(graph, name)
        info = self._info_cache[key]
        if info is not None and info.rank is not None:
            return info, Engine.ONNX
        ranked = self._loop_ranked.get(name) if graph == ROOT and self._loop_ranked is not None else None
        if ranked is not None and ranked.HasField("type"):
            found = tensor_info(ranked.type)
            if found is not None and found.rank is not None:
                return TensorInfo(info.elem_type if info and info.elem_type else found.elem_type,
                                  found.dims), Engine.ONNX_LOOP_RANK
        if graph == ROOT and self._symbolic is not None and name in self._symbolic:
            sym = self._symbolic[name]
            merged = TensorInfo(info.elem_type if info and info.elem_type else sym.elem_type, sym.dims)
            return merged, Engine.ORT_SYMBOLIC
        return info, (Engine.ONNX if info is not None else None)

    def _initializer_info(self, graph: str, name: str) -> TensorInfo | None:
        """Type and dims of the graph's own initializer ``name`` (inference never lists those)."""
        if self._initializers is None:
            self._initializers = {scope.path: scope.initializers() for scope in self.loaded.scopes}
        tensor = self._initializers.get(graph, {}).get(name)
        if isinstance(tensor, onnx.SparseTensorProto):
            return TensorInfo(tensor.values.data_type, tuple(tensor.dims))
        return TensorInfo(tensor.data_type, tuple(tensor.dims)) if tensor is not None else None

    # -- Loop-carried ranks (before any slower engine) -----------------------------
    def ensure_loop_ranks(self) -> None:
        """Infer the main graph once more with the ranks Loop bodies prove for their carried outputs.

        As cheap as the first inference, and only when a Loop output was left without a rank.
        """
        if self._loop_ranked is not None or self.inferred is None:
            return
        self._loop_ranked = {}
        initializers = {t.name: t for t in self.inferred.graph.initializer}
        hints = list(carried_rank_hints(self.inferred, self._values, initializers))
        if not hints:
            return
        model = onnx.ModelProto.FromString(self._stripped_bytes)
        outputs = {v.name: v for v in model.graph.output}
        for hint in hints:  # a graph output's own type is what inference reports for it
            if hint.name in outputs:
                outputs[hint.name].type.CopyFrom(hint.type)
            else:
                model.graph.value_info.append(hint)
        try:
            self._loop_ranked = collect_values(run_onnx_inference(model), [ROOT]).get(ROOT, {})
        except Exception as exc:
            self.notes.append(EngineNote(Engine.ONNX_LOOP_RANK, first_line(exc)))

    # -- ONNX Runtime symbolic inference (fallback) -----------------------------
    @timings.timed(timings.SYMBOLIC)
    def ensure_symbolic(self, budget_s: float) -> None:
        """Run ONNX Runtime's symbolic inference once, on the stripped main graph, in a child killed
        after ``budget_s`` seconds."""
        if self._symbolic is not None:
            return
        self._symbolic = {}
        model = onnx.ModelProto.FromString(self._stripped_bytes)
        swap_heavy_initializers(model, self.paths, all_external=True)
        result = run_symbolic_budgeted(model, budget_s)
        if isinstance(result, SymbolicFailure):
            self.notes.append(EngineNote(Engine.ORT_SYMBOLIC, result.message))
            if result.expired:
                self.expired.append(Expiry(Engine.ORT_SYMBOLIC, budget_s))
            return
        for value in list(result.graph.value_info) + list(result.graph.output):
            info = value_tensor_info(value)
            if info is not None and info.rank is not None:
                self._symbolic[value.name] = info

    def symbolic_types(self) -> dict[str, TensorInfo]:
        """What the symbolic engine derived for the main graph (empty if it did not run)."""
        return dict(self._symbolic or {})

    @property
    def symbolic_ran(self) -> bool:
        return self._symbolic is not None

    # -- running the model (the third engine) ---------------------------------------
    @timings.timed(timings.PROBE)
    def ensure_probe(self, outputs: list[str], budget_s: float) -> ProbeResult:
        """Run the model in ONNX Runtime once for the main graph's otherwise underivable outputs."""
        if self.probe_result is None:
            self.probe_result = probe(self.loaded, outputs, timeout=budget_s)
            if self.probe_result.expired:
                self.expired.append(Expiry(Engine.ORT_RUN, budget_s))
        return self.probe_result

    # -- dims pinned to two sizes -----------------------------------------------
    @timings.timed(timings.PINNED)
    def pinned(self, size: int) -> dict[str, GraphValues]:
        """Inference with every dynamic dim of the main graph's inputs set to ``size``."""
        if size not in self._pinned:
            model = onnx.ModelProto.FromString(self._stripped_bytes)
            pin_input_dims(model.graph, itertools.repeat(size))
            try:
                self._pinned[size] = collect_values(run_onnx_inference(model), self.paths)
            except Exception as exc:
                self.notes.append(EngineNote(Engine.ONNX_PINNED, first_line(exc)))
                self._pinned[size] = {}
        return self._pinned[size]

    def pinned_dims(self, graph: str, name: str) -> list[TensorInfo | None]:
        """The tensor's derived info under each pin size."""
        result = []
        for size in PIN_SIZES:
            values = self.pinned(size).get(graph)
            value = values.get(name) if values is not None else None
            result.append(value_tensor_info(value))
        return result

    # -- dims pinned to a distinct size each (symbolic names are claims) -------------
    @timings.timed(timings.NAMES_PINNED)
    def named_pins(self, run: int = 0) -> tuple[dict[str, int], Mapping[str, onnx.ValueInfoProto]]:
        """Inference with each dynamic input dim of the main graph pinned to its own prime.

        Returns the size each input dim *name* got and the main graph's derived values. Dims that
        share a name share a size (the name says they are equal); each unnamed dynamic dim gets
        its own. ``run`` 1 uses other primes, to confirm what run 0 suggests. Each run happens at
        most once per model, and only when a declared name needs proving.
        """
        if run not in self._named_pins:
            model = onnx.ModelProto.FromString(self._stripped_bytes)
            sizes = pin_input_dims(model.graph, _primes(skip=run * len(NAME_PIN_PRIMES)))
            values: Mapping[str, onnx.ValueInfoProto]
            try:
                values = collect_values(run_onnx_inference(model), [ROOT]).get(ROOT, {})
            except Exception as exc:
                self.notes.append(EngineNote(Engine.ONNX_NAMES_PINNED, first_line(exc)))
                values = {}
            self._named_pins[run] = (sizes, values)
        return self._named_pins[run]

    def pinned_input_dim(self, name: str, index: int) -> str | None:
        """The input dim name a main-graph tensor's dim provably equals (two pinned runs agree)."""
        found = None
        for run in (0, 1):
            sizes, values = self.named_pins(run)
            value = values.get(name)
            info = value_tensor_info(value)
            if info is None or info.dims is None or len(info.dims) <= index:
                return None
            got = info.dims[index]
            match = next((n for n, size in sizes.items() if size == got), None)
            if match is None or (found is not None and match != found):
                return None
            found = match
        return found

    def pinned_affine(self, name: str, index: int) -> str | None:
        """The integer affine expression of input dim names a main-graph tensor's dim provably equals.

        Two pinned runs fit it (``2*seq``, ``seq + 1``, ``past_sequence_length + sequence_length``),
        a third confirms it; ``None`` where no single fit survives all three.
        """
        runs: list[tuple[dict[str, int], int]] = []
        for run in (0, 1, 2):
            sizes, values = self.named_pins(run)
            value = values.get(name)
            info = value_tensor_info(value)
            got = info.dims[index] if info is not None and info.dims is not None and len(info.dims) > index else None
            if not isinstance(got, int):
                return None
            runs.append(({n: s for n, s in sizes.items() if parse_dim_expression(n) is None}, got))
        return fit_affine(runs)

    # -- strict-mode messages -----------------------------------------------------
    def type_conflicts(self) -> dict[tuple[str, int], str]:
        """Nodes whose input types break their operator's type constraints, with the full checker's words
        (``B has inconsistent type tensor(float16)``): a Gemm with a float A and a float16 B, as ONNX
        Runtime's FP16 converter leaves some. The annotations are stripped, so only the nodes speak."""
        nodes = [(scope.path, i) for scope in self.loaded.scopes for i in range(len(scope.graph.node))]
        return {key: message for key, message in self.strict_messages(nodes, check_type=True).items()
                if "inconsistent type" in message or "bound to different types" in message}

    @timings.timed(timings.STRICT)
    def strict_messages(self, nodes: list[tuple[str, int]], check_type: bool = False) -> dict[tuple[str, int], str]:
        """Strict whole-model inference's message for each of ``nodes`` ((graph path, node index)).

        The fallback for root causes that inferring the node alone cannot reproduce (it failed
        on values data propagation computed upstream). Each asked-for node is given a unique
        name in the copy that runs, so a message can only be attributed to its own node.
        onnx reports nothing in strict mode once the model holds an operator it has no schema for.
        """
        model = onnx.ModelProto.FromString(self._stripped_bytes)
        marks: dict[str, tuple[str, int]] = {}
        for path, index in nodes:
            mark = f"onnx-lint-root-{len(marks)}"
            resolve_graph(model, path).node[index].name = mark
            marks[mark] = (path, index)
        found: dict[tuple[str, int], str] = {}
        try:
            run_onnx_inference(model, strict=True, check_type=check_type)
        except Exception as exc:
            for line in str(exc).splitlines():
                match = _STRICT_LINE.search(line)
                if match and match.group(1) in marks:
                    found.setdefault(marks[match.group(1)], untagged(match.group(2)))
        return found

    def rebind(self, loaded: LoadedModel, *, nodes_reordered: bool = False) -> ShapeOracle:
        """This oracle for a fixed copy of its model, whose declarations (only) changed.

        Everything derived from the stripped copy (ONNX's inference, the pinned and
        symbolic runs, the runtime probe) holds for the fixed model too, since an
        annotation fix never changes what the stripped copy contains: the new oracle
        shares those facts and derives nothing at construction. Only inference that
        trusts the declarations starts afresh. A fix that reordered nodes (OL103) did
        change the stripped copy, so that model gets an oracle of its own.
        """
        if nodes_reordered:
            return ShapeOracle(loaded)
        return dataclasses.replace(self, loaded=loaded, notes=list(self.notes), expired=list(self.expired),
                                   _annotated=None, derive=False)

    # -- inference that trusts the declarations -----------------------------------
    def annotated_values(self, graph: str) -> Mapping[str, onnx.ValueInfoProto]:
        """Inference on the model *with* its annotations: what strict tools get to see."""
        if self._annotated is None:
            model = self.loaded.fresh_copy()
            swap_heavy_initializers(model, self.paths)
            try:
                self._annotated = collect_values(run_onnx_inference(model), self.paths)
            except Exception:
                self._annotated = collect_values(model, self.paths)
        return self._annotated.get(graph, {})


# Coefficients tried for a fit over two input dims (one dim's coefficient is solved exactly).
_PAIR_COEFFICIENTS = (1, -1, 2, -2)


def fit_affine(runs: list[tuple[dict[str, int], int]]) -> str | None:
    """The one integer affine expression of the pinned input dim names that gives every run's value:
    ``a*x + b`` solved from the first two runs, else ``a*x + c*y + b`` for small ``a`` and ``c``,
    each checked on every run; ``None`` where none or more than one fits."""
    names = sorted(set.intersection(*(set(sizes) for sizes, _ in runs))) if runs else []
    if len(runs) < 3 or not names:
        return None

    def fits(terms: list[tuple[int, str]], constant: int) -> bool:
        return all(sum(a * sizes[n] for a, n in terms) + constant == got for sizes, got in runs)

    found: list[str] = []
    (first, g0), (second, g1) = runs[0], runs[1]
    for x in names:
        step = second[x] - first[x]
        if step == 0 or (g1 - g0) % step:
            continue
        a = (g1 - g0) // step
        if a and fits([(a, x)], g0 - a * first[x]):
            found.append(affine_text([(a, x)], g0 - a * first[x]))
    if not found:
        for i, x in enumerate(names):
            for y in names[i + 1:]:
                for a in _PAIR_COEFFICIENTS:
                    for c in _PAIR_COEFFICIENTS:
                        constant = g0 - a * first[x] - c * first[y]
                        if fits([(a, x), (c, y)], constant):
                            found.append(affine_text([(a, x), (c, y)], constant))
    return found[0] if len(found) == 1 else None


def pin_input_dims(graph: onnx.GraphProto, primes: Iterator[int]) -> dict[str, int]:
    """Give each dynamic input dim of ``graph`` a size, in place; returns the size of each dim name.

    A plain name or an unnamed dim gets the next prime. A name that reads as an expression of the
    plain names (an attention mask's ``past_sequence_length + sequence_length``) gets the size it
    claims, so the pinned inputs agree with each other as they do when the model runs.
    """
    dynamic = [dim for value in graph.input if value.type.HasField("tensor_type")
               for dim in value.type.tensor_type.shape.dim if dim.WhichOneof("value") != "dim_value"]
    sizes: dict[str, int] = {}
    expressions: dict[str, DimExpression] = {}
    for dim in dynamic:
        name = dim.dim_param
        expression = parse_dim_expression(name) if name else None
        if expression is not None:
            expressions[name] = expression
        elif name not in sizes:
            size = next(primes)
            if name:
                sizes[name] = size
            dim.dim_value = size
    for name, expression in expressions.items():
        claimed = expression.evaluate(sizes)
        sizes[name] = claimed if claimed is not None and claimed > 0 else next(primes)
    for dim in dynamic:
        if dim.dim_param in sizes:
            dim.dim_value = sizes[dim.dim_param]
    return sizes


def _primes(skip: int = 0) -> Iterator[int]:
    """The pin primes, then further primes (for a second run, or very many dynamic dims)."""
    def all_primes() -> Iterator[int]:
        yield from NAME_PIN_PRIMES
        candidate = NAME_PIN_PRIMES[-1] + 2
        while True:
            if all(candidate % p for p in range(3, math.isqrt(candidate) + 1, 2)):
                yield candidate
            candidate += 2

    primes = all_primes()
    for _ in range(skip):
        next(primes)
    yield from primes
