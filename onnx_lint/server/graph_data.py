"""The whole model as a graph, for the editor's graph view: structure compactly, details on demand.

``model_graph`` sends every graph of a model (the main one and the bodies of If/Loop/Scan) as
columns: op types and tensor names once each, nodes as indices into them. It reads names only, one
pass over each graph's nodes, so a 100k-node model costs a fraction of a second and a few MB of
JSON; attributes and constants' values are what ``node_details`` answers for the node the user clicks.
Each graph also carries the overview's groups (``graph_groups``: scopes, repeats, chains, stages), as
columns, and, given the lint's context, every tensor's derived type and shape (each distinct one once), and
the declared one where the file says otherwise, so that edges can say what flows on them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import onnx

from onnx_lint.lint.context import LintContext
from onnx_lint.lint.neighbourhood import _Labeller
from onnx_lint.model.graphs import ONNX_DOMAINS, ROOT, GraphScope, subgraph_attributes
from onnx_lint.model.shapes import TensorInfo, elem_type_name, format_info, tensor_info, value_tensor_info
from onnx_lint.model.tensors import constant_node_tensor
from onnx_lint.rules.ol201_fp16_overflow import fp16_problem
from onnx_lint.server.graph_groups import group_columns

MAX_LIST = 8  # attribute list items shown before "…"
MAX_TEXT = 80  # characters of a string attribute shown
MAX_VALUES = 4096  # values of one tensor sent for "show all"; a bigger tensor says its size and range
MAX_NODE_VALUES = 16_384  # values sent for one node's details, all its tensors together
MAX_READ_BYTES = 64 * 2**20  # a bigger tensor's range is not computed (its size alone is said)
MAX_VALUE_TEXT = 40  # characters of one string value
PIN = 1024  # dynamic input dims set to this to name spatial sizes relative to the input (H/8)
MAX_PINNED_NODES = 20_000  # above this, dynamic spatial sizes are not pinned (an extra inference)


def _text(value: str | bytes) -> str:
    return value if isinstance(value, str) else value.decode("utf-8", "replace")


def graph_structure(scope: GraphScope, ctx: LintContext | None = None) -> dict[str, Any]:
    """One graph as columns (see the module docstring); tensor ``-1`` is an omitted optional input.

    One pass over the nodes reads their inputs and outputs (op types and names come from the scan the
    lint already made); names are interned afterwards, in bulk (about 0.7 s for 100k nodes). With ``ctx``,
    the tensors' types and shapes come from the lint's own inference (``_shape_columns``).
    """
    graph = scope.graph
    texts = scope.scan().texts  # op_type, domain, name of every node
    names: list[str] = []
    input_end: list[int] = []
    output_end: list[int] = []
    extend, end_in, end_out = names.extend, input_end.append, output_end.append
    for node in graph.node:
        extend(node.input)
        end_in(len(names))
        extend(node.output)
        end_out(len(names))
    declared = [v.name for v in graph.input] + [v.name for v in graph.output]
    # Names are interned in C (dict.fromkeys, map); protobuf gives bytes for a name that is not valid UTF-8,
    # and only then is each name decoded in Python.
    tensors = dict.fromkeys(names)
    tensors.update(dict.fromkeys(declared))
    if set(map(type, tensors)) - {str}:
        names = [_text(n) for n in names]
        tensors = dict.fromkeys(_text(n) for n in [*names, *declared])
    tensors.pop("", None)  # an omitted optional input
    index = {name: i for i, name in enumerate(tensors)}
    index[""] = -1
    ids = list(map(index.__getitem__, names))
    # Split the one list back into each node's inputs and outputs.
    inputs: list[int] = []
    outputs: list[int] = []
    inputs_end: list[int] = []
    outputs_end: list[int] = []
    start = 0
    for stop_in, stop_out in zip(input_end, output_end):
        inputs.extend(ids[start:stop_in])
        inputs_end.append(len(inputs))
        outputs.extend(ids[stop_in:stop_out])
        outputs_end.append(len(outputs))
        start = stop_out
    ops: dict[str, int] = {}
    node_op = [ops.setdefault(_text(op) if domain in ONNX_DOMAINS else f"{_text(domain)}.{_text(op)}", len(ops))
               for op, domain in zip(texts[0::3], texts[1::3])]
    subgraphs = [[i, segment, f"{scope.path}/node[{i}]/{segment}"]
                 for i in scope.special() for segment, _g in subgraph_attributes(graph.node[i])]
    initializers = [index[t.name] for t in graph.initializer if t.name in index]
    initializers += [index[t.values.name] for t in graph.sparse_initializer if t.values.name in index]
    node_names = [_text(n) for n in texts[2::3]]
    names_list = list(tensors)
    infos: list[TensorInfo | None] | None = None
    shape_columns: dict[str, Any] = {}
    if ctx is not None:
        infos = _derived_infos(ctx, scope, names_list, set(initializers))
        shape_columns = _shape_columns(scope, names_list, index, infos)
    first_outputs = [outputs[start] if start < stop else -1 for start, stop in zip([0, *outputs_end], outputs_end)]

    def spatial() -> list[str | None] | None:
        return None if ctx is None or infos is None else _spatial(ctx, scope, names_list, first_outputs, infos)

    groups = group_columns(graph, node_names, list(ops), node_op, inputs, inputs_end, outputs, outputs_end,
                           len(tensors), initializers, spatial)
    return {
        "path": scope.path,
        "name": graph.name,
        "ops": list(ops),
        "nodeOp": node_op,
        "nodeName": node_names,
        "tensors": list(tensors),
        "inputs": inputs, "inputEnd": inputs_end,
        "outputs": outputs, "outputEnd": outputs_end,
        "graphInputs": [index[v.name] for v in graph.input],
        "graphOutputs": [index[v.name] for v in graph.output],
        "initializers": initializers,
        "subgraphs": subgraphs,
        **shape_columns,
        **groups,
    }


def model_graph(scopes: list[GraphScope], ctx: LintContext | None = None) -> dict[str, Any]:
    """Every graph of a model, parents before children (``graph_structure`` each); with the lint's context,
    each tensor's shape too."""
    graphs = [graph_structure(scope, ctx) for scope in scopes]
    return {"graphs": graphs, "nodes": sum(len(g["nodeOp"]) for g in graphs)}


