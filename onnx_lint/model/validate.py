"""The structural checks every analysis relies on: versions, tensors, names, cycles.

A model that fails one is reported as unreadable (OL000) with the reason, before any engine runs.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Iterator
from pathlib import Path

import onnx

from onnx_lint.base.errors import ModelLoadError
from onnx_lint.model.external import ITEMSIZES, check_external_data, raw_size
from onnx_lint.model.graphs import GraphScope, cyclic_nodes, iter_scopes


def _supported_opsets() -> dict[str, int]:
    from onnx.onnx_cpp2py_export import defs  # the C++ schema registry

    table = {domain: hi for domain, (_lo, hi) in defs.schema_version_map().items()}
    table["ai.onnx"] = table[""]
    return table


def validate_model(model: onnx.ModelProto, path: Path, scopes: list[GraphScope] | None = None) -> list[str]:
    """Structural checks that must pass before any analysis; returns external locations."""
    display = str(path)
    if model.ir_version > onnx.IR_VERSION:
        raise ModelLoadError(
            display,
            f"IR version {model.ir_version} is newer than the installed onnx "
            f"{onnx.__version__} supports (up to {onnx.IR_VERSION})",
        )
    supported = _supported_opsets()
    for opset in model.opset_import:
        if opset.version < 1:
            raise ModelLoadError(display, f"opset {opset.domain or 'ai.onnx'} version {opset.version} is not "
                                 "a valid version (versions start at 1)")
        limit = supported.get(opset.domain)
        if limit is not None and opset.version > limit:
            domain = opset.domain or "ai.onnx"
            raise ModelLoadError(
                display,
                f"opset {domain} {opset.version} is newer than the installed onnx "
                f"{onnx.__version__} supports (up to {limit})",
            )
    if model.ir_version >= 3 and not model.opset_import:
        raise ModelLoadError(display, "not a usable ONNX model: it imports no opset")
    scopes = scopes if scopes is not None else list(iter_scopes(model))
    external = check_initializers(scopes, display)
    check_names(model, scopes, display)
    return check_external_data(external, path)


# The typed field that holds a tensor's values when it has no raw_data, for the types that map 1:1.
_TYPED_FIELDS: dict[int, str] = {
    onnx.TensorProto.FLOAT: "float_data", onnx.TensorProto.DOUBLE: "double_data",
    onnx.TensorProto.INT32: "int32_data", onnx.TensorProto.INT64: "int64_data",
    onnx.TensorProto.STRING: "string_data", onnx.TensorProto.BOOL: "int32_data",
    onnx.TensorProto.UINT8: "int32_data", onnx.TensorProto.INT8: "int32_data",
}


def check_initializers(scopes: list[GraphScope], display: str) -> list[onnx.TensorProto]:
    """Refuse tensors (initializers, sparse parts, Constant values) that cannot exist: a negative dim,
    or data of the wrong size; return the external ones, for ``check_external_data``.

    Such a tensor makes every derived shape meaningless and ONNX Runtime refuses
    the model. Only lengths are compared; external data is checked by ``os.stat``.
    The first defective tensor in file order is the one named.
    """
    external: list[onnx.TensorProto] = []
    for kind, tensors in _tensor_groups(scopes):
        _check_group(kind, tensors, display, external)
    return external


def _check_group(kind: str, tensors: Iterable[onnx.TensorProto], display: str,
                 external: list[onnx.TensorProto]) -> None:
    """The loop 100k weights pay: each protobuf field read makes a Python object, so a tensor costs
    four reads (dims once, as a list, location, raw length, type). Raw data of a whole-byte type
    whose length matches is the common case; anything else takes ``_check_tensor``'s full path.
    Every dim goes into one list whose minimum is taken once: a negative one is rare, and only then
    are the tensors walked again to name the first."""
    external_location = onnx.TensorProto.EXTERNAL
    itemsizes, prod = ITEMSIZES, math.prod
    every_dim: list[int] = []
    gather = every_dim.extend
    scanned = 0  # every_dim[:scanned] holds no negative dim
    for tensor in tensors:
        dims = tensor.dims[:]  # a list: prod on it costs less than on protobuf's container
        gather(dims)
        if tensor.data_location == external_location:
            external.append(tensor)
            continue
        held = len(tensor.raw_data)  # a transient copy of one tensor at most
        if held:
            itemsize = itemsizes.get(tensor.data_type)
            if itemsize is not None and held == prod(dims) * itemsize:
                continue
        if len(every_dim) > scanned:  # a negative dim here or before is named first, as in file order
            if min(every_dim[scanned:]) < 0:
                break
            scanned = len(every_dim)
        _check_tensor(kind, tensor, dims, held, display)
    if every_dim and min(every_dim) < 0:
        bad = next(t for t in tensors if t.dims and min(t.dims) < 0)
        raise ModelLoadError(display, f"{kind} '{bad.name}' has a negative dim {bad.dims[:]}")


def _check_tensor(kind: str, tensor: onnx.TensorProto, dims: list[int], held: int, display: str) -> None:
    """Sizes the common case does not settle: empty or sub-byte raw data, segments, typed fields."""
    count = math.prod(dims)
    if held or tensor.HasField("raw_data"):
        needed = raw_size(tensor.data_type, count)
        if needed is not None and held != needed and not tensor.HasField("segment"):
            raise ModelLoadError(display, f"{kind} '{tensor.name}' holds {held} bytes of data but dims "
                                 f"{dims} need {needed}")
        return
    if tensor.HasField("segment"):
        return
    problem = _data_size_problem(tensor, count)
    if problem:
        raise ModelLoadError(display, f"{kind} '{tensor.name}' {problem}")


def _data_size_problem(tensor: onnx.TensorProto, count: int) -> str | None:
    """Typed-field storage (``float_data`` …): one value per element."""
    dims = list(tensor.dims)
    field_name = _TYPED_FIELDS.get(tensor.data_type)
    if field_name is None:
        return None
    held = len(getattr(tensor, field_name))
    if held != count:
        return f"holds {held} values but dims {dims} need {count}"
    return None


def check_names(model: onnx.ModelProto, scopes: list[GraphScope], display: str) -> None:
    """Refuse names that are not valid UTF-8 and graphs that define a name twice.

    Protobuf hands a string field with invalid UTF-8 to Python as ``bytes``;
    every lookup by name would then miss. ONNX requires single assignment: with
    two definitions every analysis would have to guess which one a reader sees,
    and ONNX Runtime refuses the model. An initializer that is also a graph
    input (IR < 4 style) is a default value, not a second definition.
    """
    _check_text(display, "the model's header", [model.producer_name, model.producer_version, model.domain]
                + [o.domain for o in model.opset_import] + [p.key for p in model.metadata_props])
    for scope in scopes:
        graph = scope.graph
        inputs = [v.name for v in graph.input]
        # The scope's set of initializer names, which later analyses reuse (a second read of 100k names
        # costs ~0.02 s); the list, in file order, only where a name must be named.
        known = scope.initializer_names()
        unique = len(known) == len(graph.initializer) + len(graph.sparse_initializer)
        inits: Collection[str] = known
        if not unique or bytes in set(map(type, known)):
            inits = [t.name for t in graph.initializer]
        # The node names come from the scope's one pass. Node inputs are not read: a valid one is
        # one of the names checked here, and an invalid one is never looked up.
        scan = scope.scan()
        outputs = scan.outputs
        _check_text(display, scope.path, inputs, inits, outputs, scan.texts, [v.name for v in graph.output],
                    [v.name for v in graph.value_info])
        if "" in outputs:  # an omitted optional output defines nothing
            outputs = [o for o in outputs if o]
        if scope.owner_node is not None:  # the attribute names that make up this scope's path
            names = [a.name for a in scope.owner_node.attribute]
            _check_text(display, scope.path, names)
            odd = next((n for n in names if not n or any(c in n for c in "/[]")), None)
            if odd is not None:
                raise ModelLoadError(display, f"{scope.path}: a graph attribute is named '{odd}'; "
                                     "names with '/', '[' or ']' (or none) cannot be addressed")
        produced = set(outputs)
        if (unique and len(produced) == len(outputs) and len(set(inputs)) == len(inputs)
                and produced.isdisjoint(inputs) and produced.isdisjoint(known)):
            continue
        if inits is known:
            inits = [t.name for t in graph.initializer]
        kinds: dict[str, str] = {}
        for kind, group in (("a graph input", inputs), ("an initializer", inits)):
            for name in group:
                if kinds.get(name) == kind:
                    raise ModelLoadError(display, f"{scope.path} defines '{name}' twice as {kind}")
                kinds.setdefault(name, kind)
        for node in graph.node:
            for out in node.output:
                if out and out in kinds:
                    raise ModelLoadError(
                        display, f"{scope.path} defines tensor '{out}' twice: as {kinds[out]} and as an "
                        f"output of node '{node.name or node.op_type}' (ONNX requires each name once)")
                if out:
                    kinds[out] = f"an output of node '{node.name or node.op_type}'"


def _check_text(display: str, where: str, *groups: Collection) -> None:
    """All of ``groups`` are ``str``; else name the first that protobuf gave back as bytes."""
    for group in groups:
        if bytes in set(map(type, group)):
            bad = next(v for v in group if isinstance(v, bytes))
            raise ModelLoadError(display, f"{where} has a name that is not valid UTF-8: {bad!r}")


def check_cycles(scopes: list[GraphScope], display: str) -> None:
    """A dependency cycle makes every analysis meaningless; refuse such a model."""
    for scope in scopes:
        cycle = cyclic_nodes(scope.graph)
        if cycle:
            names = ", ".join(
                f"'{scope.graph.node[i].name or scope.graph.node[i].op_type}'" for i in cycle[:5])
            raise ModelLoadError(display, f"{scope.path} has a dependency cycle through nodes {names}")


def iter_tensors(scopes: list[GraphScope]) -> Iterator[tuple[str, onnx.TensorProto]]:
    """Every tensor that can carry data, with what messages call it: initializers, then the
    parts of sparse initializers and the tensors of Constant-like nodes ("constant tensor")."""
    for kind, tensors in _tensor_groups(scopes):
        for tensor in tensors:
            yield kind, tensor


def _tensor_groups(scopes: list[GraphScope]) -> Iterator[tuple[str, Iterable[onnx.TensorProto]]]:
    """``iter_tensors`` in runs: each graph's initializers come as one sequence, looped over without a yield each."""
    for scope in scopes:
        yield "initializer", scope.graph.initializer
        for sparse in scope.graph.sparse_initializer:
            yield "constant tensor", (sparse.values, sparse.indices)
        for index in scope.special():
            for attr in scope.graph.node[index].attribute:
                if attr.type == onnx.AttributeProto.TENSOR:
                    yield "constant tensor", (attr.t,)
                elif attr.type == onnx.AttributeProto.TENSORS:
                    yield "constant tensor", attr.tensors
