"""ONNX's inference of a large model started in a forked child as soon as the bytes are parsed.

The parent scans, validates and runs the checker meanwhile; ``ShapeOracle`` collects the answer.
"""

from __future__ import annotations

import weakref
from functools import partial

import onnx
import onnx.shape_inference

from onnx_lint.base.errors import first_line
from onnx_lint.engines import forked
from onnx_lint.engines.forked import ForkedCall
from onnx_lint.engines.onnx_inference import run_onnx_inference_serialized
from onnx_lint.engines.strip import strip_model
from onnx_lint.model.graphs import ROOT, iter_scopes
from onnx_lint.model.load import LoadedModel

# From this many nodes and initializers in the main graph on, ONNX's inference runs in a child process.
PREFETCH_MIN_ENTRIES = 20_000
# An AttributeProto's ``type`` field (20) on the wire, set to GRAPH (5) or GRAPHS (10).
_GRAPH_ATTRIBUTE, _GRAPHS_ATTRIBUTE = b"\xa0\x01\x05", b"\xa0\x01\x0a"
Prefetch = ForkedCall[tuple[bytes | None, str | None]]
_PREFETCHED: dict[int, tuple[weakref.ref, Prefetch]] = {}


def worth_forking(graph: onnx.GraphProto) -> bool:
    """Whether a main graph is large enough that a forked child overlaps more than the fork costs, and the
    machine has room for the child (``forked.room_for_child``)."""
    return len(graph.node) + len(graph.initializer) >= PREFETCH_MIN_ENTRIES and forked.room_for_child()


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
    if not worth_forking(graph):
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


def is_prefetched(loaded: LoadedModel) -> bool:
    """Whether ``loaded``'s inference was started in a child and not yet collected."""
    pending = _PREFETCHED.get(id(loaded))
    return pending is not None and pending[0]() is loaded


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