def _derived_infos(ctx: LintContext, scope: GraphScope, names: Sequence[str],
                   weights: set[int]) -> list[TensorInfo | None]:
    """Each tensor's derived type (weights: None, they are not drawn), as the node details say it: for a
    declared output or value_info entry, what the rules compared it with (a fallback engine's answer where
    ONNX's inference had none or was refuted); else the inference's own entry where it has a rank (each
    distinct type read once), else whatever the lint's engines derived."""
    oracle = ctx.oracle
    values = oracle.values(scope.path)
    inputs = {v.name: v for v in scope.graph.input}
    compared = {d.name: d.derived for d in ctx.declarations if d.graph == scope.path}
    read: dict[bytes, TensorInfo | None] = {}
    infos: list[TensorInfo | None] = []
    for t, name in enumerate(names):
        if t in weights:
            infos.append(None)
            continue
        if name in compared:
            infos.append(compared[name])
            continue
        value = values.get(name)
        if value is not None and value.HasField("type"):
            key = value.type.SerializeToString()
            if key not in read:
                read[key] = tensor_info(value.type)
            info = read[key]
            if info is not None and info.rank is not None:
                infos.append(info)
                continue
        info = oracle.derived(scope.path, name)[0]
        if info is None and name in inputs:  # a graph input is what the file says it is
            info = value_tensor_info(inputs[name])
        infos.append(info)
    return infos


