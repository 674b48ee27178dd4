"""Annotation edits: the only changes a fix may make to a model.

Each edit targets a declaration by graph path and tensor name, and touches only
``graph.output`` / ``graph.value_info`` types, never node contents, attributes or
initializers (docs/design.md). The one edit that touches nodes, ``SortNodes``, changes
only their order (a graph out of topological order computes the same once
sorted). Edits are plain data so that the language server can hand them to a
client and back.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:  # edits are also rebuilt from the cache, where onnx is not imported at all
    import onnx

    from onnx_lint.model.shapes import Dim

Kind = Literal["input", "output", "value_info"]


@dataclass(frozen=True)
class DimProof:
    """Why one number a fix writes holds: the engine that derived it and the sizes it held at.

    The fix planner refuses an edit that writes a number without one (docs/design.md, "The proof
    obligation of a fix"): a number no engine proved is never written, not even one the file
    already declared.
    """

    engine: str
    sizes: str  # "every size" for a symbolic derivation, else the input sizes of the runs that agreed


@dataclass(frozen=True)
class SetType:
    """Set the element type and/or the dims of an existing input, output or value_info entry.

    ``proofs`` holds one ``DimProof`` (or ``None``) per dim of ``dims``: every number written into an
    output or value_info entry needs one (``unproven_numbers``).
    """

    graph: str
    kind: Kind
    tensor: str
    elem_type: int | None = None
    dims: tuple[Dim, ...] | None = None
    proofs: tuple[DimProof | None, ...] | None = None

    def apply(self, model: onnx.ModelProto) -> None:
        value = _find(_graph(model, self.graph), self.kind, self.tensor)
        _set_tensor_type(value, self.elem_type, self.dims)


@dataclass(frozen=True)
class AddValueInfo:
    """Declare the type (and, where known, the dims) of an undeclared tensor; ``proofs`` as for ``SetType``."""

    graph: str
    tensor: str
    elem_type: int
    dims: tuple[Dim, ...] | None = None
    proofs: tuple[DimProof | None, ...] | None = None

    def apply(self, model: onnx.ModelProto) -> None:
        graph = _graph(model, self.graph)
        existing = [v for v in graph.value_info if v.name == self.tensor]
        value = existing[0] if existing else graph.value_info.add(name=self.tensor)
        _set_tensor_type(value, self.elem_type, self.dims)


@dataclass(frozen=True)
class RemoveValueInfo:
    """Drop a stale value_info entry where nothing can be derived to correct it."""

    graph: str
    tensor: str

    def apply(self, model: onnx.ModelProto) -> None:
        graph = _graph(model, self.graph)
        keep = [v for v in graph.value_info if v.name != self.tensor]
        if len(keep) != len(graph.value_info):
            del graph.value_info[:]
            graph.value_info.extend(keep)


@dataclass(frozen=True)
class DropDuplicateValueInfo:
    """Keep one of a tensor's several value_info entries (the ``keep``-th, counting from 0), drop the rest."""

    graph: str
    tensor: str
    keep: int = 0

    def apply(self, model: onnx.ModelProto) -> None:
        graph = _graph(model, self.graph)
        seen = -1
        keep = []
        for value in graph.value_info:
            if value.name == self.tensor:
                seen += 1
                if seen != self.keep:
                    continue
            keep.append(value)
        if len(keep) != len(graph.value_info):
            _replace_all(graph.value_info, keep)


def _replace_all(field, items: list) -> None:
    """Make a repeated message field hold ``items`` (its own elements, kept or reordered): they are copied
    first, because clearing the field invalidates the references that ``items`` holds."""
    copies = [type(item)() for item in items]
    for copy, item in zip(copies, items):
        copy.CopyFrom(item)
    del field[:]
    field.extend(copies)


@dataclass(frozen=True)
class SortNodes:
    """Put a graph's nodes in topological order; every node's content stays byte-identical."""

    graph: str

    def apply(self, model: onnx.ModelProto) -> None:
        from onnx_lint.model.graphs import topological_order

        graph = _graph(model, self.graph)
        order = topological_order(graph)
        if len(order) != len(graph.node):
            raise KeyError(f"{self.graph} has a dependency cycle: no order exists")
        if order == list(range(len(graph.node))):
            return
        _replace_all(graph.node, [graph.node[i] for i in order])


@dataclass(frozen=True)
class SetIrVersion:
    """Raise the model's IR version where the higher version only relaxes a rule the model breaks.

    IR 4 differs from IR 3 only in letting initializers be absent from the graph inputs.
    """

    version: int

    def apply(self, model: onnx.ModelProto) -> None:
        model.ir_version = max(model.ir_version, self.version)


Edit = SetType | AddValueInfo | RemoveValueInfo | DropDuplicateValueInfo | SortNodes | SetIrVersion
_KINDS: dict[str, type] = {"set_type": SetType, "add_value_info": AddValueInfo, "remove_value_info": RemoveValueInfo,
                           "drop_duplicate_value_info": DropDuplicateValueInfo, "sort_nodes": SortNodes,
                           "set_ir_version": SetIrVersion}


def unproven_numbers(edit: Edit) -> list[int]:
    """The dims of ``edit`` that write a number without a proof (the fix planner refuses such an edit).

    A graph input's dims are the model's contract with its caller, not a derived fact: an edit of
    an input (OL101 making a negative dim dynamic) keeps the other numbers as the caller declared them.
    """
    if not isinstance(edit, SetType | AddValueInfo) or edit.dims is None:
        return []
    if isinstance(edit, SetType) and edit.kind == "input":
        return []
    proofs = edit.proofs or ()
    return [i for i, dim in enumerate(edit.dims)
            if isinstance(dim, int) and dim >= 0 and (i >= len(proofs) or proofs[i] is None)]


def target_of(edit: Edit) -> tuple[str, str]:
    """(graph path, tensor) an edit changes; whole-graph and whole-model edits have no tensor."""
    return getattr(edit, "graph", "model"), getattr(edit, "tensor", "")


@dataclass(frozen=True)
class CombinedEdits:
    """The edits of several fixes, merged so that they compose, and the fixes that must wait.

    ``deferred`` holds the indexes of fixes with an edit that disagrees with an earlier fix on
    the same field of the same tensor (a dim, the element type, the entry's existence, the IR
    version): like ruff's overlapping fixes, such a fix waits for the next round, where the
    re-lint says whether it is still needed.
    """

    edits: list[Edit]
    deferred: list[int]


def combine_fixes(fixes: Sequence[Sequence[Edit]], model: onnx.ModelProto) -> CombinedEdits:
    """Merge the edits of ``fixes`` (in order) into one dims edit per declaration, deferring conflicts.

    OL002 and OL101 can both rewrite the dims of one output; applied one after the other, the
    second would write back the dims the first changed. Each edit claims only the fields it
    *changes*: two fixes that change different dims compose into one edit; two that set one
    dim to different values conflict, and the later fix is deferred whole (a fix is applied
    entirely or not at all). Linear in the edits: a 100k-node model can have 100k of them.
    """
    declarations = _Declarations(model)
    claims: dict[tuple, object] = {}
    reshaped: set[tuple] = set()  # declarations whose rank (whole dims) a fix claimed
    dims_changed: set[tuple] = set()  # declarations with a dim a fix claimed
    accepted: list[Edit] = []
    deferred: list[int] = []
    for index, edits in enumerate(fixes):
        wanted: dict[tuple, object] = {}
        for edit in edits:
            wanted.update(_changes(edit, declarations, model))
        if any(_disagrees(field, value, claims, reshaped, dims_changed) for field, value in wanted.items()):
            deferred.append(index)
            continue
        claims.update(wanted)
        for field in wanted:
            if field[-1] == "dims":
                reshaped.add(field[:3])
            elif len(field) == 5:
                dims_changed.add(field[:3])
        accepted.extend(edits)
    return CombinedEdits(_merge_dims(accepted, declarations), deferred)


def apply_edits(edits: Sequence[Edit], model: onnx.ModelProto) -> None:
    """Apply ``edits`` in order; ``MissingTarget`` names the first edit that has no target.

    Declarations are looked up through one index per graph, not a scan per edit: a model with
    20k stale value_info entries has 20k edits.
    """
    declarations = _Declarations(model)
    for edit in edits:
        try:
            if isinstance(edit, SetType):
                _set_tensor_type(declarations.find(edit.graph, edit.kind, edit.tensor), edit.elem_type, edit.dims)
            else:
                edit.apply(model)
                if isinstance(edit, AddValueInfo | RemoveValueInfo | DropDuplicateValueInfo):  # entries added, dropped
                    declarations.forget(edit.graph, "value_info")
                elif isinstance(edit, SortNodes):  # new node copies: their subgraphs' declarations are new too
                    declarations.forget_all()
        except KeyError as exc:
            raise MissingTarget(edit, str(exc.args[0]) if exc.args else "not found") from None


class MissingTarget(KeyError):
    """An edit whose declaration or graph the model does not have (a fix built for another model)."""

    def __init__(self, edit: Edit, problem: str) -> None:
        super().__init__(problem)
        self.edit, self.problem = edit, problem


class _Declarations:
    """The model's declarations by (graph, kind, tensor), indexed once per graph and kind on first use."""

    def __init__(self, model: onnx.ModelProto) -> None:
        self._model = model
        self._index: dict[tuple[str, str], dict[str, onnx.ValueInfoProto]] = {}

    def find(self, graph: str, kind: str, tensor: str) -> onnx.ValueInfoProto:
        """The first declaration of ``tensor`` (as ``_find``); ``KeyError`` if there is none."""
        table = self._index.get((graph, kind))
        if table is None:
            values = getattr(_graph(self._model, graph), kind)
            table = self._index[(graph, kind)] = {v.name: v for v in reversed(values)}  # the first wins
        if tensor not in table:
            raise KeyError(f"{kind} '{tensor}' not found")
        return table[tensor]

    def forget(self, graph: str, kind: str) -> None:
        """Drop the index of one kind of declaration in one graph, whose entries an edit added or removed."""
        self._index.pop((graph, kind), None)

    def forget_all(self) -> None:
        self._index.clear()

    def dims(self, graph: str, kind: str, tensor: str) -> tuple[Dim, ...] | None:
        """The declared dims (``None``: no shape); ``KeyError`` if there is no such declaration."""
        from onnx_lint.model.shapes import dim_of

        declared = self.find(graph, kind, tensor).type.tensor_type
        return tuple(dim_of(d) for d in declared.shape.dim) if declared.HasField("shape") else None


def _disagrees(field: tuple, value: object, claims: dict[tuple, object], reshaped: set[tuple],
               dims_changed: set[tuple]) -> bool:
    """Whether an earlier fix changed ``field`` otherwise; a new rank and any dim of one declaration conflict."""
    if field in claims:
        return claims[field] != value
    if field[-1] == "dims":
        return field[:3] in dims_changed
    if len(field) == 5:
        return field[:3] in reshaped
    return False


def _changes(edit: Edit, declarations: _Declarations, model: onnx.ModelProto) -> dict[tuple, object]:
    """The fields an edit changes, each with the value it writes (what conflict detection compares).

    Fields: ``(graph, kind, tensor, "dim", i)`` for one dim, ``(graph, kind, tensor, "dims")`` for a
    new rank, ``elem_type``, and ``exists`` (removing a value_info entry conflicts with any other
    edit of it); whole-graph and whole-model edits have one field each.
    """
    if isinstance(edit, SetType):
        where = (edit.graph, edit.kind, edit.tensor)
        changes: dict[tuple, object] = {(*where, "exists"): True}
        if edit.elem_type is not None:
            changes[where + ("elem_type",)] = edit.elem_type
        if edit.dims is not None:
            try:
                current = declarations.dims(*where)
            except KeyError:  # applying the edit says so, naming the fix
                current = None
            if current is None or len(current) != len(edit.dims):
                changes[where + ("dims",)] = edit.dims
            else:
                changes.update(((*where, "dim", i), new)
                               for i, (new, was) in enumerate(zip(edit.dims, current)) if new != was)
        return changes
    if isinstance(edit, AddValueInfo):
        where = (edit.graph, "value_info", edit.tensor)
        return {(*where, "exists"): True, (*where, "elem_type"): edit.elem_type, (*where, "dims"): edit.dims}
    if isinstance(edit, RemoveValueInfo):
        return {(edit.graph, "value_info", edit.tensor, "exists"): False}
    if isinstance(edit, DropDuplicateValueInfo):
        return {(edit.graph, "value_info", edit.tensor, "duplicates"): edit.keep}
    if isinstance(edit, SortNodes):
        return {(edit.graph, "node order"): "sorted"}
    return {("model", "ir_version"): max(model.ir_version, edit.version)}


def _merge_dims(edits: list[Edit], declarations: _Declarations) -> list[Edit]:
    """One dims edit per declaration: the current dims with every accepted change written in.

    Conflicts are ruled out before, so the changes of different fixes touch different dims
    (or agree), and a rank change comes from one fix alone.
    """
    groups: dict[tuple[str, str, str], list[SetType]] = {}
    for edit in edits:
        if isinstance(edit, SetType) and edit.dims is not None:
            groups.setdefault((edit.graph, edit.kind, edit.tensor), []).append(edit)
    result: list[Edit] = []
    done: set[tuple[str, str, str]] = set()
    for edit in edits:
        if not isinstance(edit, SetType):
            result.append(edit)
            continue
        key = (edit.graph, edit.kind, edit.tensor)
        group = groups.get(key)
        if group is None or len({e.dims for e in group}) == 1:
            result.append(edit)
            continue
        if key in done:
            continue
        done.add(key)
        current = declarations.dims(*key)
        reranked = [e for e in group if e.dims is not None and (current is None or len(e.dims) != len(current))]
        if reranked:
            dims, proofs = reranked[0].dims, reranked[0].proofs
        else:
            merged, merged_proofs = list(current or ()), [_proof_at(group[0], i) for i in range(len(current or ()))]
            for other in group:
                for i, (new, was) in enumerate(zip(other.dims or (), current or ())):
                    if new != was:
                        merged[i], merged_proofs[i] = new, _proof_at(other, i)
            dims = tuple(merged)
            proofs = tuple(merged_proofs) if any(p is not None for p in merged_proofs) else None
        result.append(SetType(key[0], edit.kind, key[2], dims=dims, proofs=proofs))
        result.extend(SetType(e.graph, e.kind, e.tensor, elem_type=e.elem_type) for e in group if e.elem_type)
    return result


def _proof_at(edit: SetType, index: int) -> DimProof | None:
    """The proof ``edit`` carries for its dim ``index`` (a merged edit keeps each dim's own)."""
    return edit.proofs[index] if edit.proofs is not None and index < len(edit.proofs) else None


def _graph(model: onnx.ModelProto, path: str) -> onnx.GraphProto:
    from onnx_lint.model.graphs import resolve_graph

    return resolve_graph(model, path)


def _set_tensor_type(value: onnx.ValueInfoProto, elem_type: int | None, dims: tuple[Dim, ...] | None) -> None:
    """Write what is given (``None`` keeps the current element type / dims)."""
    from onnx_lint.model.shapes import write_dims

    tensor = value.type.tensor_type
    if elem_type is not None:
        tensor.elem_type = elem_type
    if dims is not None:
        write_dims(tensor, dims)


def _find(graph: onnx.GraphProto, kind: Kind, name: str) -> onnx.ValueInfoProto:
    for value in getattr(graph, kind):
        if value.name == name:
            return value
    raise KeyError(f"{kind} '{name}' not found")


def edit_to_json(edit: Edit) -> dict[str, Any]:
    kind = next(k for k, cls in _KINDS.items() if isinstance(edit, cls))
    data = asdict(edit)
    if data.get("dims") is not None:
        data["dims"] = list(data["dims"])
    if data.get("proofs") is not None:
        data["proofs"] = list(data["proofs"])
    return {"edit": kind, **data}  # not "kind": SetType has a field of that name


def edit_from_json(data: dict[str, Any]) -> Edit:
    fields = dict(data)
    cls = _KINDS[fields.pop("edit")]
    if fields.get("dims") is not None:
        fields["dims"] = tuple(fields["dims"])
    if fields.get("proofs") is not None:
        fields["proofs"] = tuple(DimProof(**p) if p is not None else None for p in fields["proofs"])
    return cls(**fields)
