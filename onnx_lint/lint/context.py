"""Per-model analysis shared by the rules: declarations against derived facts.

Comparing each declaration once here keeps every rule a thin filter, and lets
the expensive engines (symbolic inference, pinned dims) run at most once per
model and only when some declaration needs them.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from functools import cached_property
from typing import Literal

import onnx

from onnx_lint.base.timings import TYPE_FILL, timed
from onnx_lint.engines.budget import inference_budget
from onnx_lint.engines.engine import Engine
from onnx_lint.engines.node_inference import NO_TYPE, ModelFacts, NodeFailure, explain_untyped, has_elem_type
from onnx_lint.engines.oracle import PIN_SIZES, ShapeOracle
from onnx_lint.engines.strip import INLINE_ELEMENTS
from onnx_lint.lint.baked_batch import BakedReshape, baked_reshapes, downstream_tensors
from onnx_lint.lint.diagnostics import Location
from onnx_lint.model.dim_expressions import parse_dim_expression
from onnx_lint.model.edits import SetType
from onnx_lint.model.graphs import ONNX_DOMAINS, ROOT, GraphScope, defined_outside, resolve_graph, topological_order
from onnx_lint.model.load import LoadedModel
from onnx_lint.model.shapes import Dim, TensorInfo, format_dims, input_dim_names, tensor_info, value_tensor_info
from onnx_lint.model.tensors import constant_node_tensor
from onnx_lint.model.validate import check_cycles

ConflictReason = Literal["concrete", "dynamic", "pinned", "param-reuse", "name"]


@dataclass(frozen=True)
class DimConflict:
    """One declared dim the graph contradicts, and how we know."""

    index: int
    declared: Dim
    derived: Dim
    reason: ConflictReason
    evidence: str = ""


@dataclass
class Declaration:
    """A graph output or value_info entry, with what the graph really computes for it."""

    graph: str
    kind: Literal["output", "value_info"]
    index: int
    name: str
    declared: TensorInfo | None
    derived: TensorInfo | None
    engine: str | None
    conflicts: list[DimConflict] = field(default_factory=list)

    @property
    def location(self) -> Location:
        return Location.at_entry(self.graph, self.kind, self.index, tensor=self.name)

    @property
    def comparable(self) -> bool:
        return (
            self.declared is not None
            and self.declared.dims is not None
            and self.derived is not None
            and self.derived.dims is not None
        )

    @property
    def dims_pair(self) -> tuple[tuple[Dim, ...], tuple[Dim, ...]]:
        """Declared and derived dims of a comparable declaration."""
        assert self.declared is not None and self.declared.dims is not None
        assert self.derived is not None and self.derived.dims is not None
        return self.declared.dims, self.derived.dims

    @property
    def declared_info(self) -> TensorInfo:
        """The declared type, for a declaration a check (``comparable``, a mismatch) proved declared."""
        if self.declared is None:
            raise ValueError(f"{self.kind} '{self.name}' declares no type")
        return self.declared

    @property
    def derived_info(self) -> TensorInfo:
        """The derived type, for a declaration a check (``comparable``, a mismatch) proved derived."""
        if self.derived is None:
            raise ValueError(f"no engine derives a type for {self.kind} '{self.name}'")
        return self.derived

    @property
    def rank_mismatch(self) -> bool:
        return self.comparable and self.declared_info.rank != self.derived_info.rank

    @property
    def shape_stale(self) -> bool:
        return self.rank_mismatch or bool(self.conflicts)

    @property
    def type_mismatch(self) -> bool:
        return (
            self.declared is not None
            and self.derived is not None
            and bool(self.declared.elem_type)
            and bool(self.derived.elem_type)
            and self.declared.elem_type != self.derived.elem_type
        )

    @property
    def underivable(self) -> bool:
        return self.derived is None or self.derived.dims is None


@dataclass(frozen=True)
class DuplicateDeclarations:
    """One tensor declared several times in one graph's value_info, and which entry is worth keeping."""

    graph: str
    name: str
    indexes: tuple[int, ...]
    keep: int
    identical: bool
    matches: bool  # the kept entry is what the graph computes

    @property
    def ordinal(self) -> int:
        """The kept entry's place among the tensor's entries (0: the first)."""
        return self.indexes.index(self.keep)


@dataclass
class UntypedGroup:
    """Tensors left without element type, traced back to the node where inference stopped."""

    graph: str
    node_index: int | None
    node: onnx.NodeProto | None
    tensors: list[str]
    message: str