def _shape_columns(scope: GraphScope, names: Sequence[str], index: dict[str, int],
                   infos: Sequence[TensorInfo | None]) -> dict[str, Any]:
    """``shapes`` (each distinct type once, as ONNX's text syntax writes it: ``float[1, 64, 40, 40]``),
    ``tensorShape`` (each tensor's derived one, -1: unknown or a weight) and ``declaredShape``: [tensor,
    shape] where the file declares a type the derived one contradicts (another element type, rank or
    number)."""
    shapes: dict[TensorInfo, int] = {}
    tensor_shape = [-1 if info is None else shapes.setdefault(info, len(shapes)) for info in infos]
    declared_shape: list[list[int]] = []
    graph = scope.graph
    for value in (*graph.input, *graph.value_info, *graph.output):
        t = index.get(value.name, -1)
        declared = value_tensor_info(value)
        if t >= 0 and declared is not None and infos[t] is not None and _contradicts(declared, infos[t]):
            declared_shape.append([t, shapes.setdefault(declared, len(shapes))])
    return {"shapes": [format_info(info) for info in shapes], "tensorShape": tensor_shape,
            "declaredShape": declared_shape}


def _contradicts(declared: TensorInfo, derived: TensorInfo | None) -> bool:
    """Whether a declared type says something the derived one disproves: an element type, a rank or a
    number of its own (a dim name against a number, or an unknown, proves nothing either way)."""
    if derived is None:
        return False
    if declared.elem_type and derived.elem_type and declared.elem_type != derived.elem_type:
        return True
    if declared.dims is None or derived.dims is None:
        return False
    if len(declared.dims) != len(derived.dims):
        return True
    return any(isinstance(a, int) and isinstance(b, int) and a != b for a, b in zip(declared.dims, derived.dims))


def _spatial(ctx: LintContext, scope: GraphScope, names: Sequence[str], first_outputs: Sequence[int],
             infos: Sequence[TensorInfo | None]) -> list[str | None] | None:
    """Each node's spatial size, for a CNN's stages: the H×W of its first output when that is an NCHW
    tensor (``40×40``), else None (as for 1×1, a squeeze-excite's pooled vector). Dynamic sizes are named
    relative to the input (``H/8×W/8``) from an inference with the input's dynamic dims set to ``PIN``;
    where that cannot be said, the dims as inference names them."""
    sizes: list[str | None] = []
    dynamic: list[int] = []
    for node, t in enumerate(first_outputs):
        info = infos[t] if t >= 0 else None
        dims = info.dims if info is not None else None
        if dims is None or len(dims) != 4 or (dims[2] == 1 and dims[3] == 1):
            sizes.append(None)
        elif isinstance(dims[2], int) and isinstance(dims[3], int):
            sizes.append(f"{dims[2]}×{dims[3]}")
        else:
            sizes.append(f"{_dim(dims[2])}×{_dim(dims[3])}")
            dynamic.append(node)
    if not any(sizes):
        return None
    if dynamic and scope.path == ROOT and len(first_outputs) <= MAX_PINNED_NODES:
        relative = _relative_sizes(ctx, [names[first_outputs[node]] for node in dynamic])
        for node, size in zip(dynamic, relative):
            if size is not None:
                sizes[node] = size
    return sizes


def _dim(dim: int | str | None) -> str:
    return "?" if dim is None or (isinstance(dim, str) and dim.startswith("unk__")) else str(dim)


