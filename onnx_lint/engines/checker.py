"""``onnx.checker`` errors found one by one, each with the node (or graph entry) it is about.

The checker stops at its first error and names no graph path. Here the whole
model is checked once (the common, passing case costs one C++ call); only when
it fails are nodes and declarations checked one at a time, so that every error
gets its own location. A self-contained model under 256 MB is checked from
the file's own bytes (no Python copy); otherwise the model checked is a
weight-free copy: large and external initializers become empty tensors of the
same type (docs/design.md), so no weight byte is read and external data never
resolves against the working directory.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import onnx
import onnx.checker
from onnx.onnx_cpp2py_export import shape_inference as onnx_cpp_inference

from onnx_lint.base.errors import first_line
from onnx_lint.base.timings import CHECKER, timed
from onnx_lint.engines import forked
from onnx_lint.engines.forked import ForkedCall
from onnx_lint.engines.strip import INLINE_ELEMENTS, swap_heavy_initializers
from onnx_lint.model.edits import SortNodes
from onnx_lint.model.graphs import ROOT, out_of_order_nodes, scopes_at, subgraph_attributes
from onnx_lint.model.load import LoadedModel

# Messages that other rules report with a location and, where possible, a fix.
SORT_MESSAGE = "topologically sorted"
DANGLING_OUTPUT_MESSAGE = "is not an output of any node in graph"


@dataclass(frozen=True)
class CheckerFinding:
    """One checker complaint: the graph path, what it is about and its index there, the checker's first line."""

    graph: str
    index: int | None
    what: str  # "node", "input", "output", "value_info", "initializer" or "model"
    name: str
    message: str


def light_copy(loaded: LoadedModel, sort: bool = True) -> onnx.ModelProto:
    """The model without weight bytes; its graphs sorted (unsorted order is OL103's finding) if ``sort``."""
    model = loaded.fresh_copy()
    _empty_heavy_tensors(model, loaded.scope_paths)
    for scope in loaded.scopes if sort else ():
        if out_of_order_nodes(scope):
            try:
                SortNodes(scope.path).apply(model)
            except KeyError:
                pass  # a cycle: the load step refuses such models before any rule runs
    return model


def _empty_heavy_tensors(model: onnx.ModelProto, paths: list[str]) -> None:
    """Make each external or large initializer an empty tensor of its type, in place.

    An in-memory check would look for an external tensor's file relative to the working folder,
    not the model's, and report every one as missing (the loader has checked those references
    already); a large one would be copied and serialized for nothing (the loader has checked its
    size). The non-full checker reads dims only to count a tensor's elements, never for types or
    shapes, so an empty tensor (dims ``[0]``, no data) passes exactly where the original would.
    The initializers are written back as one serialized run that protobuf parses in C: four field
    writes per tensor from Python took 0.17 s on 50k external tensors, this 0.07 s, to the same bytes.
    """
    external, prod = onnx.TensorProto.EXTERNAL, math.prod
    for scope in scopes_at(model, paths):
        graph = scope.graph
        parts: list[bytes] = []
        add = parts.append
        emptied = False
        for init in graph.initializer:
            if init.data_location == external or prod(init.dims) > INLINE_ELEMENTS:
                name, data_type = init.name.encode(), init.data_type
                if data_type < 0x80 and len(name) < 0x78:  # every length a one-byte varint: no call per tensor
                    add(bytes((0x2A, len(name) + 6, 0x08, 0x00, 0x10, data_type, 0x42, len(name))) + name)
                else:
                    add(_empty_tensor_field(name, data_type))
                emptied = True
            else:
                body = init.SerializeToString()
                add(b"\x2a" + _varint(len(body)) + body)
        if emptied:
            del graph.initializer[:]
            graph.MergeFromString(b"".join(parts))


def _empty_tensor_field(encoded: bytes, data_type: int) -> bytes:
    """A GraphProto ``initializer`` field (5) holding a TensorProto with dims [0] (field 1), ``data_type``
    (field 2) and the name ``encoded`` (field 8): the bytes protobuf writes for that message."""
    body = b"\x08\x00\x10" + _varint(data_type) + b"\x42" + _varint(len(encoded)) + encoded
    return b"\x2a" + _varint(len(body)) + body


