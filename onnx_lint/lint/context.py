"""Per-model analysis shared by the rules: declarations against derived facts.

Comparing each declaration once here keeps every rule a thin filter, and lets
the expensive engines (symbolic inference, pinned dims) run at most once per
model and only when some declaration needs them.
"""

from __future__ import annotations

from collections import defaultdict
from functools import cached_property
from typing import TYPE_CHECKING, Literal

import onnx

from onnx_lint.base.timings import TYPE_FILL, timed
from onnx_lint.engines.budget import inference_budget
from onnx_lint.engines.engine import Engine
from onnx_lint.engines.node_inference import ModelFacts, NodeFailure
from onnx_lint.engines.oracle import ShapeOracle
from onnx_lint.lint import reconcile, untyped
from onnx_lint.lint.baked_batch import (
    BakedReshape,
    ConstantTarget,
    ReshapeTargets,
    baked_reshapes,
    batch_fixing_constants,
    batch_names,
    downstream_tensors,
)
from onnx_lint.lint.conflicts import find_conflicts
from onnx_lint.lint.declarations import Declaration, DuplicateDeclarations
from onnx_lint.lint.loop_state import state_declarations
from onnx_lint.lint.untyped import UntypedGroup
from onnx_lint.lint.verdicts import ToolVerdicts, runtime_refusal, tool_verdicts
from onnx_lint.model.dim_expressions import parse_dim_expression
from onnx_lint.model.edits import DimProof, SetType
from onnx_lint.model.graphs import ROOT, GraphScope, defined_outside
from onnx_lint.model.load import LoadedModel
from onnx_lint.model.shapes import Dim, TensorInfo, format_dims, input_dim_names, tensor_info, value_tensor_info
from onnx_lint.model.validate import check_cycles

if TYPE_CHECKING:
    from onnx_lint.engines.probe import ProbeResult

_HALF = frozenset((onnx.TensorProto.FLOAT16, onnx.TensorProto.BFLOAT16))


