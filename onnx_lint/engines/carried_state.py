"""What a Loop or Scan body computes, from its carried state's initial values, proven by induction.

ONNX's inference types a body from the body's own declared inputs. A body whose carried input is
pinned to the export's batch (``[2, 16]`` where the Loop starts from ``[batch, 16]``) then confirms
its pin: every tensor of the body derives from it, and nothing can be found stale there.

The hypothesis instead is the initial value's shape, as the enclosing graph derives it: the body's
carried input gets the initial value's dims in the stripped copy, and inference runs once more.
Where the body's carried output derives to the very same dim, the dim holds at every iteration
(induction: the first holds, and each one hands the same dim to the next). A dim the body changes
(a state that grows by a Concat) is dropped from the hypothesis and inference runs again, at most
a few times; dims that never settle leave the body as it was. The body's derived values of the
proven run are then the facts its declarations are checked against.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import onnx

from onnx_lint.model.graphs import ONNX_DOMAINS, GraphScope, resolve_graph
from onnx_lint.model.shapes import Dim, TensorInfo, value_tensor_info, write_dims

# Inference runs at most this many times more, each dropping the dims the body changed.
MAX_ROUNDS = 3


@dataclass(frozen=True)
class CarriedState:
    """One carried state of a Loop or Scan body: where it enters and leaves the body, and its initial value."""

    body: str  # the body's graph path
    input_index: int  # the body input that holds the state
    output_index: int  # the body output that hands it to the next iteration
    initial: str  # the initial value's name, in the enclosing graph
    start: TensorInfo  # what the enclosing graph derives for the initial value
    enclosing: str  # the graph path of the Loop or Scan node
    final: str  # the node's output that holds the state after the last iteration ("" if none)


def carried_states(scopes: list[GraphScope], values: Mapping[str, Mapping[str, onnx.ValueInfoProto]]
                   ) -> list[CarriedState]:
    """Every carried state whose initial value the enclosing graph gives a rank."""
    found: list[CarriedState] = []
    for scope in scopes:
        node, enclosing = scope.owner_node, scope.parent
        if node is None or enclosing is None or node.domain not in ONNX_DOMAINS or not scope.path.endswith("/body"):
            continue
        for input_index, output_index, initial, final in state_slots(node, scope.graph):
            start = _resolved(enclosing, initial, values)
            declared = value_tensor_info(scope.graph.input[input_index])
            if declared is not None and declared.dims is not None and start is not None and start.dims is not None \
                    and len(declared.dims) != len(start.dims):
                continue  # a body input of another rank than its initial value: the model contradicts itself
            if start is not None and start.dims is not None:
                found.append(CarriedState(scope.path, input_index, output_index, initial, start, enclosing.path, final))
    return found


def state_slots(node: onnx.NodeProto, body: onnx.GraphProto) -> list[tuple[int, int, str, str]]:
    """(body input, body output, initial value, final value) of each state a Loop or Scan carries."""
    inputs, outputs = list(node.input), list(node.output)
    if node.op_type == "Loop":  # body: (iteration, condition, state...) -> (condition, state..., scans...)
        count = min(len(inputs) - 2, len(body.input) - 2, len(body.output) - 1)
        return [(2 + k, 1 + k, inputs[2 + k], outputs[k] if k < len(outputs) else "")
                for k in range(count) if inputs[2 + k]]
    if node.op_type == "Scan":  # body: (state..., slices...) -> (state..., scans...)
        scans = next((a.i for a in node.attribute if a.name == "num_scan_inputs"), 0)
        count = min(len(inputs) - scans, len(body.input) - scans, len(body.output))
        return [(k, k, inputs[k], outputs[k] if k < len(outputs) else "") for k in range(count) if inputs[k]]
    return []


def _resolved(scope: GraphScope, name: str, values: Mapping[str, Mapping[str, onnx.ValueInfoProto]]
              ) -> TensorInfo | None:
    """The derived type of ``name`` where it resolves from ``scope`` outward (a value, an input or an initializer)."""
    defining = scope.lookup(name)
    if defining is None:
        return None
    info = value_tensor_info(values.get(defining.path, {}).get(name))
    if info is not None:
        return info
    for value in defining.graph.input:
        if value.name == name:
            return value_tensor_info(value)
    tensor = defining.initializers().get(name)
    if isinstance(tensor, onnx.TensorProto):
        return TensorInfo(tensor.data_type, tuple(tensor.dims))
    return None


def with_hypothesis(stripped: bytes, states: list[CarriedState], hypothesis: Mapping[CarriedState, list[Dim]]
                    ) -> onnx.ModelProto:
    """The stripped copy with each carried input's dims set to the hypothesis (``None``: an unknown dim)."""
    model = onnx.ModelProto.FromString(stripped)
    for state in states:
        value = resolve_graph(model, state.body).input[state.input_index]
        tensor = value.type.tensor_type
        if not tensor.elem_type:
            tensor.elem_type = state.start.elem_type
        write_dims(tensor, tuple(hypothesis[state]))
    return model


def broken_dims(states: list[CarriedState], hypothesis: Mapping[CarriedState, list[Dim]],
                values: Mapping[str, Mapping[str, onnx.ValueInfoProto]], bodies: Mapping[str, onnx.GraphProto]
                ) -> dict[CarriedState, set[int]]:
    """Per state, the hypothesis dims the body's carried output does not hand on unchanged (with ``-1`` where
    the output has no rank or another one: then the state is no hypothesis at all)."""
    broken: dict[CarriedState, set[int]] = {}
    for state in states:
        body = bodies[state.body]
        name = body.output[state.output_index].name
        if name == body.input[state.input_index].name:
            continue  # handed on untouched (tf2onnx writes such a body): every dim holds
        produced = value_tensor_info(values.get(state.body, {}).get(name))
        dims = hypothesis[state]
        out = produced.dims if produced is not None and produced.dims is not None else None
        if out is None or len(out) != len(dims):
            broken[state] = set(range(len(dims))) | {-1}  # -1: not even the rank is handed on
            continue
        bad = {i for i, dim in enumerate(dims) if dim is not None and out[i] != dim}
        if bad:
            broken[state] = bad
    return broken
