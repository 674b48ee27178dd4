"""A corpus of broken model files, generated on the fly (SPEC 9).

Each case is a file onnx-lint must refuse with one clear OL000 message naming
the file and the problem, without a traceback and without writing anything.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

from examples import defects


@dataclass(frozen=True)
class Case:
    name: str
    problem: str  # a phrase the message must contain
    build: Callable[[Path], Path]


def _write(folder: Path, name: str, data: bytes) -> Path:
    path = folder / name
    path.write_bytes(data)
    return path


def _external(folder: Path, name: str, location: str, length: int | None = None) -> Path:
    model = defects.healthy_matmul()
    weight = model.graph.initializer[0]
    weight.ClearField("raw_data")
    del weight.float_data[:]
    weight.data_location = T.EXTERNAL
    weight.external_data.add(key="location", value=location)
    if length is not None:
        weight.external_data.add(key="length", value=str(length))
    return _write(folder, name, model.SerializeToString())


def _cycle(folder: Path) -> Path:
    graph = h.make_graph(
        [h.make_node("Relu", ["b"], ["a"], name="first"), h.make_node("Neg", ["a"], ["b"], name="second")],
        "cycle", [h.make_tensor_value_info("X", T.FLOAT, [1])], [h.make_tensor_value_info("a", T.FLOAT, [1])])
    model = h.make_model(graph, ir_version=8, opset_imports=[h.make_opsetid("", 17)])
    return _write(folder, "cycle.onnx", model.SerializeToString())


def _future_ir(folder: Path) -> Path:
    model = defects.healthy_matmul()
    model.ir_version = 99
    return _write(folder, "future_ir.onnx", model.SerializeToString())


def _future_opset(folder: Path) -> Path:
    model = defects.healthy_matmul()
    model.opset_import[0].version = 999
    return _write(folder, "future_opset.onnx", model.SerializeToString())


def _negative_dim(folder: Path, where: str) -> Path:
    model = defects.healthy_matmul()
    value = model.graph.input[0] if where == "input" else model.graph.output[0]
    value.type.tensor_type.shape.dim[0].dim_value = -3
    return _write(folder, f"negative_{where}_dim.onnx", model.SerializeToString())


def _symlink_out(folder: Path) -> Path:
    outside = folder.parent / f"{folder.name}-outside.bin"
    outside.write_bytes(b"\0" * 256)
    link = folder / "weights_link.bin"
    if link.is_symlink() or link.exists():
        link.unlink()
    os.symlink(outside, link)
    return _external(folder, "symlink_out.onnx", "weights_link.bin")


def _short_data(folder: Path) -> Path:
    (folder / "short.bin").write_bytes(b"\0" * 8)
    return _external(folder, "short_external.onnx", "short.bin")


def _no_graph(folder: Path) -> Path:
    return _write(folder, "no_graph.onnx", onnx.ModelProto(ir_version=8).SerializeToString())


def _healthy_bytes() -> bytes:
    return defects.healthy_matmul().SerializeToString()


CASES: list[Case] = [
    Case("empty", "empty file", lambda f: _write(f, "empty.onnx", b"")),
    Case("random-bytes", "not a valid ONNX protobuf",
         lambda f: _write(f, "random.onnx", np.random.default_rng(7).bytes(4096))),
    Case("truncated", "not a valid ONNX protobuf",
         lambda f: _write(f, "truncated.onnx", _healthy_bytes()[: len(_healthy_bytes()) // 2])),
    Case("tensor-proto", "not",
         lambda f: _write(f, "tensor.onnx", numpy_helper.from_array(np.ones((4, 4), np.float32)).SerializeToString())),
    Case("node-proto", "not",
         lambda f: _write(f, "node.onnx", h.make_node("Relu", ["x"], ["y"]).SerializeToString())),
    Case("text-file", "not", lambda f: _write(f, "readme.onnx", b"this is not a model\n" * 20)),
    Case("no-graph", "no graph", _no_graph),
    Case("cycle", "cycle", _cycle),
    Case("missing-external", "is missing", lambda f: _external(f, "missing_external.onnx", "weights.bin")),
    Case("escaping-external", "escapes the model folder",
         lambda f: _external(f, "escape.onnx", "../../etc/passwd")),
    Case("absolute-external", "absolute path", lambda f: _external(f, "absolute.onnx", "/etc/passwd")),
    Case("symlink-external", "outside the model folder", _symlink_out),
    Case("short-external", "has 8 bytes", _short_data),
    Case("future-ir", "IR version 99", _future_ir),
    Case("future-opset", "opset ai.onnx 999", _future_opset),
]
# Readable but invalid: reported by their own rule (OL101), fixable.
NEGATIVE_DIM_CASES: list[Case] = [
    Case("negative-input-dim", "is negative", lambda f: _negative_dim(f, "input")),
    Case("negative-output-dim", "is negative", lambda f: _negative_dim(f, "output")),
]


def build_corpus(folder: Path) -> dict[str, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    return {case.name: case.build(folder) for case in CASES}