class LintContext:
    """Everything rules may ask about one model; each fact is computed once, on demand."""

    def __init__(self, loaded: LoadedModel, display: str, oracle: ShapeOracle | None = None, *,
                 runtime_probe: bool = True, inference_budget: float | None = None) -> None:
        self.loaded = loaded
        self.model = loaded.model
        self.display = display  # the file as messages name it (a diagnostic's ``file``)
        self._given_oracle = oracle
        self.runtime_probe = runtime_probe
        self.inference_budget = inference_budget  # seconds, or None for the budget the model's size sets
        # Declarations a slower engine was asked to derive and did not (filled by ``declarations``).
        self.unproven: list[Declaration] = []

    def for_fixed_copy(self, loaded: LoadedModel, *, nodes_reordered: bool) -> LintContext:
        """The context of a fixed copy of this model, whose declarations (only) changed: the derived
        facts carry over (``ShapeOracle.rebind``), and so, where no node moved, do the facts about
        nodes and constants, which the re-lint after a fix would otherwise compute again."""
        ctx = LintContext(loaded, self.display, self.oracle.rebind(loaded, nodes_reordered=nodes_reordered),
                          runtime_probe=self.runtime_probe, inference_budget=self.inference_budget)
        if not nodes_reordered:
            known = vars(self)
            vars(ctx).update((name, known[name]) for name in _NODE_FACTS if name in known)
        return ctx

    @cached_property
    def oracle(self) -> ShapeOracle:
        """The derived facts, gathered on first use: the rules that need none (``Rule.needs_inference``)
        run while a large model's inference is still running in its child."""
        return self._given_oracle or ShapeOracle(self.loaded)

    @property
    def budget_s(self) -> float:
        """Seconds each slow engine (symbolic inference, the runtime probe) may run on this model."""
        return inference_budget(self.inference_budget, self.oracle.bare_seconds)

    @cached_property
    def scopes(self) -> list[GraphScope]:
        return self.loaded.scopes

    @cached_property
    def input_dim_claims(self) -> frozenset[str]:
        """Dim names on the main graph's inputs: a declared output dim of that name claims its size."""
        return input_dim_names(self.model.graph)

    @cached_property
    def named_dims(self) -> frozenset[str]:
        """Dim names the producer wrote on graph inputs: user intent, never anonymous."""
        names: set[str] = set()
        for scope in self.scopes:
            names.update(input_dim_names(scope.graph))
        return frozenset(names)

    def claims_size(self, name: str) -> bool:
        """Whether a declared dim name claims a size: an input dim's name, or an expression of them
        (``past_sequence_length + sequence_length``, ``2*seq``). Any other name is a rename."""
        if name in self.input_dim_claims:
            return True
        expression = parse_dim_expression(name)
        return expression is not None and expression.names <= self.input_dim_claims

    @cached_property
    def undefined_outputs(self) -> frozenset[tuple[str, str]]:
        """(graph path, name) of graph outputs nothing defines: OL104's finding, and no shape to derive."""
        from onnx_lint.engines.checker import checker_verdict  # the checker's one call settles the healthy case

        if checker_verdict(self.loaded) is None:
            return frozenset()
        found: set[tuple[str, str]] = set()
        for scope in self.scopes:
            defined = scope.unresolved_reads()[1]
            found.update((scope.path, v.name) for v in scope.graph.output
                         if v.name not in defined and not defined_outside(scope, v.name))
        return frozenset(found)

    @cached_property
    def holds_half_and_float(self) -> bool:
        """Whether the model holds both half-precision and float tensors (initializers and declarations):
        only then can a node mix them the way FP16 converters with ``keep_io_types`` leave it (OL102)."""
        types: set[int] = set()
        for scope in self.scopes:
            graph = scope.graph
            types.update({t.data_type for t in graph.initializer})  # one read per tensor: 50k small weights
            for values in (graph.input, graph.output, graph.value_info):
                types.update({v.type.tensor_type.elem_type for v in values})
            if onnx.TensorProto.FLOAT in types and not _HALF.isdisjoint(types):
                return True
        return False

    @cached_property
    def batch_names(self) -> frozenset[str]:
        """Named first dims of the main graph's inputs: the dynamic batch, as the producer named it."""
        return batch_names(self.scopes[0])

    @cached_property
    def reshape_targets(self) -> ReshapeTargets:
        """The main graph's Reshape/Expand nodes by the source of their target (constant or computed)."""
        return ReshapeTargets.of(self.scopes[0])

    @cached_property
    def baked_reshapes(self) -> list[BakedReshape]:
        """Main-graph Reshapes whose computed target drops the dynamic batch (see ``baked_batch``)."""
        return baked_reshapes(self.scopes[0], self.reshape_targets, self.oracle, self.batch_names)

    @cached_property
    def batch_fixing_constants(self) -> list[tuple[ConstantTarget, int, str]]:
        """Main-graph Reshapes/Expands whose constant target fixes the dynamic batch (see ``baked_batch``)."""
        if not self.batch_names:
            return []
        return batch_fixing_constants(self.reshape_targets, self.oracle.values(ROOT), self.batch_names)

    @property
    def runs_only_at_batch_one(self) -> bool:
        """Whether a Reshape bakes batch 1 in (a computed or a constant target): then the model runs only at
        batch 1, and a declared 1 where the graph's dim follows the batch is the only size that runs."""
        return bool(self.baked_reshapes) or any(lead == 1 for _, lead, _ in self.batch_fixing_constants)

    @cached_property
    def batch_bound(self) -> set[str]:
        """Main-graph tensors downstream of a baked Reshape: they cannot grow with the batch."""
        baked = self.baked_reshapes
        return downstream_tensors(self.model.graph, [b.index for b in baked]) if baked else set()

    # -- declarations ---------------------------------------------------------------
    @cached_property
    def declarations(self) -> list[Declaration]:
        """Every graph output and value_info entry at every graph level, compared."""
        result: list[Declaration] = []
        dropped = {(d.graph, i) for d in self.duplicate_value_info for i in d.indexes if i != d.keep}
        for scope in self.scopes:
            derived_values = self.oracle.values(scope.path)
            passed = scope.graph.input
            for i, value in enumerate(scope.graph.output):
                decl = self._declaration(scope.path, "output", i, value)
                if decl.derived is None and passed:
                    _hand_on(decl, passed)
                result.append(decl)
            for i, value in enumerate(scope.graph.value_info):
                if dropped and (scope.path, i) in dropped:
                    continue  # a second declaration of one tensor: OL109's, and its fix drops it
                derived = derived_values.get(value.name)
                if derived is not None and derived.type == value.type:
                    continue  # identical to what inference computes: nothing to compare
                result.append(self._declaration(scope.path, "value_info", i, value))
        self._fallback_to_symbolic(result)
        result.extend(state_declarations(self))
        if self.input_conditioned_ifs:
            self.probe()  # both branches of each If an input steers: the static engines see one shape only
        find_conflicts(self, result)
        return result

    @cached_property
    def input_conditioned_ifs(self) -> list[int]:
        """Main-graph If nodes whose condition depends on a graph input (optimum's ``use_cache_branch``): the
        static engines merge their branches into one shape, so only runs on both branches can judge the
        declarations of what they compute."""
        graph = self.model.graph
        if "If" not in self.scopes[0].op_types():
            return []
        initializers = self.scopes[0].initializers()
        reached = {v.name for v in graph.input if v.name not in initializers}
        found: list[int] = []
        for index, node in enumerate(graph.node):  # in order: a valid graph is sorted (OL103 otherwise)
            if any(name in reached for name in node.input if name):
                reached.update(o for o in node.output if o)
                if node.op_type == "If" and node.input and node.input[0] in reached:
                    found.append(index)
        return found

    @cached_property
    def duplicate_value_info(self) -> list[DuplicateDeclarations]:
        """Tensors declared more than once in one graph's value_info, each with the entry to keep: the
        first that matches what the graph computes, else the first."""
        found: list[DuplicateDeclarations] = []
        for scope in self.scopes:
            entries = scope.graph.value_info
            if len({v.name for v in entries}) == len(entries):
                continue  # the common case: one pass over the names
            by_name: dict[str, list[int]] = defaultdict(list)
            for i, value in enumerate(entries):
                by_name[value.name].append(i)
            derived = self.oracle.values(scope.path)
            for name, indexes in by_name.items():
                if len(indexes) < 2:
                    continue
                computed = derived.get(name)
                matching = [i for i in indexes if computed is not None and entries[i].type == computed.type]
                matching = matching or [i for i in indexes if computed is not None
                                        and _agrees(entries[i].type, computed.type)]
                keep = matching[0] if matching else indexes[0]
                identical = all(entries[i].SerializeToString() == entries[indexes[0]].SerializeToString()
                                for i in indexes)
                found.append(DuplicateDeclarations(scope.path, name, tuple(indexes), keep, identical, bool(matching)))
        return found

    def _declaration(self, graph: str, kind: Literal["output", "value_info"], index: int,
                     value: onnx.ValueInfoProto) -> Declaration:
        declared = value_tensor_info(value)
        derived, engine = self.oracle.derived(graph, value.name)
        return Declaration(graph, kind, index, value.name, declared, derived, engine)

    def _fallback_to_symbolic(self, decls: list[Declaration]) -> None:
        """ONNX Runtime's symbolic inference, only where ONNX left a needed rank unknown."""
        needy = [
            d for d in decls
            if d.graph == ROOT and d.underivable
            and (d.kind == "output" or (d.declared is not None and d.declared.dims is not None))
            and (d.kind != "output" or (d.graph, d.name) not in self.undefined_outputs)
        ]
        if needy and any(d.kind == "value_info" for d in needy):
            # An annotation of a tensor nothing defines (OL110's orphan: a quantizer replaced the weight it
            # named) has no shape to derive; no engine runs for it.
            main = self.scopes[0]
            defined = main.producers().keys() | main.initializer_names() | {v.name for v in main.graph.input}
            needy = [d for d in needy if d.kind != "value_info" or d.name in defined]
        if not needy:
            return
        self.oracle.ensure_loop_ranks()  # as cheap as ONNX's inference: first
        for decl in needy:
            decl.set_derived(*self.oracle.derived(decl.graph, decl.name))
        # A shape an input's value sets is ONNX's to derive or nobody's: the engines below lack that value.
        value_set = self.oracle.value_set if any(d.underivable for d in needy) else {}
        needy = [d for d in needy if d.name not in value_set]
        if any(d.underivable for d in needy):
            self.oracle.ensure_symbolic(self.budget_s)
            for decl in needy:
                decl.set_derived(*self.oracle.derived(decl.graph, decl.name))
        self._fallback_to_run([d for d in needy if d.kind == "output" and d.underivable])
        self.unproven = [d for d in needy if d.underivable]

    def _fallback_to_run(self, decls: list[Declaration]) -> None:
        """The third engine: run the model, for graph outputs no static engine could shape."""
        tensors = set(self._tensor_outputs)
        decls = [d for d in decls if d.name in tensors]
        if not decls:
            return
        result = self.probe()
        if result is None:
            return
        for decl in decls:
            fact = result.facts.get(decl.name)
            if fact is not None:
                elem_type = decl.derived.elem_type if decl.derived is not None and decl.derived.elem_type else 0
                decl.set_derived(TensorInfo(elem_type or fact.info.elem_type, fact.info.dims), Engine.ORT_RUN)


    @cached_property
    def _tensor_outputs(self) -> list[str]:
        return [v.name for v in self.model.graph.output if v.type.WhichOneof("value") == "tensor_type"]

    def probe(self) -> ProbeResult | None:
        """The runtime probe's facts for every tensor output of the main graph (run once, on first need: an
        output no static engine shapes, or a number ONNX Runtime's symbolic engine derived that a fix would
        write); ``None`` where it is turned off."""
        if not self.runtime_probe:
            return None
        return self.oracle.ensure_probe(self._tensor_outputs, self.budget_s)

    # -- reconciliation (lint/reconcile.py) ------------------------------------------
    def reconciled_dims(self, decl: Declaration) -> tuple[Dim, ...]:
        """The dims a fix writes for ``decl``: derived rank and concrete dims, proven names kept."""
        return reconcile.reconciled_dims(self, decl)

    def public_dims(self, dims: tuple[Dim, ...] | None) -> tuple[Dim, ...] | None:
        """Dims fit to write into a file: anonymous engine symbols become unknown dims."""
        return reconcile.public_dims(self, dims)

    def proven_public_dims(self, graph: str, name: str, dims: tuple[Dim, ...] | None
                           ) -> tuple[tuple[Dim, ...] | None, tuple[DimProof | None, ...] | None]:
        """``public_dims`` with each number kept only where an engine proved it, and the proofs."""
        return reconcile.proven_public_dims(self, graph, name, dims)

    def proven_declared(self, decl: Declaration, dims: tuple[Dim, ...]
                        ) -> tuple[tuple[Dim, ...], tuple[DimProof | None, ...]]:
        """Declared ``dims`` of ``decl`` with each number kept only where an engine proved it."""
        return reconcile.proven_declared(self, decl, dims)

    def unproven_declared(self, decl: Declaration) -> list[int]:
        """The declared numbers a fix of ``decl`` drops because no engine proved them."""
        return reconcile.unproven_declared(self, decl)

    def reconcile_edit(self, decl: Declaration) -> SetType:
        """The annotation edit that makes ``decl``'s dims agree with the graph."""
        return reconcile.reconcile_edit(self, decl)

    @cached_property
    @timed(TYPE_FILL)
    def filled_types(self) -> dict[tuple[str, str], int]:
        """Schema-based element types over the shape-inferred model (docs/design.md)."""
        from onnx_lint.engines.type_fill import (
            propagate_types,  # cold path: only with untyped tensors
        )

        known = {(ROOT, name): info.elem_type for name, info in self.oracle.symbolic_types().items()
                 if info.elem_type}
        return propagate_types(self.oracle.inferred or self.model, known)

    # -- untyped tensors --------------------------------------------------------------
    @cached_property
    def uninferred_outputs(self) -> dict[str, list[str]]:
        """Per graph: node outputs ONNX inference left no entry for (one cheap pass per graph)."""
        result: dict[str, list[str]] = {}
        for scope in self.scopes:
            values = self.oracle.values(scope.path)
            outputs = scope.scan().outputs
            if self.oracle.inferred_entries(scope.path) >= len(outputs):
                continue  # every node output has an entry (the common, healthy case)
            missing = [out for out in outputs if out and out not in values]
            if missing:
                result[scope.path] = missing
        return result

    def check_integrity(self) -> None:
        """Refuse graphs with a dependency cycle (``ModelLoadError``).

        A cycle always leaves inference without a type somewhere, so only graphs
        with uninferred outputs need the (slower) cycle search.
        """
        suspects = [scope for scope in self.scopes if scope.path in self.uninferred_outputs]
        if suspects:
            check_cycles(suspects, self.display)


    @cached_property
    def untyped_groups(self) -> list[UntypedGroup]:
        """Consumed or output tensors without element type, grouped by root-cause node (lint/untyped.py)."""
        return untyped.untyped_groups(self)

    @cached_property
    def tool_verdicts(self) -> ToolVerdicts:
        """The full checker's and ONNX Runtime's own verdicts on this model (asked once, on first need)."""
        return tool_verdicts(self.loaded, self.runtime_refusal)

    @cached_property
    def runtime_refusal(self) -> str | None:
        """ONNX Runtime's own reason not to create a session for this model, asked in a bounded child once, on
        first need (``None``: it creates one, or cannot be asked)."""
        return runtime_refusal(self.loaded)

    @cached_property
    def covered_failures(self) -> list[tuple[GraphScope, int, str]]:
        """Nodes ONNX's inference fails on while declared types cover what it left untyped (lint/untyped.py)."""
        return untyped.covered_failures(self)

    # -- root causes ------------------------------------------------------------------
    @cached_property
    def _model_facts(self) -> ModelFacts:
        return ModelFacts.of(self.model)

    def node_failure(self, scope: GraphScope, index: int) -> NodeFailure:
        """What ONNX's inference says about one node inferred on its own (lint/untyped.py)."""
        return untyped.node_failure(self, scope, index)


