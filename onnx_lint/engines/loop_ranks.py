"""The rank of a Loop's carried values, from its body: what ONNX's inference leaves out.

A Loop that appends to a carried tensor each iteration (``res = Concat(res, item)``, how
the TorchScript exporter writes a Python list grown in a loop: torchvision's R-CNN mask
pasting and keypoint decoding) changes the tensor's dims between iterations. ONNX's
inference then gives the Loop's output no shape at all, though its rank never changes,
and every tensor downstream, graph outputs included, is left without a rank: on those
models the slow symbolic engine used to run only to learn these ranks.

The rank is proven by induction: the initial value has rank r, the body's carried input is
rank r, and ONNX's inference of the body under that input derives rank r for the carried
output. Every iteration then yields rank r, and so does the Loop. A dim is kept only where
the initial value, the body's carried input and its output agree on the same number; every
other dim stays unknown (the count of iterations is data).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import onnx

from onnx_lint.model.graphs import ONNX_DOMAINS, ROOT
from onnx_lint.model.shapes import TensorInfo, value_tensor_info


def _info(values: Mapping[str, onnx.ValueInfoProto], name: str) -> TensorInfo | None:
    value = values.get(name)
    return value_tensor_info(value)


def carried_rank_hints(model: onnx.ModelProto, values: Mapping[str, Mapping[str, onnx.ValueInfoProto]],
                       initializers: Mapping[str, onnx.TensorProto]) -> Iterator[onnx.ValueInfoProto]:
    """A typed value per main-graph Loop output whose rank the body proves and inference left out.

    ``values`` holds ONNX's inference per graph path (the main graph and each Loop body).
    """
    outer = values.get(ROOT, {})
    for index, node in enumerate(model.graph.node):
        if node.op_type != "Loop" or node.domain not in ONNX_DOMAINS:
            continue
        body = next((a.g for a in node.attribute if a.name == "body"), None)
        if body is None:
            continue
        inner = values.get(f"{ROOT}/node[{index}]/body", {})
        for k in range(len(node.input) - 2):
            if k >= len(node.output) or not node.output[k] or 2 + k >= len(body.input) or 1 + k >= len(body.output):
                break
            known = _info(outer, node.output[k])
            if known is not None and known.rank is not None:
                continue
            start = node.input[2 + k]
            initial = _info(outer, start)
            if initial is None and start in initializers:
                tensor = initializers[start]
                initial = TensorInfo(tensor.data_type, tuple(tensor.dims))
            entered = _info(inner, body.input[2 + k].name) or (
                value_tensor_info(body.input[2 + k]))
            produced = _info(inner, body.output[1 + k].name)
            if initial is None or entered is None or produced is None or initial.dims is None:
                continue
            if initial.rank != entered.rank or initial.rank != produced.rank or not initial.elem_type:
                continue
            dims = [a if isinstance(a, int) and a == b == c else None
                    for a, b, c in zip(initial.dims, entered.dims or (), produced.dims or ())]
            yield onnx.helper.make_tensor_value_info(node.output[k], initial.elem_type, dims)
