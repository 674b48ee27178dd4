"""The shape oracle (docs/design.md): what the graph computes, independent of its annotations.

Inference runs on a *stripped* copy (``strip.py``): output types and value_info are removed so
a stale annotation cannot feed back into its own check, and large or external
initializers are turned into graph inputs of the same type and dims, so no
weight byte is read, copied or serialized. ONNX's own inference (``onnx_inference.py``,
started early in a child for a large model: ``prefetch.py``) answers first;
the slower engines (dims pinned, ONNX Runtime's symbolic inference, strict-mode
messages) run lazily and only for the facts a rule asks about.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import math
import re
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import InitVar, dataclass, field
from typing import TYPE_CHECKING

import onnx
import onnx.shape_inference

from onnx_lint.base import timings
from onnx_lint.base.errors import first_line, untagged
from onnx_lint.engines.carried_state import MAX_ROUNDS, CarriedState, broken_dims, carried_states, with_hypothesis
from onnx_lint.engines.cut import CutSource, PinnedValues
from onnx_lint.engines.engine import Engine
from onnx_lint.engines.loop_ranks import carried_rank_hints
from onnx_lint.engines.onnx_inference import GraphValues, collect_values, listing_order, run_onnx_inference
from onnx_lint.engines.prefetch import collect_prefetched_inference, is_prefetched
from onnx_lint.engines.strip import strip_model, swap_heavy_initializers
from onnx_lint.engines.value_sets import value_set_shapes
from onnx_lint.model.dim_expressions import DimExpression, affine_text, parse_dim_expression
from onnx_lint.model.graphs import ROOT, resolve_graph
from onnx_lint.model.load import LoadedModel
from onnx_lint.model.shapes import Dim, TensorInfo, tensor_info, value_tensor_info

if TYPE_CHECKING:  # the probe and ONNX Runtime's symbolic inference are imported when a model needs them
    from onnx_lint.engines.budgeted import EarlyChild
    from onnx_lint.engines.probe import ProbeResult

__all__ = ["ShapeOracle"]


# Two pin sizes for dynamic input dims; a dim that follows them depends on the input.
PIN_SIZES = (7, 13)
# Sizes for the name check: a distinct prime per dynamic input dim, so that a derived value names
# the one input dim it follows (or none). Large enough that few constants coincide with one.
NAME_PIN_PRIMES = (37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83, 89, 97, 101, 103, 107, 109, 113, 127)
# One node's line in strict inference's error text, for a node named onnx-lint-root-N.
_STRICT_LINE = re.compile(r"\(op_type:[^,)]+, node name: (onnx-lint-root-\d+)\): (.*)")

Key = tuple[str, str]  # (graph path, tensor name)



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


@dataclass
class ShapeOracle:
    """Derived facts for one model; cheap facts eagerly, expensive ones on request."""

    loaded: LoadedModel
    notes: list[EngineNote] = field(default_factory=list)
    _stripped_cache: bytes | None = None
    _values: dict[str, GraphValues] = field(default_factory=dict)
    _info_cache: dict[Key, TensorInfo | None] = field(default_factory=dict)
    _symbolic: dict[str, TensorInfo] | None = None
    _symbolic_early: EarlyChild | None = None
    _pinned: dict[int, dict[str, Mapping[str, onnx.ValueInfoProto]]] = field(default_factory=dict)
    _cut: CutSource | None = None
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
    # Every Loop/Scan carried state whose initial value has a rank (engines/carried_state.py), and per
    # (body path, body input index) the dims proven to hold at every iteration (empty where the proof did
    # not settle).
    carried_states: list[CarriedState] = field(default_factory=list)
    carried: dict[tuple[str, int], frozenset[int]] = field(default_factory=dict)
    # The Loop/Scan outputs that hold a proven state after the last iteration, by (graph path, name).
    _carried_finals: dict[Key, TensorInfo] = field(default_factory=dict)
    # Where inference lists the main graph's node outputs (``listing_order``), once asked for.
    _listing: dict[str, int] | None = None
    _listing_asked: bool = False
    # Per main-graph tensor whose shape the value of a graph input sets, those inputs (engines/value_sets.py);
    # worked out when an engine that needs values (the symbolic engine, the probe) first answers.
    _value_set: dict[str, frozenset[str]] | None = None
    # False only for ``rebind``, which hands over the facts derived for the original model.
    derive: InitVar[bool] = True

    def __post_init__(self, derive: bool) -> None:
        if not derive:
            return
        self.paths = self.loaded.scope_paths
        if is_prefetched(self.loaded) or len(self.loaded.model.graph.value_info):
            # Made while a child infers; in-process, only where declarations will be looked up: the order
            # (~20 ms on 100k nodes) spares them the table of every name (~50 ms) a first lookup builds.
            self._listing_order()
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
        self._values = collect_values(inferred, self.paths, self._listing)
        if len(self.paths) > 1:
            self._prove_carried_state()

    def _listing_order(self) -> dict[str, int] | None:
        """``listing_order`` of the main graph, for the inferences of its stripped copy."""
        if not self._listing_asked:
            scope = self.loaded.scopes[0]  # the main graph
            self._listing, self._listing_asked = listing_order(scope.scan().outputs), True
        return self._listing

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
            return info, self._engine_of(graph)
        final = self._carried_finals.get(key)
        if final is not None:
            return TensorInfo(info.elem_type if info and info.elem_type else final.elem_type,
                              final.dims), Engine.ONNX_CARRIED_STATE
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

    def _engine_of(self, graph: str) -> Engine:
        """ONNX's inference, named for the carried-state proof inside a body it typed from initial values."""
        if self.carried and any(graph == body or graph.startswith(body + "/") for body, _ in self.carried):
            return Engine.ONNX_CARRIED_STATE
        return Engine.ONNX

    def _initializer_info(self, graph: str, name: str) -> TensorInfo | None:
        """Type and dims of the graph's own initializer ``name`` (inference never lists those)."""
        if self._initializers is None:
            self._initializers = {scope.path: scope.initializers() for scope in self.loaded.scopes}
        tensor = self._initializers.get(graph, {}).get(name)
        if isinstance(tensor, onnx.SparseTensorProto):
            return TensorInfo(tensor.values.data_type, tuple(tensor.dims))
        return TensorInfo(tensor.data_type, tuple(tensor.dims)) if tensor is not None else None

    # -- carried state from the initial values (engines/carried_state.py) -------------
    @timings.timed(timings.ONNX_INFERENCE)
    def _prove_carried_state(self) -> None:
        """Infer again with each Loop/Scan body's carried inputs given their initial values' dims, keeping the
        dims every iteration hands on (induction); the proven run's values replace the first run's."""
        states = self.carried_states = carried_states(self.loaded.scopes, self._values)
        if not states:
            return
        bodies = {scope.path: scope.graph for scope in self.loaded.scopes}
        hypothesis: dict[CarriedState, list[Dim]] = {state: list(state.start.dims or ()) for state in states}
        for _ in range(MAX_ROUNDS):
            try:
                inferred = run_onnx_inference(with_hypothesis(self._stripped_bytes, states, hypothesis))
            except Exception as exc:
                self.notes.append(EngineNote(Engine.ONNX_CARRIED_STATE, first_line(exc)))
                return
            values = collect_values(inferred, self.paths, self._listing_order())
            broken = broken_dims(states, hypothesis, values, bodies)
            if not broken:
                self._values = values
                self.carried = {(state.body, state.input_index): frozenset(
                    i for i, dim in enumerate(hypothesis[state]) if dim is not None) for state in states}
                # The state after the last iteration (or none: then the initial value) has the proven dims too.
                self._carried_finals = {(state.enclosing, state.final): TensorInfo(state.start.elem_type,
                                                                                    tuple(hypothesis[state]))
                                        for state in states if state.final}
                return
            states = [state for state in states if -1 not in broken.get(state, ())]
            for state in states:
                for i in broken.get(state, ()):
                    hypothesis[state][i] = None
            if not states:
                return

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

    # -- dims set by the value of a graph input (engines/value_sets.py) -------------
    @property
    def value_set(self) -> dict[str, frozenset[str]]:
        """Main-graph tensors whose shape the value of a graph input sets, with those inputs.

        The symbolic engine and the probe know nothing of those values (the one guesses, the other feeds
        values nobody promised), so neither answers for these tensors; ONNX's inference, which never
        invents a value, still does.
        """
        if self._value_set is None:
            self._value_set = value_set_shapes(self.loaded.model.graph)
        return self._value_set

    # -- ONNX Runtime symbolic inference (fallback) -----------------------------
    @timings.timed(timings.SYMBOLIC)
    def ensure_symbolic(self, budget_s: float) -> None:
        """Run ONNX Runtime's symbolic inference once, on the stripped main graph, in a child killed
        after ``budget_s`` seconds."""
        if self._symbolic is not None:
            return
        from onnx_lint.engines.symbolic import SymbolicFailure, run_symbolic_budgeted

        self._symbolic = {}
        early, self._symbolic_early = self._symbolic_early, None
        result = run_symbolic_budgeted(self._symbolic_input, budget_s, early=early)
        if isinstance(result, SymbolicFailure):
            self.notes.append(EngineNote(Engine.ORT_SYMBOLIC, result.message))
            if result.expired:
                self.expired.append(Expiry(Engine.ORT_SYMBOLIC, budget_s))
            return
        value_set = self.value_set
        for value in list(result.graph.value_info) + list(result.graph.output):
            info = value_tensor_info(value)
            if info is not None and info.rank is not None and value.name not in value_set:
                self._symbolic[value.name] = info

    def _symbolic_input(self) -> onnx.ModelProto:
        """The stripped main graph with every external weight an input (the engine reads any initializer)."""
        model = onnx.ModelProto.FromString(self._stripped_bytes)
        swap_heavy_initializers(model, self.paths, all_external=True)
        return model

    def start_symbolic_early(self) -> None:
        """Start the symbolic engine now where it will almost surely be asked (``symbolic.start_early``): a
        small main graph holding operators of a domain ONNX has no schemas for, where the machine has room
        for the child (``forked.room_for_child``). A lint that never asks stops it (``stop_early_engines``)."""
        from onnx_lint.engines.forked import room_for_child
        from onnx_lint.engines.symbolic import start_early

        if self._symbolic is not None or self._symbolic_early is not None or not room_for_child():
            return
        self._symbolic_early = start_early(self._symbolic_input())

    def stop_early_engines(self) -> None:
        """Stop an engine started early that the lint did not ask."""
        if self._symbolic_early is not None:
            self._symbolic_early.abandon()
            self._symbolic_early = None

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
            from onnx_lint.engines import probe as probing  # by module: a benchmark counts the calls

            wanted = [o for o in outputs if o not in self.value_set]
            if not wanted:
                self.probe_result = probing.ProbeResult({}, "every output's shape is set by a graph input's value")
                return self.probe_result
            self.probe_result = probing.probe(self.loaded, wanted, timeout=budget_s)
            if self.probe_result.expired:
                self.expired.append(Expiry(Engine.ORT_RUN, budget_s))
        return self.probe_result

    # -- dims pinned to two sizes -----------------------------------------------
    @timings.timed(timings.PINNED)
    def pinned(self, size: int) -> dict[str, Mapping[str, onnx.ValueInfoProto]]:
        """Inference with every dynamic dim of the main graph's inputs set to ``size``."""
        if size not in self._pinned:
            pin = functools.partial(_pin_all, size=size)
            source = self._cut_source()
            if source is not None:
                self._pinned[size] = {ROOT: PinnedValues(source, pin, lambda: self._pinned_whole(pin)[ROOT],
                                                         self._cut_notes(Engine.ONNX_PINNED))}
            else:
                self._pinned[size] = self._pinned_whole(pin)
        return self._pinned[size]

    def _pinned_whole(self, pin: Callable[[onnx.GraphProto], dict[str, int]]
                      ) -> dict[str, Mapping[str, onnx.ValueInfoProto]]:
        model = onnx.ModelProto.FromString(self._stripped_bytes)
        pin(model.graph)
        try:
            return dict(collect_values(run_onnx_inference(model), self.paths, self._listing_order()))
        except Exception as exc:
            self.notes.append(EngineNote(Engine.ONNX_PINNED, first_line(exc)))
            return {}

    def pinned_dims(self, graph: str, name: str) -> list[TensorInfo | None]:
        """The tensor's derived info under each pin size."""
        result = []
        for size in PIN_SIZES:
            values = self.pinned(size).get(graph)
            value = values.get(name) if values is not None else None
            result.append(value_tensor_info(value))
        return result

    def _cut_source(self) -> CutSource | None:
        """What pinned inferences cut the main graph from (engines/cut.py); ``None`` where the graph holds
        subgraphs (their Loop-carried proof typed the first answers with hypotheses a cut would not see)."""
        if len(self.paths) > 1 or self.inferred is None or ROOT not in self._values:
            return None
        if self._cut is None:
            scope = self.loaded.scopes[0]
            self._cut = CutSource(self.loaded.model, scope.producers(), self._values[ROOT], scope.initializers())
        return self._cut

    def _cut_notes(self, engine: str) -> Callable[[str], None]:
        """How a cut's inference failure is noted (the whole graph's run notes its own)."""
        return lambda message: self.notes.append(EngineNote(engine, message))

    # -- dims pinned to a distinct size each (symbolic names are claims) -------------
    @timings.timed(timings.NAMES_PINNED)
    def named_pins(self, run: int = 0) -> tuple[dict[str, int], Mapping[str, onnx.ValueInfoProto]]:
        """Inference with each dynamic input dim of the main graph pinned to its own prime.

        Returns the size each input dim *name* got and the main graph's derived values. Dims that
        share a name share a size (the name says they are equal); each unnamed dynamic dim gets
        its own. ``run`` 1 uses other primes, to confirm what run 0 suggests. Each run happens at
        most once per model, and only when a declared name needs proving; each tensor asked about is
        answered by the part of the graph it depends on (engines/cut.py).
        """
        if run not in self._named_pins:
            pin = functools.partial(_pin_primes, skip=run * len(NAME_PIN_PRIMES))
            source = self._cut_source()
            if source is not None:
                pinned = PinnedValues(source, pin, lambda: self._named_whole(pin)[1],
                                      self._cut_notes(Engine.ONNX_NAMES_PINNED))
                self._named_pins[run] = (pinned.sizes, pinned)
            else:
                self._named_pins[run] = self._named_whole(pin)
        return self._named_pins[run]

    def _named_whole(self, pin: Callable[[onnx.GraphProto], dict[str, int]]
                     ) -> tuple[dict[str, int], Mapping[str, onnx.ValueInfoProto]]:
        model = onnx.ModelProto.FromString(self._stripped_bytes)
        sizes = pin(model.graph)
        values: Mapping[str, onnx.ValueInfoProto]
        try:
            values = collect_values(run_onnx_inference(model), [ROOT], self._listing_order()).get(ROOT, {})
        except Exception as exc:
            self.notes.append(EngineNote(Engine.ONNX_NAMES_PINNED, first_line(exc)))
            values = {}
        return sizes, values

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
                                   _annotated=None, _symbolic_early=None, derive=False)

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


def _pin_all(graph: onnx.GraphProto, size: int) -> dict[str, int]:
    return pin_input_dims(graph, itertools.repeat(size))


def _pin_primes(graph: onnx.GraphProto, skip: int) -> dict[str, int]:
    return pin_input_dims(graph, _primes(skip))


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
