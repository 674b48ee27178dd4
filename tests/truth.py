"""Ground truth from ONNX Runtime: does a declared output shape hold when the model runs?

Each run feeds random inputs with every dynamic input dim set to its own size, twice with
different sizes; a declared concrete dim must equal the returned dim, and a declared dim name
that names an input dim must equal that input dim's size, and a name that reads as arithmetic of
input dim names (``2*seq``) must equal its value. Other names (renames) claim nothing checkable.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import onnx
import sympy

_NUMPY = {onnx.TensorProto.FLOAT: np.float32, onnx.TensorProto.DOUBLE: np.float64,
          onnx.TensorProto.INT64: np.int64, onnx.TensorProto.INT32: np.int32}


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")


def claimed(name: str, sizes: dict[str, int]) -> int | None:
    """The size a dim name claims given the input dims' sizes: its own size, or, for a name that reads
    as arithmetic of input dim names (``past_sequence_length + sequence_length``, ``2*seq``), its value
    by sympy (independent of onnx-lint's own parser); ``None`` for a name that claims nothing here."""
    if name in sizes:
        return sizes[name]
    words = {w for w in _NAME.findall(name) if w not in ("floor", "ceil", "Max", "Min")}
    if not words or not words <= sizes.keys() or _NAME.fullmatch(name.strip()):
        return None
    symbols = {w: sympy.Symbol(f"v{i}") for i, w in enumerate(sorted(words, key=len, reverse=True))}
    text = _NAME.sub(lambda m: str(symbols[m.group(0)]) if m.group(0) in symbols else m.group(0), name)
    value = sympy.sympify(text, locals={"floor": sympy.floor, "ceil": sympy.ceiling})
    value = value.subs({symbols[w]: sizes[w] for w in words})
    return int(value) if value.is_integer else None


def runtime_violations(path: Path, runs: tuple[tuple[int, ...], ...] = ((3, 5, 7, 11), (4, 6, 10, 12)),
                       value_info: bool = False) -> list[str]:
    """What ONNX Runtime's outputs contradict in the declared output shapes ([] when all hold).

    ``value_info``: the main graph's value_info entries are judged too, each made a graph output of a
    copy that runs without ONNX Runtime's optimizations (which would fold a declared size into the graph).
    """
    import onnxruntime as ort

    model = onnx.load(path)
    options = ort.SessionOptions()
    if value_info:
        known = {v.name for v in model.graph.output}
        model.graph.output.extend(v for v in model.graph.value_info if v.name not in known)
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.log_severity_level = 3
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    problems: list[str] = []
    for sizes in runs:
        names: dict[str, int] = {}
        pool = iter(sizes)
        feeds = {}
        for value in model.graph.input:  # plain dim names first: an expression's size follows from them
            for dim in value.type.tensor_type.shape.dim:
                if dim.dim_param and _NAME.fullmatch(dim.dim_param) is not None and dim.dim_param not in names:
                    names[dim.dim_param] = next(pool)
        for value in model.graph.input:
            tensor = value.type.tensor_type
            shape = []
            for dim in tensor.shape.dim:
                if dim.HasField("dim_value") and dim.dim_value > 0:
                    shape.append(dim.dim_value)
                elif dim.dim_param:
                    if claimed(dim.dim_param, names) is None:
                        names[dim.dim_param] = next(pool)
                    shape.append(claimed(dim.dim_param, names))
                else:
                    shape.append(next(pool))
            data = np.random.default_rng(0).standard_normal(shape)
            if tensor.elem_type in (onnx.TensorProto.INT64, onnx.TensorProto.INT32):
                data = np.ones(shape)  # ids and masks: 1 is a valid token id and an attending mask
            feeds[value.name] = data.astype(_NUMPY[tensor.elem_type])
        results = session.run(None, feeds)
        for value, result in zip(model.graph.output, results):
            if not value.type.tensor_type.HasField("shape"):
                continue  # a value_info entry without a shape claims none
            declared = value.type.tensor_type.shape.dim
            actual = np.asarray(result).shape
            if len(declared) != len(actual):
                problems.append(f"{value.name}: declared rank {len(declared)}, runtime {actual}")
                continue
            for i, (dim, got) in enumerate(zip(declared, actual)):
                if dim.HasField("dim_value") and dim.dim_value != got:
                    problems.append(f"{value.name} dim {i}: declared {dim.dim_value}, runtime {got}")
                elif dim.dim_param and claimed(dim.dim_param, names) not in (None, got):
                    problems.append(f"{value.name} dim {i}: declared '{dim.dim_param}' = "
                                    f"{claimed(dim.dim_param, names)}, runtime {got}")
    return problems