def _varint(value: int) -> bytes:
    if value < 0x80:
        return bytes((value,))
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


# Below this size a self-contained model is checked from its own bytes: no Python copy at all.
_RAW_CHECK_BYTES = 256 * 2**20
_VERDICTS: dict[int, tuple[weakref.ref, str | None]] = {}


def _check(data: bytes) -> str | None:
    try:
        onnx.checker.check_model(data)
    except Exception as exc:  # the checker raises ValidationError, and ValueError for oversized protos
        return first_line(exc)
    return None


@timed(CHECKER)
def checker_verdict(loaded: LoadedModel) -> str | None:
    """The checker's first complaint about the model as it is, or ``None`` (computed once per model).

    The checker verifies node order and that every read tensor is defined, in every graph: when it
    passes, OL102, OL103 and OL104 have nothing to look for, and a healthy model costs one C++ call.
    """
    cached = _VERDICTS.get(id(loaded))
    if cached is not None and cached[0]() is loaded:
        return cached[1]
    raw = not loaded.has_external_data and len(loaded.data) < _RAW_CHECK_BYTES
    verdict = _check(loaded.data if raw else light_copy(loaded, sort=False).SerializeToString())
    for key in [k for k, (ref, _) in _VERDICTS.items() if ref() is None]:
        del _VERDICTS[key]
    _VERDICTS[id(loaded)] = (weakref.ref(loaded), verdict)
    return verdict


def full_checker_error(model: Path | bytes, external_paths: list[str] | None = None) -> str | None:
    """The full checker's (strict inference included) first complaint about a model, or None.

    ``model`` is a file or a self-contained model's bytes. For a file with external data
    (``external_paths``: its graph paths) the checker runs with the external tensors as typed
    inputs: its own external-data check would resolve each tensor's file (0.6 s for a
    50k-tensor export), cannot differ between a model and its fix (fixes never touch
    tensors), and the loader has checked those references already.
    """
    try:
        if isinstance(model, bytes) or external_paths is None:
            onnx.checker.check_model(model if isinstance(model, bytes) else str(model), full_check=True)
        else:
            loaded = onnx.load_model(model, load_external_data=False)
            swap_heavy_initializers(loaded, external_paths, all_external=True)
            onnx.checker.check_model(loaded, full_check=True)
    except Exception as exc:
        return first_line(exc, 400)
    return None


class ForkedFullCheck:
    """``full_checker_error`` of a model's bytes, computed by two forked children at once.

    The full checker is the structural check and then strict inference (types checked, no data
    propagation: ``onnx.checker``'s own ``full_check`` in two calls, which give the same errors in
    the same order: a structural error wins). One after the other in one child they were the
    longest wait of a fix on a 100k-node model (~0.3 s and ~0.8 s); side by side they use the core
    the waiting parent leaves idle.
    """

    def __init__(self, structure: ForkedCall[str | None], inference: ForkedCall[str | None]) -> None:
        self._structure, self._inference = structure, inference

    @classmethod
    def start(cls, data: bytes, external_paths: list[str] | None) -> ForkedFullCheck | None:
        """Both children started; ``None`` where forking is unavailable or the machine has no room for
        them (``forked.room_for_child``: taking turns with this process, they would only add the fork's cost).
        ``external_paths``: as for ``full_checker_error``."""
        if not forked.room_for_child():
            return None
        structure = ForkedCall.start(partial(_full_check_part, data, external_paths, inference=False))
        if structure is None:
            return None
        inference = ForkedCall.start(partial(_full_check_part, data, external_paths, inference=True))
        if inference is None:
            structure.abandon()
            return None
        return cls(structure, inference)

    def result(self) -> tuple[bool, str | None]:
        """``(True, error or None)`` once known; ``(False, None)`` if a child failed or died."""
        done, error = self._structure.result()
        if not done or error is not None:
            self._inference.abandon()
            return done, error
        return self._inference.result()

    def abandon(self) -> None:
        self._structure.abandon()
        self._inference.abandon()


