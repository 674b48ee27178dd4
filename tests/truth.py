"""Ground truth from ONNX Runtime: does a declared output shape hold when the model runs?

Each run feeds random inputs with every dynamic input dim set to its own size, twice with
different sizes; a declared concrete dim must equal the returned dim, and a declared dim name
that names an input dim must equal that input dim's size. Names that are not on an input
(renames, ``2*seq``) claim nothing checkable and are skipped.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx

_NUMPY = {onnx.TensorProto.FLOAT: np.float32, onnx.TensorProto.DOUBLE: np.float64,
          onnx.TensorProto.INT64: np.int64, onnx.TensorProto.INT32: np.int32}


def runtime_violations(path: Path, runs: tuple[tuple[int, ...], ...] = ((3, 5, 7, 11), (4, 6, 10, 12))) -> list[str]:
    """What ONNX Runtime's outputs contradict in the declared output shapes ([] when all hold)."""
    import onnxruntime as ort

    model = onnx.load(path)
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    problems: list[str] = []
    for sizes in runs:
        names: dict[str, int] = {}
        pool = iter(sizes)
        feeds = {}
        for value in model.graph.input:
            tensor = value.type.tensor_type
            shape = []
            for dim in tensor.shape.dim:
                if dim.HasField("dim_value") and dim.dim_value > 0:
                    shape.append(dim.dim_value)
                elif dim.dim_param:
                    shape.append(names.setdefault(dim.dim_param, next(pool)))
                else:
                    shape.append(next(pool))
            feeds[value.name] = np.random.default_rng(0).standard_normal(shape).astype(_NUMPY[tensor.elem_type])
        results = session.run(None, feeds)
        for value, result in zip(model.graph.output, results):
            declared = value.type.tensor_type.shape.dim
            actual = np.asarray(result).shape
            if len(declared) != len(actual):
                problems.append(f"{value.name}: declared rank {len(declared)}, runtime {actual}")
                continue
            for i, (dim, got) in enumerate(zip(declared, actual)):
                if dim.HasField("dim_value") and dim.dim_value != got:
                    problems.append(f"{value.name} dim {i}: declared {dim.dim_value}, runtime {got}")
                elif dim.dim_param in names and names[dim.dim_param] != got:
                    problems.append(f"{value.name} dim {i}: declared '{dim.dim_param}' = "
                                    f"{names[dim.dim_param]}, runtime {got}")
    return problems