class LintContext:
    """Everything rules may ask about one model; each fact is computed once, on demand."""

    def __init__(self, loaded: LoadedModel, file: str, oracle: ShapeOracle | None = None, *,
                 runtime_probe: bool = True, inference_budget: float | None = None) -> None:
        self.loaded = loaded
        self.model = loaded.model
        self.file = file
        self.oracle = oracle or ShapeOracle(loaded)
        self.runtime_probe = runtime_probe
        self.inference_budget = inference_budget  # seconds, or None for the budget the model's size sets
        # Declarations a slower engine was asked to derive and did not (filled by ``declarations``).
        self.unproven: list[Declaration] = []

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
    def baked_reshapes(self) -> list[BakedReshape]:
        """Main-graph Reshapes whose computed target drops the dynamic batch (see ``baked_batch``)."""
        return baked_reshapes(self.scopes[0], self.oracle, self.model)

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
            for i, value in enumerate(scope.graph.output):
                result.append(self._declaration(scope.path, "output", i, value))
            for i, value in enumerate(scope.graph.value_info):
                if dropped and (scope.path, i) in dropped:
                    continue  # a second declaration of one tensor: OL109's, and its fix drops it
                derived = derived_values.get(value.name)
                if derived is not None and derived.type == value.type:
                    continue  # identical to what inference computes: nothing to compare
                result.append(self._declaration(scope.path, "value_info", i, value))
        self._fallback_to_symbolic(result)
        self._find_conflicts(result)
        return result

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
        if not needy:
            return
        self.oracle.ensure_loop_ranks()  # as cheap as ONNX's inference: first
        for decl in needy:
            decl.derived, decl.engine = self.oracle.derived(decl.graph, decl.name)
        if any(d.underivable for d in needy):
            self.oracle.ensure_symbolic(self.budget_s)
            for decl in needy:
                decl.derived, decl.engine = self.oracle.derived(decl.graph, decl.name)
        self._fallback_to_run([d for d in needy if d.kind == "output" and d.underivable])
        self.unproven = [d for d in needy if d.underivable]

    def _fallback_to_run(self, decls: list[Declaration]) -> None:
        """The third engine: run the model, for graph outputs no static engine could shape."""
        tensors = {v.name for v in self.model.graph.output if v.type.WhichOneof("value") == "tensor_type"}
        decls = [d for d in decls if d.name in tensors]
        if not decls or not self.runtime_probe:
            return
        result = self.oracle.ensure_probe([d.name for d in decls], self.budget_s)
        for decl in decls:
            fact = result.facts.get(decl.name)
            if fact is not None:
                elem_type = decl.derived.elem_type if decl.derived is not None and decl.derived.elem_type else 0
                decl.derived = TensorInfo(elem_type or fact.info.elem_type, fact.info.dims)
                decl.engine = Engine.ORT_RUN

    def _find_conflicts(self, decls: list[Declaration]) -> None:
        pending: list[tuple[Declaration, int]] = []
        claims: list[tuple[Declaration, int]] = []
        for decl in decls:
            if not decl.comparable or decl.rank_mismatch:
                continue
            for i, (want, got) in enumerate(zip(*decl.dims_pair)):
                run = self._run_evidence(decl, i)
                if isinstance(want, str):
                    if run is not None and want in self.input_dim_claims and run[0] != want:
                        a, b = run[1]
                        decl.conflicts.append(DimConflict(
                            i, want, got, "name",
                            f"declared '{want}' but {_run_clause(run[0], a, b, run[2])}"))
                    elif (run is None and decl.kind == "output" and decl.graph == ROOT
                            and self.claims_size(want) and got != want):
                        claims.append((decl, i))  # not confirmed by plain inference: prove or refute
                    continue
                if (isinstance(want, int) and want >= 0 and run is not None
                        and (run[0] is not None or run[1][0] != run[1][1] or run[2])):
                    a, b = run[1]
                    decl.conflicts.append(DimConflict(i, want, got, "dynamic", _run_clause(run[0], a, b, run[2])))
                    continue
                if not isinstance(want, int) or want < 0:
                    continue  # negative dims are OL101's business, not a conflict
                if isinstance(got, int):
                    if got != want:
                        decl.conflicts.append(DimConflict(i, want, got, "concrete"))
                elif isinstance(got, str) and got in self.named_dims:
                    if self._baked_one(decl, want):
                        continue
                    decl.conflicts.append(
                        DimConflict(i, want, got, "dynamic", f"it follows the dynamic input dim '{got}'"))
                elif decl.kind == "output":
                    # Only outputs get the pinned-dims proof (OL002); for value_info, docs/design.md's
                    # "stale" is a rank or concrete-dim contradiction, and pinning costs two
                    # whole-graph inferences.
                    pending.append((decl, i))
        self._check_pinned(pending)
        self._check_claims(claims)
        self._check_param_reuse(decls)

    def _run_evidence(self, decl: Declaration, index: int) -> tuple[str | None, tuple[int, int], bool] | None:
        """For a dim the model run derived: the input dim it follows (or None), its sizes in runs A and B,
        and whether it changed with the data alone."""
        if decl.engine != Engine.ORT_RUN or self.oracle.probe_result is None:
            return None
        fact = self.oracle.probe_result.facts.get(decl.name)
        if fact is None or len(fact.sizes) <= index:
            return None
        if len(fact.branch_dependent) > index and fact.branch_dependent[index]:
            return None  # no single size is true of both branches: OL007 says so instead
        varies = fact.data_dependent[index] if len(fact.data_dependent) > index else False
        return fact.follows[index], fact.sizes[index], varies

    def _check_claims(self, claims: list[tuple[Declaration, int]]) -> None:
        """docs/design.md, "Symbolic names are claims too": a declared input dim name must have its size.

        One inference with each dynamic input dim pinned to its own prime serves every claim;
        a claim is refuted only where that run derives a concrete value other than the pin.
        """
        if not claims:
            return
        sizes, values = self.oracle.named_pins()
        by_size = {size: name for name, size in sizes.items()}
        for decl, i in claims:
            want = str(decl.dims_pair[0][i])  # a claim is always a declared name
            value = values.get(decl.name)
            info = value_tensor_info(value)
            if info is None or info.dims is None or len(info.dims) != decl.declared.rank:  # type: ignore[union-attr]
                continue
            got, expected = info.dims[i], claimed_size(want, sizes)
            if not isinstance(got, int) or expected is None or got == expected:
                continue
            other = by_size.get(got)
            which = f" (the size of input dim '{other}')" if other else ""
            decl.conflicts.append(DimConflict(
                i, want, decl.dims_pair[1][i], "name",
                f"declared '{want}' (= {expected} when {_pins_clause(want, sizes)}) but the graph computes "
                f"{got}{which}"))
            decl.engine = Engine.ONNX_NAMES_PINNED

    def _check_pinned(self, pending: list[tuple[Declaration, int]]) -> None:
        """Declared concrete vs anonymous derived: infer twice with dynamic dims pinned."""
        if not pending or not self._has_dynamic_inputs():
            return
        for decl, i in pending:
            if self._baked_one(decl, decl.dims_pair[0][i]):
                continue
            runs = self.oracle.pinned_dims(decl.graph, decl.name)
            got = [r.dims[i] if r is not None and r.dims is not None and len(r.dims) > i else None for r in runs]
            if all(isinstance(g, int) for g in got) and len(set(got)) > 1:
                pins = ", ".join(f"{g} when they are {p}" for g, p in zip(got, PIN_SIZES))
                decl.conflicts.append(DimConflict(
                    i, decl.dims_pair[0][i], decl.dims_pair[1][i], "pinned",
                    f"it changes with the dynamic input dims ({pins})"))
                decl.engine = Engine.ONNX_PINNED

    def _baked_one(self, decl: Declaration, want: Dim) -> bool:
        """A declared 1 downstream of a Reshape that bakes batch 1 in: the only size that runs.

        Such a Reshape fails at every other batch, so a dim that seems to follow the inputs
        (by name, or when every input dim is pinned to one size) is 1 in every run that succeeds.
        """
        return want == 1 and decl.graph == ROOT and decl.name in self.batch_bound

    def _has_dynamic_inputs(self) -> bool:
        for value in self.model.graph.input:
            info = tensor_info(value.type)
            if info and info.dims and any(not isinstance(d, int) or d < 0 for d in info.dims):
                return True
        return False

    def _check_param_reuse(self, decls: list[Declaration]) -> None:
        """One dim_param name declared for dims the graph proves different."""
        uses: dict[tuple[str, str], list[tuple[Declaration, int, int]]] = defaultdict(list)
        for decl in decls:
            if not decl.comparable or decl.rank_mismatch:
                continue
            for i, (want, got) in enumerate(zip(*decl.dims_pair)):
                if isinstance(want, str) and isinstance(got, int):
                    uses[(decl.graph, want)].append((decl, i, got))
        for (_graph, name), entries in uses.items():
            values = sorted({got for _, _, got in entries})
            if len(values) < 2:
                continue
            for decl, i, got in entries:
                decl.conflicts.append(DimConflict(
                    i, name, got, "param-reuse",
                    f"dim_param '{name}' is used for dims the graph computes as {', '.join(map(str, values))}"))
        self._check_shared_names(decls)

    def _check_shared_names(self, decls: list[Declaration]) -> None:
        """A name no input carries, declared on several main-graph outputs, claims they are equal.

        Plain inference often leaves such dims anonymous (``unk__3`` and ``unk__7``); the pinned
        run (the one the input-name claims use) shows whether they really are equal.
        """
        shared: dict[str, list[tuple[Declaration, int]]] = defaultdict(list)
        for decl in decls:
            if decl.kind != "output" or decl.graph != ROOT or not decl.comparable or decl.rank_mismatch:
                continue
            if decl.conflicts or decl.engine == Engine.ORT_RUN:
                continue
            for i, (want, got) in enumerate(zip(*decl.dims_pair)):
                if isinstance(want, str) and not self.claims_size(want) and not isinstance(got, int):
                    shared[want].append((decl, i))
        for name, entries in shared.items():
            derived = {decl.dims_pair[1][i] for decl, i in entries}
            if len({decl.name for decl, _ in entries}) < 2 or (len(derived) == 1 and None not in derived):
                continue  # one output, or one symbol plain inference already derived for all of them
            _sizes, values = self.oracle.named_pins()
            pinned: list[int | None] = []
            for decl, i in entries:
                value = values.get(decl.name)
                info = value_tensor_info(value)
                dim = info.dims[i] if info is not None and info.dims is not None and len(info.dims) > i else None
                pinned.append(dim if isinstance(dim, int) else None)
            if None in pinned or len(set(pinned)) < 2:
                continue
            shown = ", ".join(f"{size} for '{decl.name}'" for (decl, _), size in zip(entries, pinned))
            for decl, i in entries:
                decl.conflicts.append(DimConflict(
                    i, name, decl.dims_pair[1][i], "param-reuse",
                    f"dim_param '{name}' is used for dims the graph computes as {shown}, with the dynamic "
                    f"input dims pinned"))
                decl.engine = Engine.ONNX_NAMES_PINNED

    def reconciled_dims(self, decl: Declaration) -> tuple[Dim, ...]:
        """Reconcile (docs/design.md): derived rank and concrete dims; declared names kept where derived is symbolic."""
        assert decl.derived is not None and decl.derived.dims is not None
        derived = decl.derived.dims
        declared = decl.declared.dims if decl.declared is not None else None
        conflicted = {c.index for c in decl.conflicts}
        out: list[Dim] = []
        for i, got in enumerate(derived):
            if isinstance(got, int):
                out.append(got)
                continue
            want = declared[i] if declared is not None and len(declared) == len(derived) else None
            keep = isinstance(want, str) or isinstance(want, int) and want >= 0
            if keep and i not in conflicted:
                out.append(want)
            else:
                named = self._proven_name(decl, i, got)
                if isinstance(want, str) and (named is None or named == want):
                    named = self._fresh_name(decl, i)  # a refuted name where the graph's dim is anonymous
                out.append(named)
        return tuple(out)

    def _proven_name(self, decl: Declaration, index: int, got: Dim) -> str | None:
        """The producer's dim name for a derived symbolic dim: its own, or one two pinned runs prove."""
        if isinstance(got, str) and got in self.named_dims:
            return got
        if decl.graph == ROOT and self.input_dim_claims:
            return self.oracle.pinned_input_dim(decl.name, index) or self.oracle.pinned_affine(decl.name, index)
        return None

    def _fresh_name(self, decl: Declaration, index: int) -> str:
        """A dim name that claims nothing: for a refuted name where the graph's dim is anonymous."""
        base = f"{decl.name}_dim{index}"
        name, n = base, 1
        while name in self.named_dims:
            n += 1
            name = f"{base}_{n}"
        return name

    def public_dims(self, dims: tuple[Dim, ...] | None) -> tuple[Dim, ...] | None:
        """Dims fit to write into a file: anonymous engine symbols become unknown dims."""
        if dims is None:
            return None
        return tuple(d if (isinstance(d, int) and d >= 0) or d in self.named_dims else None for d in dims)

    def reconcile_edit(self, decl: Declaration) -> SetType:
        """The annotation edit that makes ``decl``'s dims agree with the graph."""
        return SetType(decl.graph, decl.kind, decl.name, dims=self.reconciled_dims(decl))

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
            check_cycles(suspects, self.file)

    @cached_property
    def untyped_groups(self) -> list[UntypedGroup]:
        """Consumed or output tensors without element type, grouped by root-cause node."""
        groups: list[UntypedGroup] = []
        unexplained: dict[tuple[str, int], tuple[UntypedGroup, str]] = {}
        for scope in self.scopes:
            for group, otherwise in self._untyped_in(scope):
                groups.append(group)
                if group.node_index is not None and not group.message:
                    unexplained[(group.graph, group.node_index)] = (group, otherwise)
        if unexplained:  # the node failed on values data propagation computed upstream: ask strict inference
            strict = self.oracle.strict_messages(list(unexplained))
            for key, (group, otherwise) in unexplained.items():
                group.message = strict.get(key, otherwise)
        return groups

    @cached_property
    def covered_failures(self) -> list[tuple[GraphScope, int, str]]:
        """Nodes where ONNX's inference fails with an error of its own (``Axis has less than the requested
        k elements``) while declared value_info types cover the tensors it left untyped: OL003 then has
        nothing to report (the types are declared, or a fix filled them), yet the full checker and ONNX
        Runtime still refuse the node. Custom operators without a schema are not failures."""
        reported = {(g.graph, g.node_index) for g in self.untyped_groups}
        found: list[tuple[GraphScope, int, str]] = []
        for scope in self.scopes:
            if scope.path not in self.uninferred_outputs:
                continue
            values = self.oracle.values(scope.path)
            untyped = {out for node in scope.graph.node for out in node.output
                       if out and (values.get(out) is None or not has_elem_type(values[out].type))}
            for index, node in enumerate(scope.graph.node):
                if (scope.path, index) in reported or not any(o in untyped for o in node.output):
                    continue
                if any(name in untyped for name in node.input):
                    continue  # downstream of another failure: that node is the root
                message = self.node_failure(scope, index).message
                if message and "schema" not in message and "custom operator" not in message:
                    found.append((scope, index, message))
        return found

    def _typed(self, scope: GraphScope, name: str, annotated: bool = False) -> bool:
        for current in scope.outward():
            table = (self.oracle.annotated_values(current.path) if annotated
                     else self.oracle.values(current.path))
            value = table.get(name)
            if value is not None:
                return has_elem_type(value.type)
            if isinstance(current.initializers().get(name), onnx.TensorProto):  # a dense initializer
                return True
        return False

    def _untyped_in(self, scope: GraphScope) -> list[tuple[UntypedGroup, str]]:
        """The untyped tensors of one graph by root-cause node, each with what to say should strict inference
        have nothing for a node that inferred alone without error."""
        graph = scope.graph
        values = self.oracle.values(scope.path)
        outputs_typed = all(v.name in values and has_elem_type(values[v.name].type) for v in graph.output)
        if scope.path not in self.uninferred_outputs and outputs_typed:
            return []
        produced = scope.producers()
        needed: list[str] = []
        seen: set[str] = set()
        candidates = [i for node in graph.node for i in node.input if i and i in produced]
        candidates += [v.name for v in graph.output]
        for name in candidates:
            if name in seen:
                continue
            seen.add(name)
            value = values.get(name)
            if value is None or not has_elem_type(value.type):
                needed.append(name)
        if not needed:
            return []
        untyped = [n for n in needed if not self._typed(scope, n, annotated=True)]
        if not untyped:
            return []
        # Walk producers in node order: a node whose untyped inputs have roots inherits them.
        roots_of: dict[str, set[int]] = {}
        untyped_all = {
            out for node in graph.node for out in node.output
            if out and (values.get(out) is None or not has_elem_type(values[out].type))
        }
        for index in topological_order(graph):
            node = graph.node[index]
            outs = [o for o in node.output if o in untyped_all]
            if not outs:
                continue
            inherited: set[int] = set()
            for name in node.input:
                inherited |= roots_of.get(name, set())
            for out in outs:
                roots_of[out] = inherited or {index}
        grouped: dict[int | None, list[str]] = defaultdict(list)
        for name in untyped:
            roots: list[int | None] = list(sorted(roots_of.get(name, set()))) or [None]
            for root in roots:
                grouped[root].append(name)
        result = []
        for at, tensors in grouped.items():
            node, message, otherwise = None, "no node produces it", NO_TYPE
            if at is not None:  # the engine's own words for the root-cause node, from inferring it alone
                node, failure = graph.node[at], self.node_failure(scope, at)
                message = failure.message or ""
                if failure.message is None:
                    otherwise = failure.otherwise
            result.append((UntypedGroup(scope.path, at, node, list(dict.fromkeys(tensors)), message), otherwise))
        return result

    # -- root causes ------------------------------------------------------------------
    @cached_property
    def _model_facts(self) -> ModelFacts:
        return ModelFacts.of(self.model)

    def node_failure(self, scope: GraphScope, index: int) -> NodeFailure:
        """What ONNX's inference says about node ``index`` of ``scope`` inferred on its own, with what the
        whole-model run knew around it, and the node as that run saw it (subgraphs stripped too)."""
        seen = self.oracle.inferred
        node = resolve_graph(seen, scope.path).node[index] if seen is not None else scope.graph.node[index]
        return explain_untyped(node, self._model_facts, lambda name: self._type_in(scope, name),
                               lambda name: self._data_in(scope, name))

    def _type_in(self, scope: GraphScope, name: str) -> onnx.TypeProto | None:
        """What ONNX's inference knew of ``name``'s type where ``scope`` reads it (enclosing graphs too)."""
        for current in scope.outward():
            value = self.oracle.values(current.path).get(name)
            if value is not None:
                return value.type if has_elem_type(value.type) else None
            tensor = current.initializers().get(name)
            if isinstance(tensor, onnx.SparseTensorProto):
                return onnx.helper.make_sparse_tensor_type_proto(tensor.values.data_type, list(tensor.dims))
            if tensor is not None:
                return onnx.helper.make_tensor_type_proto(tensor.data_type, list(tensor.dims))
        return None

    def _data_in(self, scope: GraphScope, name: str) -> onnx.TensorProto | None:
        """The constant value whole-model inference had for ``name``: a small in-memory initializer or the
        output of a ``Constant`` node of the same graph (the stripped copy it ran on holds no other weight
        bytes, and onnx does not pass an enclosing graph's values into a subgraph)."""
        tensor = scope.initializers().get(name)
        if tensor is not None:  # the stripped copy turned larger ones into graph inputs; sparse ones are not read
            small = isinstance(tensor, onnx.TensorProto) and math.prod(tensor.dims) <= INLINE_ELEMENTS
            tensor = tensor if small else None
        else:
            producer = scope.producers().get(name)
            node = scope.graph.node[producer] if producer is not None else None
            is_constant = node is not None and node.op_type == "Constant" and node.domain in ONNX_DOMAINS
            tensor = constant_node_tensor(node) if node is not None and is_constant else None
        if tensor is None or tensor.data_location == onnx.TensorProto.EXTERNAL:
            return None  # external bytes are not loaded
        return tensor


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