def _full_check_part(data: bytes, external_paths: list[str] | None, *, inference: bool) -> str | None:
    """In a child: the structural half of the full check, or its strict inference."""
    try:
        model: onnx.ModelProto | bytes = data
        if external_paths is not None:
            parsed = onnx.ModelProto.FromString(data)
            swap_heavy_initializers(parsed, external_paths, all_external=True)
            model = parsed
        if inference:  # the engine's own call: its answer (the inferred model) is not wanted, only its error
            serialized = model if isinstance(model, bytes) else model.SerializeToString()
            onnx_cpp_inference.infer_shapes(serialized, True, True, False)  # check_type, strict, no data_prop
        else:
            onnx.checker.check_model(model)
    except Exception as exc:
        return first_line(exc, 400)
    return None


def inherit_passing_verdict(original: LoadedModel, fixed: LoadedModel) -> None:
    """Let a fixed copy take its original's passing verdict instead of a second checker pass.

    A fix changes declarations only, and ``fixer.write_fix`` proves the fixed model with the full
    checker, refusing any fix that makes it fail where the original passed. So when the original
    passes, the re-lint of the fixed copy needs no checker pass of its own: a failure it could
    find would stop the fix anyway. A failing original is not inherited (its fix may change that).
    """
    cached = _VERDICTS.get(id(original))
    if cached is not None and cached[0]() is original and cached[1] is None:
        _VERDICTS[id(fixed)] = (weakref.ref(fixed), None)


def checker_errors(loaded: LoadedModel) -> list[CheckerFinding]:
    """Every error the (non-full) checker finds, per node and per declaration; empty when it passes."""
    if checker_verdict(loaded) is None:
        return []
    model = light_copy(loaded)
    whole = _check(model.SerializeToString())  # sorted: the first error that is not about order
    if whole is None:
        return []
    ctx = onnx.checker.C.CheckerContext()
    ctx.ir_version = model.ir_version
    ctx.opset_imports = {o.domain: o.version for o in model.opset_import}
    found: list[CheckerFinding] = []
    light_graphs = {scope.path: scope.graph for scope in scopes_at(model, loaded.scope_paths)}
    for scope in loaded.scopes:  # nodes and declarations of the original, so indices are the file's
        graph = scope.graph
        for kind in ("input", "output", "value_info"):
            for j, value in enumerate(getattr(graph, kind)):
                _collect(found, partial(onnx.checker.check_value_info, value, ctx), scope.path, j, kind, value.name)
        for j, tensor in enumerate(light_graphs[scope.path].initializer):  # weight-free: heavy ones swapped
            _collect(found, partial(onnx.checker.check_tensor, tensor, ctx), scope.path, j, "initializer",
                     tensor.name)
        for i, node in enumerate(graph.node):
            _collect(found, partial(onnx.checker.check_node, _without_subgraphs(node), ctx), scope.path, i,
                     "node", node.name)
    if not found and SORT_MESSAGE not in whole and DANGLING_OUTPUT_MESSAGE not in whole:
        found.append(CheckerFinding(ROOT, None, "model", "", whole))
    return found


def _collect(found: list[CheckerFinding], check: Callable[[], None], graph: str, index: int | None, what: str,
             name: str) -> None:
    try:
        check()
    except Exception as exc:
        message = first_line(exc)
        if SORT_MESSAGE not in message and DANGLING_OUTPUT_MESSAGE not in message:
            found.append(CheckerFinding(graph, index, what, name, message))


def _without_subgraphs(node: onnx.NodeProto) -> onnx.NodeProto:
    """The node with each graph attribute emptied: its subgraphs are checked node by node on their own,
    and a lone check cannot see the outer-scope names they read."""
    if not any(True for _ in subgraph_attributes(node)):
        return node
    copy = onnx.NodeProto()
    copy.CopyFrom(node)
    for attr in copy.attribute:
        for g in [attr.g] if attr.type == onnx.AttributeProto.GRAPH else list(attr.graphs):
            name = g.name
            g.Clear()
            g.name = name or "subgraph"  # an empty name is itself an error; the real one is checked on its own
    return copy