# Facts about the graph's nodes, constants and inputs with the derived values of its stripped copy:
# an annotation fix changes none of them (see ``for_fixed_copy``).
_NODE_FACTS = ("batch_names", "reshape_targets", "baked_reshapes", "batch_fixing_constants", "batch_bound")


def _hand_on(decl: Declaration, graph_inputs) -> None:
    """A graph output named like one of the graph's inputs is that input, handed on untouched (tf2onnx writes
    Loop bodies so): its type is the input's, which no node output lists (and which inference of the stripped
    copy may lose, with the output's type cleared)."""
    for value in graph_inputs:
        if value.name == decl.name:
            info = value_tensor_info(value)
            if info is not None:
                decl.set_derived(info, Engine.ONNX)
            return


def _agrees(declared: onnx.TypeProto, computed: onnx.TypeProto) -> bool:
    """Whether a declared type holds against the computed one: same element type and rank, every
    concrete computed dim declared as it is, and no negative dim."""
    want, got = tensor_info(declared), tensor_info(computed)
    if want is None or got is None or want.dims is None or got.dims is None:
        return False
    if want.elem_type != got.elem_type or len(want.dims) != len(got.dims):
        return False
    return all(not (isinstance(w, int) and (w < 0 or (isinstance(g, int) and w != g)))
               and not (isinstance(g, int) and not isinstance(w, int))
               for w, g in zip(want.dims, got.dims))


__all__ = ["LintContext", "format_dims"]
