"""The bare ONNX operations onnx-lint's check builds on: load without weights, then shape inference."""

import sys

import onnx
import onnx.shape_inference

model = onnx.load(sys.argv[1], load_external_data=False)
onnx.shape_inference.infer_shapes(model, data_prop=True)