def _relative_sizes(ctx: LintContext, names: Sequence[str]) -> list[str | None]:
    """``H/8×W/8`` for each tensor, from the main graph inferred with every dynamic input dim set to ``PIN``:
    a pinned size that divides ``PIN`` (or that it divides) says the tensor's size relative to the input's."""
    model_input = next((v for v in ctx.model.graph.input if (info := value_tensor_info(v)) is not None
                        and info.dims is not None and len(info.dims) == 4), None)
    info = value_tensor_info(model_input)
    if info is None or info.dims is None:
        return [None] * len(names)
    letters = [str(d) if isinstance(d, str) and d.isidentifier() and len(d) <= 8 else axis
               for d, axis in zip(info.dims[2:], ("H", "W"))]
    try:
        values = ctx.oracle.pinned(PIN).get(ROOT, {})
        pinned = [value_tensor_info(values.get(name)) for name in names]
    except Exception:  # an inference that fails pinned leaves the sizes as inference named them
        return [None] * len(names)
    found: list[str | None] = []
    for dims_info in pinned:
        dims = dims_info.dims if dims_info is not None else None
        if dims is None or len(dims) != 4:
            found.append(None)
            continue
        parts = [_relative(d, letter, original) for d, letter, original in zip(dims[2:], letters, info.dims[2:])]
        found.append(None if None in parts else f"{parts[0]}×{parts[1]}")
    return found


def _relative(size: int | str | None, letter: str, original: int | str | None) -> str | None:
    if not isinstance(size, int) or size <= 0:
        return None
    if isinstance(original, int):  # a static input dim: the size is its own
        return str(size)
    if size == PIN:
        return letter
    if PIN % size == 0:
        return f"{letter}/{PIN // size}"
    if size % PIN == 0:
        return f"{size // PIN}{letter}"
    return None


def _attribute(attr: onnx.AttributeProto) -> str:
    """A short, readable value of one attribute (lists and strings cut, tensors and graphs summarised)."""
    kind = attr.type
    if kind == onnx.AttributeProto.INT:
        return str(attr.i)
    if kind == onnx.AttributeProto.FLOAT:
        return f"{attr.f:g}"
    if kind == onnx.AttributeProto.STRING:
        text = _text(attr.s)
        return repr(text if len(text) <= MAX_TEXT else text[:MAX_TEXT] + "…")
    if kind in (onnx.AttributeProto.INTS, onnx.AttributeProto.FLOATS, onnx.AttributeProto.STRINGS):
        values = list(attr.ints or attr.floats or attr.strings)
        shown = [f"{v:g}" if isinstance(v, float) else repr(_text(v)) if isinstance(v, bytes) else str(v)
                 for v in values[:MAX_LIST]]
        return "[" + ", ".join(shown) + (f", … {len(values)} in all" if len(values) > MAX_LIST else "") + "]"
    if kind == onnx.AttributeProto.TENSOR:
        dims = "×".join(str(d) for d in attr.t.dims) or "scalar"
        return f"tensor {onnx.helper.tensor_dtype_to_np_dtype(attr.t.data_type).name} {dims}"
    if kind == onnx.AttributeProto.GRAPH:
        return f"graph '{attr.g.name}' ({len(attr.g.node)} nodes)"
    if kind == onnx.AttributeProto.GRAPHS:
        return f"{len(attr.graphs)} graphs"
    return onnx.AttributeProto.AttributeType.Name(kind).lower()


def _value_text(value: Any) -> str:
    """One value as the details show it: ``0.125``, ``-1e+09``, ``nan``, ``7``, ``true``, ``'text'``."""
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, (float, np.floating)):
        return f"{float(value):.6g}"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (complex, np.complexfloating)):
        return f"{complex(value):.6g}"
    text = _text(value) if isinstance(value, (str, bytes)) else str(value)
    return repr(text if len(text) <= MAX_VALUE_TEXT else text[:MAX_VALUE_TEXT] + "…")


