"""The stripped copy inference runs on: annotations removed, heavy initializers turned into inputs.

Output types and value_info are removed so a stale annotation cannot feed back into its own
check; large or external initializers become graph inputs of the same type and dims, so no
weight byte is read, copied or serialized.
"""

from __future__ import annotations

import math

import onnx
import onnx.shape_inference

from onnx_lint.engines import scoped_names
from onnx_lint.model.graphs import scopes_at

# Initializers above this many elements never hold shape data; inference sees them as inputs.
INLINE_ELEMENTS = 4096

_FLOAT_TYPES = frozenset(getattr(onnx.TensorProto, name) for name in (
    "FLOAT", "DOUBLE", "FLOAT16", "BFLOAT16", "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2", "FLOAT8E5M2FNUZ",
    "FLOAT4E2M1", "FLOAT8E8M0") if hasattr(onnx.TensorProto, name))
# The longest float tensor whose values inference reads: Resize's roi (two per axis) and scales,
# Upsample's scales, Range's scalars. Every other value it reads is an integer shape, axis or count.
_READ_FLOAT_ELEMENTS = 16


def swap_heavy_initializers(model: onnx.ModelProto, paths: list[str], all_external: bool = False) -> None:
    """Turn large initializers, and external ones that inference may read, into graph inputs of the same
    type and dims.

    Inference only needs their types; their bytes would be read, copied and serialized.
    An external initializer holds no bytes in memory; inference cannot read its values
    and would fail the node that asks (a vector of integers, or of at most 16 floats,
    may be asked for): only those become inputs. Large exports hold tens of thousands of external
    weights and biases, which stay as they are (``all_external`` swaps them too: ONNX
    Runtime's engine reads any initializer it uses, from the working folder).
    """
    external, floats, prod = onnx.TensorProto.EXTERNAL, _FLOAT_TYPES, math.prod
    for scope in scopes_at(model, paths):
        graph = scope.graph
        heavy: list[int] = []
        for index, init in enumerate(graph.initializer):  # tens of thousands in a large export: cheap tests first
            if init.data_location == external:
                if all_external:
                    heavy.append(index)
                    continue
                dims = init.dims
                if len(dims) > 1:  # a matrix is never read
                    continue
                if init.data_type not in floats or prod(dims) <= _READ_FLOAT_ELEMENTS:
                    heavy.append(index)
            elif prod(init.dims) > INLINE_ELEMENTS:
                heavy.append(index)
        if not heavy:
            continue
        initializers = list(graph.initializer)
        swapped = set(heavy)
        keep = [t for i, t in enumerate(initializers) if i not in swapped]
        heavy_tensors = [initializers[i] for i in heavy]
        del graph.initializer[:]
        graph.initializer.extend(keep)
        declared = {v.name for v in graph.input}
        add = graph.input.add  # field by field: a large export has tens of thousands of these
        for init in heavy_tensors:
            if init.name not in declared:
                value = add()
                value.name = init.name
                tensor_type = value.type.tensor_type
                tensor_type.elem_type = init.data_type
                shape = tensor_type.shape
                shape.SetInParent()
                for size in init.dims:
                    shape.dim.add().dim_value = size


def strip_model(model: onnx.ModelProto, paths: list[str]) -> None:
    """Remove the annotations under test and the weight bytes, in place; give the tensor names that
    subgraphs repeat names of their own (``scoped_names``), so data propagation keeps them apart."""
    for scope in scopes_at(model, paths):
        del scope.graph.value_info[:]
        for output in scope.graph.output:
            output.ClearField("type")
        for value in scope.graph.input:
            for dim in value.type.tensor_type.shape.dim:
                if dim.WhichOneof("value") == "dim_value" and dim.dim_value < 0:
                    dim.Clear()  # exporters write -1 for "dynamic"; inference would propagate it
    swap_heavy_initializers(model, paths)
    if len(paths) > 1:
        scoped_names.separate(model)
