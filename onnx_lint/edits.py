"""Annotation edits: the only changes a fix may make to a model.

Each edit targets a declaration by graph path and tensor name, and touches only
``graph.output`` / ``graph.value_info`` types, never node contents, attributes or
initializers (SPEC 4). The one edit that touches nodes, ``SortNodes``, changes
only their order (a graph out of topological order computes the same once
sorted). Edits are plain data so that the language server can hand them to a
client and back.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:  # edits are also rebuilt from the cache, where onnx is not imported at all
    import onnx

    from onnx_lint.shapes import Dim

Kind = Literal["input", "output", "value_info"]


@dataclass(frozen=True)
class SetType:
    """Set the element type and/or the dims of an existing input, output or value_info entry."""

    graph: str
    kind: Kind
    tensor: str
    elem_type: int | None = None
    dims: tuple[Dim, ...] | None = None

    def apply(self, model: onnx.ModelProto) -> None:
        value = _find(_graph(model, self.graph), self.kind, self.tensor)
        _set_tensor_type(value, self.elem_type, self.dims)


@dataclass(frozen=True)
class AddValueInfo:
    """Declare the type (and, where known, the dims) of an undeclared tensor."""

    graph: str
    tensor: str
    elem_type: int
    dims: tuple[Dim, ...] | None = None

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
class SortNodes:
    """Put a graph's nodes in topological order; every node's content stays byte-identical."""

    graph: str

    def apply(self, model: onnx.ModelProto) -> None:
        from onnx_lint.graphs import topological_order

        graph = _graph(model, self.graph)
        order = topological_order(graph)
        if len(order) != len(graph.node):
            raise KeyError(f"{self.graph} has a dependency cycle: no order exists")
        if order == list(range(len(graph.node))):
            return
        nodes = [graph.node[i] for i in order]
        copies = [type(n)() for n in nodes]
        for copy, node in zip(copies, nodes):
            copy.CopyFrom(node)
        del graph.node[:]
        graph.node.extend(copies)


@dataclass(frozen=True)
class SetIrVersion:
    """Raise the model's IR version where the higher version only relaxes a rule the model breaks.

    IR 4 differs from IR 3 only in letting initializers be absent from the graph inputs.
    """

    version: int

    def apply(self, model: onnx.ModelProto) -> None:
        model.ir_version = max(model.ir_version, self.version)


Edit = SetType | AddValueInfo | RemoveValueInfo | SortNodes | SetIrVersion
_KINDS: dict[str, type] = {"set_type": SetType, "add_value_info": AddValueInfo, "remove_value_info": RemoveValueInfo,
                           "sort_nodes": SortNodes, "set_ir_version": SetIrVersion}


def target_of(edit: Edit) -> tuple[str, str]:
    """(graph path, tensor) an edit changes; whole-graph and whole-model edits have no tensor."""
    return getattr(edit, "graph", "model"), getattr(edit, "tensor", "")


def combine_edits(edits: list[Edit], model: onnx.ModelProto) -> list[Edit]:
    """One dims edit per declaration, so that two rules fixing one declaration compose.

    OL002 and OL101 can both rewrite the dims of one output; applied one after the other,
    the second would undo the first, and fixing again would never settle. Per dim, the
    combined edit takes the first value that changes the declaration; a rank change wins.
    """
    from onnx_lint.shapes import dim_of

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
        current = tuple(dim_of(d) for d in _find(_graph(model, key[0]), edit.kind, key[2])
                        .type.tensor_type.shape.dim)
        reranked = [e.dims for e in group if e.dims is not None and len(e.dims) != len(current)]
        if reranked:
            dims = reranked[0]
        else:
            dims = tuple(next((e.dims[i] for e in group if e.dims[i] != was), was)  # type: ignore[index]
                         for i, was in enumerate(current))
        result.append(SetType(key[0], edit.kind, key[2], dims=dims))
        result.extend(SetType(e.graph, e.kind, e.tensor, elem_type=e.elem_type) for e in group if e.elem_type)
    return result


def _graph(model: onnx.ModelProto, path: str) -> onnx.GraphProto:
    from onnx_lint.graphs import resolve_graph

    return resolve_graph(model, path)


def _set_tensor_type(value: onnx.ValueInfoProto, elem_type: int | None, dims: tuple[Dim, ...] | None) -> None:
    """Write what is given (``None`` keeps the current element type / dims)."""
    from onnx_lint.shapes import write_dims

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
    return {"edit": kind, **data}  # not "kind": SetType has a field of that name


def edit_from_json(data: dict[str, Any]) -> Edit:
    fields = dict(data)
    cls = _KINDS[fields.pop("edit")]
    if fields.get("dims") is not None:
        fields["dims"] = tuple(fields["dims"])
    return cls(**fields)