def tensor_values(tensor: onnx.TensorProto, budget: list[int] | None = None) -> dict[str, Any]:
    """A constant's values for the details, as Netron shows them: every value of a small tensor (at most
    ``MAX_VALUES``, and ``MAX_NODE_VALUES`` for all of a node's tensors, counted in ``budget``), else its
    size and value range; what FP16 cannot hold (OL201's words). Bounded: data stored outside the model
    file is never read, and a tensor over ``MAX_READ_BYTES`` is not decoded."""
    dims = [int(d) for d in tensor.dims]
    count = math.prod(dims)
    found: dict[str, Any] = {"dtype": elem_type_name(tensor.data_type), "dims": dims, "count": count}
    if tensor.data_location == onnx.TensorProto.EXTERNAL:
        found["note"] = "stored in external data: values not read"
        return found
    try:
        itemsize = onnx.helper.tensor_dtype_to_np_dtype(tensor.data_type).itemsize
    except Exception:  # a type numpy has no dtype for
        itemsize = 1
    if count * itemsize > MAX_READ_BYTES:
        found["note"] = f"{count * itemsize / 2**20:,.0f} MiB: values not read here"
        return found
    try:
        array = onnx.numpy_helper.to_array(tensor)
    except Exception as exc:  # an odd type or a malformed tensor: say so instead of failing the details
        found["note"] = f"values cannot be decoded: {type(exc).__name__}"
        return found
    flat = array.ravel()
    budget = budget if budget is not None else [MAX_NODE_VALUES]
    if flat.size <= MAX_VALUES and flat.size <= budget[0]:
        budget[0] -= flat.size
        found["values"] = [_value_text(v) for v in flat.tolist()]
    if flat.size and array.dtype.kind in "biuf":
        numbers = flat[np.isfinite(flat)] if array.dtype.kind == "f" else flat
        if numbers.size:
            found["min"], found["max"] = _value_text(numbers.min()), _value_text(numbers.max())
        if numbers.size < flat.size:
            found["nonFinite"] = int(flat.size - numbers.size)
        if array.dtype.kind == "f" and array.dtype.itemsize >= 4:
            problem = fp16_problem(flat)
            if problem:
                found["fp16"] = problem
    return found


def node_details(ctx: LintContext, graph_path: str, index: int) -> dict[str, Any]:
    """One node for the graph view's details: attributes, and each input and output declared and
    derived (with the engine that derived it), the way the rules compared them; a Constant's value and
    the initializers it reads with their values (``tensor_values``)."""
    scope = next((s for s in ctx.scopes if s.path == graph_path), None)
    if scope is None or not 0 <= index < len(scope.graph.node):
        raise ValueError(f"no node {index} in graph '{graph_path}'")
    node = scope.graph.node[index]
    declared = {v.name: v for values in (scope.graph.input, scope.graph.value_info, scope.graph.output)
                for v in values}
    labeller = _Labeller(ctx, scope, declared, set())
    initializers = {t.name: t for t in scope.graph.initializer}
    budget = [MAX_NODE_VALUES]

    def tensor(name: str) -> dict[str, Any]:
        found = {**labeller.edge(name), "initializer": name in initializers}
        if name in initializers:
            found["values"] = tensor_values(initializers[name], budget)
        return found

    def attribute(attr: onnx.AttributeProto) -> dict[str, Any]:
        found: dict[str, Any] = {"name": attr.name, "value": _attribute(attr)}
        if attr.type == onnx.AttributeProto.TENSOR:
            found["values"] = tensor_values(attr.t, budget)
        elif node.op_type == "Constant" and node.domain in ONNX_DOMAINS and attr.name.startswith("value_") \
                and (value := constant_node_tensor(node)) is not None:
            found["values"] = tensor_values(value, budget)  # value_float(s), value_int(s)
        return found

    return {
        "graph": graph_path, "index": index, "path": f"{graph_path}/node[{index}]",
        "name": node.name, "op": node.op_type, "domain": node.domain,
        "attributes": [attribute(a) for a in node.attribute],
        "inputs": [tensor(n) for n in node.input if n],
        "outputs": [tensor(n) for n in node.output if n],
        "subgraphs": [f"{graph_path}/node[{index}]/{segment}" for segment, _g in subgraph_attributes(node)],
    }