def claimed_size(name: str, sizes: dict[str, int]) -> int | None:
    """The size a declared dim name claims under pinned input dims: an input dim's own pin, or what the
    expression evaluates to."""
    if name in sizes:
        return sizes[name]
    expression = parse_dim_expression(name)
    return expression.evaluate(sizes) if expression is not None else None


def _pins_clause(name: str, sizes: dict[str, int]) -> str:
    """The pins a claimed size was computed from: ``'seq' is 41``, ``'past' is 41 and 'seq' is 43``."""
    expression = parse_dim_expression(name)
    names = sorted(expression.names) if expression is not None and expression.names <= sizes.keys() else [name]
    return " and ".join(f"'{n}' is {sizes[n]}" for n in names if n in sizes)


def _run_clause(follows: str | None, a: int, b: int, data_dependent: bool = False) -> str:
    """What the ONNX Runtime runs showed about one dim."""
    if data_dependent:
        return (f"it depends on the input data, not only on the input dims: ONNX Runtime returns {a} and "
                f"{b} in two runs and another value with other data at the same sizes")
    if follows is None:
        return f"ONNX Runtime returns {a} and {b} in two runs" if a != b else f"ONNX Runtime returns {a}"
    shown = follows if follows.startswith("input '") else f"input dim '{follows}'"
    return f"it follows {shown}: ONNX Runtime returns {a} and {b} in two runs with it at {a} and {b}"



__all__ = ["Declaration", "DimConflict", "LintContext", "UntypedGroup", "format_dims"]
